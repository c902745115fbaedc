//! Lists by page, folder and search (`docs/API.md`, "A million files"):
//! what a caller asks for, checked as the API bounds it, and the answers.

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;
use utoipa::ToSchema;

use super::{check_folder, Artifact, Invalid, PathHold, RepoPath};

/// The most artifacts one page holds.
pub const MAX_PAGE: u32 = 10_000;
/// How long a search text may be, in characters.
pub const SEARCH_CHARS: std::ops::RangeInclusive<usize> = 2..=200;

/// Which artifacts to list, by path: every one, or a page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArtifactQuery {
    /// At most this many (1 to [`MAX_PAGE`]); `None`: every one.
    pub limit: Option<u32>,
    /// Those whose path sorts after this one, which need not exist.
    pub after: Option<String>,
    /// Those under this folder (`brand/`; `""` is every one).
    pub prefix: Option<String>,
    /// Those whose path contains this text, ignoring case.
    pub text: Option<String>,
    /// Only those with a live lease, and the paths held with no file.
    pub held: bool,
}

impl ArtifactQuery {
    /// The first page of at most `limit`.
    pub fn page(limit: u32) -> Self {
        Self {
            limit: Some(limit),
            ..Self::default()
        }
    }

    /// The query as the API bounds it (422 `invalid` otherwise), with
    /// `after` in NFC, the form paths are sorted in.
    pub fn checked(mut self) -> Result<Self, Invalid> {
        if let Some(limit) = self.limit {
            if !(1..=MAX_PAGE).contains(&limit) {
                return Err(Invalid(format!(
                    "limit {limit} is out of range: a page holds 1 to {MAX_PAGE} artifacts"
                )));
            }
        }
        if let Some(prefix) = &self.prefix {
            check_folder(prefix)?;
        }
        if let Some(text) = &self.text {
            let chars = text.chars().count();
            if !SEARCH_CHARS.contains(&chars) || text.chars().any(char::is_control) {
                return Err(Invalid(format!(
                    "search for {} to {} characters, without control characters (this is {chars})",
                    SEARCH_CHARS.start(),
                    SEARCH_CHARS.end()
                )));
            }
        }
        if let Some(after) = &mut self.after {
            if after.len() > RepoPath::MAX_BYTES {
                return Err(Invalid(format!(
                    "after is longer than a path ({} bytes at most)",
                    RepoPath::MAX_BYTES
                )));
            }
            *after = after.nfc().collect();
        }
        Ok(self)
    }
}

/// `GET /v1/artifacts`: a page of artifacts by path (or all of them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct ArtifactPage {
    pub artifacts: Vec<Artifact>,
    /// The page's last path, to pass as `after` for the next page; null on
    /// the last page.
    pub next: Option<String>,
    /// The event sequence number the answer is as of: applying the events
    /// after it keeps what was listed exact. (Not with `?path=`, which
    /// answers the one artifact at a path.)
    #[ts(type = "number")]
    #[schema(required = false)]
    pub seq: u64,
    /// With `held`: the paths held with no file there yet, by path, that
    /// lie in the page (a page of `limit` holds that many artifacts and
    /// holds together; `next` is the last path of either).
    #[serde(default)]
    #[schema(required = false)]
    pub holds: Vec<PathHold>,
}

/// A folder of `GET /v1/folders`, with the files under it the caller may read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct FolderCount {
    /// The folder's path, ending in `/` (`brand/2026/`).
    pub path: String,
    /// The files under it, at any depth.
    #[ts(type = "number")]
    pub files: u64,
    /// How many of those are held now.
    #[ts(type = "number")]
    pub held: u64,
}

/// `GET /v1/folders`: the folders directly under a folder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct FolderList {
    pub folders: Vec<FolderCount>,
    /// The files directly in the folder asked about.
    #[ts(type = "number")]
    pub files: u64,
}

/// The folders above a path, outermost first, each as `(folder, parent)`
/// (`("brand/", "")`, `("brand/2026/", "brand/")` for `brand/2026/a.psd`),
/// after the whole store's `("", None)`.
pub fn folders_above(path: &str) -> Vec<(&str, Option<&str>)> {
    let mut folders = vec![("", None)];
    let mut parent = "";
    for (at, _) in path.match_indices('/') {
        let folder = &path[..=at];
        folders.push((folder, Some(parent)));
        parent = folder;
    }
    folders
}

/// The end of a folder's range in byte order: the folder's path with its
/// last `/` made `0`, the next byte (`brand0` for `brand/`); `None` for the
/// whole store.
pub fn folder_range_end(folder: &str) -> Option<String> {
    folder.strip_suffix('/').map(|stem| format!("{stem}0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paths_folders_are_listed_outermost_first_with_their_parents() {
        assert_eq!(
            folders_above("brand/2026/a.psd"),
            [
                ("", None),
                ("brand/", Some("")),
                ("brand/2026/", Some("brand/"))
            ]
        );
        assert_eq!(folders_above("a.psd"), [("", None)]);
        assert_eq!(folder_range_end("brand/").as_deref(), Some("brand0"));
        assert_eq!(folder_range_end(""), None);
    }

    #[test]
    fn a_query_out_of_its_bounds_is_refused() {
        let bad = [
            ArtifactQuery::page(0),
            ArtifactQuery::page(MAX_PAGE + 1),
            ArtifactQuery {
                text: Some("a".into()),
                ..ArtifactQuery::page(10)
            },
            ArtifactQuery {
                text: Some("x".repeat(201)),
                ..ArtifactQuery::page(10)
            },
            ArtifactQuery {
                prefix: Some("brand".into()),
                ..ArtifactQuery::page(10)
            },
            ArtifactQuery {
                prefix: Some("../".into()),
                ..ArtifactQuery::page(10)
            },
        ];
        for query in bad {
            assert!(query.clone().checked().is_err(), "{query:?} passed");
        }
        let good = ArtifactQuery {
            text: Some("ÉT".into()),
            prefix: Some("brand/".into()),
            after: Some("brand/e\u{301}.psd".into()),
            ..ArtifactQuery::page(MAX_PAGE)
        }
        .checked()
        .unwrap();
        assert_eq!(good.after.as_deref(), Some("brand/\u{e9}.psd"));
    }
}

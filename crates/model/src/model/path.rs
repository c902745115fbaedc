//! `RepoPath`, an artifact's place in the store, and the one parser of
//! API.md's path rules (strict `parse`, `stored` for old paths, where a path
//! can be placed, collision keys). Knows no error type but `Invalid`.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Invalid;

/// An artifact's place in the store: relative, `/`-separated, no empty, `.` or
/// `..` segment, no control characters, at most 1024 bytes; and, for a path
/// made now, one that every designer's computer can hold (see
/// [`RepoPath::placement_problem`]). This is the one parser of those rules.
///
/// Two constructors: `parse` (`FromStr`) is strict, for anything that makes a
/// path (an import, a rename's target), and keeps the path in NFC (macOS hands
/// back NFD names; the workspace maps them to NFC). [`RepoPath::stored`] keeps
/// only the rules of older versions, so that an artifact stored before the
/// placement rules stays readable and can be renamed: store reads, lookups
/// by path and deserialization (a client reading the server's list) use it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub struct RepoPath(String);

/// Names Windows keeps for devices, in any case and with any extension
/// (`nul.txt` is the device too). The superscript digits count as digits there.
const RESERVED_DEVICE_NAMES: &[&str] = &[
    "CON",
    "PRN",
    "AUX",
    "NUL",
    "CONIN$",
    "CONOUT$",
    // Reserved too since Windows 11's documentation says so.
    "COM0",
    "LPT0",
    "COM1",
    "COM2",
    "COM3",
    "COM4",
    "COM5",
    "COM6",
    "COM7",
    "COM8",
    "COM9",
    "COM\u{b9}",
    "COM\u{b2}",
    "COM\u{b3}",
    "LPT1",
    "LPT2",
    "LPT3",
    "LPT4",
    "LPT5",
    "LPT6",
    "LPT7",
    "LPT8",
    "LPT9",
    "LPT\u{b9}",
    "LPT\u{b2}",
    "LPT\u{b3}",
];

/// Characters Windows refuses in a name (`:` also makes drive-relative paths
/// and alternate data streams; `\\` is a separator there).
const FORBIDDEN_CHARACTERS: &[char] = &['\\', ':', '<', '>', '"', '|', '?', '*'];

impl RepoPath {
    pub const MAX_BYTES: usize = 1024;

    /// A path as older versions accepted it: for paths read back from a store
    /// or a server, never for making one. Refuses only what those refused.
    pub fn stored(s: &str) -> Result<Self, Invalid> {
        let refuse = |why: &str| Err(Invalid(format!("path {s:?} {why}")));
        if s.is_empty() {
            return refuse("is empty");
        }
        if s.len() > Self::MAX_BYTES {
            return refuse("is longer than 1024 bytes");
        }
        if s.chars().any(char::is_control) {
            return refuse("contains a control character");
        }
        if s.starts_with('/') || s.contains('\\') {
            return refuse("must be relative and use / between folders");
        }
        if s.split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
        {
            return refuse("has an empty, . or .. segment");
        }
        Ok(Self(s.to_owned()))
    }

    /// The last segment: what a person calls the file.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// Why this path cannot be placed in a workspace on Windows, macOS or
    /// Linux (`None` when it can): only a path stored before these rules
    /// can have one.
    pub fn placement_problem(&self) -> Option<String> {
        placement_problem(&self.0)
    }

    /// What two paths share when one computer's folder cannot tell them
    /// apart: NFC, then full Unicode case folding (then NFC again, since a
    /// fold can leave a string unnormalized). `Case.psd` and `case.psd`, or
    /// `é` as one character and as `e` plus an accent, have one key.
    pub fn collision_key(&self) -> String {
        collision_key(&self.0)
    }

    /// The keys of the folders above this path, outermost first (`a`, `a/b`
    /// for `a/b/c.psd`): a path cannot lie under an artifact at any of them.
    pub fn folder_keys(&self) -> Vec<String> {
        let key = self.collision_key();
        key.match_indices('/')
            .map(|(at, _)| key[..at].to_owned())
            .collect()
    }
}

/// See [`RepoPath::collision_key`]. After folding, letters are upper-cased
/// too: NTFS compares names through an upper-case table, where `ı` (dotless
/// i) and `i` are both `I` though case folding keeps them apart.
pub fn collision_key(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let folded = caseless::default_case_fold_str(&s.nfc().collect::<String>());
    folded.to_uppercase().nfc().collect()
}

/// Whether `segment` has the shape of a Windows short (8.3) name with a
/// numeric tail, `PROGRA~1` or `CHARAC~1.PSD`: on a volume that makes short
/// names, opening it may open another file whose long name it stands for.
fn is_short_name_alias(segment: &str) -> bool {
    let (base, extension) = match segment.rsplit_once('.') {
        Some((base, extension)) => (base, extension),
        None => (segment, ""),
    };
    let Some((stem, tail)) = base.rsplit_once('~') else {
        return false;
    };
    segment.is_ascii()
        && base.len() <= 8
        && extension.len() <= 3
        && !stem.is_empty()
        && !stem.contains('.')
        && !tail.is_empty()
        && tail.bytes().all(|b| b.is_ascii_digit())
}

/// Why `s` (a `/`-separated relative path) cannot be a file's place on every
/// designer's computer, or `None`. A pure function of the string, so it can be
/// checked anywhere (the workspace checks it again before writing).
pub fn placement_problem(s: &str) -> Option<String> {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    if let Some(c) = s.chars().find(|c| FORBIDDEN_CHARACTERS.contains(c)) {
        return Some(format!(
            "contains {c:?}, which Windows does not allow in a name (no \\ : < > \" | ? *)"
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| c.general_category() == GeneralCategory::Format)
    {
        return Some(format!(
            "contains U+{:04X}, an invisible format character (bidirectional controls, \
             zero-width characters and the like can disguise a name)",
            c as u32
        ));
    }
    for segment in s.split('/') {
        if segment.ends_with('.') || segment.ends_with(' ') {
            return Some(format!(
                "has {segment:?}, which ends in a dot or a space: Windows drops those, \
                 so the name would change on the way to disk"
            ));
        }
        if is_short_name_alias(segment) {
            return Some(format!(
                "has {segment:?}, which has the shape of a Windows short name (like \
                 PROGRA~1): there it can stand for another file's long name"
            ));
        }
        // The device is the part before the first dot, trailing spaces dropped.
        let base = segment
            .split('.')
            .next()
            .unwrap_or(segment)
            .trim_end_matches(' ');
        // (ASCII case only: Windows matches `com¹` as it matches `COM¹`.)
        if RESERVED_DEVICE_NAMES
            .iter()
            .any(|name| name.eq_ignore_ascii_case(base))
        {
            return Some(format!(
                "has {segment:?}: {base} is a device on Windows, in any case and with any extension"
            ));
        }
    }
    None
}

impl FromStr for RepoPath {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        use unicode_normalization::UnicodeNormalization;
        let nfc: String = s.nfc().collect();
        let path = Self::stored(&nfc)?;
        match path.placement_problem() {
            None => Ok(path),
            Some(why) => Err(Invalid(format!("path {s:?} {why}"))),
        }
    }
}

/// Deserialized as stored: a client must read every path a server lists,
/// including one stored before the placement rules.
impl TryFrom<String> for RepoPath {
    type Error = Invalid;
    fn try_from(s: String) -> Result<Self, Invalid> {
        Self::stored(&s)
    }
}

string_conversions!(RepoPath);

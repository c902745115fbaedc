//! A Git LFS lock as the rules give it (`docs/API.md`, "Git LFS"): a live
//! lease on a file (a check-out from the app, the CLI or Git, or an agent's
//! edit) or a path held with no file yet. The server words it as Git LFS's
//! `Lock`; the held list gives a path held with no file as a [`PathHold`].
//! Plain data.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Digest, Lease, Participant, RepoPath, Timestamp};

/// The note a check-out taken through Git carries: the window tells a Git
/// lock by it ([`GitLockNote`]).
pub const GIT_LOCK_NOTE: &str = "Locked from Git";

/// [`GIT_LOCK_NOTE`] as a type of the window's (`ui/src/generated`), whose
/// wording tells a Git lock by the note: a note changed here and not there
/// fails the window's build rather than its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub enum GitLockNote {
    #[serde(rename = "Locked from Git")]
    Note,
}

/// A path held with no file there yet (a Git LFS lock taken before the
/// file is imported), in the held list (`GET /v1/artifacts?held=true`,
/// `docs/API-additions.md`): its holder's lease as a check-out's would be,
/// `checkout_id` the lock's id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct PathHold {
    pub path: RepoPath,
    pub lease: Lease,
}

/// The Git lock time when the server is not told one: a week.
pub const DEFAULT_GIT_LOCK_HOURS: u64 = 168;

/// Most locks one page of a Git LFS list holds, and how many it holds
/// when not told.
pub const MAX_GIT_LOCKS_PAGE: u32 = 1000;
pub const DEFAULT_GIT_LOCKS_PAGE: u32 = 100;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitLock {
    /// The check-out's id, or the edit's.
    pub id: uuid::Uuid,
    /// The studio's path (the server makes it relative to the folder).
    pub path: RepoPath,
    pub participant: Participant,
    pub note: Option<String>,
    /// When the lease was taken.
    pub locked_at: Timestamp,
    pub expires_at: Timestamp,
    /// Whether the path has no file yet.
    pub no_file: bool,
}

/// A page of a folder's locks: `next` is the cursor of the next page, the
/// path the page ends at (none on the last page).
#[derive(Clone, Debug, Default)]
pub struct GitLockPage {
    pub locks: Vec<GitLock>,
    pub next: Option<String>,
}

/// Which of a folder's locks to list.
#[derive(Clone, Debug, Default)]
pub struct GitLockQuery {
    /// The top-level folder, without its `/`.
    pub folder: String,
    /// Only the lock of this studio path.
    pub path: Option<RepoPath>,
    /// Only the lock of this id.
    pub id: Option<uuid::Uuid>,
    /// After this path (a page's `next`).
    pub after: Option<String>,
    pub limit: u32,
}

/// A Git LFS object kept for a folder: Git's name for it (the SHA-256 of
/// its bytes, 64 lower-case hex) and size, and the blob that holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LfsObject {
    pub oid: String,
    pub size: u64,
    pub digest: Digest,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_type_of_the_git_note_is_the_note() {
        assert_eq!(
            serde_json::to_value(GitLockNote::Note).unwrap(),
            GIT_LOCK_NOTE,
            "the window tells a Git lock by this note"
        );
    }
}

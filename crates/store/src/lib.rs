//! The store's seam: [`Tx`], one transaction on a store, the rows it
//! reads and writes as the rules see them, by families of rows
//! (`transaction`); and what both stores share: the row mapping and the
//! statements both run alike (`rows`), the SQL of pages, folder counts and
//! search (`listing`), resumable uploads' rows (`uploads`).
//!
//! The SQLite and PostgreSQL stores are crates of their own
//! (`leasedesk-store-sqlite`, `leasedesk-store-postgres`): each runs the
//! shared statements through its [`Sql`]. This crate never opens a
//! connection nor runs a query itself, and never knows a lease rule.

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_model::{clock, error, model};

pub mod listing;
pub mod rows;
mod transaction;
pub mod uploads;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::model::*;

pub use transaction::{
    fetch_all, fetch_first, fetch_one, insert_version, ArtifactRows, CheckoutRows, LeaseRows,
    ReviewRows, Sql, StudioRows, Tx,
};
pub use uploads::{UploadRow, UploadRows};

thread_local! {
    static MAY_BLOCK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` telling the store that this thread may block on a runtime of
/// its own (tokio's blocking pool, or `block_in_place`): PostgreSQL's writes
/// then drive their connection right here (see `postgres.rs`).
pub fn may_block<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            MAY_BLOCK.set(self.0);
        }
    }
    let _restore = Restore(MAY_BLOCK.replace(true));
    f()
}

/// Inside [`may_block`], or on a thread outside any runtime.
pub fn may_block_here() -> bool {
    MAY_BLOCK.get() || tokio::runtime::Handle::try_current().is_err()
}

/// How durable a write's commit must be; see [`Store::write`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Lease changes: survive a process crash.
    Normal,
    /// Versions and proposals: survive power loss.
    Full,
}

/// An account's insert, which writes nothing when its participant exists.
pub fn inserted_once(account: &Account, inserted: u64) -> Result<()> {
    match inserted {
        0 => Err(Error::Exists(format!(
            "{} already exists",
            account.participant
        ))),
        _ => Ok(()),
    }
}

/// A head's move from `base`, which moves nothing when `base` is not the
/// head: an internal error, since the rules test the base first.
pub fn head_moved(id: ArtifactId, base: u64, moved: u64) -> Result<()> {
    match moved {
        1 => Ok(()),
        _ => Err(Error::Internal(format!(
            "artifact {id}: head is not version {base}"
        ))),
    }
}

/// A check-out row with its stored result resolved (see
/// [`CheckoutRows::resolve_result`]).
pub fn resolved(
    tx: &(impl CheckoutRows + ?Sized),
    (mut row, result): (CheckoutRow, Option<StoredResult>),
) -> Result<CheckoutRow> {
    row.checkout.result = result.map(|r| tx.resolve_result(r)).transpose()?;
    Ok(row)
}

/// A check-out as stored: the public record plus the first check-in's upload digest.
#[derive(Clone, Debug)]
pub struct CheckoutRow {
    pub checkout: Checkout,
    pub checkin_digest: Option<Digest>,
    /// The artifact's lease epoch when this check-out last took its lease.
    pub lease_epoch: u64,
    /// The bytes staged for its next change, until it closes.
    pub staged: Option<StagedFile>,
}

/// A path held with no file there yet (a Git lock taken before the file
/// was imported): a check-out in all but its row, `id` being the lock's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldPath {
    pub id: CheckoutId,
    pub path: RepoPath,
    pub participant: Participant,
    pub note: Option<String>,
    pub acquired_at: Timestamp,
    pub expires_at: Timestamp,
    pub device: Option<DeviceRef>,
}

/// A live lease on a file, with the file's id and path: one lock of a
/// folder's list.
#[derive(Clone, Debug)]
pub struct LeaseAt {
    pub artifact_id: ArtifactId,
    pub path: RepoPath,
    pub lease: Lease,
}

/// A change as stored: its files are its check-outs, in this order.
#[derive(Clone, Debug)]
pub struct ChangeRow {
    pub id: ChangeId,
    pub author: Participant,
    pub message: Option<String>,
    pub created_at: Timestamp,
    pub outcome: ChangeOutcome,
    pub checkouts: Vec<CheckoutId>,
}

/// A request as stored: the public record, and when its holder was last
/// told of it (asking again sooner tells nobody).
#[derive(Clone, Debug)]
pub struct RequestRow {
    pub request: Request,
    pub notified_at: Timestamp,
}

/// What a finished check-in or edit did, as stored (a proposal by id, so its
/// current state is shown when the result is read again).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum StoredResult {
    Committed { version: u64, digest: Digest },
    Unchanged { version: u64, digest: Digest },
    Proposal { proposal_id: ProposalId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditState {
    Open,
    Committed,
    Released,
}

#[derive(Clone, Debug)]
pub struct EditRow {
    pub edit: Edit,
    pub state: EditState,
    pub commit_digest: Option<Digest>,
    pub result: Option<StoredResult>,
}

/// Events after `bound`, oldest first (`older`: false), or before it,
/// newest first (true); of one artifact, if given. Every seq is at most
/// 2^63 - 1, the largest integer either store keeps.
#[derive(Clone, Copy)]
pub struct EventRows {
    pub older: bool,
    pub bound: i64,
    pub limit: u32,
    pub artifact: Option<ArtifactId>,
}

/// A participant's token as kept: its hash, never the token. Each token is
/// one device, and its id is the device's.
pub struct TokenRow<'a> {
    pub id: &'a str,
    pub participant: &'a Participant,
    pub hash: &'a str,
    pub created_at: Timestamp,
    pub device: &'a str,
}

/// A live token as found by its id.
pub struct LiveToken {
    pub participant: Participant,
    pub hash: String,
    pub last_used_at: Option<Timestamp>,
}

/// An invite as kept: the hash of its code, never the code.
#[derive(Clone, Debug)]
pub struct InviteRow {
    pub id: InviteId,
    pub hash: String,
    pub participant: Participant,
    pub admin: bool,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    /// Who made it; `None` for the store's owner.
    pub made_by: Option<Participant>,
}

/// How a proposal leaves `open`: who decided and when are kept for history.
pub struct DecisionRow<'a> {
    pub state: ProposalState,
    pub by: &'a Participant,
    pub at: Timestamp,
    /// A rebuilt proposal's successor.
    pub superseded_by: Option<ProposalId>,
}

impl<'a> DecisionRow<'a> {
    pub fn new(state: ProposalState, by: &'a Participant, at: Timestamp) -> Self {
        Self {
            state,
            by,
            at,
            superseded_by: None,
        }
    }

    pub fn superseded_by(self, successor: ProposalId) -> Self {
        Self {
            superseded_by: Some(successor),
            ..self
        }
    }
}

/// An event to append; the store gives it its sequence number.
pub struct NewEvent<'a> {
    pub id: Uuid,
    pub kind: &'a str,
    pub artifact_id: Option<ArtifactId>,
    pub participant: Option<&'a Participant>,
    pub holder: Option<&'a str>,
    pub at: Timestamp,
    pub data: serde_json::Value,
}

/// What [`ArtifactRows::artifact_page`] lists, by path.
pub struct ListQuery<'a> {
    /// Paths after this one (which need not exist).
    pub after: Option<&'a str>,
    /// Paths under this folder (`brand/`; `""` for every path).
    pub folder: &'a str,
    /// The collision key of a text the path's key must contain.
    pub text_key: Option<String>,
    /// Only artifacts whose lease is live at this time.
    pub held_at: Option<Timestamp>,
    /// What the caller may not see, tested on each row the query reads.
    pub hidden: &'a [Hidden],
    /// Paths in this range only, walked in order along the path index: the
    /// search index is not used, as what it finds would include what lies
    /// outside the range, and its time would grow with them.
    pub within: Option<&'a PathRange>,
    /// At most this many.
    pub limit: Option<u32>,
}

/// The paths from `start` (included) up to `end` (left out; `None`: to the
/// last path), in byte order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathRange {
    pub start: String,
    pub end: Option<String>,
}

/// Files a caller may not see: those whose path's key lies under the
/// folder key `key` (`""`: every file) and under none of `except`, the
/// folders beneath it whose own rules decide for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hidden {
    pub key: String,
    pub except: Vec<String>,
}

/// A folder's row: its path, its key, and the files under it at any depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FolderRow {
    pub path: String,
    pub key: String,
    pub files: u64,
}

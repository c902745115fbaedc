//! The store's seam: [`Tx`], one transaction on a store, the rows it
//! reads and writes as the rules see them; and what both stores
//! share: the row mapping (`rows`), the SQL of pages, folder counts and
//! search (`listing`), resumable uploads' rows (`uploads`).
//!
//! The SQLite and PostgreSQL stores are crates of their own
//! (`leasedesk-store-sqlite`, `leasedesk-store-postgres`). This crate never
//! opens a connection nor runs a query, and never knows a lease rule.

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_model::{clock, error, model};

pub mod listing;
pub mod rows;
pub mod uploads;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::model::*;

pub use uploads::{UploadRow, UploadRows};

/// `LEASEDESK_BENCH_UNDURABLE_EVENTS=1`: events are given before they are
/// durable, as before, so `benches/stream.rs` can measure what waiting for
/// durability costs in one run. Never for real use: a crash may then take
/// back an event a reader was given.
pub fn undurable_events_for_a_benchmark() -> bool {
    static UNDURABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *UNDURABLE.get_or_init(|| {
        std::env::var_os("LEASEDESK_BENCH_UNDURABLE_EVENTS").is_some_and(|v| v == "1")
    })
}

/// The longest a reader waits for events to become durable: past it, it is
/// given those that are, and looks again later.
pub const DURABLE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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
/// [`Tx::resolve_result`]).
pub fn resolved(
    tx: &(impl Tx + ?Sized),
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

/// An event to append; the store gives it its sequence number.
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

/// A studio's rows: devices (tokens), invites, and the permissions document
/// (`rules::access`). Part of every [`Tx`].
pub trait StudioRows {
    fn insert_token(&self, token: &TokenRow) -> Result<()>;

    /// A token that is not revoked.
    fn live_token(&self, id: &str) -> Result<Option<LiveToken>>;

    /// Notes a token's use, to the minute.
    fn touch_token(&self, id: &str, at: Timestamp) -> Result<()>;

    /// Revokes every live token of a participant; returns how many.
    fn revoke_tokens(&self, participant: &Participant, now: Timestamp) -> Result<usize>;

    /// Revokes one live token of a participant; whether there was one.
    fn revoke_device(&self, participant: &Participant, id: &str, now: Timestamp) -> Result<bool>;

    /// A participant's live devices, oldest first.
    fn devices(&self, participant: &Participant) -> Result<Vec<Device>>;

    fn insert_invite(&self, invite: &InviteRow) -> Result<()>;

    /// Marks the invite whose code hashes to `hash` used, if it is unused
    /// and not lapsed at `now`, and returns it; one caller at most ever
    /// gets it.
    fn take_invite(&self, hash: &str, now: Timestamp) -> Result<Option<InviteRow>>;

    /// The invites neither used nor lapsed at `now`, oldest first.
    fn open_invites(&self, now: Timestamp) -> Result<Vec<InviteRow>>;

    /// Removes the invite `id` if it is neither used nor lapsed at `now`:
    /// its code is then unknown. Whether there was one.
    fn delete_invite(&self, id: InviteId, now: Timestamp) -> Result<bool>;

    /// The permissions document's stamp; `None` if there never was one.
    fn permissions_stamp(&self) -> Result<Option<String>>;

    /// The permissions document with its own stamp.
    fn permissions(&self) -> Result<Option<(String, Permissions)>>;

    /// Replaces the permissions document, under a new stamp.
    fn put_permissions(&self, stamp: &str, document: &Permissions) -> Result<()>;

    /// How many invite redeems failed from `address` in its window, if
    /// that window is running at `now`: it began after `over_before` and
    /// not after `now`. Else 0.
    fn failed_redeems(&self, address: &str, over_before: Timestamp, now: Timestamp) -> Result<u64>;

    /// Counts one failed redeem from `address` in its window, or in a new
    /// window beginning at `now` if its own is not running (see
    /// [`StudioRows::failed_redeems`]); answers the window's count with this
    /// one. On PostgreSQL the address's row stays locked until commit, so
    /// redeems from one address count one after the other on every server.
    fn count_failed_redeem(
        &self,
        address: &str,
        over_before: Timestamp,
        now: Timestamp,
    ) -> Result<u64>;

    /// Takes back one redeem that this transaction counted from `address`.
    fn uncount_failed_redeem(&self, address: &str) -> Result<()>;

    /// Forgets at most `limit` addresses whose window began at or before
    /// `over_before`, oldest first (on PostgreSQL, skipping those another
    /// write holds); answers how many.
    fn forget_failed_redeems(&self, over_before: Timestamp, limit: u32) -> Result<u64>;
}

/// How a proposal leaves `open`: who decided and when are kept for history.
pub struct Decision<'a> {
    pub state: ProposalState,
    pub by: &'a Participant,
    pub at: Timestamp,
    /// A rebuilt proposal's successor.
    pub superseded_by: Option<ProposalId>,
}

impl<'a> Decision<'a> {
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

pub struct NewEvent<'a> {
    pub id: Uuid,
    pub kind: &'a str,
    pub artifact_id: Option<ArtifactId>,
    pub participant: Option<&'a Participant>,
    pub holder: Option<&'a str>,
    pub at: Timestamp,
    pub data: serde_json::Value,
}

/// The typed reads and writes of one transaction, the same on every store.
/// What [`Tx::artifact_page`] lists, by path.
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

/// One transaction on a store, as the rules see it (`&dyn Tx`): each
/// store's crate implements it.
pub trait Tx: StudioRows + UploadRows {
    /// The time of this transaction, read once: `clock`'s if it is a manual
    /// (test) clock, else the store's own. SQLite's is the backend's clock
    /// read after the write lock is taken, so times follow commit order;
    /// PostgreSQL's is the database's (`clock_timestamp()`), so every server
    /// decides expiry by one clock.
    fn now(&self, clock: &Clock) -> Result<Timestamp>;

    /// Makes this transaction's commit survive power loss.
    fn require_durable(&self);

    /// Runs `f` in a savepoint: its error rolls back what `f` wrote and nothing
    /// before it, so several writers can share one transaction (group commit).
    /// The outer error is the store's own failure, which ends the transaction.
    fn savepoint(&self, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<Result<()>>;

    fn account(&self, participant: &Participant) -> Result<Option<Account>>;

    fn insert_account(&self, account: &Account) -> Result<()>;

    fn accounts(&self) -> Result<Vec<Account>>;

    /// The artifact at `path`, or else the one whose path has its collision
    /// key (the same file on a computer: `Hero.psd` finds `hero.psd`).
    fn artifact_id_by_path(&self, path: &RepoPath) -> Result<Option<ArtifactId>>;

    /// The artifacts whose path has collision key `key`, by path.
    fn artifacts_with_key(&self, key: &str) -> Result<Vec<(ArtifactId, RepoPath)>>;

    /// Artifacts whose key lies under the folder `key` (`key/...`), at most
    /// `limit`, by path; an index range, since `0` follows `/` in byte order.
    fn artifacts_under_key(&self, key: &str, limit: u32) -> Result<Vec<(ArtifactId, RepoPath)>>;

    /// Moves an artifact to `path` (the rules checked it is free).
    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()>;

    /// An artifact with its head and its lease row, lapsed or not.
    fn artifact(&self, id: ArtifactId) -> Result<Option<Artifact>>;

    /// Every artifact by path, with its head and its lease row, lapsed or not.
    fn artifacts(&self) -> Result<Vec<Artifact>>;

    /// Artifacts by path as `query` says, with their heads and lease rows.
    fn artifact_page(&self, query: &ListQuery) -> Result<Vec<Artifact>>;

    /// The folders directly under `folder` by path, and how many files
    /// are directly in `folder` (from counts each import and rename keeps).
    fn subfolders(&self, folder: &str) -> Result<(Vec<FolderRow>, u64)>;

    /// The folders whose key is one of `keys`, as (key, path), by path:
    /// `brand/` and `Brand/` for `BRAND`, `""` for the whole store's `""`.
    fn folder_paths(&self, keys: &[String]) -> Result<Vec<(String, String)>>;

    /// The files under the folders whose key is `key` that lie within the
    /// folder `within` (`""`: anywhere).
    fn files_under_key(&self, key: &str, within: &str) -> Result<u64>;

    /// How many files under each folder directly under `folder` have a
    /// lease live at `now`, leaving out the `hidden`, by folder (`brand/`).
    fn held_by_folder(
        &self,
        folder: &str,
        now: Timestamp,
        hidden: &[Hidden],
    ) -> Result<Vec<(String, u64)>>;

    fn insert_artifact(&self, id: ArtifactId, path: &RepoPath, head: &Head) -> Result<()>;

    /// Appends `head` as the artifact's new head, replacing `base`; refuses (as an
    /// internal error: the rules test the base first) if `base` is not the head.
    fn commit_version(&self, id: ArtifactId, head: &Head, base: u64) -> Result<()>;

    /// Versions, newest first, with the version each replaced.
    fn versions(&self, id: ArtifactId) -> Result<Vec<(Head, Option<u64>)>>;

    fn version(&self, id: ArtifactId, version: u64) -> Result<Option<Head>>;

    /// Whether a version, a proposal (of any state: rows are never deleted)
    /// or a check-out's staged bytes name `digest`: their blob must stay.
    fn names_blob(&self, digest: &Digest) -> Result<bool>;

    /// Every digest [`Tx::names_blob`] would find.
    fn blob_digests(&self) -> Result<std::collections::HashSet<Digest>>;

    /// The chunk list kept for a blob (`Chunked::encode_list`), if made.
    fn chunk_list(&self, digest: &Digest) -> Result<Option<Vec<u8>>>;

    /// Keeps a blob's chunk list; one kept already stays (it is the same).
    fn put_chunk_list(&self, digest: &Digest, list: &[u8]) -> Result<()>;

    fn put_lease(&self, artifact_id: ArtifactId, lease: &Lease) -> Result<()>;

    fn delete_lease(&self, artifact_id: ArtifactId) -> Result<()>;

    /// How many leases were ever taken on the artifact.
    fn lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64>;

    /// Counts one more lease taken on the artifact; returns the new epoch.
    fn next_lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64>;

    /// How many leases are live at `now` (not past their expiry), for the
    /// metrics scrape.
    fn live_lease_count(&self, now: Timestamp) -> Result<u64>;

    /// Leases whose expiry has passed but whose lapse is not yet recorded.
    fn lapsed_leases(&self, now: Timestamp) -> Result<Vec<(ArtifactId, Lease)>>;

    fn checkout(&self, id: CheckoutId) -> Result<Option<CheckoutRow>>;

    /// The leases live at `now` on files whose path lies under `folder`
    /// (ending in `/`) and sorts after `after`, by path, at most `limit`.
    fn leases_under(
        &self,
        folder: &str,
        after: &str,
        limit: u32,
        now: Timestamp,
    ) -> Result<Vec<LeaseAt>>;

    /// The hold on a path with no file (live or lapsed) of path key `key`.
    fn held_path(&self, key: &str) -> Result<Option<HeldPath>>;

    /// The hold on a path with no file (live or lapsed) of id `id`.
    fn held_path_by_id(&self, id: CheckoutId) -> Result<Option<HeldPath>>;

    /// The holds live at `now` on paths under `folder` (ending in `/`)
    /// that sort after `after`, by path, at most `limit`.
    fn held_paths_under(
        &self,
        folder: &str,
        after: &str,
        limit: u32,
        now: Timestamp,
    ) -> Result<Vec<HeldPath>>;

    /// Keeps a hold, replacing the one of its path key.
    fn put_held_path(&self, held: &HeldPath) -> Result<()>;

    /// Forgets the hold of path key `key`, if any.
    fn delete_held_path(&self, key: &str) -> Result<()>;

    /// The Git LFS object `oid` kept for the top-level folder `folder`.
    fn lfs_object(&self, folder: &str, oid: &str) -> Result<Option<LfsObject>>;

    /// Keeps a Git LFS object for `folder` (kept already: nothing changes).
    fn put_lfs_object(&self, folder: &str, object: &LfsObject, now: Timestamp) -> Result<()>;

    /// The secret `name` every server of this store shares: the one kept,
    /// or `made` if none was yet (then kept). Only in a write.
    fn secret(&self, name: &str, made: &str) -> Result<String>;

    /// A participant's check-outs, newest first; only open ones if `open_only`.
    fn checkouts_of(&self, actor: &Participant, open_only: bool) -> Result<Vec<Checkout>>;

    /// A stored result as the API shows it (a proposal in its current state).
    fn resolve_result(&self, stored: StoredResult) -> Result<CheckinResult> {
        Ok(match stored {
            StoredResult::Committed { version, digest } => {
                CheckinResult::Committed { version, digest }
            }
            StoredResult::Unchanged { version, digest } => {
                CheckinResult::Unchanged { version, digest }
            }
            StoredResult::Proposal { proposal_id } => CheckinResult::Proposal {
                proposal: self
                    .proposal(proposal_id)?
                    .ok_or_else(|| Error::Internal(format!("proposal {proposal_id} is missing")))?,
            },
        })
    }

    /// Writes a whole check-out record, new or changed.
    fn put_checkout(
        &self,
        row: &CheckoutRow,
        result: Option<&StoredResult>,
        closed_at: Option<Timestamp>,
    ) -> Result<()>;

    fn edit(&self, id: EditId) -> Result<Option<EditRow>>;

    fn put_edit(&self, row: &EditRow, now: Timestamp) -> Result<()>;

    fn proposal(&self, id: ProposalId) -> Result<Option<Proposal>>;

    fn proposals(&self, filter: &ProposalFilter) -> Result<Vec<Proposal>>;

    /// The proposal that replaced a superseded one.
    fn successor(&self, id: ProposalId) -> Result<Option<ProposalId>>;

    fn insert_proposal(&self, p: &Proposal) -> Result<()>;

    /// Moves a proposal out of `open`, if it is open still.
    fn decide_proposal(&self, id: ProposalId, decision: &Decision) -> Result<()>;

    // ----- changes

    fn insert_change(&self, change: &ChangeRow) -> Result<()>;

    fn change(&self, id: ChangeId) -> Result<Option<ChangeRow>>;

    /// The proposals kept for one change, in every state.
    fn change_proposals(&self, id: ChangeId) -> Result<Vec<Proposal>>;

    /// Notes that a closed check-out's staged bytes are no longer named by
    /// it: their blob goes once no other row names it.
    fn drop_blob(&self, digest: &Digest) -> Result<()>;

    /// Blobs dropped (see [`Tx::drop_blob`]) and not yet looked at, at most `limit`.
    fn dropped_blobs(&self, limit: u32) -> Result<Vec<Digest>>;

    /// A dropped blob looked at: removed, or named again.
    fn forget_dropped_blob(&self, digest: &Digest) -> Result<()>;

    // ----- requests

    fn request(&self, id: RequestId) -> Result<Option<RequestRow>>;

    /// The requests on one check-out, oldest first, in every state.
    fn checkout_requests(&self, checkout: CheckoutId) -> Result<Vec<RequestRow>>;

    /// The requests to or from `participant`, newest first; only those that
    /// still stand if `live_only`.
    fn requests_of(&self, participant: &Participant, live_only: bool) -> Result<Vec<Request>>;

    /// Writes a request, new or changed.
    fn put_request(&self, row: &RequestRow) -> Result<()>;

    /// Appends an event; writes nothing if an event with its id exists
    /// already (a contender asking again).
    fn insert_event(&self, e: NewEvent) -> Result<()>;

    /// One page of the ledger (see [`EventRows`]).
    fn event_rows(&self, page: EventRows) -> Result<Vec<Event>>;

    /// Events after `after`, oldest first (of one artifact, if given).
    fn events_after(
        &self,
        artifact: Option<ArtifactId>,
        after: u64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let Ok(after) = i64::try_from(after) else {
            return Ok(Vec::new()); // no seq is past 2^63 - 1
        };
        self.event_rows(EventRows {
            older: false,
            bound: after,
            limit,
            artifact,
        })
    }

    /// Events before `before`, newest first (of one artifact, if given).
    fn events_before(
        &self,
        artifact: Option<ArtifactId>,
        before: u64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let before = before.min(i64::MAX as u64) as i64;
        self.event_rows(EventRows {
            older: true,
            bound: before,
            limit,
            artifact,
        })
    }

    fn last_event_seq(&self) -> Result<u64>;
}

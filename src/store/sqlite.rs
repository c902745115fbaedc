//! The SQLite store of a data folder: schema (numbered migrations),
//! transactions, and the typed reads and writes of [`Transaction`].

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use chrono::DateTime;
use rusqlite::config::DbConfig;
use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};
use serde::{Deserialize, Serialize};

use super::*;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::*;

/// A migration's step that SQL cannot do.
type RustStep = fn(&rusqlite::Transaction) -> Result<()>;

/// Numbered migrations, each SQL and then, where SQL cannot do it, Rust.
const MIGRATIONS: &[(&str, Option<RustStep>)] = &[
    (include_str!("migrations/0001_leases.sql"), None),
    (include_str!("migrations/0002_tokens.sql"), None),
    (
        include_str!("migrations/0003_path_keys.sql"),
        Some(fill_path_keys),
    ),
    (include_str!("migrations/0004_blob_names.sql"), None),
    (include_str!("migrations/0005_messages.sql"), None),
];

/// Gives every artifact stored before path keys its key (which needs NFC and
/// Unicode case folding, so Rust). Rows whose keys collide are kept as they
/// are: they stay readable, and an admin renames one of them.
fn fill_path_keys(tx: &rusqlite::Transaction) -> Result<()> {
    let rows: Vec<(String, String)> = tx
        .prepare("SELECT id, path FROM artifacts WHERE path_key IS NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut update = tx.prepare("UPDATE artifacts SET path_key = ?2 WHERE id = ?1")?;
    for (id, path) in rows {
        update.execute(params![id, collision_key(&path)])?;
    }
    Ok(())
}

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct SqliteStore {
    /// The one connection that writes: SQLite has one writer at a time anyway.
    conn: Mutex<Connection>,
    /// Idle read-only connections: in WAL mode reads run beside the writer.
    readers: Mutex<Vec<Connection>>,
    path: PathBuf,
    failpoints: Failpoints,
    /// Every event up to this seq is in a WAL that was fsynced (or in the
    /// database file after a checkpoint, which fsyncs it).
    synced: std::sync::atomic::AtomicU64,
    /// Taken while the WAL is fsynced: one fsync serves every waiting reader.
    syncing: Mutex<()>,
    /// Stops the checkpointer when the store is dropped.
    _checkpointer: std::sync::mpsc::Sender<()>,
}

/// How often the log is copied into the database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// A thread that copies the log into the database now and then, without
/// blocking writers (a passive checkpoint); it ends when the sender drops.
fn spawn_checkpointer(path: &Path, failpoints: Failpoints) -> Result<std::sync::mpsc::Sender<()>> {
    let conn = connect(path)?;
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("store-checkpoint".into())
        .spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(CHECKPOINT_EVERY)
            {
                // A failed checkpoint is tried again next time; the log only grows meanwhile.
                if failpoints.hit(failpoint::at::CHECKPOINT).is_ok() {
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            }
        })?;
    Ok(stop)
}

/// Fsyncs the WAL of the database at `path`. Without one, every commit is in
/// the database file, which the checkpoint that emptied the log fsynced.
fn sync_wal(path: &Path) -> Result<()> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    // Windows flushes only a handle that may write.
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&wal)
    {
        Ok(file) => Ok(file.sync_data()?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A connection set up as every one of the store's is.
fn connect(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // A stable plan per statement: without it SQLite re-prepares a join on
    // every new bound value (to let STAT4 look at it), which cost a fifth of
    // each lease change.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

impl SqliteStore {
    pub fn open(path: &Path, failpoints: Failpoints) -> Result<Self> {
        let mut conn = connect(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        migrate(&mut conn)?;
        // Commits never wait for a checkpoint (two fsyncs and many page
        // copies): a thread of the store's own makes them, beside the writer.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let checkpointer = spawn_checkpointer(path, failpoints.clone())?;
        Ok(Self {
            conn: Mutex::new(conn),
            readers: Mutex::new(Vec::new()),
            path: path.to_owned(),
            failpoints,
            synced: Default::default(),
            syncing: Default::default(),
            _checkpointer: checkpointer,
        })
    }

    /// The last seq through which every event is durable, and at least every
    /// event committed before the call. Lease changes commit with
    /// `synchronous=NORMAL`: their WAL frames reach the operating system,
    /// not the disk, so a power loss may undo them. Before a reader is given
    /// such an event, the WAL file is fsynced (whichever process wrote it).
    pub fn durable_events(&self) -> Result<u64> {
        use std::sync::atomic::Ordering;
        let committed = self.read(|tx| tx.last_event_seq())?;
        if self.synced.load(Ordering::Acquire) >= committed {
            return Ok(committed);
        }
        let _turn = self.syncing.lock().unwrap_or_else(|p| p.into_inner());
        if self.synced.load(Ordering::Acquire) >= committed {
            return Ok(committed);
        }
        // Whatever is committed by now is in the WAL the fsync covers.
        let covered = self.read(|tx| tx.last_event_seq())?;
        let synced = self
            .failpoints
            .hit(failpoint::at::WAL_SYNC)
            .and_then(|()| sync_wal(&self.path));
        match synced {
            Ok(()) => Ok(self
                .synced
                .fetch_max(covered, Ordering::AcqRel)
                .max(covered)),
            Err(e) => {
                // Readers get what is durable; the next read tries again.
                tracing::warn!(
                    "the log of {} could not be synced: {e}",
                    self.path.display()
                );
                Ok(self.synced.load(Ordering::Acquire))
            }
        }
    }

    /// Runs `f` in one write transaction (taken at once, so that two processes
    /// never deadlock upgrading a read). `f`'s error rolls everything back.
    ///
    /// Durability: lease changes commit with `synchronous=NORMAL` (they survive a
    /// process crash; a power loss may undo the last few, which is safe because
    /// commits test the base version, not the lease). Writes of versions and
    /// proposals ask for `Durability::Full`: their commit fsyncs the WAL, and with
    /// it every commit before it. SQLite cannot change that setting inside a
    /// transaction, so if a `Normal` transaction turns out to write a version or a
    /// proposal (the store changed since the caller looked: [`Tx::require_durable`]),
    /// it is rolled back and run again with `Full`. `f` must be safe to run twice.
    pub fn write<T>(
        &self,
        durability: Durability,
        mut f: impl FnMut(&Tx) -> Result<T>,
    ) -> Result<T> {
        let mut conn = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if durability == Durability::Normal {
            let durable = Cell::new(false);
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&SqliteTx {
                tx: &tx,
                durable: &durable,
            })?;
            if !durable.get() {
                tx.commit()?;
                return Ok(value);
            }
        }
        let mut conn = FullSync::set(&mut conn)?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&SqliteTx {
            tx: &tx,
            durable: &Cell::new(true),
        })?;
        // This commit fsyncs the WAL: every event in it is durable after.
        let last_seq = SqliteTx {
            tx: &tx,
            durable: &Cell::new(true),
        }
        .last_event_seq()?;
        self.failpoints.hit(failpoint::at::BEFORE_DURABLE_COMMIT)?;
        tx.commit()?;
        self.synced
            .fetch_max(last_seq, std::sync::atomic::Ordering::AcqRel);
        self.failpoints.hit(failpoint::at::AFTER_DURABLE_COMMIT)?;
        Ok(value)
    }

    /// Runs `f` on one consistent snapshot, on a read connection of its own,
    /// so reads neither wait for writes nor make them wait. Writes nothing.
    pub fn read<T>(&self, f: impl FnOnce(&Tx) -> Result<T>) -> Result<T> {
        let idle = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match idle {
            Some(conn) => conn,
            None => {
                let conn = connect(&self.path)?;
                conn.pragma_update(None, "query_only", true)?;
                conn
            }
        };
        let value = (|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
            let value = f(&SqliteTx {
                tx: &tx,
                durable: &Cell::new(false),
            })?;
            tx.commit()?;
            Ok(value)
        })();
        self.readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(conn);
        value
    }
}

fn migrate(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let applied: usize = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if applied > MIGRATIONS.len() {
        return Err(Error::Internal(format!(
            "the store's schema (version {applied}) is newer than this program knows ({}): upgrade Leasedesk",
            MIGRATIONS.len()
        )));
    }
    if applied == MIGRATIONS.len() {
        return Ok(());
    }
    for (sql, then) in &MIGRATIONS[applied..] {
        tx.execute_batch(sql)?;
        if let Some(then) = then {
            then(&tx)?;
        }
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len())?;
    tx.commit()?;
    Ok(())
}

/// A connection switched to `synchronous=FULL` until dropped (also on a panic).
struct FullSync<'a>(&'a mut Connection);

impl<'a> FullSync<'a> {
    fn set(conn: &'a mut Connection) -> Result<Self> {
        conn.pragma_update(None, "synchronous", "FULL")?;
        Ok(Self(conn))
    }
}

impl std::ops::Deref for FullSync<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.0
    }
}

impl std::ops::DerefMut for FullSync<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.0
    }
}

impl Drop for FullSync<'_> {
    fn drop(&mut self) {
        // If this fails the connection stays FULL: slower, never less safe.
        let _ = self.0.pragma_update(None, "synchronous", "NORMAL");
    }
}

/// One transaction on the SQLite store.
pub struct SqliteTx<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    durable: &'a Cell<bool>,
}

fn millis(t: Timestamp) -> i64 {
    t.timestamp_millis()
}

fn time(ms: i64) -> rusqlite::Result<Timestamp> {
    DateTime::from_timestamp_millis(ms).ok_or(rusqlite::Error::IntegralValueOutOfRange(0, ms))
}

/// A stored path, as older versions' rules allowed it (it may be one that
/// cannot be placed on a computer: it must stay readable).
fn stored_path(row: &Row, idx: usize) -> rusqlite::Result<RepoPath> {
    let text: String = row.get(idx)?;
    RepoPath::stored(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// Parses a stored text column into a domain type, as a column conversion error.
fn parsed<T: std::str::FromStr>(row: &Row, idx: usize) -> rusqlite::Result<T>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    let text: String = row.get(idx)?;
    text.parse().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn parsed_opt<T: std::str::FromStr>(row: &Row, idx: usize) -> rusqlite::Result<Option<T>>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    match row.get::<_, Option<String>>(idx)? {
        None => Ok(None),
        Some(_) => parsed(row, idx).map(Some),
    }
}

fn json<T: for<'de> Deserialize<'de>>(row: &Row, idx: usize) -> rusqlite::Result<Option<T>> {
    match row.get::<_, Option<String>>(idx)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
        }),
    }
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("stored values serialize")
}

const HEAD_COLUMNS: &str = "v.version, v.digest, v.size, v.author, v.committed_at, v.message";

fn head_at(row: &Row, i: usize) -> rusqlite::Result<Head> {
    Ok(Head {
        version: row.get(i)?,
        digest: parsed(row, i + 1)?,
        size: row.get(i + 2)?,
        author: parsed(row, i + 3)?,
        committed_at: time(row.get(i + 4)?)?,
        message: row.get(i + 5)?,
    })
}

const LEASE_COLUMNS: &str =
    "l.holder, l.participant, l.kind, l.checkout_id, l.note, l.acquired_at, l.expires_at";

fn lease_at(row: &Row, i: usize) -> rusqlite::Result<Option<Lease>> {
    let Some(holder) = row.get::<_, Option<String>>(i)? else {
        return Ok(None);
    };
    let kind: String = row.get(i + 2)?;
    Ok(Some(Lease {
        holder,
        participant: parsed(row, i + 1)?,
        kind: if kind == "edit" {
            LeaseKind::Edit
        } else {
            LeaseKind::Checkout
        },
        checkout_id: parsed_opt(row, i + 3)?,
        note: row.get(i + 4)?,
        acquired_at: time(row.get(i + 5)?)?,
        expires_at: time(row.get(i + 6)?)?,
    }))
}

const CHECKOUT_COLUMNS: &str = "c.id, c.artifact_id, a.path, c.version, c.digest, c.actor, c.note, \
     c.created_at, c.expires_at, c.state, c.checkin_digest, c.result, c.broken_by, c.broken_reason, c.broken_at, \
     c.lease_epoch";

const PROPOSAL_COLUMNS: &str = "id, artifact_id, base_version, test_digest, provenance_version, \
     provenance_digest, digest, size, author, checkout_id, state, created_at, message";

fn proposal_row(row: &Row) -> rusqlite::Result<Proposal> {
    let state: String = row.get(10)?;
    Ok(Proposal {
        id: parsed(row, 0)?,
        artifact_id: parsed(row, 1)?,
        base_version: row.get(2)?,
        test_digest: parsed(row, 3)?,
        provenance: Provenance {
            version: row.get(4)?,
            digest: parsed(row, 5)?,
        },
        digest: parsed(row, 6)?,
        size: row.get(7)?,
        author: parsed(row, 8)?,
        checkout_id: parsed_opt(row, 9)?,
        state: match state.as_str() {
            "open" => ProposalState::Open,
            "accepted" => ProposalState::Accepted,
            "rejected" => ProposalState::Rejected,
            _ => ProposalState::Superseded,
        },
        created_at: time(row.get(11)?)?,
        message: row.get(12)?,
    })
}

fn proposal_state_str(state: ProposalState) -> &'static str {
    match state {
        ProposalState::Open => "open",
        ProposalState::Accepted => "accepted",
        ProposalState::Rejected => "rejected",
        ProposalState::Superseded => "superseded",
    }
}

impl Transaction for SqliteTx<'_> {
    fn now(&self, clock: &Clock) -> Result<Timestamp> {
        Ok(clock.now())
    }

    /// Makes this transaction's commit survive power loss.
    fn require_durable(&self) {
        self.durable.set(true);
    }

    /// Runs `f` in a savepoint: its error rolls back what `f` wrote and nothing
    /// before it, so several writers can share one transaction (group commit).
    /// The outer error is the store's own failure, which ends the transaction.
    fn savepoint(&self, f: &mut dyn FnMut(&Tx) -> Result<()>) -> Result<Result<()>> {
        let run = |sql: &str| self.tx.prepare_cached(sql)?.execute([]);
        run("SAVEPOINT writer")?;
        let outcome = f(self);
        if outcome.is_err() {
            run("ROLLBACK TO writer")?;
        }
        run("RELEASE writer")?;
        Ok(outcome)
    }

    // ----- participants

    fn account(&self, participant: &Participant) -> Result<Option<Account>> {
        Ok(self
            .tx
            .query_row(
                "SELECT participant, admin, created_at FROM participants WHERE participant = ?1",
                [participant.as_str()],
                |r| {
                    Ok(Account {
                        participant: parsed(r, 0)?,
                        admin: r.get(1)?,
                        created_at: time(r.get(2)?)?,
                    })
                },
            )
            .optional()?)
    }

    fn insert_account(&self, account: &Account) -> Result<()> {
        let inserted = self.tx.execute(
            "INSERT INTO participants (participant, admin, created_at) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
            params![
                account.participant.as_str(),
                account.admin,
                millis(account.created_at)
            ],
        )?;
        if inserted == 0 {
            return Err(Error::Exists(format!(
                "{} already exists",
                account.participant
            )));
        }
        Ok(())
    }

    fn accounts(&self) -> Result<Vec<Account>> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT participant, admin, created_at FROM participants ORDER BY participant",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(Account {
                participant: parsed(r, 0)?,
                admin: r.get(1)?,
                created_at: time(r.get(2)?)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ----- tokens

    fn insert_token(
        &self,
        id: &str,
        participant: &Participant,
        hash: &str,
        now: Timestamp,
    ) -> Result<()> {
        self.tx.execute(
            "INSERT INTO tokens (id, participant, hash, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![id, participant.as_str(), hash, millis(now)],
        )?;
        Ok(())
    }

    /// The participant and hash of a token that is not revoked.
    fn live_token(&self, id: &str) -> Result<Option<(Participant, String)>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT participant, hash FROM tokens WHERE id = ?1 AND revoked_at IS NULL",
            )?
            .query_row([id], |r| Ok((parsed(r, 0)?, r.get(1)?)))
            .optional()?)
    }

    /// Revokes every live token of a participant; returns how many.
    fn revoke_tokens(&self, participant: &Participant, now: Timestamp) -> Result<usize> {
        Ok(self.tx.execute(
            "UPDATE tokens SET revoked_at = ?2 WHERE participant = ?1 AND revoked_at IS NULL",
            params![participant.as_str(), millis(now)],
        )?)
    }

    // ----- artifacts and versions

    /// The artifact at `path`, or else the one whose path has its collision
    /// key (the same file on a computer: `Hero.psd` finds `hero.psd`).
    fn artifact_id_by_path(&self, path: &RepoPath) -> Result<Option<ArtifactId>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT id FROM artifacts WHERE path = ?1 OR path_key = ?2
                 ORDER BY path = ?1 DESC, path LIMIT 1",
            )?
            .query_row(params![path.as_str(), path.collision_key()], |r| {
                parsed(r, 0)
            })
            .optional()?)
    }

    /// The artifacts whose path has collision key `key`, by path.
    fn artifacts_with_key(&self, key: &str) -> Result<Vec<(ArtifactId, RepoPath)>> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT id, path FROM artifacts WHERE path_key = ?1 ORDER BY path")?;
        let rows = stmt.query_map([key], |r| Ok((parsed(r, 0)?, stored_path(r, 1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Artifacts whose key lies under the folder `key` (`key/...`), at most
    /// `limit`, by path; an index range, since `0` follows `/` in byte order.
    fn artifacts_under_key(&self, key: &str, limit: u32) -> Result<Vec<(ArtifactId, RepoPath)>> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT id, path FROM artifacts WHERE path_key >= ?1 || '/' AND path_key < ?1 || '0'
             ORDER BY path LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![key, limit], |r| {
            Ok((parsed(r, 0)?, stored_path(r, 1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Moves an artifact to `path` (the rules checked it is free).
    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()> {
        self.tx.execute(
            "UPDATE artifacts SET path = ?2, path_key = ?3 WHERE id = ?1",
            params![id.to_string(), path.as_str(), path.collision_key()],
        )?;
        Ok(())
    }

    /// An artifact with its head and its lease row, lapsed or not.
    fn artifact(&self, id: ArtifactId) -> Result<Option<Artifact>> {
        let sql = format!(
            "SELECT a.id, a.path, {HEAD_COLUMNS}, {LEASE_COLUMNS}
             FROM artifacts a
             JOIN versions v ON v.artifact_id = a.id AND v.version = a.head_version
             LEFT JOIN leases l ON l.artifact_id = a.id
             WHERE a.id = ?1"
        );
        Ok(self
            .tx
            .prepare_cached(&sql)?
            .query_row([id.to_string()], artifact_row)
            .optional()?)
    }

    /// Every artifact by path, with its head and its lease row, lapsed or not.
    fn artifacts(&self) -> Result<Vec<Artifact>> {
        let sql = format!(
            "SELECT a.id, a.path, {HEAD_COLUMNS}, {LEASE_COLUMNS}
             FROM artifacts a
             JOIN versions v ON v.artifact_id = a.id AND v.version = a.head_version
             LEFT JOIN leases l ON l.artifact_id = a.id
             ORDER BY a.path"
        );
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let rows = stmt.query_map([], artifact_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn insert_artifact(&self, id: ArtifactId, path: &RepoPath, head: &Head) -> Result<()> {
        self.tx.execute(
            "INSERT INTO artifacts (id, path, path_key, head_version, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                id.to_string(),
                path.as_str(),
                path.collision_key(),
                head.version,
                millis(head.committed_at)
            ],
        )?;
        self.insert_version(id, head, None)
    }

    /// Appends `head` as the artifact's new head, replacing `base`; refuses (as an
    /// internal error: the rules test the base first) if `base` is not the head.
    fn commit_version(&self, id: ArtifactId, head: &Head, base: u64) -> Result<()> {
        let moved = self.tx.execute(
            "UPDATE artifacts SET head_version = ?1 WHERE id = ?2 AND head_version = ?3",
            params![head.version, id.to_string(), base],
        )?;
        if moved != 1 {
            return Err(Error::Internal(format!(
                "artifact {id}: head is not version {base}"
            )));
        }
        self.insert_version(id, head, Some(base))
    }

    /// Versions, newest first, with the version each replaced.
    fn versions(&self, id: ArtifactId) -> Result<Vec<(Head, Option<u64>)>> {
        let sql = format!(
            "SELECT {HEAD_COLUMNS}, v.base_version FROM versions v WHERE v.artifact_id = ?1 ORDER BY v.version DESC"
        );
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let rows = stmt.query_map([id.to_string()], |r| Ok((head_at(r, 0)?, r.get(6)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn version(&self, id: ArtifactId, version: u64) -> Result<Option<Head>> {
        if i64::try_from(version).is_err() {
            return Ok(None); // SQLite's integers stop at 2^63 - 1: no such version
        }
        let sql = format!(
            "SELECT {HEAD_COLUMNS} FROM versions v WHERE v.artifact_id = ?1 AND v.version = ?2"
        );
        Ok(self
            .tx
            .prepare_cached(&sql)?
            .query_row(params![id.to_string(), version], |r| head_at(r, 0))
            .optional()?)
    }

    // ----- blobs

    /// Whether a version or a proposal (of any state: rows are never deleted)
    /// names `digest`: the rows whose bytes are served, so their blob must stay.
    fn names_blob(&self, digest: &Digest) -> Result<bool> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM versions WHERE digest = ?1)
                 OR EXISTS (SELECT 1 FROM proposals WHERE digest = ?1)",
            )?
            .query_row([digest.as_str()], |r| r.get(0))?)
    }

    /// Every digest [`Tx::names_blob`] would find.
    fn blob_digests(&self) -> Result<std::collections::HashSet<Digest>> {
        let mut stmt = self
            .tx
            .prepare("SELECT digest FROM versions UNION SELECT digest FROM proposals")?;
        let rows = stmt.query_map([], |r| parsed(r, 0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ----- leases

    fn put_lease(&self, artifact_id: ArtifactId, lease: &Lease) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (artifact_id) DO UPDATE SET holder = ?2, participant = ?3, kind = ?4,
                     checkout_id = ?5, note = ?6, acquired_at = ?7, expires_at = ?8",
            )?
            .execute(params![
                artifact_id.to_string(),
                lease.holder,
                lease.participant.as_str(),
                match lease.kind {
                    LeaseKind::Checkout => "checkout",
                    LeaseKind::Edit => "edit",
                },
                lease.checkout_id.map(|id| id.to_string()),
                lease.note,
                millis(lease.acquired_at),
                millis(lease.expires_at)
            ])?;
        Ok(())
    }

    fn delete_lease(&self, artifact_id: ArtifactId) -> Result<()> {
        self.tx
            .prepare_cached("DELETE FROM leases WHERE artifact_id = ?1")?
            .execute([artifact_id.to_string()])?;
        Ok(())
    }

    /// How many leases were ever taken on the artifact.
    fn lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        Ok(self
            .tx
            .prepare_cached("SELECT lease_epoch FROM artifacts WHERE id = ?1")?
            .query_row([artifact_id.to_string()], |r| r.get(0))?)
    }

    /// Counts one more lease taken on the artifact; returns the new epoch.
    fn next_lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        Ok(self
            .tx
            .prepare_cached("UPDATE artifacts SET lease_epoch = lease_epoch + 1 WHERE id = ?1 RETURNING lease_epoch")?
            .query_row([artifact_id.to_string()], |r| r.get(0))?)
    }

    fn live_lease_count(&self, now: Timestamp) -> Result<u64> {
        Ok(self
            .tx
            .prepare_cached("SELECT COUNT(*) FROM leases WHERE expires_at > ?1")?
            .query_row([millis(now)], |r| r.get(0))?)
    }

    /// Leases whose expiry has passed but whose lapse is not yet recorded.
    fn lapsed_leases(&self, now: Timestamp) -> Result<Vec<(ArtifactId, Lease)>> {
        let sql =
            format!("SELECT l.artifact_id, {LEASE_COLUMNS} FROM leases l WHERE l.expires_at <= ?1");
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let rows = stmt.query_map([millis(now)], |r| {
            Ok((
                parsed(r, 0)?,
                lease_at(r, 1)?.expect("lease row has a holder"),
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ----- check-outs

    fn checkout(&self, id: CheckoutId) -> Result<Option<CheckoutRow>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id WHERE c.id = ?1"
        );
        let row = self
            .tx
            .prepare_cached(&sql)?
            .query_row([id.to_string()], |r| {
                Ok((checkout_row(r)?, json::<StoredResult>(r, 11)?))
            })
            .optional()?;
        row.map(|(row, result)| self.with_result(row, result))
            .transpose()
    }

    /// A participant's check-outs, newest first; only open ones if `open_only`.
    fn checkouts_of(&self, actor: &Participant, open_only: bool) -> Result<Vec<Checkout>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id
             WHERE c.actor = ?1 AND (?2 = 0 OR c.state = 'open') ORDER BY c.created_at DESC, c.id"
        );
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let rows = stmt
            .query_map(params![actor.as_str(), open_only], |r| {
                Ok((checkout_row(r)?, json::<StoredResult>(r, 11)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(row, result)| self.with_result(row, result).map(|row| row.checkout))
            .collect()
    }

    /// Writes a whole check-out record, new or changed.
    fn put_checkout(
        &self,
        row: &CheckoutRow,
        result: Option<&StoredResult>,
        closed_at: Option<Timestamp>,
    ) -> Result<()> {
        let c = &row.checkout;
        let broken = c.broken.as_ref();
        self.tx
            .prepare_cached(
                "INSERT INTO checkouts (id, artifact_id, version, digest, actor, note, created_at, expires_at,
                     state, closed_at, checkin_digest, result, broken_by, broken_reason, broken_at, lease_epoch)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
                 ON CONFLICT (id) DO UPDATE SET expires_at = ?8, state = ?9, closed_at = ?10,
                     checkin_digest = ?11, result = ?12, broken_by = ?13, broken_reason = ?14, broken_at = ?15,
                     lease_epoch = ?16",
            )?
            .execute(params![
                c.id.to_string(),
                c.artifact_id.to_string(),
                c.version,
                c.digest.as_str(),
                c.actor.as_str(),
                c.note,
                millis(c.created_at),
                millis(c.expires_at),
                match c.state {
                    CheckoutState::Open => "open",
                    CheckoutState::Closed => "closed",
                },
                closed_at.map(millis),
                row.checkin_digest.as_ref().map(Digest::as_str),
                result.map(to_json),
                broken.map(|b| b.by.as_str()),
                broken.map(|b| b.reason.as_str()),
                broken.map(|b| millis(b.at)),
                row.lease_epoch,
            ])?;
        Ok(())
    }

    // ----- edits

    fn edit(&self, id: EditId) -> Result<Option<EditRow>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT id, artifact_id, participant, base_version, base_digest, expires_at, state, commit_digest, result
                 FROM edits WHERE id = ?1",
            )?
            .query_row([id.to_string()], |r| {
                let id: EditId = parsed(r, 0)?;
                let state: String = r.get(6)?;
                Ok(EditRow {
                    edit: Edit {
                        id,
                        artifact_id: parsed(r, 1)?,
                        holder: Lease::edit_holder(id),
                        participant: parsed(r, 2)?,
                        base_version: r.get(3)?,
                        base_digest: parsed(r, 4)?,
                        expires_at: time(r.get(5)?)?,
                    },
                    state: match state.as_str() {
                        "open" => EditState::Open,
                        "committed" => EditState::Committed,
                        _ => EditState::Released,
                    },
                    commit_digest: parsed_opt(r, 7)?,
                    result: json(r, 8)?,
                })
            })
            .optional()?)
    }

    fn put_edit(&self, row: &EditRow, now: Timestamp) -> Result<()> {
        let e = &row.edit;
        self.tx
            .prepare_cached(
                "INSERT INTO edits (id, artifact_id, participant, base_version, base_digest, created_at, expires_at,
                     state, commit_digest, result)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (id) DO UPDATE SET state = ?8, commit_digest = ?9, result = ?10",
            )?
            .execute(params![
                e.id.to_string(),
                e.artifact_id.to_string(),
                e.participant.as_str(),
                e.base_version,
                e.base_digest.as_str(),
                millis(now),
                millis(e.expires_at),
                match row.state {
                    EditState::Open => "open",
                    EditState::Committed => "committed",
                    EditState::Released => "released",
                },
                row.commit_digest.as_ref().map(Digest::as_str),
                row.result.as_ref().map(to_json),
            ])?;
        Ok(())
    }

    // ----- proposals

    fn proposal(&self, id: ProposalId) -> Result<Option<Proposal>> {
        let sql = format!("SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE id = ?1");
        Ok(self
            .tx
            .prepare_cached(&sql)?
            .query_row([id.to_string()], proposal_row)
            .optional()?)
    }

    fn proposals(&self, filter: &ProposalFilter) -> Result<Vec<Proposal>> {
        let sql = format!(
            "SELECT {PROPOSAL_COLUMNS} FROM proposals
             WHERE (?1 IS NULL OR artifact_id = ?1) AND (?2 IS NULL OR state = ?2)
             ORDER BY created_at, id"
        );
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let rows = stmt.query_map(
            params![
                filter.artifact.map(|id| id.to_string()),
                filter.state.map(proposal_state_str)
            ],
            proposal_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The proposal that replaced a superseded one.
    fn successor(&self, id: ProposalId) -> Result<Option<ProposalId>> {
        Ok(self
            .tx
            .query_row(
                "SELECT superseded_by FROM proposals WHERE id = ?1",
                [id.to_string()],
                |r| parsed_opt(r, 0),
            )
            .optional()?
            .flatten())
    }

    fn insert_proposal(&self, p: &Proposal) -> Result<()> {
        self.require_durable();
        self.tx.execute(
            &format!("INSERT INTO proposals ({PROPOSAL_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"),
            params![
                p.id.to_string(),
                p.artifact_id.to_string(),
                p.base_version,
                p.test_digest.as_str(),
                p.provenance.version,
                p.provenance.digest.as_str(),
                p.digest.as_str(),
                p.size,
                p.author.as_str(),
                p.checkout_id.map(|id| id.to_string()),
                proposal_state_str(p.state),
                millis(p.created_at),
                p.message,
            ],
        )?;
        Ok(())
    }

    /// Moves a proposal out of `open`; who decided and when are kept for history.
    fn decide_proposal(
        &self,
        id: ProposalId,
        state: ProposalState,
        by: &Participant,
        at: Timestamp,
        superseded_by: Option<ProposalId>,
    ) -> Result<()> {
        self.tx.execute(
            "UPDATE proposals SET state = ?2, decided_by = ?3, decided_at = ?4, superseded_by = ?5
             WHERE id = ?1 AND state = 'open'",
            params![
                id.to_string(),
                proposal_state_str(state),
                by.as_str(),
                millis(at),
                superseded_by.map(|id| id.to_string())
            ],
        )?;
        Ok(())
    }

    // ----- events

    /// Appends an event. Returns false, writing nothing, if an event with its id
    /// exists already (a contender asking again).
    fn insert_event(&self, e: NewEvent) -> Result<()> {
        self
            .tx
            .prepare_cached(
                "INSERT OR IGNORE INTO events (id, type, artifact_id, participant, holder, at, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                e.id.to_string(),
                e.kind,
                e.artifact_id.map(|id| id.to_string()),
                e.participant.map(Participant::as_str),
                e.holder,
                millis(e.at),
                e.data.to_string(),
            ])?;
        Ok(())
    }

    /// Events after `after`, oldest first (of one artifact, if given).
    fn events_after(
        &self,
        artifact: Option<ArtifactId>,
        after: u64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        if i64::try_from(after).is_err() {
            return Ok(Vec::new()); // no seq is past 2^63 - 1
        }
        let sql = match artifact {
            None => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                     WHERE seq > ?1 ORDER BY seq LIMIT ?2"
            }
            Some(_) => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                        WHERE artifact_id = ?3 AND seq > ?1 ORDER BY seq LIMIT ?2"
            }
        };
        self.event_rows(sql, after, limit, artifact)
    }

    /// Events before `before`, newest first (of one artifact, if given).
    fn events_before(
        &self,
        artifact: Option<ArtifactId>,
        before: u64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        // Every seq is below 2^63 - 1, so a larger bound is that bound.
        let before = before.min(i64::MAX as u64);
        let sql = match artifact {
            None => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                     WHERE seq < ?1 ORDER BY seq DESC LIMIT ?2"
            }
            Some(_) => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                        WHERE artifact_id = ?3 AND seq < ?1 ORDER BY seq DESC LIMIT ?2"
            }
        };
        self.event_rows(sql, before, limit, artifact)
    }

    fn last_event_seq(&self) -> Result<u64> {
        Ok(self
            .tx
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get(0))?)
    }
}

impl SqliteTx<'_> {
    fn with_result(
        &self,
        mut row: CheckoutRow,
        result: Option<StoredResult>,
    ) -> Result<CheckoutRow> {
        row.checkout.result = result.map(|r| self.resolve_result(r)).transpose()?;
        Ok(row)
    }

    fn insert_version(&self, id: ArtifactId, head: &Head, base: Option<u64>) -> Result<()> {
        self.require_durable();
        self.tx.execute(
            "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at, base_version, message)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                id.to_string(),
                head.version,
                head.digest.as_str(),
                head.size,
                head.author.as_str(),
                millis(head.committed_at),
                base,
                head.message
            ],
        )?;
        Ok(())
    }

    fn event_rows(
        &self,
        sql: &str,
        bound: u64,
        limit: u32,
        artifact: Option<ArtifactId>,
    ) -> Result<Vec<Event>> {
        let mut stmt = self.tx.prepare_cached(sql)?;
        let mut bound_params: Vec<Box<dyn rusqlite::ToSql>> =
            vec![Box::new(bound), Box::new(limit)];
        if let Some(id) = artifact {
            bound_params.push(Box::new(id.to_string()));
        }
        let rows = stmt.query_map(rusqlite::params_from_iter(bound_params.iter()), |r| {
            let data: String = r.get(7)?;
            Ok(Event {
                seq: r.get(0)?,
                id: parsed(r, 1)?,
                kind: r.get(2)?,
                artifact_id: parsed_opt(r, 3)?,
                participant: parsed_opt(r, 4)?,
                holder: r.get(5)?,
                at: time(r.get(6)?)?,
                data: serde_json::from_str(&data).unwrap_or(serde_json::Value::Null),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn artifact_row(r: &Row) -> rusqlite::Result<Artifact> {
    Ok(Artifact {
        id: parsed(r, 0)?,
        path: stored_path(r, 1)?,
        head: head_at(r, 2)?,
        lease: lease_at(r, 8)?,
    })
}

fn checkout_row(r: &Row) -> rusqlite::Result<CheckoutRow> {
    let id: CheckoutId = parsed(r, 0)?;
    let actor: Participant = parsed(r, 5)?;
    let state: String = r.get(9)?;
    let broken = match r.get::<_, Option<String>>(12)? {
        None => None,
        Some(_) => Some(Broken {
            by: parsed(r, 12)?,
            reason: r.get(13)?,
            at: time(r.get(14)?)?,
        }),
    };
    Ok(CheckoutRow {
        checkout: Checkout {
            id,
            artifact_id: parsed(r, 1)?,
            path: stored_path(r, 2)?,
            version: r.get(3)?,
            digest: parsed(r, 4)?,
            holder: Lease::checkout_holder(id, &actor),
            actor,
            note: r.get(6)?,
            created_at: time(r.get(7)?)?,
            expires_at: time(r.get(8)?)?,
            state: if state == "open" {
                CheckoutState::Open
            } else {
                CheckoutState::Closed
            },
            result: None,
            broken,
        },
        checkin_digest: parsed_opt(r, 10)?,
        lease_epoch: r.get(15)?,
    })
}

impl SqliteStore {
    /// Reads every row of `table` (its `columns`, in its key's order) on a
    /// connection of its own, one at a time: for copying a store elsewhere.
    pub(super) fn each_row(
        &self,
        table: &str,
        columns: &[(&str, copy::Kind)],
        f: &mut dyn FnMut(Vec<copy::Field>) -> Result<()>,
    ) -> Result<()> {
        let conn = connect(&self.path)?;
        let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
        let mut stmt = conn.prepare(&format!(
            "SELECT {} FROM {table} ORDER BY {}",
            names.join(", "),
            names[0]
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let fields = columns
                .iter()
                .enumerate()
                .map(|(i, (_, kind))| {
                    Ok(match kind {
                        copy::Kind::Int => copy::Field::Int(row.get(i)?),
                        copy::Kind::Text => copy::Field::Text(row.get(i)?),
                        copy::Kind::Bool => copy::Field::Bool(row.get(i)?),
                    })
                })
                .collect::<rusqlite::Result<Vec<_>>>()?;
            f(fields)?;
        }
        Ok(())
    }
}

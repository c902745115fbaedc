//! The SQLite store of a data folder: one writer connection, pooled read
//! connections (WAL mode: reads run beside the writer), and how durable a
//! commit is. Its parts: `connect` (connections, the checkpointer, the
//! WAL's fsync), `migrate` (the schema), `transaction` (how it runs the
//! statements both stores share, and the reads and writes that are its own).
//! Never imports the server or the client: it serves `Bundled` alone.

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_model::{clock, error, failpoint, model};

mod connect;
mod migrate;
mod transaction;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::Result;
use crate::failpoint::Failpoints;
use connect::{connect, connect_existing, spawn_checkpointer, sync_wal, FullSync};
use leasedesk_store::{Durability, Tx};
use migrate::migrate;
pub use transaction::SqliteTx;

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
    /// proposal (the store changed since the caller looked:
    /// [`Sql::require_durable`](leasedesk_store::Sql::require_durable)), it is
    /// rolled back and run again with `Full`. `f` must be safe to run twice.
    pub fn write<T>(
        &self,
        durability: Durability,
        mut f: impl FnMut(&dyn Tx) -> Result<T>,
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
    pub fn read<T>(&self, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        let idle = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match idle {
            Some(conn) => conn,
            None => {
                let conn = connect_existing(&self.path)?;
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

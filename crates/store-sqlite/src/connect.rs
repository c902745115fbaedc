//! The store's connections to its file: their settings, the thread that
//! checkpoints the log, the WAL's fsync, and a connection switched to
//! `synchronous=FULL` for one commit. Never runs the domain's statements.

use std::path::Path;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::Connection;

use crate::error::Result;
use crate::failpoint::{self, Failpoints};

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How often the log is copied into the database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// A thread that copies the log into the database now and then, without
/// blocking writers (a passive checkpoint); it ends when the sender drops.
pub(super) fn spawn_checkpointer(
    path: &Path,
    failpoints: Failpoints,
) -> Result<std::sync::mpsc::Sender<()>> {
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
pub(super) fn sync_wal(path: &Path) -> Result<()> {
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
pub(super) fn connect(path: &Path) -> Result<Connection> {
    configure(Connection::open(path)?)
}

/// A connection to the database made at open, never a new empty one: a file
/// moved or deleted meanwhile fails to open (and the health check says so)
/// rather than being made again, empty, where the store's was.
pub(super) fn connect_existing(path: &Path) -> Result<Connection> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    configure(Connection::open_with_flags(path, flags)?)
}

fn configure(conn: Connection) -> Result<Connection> {
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

/// A connection switched to `synchronous=FULL` until dropped (also on a panic).
pub(super) struct FullSync<'a>(&'a mut Connection);

impl<'a> FullSync<'a> {
    pub(super) fn set(conn: &'a mut Connection) -> Result<Self> {
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

//! Named places where a test can make the backend fail, panic or stop, to prove
//! that a failure there loses nothing. Empty (and free) unless a test sets one.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};

/// Where a failpoint sits.
pub mod at {
    /// Inside the check-out transaction, after the lease is taken, before the record is written.
    pub const CHECKOUT_RECORD: &str = "checkout.record";
    /// While an upload streams to its temporary blob file, after the first chunk.
    pub const UPLOAD_STREAM: &str = "upload.stream";
    /// An upload's blob is renamed to its digest; the transaction that names it has not begun.
    pub const BLOB_RENAMED: &str = "blob.renamed";
    /// A transaction that writes a version or a proposal is written whole, not yet committed.
    pub const BEFORE_DURABLE_COMMIT: &str = "store.before_durable_commit";
    /// Such a transaction has committed; the caller has not been answered yet.
    pub const AFTER_DURABLE_COMMIT: &str = "store.after_durable_commit";
    /// A migration has copied every row into its target's transaction, not yet committed.
    pub const MIGRATE_ROWS: &str = "migrate.rows";
    /// A migration has copied its first blob.
    pub const MIGRATE_BLOB: &str = "migrate.blob";
    /// Before the SQLite store fsyncs its WAL so that readers may be given
    /// the newest events (see `SqliteStore::durable_events`).
    pub const WAL_SYNC: &str = "store.wal_sync";
    /// The SQLite store's checkpointer, before each checkpoint (`error`: the
    /// log only grows, as when checkpoints keep failing).
    pub const CHECKPOINT: &str = "store.checkpoint";
    /// Inside a change's transaction, after its first file's write, before the second's.
    pub const CHANGE_BETWEEN_FILES: &str = "change.between_files";
    /// The health check's or the metrics scrape's read of the store (`pause`: a store that hangs).
    pub const STORE_PROBE: &str = "store.probe";
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Return an internal error.
    Error,
    /// Panic, as a bug would.
    Panic,
    /// Say so on stderr, then stop until the process is killed.
    Pause,
}

#[derive(Clone, Debug, Default)]
pub struct Failpoints(Arc<HashMap<String, Action>>);

impl Failpoints {
    pub fn new(points: impl IntoIterator<Item = (&'static str, Action)>) -> Self {
        Self(Arc::new(
            points.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        ))
    }

    /// Reads `name=error|panic|pause` pairs separated by `;`, as the CLI takes them
    /// from `LEASEDESK_FAILPOINTS` for crash tests on a real process.
    pub fn parse(spec: &str) -> Result<Self> {
        let mut points = HashMap::new();
        for pair in spec.split(';').filter(|p| !p.trim().is_empty()) {
            let (name, action) = pair
                .split_once('=')
                .ok_or_else(|| Error::Invalid(format!("failpoint {pair:?} must be NAME=ACTION")))?;
            let action = match action.trim() {
                "error" => Action::Error,
                "panic" => Action::Panic,
                "pause" => Action::Pause,
                other => {
                    return Err(Error::Invalid(format!(
                        "unknown failpoint action {other:?}"
                    )))
                }
            };
            points.insert(name.trim().to_owned(), action);
        }
        Ok(Self(Arc::new(points)))
    }

    pub fn hit(&self, name: &str) -> Result<()> {
        match self.0.get(name) {
            None => Ok(()),
            Some(Action::Error) => Err(Error::Internal(format!("failpoint {name}"))),
            Some(Action::Panic) => panic!("failpoint {name}"),
            Some(Action::Pause) => {
                eprintln!("failpoint {name} reached");
                loop {
                    std::thread::park();
                }
            }
        }
    }
}

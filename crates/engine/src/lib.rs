//! The bundled engine: [`Bundled`], the rules in-process over a store (an
//! SQLite file in the data folder, or PostgreSQL with the `postgres` feature)
//! and its blobs (a folder, or S3 with `s3`). Several processes may share a
//! data folder. Split by what changes together: `operations` (the `Backend`
//! trait), `writes` (group commit), `uploads`, `transfers` (resumable
//! uploads), `accounts` and `studio`, `health`, `sweeper`, `migrate`, Git
//! LFS's `git` and `lfs_objects`; bearer tokens (`token`).
//!
//! Never decides a lease itself: the rules do, given the `now` of their
//! transaction. Never speaks HTTP.

mod stores;
pub mod token;

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_backend as backend;
use leasedesk_backend::chunking;
use leasedesk_blobs as blobs;
use leasedesk_blobs::previews;
use leasedesk_files::{local_file, owner_only};
use leasedesk_model::{clock, error, failpoint, model};
use leasedesk_rules as rules;
use leasedesk_store as store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::blobs::Blobs;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::failpoint::Failpoints;
use crate::model::*;
use crate::store::Tx;
use crate::stores::Store;
#[cfg(feature = "postgres")]
use leasedesk_store_postgres::PgStore;

mod accounts;
mod git;
mod health;
mod lfs_objects;
#[cfg(feature = "postgres")]
mod migrate;
mod operations;
mod studio;
mod sweeper;
mod transfers;
mod uploads;
mod writes;

pub use health::HEALTH_CHECK_LIMIT;
pub use lfs_objects::{is_oid, LfsAction, LFS_ACTION_SECONDS};
#[cfg(feature = "postgres")]
pub use migrate::MigrationStep;
pub use sweeper::{Sweeper, SWEEP_EVERY};

/// How a bundled backend is set up; `Default` is what the app and the CLI use.
#[derive(Clone, Debug)]
pub struct Options {
    pub clock: Clock,
    pub failpoints: Failpoints,
    /// Largest upload accepted, in bytes.
    pub max_upload: u64,
    /// How long a lock taken through Git LFS holds its file, in hours
    /// (`serve --git-lock-hours`): a Git user never extends.
    pub git_lock_hours: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            clock: Clock::system(),
            failpoints: Failpoints::default(),
            max_upload: 64 << 30,
            git_lock_hours: crate::model::DEFAULT_GIT_LOCK_HOURS,
        }
    }
}

/// Where a bundled backend keeps its rows and its blobs.
#[derive(Clone, Debug)]
pub struct Location {
    /// The data folder: the SQLite database and the blobs unless told otherwise.
    pub data: PathBuf,
    /// `postgres://…`: rows in PostgreSQL instead of the data folder's SQLite file.
    pub database: Option<String>,
    /// `s3://BUCKET/PREFIX` or `file:///PATH`: blobs there instead of the data folder.
    pub blobs: Option<String>,
}

impl Location {
    /// Everything in the data folder `dir`.
    pub fn folder(dir: &Path) -> Self {
        Self {
            data: dir.to_owned(),
            database: None,
            blobs: None,
        }
    }
}

/// The bundled backend, acting as one participant. Cheap to clone; clones share
/// one store.
#[derive(Clone)]
pub struct Bundled {
    shared: Arc<Shared>,
    participant: Participant,
    /// The device (token id) the participant called from, on a server.
    device: Option<String>,
    /// Acting as the store's owner (see [`Bundled::as_owner`]).
    owner: bool,
}

struct Shared {
    store: Store,
    blobs: Blobs,
    options: Options,
    /// Woken after every write, for followers of the event ledger.
    changed: Arc<tokio::sync::Notify>,
    /// Writers wait their turn here, asleep, rather than blocked on the store's
    /// lock: only the writer whose turn it is holds a thread, and it runs
    /// every write queued meanwhile (see [`Bundled::write`]). On PostgreSQL
    /// each server's turns run beside the other servers'.
    write_turn: tokio::sync::Semaphore,
    /// Previews made once per (digest, size), beside the blobs.
    previews: crate::previews::PreviewCache,
    /// Resumable uploads: their parts, the room their lists take, turns.
    uploads: transfers::Uploads,
    queued_writes: std::sync::Mutex<Vec<Box<dyn writes::Queued>>>,
    /// Tokens found good lately, by hash, with when.
    known_tokens: std::sync::Mutex<accounts::KnownTokens>,
    /// The SQLite file, which the health check finds still there.
    /// The SQLite file, if the rows are in one.
    database_file: Option<PathBuf>,
    /// How many writes each group commit ran together, for the metrics.
    batch_sizes: prometheus_client::metrics::histogram::Histogram,
    /// Checks of the health check (or the scrape) that gave up waiting and
    /// are still running: the same check is not started again until it
    /// ends, so a hung disk or database does not pile up threads.
    stalled_checks: std::sync::Mutex<std::collections::HashMap<&'static str, health::StalledCheck>>,
    /// What Git LFS actions' credentials are signed with, read once.
    lfs_key: tokio::sync::OnceCell<ring::hmac::Key>,
}

impl Bundled {
    /// Opens (creating) the data folder `dir`, acting as the OS login's user.
    pub fn open(dir: &Path) -> Result<Self> {
        Self::open_with(dir, Options::default())
    }

    pub fn open_with(dir: &Path, options: Options) -> Result<Self> {
        Self::open_at(&Location::folder(dir), options)
    }

    /// Opens (creating) the store at `location`.
    pub fn open_at(location: &Location, options: Options) -> Result<Self> {
        let dir = location.data.as_path();
        owner_only::create_dir_all(dir)?;
        owner_only::restrict_if_open_to_all(dir);
        let changed = Arc::new(tokio::sync::Notify::new());
        let (store, database_file) = match &location.database {
            #[cfg(feature = "postgres")]
            Some(url) => (
                Store::Postgres(PgStore::open(
                    url,
                    options.failpoints.clone(),
                    changed.clone(),
                )?),
                None,
            ),
            #[cfg(not(feature = "postgres"))]
            Some(_) => {
                return Err(Error::Invalid(
                    "this build of Leasedesk keeps rows in SQLite only: serve PostgreSQL with the leasedesk command"
                        .into(),
                ))
            }
            None => {
                let database = dir.join("leasedesk.db");
                owner_only::create_file(&database)?;
                let store = Store::open(&database, options.failpoints.clone())?;
                (store, Some(database))
            }
        };
        let (blobs, previews) = Blobs::open(dir, location.blobs.as_deref())?;
        // Blobs of uploads that a killed process never named. Best effort: a
        // failed sweep is tried again at the next open.
        let swept = blobs.sweep_unnamed(
            || store.read(|tx| tx.blob_digests()),
            |d| store.read(|tx| tx.names_blob(d)),
        );
        if let Err(e) = swept {
            tracing::warn!("unnamed blobs stay until the next open: {e}");
        }
        let parts = blobs.upload_parts();
        let shared = Shared {
            store,
            blobs,
            options,
            changed,
            write_turn: tokio::sync::Semaphore::new(1),
            previews,
            uploads: transfers::Uploads::new(parts, dir.join("arriving")),
            queued_writes: Default::default(),
            known_tokens: Default::default(),
            database_file,
            batch_sizes: prometheus_client::metrics::histogram::Histogram::new(
                prometheus_client::metrics::histogram::exponential_buckets(1.0, 2.0, 10),
            ),
            stalled_checks: Default::default(),
            lfs_key: Default::default(),
        };
        Ok(Self {
            shared: Arc::new(shared),
            participant: os_user(),
            device: None,
            owner: false,
        })
    }

    /// The same store, acting as `participant`.
    pub fn acting_as(&self, participant: Participant) -> Self {
        Self {
            shared: self.shared.clone(),
            participant,
            device: None,
            owner: false,
        }
    }

    /// The same caller, known to call from the device (token) `id`.
    pub fn on_device(mut self, id: &str) -> Self {
        self.device = Some(id.to_owned());
        self
    }

    pub fn participant(&self) -> &Participant {
        &self.participant
    }

    pub fn clock(&self) -> &Clock {
        &self.shared.options.clock
    }

    /// The largest upload accepted, in bytes (`serve --max-upload`).
    pub fn max_upload(&self) -> u64 {
        self.shared.options.max_upload
    }

    /// Resolves after the next write through this store, or on PostgreSQL
    /// through any server (an SQLite file's other processes are not heard:
    /// poll as well).
    pub fn changed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        // Registered now, not when first polled: a change made between a
        // caller's read and its wait still wakes it.
        self.shared.changed.clone().notified_owned()
    }

    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Tx, &Participant, Timestamp) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let this = self.clone();
        in_place(move || {
            let clock = &this.shared.options.clock;
            this.shared
                .store
                .read(|tx| f(tx, &this.participant, tx.now(clock)?))
        })
        .await
    }
}

/// Runs a short blocking store transaction. On a multi-threaded runtime it runs
/// right here (the worker's other tasks move to another thread meanwhile),
/// which saves two thread switches per lease change; elsewhere off the thread.
pub(crate) async fn in_place<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        return tokio::task::block_in_place(|| crate::store::may_block(f));
    }
    off_thread(f).await
}

/// Runs long blocking work (copying a file) on tokio's blocking pool, so the
/// caller's task stays responsive (a timeout around it can fire).
async fn off_thread<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    match tokio::task::spawn_blocking(|| crate::store::may_block(f)).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(Error::Internal(format!("task: {e}"))),
    }
}

/// `user:` and the OS login name, as the bundled backend's default participant.
pub fn os_user() -> Participant {
    let login = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "me".to_owned());
    let name: String = login
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    Participant::user(&name).unwrap_or_else(|_| Participant::user("me").expect("valid name"))
}

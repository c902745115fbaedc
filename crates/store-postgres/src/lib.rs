//! The PostgreSQL store of a studio's servers: any number of `leasedesk serve`
//! processes on one database behave as one. Must never show a reader an
//! event a crash could undo, nor hold the ledger's lock beyond a COMMIT's
//! round trip. Never imports the server or the client: it serves `Bundled`.
//!
//! Here: the store, what it holds and how it opens. Its parts: `connect`
//! (settings, the pool, TLS, connections), `writer` (write transactions and
//! their retries), `tx` (one transaction's queued writes, locks and events),
//! `transaction` (how it runs the statements both stores share, and the
//! reads and writes that are its own), `notices`, `migrate`, `durable`.
//!
//! The rules are synchronous functions over `Tx`, so each call here
//! waits for its query. Reads use a pool whose connections live on a small
//! runtime of the store's own, so a caller may wait from any thread (a tokio
//! worker inside `block_in_place`, the blocking pool, or a plain thread)
//! without starving the tasks that drive the sockets.
//!
//! Each server runs one write transaction at a time (a group commit of
//! what its callers queued), on a connection its waiting thread drives (see
//! [`WriterConnection`]). The servers' write transactions run side by side,
//! in READ COMMITTED, and take turns only where they meet:
//! - **An artifact's rows**: the first touch of an artifact in a write locks
//!   its row and holds it until commit, and writes the row (its
//!   `touched_at`). A file, check-out or edit is locked and read in one
//!   statement; as that statement read before it waited, a row newer than
//!   its snapshot's means another write committed meanwhile, and the read
//!   runs again (`tx::PgTx::lock_and_read`). Proposals and requests are
//!   locked in a statement of their own, then read. So writes on different
//!   files never wait for each other, and writes on one file run one after
//!   the other, each seeing what the last committed.
//! - **Writes**: a lease's, an edit's row and the artifact's own row wait,
//!   and go out as one statement with the next statement or the commit.
//! - **Time**: `now` is the database's clock, read as the transaction
//!   begins. `touched_at` keeps the latest `now` that changed the artifact;
//!   a write that locks an artifact touched at a later time than its own
//!   `now` runs again, with those artifacts locked before its time is read,
//!   so times on a file follow its commits.
//! - **Events**: numbered at commit, under the lock of the one `ledger` row,
//!   in the same round trip as the COMMIT: numbers are dense and in commit
//!   order, and the lock is held for microseconds, not for the whole write.
//! - **Paths**: imports and renames, which look for paths that would collide
//!   on a computer, take one advisory lock for that look.
//! - **Notices**: a commit that wrote events wakes the other servers'
//!   followers with a `NOTIFY`, at most one a window from each server (see
//!   [`Announcements`]).
//! - **Durability**: events are read only once the WAL is flushed past
//!   their commit, so no reader sees one that a crash undoes ([`durable`]).
//!
//! A deadlock or a unique key taken by a concurrent write ends the attempt,
//! and the write runs again (writes are safe to run twice).

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_model::{clock, error, failpoint, model};
use leasedesk_trust as trust;

mod connect;
pub mod copy;
mod durable;
mod migrate;
mod notices;
mod transaction;
pub mod tx;
mod writer;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, Result};
use crate::failpoint::Failpoints;
use connect::{Conn, OpenTx, WriterConnection};
use durable::DurableLedger;
use leasedesk_store::Tx;
use notices::Announcements;

pub use connect::public_name;
pub use migrate::Loader;
pub use tx::PgTx;

pub struct PgStore {
    pool: Pool,
    /// `user@host:port/db`, for messages: never the password.
    name: String,
    failpoints: Failpoints,
    /// The store's own runtime, where the pool's connections are made and driven.
    runtime: Option<tokio::runtime::Runtime>,
    /// Idle connections of writers (see [`WriterConnection`]).
    writers: std::sync::Mutex<Vec<WriterConnection>>,
    /// The pool's settings, and lease changes committed without waiting for
    /// the log's flush (boxed: it is large).
    writer_config: Box<tokio_postgres::Config>,
    /// TLS when the database offers it (or `sslmode=require` asks for it),
    /// its certificate checked as a server's: the system's roots plus
    /// `LEASEDESK_CA_CERT`.
    tls: MakeRustlsConnect,
    announcements: Arc<Announcements>,
    /// How far the ledger is durable.
    durable: Arc<DurableLedger>,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // A command's last commits may still be owed their notice.
        self.announce_what_is_owed();
        // Dropping a runtime waits for its tasks, which is refused inside
        // another runtime; its sockets need no goodbye.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Waits for `f` here. The futures of queries only exchange messages with the
/// connection's task on the store's runtime, so any thread may wait for them.
fn wait<F: Future>(f: F) -> F::Output {
    // Unconstrained: called inside a task, tokio's resources would otherwise
    // count this wait against the task's budget and, once it is spent,
    // answer "not yet" for ever (the budget is reset only between polls).
    futures_executor::block_on(tokio::task::unconstrained(f))
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://USER@HOST:PORT/DB`) and
    /// brings its schema up to date. `changed` is woken whenever any server
    /// commits events, so followers of the ledger on this one hear of them.
    pub fn open(
        url: &str,
        failpoints: Failpoints,
        changed: Arc<tokio::sync::Notify>,
    ) -> Result<Self> {
        let (config, writer_config) = connect::settings(url)?;
        let name = connect::display_name(&config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("store-postgres")
            .enable_all()
            .build()?;
        let tls = MakeRustlsConnect::new(crate::trust::database_config(
            &crate::trust::Trust::from_env(),
        )?);
        let pool = connect::pool(&config, &tls, &runtime)?;
        let announcements = Arc::new(Announcements::new());
        runtime.spawn(notices::listen(
            connect::listener_settings(&config),
            tls.clone(),
            changed,
            announcements.origin.clone(),
            name.clone(),
        ));
        runtime.spawn(notices::announce(
            writer_config.clone(),
            tls.clone(),
            announcements.clone(),
            name.clone(),
        ));
        let durable = Arc::<DurableLedger>::default();
        runtime.spawn(durable::track(
            config,
            tls.clone(),
            durable.clone(),
            name.clone(),
        ));
        let store = Self {
            pool,
            name,
            failpoints,
            runtime: Some(runtime),
            writers: Default::default(),
            writer_config: Box::new(writer_config),
            tls,
            announcements,
            durable,
        };
        store.migrate()?;
        Ok(store)
    }

    /// The last seq through which every event is durable, and (unless the
    /// database is too slow to flush within `timeout`) at least every event
    /// committed before the call: the most a reader may be given.
    pub fn durable_events(&self, timeout: Duration) -> Result<u64> {
        let committed = self.read(|tx| tx.last_event_seq())?;
        Ok(self.durable.wait_for(committed, timeout))
    }

    /// Runs `f` on one consistent snapshot (repeatable read). Writes nothing.
    pub fn read<T>(&self, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        let client = self.connection()?;
        let conn = Conn::Pooled(&client);
        let mut open = OpenTx::begin(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        let tx = PgTx::new(conn, false, false, None);
        let value = f(&tx).map_err(|e| self.named(e))?;
        open.finish("COMMIT").map_err(|e| self.named(e))?;
        Ok(value)
    }

    /// A lost or refused connection's error, naming the database.
    fn named(&self, e: Error) -> Error {
        match e {
            Error::Unavailable(why) if !why.contains(&self.name) => {
                Error::Unavailable(format!("{} ({})", why, self.name))
            }
            other => other,
        }
    }
}

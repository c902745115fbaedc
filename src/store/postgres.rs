//! The PostgreSQL store of a team's servers: any number of `leasedesk serve`
//! processes on one database behave as one.
//!
//! The rules are synchronous functions over [`Transaction`], so each call here
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
//!   its row (an UPDATE of `touched_at`, in its own statement, so what is read
//!   next is read after the lock) and holds it until commit. Check-outs,
//!   edits and proposals are reached through their artifact's lock. So writes
//!   on different files never wait for each other, and writes on one file
//!   run one after the other, each seeing what the last committed.
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

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::DateTime;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::*;
use crate::clock::Clock;

mod durable;
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use durable::DurableLedger;

/// Numbered migrations; `leasedesk_schema` keeps how many were applied.
const MIGRATIONS: &[&str] = &[
    include_str!("pg_migrations/0001_schema.sql"),
    include_str!("pg_migrations/0002_touched_at.sql"),
    include_str!("pg_migrations/0003_wal_flush.sql"),
];

/// How long opening a connection may take before the database counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a caller waits for a free connection of the pool.
const POOL_WAIT: Duration = Duration::from_secs(10);
/// No statement runs longer: a stuck one must not hold a lock for ever.
const STATEMENT_TIMEOUT_MS: u64 = 30_000;
/// Pooled connections per server: reads, and writes called from inside async code.
const POOL_SIZE: usize = 16;
/// Idle writers' connections kept (a server runs one write transaction at a
/// time, a group commit; direct calls such as `user add` may add one).
const IDLE_WRITERS: usize = 2;
/// How often a write is run again after meeting another (see the module's comment).
const MAX_ATTEMPTS: usize = 16;
/// Held by a write while it looks for paths that would collide (imports, renames).
const PATHS_LOCK: i64 = 0x6c65_6173_6570_6174;
/// The channel on which commits that wrote events wake every server's followers.
const CHANNEL: &str = "leasedesk_events";
/// At most one notice on [`CHANNEL`] from a server in this time: commits
/// within it are announced together at its end.
const ANNOUNCE_WINDOW: Duration = Duration::from_millis(25);
/// Held while migrating, so servers starting together migrate once.
const MIGRATION_LOCK: i64 = 0x6c65_6173_6564_736b;

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
        if self.announcements.owed.load(Ordering::Acquire) {
            let sql = &self.announcements.sql;
            if let Err(e) = self
                .connection()
                .and_then(|c| Ok(wait(c.batch_execute(sql))?))
            {
                tracing::warn!("could not announce the last changes on {}: {e}", self.name);
            }
        }
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

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        if e.is_closed() {
            return Error::Unavailable(format!("the database connection was lost: {e}"));
        }
        match e.as_db_error() {
            // Connection exceptions, and the database shutting down or starting.
            Some(db) if ["08", "57"].contains(&&db.code().code()[..2]) => Error::Unavailable(
                format!("the database connection was lost: {}", db.message()),
            ),
            Some(db) => {
                Error::Internal(format!("database: {}: {}", db.code().code(), db.message()))
            }
            None => Error::Unavailable(format!("the database cannot be reached: {e}")),
        }
    }
}

/// An error and what caused it ("error performing TLS handshake: invalid
/// peer certificate: UnknownIssuer").
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text = format!("{text}: {e}");
        cause = e.source();
    }
    text
}

/// `postgres://user@host:port/db` of a connection string `url`, to show:
/// never its password. `None` when it is not one.
pub fn public_name(url: &str) -> Option<String> {
    url.parse().ok().map(|config| display_name(&config))
}

/// `postgres://user@host:port/db` of a connection string, for messages.
fn display_name(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|host| match host {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
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
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            Error::Invalid(format!(
                "--database: not a PostgreSQL URL (postgres://USER@HOST:PORT/DB): {e}"
            ))
        })?;
        config
            .connect_timeout(CONNECT_TIMEOUT)
            .application_name("leasedesk")
            // Our statements look rows up by key: a generic plan serves every
            // call, where a custom plan would be made anew each time.
            .options(format!(
                "-c statement_timeout={STATEMENT_TIMEOUT_MS} -c plan_cache_mode=force_generic_plan"
            ));
        let mut writer_config = config.clone();
        writer_config.options(format!(
            "-c statement_timeout={STATEMENT_TIMEOUT_MS} -c plan_cache_mode=force_generic_plan \
             -c synchronous_commit=off"
        ));
        let name = display_name(&config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("store-postgres")
            .enable_all()
            .build()?;
        let tls = MakeRustlsConnect::new(crate::remote::trust::database_config(
            &crate::remote::Trust::from_env(),
        )?);
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = {
            let _entered = runtime.enter();
            Pool::builder(manager)
                .max_size(POOL_SIZE)
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .wait_timeout(Some(POOL_WAIT))
                .create_timeout(Some(CONNECT_TIMEOUT))
                .recycle_timeout(Some(CONNECT_TIMEOUT))
                .build()
                .map_err(|e| Error::Internal(format!("database pool: {e}")))?
        };
        let announcements = Arc::new(Announcements::new());
        // A listener's connection is silent: TCP keep-alives find it dead
        // when the database's machine or the network went away without a word.
        let mut listener_config = config.clone();
        listener_config
            .keepalives_idle(Duration::from_secs(10))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3);
        runtime.spawn(listen(
            listener_config,
            tls.clone(),
            changed,
            announcements.origin.clone(),
            name.clone(),
        ));
        runtime.spawn(announce(
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

    /// A connection of the pool, or a clear error naming the database.
    fn connection(&self) -> Result<deadpool_postgres::Object> {
        let runtime = self.runtime.as_ref().expect("a runtime until dropped");
        // In the store's runtime, which makes new connections and keeps the
        // timers; waited for here, so an idle connection costs no hand-over.
        let _entered = runtime.enter();
        wait(self.pool.get()).map_err(|e| {
            let why = match e {
                deadpool_postgres::PoolError::Backend(e) => with_causes(&e),
                deadpool_postgres::PoolError::Timeout(_) => {
                    "no answer within the time allowed".to_string()
                }
                other => other.to_string(),
            };
            self.unreachable(why)
        })
    }

    /// Why the database cannot be reached, with what to do when its
    /// certificate was not trusted.
    fn unreachable(&self, why: String) -> Error {
        let hint = match why.contains("TLS handshake") {
            true => {
                "; if the database's certificate is your studio's own, set LEASEDESK_CA_CERT \
                 to the PEM file of the CA that signed it"
            }
            false => "",
        };
        Error::Unavailable(format!(
            "the database {} cannot be reached: {why}{hint}",
            self.name
        ))
    }

    fn migrate(&self) -> Result<()> {
        let mut client = self.connection()?;
        let tx = wait(client.transaction())?;
        wait(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))?;
        wait(tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS leasedesk_schema (version INTEGER NOT NULL);
             INSERT INTO leasedesk_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM leasedesk_schema);",
        ))?;
        let applied: i32 = wait(tx.query_one("SELECT version FROM leasedesk_schema", &[]))?.get(0);
        let applied = applied as usize;
        if applied > MIGRATIONS.len() {
            return Err(Error::Internal(format!(
                "the database's schema (version {applied}) is newer than this program knows ({}): upgrade Leasedesk",
                MIGRATIONS.len()
            )));
        }
        for sql in &MIGRATIONS[applied..] {
            wait(tx.batch_execute(sql))?;
        }
        let version = MIGRATIONS.len() as i32;
        wait(tx.execute("UPDATE leasedesk_schema SET version = $1", &[&version]))?;
        wait(tx.commit())?;
        Ok(())
    }

    /// Runs `f` in one write transaction, beside other writes of this and
    /// every other server (see the module's comment). `f`'s error rolls
    /// everything back; `f` runs again if the attempt met another write.
    ///
    /// Durability: a lease change commits without waiting for the database's
    /// log flush (`synchronous_commit = off`: a crash of the database may undo
    /// the last few, as power loss may on SQLite); a transaction that wrote a
    /// version or a proposal ([`Transaction::require_durable`]) waits for it.
    pub fn write<T>(
        &self,
        durability: Durability,
        mut f: impl FnMut(&Tx) -> Result<T>,
    ) -> Result<T> {
        // A writer's own connection where this thread may wait on a runtime
        // of its own; else (a caller inside async code) one of the pool.
        let (writer, pooled) = match super::may_block_here() {
            true => (Some(self.writer()?), None),
            false => (None, Some(self.connection()?)),
        };
        let conn = match (&writer, &pooled) {
            (Some(writer), _) => Conn::Writer(writer),
            (_, Some(pooled)) => Conn::Pooled(pooled),
            _ => unreachable!("one connection or the other"),
        };
        // Artifacts the earlier attempts touched: locked first, before the
        // time is read, so a file touched meanwhile cannot make it run again.
        let mut touched = std::collections::BTreeSet::new();
        let mut careful = false;
        let mut attempt = 1;
        let outcome = loop {
            match self.write_once(conn, durability, &touched, careful, &mut f) {
                Err(Attempt::Again(again)) if attempt < MAX_ATTEMPTS => {
                    tracing::debug!("a write runs again (attempt {attempt}): {}", again.why);
                    touched.extend(again.touched);
                    careful |= again.careful;
                    attempt += 1;
                }
                Err(Attempt::Again(Again { why: e, .. }) | Attempt::Failed(e)) => break Err(e),
                Ok(value) => break Ok(value),
            }
        };
        if let Some(writer) = writer {
            self.give_back(writer);
        }
        outcome.map_err(|e| self.named(e))
    }

    /// An idle writer's connection, or a new one.
    fn writer(&self) -> Result<WriterConnection> {
        loop {
            let idle = self.writers.lock().unwrap_or_else(|p| p.into_inner()).pop();
            // Its connection is driven only while waited on: a moment's
            // turn shows whether it was closed while idle.
            if let Some(writer) = &idle {
                writer.runtime().block_on(tokio::task::yield_now());
            }
            match idle {
                Some(writer) if !writer.client.is_closed() => return Ok(writer),
                Some(_broken) => continue,
                None => break,
            }
        }
        WriterConnection::open(&self.writer_config, &self.tls).map_err(|why| self.unreachable(why))
    }

    fn give_back(&self, writer: WriterConnection) {
        let mut idle = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        if !writer.client.is_closed() && idle.len() < IDLE_WRITERS {
            idle.push(writer);
        }
    }

    /// One attempt at a write. `careful`: each writer of a group commit
    /// learns its queued writes' outcome before the next begins (after an
    /// attempt where one failed, so that failure is its writer's alone).
    fn write_once<T>(
        &self,
        conn: Conn,
        durability: Durability,
        prelock: &std::collections::BTreeSet<ArtifactId>,
        careful: bool,
        f: &mut impl FnMut(&Tx) -> Result<T>,
    ) -> std::result::Result<T, Attempt> {
        let client = conn.client();
        let failed = |e: tokio_postgres::Error| match met_another_write(&e) {
            true => Attempt::Again(Again {
                why: e.into(),
                touched: Vec::new(),
                careful: false,
            }),
            false => Attempt::Failed(e.into()),
        };
        // Begun, `prelock` locked (in id order: no deadlock between two such
        // writes), and the time read after, in one round trip. Lease changes
        // commit without waiting for the log's flush (`synchronous_commit =
        // off`: a writer's connection is opened so).
        let mut open = OpenTx::armed(conn);
        let ids: Vec<String> = prelock.iter().map(ToString::to_string).collect();
        let (clock, lock) = conn.wait(futures_util::future::join(
            conn.prepare("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint"),
            conn.prepare(
                "SELECT id FROM artifacts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE",
            ),
        ));
        let (clock, lock) = (clock.map_err(failed)?, lock.map_err(failed)?);
        let begin = match conn {
            Conn::Writer(_) => "BEGIN",
            Conn::Pooled(_) => "BEGIN; SET LOCAL synchronous_commit = off",
        };
        let (begun, locked, row) = conn.wait(futures_util::future::join3(
            client.batch_execute(begin),
            async {
                match ids.is_empty() {
                    true => Ok(()),
                    false => client.query(&lock, &[&ids]).await.map(drop),
                }
            },
            client.query_one(&clock, &[]),
        ));
        begun.map_err(failed)?;
        locked.map_err(failed)?;
        let now = row
            .map_err(failed)
            .and_then(|row| time(row.get(0)).map_err(Attempt::Failed))?;
        let tx = PgTx::new(conn, true, durability == Durability::Full, Some(now));
        tx.careful.set(careful);
        let outcome = f(&tx);
        if tx.again.borrow().is_some() {
            return Err(tx.attempt(Error::Internal("a write to run again".into())));
        }
        let value = outcome.map_err(|e| tx.attempt(e))?;
        let events = std::mem::take(&mut *tx.events.borrow_mut());
        let announce = !events.is_empty();
        let carried = announce && self.announcements.carry();
        let mut commit = String::new();
        if carried {
            commit += &self.announcements.sql;
            commit += "; ";
        }
        if tx.durable.get() {
            tx.flush().map_err(|e| tx.attempt(e))?;
            commit += "SET LOCAL synchronous_commit = on; ";
            self.failpoints
                .hit(failpoint::at::BEFORE_DURABLE_COMMIT)
                .map_err(Attempt::Failed)?;
        }
        commit += "COMMIT";
        // The events are numbered under the ledger's lock, taken last and in
        // the COMMIT's round trip. A COMMIT after a failed statement rolls
        // back without an error, so the queued writes' and the events'
        // outcome is checked first, in the same round trip. After a failed
        // NOTIFY of the same string, COMMIT is not run at all: a failed
        // commit is rolled back as `open` drops, so the connection is left
        // outside any transaction for the next attempt.
        tx.commit_with_events(events, &commit)
            .map_err(|e| tx.attempt(e))?;
        open.disarm();
        if announce && !carried {
            self.announcements.owe();
        }
        if tx.durable.get() {
            self.failpoints
                .hit(failpoint::at::AFTER_DURABLE_COMMIT)
                .map_err(Attempt::Failed)?;
        }
        Ok(value)
    }

    /// The last seq through which every event is durable, and (unless the
    /// database is too slow to flush within `timeout`) at least every event
    /// committed before the call: the most a reader may be given.
    pub fn durable_events(&self, timeout: Duration) -> Result<u64> {
        let committed = self.read(|tx| tx.last_event_seq())?;
        Ok(self.durable.wait_for(committed, timeout))
    }

    /// Runs `f` on one consistent snapshot (repeatable read). Writes nothing.
    pub fn read<T>(&self, f: impl FnOnce(&Tx) -> Result<T>) -> Result<T> {
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

impl PgStore {
    /// Runs `f` in one write transaction that holds the ledger's lock, with
    /// a [`Loader`] for rows copied from elsewhere (`leasedesk migrate`).
    pub(super) fn load<T>(&self, f: impl FnOnce(&Loader) -> Result<T>) -> Result<T> {
        let client = self.connection()?;
        let mut open = OpenTx::begin(Conn::Pooled(&client), "BEGIN")?;
        wait(client.batch_execute("SELECT last_seq FROM ledger FOR UPDATE"))?;
        let value = f(&Loader {
            client: &client,
            failpoints: &self.failpoints,
        })?;
        open.finish("COMMIT")?;
        Ok(value)
    }
}

/// Writes rows as they were elsewhere, inside [`PgStore::load`]'s transaction.
pub(super) struct Loader<'a> {
    client: &'a deadpool_postgres::Object,
    pub(super) failpoints: &'a Failpoints,
}

impl Loader<'_> {
    pub(super) fn count(&self, table: &str) -> Result<i64> {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        Ok(wait(self.client.query_one(&sql, &[]))?.try_get(0)?)
    }

    pub(super) fn insert(
        &self,
        table: &str,
        columns: &[(&str, copy::Kind)],
        row: &[copy::Field],
    ) -> Result<()> {
        let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
        let places: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            names.join(", "),
            places.join(", ")
        );
        let params: Vec<&(dyn ToSql + Sync)> = row
            .iter()
            .map(|field| match field {
                copy::Field::Int(n) => n as &(dyn ToSql + Sync),
                copy::Field::Text(t) => t as &(dyn ToSql + Sync),
                copy::Field::Bool(b) => b as &(dyn ToSql + Sync),
            })
            .collect();
        wait(async {
            let statement = self.client.prepare_cached(&sql).await?;
            self.client.execute(&statement, &params).await
        })?;
        Ok(())
    }

    pub(super) fn set_last_seq(&self, seq: i64) -> Result<()> {
        wait(
            self.client
                .execute("UPDATE ledger SET last_seq = $1", &[&seq]),
        )?;
        Ok(())
    }
}

/// A connection a transaction runs on, and how to wait for its answers.
#[derive(Clone, Copy)]
enum Conn<'a> {
    /// The pool's (reads, and writes called from inside async code): driven
    /// by the store's runtime.
    Pooled(&'a deadpool_postgres::Object),
    /// A writer's own (see [`WriterConnection`]).
    Writer(&'a WriterConnection),
}

impl<'a> Conn<'a> {
    fn client(self) -> &'a tokio_postgres::Client {
        match self {
            Conn::Pooled(object) => object,
            Conn::Writer(writer) => &writer.client,
        }
    }

    /// Waits here for `f` (see [`wait`] and [`WriterConnection`]).
    fn wait<F: Future>(self, f: F) -> F::Output {
        match self {
            Conn::Pooled(_) => wait(f),
            Conn::Writer(writer) => writer.runtime().block_on(f),
        }
    }

    /// `sql` prepared, once per connection.
    async fn prepare(
        self,
        sql: &str,
    ) -> std::result::Result<tokio_postgres::Statement, tokio_postgres::Error> {
        match self {
            Conn::Pooled(object) => object.prepare_cached(sql).await,
            Conn::Writer(writer) => {
                if let Some(statement) = writer.statements.borrow().get(sql) {
                    return Ok(statement.clone());
                }
                let statement = writer.client.prepare(sql).await?;
                writer
                    .statements
                    .borrow_mut()
                    .insert(sql.to_owned(), statement.clone());
                Ok(statement)
            }
        }
    }
}

/// A connection kept for write transactions, with a single-threaded
/// runtime of its own that owns its socket. Whichever thread runs a write
/// drives it there while it waits (`block_on`), so a round trip is the
/// database's answer and nothing more: no hand-over to another thread and
/// back, as a pooled connection driven by the store's runtime needs.
struct WriterConnection {
    runtime: Option<tokio::runtime::Runtime>,
    client: tokio_postgres::Client,
    statements: RefCell<std::collections::HashMap<String, tokio_postgres::Statement>>,
}

impl WriterConnection {
    fn open(
        config: &tokio_postgres::Config,
        tls: &MakeRustlsConnect,
    ) -> std::result::Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let (client, connection) = runtime
            .block_on(async {
                tokio::time::timeout(CONNECT_TIMEOUT, config.connect(tls.clone())).await
            })
            .map_err(|_| "no answer within the time allowed".to_string())?
            .map_err(|e| with_causes(&e))?;
        // Runs whenever a writer waits on this runtime.
        runtime.spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("a writer's database connection ended: {e}");
            }
        });
        Ok(Self {
            runtime: Some(runtime),
            client,
            statements: Default::default(),
        })
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime.as_ref().expect("a runtime until dropped")
    }
}

impl Drop for WriterConnection {
    fn drop(&mut self) {
        // May be dropped inside another runtime, where a runtime cannot wait.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A transaction begun on a connection: unless finished, it is rolled back
/// when dropped, and a connection that cannot roll back is not used again.
struct OpenTx<'a> {
    conn: Conn<'a>,
    open: bool,
}

impl<'a> OpenTx<'a> {
    fn begin(conn: Conn<'a>, sql: &str) -> Result<Self> {
        let open = Self::armed(conn);
        conn.wait(conn.client().batch_execute(sql))?;
        Ok(open)
    }

    /// Rolls back when dropped, from now on: for a BEGIN sent with what follows it.
    fn armed(conn: Conn<'a>) -> Self {
        Self { conn, open: true }
    }

    /// The transaction has ended (its COMMIT answered): no rollback when dropped.
    fn disarm(&mut self) {
        self.open = false;
    }

    fn finish(&mut self, sql: &str) -> Result<()> {
        self.open = false;
        self.conn.wait(self.conn.client().batch_execute(sql))?;
        Ok(())
    }
}

impl Drop for OpenTx<'_> {
    fn drop(&mut self) {
        let conn = self.conn;
        if self.open && conn.wait(conn.client().batch_execute("ROLLBACK")).is_err() {
            // Broken: the next check (`is_closed`) drops it.
            tracing::warn!("a database connection could not roll back");
        }
    }
}

/// The notices of this store's commits. Each notice wakes every server's
/// listener, and PostgreSQL signals each listening backend: one a commit
/// cost a fifth of PostgreSQL's lease rate (measured with pgbench, two
/// listeners). So a commit carries its `NOTIFY` only when none went out in
/// the last [`ANNOUNCE_WINDOW`]; otherwise, once committed, it is owed one,
/// which [`announce`] sends at the window's end for all such commits.
struct Announcements {
    /// `NOTIFY leasedesk_events, 'ORIGIN'`.
    sql: String,
    /// This store's notices carry it, and its own listener skips them: its
    /// own followers are woken in-process.
    origin: String,
    /// When the last notice went out (or was carried by a commit).
    last: std::sync::Mutex<Option<Instant>>,
    /// A commit went unannounced.
    owed: AtomicBool,
    wake: tokio::sync::Notify,
}

impl Announcements {
    fn new() -> Self {
        let origin = uuid::Uuid::new_v4().to_string();
        Self {
            sql: format!("NOTIFY {CHANNEL}, '{origin}'"),
            origin,
            last: Default::default(),
            owed: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
        }
    }

    /// Takes the notice's turn if the window since the last one is over;
    /// else answers when it will be.
    fn take_turn(&self) -> std::result::Result<(), Instant> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match *last {
            Some(at) if now < at + ANNOUNCE_WINDOW => Err(at + ANNOUNCE_WINDOW),
            _ => {
                *last = Some(now);
                Ok(())
            }
        }
    }

    /// Whether a commit about to be sent carries the notice itself.
    fn carry(&self) -> bool {
        self.take_turn().is_ok()
    }

    /// After a commit that did not carry its notice (only once committed: a
    /// notice sent before would wake followers to read too early).
    fn owe(&self) {
        self.owed.store(true, Ordering::Release);
        self.wake.notify_one();
    }
}

/// Sends the notices owed (see [`Announcements`]) on a connection of its own.
async fn announce(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    announcements: Arc<Announcements>,
    name: String,
) {
    let mut client: Option<tokio_postgres::Client> = None;
    loop {
        announcements.wake.notified().await;
        while let Err(turn) = announcements.take_turn() {
            tokio::time::sleep_until(turn.into()).await;
        }
        if !announcements.owed.swap(false, Ordering::AcqRel) {
            continue;
        }
        let sent = match &client {
            Some(c) if !c.is_closed() => c.batch_execute(&announcements.sql).await,
            _ => match config.connect(tls.clone()).await {
                Ok((c, connection)) => {
                    tokio::spawn(connection);
                    client.insert(c).batch_execute(&announcements.sql).await
                }
                Err(e) => Err(e),
            },
        };
        if let Err(e) = sent {
            tracing::warn!("cannot announce changes on {name}: {e}");
            client = None;
            tokio::time::sleep(Duration::from_secs(1)).await;
            announcements.owe();
        }
    }
}

/// Wakes `changed` on every notice of new events from another store (any
/// server's but this one's), listening on a connection of its own, made
/// again (after a pause) when it is lost. Each (re)connection wakes too: a
/// follower then reads what it may have missed.
async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    changed: Arc<tokio::sync::Notify>,
    origin: String,
    name: String,
) {
    loop {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                let subscribe = format!("LISTEN {CHANNEL}");
                let listening = client.batch_execute(&subscribe);
                tokio::pin!(listening);
                let mut subscribed = false;
                loop {
                    tokio::select! {
                        done = &mut listening, if !subscribed => {
                            if let Err(e) = done {
                                tracing::warn!("cannot listen for changes on {name}: {e}");
                                break;
                            }
                            subscribed = true;
                            changed.notify_waiters();
                        }
                        message = messages.next() => match message {
                            Some(Ok(tokio_postgres::AsyncMessage::Notification(notice))) => {
                                if notice.payload() != origin {
                                    changed.notify_waiters()
                                }
                            }
                            Some(Ok(_)) => {}
                            Some(Err(e)) => {
                                tracing::warn!("lost the change notices of {name}: {e}");
                                break;
                            }
                            None => break,
                        }
                    }
                }
            }
            Err(e) => tracing::warn!("cannot listen for changes on {name}: {e}"),
        }
        changed.notify_waiters();
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// How one attempt at a write ended, when not with its value.
enum Attempt {
    /// It met another write (a deadlock, a key taken meanwhile, a file
    /// touched at a later time), or a queued write failed: run it again.
    Again(Again),
    Failed(Error),
}

struct Again {
    why: Error,
    /// The artifacts it locked, to lock first next time.
    touched: Vec<ArtifactId>,
    /// A queued write failed: next time each writer learns its own outcome.
    careful: bool,
}

/// One transaction on the PostgreSQL store.
pub struct PgTx<'a> {
    conn: Conn<'a>,
    /// A write (locks what it reads), not a read of a snapshot.
    write: bool,
    durable: Cell<bool>,
    /// The database's time: read as a write begins, on first use in a read.
    now: Cell<Option<Timestamp>>,
    /// The time the rules were given (a manual clock's, in tests), which
    /// `touched_at` keeps.
    rules_now: Cell<Option<Timestamp>>,
    /// Writes whose answer nobody needs at once, not yet sent (see [`PgTx::defer`]).
    deferred: RefCell<Vec<Deferred<'a>>>,
    /// Events to number and insert at commit (see the module's comment).
    events: RefCell<Vec<PendingEvent>>,
    /// What this write holds locked, restored when a savepoint rolls back.
    held: RefCell<Held>,
    /// Why this attempt must run again, once it is known.
    again: RefCell<Option<Error>>,
    /// An artifact read ahead under its lock (see [`PgTx::locked_query`]),
    /// good until this transaction writes anything.
    prefetched: RefCell<Option<(ArtifactId, Row)>>,
    /// Whether each writer of a group learns its queued writes' outcome
    /// before the next writer begins (see [`PgStore::write_once`]).
    careful: Cell<bool>,
    /// A queued write failed, where its writer could not be told apart.
    queued_failed: Cell<bool>,
}

#[derive(Clone, Default)]
struct Held {
    /// Artifacts whose row is locked, with their lease epoch when read.
    artifacts: std::collections::HashMap<ArtifactId, Option<u64>>,
    paths: bool,
}

/// An event as inserted at commit, numbered then.
struct PendingEvent {
    id: String,
    kind: String,
    artifact_id: Option<String>,
    participant: Option<String>,
    holder: Option<String>,
    at: i64,
    data: String,
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// A parameter a deferred write owns until it is sent.
type Owned = Box<dyn ToSql + Sync + Send>;

type Deferred<'a> =
    std::pin::Pin<Box<dyn Future<Output = std::result::Result<(), tokio_postgres::Error>> + 'a>>;

/// Owned parameters for [`PgTx::defer`].
macro_rules! owned {
    ($($value:expr),* $(,)?) => {
        vec![$(Box::new($value) as Owned),*]
    };
}

/// Locks an artifact's row for the rest of a write: `$1` names the artifact
/// (see [`PgTx::locked_query`]), `$2` is the write's time.
macro_rules! lock_artifact {
    ($id:literal) => {
        concat!(
            "UPDATE artifacts SET touched_at = GREATEST(touched_at, $2) WHERE id = ",
            $id,
            " RETURNING id, touched_at"
        )
    };
}
const LOCK_ARTIFACT: &str = lock_artifact!("$1");
const LOCK_BY_CHECKOUT: &str = lock_artifact!("(SELECT artifact_id FROM checkouts WHERE id = $1)");
const LOCK_BY_EDIT: &str = lock_artifact!("(SELECT artifact_id FROM edits WHERE id = $1)");
const LOCK_BY_PROPOSAL: &str = lock_artifact!("(SELECT artifact_id FROM proposals WHERE id = $1)");

/// The commit's events, numbered from the ledger's row (locked just before,
/// so this statement sees every event committed before it). A contention
/// already recorded is left out: its id is its contender and holder lease.
const INSERT_EVENTS: &str = "WITH new AS (
         SELECT e.*, row_number() OVER (ORDER BY e.ord) AS n
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])
             WITH ORDINALITY AS e (id, type, artifact_id, participant, holder, at, data, ord)
         WHERE e.type <> 'lease.contended' OR NOT EXISTS (
             SELECT 1 FROM events x WHERE x.type = 'lease.contended' AND x.id = e.id)
     ), added AS (
         INSERT INTO events (seq, id, type, artifact_id, participant, holder, at, data)
         SELECT l.last_seq + new.n, new.id, new.type, new.artifact_id, new.participant,
             new.holder, new.at, new.data
         FROM new, ledger l
         RETURNING 1
     )
     UPDATE ledger SET last_seq = last_seq + (SELECT count(*) FROM added)";

/// SQLSTATEs that mean a concurrent write got there first: deadlock_detected,
/// serialization_failure, unique_violation.
fn met_another_write(e: &tokio_postgres::Error) -> bool {
    e.as_db_error()
        .is_some_and(|db| matches!(db.code().code(), "40P01" | "40001" | "23505"))
}

impl<'a> PgTx<'a> {
    fn new(conn: Conn<'a>, write: bool, durable: bool, now: Option<Timestamp>) -> Self {
        Self {
            conn,
            write,
            durable: Cell::new(durable),
            now: Cell::new(now),
            rules_now: Cell::new(None),
            deferred: Default::default(),
            events: Default::default(),
            held: Default::default(),
            again: Default::default(),
            prefetched: Default::default(),
            careful: Cell::new(true),
            queued_failed: Cell::new(false),
        }
    }

    /// A statement's failure, noting when it means this attempt must run again.
    fn failure(&self, e: tokio_postgres::Error) -> Error {
        let again = self.write && met_another_write(&e);
        let error = Error::from(e);
        if again {
            self.again.borrow_mut().get_or_insert_with(|| error.clone());
        }
        error
    }

    /// What an error ends in: another attempt, if this one met another write.
    fn attempt(&self, e: Error) -> Attempt {
        match self.again.take() {
            Some(why) => Attempt::Again(Again {
                why,
                touched: self.touched(),
                careful: self.queued_failed.get(),
            }),
            None => Attempt::Failed(e),
        }
    }

    /// The artifacts whose rows this write locked.
    fn touched(&self) -> Vec<ArtifactId> {
        self.held.borrow().artifacts.keys().copied().collect()
    }

    /// Queues a write whose answer is only whether it failed. Queued writes
    /// go out in order with the next statement that needs an answer (or the
    /// commit), in one round trip: PostgreSQL runs a connection's statements
    /// in the order they arrive, so later reads see them, and the first
    /// failure among them is that statement's failure.
    fn defer(&self, sql: &str, params: Vec<Owned>) -> Result<()> {
        // A write: what was read ahead may be stale.
        self.prefetched.take();
        // Prepared now (once per connection), so the queue's order is the order sent.
        let statement = self.conn.wait(self.conn.prepare(sql))?;
        let client = self.conn.client();
        self.deferred.borrow_mut().push(Box::pin(async move {
            let params: Vec<&(dyn ToSql + Sync)> = params
                .iter()
                .map(|p| p.as_ref() as &(dyn ToSql + Sync))
                .collect();
            client.execute(&statement, &params).await.map(drop)
        }));
        Ok(())
    }

    /// Queues a statement of the simple protocol (a savepoint's).
    fn defer_simple(&self, sql: &'static str) {
        self.prefetched.take();
        let client = self.conn.client();
        self.deferred
            .borrow_mut()
            .push(Box::pin(async move { client.batch_execute(sql).await }));
    }

    /// Sends the queued writes and then `next`, together, and waits for all:
    /// the queued writes' first failure, or else `next`'s answer.
    fn after_deferred<T>(
        &self,
        next: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        let queued = std::mem::take(&mut *self.deferred.borrow_mut());
        if queued.is_empty() {
            return self.conn.wait(next).map_err(|e| self.failure(e));
        }
        let (sent, answer) = self.conn.wait(futures_util::future::join(
            futures_util::future::join_all(queued),
            next,
        ));
        if let Err(e) = sent
            .into_iter()
            .collect::<std::result::Result<Vec<()>, _>>()
        {
            let error = self.failure(e);
            if self.write && !self.careful.get() {
                // Perhaps an earlier writer's of a group: run again, carefully.
                self.queued_failed.set(true);
                self.again.borrow_mut().get_or_insert_with(|| error.clone());
            }
            return Err(error);
        }
        answer.map_err(|e| self.failure(e))
    }

    /// In a write, locks the artifact that `lock` names by `key` (one of
    /// the `LOCK_*` statements) unless it is held already, then runs the
    /// query `sql`, in one round trip: the query's snapshot is taken after the
    /// lock, so it sees what the lock's last holder committed. A read runs
    /// `sql` alone.
    ///
    /// `prefetch`, a query of the artifact by `key` ([`artifact_select`]), runs
    /// too, in the same round trip: the rules read the artifact of a
    /// check-out or edit next, and [`Transaction::artifact`] then finds it.
    fn locked_query(
        &self,
        lock: &str,
        key: &str,
        artifact: Option<ArtifactId>,
        sql: &str,
        params: Params,
        prefetch: Option<&str>,
    ) -> Result<Vec<Row>> {
        let held = artifact.is_some_and(|id| self.held.borrow().artifacts.contains_key(&id));
        if !self.write || held {
            return self.query(sql, params);
        }
        let now = millis(
            self.rules_now
                .get()
                .or(self.now.get())
                .ok_or_else(|| Error::Internal("a write without a time".into()))?,
        );
        // All prepared first, so they go out in this order.
        let (lock, read, also) = self.conn.wait(futures_util::future::join3(
            self.conn.prepare(lock),
            self.conn.prepare(sql),
            async {
                match prefetch {
                    Some(sql) => self.conn.prepare(sql).await.map(Some),
                    None => Ok(None),
                }
            },
        ));
        let (lock, read, also) = (
            lock.map_err(|e| self.failure(e))?,
            read.map_err(|e| self.failure(e))?,
            also.map_err(|e| self.failure(e))?,
        );
        let (locked, rows, prefetched) = self.after_deferred(async {
            let (locked, rows, prefetched) = futures_util::future::join3(
                self.conn.client().query(&lock, &[&key, &now]),
                self.conn.client().query(&read, params),
                async {
                    match &also {
                        Some(also) => self.conn.client().query(also, &[&key]).await,
                        None => Ok(Vec::new()),
                    }
                },
            )
            .await;
            Ok((locked?, rows?, prefetched?))
        })?;
        if let Some(row) = prefetched.into_iter().next() {
            *self.prefetched.borrow_mut() = Some((parsed(&row, 0)?, row));
        }
        for row in &locked {
            let id: ArtifactId = parsed(row, 0)?;
            let touched: i64 = row.try_get(1)?;
            self.held.borrow_mut().artifacts.entry(id).or_insert(None);
            if touched > now {
                let again = Error::Unavailable(format!(
                    "artifact {id} changed at a later time than this write's"
                ));
                *self.again.borrow_mut() = Some(again.clone());
                return Err(again);
            }
        }
        Ok(rows)
    }

    /// In a write, takes the lock for looking at paths (see the module's
    /// comment) before the first such look.
    fn lock_paths(&self) -> Result<()> {
        if !self.write || self.held.borrow().paths {
            return Ok(());
        }
        self.defer("SELECT pg_advisory_xact_lock($1)", owned![PATHS_LOCK])?;
        self.held.borrow_mut().paths = true;
        Ok(())
    }

    /// Sends the queued writes, numbers and inserts `events` under the
    /// ledger's lock, and runs `commit` (ending in COMMIT), in one round trip.
    fn commit_with_events(&self, events: Vec<PendingEvent>, commit: &str) -> Result<()> {
        if events.is_empty() {
            return self.after_deferred(self.conn.client().batch_execute(commit));
        }
        let (lock, insert) = self.conn.wait(futures_util::future::join(
            self.conn.prepare("SELECT last_seq FROM ledger FOR UPDATE"),
            self.conn.prepare(INSERT_EVENTS),
        ));
        let (lock, insert) = (
            lock.map_err(|e| self.failure(e))?,
            insert.map_err(|e| self.failure(e))?,
        );
        // One array a column, for the statement's unnest.
        let (mut ids, mut kinds, mut artifacts, mut participants) =
            (vec![], vec![], vec![], vec![]);
        let (mut holders, mut at, mut data) = (vec![], vec![], vec![]);
        for e in events {
            ids.push(e.id);
            kinds.push(e.kind);
            artifacts.push(e.artifact_id);
            participants.push(e.participant);
            holders.push(e.holder);
            at.push(e.at);
            data.push(e.data);
        }
        self.after_deferred(async {
            let (locked, inserted, committed) = futures_util::future::join3(
                self.conn.client().query(&lock, &[]),
                self.conn.client().execute(
                    &insert,
                    &[
                        &ids,
                        &kinds,
                        &artifacts,
                        &participants,
                        &holders,
                        &at,
                        &data,
                    ],
                ),
                self.conn.client().batch_execute(commit),
            )
            .await;
            locked?;
            inserted?;
            committed
        })
    }

    /// Waits for every queued write.
    fn flush(&self) -> Result<()> {
        self.after_deferred(async { Ok(()) })
    }

    fn query(&self, sql: &str, params: Params) -> Result<Vec<Row>> {
        self.prefetched.take(); // it may write (UPDATE … RETURNING)
        self.after_deferred(async {
            let statement = self.conn.prepare(sql).await?;
            self.conn.client().query(&statement, params).await
        })
    }

    fn query_opt(&self, sql: &str, params: Params) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    fn query_one(&self, sql: &str, params: Params) -> Result<Row> {
        self.query_opt(sql, params)?
            .ok_or_else(|| Error::Internal("database: a row was expected".into()))
    }

    fn execute(&self, sql: &str, params: Params) -> Result<u64> {
        self.prefetched.take();
        self.after_deferred(async {
            let statement = self.conn.prepare(sql).await?;
            self.conn.client().execute(&statement, params).await
        })
    }

    fn with_result(
        &self,
        mut row: CheckoutRow,
        result: Option<StoredResult>,
    ) -> Result<CheckoutRow> {
        row.checkout.result = result.map(|r| self.resolve_result(r)).transpose()?;
        Ok(row)
    }

    fn event_rows(
        &self,
        sql: &str,
        bound: i64,
        limit: u32,
        artifact: Option<ArtifactId>,
    ) -> Result<Vec<Event>> {
        let limit = i64::from(limit);
        let artifact = artifact.map(|id| id.to_string());
        let rows = match &artifact {
            None => self.query(sql, &[&bound, &limit])?,
            Some(id) => self.query(sql, &[&bound, &limit, id])?,
        };
        rows.iter()
            .map(|r| {
                let data: String = r.try_get(7)?;
                Ok(Event {
                    seq: unsigned(r.try_get(0)?)?,
                    id: parsed(r, 1)?,
                    kind: r.try_get(2)?,
                    artifact_id: parsed_opt(r, 3)?,
                    participant: parsed_opt(r, 4)?,
                    holder: r.try_get(5)?,
                    at: time(r.try_get(6)?)?,
                    data: serde_json::from_str(&data).unwrap_or(serde_json::Value::Null),
                })
            })
            .collect()
    }
}

fn millis(t: Timestamp) -> i64 {
    t.timestamp_millis()
}

fn time(ms: i64) -> Result<Timestamp> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| Error::Internal(format!("a stored time is out of range: {ms}")))
}

/// A number for a BIGINT column; ours never pass 2^63 - 1.
fn signed(n: u64) -> Result<i64> {
    i64::try_from(n).map_err(|_| Error::Invalid(format!("{n} is out of range")))
}

fn unsigned(n: i64) -> Result<u64> {
    u64::try_from(n).map_err(|_| Error::Internal(format!("a stored count is negative: {n}")))
}

fn parsed<T: std::str::FromStr>(row: &Row, idx: usize) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    let text: String = row.try_get(idx)?;
    text.parse()
        .map_err(|e| Error::Internal(format!("a stored value cannot be read ({text:?}): {e}")))
}

fn parsed_opt<T: std::str::FromStr>(row: &Row, idx: usize) -> Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    match row.try_get::<_, Option<String>>(idx)? {
        None => Ok(None),
        Some(_) => parsed(row, idx).map(Some),
    }
}

fn stored_path(row: &Row, idx: usize) -> Result<RepoPath> {
    let text: String = row.try_get(idx)?;
    RepoPath::stored(&text)
        .map_err(|e| Error::Internal(format!("a stored path cannot be read ({text:?}): {e}")))
}

fn json<T: for<'de> Deserialize<'de>>(row: &Row, idx: usize) -> Result<Option<T>> {
    match row.try_get::<_, Option<String>>(idx)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Internal(format!("a stored result cannot be read: {e}"))),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("stored values serialize")
}

const HEAD_COLUMNS: &str = "v.version, v.digest, v.size, v.author, v.committed_at, v.message";

fn head_at(row: &Row, i: usize) -> Result<Head> {
    Ok(Head {
        version: unsigned(row.try_get(i)?)?,
        digest: parsed(row, i + 1)?,
        size: unsigned(row.try_get(i + 2)?)?,
        author: parsed(row, i + 3)?,
        committed_at: time(row.try_get(i + 4)?)?,
        message: row.try_get(i + 5)?,
    })
}

const LEASE_COLUMNS: &str =
    "l.holder, l.participant, l.kind, l.checkout_id, l.note, l.acquired_at, l.expires_at";

fn lease_at(row: &Row, i: usize) -> Result<Option<Lease>> {
    let Some(holder) = row.try_get::<_, Option<String>>(i)? else {
        return Ok(None);
    };
    let kind: String = row.try_get(i + 2)?;
    Ok(Some(Lease {
        holder,
        participant: parsed(row, i + 1)?,
        kind: if kind == "edit" {
            LeaseKind::Edit
        } else {
            LeaseKind::Checkout
        },
        checkout_id: parsed_opt(row, i + 3)?,
        note: row.try_get(i + 4)?,
        acquired_at: time(row.try_get(i + 5)?)?,
        expires_at: time(row.try_get(i + 6)?)?,
    }))
}

const CHECKOUT_COLUMNS: &str = "c.id, c.artifact_id, a.path, c.version, c.digest, c.actor, c.note, \
     c.created_at, c.expires_at, c.state, c.checkin_digest, c.result, c.broken_by, c.broken_reason, c.broken_at, \
     c.lease_epoch";

const PROPOSAL_COLUMNS: &str = "id, artifact_id, base_version, test_digest, provenance_version, \
     provenance_digest, digest, size, author, checkout_id, state, created_at, message";

fn proposal_row(row: &Row) -> Result<Proposal> {
    let state: String = row.try_get(10)?;
    Ok(Proposal {
        id: parsed(row, 0)?,
        artifact_id: parsed(row, 1)?,
        base_version: unsigned(row.try_get(2)?)?,
        test_digest: parsed(row, 3)?,
        provenance: Provenance {
            version: unsigned(row.try_get(4)?)?,
            digest: parsed(row, 5)?,
        },
        digest: parsed(row, 6)?,
        size: unsigned(row.try_get(7)?)?,
        author: parsed(row, 8)?,
        checkout_id: parsed_opt(row, 9)?,
        state: match state.as_str() {
            "open" => ProposalState::Open,
            "accepted" => ProposalState::Accepted,
            "rejected" => ProposalState::Rejected,
            _ => ProposalState::Superseded,
        },
        created_at: time(row.try_get(11)?)?,
        message: row.try_get(12)?,
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

/// An artifact with its head, lease row and lease epoch (for [`artifact_row`]),
/// `id` being SQL for its id.
fn artifact_select(id: &str) -> String {
    format!(
        "SELECT a.id, a.path, {HEAD_COLUMNS}, {LEASE_COLUMNS}, a.lease_epoch
         FROM artifacts a
         JOIN versions v ON v.artifact_id = a.id AND v.version = a.head_version
         LEFT JOIN leases l ON l.artifact_id = a.id
         WHERE a.id = {id}"
    )
}

fn artifact_row(r: &Row) -> Result<Artifact> {
    Ok(Artifact {
        id: parsed(r, 0)?,
        path: stored_path(r, 1)?,
        head: head_at(r, 2)?,
        lease: lease_at(r, 8)?,
    })
}

fn checkout_row(r: &Row) -> Result<CheckoutRow> {
    let id: CheckoutId = parsed(r, 0)?;
    let actor: Participant = parsed(r, 5)?;
    let state: String = r.try_get(9)?;
    let broken = match r.try_get::<_, Option<String>>(12)? {
        None => None,
        Some(_) => Some(Broken {
            by: parsed(r, 12)?,
            reason: r.try_get(13)?,
            at: time(r.try_get(14)?)?,
        }),
    };
    Ok(CheckoutRow {
        checkout: Checkout {
            id,
            artifact_id: parsed(r, 1)?,
            path: stored_path(r, 2)?,
            version: unsigned(r.try_get(3)?)?,
            digest: parsed(r, 4)?,
            holder: Lease::checkout_holder(id, &actor),
            actor,
            note: r.try_get(6)?,
            created_at: time(r.try_get(7)?)?,
            expires_at: time(r.try_get(8)?)?,
            state: if state == "open" {
                CheckoutState::Open
            } else {
                CheckoutState::Closed
            },
            result: None,
            broken,
        },
        checkin_digest: parsed_opt(r, 10)?,
        lease_epoch: unsigned(r.try_get(15)?)?,
    })
}

fn account_row(r: &Row) -> Result<Account> {
    Ok(Account {
        participant: parsed(r, 0)?,
        admin: r.try_get(1)?,
        created_at: time(r.try_get(2)?)?,
    })
}

impl Transaction for PgTx<'_> {
    fn now(&self, clock: &Clock) -> Result<Timestamp> {
        if clock.is_manual() {
            let now = clock.now();
            self.rules_now.set(Some(now));
            return Ok(now);
        }
        if let Some(now) = self.now.get() {
            return Ok(now);
        }
        let row = self.query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        )?;
        let now = time(row.try_get(0)?)?;
        self.now.set(Some(now));
        Ok(now)
    }

    fn require_durable(&self) {
        self.durable.set(true);
    }

    fn savepoint(&self, f: &mut dyn FnMut(&Tx) -> Result<()>) -> Result<Result<()>> {
        self.defer_simple("SAVEPOINT writer");
        let events = self.events.borrow().len();
        let held = self.held.borrow().clone();
        // The writer's queued writes are its outcome too: learnt now when
        // careful, else with the next statement (a failure there runs the
        // group again, carefully).
        let outcome = match self.careful.get() {
            true => f(self).and_then(|()| self.flush()),
            false => f(self),
        };
        if let Some(again) = self.again.borrow().clone() {
            return Err(again); // the whole transaction runs again
        }
        if outcome.is_err() {
            // Whatever of it is still queued goes out, to be rolled back with the rest.
            let _ = self.flush();
            self.conn
                .wait(
                    self.conn
                        .client()
                        .batch_execute("ROLLBACK TO SAVEPOINT writer"),
                )
                .map_err(|e| self.failure(e))?;
            // Its locks and events went with it.
            self.events.borrow_mut().truncate(events);
            *self.held.borrow_mut() = held;
        }
        self.defer_simple("RELEASE SAVEPOINT writer");
        Ok(outcome)
    }

    // ----- participants

    fn account(&self, participant: &Participant) -> Result<Option<Account>> {
        self.query_opt(
            "SELECT participant, admin, created_at FROM participants WHERE participant = $1",
            &[&participant.as_str()],
        )?
        .map(|r| account_row(&r))
        .transpose()
    }

    fn insert_account(&self, account: &Account) -> Result<()> {
        let inserted = self.execute(
            "INSERT INTO participants (participant, admin, created_at) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[
                &account.participant.as_str(),
                &account.admin,
                &millis(account.created_at),
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
        self.query(
            "SELECT participant, admin, created_at FROM participants ORDER BY participant",
            &[],
        )?
        .iter()
        .map(account_row)
        .collect()
    }

    // ----- tokens

    fn insert_token(
        &self,
        id: &str,
        participant: &Participant,
        hash: &str,
        now: Timestamp,
    ) -> Result<()> {
        self.defer(
            "INSERT INTO tokens (id, participant, hash, created_at) VALUES ($1, $2, $3, $4)",
            owned![
                id.to_owned(),
                participant.as_str().to_owned(),
                hash.to_owned(),
                millis(now),
            ],
        )?;
        Ok(())
    }

    fn live_token(&self, id: &str) -> Result<Option<(Participant, String)>> {
        self.query_opt(
            "SELECT participant, hash FROM tokens WHERE id = $1 AND revoked_at IS NULL",
            &[&id],
        )?
        .map(|r| Ok((parsed(&r, 0)?, r.try_get(1)?)))
        .transpose()
    }

    fn revoke_tokens(&self, participant: &Participant, now: Timestamp) -> Result<usize> {
        Ok(self.execute(
            "UPDATE tokens SET revoked_at = $2 WHERE participant = $1 AND revoked_at IS NULL",
            &[&participant.as_str(), &millis(now)],
        )? as usize)
    }

    // ----- artifacts and versions

    fn artifact_id_by_path(&self, path: &RepoPath) -> Result<Option<ArtifactId>> {
        self.lock_paths()?;
        self.query_opt(
            "SELECT id FROM artifacts WHERE path = $1 OR path_key = $2
             ORDER BY path = $1 DESC, path LIMIT 1",
            &[&path.as_str(), &path.collision_key()],
        )?
        .map(|r| parsed(&r, 0))
        .transpose()
    }

    fn artifacts_with_key(&self, key: &str) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.lock_paths()?;
        self.query(
            "SELECT id, path FROM artifacts WHERE path_key = $1 ORDER BY path",
            &[&key],
        )?
        .iter()
        .map(|r| Ok((parsed(r, 0)?, stored_path(r, 1)?)))
        .collect()
    }

    fn artifacts_under_key(&self, key: &str, limit: u32) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.lock_paths()?;
        self.query(
            "SELECT id, path FROM artifacts WHERE path_key >= $1 || '/' AND path_key < $1 || '0'
             ORDER BY path LIMIT $2",
            &[&key, &i64::from(limit)],
        )?
        .iter()
        .map(|r| Ok((parsed(r, 0)?, stored_path(r, 1)?)))
        .collect()
    }

    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()> {
        self.defer(
            "UPDATE artifacts SET path = $2, path_key = $3 WHERE id = $1",
            owned![
                id.to_string(),
                path.as_str().to_owned(),
                path.collision_key(),
            ],
        )?;
        Ok(())
    }

    fn artifact(&self, id: ArtifactId) -> Result<Option<Artifact>> {
        let sql = artifact_select("$1");
        let key = id.to_string();
        let prefetched = self
            .prefetched
            .take()
            .filter(|(artifact, _)| *artifact == id)
            .map(|(_, row)| vec![row]);
        let rows = match prefetched {
            Some(rows) => rows,
            None => self.locked_query(LOCK_ARTIFACT, &key, Some(id), &sql, &[&key], None)?,
        };
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        if let Some(epoch) = self.held.borrow_mut().artifacts.get_mut(&id) {
            *epoch = Some(unsigned(row.try_get(15)?)?);
        }
        artifact_row(row).map(Some)
    }

    fn artifacts(&self) -> Result<Vec<Artifact>> {
        let sql = format!(
            "SELECT a.id, a.path, {HEAD_COLUMNS}, {LEASE_COLUMNS}
             FROM artifacts a
             JOIN versions v ON v.artifact_id = a.id AND v.version = a.head_version
             LEFT JOIN leases l ON l.artifact_id = a.id
             ORDER BY a.path"
        );
        self.query(&sql, &[])?.iter().map(artifact_row).collect()
    }

    fn insert_artifact(&self, id: ArtifactId, path: &RepoPath, head: &Head) -> Result<()> {
        // A new row is this transaction's alone until it commits.
        self.held.borrow_mut().artifacts.insert(id, Some(0));
        self.defer(
            "INSERT INTO artifacts (id, path, path_key, head_version, created_at)
             VALUES ($1, $2, $3, $4, $5)",
            owned![
                id.to_string(),
                path.as_str().to_owned(),
                path.collision_key(),
                signed(head.version)?,
                millis(head.committed_at),
            ],
        )?;
        self.insert_version(id, head, None)
    }

    fn commit_version(&self, id: ArtifactId, head: &Head, base: u64) -> Result<()> {
        let moved = self.execute(
            "UPDATE artifacts SET head_version = $1 WHERE id = $2 AND head_version = $3",
            &[&signed(head.version)?, &id.to_string(), &signed(base)?],
        )?;
        if moved != 1 {
            return Err(Error::Internal(format!(
                "artifact {id}: head is not version {base}"
            )));
        }
        self.insert_version(id, head, Some(base))
    }

    fn versions(&self, id: ArtifactId) -> Result<Vec<(Head, Option<u64>)>> {
        let sql = format!(
            "SELECT {HEAD_COLUMNS}, v.base_version FROM versions v WHERE v.artifact_id = $1 ORDER BY v.version DESC"
        );
        self.query(&sql, &[&id.to_string()])?
            .iter()
            .map(|r| {
                let base: Option<i64> = r.try_get(6)?;
                Ok((head_at(r, 0)?, base.map(unsigned).transpose()?))
            })
            .collect()
    }

    fn version(&self, id: ArtifactId, version: u64) -> Result<Option<Head>> {
        let Ok(version) = i64::try_from(version) else {
            return Ok(None); // no version is past 2^63 - 1
        };
        let sql = format!(
            "SELECT {HEAD_COLUMNS} FROM versions v WHERE v.artifact_id = $1 AND v.version = $2"
        );
        self.query_opt(&sql, &[&id.to_string(), &version])?
            .map(|r| head_at(&r, 0))
            .transpose()
    }

    // ----- blobs

    fn names_blob(&self, digest: &Digest) -> Result<bool> {
        Ok(self
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM versions WHERE digest = $1)
                 OR EXISTS (SELECT 1 FROM proposals WHERE digest = $1)",
                &[&digest.as_str()],
            )?
            .try_get(0)?)
    }

    fn blob_digests(&self) -> Result<std::collections::HashSet<Digest>> {
        self.query(
            "SELECT digest FROM versions UNION SELECT digest FROM proposals",
            &[],
        )?
        .iter()
        .map(|r| parsed(r, 0))
        .collect()
    }

    // ----- leases

    fn put_lease(&self, artifact_id: ArtifactId, lease: &Lease) -> Result<()> {
        self.defer(
            "INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (artifact_id) DO UPDATE SET holder = $2, participant = $3, kind = $4,
                 checkout_id = $5, note = $6, acquired_at = $7, expires_at = $8",
            owned![
                artifact_id.to_string(),
                lease.holder.clone(),
                lease.participant.as_str().to_owned(),
                match lease.kind {
                    LeaseKind::Checkout => "checkout",
                    LeaseKind::Edit => "edit",
                },
                lease.checkout_id.map(|id| id.to_string()),
                lease.note.clone(),
                millis(lease.acquired_at),
                millis(lease.expires_at),
            ],
        )?;
        Ok(())
    }

    fn delete_lease(&self, artifact_id: ArtifactId) -> Result<()> {
        self.defer(
            "DELETE FROM leases WHERE artifact_id = $1",
            owned![artifact_id.to_string(),],
        )?;
        Ok(())
    }

    fn lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        if let Some(Some(epoch)) = self.held.borrow().artifacts.get(&artifact_id) {
            return Ok(*epoch);
        }
        unsigned(
            self.query_one(
                "SELECT lease_epoch FROM artifacts WHERE id = $1",
                &[&artifact_id.to_string()],
            )?
            .try_get(0)?,
        )
    }

    fn next_lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        // Known from the artifact's read under its lock: no need to wait.
        let known = self
            .held
            .borrow()
            .artifacts
            .get(&artifact_id)
            .copied()
            .flatten();
        if let Some(epoch) = known {
            self.defer(
                "UPDATE artifacts SET lease_epoch = lease_epoch + 1 WHERE id = $1",
                owned![artifact_id.to_string()],
            )?;
            self.held
                .borrow_mut()
                .artifacts
                .insert(artifact_id, Some(epoch + 1));
            return Ok(epoch + 1);
        }
        let epoch = unsigned(
            self.query_one(
                "UPDATE artifacts SET lease_epoch = lease_epoch + 1 WHERE id = $1 RETURNING lease_epoch",
                &[&artifact_id.to_string()],
            )?
            .try_get(0)?,
        )?;
        if let Some(known) = self.held.borrow_mut().artifacts.get_mut(&artifact_id) {
            *known = Some(epoch);
        }
        Ok(epoch)
    }

    fn live_lease_count(&self, now: Timestamp) -> Result<u64> {
        unsigned(
            self.query_one(
                "SELECT COUNT(*) FROM leases WHERE expires_at > $1",
                &[&millis(now)],
            )?
            .try_get(0)?,
        )
    }

    /// Lapsed leases. In a write, of the artifacts it could lock at once:
    /// each server's sweeper takes what no other write holds, and records
    /// it under the lock, so each lapse is recorded once.
    fn lapsed_leases(&self, now: Timestamp) -> Result<Vec<(ArtifactId, Lease)>> {
        let now = millis(now);
        let ids: Vec<String> = if self.write {
            let locked = self.query(
                "UPDATE artifacts SET touched_at = GREATEST(touched_at, $1)
                 WHERE id IN (SELECT a.id FROM artifacts a JOIN leases l ON l.artifact_id = a.id
                              WHERE l.expires_at <= $1 FOR NO KEY UPDATE OF a SKIP LOCKED)
                 RETURNING id, touched_at",
                &[&now],
            )?;
            let mut ids = Vec::new();
            for row in &locked {
                let id: ArtifactId = parsed(row, 0)?;
                self.held.borrow_mut().artifacts.entry(id).or_insert(None);
                // Changed at a later time meanwhile: its next sweep records it.
                if row.try_get::<_, i64>(1)? <= now {
                    ids.push(id.to_string());
                }
            }
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            ids
        } else {
            Vec::new()
        };
        let sql = format!(
            "SELECT l.artifact_id, {LEASE_COLUMNS} FROM leases l
             WHERE l.expires_at <= $1 AND ($2 = false OR l.artifact_id = ANY($3))
             ORDER BY l.artifact_id"
        );
        self.query(&sql, &[&now, &self.write, &ids])?
            .iter()
            .map(|r| {
                let lease = lease_at(r, 1)?
                    .ok_or_else(|| Error::Internal("a lease row without a holder".into()))?;
                Ok((parsed(r, 0)?, lease))
            })
            .collect()
    }

    // ----- check-outs

    fn checkout(&self, id: CheckoutId) -> Result<Option<CheckoutRow>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id WHERE c.id = $1"
        );
        let key = id.to_string();
        let rows = self.locked_query(
            LOCK_BY_CHECKOUT,
            &key,
            None,
            &sql,
            &[&key],
            Some(&artifact_select(
                "(SELECT artifact_id FROM checkouts WHERE id = $1)",
            )),
        )?;
        match rows.into_iter().next() {
            None => Ok(None),
            Some(r) => {
                let row = checkout_row(&r)?;
                let result = json::<StoredResult>(&r, 11)?;
                self.with_result(row, result).map(Some)
            }
        }
    }

    fn checkouts_of(&self, actor: &Participant, open_only: bool) -> Result<Vec<Checkout>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id
             WHERE c.actor = $1 AND ($2 = false OR c.state = 'open') ORDER BY c.created_at DESC, c.id"
        );
        self.query(&sql, &[&actor.as_str(), &open_only])?
            .iter()
            .map(|r| {
                let row = checkout_row(r)?;
                let result = json::<StoredResult>(r, 11)?;
                Ok(self.with_result(row, result)?.checkout)
            })
            .collect()
    }

    fn put_checkout(
        &self,
        row: &CheckoutRow,
        result: Option<&StoredResult>,
        closed_at: Option<Timestamp>,
    ) -> Result<()> {
        let c = &row.checkout;
        let broken = c.broken.as_ref();
        self.defer(
            "INSERT INTO checkouts (id, artifact_id, version, digest, actor, note, created_at, expires_at,
                 state, closed_at, checkin_digest, result, broken_by, broken_reason, broken_at, lease_epoch)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
             ON CONFLICT (id) DO UPDATE SET expires_at = $8, state = $9, closed_at = $10,
                 checkin_digest = $11, result = $12, broken_by = $13, broken_reason = $14, broken_at = $15,
                 lease_epoch = $16",
            owned![
                c.id.to_string(),
                c.artifact_id.to_string(),
                signed(c.version)?,
                c.digest.as_str().to_owned(),
                c.actor.as_str().to_owned(),
                c.note.clone(),
                millis(c.created_at),
                millis(c.expires_at),
                match c.state {
                    CheckoutState::Open => "open",
                    CheckoutState::Closed => "closed",
                },
                closed_at.map(millis),
                row.checkin_digest.as_ref().map(|d| d.as_str().to_owned()),
                result.map(to_json),
                broken.map(|b| b.by.as_str().to_owned()),
                broken.map(|b| b.reason.clone()),
                broken.map(|b| millis(b.at)),
                signed(row.lease_epoch)?,
            ],
        )?;
        Ok(())
    }

    // ----- edits

    fn edit(&self, id: EditId) -> Result<Option<EditRow>> {
        let key = id.to_string();
        let Some(r) = self
            .locked_query(
                LOCK_BY_EDIT,
                &key,
                None,
                "SELECT id, artifact_id, participant, base_version, base_digest, expires_at, state, commit_digest, result
                 FROM edits WHERE id = $1",
                &[&key],
                Some(&artifact_select("(SELECT artifact_id FROM edits WHERE id = $1)")),
            )?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let id: EditId = parsed(&r, 0)?;
        let state: String = r.try_get(6)?;
        Ok(Some(EditRow {
            edit: Edit {
                id,
                artifact_id: parsed(&r, 1)?,
                holder: Lease::edit_holder(id),
                participant: parsed(&r, 2)?,
                base_version: unsigned(r.try_get(3)?)?,
                base_digest: parsed(&r, 4)?,
                expires_at: time(r.try_get(5)?)?,
            },
            state: match state.as_str() {
                "open" => EditState::Open,
                "committed" => EditState::Committed,
                _ => EditState::Released,
            },
            commit_digest: parsed_opt(&r, 7)?,
            result: json(&r, 8)?,
        }))
    }

    fn put_edit(&self, row: &EditRow, now: Timestamp) -> Result<()> {
        let e = &row.edit;
        self.defer(
            "INSERT INTO edits (id, artifact_id, participant, base_version, base_digest, created_at, expires_at,
                 state, commit_digest, result)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (id) DO UPDATE SET state = $8, commit_digest = $9, result = $10",
            owned![
                e.id.to_string(),
                e.artifact_id.to_string(),
                e.participant.as_str().to_owned(),
                signed(e.base_version)?,
                e.base_digest.as_str().to_owned(),
                millis(now),
                millis(e.expires_at),
                match row.state {
                    EditState::Open => "open",
                    EditState::Committed => "committed",
                    EditState::Released => "released",
                },
                row.commit_digest.as_ref().map(|d| d.as_str().to_owned()),
                row.result.as_ref().map(to_json),
            ],
        )?;
        Ok(())
    }

    // ----- proposals

    fn proposal(&self, id: ProposalId) -> Result<Option<Proposal>> {
        let sql = format!("SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE id = $1");
        let key = id.to_string();
        self.locked_query(LOCK_BY_PROPOSAL, &key, None, &sql, &[&key], None)?
            .first()
            .map(proposal_row)
            .transpose()
    }

    fn proposals(&self, filter: &ProposalFilter) -> Result<Vec<Proposal>> {
        let sql = format!(
            "SELECT {PROPOSAL_COLUMNS} FROM proposals
             WHERE ($1::text IS NULL OR artifact_id = $1) AND ($2::text IS NULL OR state = $2)
             ORDER BY created_at, id"
        );
        self.query(
            &sql,
            &[
                &filter.artifact.map(|id| id.to_string()),
                &filter.state.map(proposal_state_str),
            ],
        )?
        .iter()
        .map(proposal_row)
        .collect()
    }

    fn successor(&self, id: ProposalId) -> Result<Option<ProposalId>> {
        match self.query_opt(
            "SELECT superseded_by FROM proposals WHERE id = $1",
            &[&id.to_string()],
        )? {
            None => Ok(None),
            Some(r) => parsed_opt(&r, 0),
        }
    }

    fn insert_proposal(&self, p: &Proposal) -> Result<()> {
        self.require_durable();
        self.defer(
            &format!("INSERT INTO proposals ({PROPOSAL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"),
            owned![
                p.id.to_string(),
                p.artifact_id.to_string(),
                signed(p.base_version)?,
                p.test_digest.as_str().to_owned(),
                signed(p.provenance.version)?,
                p.provenance.digest.as_str().to_owned(),
                p.digest.as_str().to_owned(),
                signed(p.size)?,
                p.author.as_str().to_owned(),
                p.checkout_id.map(|id| id.to_string()),
                proposal_state_str(p.state),
                millis(p.created_at),
                p.message.clone(),
            ],
        )?;
        Ok(())
    }

    fn decide_proposal(
        &self,
        id: ProposalId,
        state: ProposalState,
        by: &Participant,
        at: Timestamp,
        superseded_by: Option<ProposalId>,
    ) -> Result<()> {
        self.defer(
            "UPDATE proposals SET state = $2, decided_by = $3, decided_at = $4, superseded_by = $5
             WHERE id = $1 AND state = 'open'",
            owned![
                id.to_string(),
                proposal_state_str(state),
                by.as_str().to_owned(),
                millis(at),
                superseded_by.map(|id| id.to_string()),
            ],
        )?;
        Ok(())
    }

    // ----- events

    fn insert_event(&self, e: NewEvent) -> Result<()> {
        if !self.write {
            return Err(Error::Internal("an event written in a read".into()));
        }
        let event = PendingEvent {
            id: e.id.to_string(),
            kind: e.kind.to_owned(),
            artifact_id: e.artifact_id.map(|id| id.to_string()),
            participant: e.participant.map(|p| p.as_str().to_owned()),
            holder: e.holder.map(str::to_owned),
            at: millis(e.at),
            data: e.data.to_string(),
        };
        let mut events = self.events.borrow_mut();
        // Only a lease.contended id can come twice (see the schema); the
        // commit leaves out one recorded before.
        if !events.iter().any(|known| known.id == event.id) {
            events.push(event);
        }
        Ok(())
    }

    fn events_after(
        &self,
        artifact: Option<ArtifactId>,
        after: u64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let Ok(after) = i64::try_from(after) else {
            return Ok(Vec::new()); // no seq is past 2^63 - 1
        };
        let sql = match artifact {
            None => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                 WHERE seq > $1 ORDER BY seq LIMIT $2"
            }
            Some(_) => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                 WHERE artifact_id = $3 AND seq > $1 ORDER BY seq LIMIT $2"
            }
        };
        self.event_rows(sql, after, limit, artifact)
    }

    fn events_before(
        &self,
        artifact: Option<ArtifactId>,
        before: u64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let before = before.min(i64::MAX as u64) as i64;
        let sql = match artifact {
            None => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                 WHERE seq < $1 ORDER BY seq DESC LIMIT $2"
            }
            Some(_) => {
                "SELECT seq, id, type, artifact_id, participant, holder, at, data FROM events
                 WHERE artifact_id = $3 AND seq < $1 ORDER BY seq DESC LIMIT $2"
            }
        };
        self.event_rows(sql, before, limit, artifact)
    }

    fn last_event_seq(&self) -> Result<u64> {
        unsigned(
            self.query_one("SELECT COALESCE(MAX(seq), 0)::bigint FROM events", &[])?
                .try_get(0)?,
        )
    }
}

impl PgTx<'_> {
    fn insert_version(&self, id: ArtifactId, head: &Head, base: Option<u64>) -> Result<()> {
        self.require_durable();
        self.defer(
            "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at, base_version, message)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            owned![
                id.to_string(),
                signed(head.version)?,
                head.digest.as_str().to_owned(),
                signed(head.size)?,
                head.author.as_str().to_owned(),
                millis(head.committed_at),
                base.map(signed).transpose()?,
                head.message.clone(),
            ],
        )?;
        Ok(())
    }
}

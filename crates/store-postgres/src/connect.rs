//! Connections to the database: their settings, the pool (TLS as
//! `crate::trust` says), errors named for the operator, and the connection a
//! transaction runs on with its rollback guard. Never decides what a
//! transaction does: that is `writer`'s and `tx`'s.

use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{wait, PgStore};
use crate::error::{Error, Result};

/// How long opening a connection may take before the database counts as unreachable.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a caller waits for a free connection of the pool.
const POOL_WAIT: Duration = Duration::from_secs(10);
/// No statement runs longer: a stuck one must not hold a lock for ever.
const STATEMENT_TIMEOUT_MS: u64 = 30_000;
/// Pooled connections per server: reads, and writes called from inside async code.
const POOL_SIZE: usize = 16;

/// The settings of the pool's connections, and of writers' (whose lease
/// changes commit without waiting for the log's flush), from `url`.
pub(super) fn settings(url: &str) -> Result<(tokio_postgres::Config, tokio_postgres::Config)> {
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
    Ok((config, writer_config))
}

/// A listener's settings: its connection is silent, so TCP keep-alives find
/// it dead when the database's machine or the network went away without a word.
pub(super) fn listener_settings(config: &tokio_postgres::Config) -> tokio_postgres::Config {
    let mut listener_config = config.clone();
    listener_config
        .keepalives_idle(Duration::from_secs(10))
        .keepalives_interval(Duration::from_secs(2))
        .keepalives_retries(3);
    listener_config
}

/// The pool of reads (and of writes called from inside async code), its
/// connections made and driven on `runtime`.
pub(super) fn pool(
    config: &tokio_postgres::Config,
    tls: &MakeRustlsConnect,
    runtime: &tokio::runtime::Runtime,
) -> Result<Pool> {
    let manager = Manager::from_config(
        config.clone(),
        tls.clone(),
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let _entered = runtime.enter();
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(POOL_WAIT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| Error::Internal(format!("database pool: {e}")))
}

/// An error and what caused it ("error performing TLS handshake: invalid
/// peer certificate: UnknownIssuer").
pub(super) fn with_causes(error: &dyn std::error::Error) -> String {
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
pub(super) fn display_name(config: &tokio_postgres::Config) -> String {
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
    /// A connection of the pool, or a clear error naming the database.
    pub(super) fn connection(&self) -> Result<deadpool_postgres::Object> {
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
    pub(super) fn unreachable(&self, why: String) -> Error {
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
}

/// A connection a transaction runs on, and how to wait for its answers.
#[derive(Clone, Copy)]
pub(super) enum Conn<'a> {
    /// The pool's (reads, and writes called from inside async code): driven
    /// by the store's runtime.
    Pooled(&'a deadpool_postgres::Object),
    /// A writer's own (see [`WriterConnection`]).
    Writer(&'a WriterConnection),
}

impl<'a> Conn<'a> {
    pub(super) fn client(self) -> &'a tokio_postgres::Client {
        match self {
            Conn::Pooled(object) => object,
            Conn::Writer(writer) => &writer.client,
        }
    }

    /// Waits here for `f` (see [`wait`](super::wait) and [`WriterConnection`]).
    pub(super) fn wait<F: Future>(self, f: F) -> F::Output {
        match self {
            Conn::Pooled(_) => wait(f),
            Conn::Writer(writer) => writer.runtime().block_on(f),
        }
    }

    /// `sql` prepared, once per connection.
    pub(super) async fn prepare(
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
pub(super) struct WriterConnection {
    runtime: Option<tokio::runtime::Runtime>,
    pub(super) client: tokio_postgres::Client,
    pub(super) statements: RefCell<std::collections::HashMap<String, tokio_postgres::Statement>>,
}

impl WriterConnection {
    pub(super) fn open(
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

    pub(super) fn runtime(&self) -> &tokio::runtime::Runtime {
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
pub(super) struct OpenTx<'a> {
    conn: Conn<'a>,
    open: bool,
}

impl<'a> OpenTx<'a> {
    pub(super) fn begin(conn: Conn<'a>, sql: &str) -> Result<Self> {
        let open = Self::armed(conn);
        conn.wait(conn.client().batch_execute(sql))?;
        Ok(open)
    }

    /// Rolls back when dropped, from now on: for a BEGIN sent with what follows it.
    pub(super) fn armed(conn: Conn<'a>) -> Self {
        Self { conn, open: true }
    }

    /// The transaction has ended (its COMMIT answered): no rollback when dropped.
    pub(super) fn disarm(&mut self) {
        self.open = false;
    }

    pub(super) fn finish(&mut self, sql: &str) -> Result<()> {
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

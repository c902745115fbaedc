//! The store a bundled backend runs on: an SQLite file, or PostgreSQL when
//! this crate is built with `postgres`. One enum rather than a trait object,
//! so the rules' closures stay generic and nothing is boxed per call.

use leasedesk_store::{Durability, Tx};
#[cfg(feature = "postgres")]
use leasedesk_store_postgres::PgStore;
use leasedesk_store_sqlite::SqliteStore;

#[cfg(feature = "postgres")]
use crate::error::Error;
use crate::error::Result;
use crate::failpoint::Failpoints;

/// `LEASEDESK_BENCH_UNDURABLE_EVENTS=1`: events are given before they are
/// durable, as before, so `benches/stream.rs` can measure what waiting for
/// durability costs in one run. Never for real use: a crash may then take
/// back an event a reader was given.
fn undurable_events_for_a_benchmark() -> bool {
    static UNDURABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *UNDURABLE.get_or_init(|| {
        std::env::var_os("LEASEDESK_BENCH_UNDURABLE_EVENTS").is_some_and(|v| v == "1")
    })
}

/// The longest a reader waits for events to become durable: past it, it is
/// given those that are, and looks again later.
#[cfg(feature = "postgres")]
const DURABLE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Rows in an SQLite file or in PostgreSQL.
pub enum Store {
    Sqlite(SqliteStore),
    #[cfg(feature = "postgres")]
    Postgres(PgStore),
}

impl Store {
    /// The SQLite store in the file `path`.
    pub fn open(path: &std::path::Path, failpoints: Failpoints) -> Result<Self> {
        SqliteStore::open(path, failpoints).map(Store::Sqlite)
    }

    /// Runs `f` in one write transaction; `f`'s error rolls everything back.
    /// `f` must be safe to run twice (see [`SqliteStore::write`]).
    pub fn write<T>(
        &self,
        durability: Durability,
        f: impl FnMut(&dyn Tx) -> Result<T>,
    ) -> Result<T> {
        match self {
            Store::Sqlite(store) => store.write(durability, f),
            #[cfg(feature = "postgres")]
            Store::Postgres(store) => store.write(durability, f),
        }
    }

    /// Runs `f` on one consistent snapshot. Writes nothing.
    pub fn read<T>(&self, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        match self {
            Store::Sqlite(store) => store.read(f),
            #[cfg(feature = "postgres")]
            Store::Postgres(store) => store.read(f),
        }
    }
    /// The last seq through which every event is durable, and normally at
    /// least every event committed before the call: lease changes commit
    /// without waiting for the disk, so a crash may undo the newest events
    /// and give their numbers to others; a reader is given none past this.
    /// Blocks (a few milliseconds; at most [`DURABLE_WAIT`]).
    pub fn durable_events(&self) -> Result<u64> {
        if undurable_events_for_a_benchmark() {
            return Ok(u64::MAX);
        }
        match self {
            Store::Sqlite(store) => store.durable_events(),
            #[cfg(feature = "postgres")]
            Store::Postgres(store) => store.durable_events(DURABLE_WAIT),
        }
    }
}

/// The two ends of a migration.
#[cfg(feature = "postgres")]
impl Store {
    /// The SQLite store, which a migration copies from.
    pub fn sqlite(&self) -> Result<&SqliteStore> {
        match self {
            Store::Sqlite(store) => Ok(store),
            Store::Postgres(_) => Err(Error::Invalid(
                "a migration copies a data folder's SQLite rows into PostgreSQL".into(),
            )),
        }
    }

    /// The PostgreSQL store, which a migration copies into.
    pub fn postgres(&self) -> Result<&PgStore> {
        match self {
            Store::Postgres(store) => Ok(store),
            Store::Sqlite(_) => Err(Error::Invalid(
                "a migration copies a data folder into PostgreSQL (--to-database postgres://...)"
                    .into(),
            )),
        }
    }
}

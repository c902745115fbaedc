//! The typed reads and writes of one transaction, the same on every store:
//! [`Tx`] and the families of rows it is made of, each a trait of
//! its own (`artifacts`, `leases`, `checkouts`, `studio`; uploads' in
//! `crate::uploads`). A family's default methods run the statements both
//! stores share (`rows`) through [`Sql`], the one seam each store fills in;
//! a store overrides a default where its SQL differs, or where it must lock
//! first (PostgreSQL's writes reach check-outs, edits, proposals and
//! requests through their artifact's lock). Never opens a connection.

mod artifacts;
mod checkouts;
mod leases;
mod review;
mod studio;

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::listing::Dialect;
use crate::model::*;
use crate::rows::{self, Row, Statement};
use crate::uploads::UploadRows;
use crate::{inserted_once, EventRows, NewEvent};

pub use artifacts::{insert_version, ArtifactRows};
pub use checkouts::CheckoutRows;
pub use leases::LeaseRows;
pub use review::ReviewRows;
pub use studio::StudioRows;

/// How a store runs the statements both stores share, and the few steps
/// around them that each takes its own way. For the stores and the
/// families' defaults: the rules never call it.
pub trait Sql {
    /// How this store spells what differs in the SQL of lists, with no
    /// search index chosen.
    fn dialect(&self) -> Dialect;

    /// How this store spells a numbered parameter (`?1`, `$1`): the `p`
    /// of the statements of `rows`.
    fn p(&self) -> char {
        self.dialect().parameter()
    }

    /// Runs a statement that answers rows (a read, or a write's
    /// `RETURNING`), handing each to `each` in order.
    fn fetch(
        &self,
        statement: &Statement,
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()>;

    /// Runs a write now; answers how many rows it changed.
    fn run(&self, statement: &Statement) -> Result<u64>;

    /// Runs a write whose answer is only whether it failed: PostgreSQL
    /// sends it with its next statement, SQLite at once.
    fn queue(&self, statement: Statement) -> Result<()>;

    /// Before a look for paths that would collide (imports, renames, paths
    /// held with no file): in a write on PostgreSQL, takes the lock for
    /// that look. SQLite has one writer at a time already.
    fn lock_paths(&self) -> Result<()>;

    /// Makes this transaction's commit survive power loss.
    fn require_durable(&self);
}

/// One transaction on a store, as the rules see it: its time, its
/// savepoints, the participants and the ledger of events, and every family
/// of rows.
pub trait Tx:
    ArtifactRows + LeaseRows + CheckoutRows + StudioRows + ReviewRows + UploadRows
{
    /// The time of this transaction, read once: `clock`'s if it is a manual
    /// (test) clock, else the store's own. SQLite's is the backend's clock
    /// read after the write lock is taken, so times follow commit order;
    /// PostgreSQL's is the database's (`clock_timestamp()`), so every server
    /// decides expiry by one clock.
    fn now(&self, clock: &Clock) -> Result<Timestamp>;

    /// Runs `f` in a savepoint: its error rolls back what `f` wrote and nothing
    /// before it, so several writers can share one transaction (group commit).
    /// The outer error is the store's own failure, which ends the transaction.
    fn savepoint(&self, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<Result<()>>;

    fn account(&self, participant: &Participant) -> Result<Option<Account>> {
        fetch_first(self, rows::select_account(self.p(), participant), |r| {
            rows::account(r)
        })
    }

    fn insert_account(&self, account: &Account) -> Result<()> {
        inserted_once(account, self.run(&rows::insert_account(self.p(), account))?)
    }

    fn accounts(&self) -> Result<Vec<Account>> {
        fetch_all(self, rows::select_accounts(), |r| rows::account(r))
    }

    /// Appends an event; writes nothing if an event with its id exists
    /// already (a contender asking again).
    fn insert_event(&self, e: NewEvent) -> Result<()>;

    /// One page of the ledger (see [`EventRows`]).
    fn event_rows(&self, page: EventRows) -> Result<Vec<Event>> {
        fetch_all(self, rows::select_events(self.p(), &page), |r| {
            rows::event(r)
        })
    }

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

/// Every row `statement` answers, each read by `read`.
pub fn fetch_all<T>(
    tx: &(impl Sql + ?Sized),
    statement: Statement,
    read: impl Fn(&dyn Row) -> Result<T>,
) -> Result<Vec<T>> {
    let mut found = Vec::new();
    tx.fetch(&statement, &mut |row| {
        found.push(read(row)?);
        Ok(())
    })?;
    Ok(found)
}

/// The row `statement` always answers (a count, say), read by `read`.
pub fn fetch_one<T>(
    tx: &(impl Sql + ?Sized),
    statement: Statement,
    read: impl Fn(&dyn Row) -> Result<T>,
) -> Result<T> {
    fetch_first(tx, statement, read)?
        .ok_or_else(|| Error::Internal("database: a row was expected".into()))
}

/// The first row `statement` answers, read by `read`: one looked up by its
/// key, or a `LIMIT 1`.
pub fn fetch_first<T>(
    tx: &(impl Sql + ?Sized),
    statement: Statement,
    read: impl Fn(&dyn Row) -> Result<T>,
) -> Result<Option<T>> {
    let mut found = None;
    tx.fetch(&statement, &mut |row| {
        if found.is_none() {
            found = Some(read(row)?);
        }
        Ok(())
    })?;
    Ok(found)
}

//! One transaction on the PostgreSQL store: its connection, the writes it
//! queues to send with the next statement, the artifacts it holds locked,
//! and the events it numbers at commit. Never knows the domain's rows:
//! `transaction` maps them, through the shared `store::rows`.

use std::cell::{Cell, RefCell};
use std::future::Future;

use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use super::connect::Conn;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::model::*;
use held::HeldWrites;
use leasedesk_store::rows::{self, millis, parsed, time_at, NewInboxItem};
use leasedesk_store::{NewEvent, Tx};

mod held;

/// The database's time, in milliseconds since the epoch.
pub(super) const CLOCK: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// Held by a write while it looks for paths that would collide (imports, renames).
const PATHS_LOCK: i64 = 0x6c65_6173_6570_6174;

/// How one attempt at a write ended, when not with its value.
pub(super) enum Attempt {
    /// It met another write (a deadlock, a key taken meanwhile, a file
    /// touched at a later time), or a queued write failed: run it again.
    Again(Again),
    Failed(Error),
}

pub(super) struct Again {
    pub(super) why: Error,
    /// The artifacts it locked, to lock first next time.
    pub(super) touched: Vec<ArtifactId>,
    /// A queued write failed, or a writer of the group did: next time each
    /// writer runs in a savepoint and learns its own outcome.
    pub(super) careful: bool,
}

/// SQLSTATEs that mean a concurrent write got there first: deadlock_detected,
/// serialization_failure, unique_violation.
pub(super) fn met_another_write(e: &tokio_postgres::Error) -> bool {
    e.as_db_error()
        .is_some_and(|db| matches!(db.code().code(), "40P01" | "40001" | "23505"))
}

/// One transaction on the PostgreSQL store.
pub struct PgTx<'a> {
    pub(super) conn: Conn<'a>,
    /// A write (locks what it reads), not a read of a snapshot.
    pub(super) write: bool,
    pub(super) durable: Cell<bool>,
    /// The database's time: read as a write begins, on first use in a read.
    pub(super) now: Cell<Option<Timestamp>>,
    /// The time the rules were given (a manual clock's, in tests), which
    /// `touched_at` keeps.
    pub(super) rules_now: Cell<Option<Timestamp>>,
    /// Writes whose answer nobody needs at once, not yet sent (see [`PgTx::defer`]).
    pub(super) deferred: RefCell<Vec<Deferred<'a>>>,
    /// Events to number and insert at commit (see the module's comment).
    pub(super) events: RefCell<Vec<PendingEvent>>,
    /// Inbox items to number and insert at commit, after the events.
    pub(super) inbox: RefCell<Vec<NewInboxItem>>,
    /// What this write holds locked, restored when a savepoint rolls back.
    pub(super) held: RefCell<Held>,
    /// Why this attempt must run again, once it is known.
    pub(super) again: RefCell<Option<Error>>,
    /// The artifact last read under its lock (or read ahead, see
    /// [`PgTx::lock_and_read`]), with the column its own begin at, good
    /// until this transaction writes anything.
    pub(super) prefetched: RefCell<Option<(ArtifactId, Row, usize)>>,
    /// The permissions' stamp, read with an artifact (`None` inside: there
    /// is no document), until this transaction writes the permissions.
    pub(super) stamp: RefCell<Option<Option<String>>>,
    /// Whether each writer of a group learns its queued writes' outcome
    /// before the next writer begins (see `PgStore::write_once`).
    pub(super) careful: Cell<bool>,
    /// A writer of a group failed, or a queued write whose writer could
    /// not be told apart: the next attempt is careful.
    pub(super) queued_failed: Cell<bool>,
    /// Writes held back to go out as one statement (see [`PgTx::hold`]).
    pub(super) held_writes: RefCell<HeldWrites>,
}

#[derive(Clone, Default)]
pub(super) struct Held {
    /// Artifacts whose row is locked, with their lease epoch when read.
    pub(super) artifacts: std::collections::HashMap<ArtifactId, Option<u64>>,
    /// Artifacts whose row this write wrote, or holds a write of: every
    /// write that locks an artifact writes its row (see [`PgTx::lock_and_read`]).
    pub(super) touched: std::collections::HashSet<ArtifactId>,
    pub(super) paths: bool,
}

/// An event as inserted at commit, numbered then.
pub(super) struct PendingEvent {
    pub(super) id: String,
    pub(super) kind: String,
    pub(super) artifact_id: Option<String>,
    pub(super) participant: Option<String>,
    pub(super) holder: Option<String>,
    pub(super) at: i64,
    pub(super) data: String,
}

pub(super) type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// A parameter a deferred write owns until it is sent.
pub type Owned = Box<dyn ToSql + Sync + Send>;

pub(super) type Deferred<'a> =
    std::pin::Pin<Box<dyn Future<Output = std::result::Result<(), tokio_postgres::Error>> + 'a>>;

/// Owned parameters for [`PgTx::defer`].
macro_rules! owned {
    ($($value:expr),* $(,)?) => {
        vec![$(Box::new($value) as $crate::tx::Owned),*]
    };
}
pub(super) use owned;

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
pub(super) const LOCK_BY_PROPOSAL: &str =
    lock_artifact!("(SELECT artifact_id FROM proposals WHERE id = $1)");
pub(super) const LOCK_BY_REQUEST: &str =
    lock_artifact!("(SELECT artifact_id FROM requests WHERE id = $1)");

/// The commit's events, numbered from the ledger's row: its UPDATE waits for
/// the row's lock and then counts from the last committed `last_seq`, whose
/// new value numbers the events. A contention already recorded is left out:
/// its id is its contender and holder lease (one recorded by a write
/// committed meanwhile takes the unique key, and this write runs again).
const INSERT_EVENTS: &str = "WITH new AS MATERIALIZED (
         SELECT e.*, row_number() OVER (ORDER BY e.ord) AS n
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])
             WITH ORDINALITY AS e (id, type, artifact_id, participant, holder, at, data, ord)
         WHERE e.type <> 'lease.contended' OR NOT EXISTS (
             SELECT 1 FROM events x WHERE x.type = 'lease.contended' AND x.id = e.id)
     ), counted AS (
         SELECT count(*) AS n FROM new
     ), turn AS (
         UPDATE ledger SET last_seq = last_seq + (SELECT n FROM counted) RETURNING last_seq
     )
     INSERT INTO events (seq, id, type, artifact_id, participant, holder, at, data)
     SELECT turn.last_seq - counted.n + new.n, new.id, new.type, new.artifact_id,
         new.participant, new.holder, new.at, new.data
     FROM new, counted, turn";

/// A commit's inbox items, numbered from the counter's row: its UPDATE
/// waits for the row's lock, taken after the ledger's.
const INSERT_INBOX: &str = "WITH new AS MATERIALIZED (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])
             WITH ORDINALITY AS i (participant, kind, artifact_id, thread_id, review_id, from_participant, at, n)
     ), turn AS (
         UPDATE inbox_counter SET last_seq = last_seq + (SELECT count(*) FROM new) RETURNING last_seq
     )
     INSERT INTO inbox_items (participant, seq, kind, artifact_id, thread_id, review_id, from_participant, at)
     SELECT new.participant, turn.last_seq - (SELECT count(*) FROM new) + new.n, new.kind,
         new.artifact_id, new.thread_id, new.review_id, new.from_participant, new.at
     FROM new, turn";

/// Inbox items as [`INSERT_INBOX`]'s arrays, one a column.
struct InboxColumns {
    participants: Vec<String>,
    kinds: Vec<String>,
    artifacts: Vec<String>,
    threads: Vec<Option<String>>,
    reviews: Vec<Option<String>>,
    from: Vec<String>,
    at: Vec<i64>,
}

impl InboxColumns {
    fn of(items: Vec<NewInboxItem>) -> Self {
        let mut columns = InboxColumns {
            participants: vec![],
            kinds: vec![],
            artifacts: vec![],
            threads: vec![],
            reviews: vec![],
            from: vec![],
            at: vec![],
        };
        for item in items {
            columns.participants.push(item.participant.to_string());
            columns
                .kinds
                .push(rows::inbox_kind_str(item.kind).to_owned());
            columns.artifacts.push(item.artifact_id.to_string());
            columns
                .threads
                .push(item.thread_id.map(|id| id.to_string()));
            columns
                .reviews
                .push(item.review_id.map(|id| id.to_string()));
            columns.from.push(item.from.to_string());
            columns.at.push(millis(item.at));
        }
        columns
    }

    fn params(&self) -> [&(dyn ToSql + Sync); 7] {
        [
            &self.participants,
            &self.kinds,
            &self.artifacts,
            &self.threads,
            &self.reviews,
            &self.from,
            &self.at,
        ]
    }
}

impl<'a> PgTx<'a> {
    pub(super) fn new(conn: Conn<'a>, write: bool, durable: bool, now: Option<Timestamp>) -> Self {
        Self {
            conn,
            write,
            durable: Cell::new(durable),
            now: Cell::new(now),
            rules_now: Cell::new(None),
            deferred: Default::default(),
            events: Default::default(),
            inbox: Default::default(),
            held: Default::default(),
            again: Default::default(),
            prefetched: Default::default(),
            stamp: Default::default(),
            careful: Cell::new(true),
            queued_failed: Cell::new(false),
            held_writes: Default::default(),
        }
    }

    /// A statement's failure, noting when it means this attempt must run again.
    pub(super) fn failure(&self, e: tokio_postgres::Error) -> Error {
        let again = self.write && met_another_write(&e);
        let error = Error::from(e);
        if again {
            self.again.borrow_mut().get_or_insert_with(|| error.clone());
        }
        error
    }

    /// What an error ends in: another attempt, if this one met another write.
    pub(super) fn attempt(&self, e: Error) -> Attempt {
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
    pub(super) fn touched(&self) -> Vec<ArtifactId> {
        self.held.borrow().artifacts.keys().copied().collect()
    }

    /// Queues a write whose answer is only whether it failed. Queued writes
    /// go out in order with the next statement that needs an answer (or the
    /// commit), in one round trip: PostgreSQL runs a connection's statements
    /// in the order they arrive, so later reads see them, and the first
    /// failure among them is that statement's failure.
    pub(super) fn defer(&self, sql: &str, params: Vec<Owned>) -> Result<()> {
        self.send_held()?;
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
    pub(super) fn defer_simple(&self, sql: &'static str) -> Result<()> {
        self.send_held()?;
        self.prefetched.take();
        let client = self.conn.client();
        self.deferred
            .borrow_mut()
            .push(Box::pin(async move { client.batch_execute(sql).await }));
        Ok(())
    }

    /// This write's time, in milliseconds, as `touched_at` keeps it.
    fn write_millis(&self) -> Result<i64> {
        let now = self.rules_now.get().or(self.now.get());
        Ok(millis(now.ok_or_else(|| {
            Error::Internal("a write without a time".into())
        })?))
    }

    /// Sends the queued writes and then `next`, together, and waits for all:
    /// the queued writes' first failure, or else `next`'s answer.
    pub(super) fn after_deferred<T>(
        &self,
        next: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        self.send_held()?;
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
    pub(super) fn locked_query(
        &self,
        lock: &str,
        key: &str,
        artifact: Option<ArtifactId>,
        sql: &str,
        params: Params,
    ) -> Result<Vec<Row>> {
        let held = artifact.is_some_and(|id| self.held.borrow().artifacts.contains_key(&id));
        if !self.write || held {
            return self.query(sql, params);
        }
        let now = self.write_millis()?;
        // Both prepared first, so they go out in this order.
        let (lock, read) = self.conn.wait(futures_util::future::join(
            self.conn.prepare(lock),
            self.conn.prepare(sql),
        ));
        let (lock, read) = (
            lock.map_err(|e| self.failure(e))?,
            read.map_err(|e| self.failure(e))?,
        );
        let (locked, rows) = self.after_deferred(async {
            let (locked, rows) = futures_util::future::join(
                self.conn.client().query(&lock, &[&key, &now]),
                self.conn.client().query(&read, params),
            )
            .await;
            Ok((locked?, rows?))
        })?;
        for row in &locked {
            let id: ArtifactId = parsed(row, 0)?;
            let touched: i64 = row.try_get(1)?;
            let mut held = self.held.borrow_mut();
            held.artifacts.entry(id).or_insert(None);
            held.touched.insert(id);
            drop(held);
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

    /// In a write, locks the artifact that `by` (SQL of `$1`, `key`)
    /// names, unless it is `artifact` and held already, and runs the query
    /// `read` (of `$1` too) in the same statement: its first row, and the
    /// column its own begin at. A read runs `read` alone.
    ///
    /// The statement reads on the snapshot taken before it waited for the
    /// lock. Every write that locks an artifact writes its row
    /// ([`PgTx::hold_touch`]), so a row version other than the snapshot's
    /// (by its `xmin` and its place, `ctid`, which no other version can take
    /// while the snapshot sees this one) means the lock's last holder
    /// committed meanwhile: `read` then runs again, after
    /// the lock. That is the rare case: most writes find their file free.
    pub(super) fn lock_and_read(
        &self,
        by: &str,
        key: &str,
        artifact: Option<ArtifactId>,
        read: &str,
    ) -> Result<Option<(Row, usize)>> {
        let held = artifact.filter(|id| self.held.borrow().artifacts.contains_key(id));
        if !self.write || held.is_some() {
            if let Some(id) = held {
                self.hold_touch(id, self.write_millis()?)?;
            }
            let row = self.query(read, &[&key])?.into_iter().next();
            return Ok(row.map(|row| (row, 0)));
        }
        let now = self.write_millis()?;
        let both = format!(
            "WITH locked AS MATERIALIZED (
                 SELECT id, touched_at, xmin, ctid FROM artifacts WHERE id = {by} FOR NO KEY UPDATE)
             SELECT locked.id, locked.touched_at,
                 EXISTS (SELECT 1 FROM artifacts a
                     WHERE a.ctid = locked.ctid AND a.xmin = locked.xmin AND a.id = locked.id),
                 r.*
             FROM locked LEFT JOIN ({read}) r ON true"
        );
        let Some(row) = self.query(&both, &[&key])?.into_iter().next() else {
            return Ok(None);
        };
        let id: ArtifactId = parsed(&row, 0)?;
        let touched: i64 = row.try_get(1)?;
        self.held.borrow_mut().artifacts.entry(id).or_insert(None);
        self.hold_touch(id, now)?;
        if touched > now {
            let again = Error::Unavailable(format!(
                "artifact {id} changed at a later time than this write's"
            ));
            *self.again.borrow_mut() = Some(again.clone());
            return Err(again);
        }
        if row.try_get::<_, Option<bool>>(2)? == Some(true) {
            let found = row.try_get::<_, Option<String>>(3)?.is_some();
            return Ok(found.then_some((row, 3)));
        }
        let row = self.query(read, &[&key])?.into_iter().next();
        Ok(row.map(|row| (row, 0)))
    }

    /// In a write, takes the lock for looking at paths (see the module's
    /// comment) before the first such look.
    pub(super) fn take_paths_lock(&self) -> Result<()> {
        if !self.write || self.held.borrow().paths {
            return Ok(());
        }
        self.defer("SELECT pg_advisory_xact_lock($1)", owned![PATHS_LOCK])?;
        self.held.borrow_mut().paths = true;
        Ok(())
    }

    /// Sends the queued writes, numbers and inserts `events` under the
    /// ledger's lock, then `inbox` under the inbox counter's, and runs
    /// `commit` (ending in COMMIT), in one round trip. Every write takes the
    /// two locks last and in that order, so numbers follow commit order and
    /// no write waits on one holding a lock it wants.
    pub(super) fn commit_with_events(
        &self,
        events: Vec<PendingEvent>,
        inbox: Vec<NewInboxItem>,
        commit: &str,
    ) -> Result<()> {
        if events.is_empty() && inbox.is_empty() {
            return self.after_deferred(self.conn.client().batch_execute(commit));
        }
        let (insert, insert_inbox) = self
            .conn
            .wait(futures_util::future::try_join(
                self.conn.prepare(INSERT_EVENTS),
                self.conn.prepare(INSERT_INBOX),
            ))
            .map_err(|e| self.failure(e))?;
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
        let told = InboxColumns::of(inbox);
        self.after_deferred(async {
            let no_events = ids.is_empty();
            let no_items = told.participants.is_empty();
            let (inserted, told, committed) = futures_util::future::join3(
                async {
                    if no_events {
                        return Ok(0);
                    }
                    self.conn
                        .client()
                        .execute(
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
                        )
                        .await
                },
                async {
                    if no_items {
                        return Ok(0);
                    }
                    self.conn
                        .client()
                        .execute(&insert_inbox, &told.params())
                        .await
                },
                self.conn.client().batch_execute(commit),
            )
            .await;
            inserted?;
            told?;
            committed
        })
    }

    /// Waits for every queued write.
    pub(super) fn flush(&self) -> Result<()> {
        self.after_deferred(async { Ok(()) })
    }

    pub(super) fn query(&self, sql: &str, params: Params) -> Result<Vec<Row>> {
        self.prefetched.take(); // it may write (UPDATE … RETURNING)
        self.after_deferred(async {
            let statement = self.conn.prepare(sql).await?;
            self.conn.client().query(&statement, params).await
        })
    }

    pub(super) fn query_opt(&self, sql: &str, params: Params) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    pub(super) fn query_one(&self, sql: &str, params: Params) -> Result<Row> {
        self.query_opt(sql, params)?
            .ok_or_else(|| Error::Internal("database: a row was expected".into()))
    }

    pub(super) fn execute(&self, sql: &str, params: Params) -> Result<u64> {
        self.prefetched.take();
        self.after_deferred(async {
            let statement = self.conn.prepare(sql).await?;
            self.conn.client().execute(&statement, params).await
        })
    }
}

impl PgTx<'_> {
    /// `Tx::now`: a manual clock's time (kept as the rules'),
    /// else the database's, read once.
    pub(super) fn time(&self, clock: &Clock) -> Result<Timestamp> {
        if clock.is_manual() {
            let now = clock.now();
            self.rules_now.set(Some(now));
            return Ok(now);
        }
        if let Some(now) = self.now.get() {
            return Ok(now);
        }
        let row = self.query_one(CLOCK, &[])?;
        let now = time_at(&row, 0)?;
        self.now.set(Some(now));
        Ok(now)
    }

    /// `Tx::savepoint`: `f`'s failure rolls back its writes, and
    /// forgets its locks and events.
    ///
    /// A group's writers rarely fail, so at first none pays for a savepoint
    /// (two statements): one that fails ends the attempt, and the next runs
    /// every writer again, each in a savepoint. The failed one runs again
    /// too: its error may have rested on an earlier writer's change that
    /// does not happen this time (another server wrote meanwhile).
    pub(super) fn in_savepoint(
        &self,
        f: &mut dyn FnMut(&dyn Tx) -> Result<()>,
    ) -> Result<Result<()>> {
        if !self.careful.get() {
            let outcome = f(self);
            if let Some(again) = self.again.borrow().clone() {
                return Err(again); // the whole transaction runs again
            }
            if outcome.is_err() {
                self.queued_failed.set(true);
                let again = Error::Internal("a writer of the group failed".into());
                *self.again.borrow_mut() = Some(again.clone());
                return Err(again);
            }
            return Ok(Ok(()));
        }
        self.defer_simple("SAVEPOINT writer")?;
        let events = self.events.borrow().len();
        let inbox = self.inbox.borrow().len();
        let held = self.held.borrow().clone();
        // The writer's queued writes are its outcome too: learnt now.
        let outcome = f(self).and_then(|()| self.flush());
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
            self.inbox.borrow_mut().truncate(inbox);
            *self.held.borrow_mut() = held;
            self.held_writes.take();
            self.stamp.take();
        }
        self.defer_simple("RELEASE SAVEPOINT writer")?;
        Ok(outcome)
    }

    /// `Tx::insert_event`: queued, to be numbered at commit.
    pub(super) fn queue_event(&self, e: NewEvent) -> Result<()> {
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
}

/// A row's columns from `.1` on, read as a row of their own.
pub(super) struct Columns<'r>(pub(super) &'r Row, pub(super) usize);

impl rows::Row for Columns<'_> {
    fn int(&self, i: usize) -> Result<i64> {
        self.0.int(self.1 + i)
    }
    fn int_opt(&self, i: usize) -> Result<Option<i64>> {
        self.0.int_opt(self.1 + i)
    }
    fn text(&self, i: usize) -> Result<String> {
        self.0.text(self.1 + i)
    }
    fn text_opt(&self, i: usize) -> Result<Option<String>> {
        self.0.text_opt(self.1 + i)
    }
    fn flag(&self, i: usize) -> Result<bool> {
        self.0.flag(self.1 + i)
    }
    fn bytes(&self, i: usize) -> Result<Vec<u8>> {
        self.0.bytes(self.1 + i)
    }
}

/// Shared fields ([`rows::Field`]) as a deferred write's parameters.
pub(super) fn owned_fields(fields: Vec<rows::Field>) -> Vec<Owned> {
    fields.into_iter().map(|f| Box::new(f) as Owned).collect()
}

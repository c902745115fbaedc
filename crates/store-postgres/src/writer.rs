//! Write transactions: each server runs one at a time (a group commit of
//! what its callers queued), on a writer's own connection where the calling
//! thread may block, and runs it again when it met another server's write.
//! Never numbers events or reads rows itself: `tx` does, inside the attempt.

use super::connect::{Conn, OpenTx, WriterConnection};
use super::tx::{met_another_write, Again, Attempt, PgTx, CLOCK};
use super::PgStore;
use crate::error::{Error, Result};
use crate::failpoint;
use crate::model::ArtifactId;
use leasedesk_store::rows::time;
use leasedesk_store::{Durability, Tx};

/// Idle writers' connections kept (a server runs one write transaction at a
/// time, a group commit; direct calls such as `user add` may add one).
const IDLE_WRITERS: usize = 2;
/// How often a write is run again after meeting another (see the module's comment).
const MAX_ATTEMPTS: usize = 16;

impl PgStore {
    /// Runs `f` in one write transaction, beside other writes of this and
    /// every other server (see the module's comment). `f`'s error rolls
    /// everything back; `f` runs again if the attempt met another write.
    ///
    /// Durability: a lease change commits without waiting for the database's
    /// log flush (`synchronous_commit = off`: a crash of the database may undo
    /// the last few, as power loss may on SQLite); a transaction that wrote a
    /// version or a proposal (`Sql::require_durable`) waits for it,
    /// switched on inside the transaction before its commit (PostgreSQL
    /// allows that, so unlike SQLite nothing runs twice).
    pub fn write<T>(
        &self,
        durability: Durability,
        mut f: impl FnMut(&dyn Tx) -> Result<T>,
    ) -> Result<T> {
        // A writer's own connection where this thread may wait on a runtime
        // of its own; else (a caller inside async code) one of the pool.
        let (writer, pooled) = match leasedesk_store::may_block_here() {
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

    /// One attempt at a write. `careful`: each writer of a group commit runs
    /// in a savepoint and learns its queued writes' outcome before the next
    /// begins (after an attempt where one failed, so that failure is its
    /// writer's alone).
    fn write_once<T>(
        &self,
        conn: Conn,
        durability: Durability,
        prelock: &std::collections::BTreeSet<ArtifactId>,
        careful: bool,
        f: &mut impl FnMut(&dyn Tx) -> Result<T>,
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
            conn.prepare(CLOCK),
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
        let inbox = std::mem::take(&mut *tx.inbox.borrow_mut());
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
        tx.commit_with_events(events, inbox, &commit)
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
}

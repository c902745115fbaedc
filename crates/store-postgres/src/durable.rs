//! What of the ledger a database crash cannot undo. Lease changes commit
//! with `synchronous_commit = off`: their COMMIT returns before the WAL is
//! flushed, so a crash may undo the last few, and their sequence numbers are
//! then given to other events. A reader must never see such an event, so
//! events are read only up to [`DurableLedger::through`], the last seq
//! whose commit the WAL has flushed.
//!
//! A commit's record enters the WAL before the commit becomes visible, so
//! an observation (one statement) of the ledger's `last_seq` and, after it,
//! `pg_current_wal_insert_lsn()` says: once the flush LSN passes that LSN,
//! every event up to `last_seq` is durable. A task of the store's own makes
//! such observations while a reader waits for events not yet durable, and
//! if the WAL writer (which flushes every `wal_writer_delay`, 200 ms by
//! default) is slower than [`FORCE_AFTER`], flushes the WAL itself with a
//! tiny synchronous commit. So readers trail writers by a few
//! milliseconds, and a commit waits for nothing.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use tokio_postgres_rustls::MakeRustlsConnect;

/// How long the task leaves a wanted event to the WAL writer before it
/// flushes the WAL itself.
const FORCE_AFTER: Duration = Duration::from_millis(5);
/// How often the task looks again while a reader waits.
const POLL: Duration = Duration::from_millis(2);

/// Observes the ledger's end, then where the WAL's inserts and flushes
/// stand (after the statement's snapshot), and the server's start (a new
/// one after a crash: LSNs observed before it mean nothing any more).
const OBSERVE: &str = "SELECT last_seq,
        (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint,
        (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint,
        pg_postmaster_start_time()::text
    FROM ledger";

/// A synchronous commit flushes the WAL up to its commit record: every
/// commit before it. It must write a row: PostgreSQL commits a transaction
/// that wrote no WAL without waiting for the flush.
const FLUSH: &str = "BEGIN; SET LOCAL synchronous_commit = on; \
    UPDATE wal_flush SET flushes = flushes + 1 WHERE id = 1; COMMIT";

/// How far the ledger is durable, as this server has seen.
#[derive(Default)]
pub(super) struct DurableLedger {
    state: Mutex<State>,
    /// Wakes readers when `through` moves.
    advanced: Condvar,
    /// Wakes the task when a reader wants more than is durable.
    wanted: tokio::sync::Notify,
}

#[derive(Default)]
struct State {
    /// Every event up to this seq is durable.
    through: u64,
    /// The highest seq a reader waits for.
    wanted: u64,
    /// Since when a reader has waited (for [`FORCE_AFTER`]).
    waiting_since: Option<Instant>,
    /// Observations `(last_seq, insert LSN)` not yet flushed, oldest first.
    pending: VecDeque<(u64, i64)>,
    /// When the database server started, as of the last observation.
    server_start: Option<String>,
}

impl DurableLedger {
    /// The last seq through which the ledger is durable, once it is at least
    /// `seq` or `timeout` has passed (then less: a reader reads up to it, and
    /// looks again later).
    pub(super) fn wait_for(&self, seq: u64, timeout: Duration) -> u64 {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.through >= seq {
            return state.through;
        }
        if state.wanted < seq {
            state.wanted = seq;
            state.waiting_since.get_or_insert_with(Instant::now);
            self.wanted.notify_one();
        }
        let (state, _) = self
            .advanced
            .wait_timeout_while(state, timeout, |s| s.through < seq && s.wanted >= seq)
            .unwrap_or_else(|p| p.into_inner());
        state.through
    }

    /// Takes in an observation; answers for how long a reader has waited,
    /// if one still does.
    fn observed(&self, last_seq: u64, insert: i64, flush: i64, start: String) -> Option<Duration> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.server_start.as_ref() != Some(&start) {
            state.pending.clear();
            state.server_start = Some(start);
        }
        let newest = state.pending.back().map_or(state.through, |(seq, _)| *seq);
        if last_seq > newest {
            state.pending.push_back((last_seq, insert));
        }
        let before = state.through;
        while let Some(&(seq, lsn)) = state.pending.front() {
            if lsn > flush {
                break;
            }
            state.through = state.through.max(seq);
            state.pending.pop_front();
        }
        // What a reader saw before a crash may have been undone: once all
        // that is committed is durable, nothing more can be waited for.
        if state.pending.is_empty() && state.wanted > state.through {
            state.wanted = state.through;
        }
        if state.through >= state.wanted {
            state.waiting_since = None;
        }
        if state.through > before || state.waiting_since.is_none() {
            self.advanced.notify_all();
        }
        state.waiting_since.map(|since| since.elapsed())
    }

    /// The connection was lost: the database may have restarted, so what
    /// was observed before says nothing.
    fn forget_observations(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.pending.clear();
        state.server_start = None;
    }

    fn is_wanted(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.wanted > state.through
    }
}

/// Moves [`DurableLedger::through`] on while a reader waits, on a
/// connection of its own, made again (after a pause) when it is lost.
pub(super) async fn track(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    ledger: std::sync::Arc<DurableLedger>,
    name: String,
) {
    let mut client: Option<tokio_postgres::Client> = None;
    loop {
        if !ledger.is_wanted() {
            ledger.wanted.notified().await;
            continue;
        }
        let c = match &client {
            Some(c) if !c.is_closed() => c,
            _ => match config.connect(tls.clone()).await {
                Ok((c, connection)) => {
                    tokio::spawn(connection);
                    client.insert(c)
                }
                Err(e) => {
                    tracing::warn!("cannot follow the WAL's flushes on {name}: {e}");
                    ledger.forget_observations();
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            },
        };
        let looked = async {
            let row = c.query_one(OBSERVE, &[]).await?;
            let last_seq = row.get::<_, i64>(0).max(0) as u64;
            let waited = ledger.observed(last_seq, row.get(1), row.get(2), row.get(3));
            match waited {
                Some(waited) if waited >= FORCE_AFTER => c.batch_execute(FLUSH).await,
                Some(_) => {
                    tokio::time::sleep(POLL).await;
                    Ok(())
                }
                None => Ok(()),
            }
        };
        if let Err(e) = looked.await {
            tracing::warn!("lost the WAL's flushes on {name}: {e}");
            client = None;
            ledger.forget_observations();
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

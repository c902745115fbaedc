//! The health check and the live-lease count of the metrics scrape: each step
//! bounded in time, and a step that gave up not started again until it ends.
//! Never waits on the store or the blobs for more than [`HEALTH_CHECK_LIMIT`].

use std::sync::Arc;
use std::time::Duration;

use super::{Bundled, Shared};
use crate::error::{Error, Result};
use crate::failpoint;

/// A bounded check still running after it was given up on.
pub(super) struct StalledCheck {
    since: std::time::Instant,
    finished: Arc<std::sync::atomic::AtomicBool>,
}

/// How long the health check waits for each thing it checks.
pub const HEALTH_CHECK_LIMIT: Duration = Duration::from_secs(2);

/// The health check's step for the store: the SQLite file is still where it
/// was opened (a server writing into a moved or deleted file would lose it
/// all at its next start), and a cheap read answers.
fn check_store(shared: &Shared) -> Result<()> {
    shared.options.failpoints.hit(failpoint::at::STORE_PROBE)?;
    if let Some(file) = shared.database_file.as_ref().filter(|file| !file.is_file()) {
        return Err(Error::Unavailable(format!(
            "the database file {} is missing: it was moved or deleted while the server runs",
            file.display()
        )));
    }
    shared.store.read(|tx| tx.last_event_seq()).map(drop)
}

/// The health check's step for the blobs: the blob folder can take an upload.
fn check_blobs(shared: &Shared) -> Result<()> {
    shared.blobs.check_writable().map_err(Error::Unavailable)
}

impl Shared {
    fn stalled_checks(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<&'static str, StalledCheck>> {
        self.stalled_checks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

impl Bundled {
    /// Whether the store and the blobs can be reached: `Err(reason)` when not.
    /// A sequence of steps, each given at most [`HEALTH_CHECK_LIMIT`].
    pub async fn health(&self) -> std::result::Result<(), String> {
        self.bounded("the database", check_store).await?;
        self.bounded("the blob store", check_blobs).await?;
        self.shared.blobs.health().await
    }

    /// Live leases now, read within [`HEALTH_CHECK_LIMIT`] (for the metrics
    /// scrape); `Err` says why not.
    pub async fn live_lease_count(&self) -> std::result::Result<u64, String> {
        self.bounded("the database", |shared| {
            shared.options.failpoints.hit(failpoint::at::STORE_PROBE)?;
            let clock = &shared.options.clock;
            shared.store.read(|tx| tx.live_lease_count(tx.now(clock)?))
        })
        .await
    }

    /// The sizes of group commits (see [`Bundled::write`]) so far; clones
    /// share the counts.
    pub fn batch_sizes(&self) -> prometheus_client::metrics::histogram::Histogram {
        self.shared.batch_sizes.clone()
    }

    /// Runs `step` (blocking work: a read, a file made) on the blocking pool
    /// and waits at most [`HEALTH_CHECK_LIMIT`] for it. `what` names the thing
    /// checked in the reason; while an earlier step of that name that gave
    /// up is still running, answers at once without starting another.
    async fn bounded<T: Send + 'static>(
        &self,
        what: &'static str,
        step: impl FnOnce(&Shared) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, String> {
        {
            let mut stalled = self.shared.stalled_checks();
            if let Some(check) = stalled.get(what) {
                if !check.finished.load(std::sync::atomic::Ordering::Acquire) {
                    return Err(format!(
                        "{what} has not answered a check begun {} s ago",
                        check.since.elapsed().as_secs()
                    ));
                }
                stalled.remove(what);
            }
        }
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let task = {
            let (shared, finished) = (self.shared.clone(), finished.clone());
            tokio::task::spawn_blocking(move || {
                let outcome = step(&shared);
                finished.store(true, std::sync::atomic::Ordering::Release);
                outcome
            })
        };
        let started = std::time::Instant::now();
        match tokio::time::timeout(HEALTH_CHECK_LIMIT, task).await {
            Ok(Ok(outcome)) => outcome.map_err(|e| format!("{what} cannot be reached: {e}")),
            Ok(Err(e)) => Err(format!("the check of {what} failed: {e}")),
            Err(_) => {
                self.shared.stalled_checks().insert(
                    what,
                    StalledCheck {
                        since: started,
                        finished,
                    },
                );
                Err(format!(
                    "{what} did not answer within {} s",
                    HEALTH_CHECK_LIMIT.as_secs()
                ))
            }
        }
    }
}

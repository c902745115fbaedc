//! The sweeper of lapsed leases: records each lapse's `lease.expired` even
//! when nobody touches the file. Never outlives whoever keeps the store open:
//! it holds the store weakly and stops when dropped.

use std::sync::Arc;
use std::time::Duration;

use super::Bundled;
use crate::error::Result;
use crate::rules;
use crate::store::Durability;

/// How often a store kept open sweeps lapsed leases.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A running sweeper of lapsed leases (see [`Bundled::spawn_sweeper`]): it
/// stops when dropped, so it lives exactly as long as whoever keeps the store open.
#[must_use = "a sweeper stops when dropped"]
pub struct Sweeper(tokio::task::JoinHandle<()>);

impl Sweeper {
    /// Stops it now, as dropping it does.
    pub fn abort(&self) {
        self.0.abort();
    }

    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Bundled {
    /// Records `lease.expired` for every lease that lapsed unrecorded,
    /// removes the blobs of staged bytes that closed check-outs dropped, and
    /// the unfinished uploads that lapsed or lost their check-out or edit.
    pub fn sweep(&self) -> Result<usize> {
        let clock = self.clock().clone();
        let lapsed = self
            .shared
            .store
            .write(Durability::Normal, |tx| rules::sweep(tx, tx.now(&clock)?))?;
        if lapsed > 0 {
            self.shared.changed.notify_waiters();
        }
        self.remove_dropped_blobs()?;
        self.sweep_uploads()?;
        Ok(lapsed)
    }

    /// Removes each blob a closed check-out's staged bytes left (see
    /// `Tx::drop_blob`) unless a row names it again. An object
    /// store's stays for its own sweep (see `Blobs::remove_unnamed`).
    fn remove_dropped_blobs(&self) -> Result<()> {
        let shared = &self.shared;
        for digest in shared.store.read(|tx| tx.dropped_blobs(100))? {
            shared
                .blobs
                .remove_unnamed(&digest, |d| shared.store.read(|tx| tx.names_blob(d)))?;
            shared
                .store
                .write(Durability::Normal, |tx| tx.forget_dropped_blob(&digest))?;
        }
        Ok(())
    }

    /// Sweeps lapsed leases every `every`, so their `lease.expired` appears even
    /// when nobody touches the file. Whoever keeps a store open for long (the
    /// server, the app's bundled session, a follower of events) holds one
    /// while it does: it stops when dropped, and by itself once the store's
    /// last handle is gone, since it holds the store only weakly.
    pub fn spawn_sweeper(&self, every: Duration) -> Sweeper {
        let store = Arc::downgrade(&self.shared);
        let participant = self.participant.clone();
        Sweeper(tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            // After a sleep (a laptop's lid), one sweep, not a burst.
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(shared) = store.upgrade() else {
                    return;
                };
                let backend = Bundled {
                    shared,
                    participant: participant.clone(),
                    device: None,
                    owner: false,
                };
                // A failed sweep is retried at the next tick; operations record lapses too.
                let _ = tokio::task::spawn_blocking(move || {
                    crate::store::may_block(|| backend.sweep())
                })
                .await;
            }
        }))
    }
}

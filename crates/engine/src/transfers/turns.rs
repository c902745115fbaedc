//! One request at a time adds to an upload on this server, and the newest
//! request wins at once: an append still reading a body when another
//! request for its upload comes (its client gone, its connection half-open)
//! stops, keeps what it checked, and gives way, so the next request waits
//! only for that, never for the old body's stall limit. Across servers the
//! upload's writer number in the store does the same (`store::uploads`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, OwnedMutexGuard};

use crate::model::UploadId;

#[derive(Default)]
pub(super) struct Turns(Arc<Mutex<HashMap<UploadId, Arc<Line>>>>);

/// The requests of one upload on this server.
#[derive(Default)]
struct Line {
    /// Requests that asked so far; the newest has the last number.
    asked: AtomicU64,
    told: Notify,
    turn: Arc<tokio::sync::Mutex<()>>,
}

/// A request's turn at an upload, until dropped.
pub(super) struct Turn {
    id: UploadId,
    line: Arc<Line>,
    ticket: u64,
    turns: Turns,
    _held: OwnedMutexGuard<()>,
}

impl Clone for Turns {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl Turns {
    /// Asks for upload `id`: tells the request holding it to stop, and
    /// waits for it to give way.
    pub(super) async fn take(&self, id: UploadId) -> Turn {
        let line = self.0.lock().expect("turns").entry(id).or_default().clone();
        let ticket = line.asked.fetch_add(1, Ordering::SeqCst) + 1;
        line.told.notify_waiters();
        let held = line.turn.clone().lock_owned().await;
        Turn {
            id,
            line,
            ticket,
            turns: self.clone(),
            _held: held,
        }
    }
}

impl Turn {
    /// Whether a newer request asked for the upload.
    pub(super) fn superseded(&self) -> bool {
        self.line.asked.load(Ordering::SeqCst) != self.ticket
    }

    /// Resolves once a newer request asks for the upload.
    pub(super) async fn until_superseded(&self) {
        loop {
            let told = self.line.told.notified();
            tokio::pin!(told);
            told.as_mut().enable();
            if self.superseded() {
                return;
            }
            told.await;
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut lines = self.turns.0.lock().expect("turns");
        // The last of its line (the map's and this one's references): gone.
        if Arc::strong_count(&self.line) == 2 {
            lines.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_newer_request_supersedes_the_holder_at_once() {
        let turns = Turns::default();
        let id = UploadId::new();
        let old = turns.take(id).await;
        assert!(!old.superseded());
        let newer = {
            let turns = turns.clone();
            tokio::spawn(async move { turns.take(id).await.superseded() })
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), old.until_superseded())
            .await
            .expect("told at once");
        drop(old);
        assert!(!newer.await.unwrap(), "the newest holds it unchallenged");
        assert!(turns.0.lock().unwrap().is_empty(), "nothing kept");
    }
}

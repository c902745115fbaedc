//! The ledger as the window reads it: a file's history page by page, the
//! newest sequence number, the newest events. It only reads.

use super::offline::Action;
use super::{history, Desk, HistoryPage};
use crate::error::{Error, Result};
use crate::model::*;

impl Desk {
    /// events before `before` (`None`: the newest). See [`history`].
    pub async fn history(
        &self,
        artifact: ArtifactId,
        before: Option<u64>,
        limit: u32,
    ) -> Result<HistoryPage> {
        let outcome =
            async { history::page(self.backend.as_ref(), artifact, before, limit).await }.await;
        self.refused_offline(Action::Read, outcome)
    }

    /// The ledger's newest sequence number (0 when empty). API.md has no
    /// "latest", so it is found with one-event pages: doubling until none
    /// comes back, then halving: some 2·log2(n) requests, not n/1000 pages.
    pub async fn last_event_seq(&self) -> Result<u64> {
        let any_after = |seq: u64| async move {
            Ok::<_, Error>(!self.backend.events(seq, 1).await?.events.is_empty())
        };
        if !any_after(0).await? {
            return Ok(0);
        }
        // There is an event after `low` and none after `high`.
        let (mut low, mut high) = (0, 1);
        while any_after(high).await? {
            low = high;
            high *= 2;
        }
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if any_after(middle).await? {
                low = middle;
            } else {
                high = middle;
            }
        }
        Ok(high)
    }

    /// The newest `limit` events, newest first.
    pub async fn recent_events(&self, limit: u32) -> Result<Vec<Event>> {
        let mut newest_first = Vec::new();
        // Events up to `end` are still to fetch; a window of as many
        // sequence numbers as are missing holds them all (or fewer, where a
        // rolled-back write left a gap).
        let mut end = self.last_event_seq().await?;
        while newest_first.len() < limit as usize && end > 0 {
            let missing = limit - newest_first.len() as u32;
            let start = end.saturating_sub(u64::from(missing));
            let page = self.backend.events(start, missing).await?;
            newest_first.extend(page.events.into_iter().filter(|e| e.seq <= end).rev());
            end = start;
        }
        Ok(newest_first)
    }
}

//! The ledger as the window reads it: a file's history page by page, the
//! newest sequence number, the newest events with the paths of the files
//! they name. It only reads.

use std::collections::BTreeMap;

use serde::Serialize;

use super::offline::Action;
use super::{history, mirror, Desk, HistoryPage};
use crate::error::{Error, Result};
use crate::model::*;

/// Events with the path of each file they name, so that the window can say
/// which file each was about without having its row: the activity feed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Activity {
    /// Newest first.
    pub events: Vec<Event>,
    /// The path of each file the events name (their own, a change's) that
    /// the mirror holds: only files the server lets you read. A file not
    /// there is left out, and the window says "a file".
    pub paths: BTreeMap<ArtifactId, RepoPath>,
}

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
    /// An event of a file you may not read comes back as an empty page that
    /// moves on (its `next`), so it counts too.
    pub async fn last_event_seq(&self) -> Result<u64> {
        let any_after = |seq: u64| async move {
            let page = self.backend.events(seq, 1).await?;
            Ok::<_, Error>(!page.events.is_empty() || page.next > seq)
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

    /// The newest `limit` events, newest first, with the paths of the
    /// files they name (see [`Desk::paths`]).
    pub async fn recent_activity(&self, limit: u32) -> Result<Activity> {
        let events = self.recent_events(limit).await?;
        let mut ids: Vec<ArtifactId> = events.iter().flat_map(mirror::named).collect();
        ids.sort_unstable();
        ids.dedup();
        let paths = self.paths(&ids).await;
        Ok(Activity { events, paths })
    }

    /// The path of each of these files, as the mirror has them: no request
    /// for a file it holds. One it lacks (new since the mirror was brought
    /// up to date) is looked for again after bringing it up to date, once;
    /// a file still not there (one you may not read, or no server answers)
    /// is left out. The mirror holds only what the server showed you, so no
    /// file you may not read is ever named.
    pub async fn paths(&self, ids: &[ArtifactId]) -> BTreeMap<ArtifactId, RepoPath> {
        let mirror = self.workspace.mirror();
        let found = |ids: &[ArtifactId]| {
            mirror
                .mirror_artifacts(ids)
                .unwrap_or_default()
                .into_iter()
                .map(|a| (a.id, a.path))
        };
        let mut paths: BTreeMap<ArtifactId, RepoPath> = found(ids).collect();
        let missing: Vec<ArtifactId> = ids
            .iter()
            .copied()
            .filter(|id| !paths.contains_key(id))
            .collect();
        if !missing.is_empty() && self.sync_mirror(&self.origin, false, &|_| {}).await.is_ok() {
            paths.extend(found(&missing));
        }
        paths
    }
}

//! The mirror of the studio's list (`workspace::mirror`), kept exact: filled
//! by pages on first use, then kept up to date by the events after its
//! sequence number, each re-reading the one artifact it names, never the
//! whole list.
//!
//! A page is exact as of its `seq`; a walk's pages are each as of their own,
//! so the events after the first page's `seq` are applied to the whole walk:
//! an artifact imported, renamed or changed meanwhile is read again, by id,
//! and ends once in the mirror, as it is now. What no event can tell (a
//! file hidden by a new permission says nothing) comes with
//! `permissions.changed`, and so does a resync. A resync fills a second
//! table and swaps it in whole: a fill cut off leaves the mirror as it was.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use serde::Serialize;

use super::Desk;
use crate::error::{Error, Result};
use crate::model::*;
use crate::workspace::{RowChange, Table};

/// Files a fill asks for at a time.
pub const MIRROR_PAGE: u32 = 2000;
/// Events a catch-up reads at a time.
const EVENT_PAGE: u32 = 1000;
/// Fills cut short by a permissions change, in a row, before giving up.
const FILL_TRIES: usize = 3;
/// Files changed since the window last asked that are named one by one;
/// past it, the window is told that everything may have.
const MOST_NAMED: usize = 1000;

/// What changed in the mirror since last taken ([`Desk::list_changes`]),
/// sent to the window after others' work and in the overview: the window
/// reads again the rows on its screen only when one of them is named, or
/// when files came, went or moved.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ListChanges {
    /// The files read again (a lease, a version).
    pub changed: Vec<ArtifactId>,
    /// Whether a file came, went or moved, or the list was filled anew:
    /// places have changed.
    pub moved: bool,
    /// The folders above the files read again (`""` the top), whose held
    /// counts may have changed, with their counts now: the tree puts these
    /// in place and reads no folder again.
    pub folders: Vec<FolderCount>,
    /// How many files the studio has that you may see.
    #[ts(type = "number")]
    pub total: u64,
}

/// What [`ListChanges`] is made of, gathered as the mirror changes.
#[derive(Default)]
pub(super) struct Changed {
    ids: std::collections::BTreeSet<ArtifactId>,
    folders: std::collections::BTreeSet<String>,
    moved: bool,
}

/// How far a fill is: `loaded` of about `total` files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct FillProgress {
    #[ts(type = "number")]
    pub loaded: u64,
    #[ts(type = "number")]
    pub total: u64,
}

/// What a sync did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synced {
    /// Filled anew by pages (first use, another origin, a store gone back
    /// in time, or a permissions change).
    Filled,
    /// Brought up to date by this many events.
    CaughtUp(usize),
}

/// Whether events read so far can be applied, or the list must be filled
/// again (what `permissions.changed` means).
enum CatchUp {
    /// Applied `applied` events, through `seq`.
    Through {
        seq: u64,
        applied: usize,
    },
    Refill,
}

/// The artifacts an event names: its own, or a change's files.
pub(super) fn named(event: &Event) -> Vec<ArtifactId> {
    let mut ids: Vec<ArtifactId> = event.artifact_id.into_iter().collect();
    if let Some(files) = event.data.get("files").and_then(|f| f.as_array()) {
        ids.extend(
            files
                .iter()
                .filter_map(|f| f["artifact_id"].as_str()?.parse::<ArtifactId>().ok()),
        );
    }
    ids
}

impl Desk {
    /// Makes the mirror exact now, for `origin` (the server or data folder
    /// this desk works on; with the participant, what the mirror is of).
    /// Fills it by pages when there is none of this origin, or when
    /// `check_store` finds the store behind the mirror (restored from a
    /// backup); else applies the events after its sequence number.
    /// `progress` is told after each page of a fill.
    pub async fn sync_mirror(
        &self,
        origin: &str,
        check_store: bool,
        progress: &(dyn Fn(FillProgress) + Send + Sync),
    ) -> Result<Synced> {
        self.sync_mirror_by(origin, check_store, MIRROR_PAGE, progress)
            .await
    }

    /// [`Desk::sync_mirror`] with pages of `page` files.
    pub async fn sync_mirror_by(
        &self,
        origin: &str,
        check_store: bool,
        page: u32,
        progress: &(dyn Fn(FillProgress) + Send + Sync),
    ) -> Result<Synced> {
        let _turn = self.mirror_turn.lock().await;
        let origin = format!("{origin} as {}", self.me().await?);
        let state = self.workspace.mirror().mirror_state()?;
        if let Some(state) = state.filter(|s| s.origin == origin) {
            let behind = check_store
                && self
                    .backend
                    .artifact_page(ArtifactQuery::page(1))
                    .await?
                    .seq
                    < state.seq;
            if !behind {
                if let CatchUp::Through { applied, .. } =
                    self.catch_up(state.seq, Table::Mirror).await?
                {
                    return Ok(Synced::CaughtUp(applied));
                }
            }
        }
        for _ in 0..FILL_TRIES {
            if self.fill(&origin, page, progress).await? {
                return Ok(Synced::Filled);
            }
        }
        Err(Error::Unavailable(
            "the studio's permissions kept changing while its list was read: try again".into(),
        ))
    }

    /// Fills the mirror's second table by pages, applies the events since
    /// the first page, and swaps it in; `false` when a permissions change
    /// came meanwhile (the table is then left unused).
    async fn fill(
        &self,
        origin: &str,
        page: u32,
        progress: &(dyn Fn(FillProgress) + Send + Sync),
    ) -> Result<bool> {
        let mirror = self.workspace.mirror();
        mirror.begin_filling()?;
        let top = self.backend.folders("").await?;
        let total = top.files + top.folders.iter().map(|f| f.files).sum::<u64>();
        let mut query = ArtifactQuery::page(page);
        let mut since = None;
        let mut loaded = 0;
        loop {
            let listed = self.backend.artifact_page(query.clone()).await?;
            since.get_or_insert(listed.seq);
            loaded += listed.artifacts.len() as u64;
            let rows: Vec<RowChange> = listed
                .artifacts
                .into_iter()
                .map(|a| RowChange::Put(Box::new(a)))
                .collect();
            mirror.apply_to_mirror(Table::Filling, &rows, None)?;
            progress(FillProgress {
                loaded,
                total: total.max(loaded),
            });
            match listed.next {
                Some(next) => query.after = Some(next),
                None => break,
            }
        }
        match self.catch_up(since.unwrap_or(0), Table::Filling).await? {
            CatchUp::Through { seq, .. } => {
                mirror.finish_filling(origin, seq)?;
                self.forget_places();
                self.note_changes(&[], true);
                Ok(true)
            }
            CatchUp::Refill => Ok(false),
        }
    }

    /// Applies the events after `after` to `table`, each artifact they
    /// name read again (once per page of events); on the mirror, its
    /// sequence number moves with each page, in the same transaction.
    async fn catch_up(&self, after: u64, table: Table) -> Result<CatchUp> {
        let (mut after, mut applied) = (after, 0);
        loop {
            let page = self.backend.events(after, EVENT_PAGE).await?;
            // A page of events of files hidden from the caller is empty
            // and moves on: only a page that does not move is the end.
            if page.events.is_empty() && page.next <= after {
                return Ok(CatchUp::Through {
                    seq: after,
                    applied,
                });
            }
            if page.events.iter().any(|e| e.kind == "permissions.changed") {
                return Ok(CatchUp::Refill);
            }
            let mut seen = HashSet::new();
            let mut changes = Vec::new();
            for id in page.events.iter().flat_map(named) {
                if seen.insert(id) {
                    changes.push(self.read_again(id).await?);
                }
            }
            let seq = (table == Table::Mirror).then_some(page.next);
            let moved = self
                .workspace
                .mirror()
                .apply_to_mirror(table, &changes, seq)?;
            if table == Table::Mirror {
                if moved.moved {
                    self.forget_places();
                } else if moved.reordered {
                    self.forget_sorted_places();
                }
                self.note_changes(&changes, moved.moved);
            }
            applied += page.events.len();
            after = page.next;
            // Past the last event the stream told of, a short page is the
            // end: the empty page that would say so is not asked for.
            let heard = self.heard.load(Ordering::Relaxed);
            if heard > 0 && after >= heard && page.events.len() < EVENT_PAGE as usize {
                return Ok(CatchUp::Through {
                    seq: after,
                    applied,
                });
            }
        }
    }

    /// One artifact as it is now, or gone for this designer.
    async fn read_again(&self, id: ArtifactId) -> Result<RowChange> {
        match self.backend.artifact(id).await {
            Ok(artifact) => Ok(RowChange::Put(Box::new(artifact))),
            Err(Error::NotFound(_)) => Ok(RowChange::Gone(id)),
            Err(e) => Err(e),
        }
    }

    /// The event stream told of event `seq`: a catch-up that reaches it
    /// ends at its first short page.
    pub fn heard_of(&self, seq: u64) {
        self.heard.fetch_max(seq, Ordering::Relaxed);
    }

    /// Brings the mirror up to date by the events since (see
    /// [`Desk::sync_mirror`]), then says what changed in it since last
    /// taken: what the window reads again, and nothing else.
    pub async fn list_changes(&self) -> Result<ListChanges> {
        self.sync_mirror(&self.origin, false, &|_| {}).await?;
        self.take_changes()
    }

    /// What changed in the mirror since last taken, the counts of the
    /// folders above it, and the mirror's count now. Taken only once all
    /// of it is read: a failed read leaves the changes for the next.
    pub(super) fn take_changes(&self) -> Result<ListChanges> {
        let mut changed = self.changed.lock().unwrap_or_else(|p| p.into_inner());
        let folders: Vec<String> = changed.folders.iter().cloned().collect();
        let counts = self.folder_counts(&folders)?;
        let total = self.workspace.mirror().mirror_count("")?.files;
        let taken = std::mem::take(&mut *changed);
        Ok(ListChanges {
            changed: taken.ids.into_iter().collect(),
            moved: taken.moved,
            folders: counts,
            total,
        })
    }

    fn note_changes(&self, changes: &[RowChange], moved: bool) {
        let mut changed = self.changed.lock().unwrap_or_else(|p| p.into_inner());
        changed.moved |= moved;
        for change in changes {
            match change {
                RowChange::Put(a) => {
                    changed.ids.insert(a.id);
                    let above = folders_above(a.path.as_str());
                    changed
                        .folders
                        .extend(above.into_iter().map(|(f, _)| f.to_owned()));
                }
                RowChange::Gone(id) => {
                    changed.ids.insert(*id);
                }
            }
        }
        // So many that the window had better read its screen again anyway.
        if changed.ids.len() > MOST_NAMED || changed.folders.len() > MOST_NAMED {
            changed.ids.clear();
            changed.folders.clear();
            changed.moved = true;
        }
    }

    /// A file came, went or moved: the places of a folder's files known
    /// (`listing`) may be others now.
    fn forget_places(&self) {
        self.places
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .forget();
    }

    /// A file's size, save time, version or holder changed: its places in
    /// those orders may be others now (by path they are not).
    fn forget_sorted_places(&self) {
        self.places
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .forget_sorted();
    }
}

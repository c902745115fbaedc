//! What the window lists, a screen at a time: the files under a folder by
//! their place in it (read from the mirror, so scrolling asks the server
//! nothing), the folder tree with counts, and the server's answers to a
//! search and to "held by others" (with the paths held with no file yet).
//! Nothing here grows with the studio: a page is what is asked for, a
//! count is one row.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::offline::is_unreachable;
use super::overview::FileRow;
use super::Desk;
use crate::error::{Error, Result};
use crate::model::*;
use crate::workspace::{Cursor, ListOrder};

/// The most rows one request for a folder's files or a search gives.
pub const MOST_ROWS: u32 = 1000;
/// Places remembered per folder (see [`Places`]); past it they start again.
const MOST_PLACES: usize = 4096;

/// Rows of a folder's files, by place: `rows[0]` is the file at `offset`
/// among the `total` under `folder` (at any depth), by path.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct FolderRows {
    pub folder: String,
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub offset: u64,
    pub rows: Vec<FileRow>,
}

/// A page of a search, or of the files others hold, as the server answers:
/// `next` goes on from where it stopped; null on the last. Of the files
/// others hold, `holds` are the paths they hold with no file yet (Git LFS
/// locks taken before the file is added), by path, among the page's rows;
/// none offline (the mirror keeps files only).
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct FoundRows {
    pub rows: Vec<FileRow>,
    pub holds: Vec<PathHold>,
    pub next: Option<String>,
}

/// The place in each order of a folder that a page began at (its path, and
/// its key in an order by another key), so the next page near it walks
/// the index from there and not from the top (a million places from the
/// top is 70 ms; a screen from a known place is nothing). Forgotten when a
/// file comes, goes or moves, which moves places; in an order by another
/// key, also when a file's key changes.
#[derive(Default)]
pub(super) struct Places {
    folder: String,
    order: ListOrder,
    at: BTreeMap<u64, Cursor>,
}

impl Places {
    pub fn forget(&mut self) {
        self.at.clear();
    }

    /// Forgets the places of an order by another key than the path.
    pub fn forget_sorted(&mut self) {
        if self.order != ListOrder::PATH {
            self.at.clear();
        }
    }

    /// The known place at or before `offset` under `folder` in `order`,
    /// and its cursor.
    fn before(&mut self, folder: &str, order: ListOrder, offset: u64) -> Option<(u64, Cursor)> {
        if self.folder != folder || self.order != order {
            self.folder = folder.to_owned();
            self.order = order;
            self.at.clear();
        }
        let (place, cursor) = self.at.range(..=offset).next_back()?;
        Some((*place, cursor.clone()))
    }

    fn remember(&mut self, offset: u64, cursor: &Cursor) {
        if self.at.len() >= MOST_PLACES {
            self.at.clear();
        }
        self.at.insert(offset, cursor.clone());
    }
}

/// `folder` as a folder's path (`""` or ending in `/`), or 422.
fn checked_folder(folder: &str) -> Result<&str> {
    if folder.is_empty() || folder.ends_with('/') {
        Ok(folder)
    } else {
        Err(Error::Invalid(format!(
            "{folder:?} is not a folder: a folder's path ends in /"
        )))
    }
}

impl Desk {
    /// The files under `folder` from place `offset`, at most `limit` (1 to
    /// [`MOST_ROWS`]), from the mirror as it is (the overview brings it up
    /// to date), each with its copy's state here.
    pub async fn folder_rows(&self, folder: &str, offset: u64, limit: u32) -> Result<FolderRows> {
        self.folder_rows_in(folder, ListOrder::PATH, offset, limit)
            .await
    }

    /// The files under `folder` in `order` from place `offset`, as
    /// [`Desk::folder_rows`]: by path, or by size, save time, version or
    /// holder (ties by path), each a walk along its index in the mirror.
    pub async fn folder_rows_in(
        &self,
        folder: &str,
        order: ListOrder,
        offset: u64,
        limit: u32,
    ) -> Result<FolderRows> {
        let folder = checked_folder(folder)?.to_owned();
        let limit = limit.clamp(1, MOST_ROWS);
        let desk = self.clone();
        let asked = folder.clone();
        let (total, offset, artifacts) = tokio::task::spawn_blocking(move || {
            let mirror = desk.workspace.mirror();
            let total = mirror.mirror_count(&folder)?.files;
            let offset = offset.min(total);
            let mut places = desk.places.lock().unwrap_or_else(|p| p.into_inner());
            let (place, from) = match places.before(&folder, order, offset) {
                Some((place, cursor)) => (place, Some(cursor)),
                None => (0, None),
            };
            let skip = offset - place;
            // By path too: its order's walk is one range of the path index.
            let artifacts = match mirror.mirror_cursor_at(&folder, order, from.as_ref(), skip)? {
                Some(first) => {
                    places.remember(offset, &first);
                    mirror.mirror_rows_in(&folder, order, Some(&first), limit)?
                }
                None => Vec::new(),
            };
            Ok::<_, Error>((total, offset, artifacts))
        })
        .await
        .map_err(|e| Error::Internal(format!("listing task: {e}")))??;
        Ok(FolderRows {
            rows: self.rows_of(artifacts).await?,
            folder: asked,
            total,
            offset,
        })
    }

    /// The folders directly under `folder` with how many files are under
    /// each and how many of those are held, and the files directly in it:
    /// from the mirror, which keeps them counted.
    pub fn folder_tree(&self, folder: &str) -> Result<FolderList> {
        self.workspace
            .mirror()
            .mirror_folders(checked_folder(folder)?)
    }

    /// The counts of these folders (at most [`MOST_ROWS`]), from the mirror:
    /// those a change named (`ListChanges::folders`), or the tree's top.
    pub fn folder_counts(&self, folders: &[String]) -> Result<Vec<FolderCount>> {
        let mirror = self.workspace.mirror();
        folders
            .iter()
            .take(MOST_ROWS as usize)
            .map(|folder| mirror.mirror_count(checked_folder(folder)?))
            .collect()
    }

    /// Files whose path contains `text` (any case), across the studio, by
    /// path after `after`: the server's answer; offline, the mirror's.
    pub async fn search_rows(
        &self,
        text: &str,
        after: Option<String>,
        limit: u32,
    ) -> Result<FoundRows> {
        let query = ArtifactQuery {
            limit: Some(limit.clamp(1, MOST_ROWS)),
            after,
            prefix: None,
            text: Some(text.to_owned()),
            held: false,
        };
        self.found_rows(query, |_| true).await
    }

    /// The files someone else holds now, and the paths they hold with no
    /// file yet, by path after `after`: the server's answer; offline, the
    /// mirror's files.
    pub async fn held_by_others(&self, after: Option<String>, limit: u32) -> Result<FoundRows> {
        let me = self.me().await?;
        let query = ArtifactQuery {
            limit: Some(limit.clamp(1, MOST_ROWS)),
            after,
            prefix: None,
            text: None,
            held: true,
        };
        let mut found = self
            .found_rows(query, |a| {
                a.lease.as_ref().is_some_and(|l| l.participant != me)
            })
            .await?;
        found.holds.retain(|h| h.lease.participant != me);
        Ok(found)
    }

    async fn found_rows(
        &self,
        query: ArtifactQuery,
        keep: impl Fn(&Artifact) -> bool,
    ) -> Result<FoundRows> {
        let query = query.checked().map_err(|e| Error::Invalid(e.to_string()))?;
        let (artifacts, holds, next) = match self.backend.artifact_page(query.clone()).await {
            Ok(page) => (page.artifacts, page.holds, page.next),
            Err(e) if is_unreachable(&e) => {
                self.link.went_offline(self.clock.now());
                let limit = query.limit.unwrap_or(MOST_ROWS);
                let desk = self.clone();
                let found = tokio::task::spawn_blocking(move || {
                    desk.workspace.mirror().mirror_matching(
                        query.text.as_deref(),
                        query.held,
                        query.after.as_deref(),
                        limit,
                    )
                })
                .await
                .map_err(|e| Error::Internal(format!("search task: {e}")))??;
                let next = (found.len() == limit as usize)
                    .then(|| found.last().map(|a| a.path.to_string()))
                    .flatten();
                (found, Vec::new(), next)
            }
            Err(e) => return Err(e),
        };
        Ok(FoundRows {
            rows: self
                .rows_of(artifacts.into_iter().filter(|a| keep(a)).collect())
                .await?,
            holds,
            next,
        })
    }

    /// The rows of these artifacts, with your check-outs as the overview
    /// last fetched them (asked for, when it has not yet), and local states
    /// from the digest cache (`Checking` for a copy changed since hashed).
    pub(super) async fn rows_of(&self, artifacts: Vec<Artifact>) -> Result<Vec<FileRow>> {
        let seen = self.link.seen().as_ref().map(|s| s.checkouts.clone());
        let checkouts = match seen {
            Some(checkouts) => checkouts,
            None => self.my_checkouts().await?,
        };
        self.rows_with(artifacts, &checkouts).await
    }

    /// The rows of these artifacts, each with your newest open check-out
    /// of it among `checkouts` (after a lapse one file may have two: the
    /// newest holds the lease).
    pub(super) async fn rows_with(
        &self,
        artifacts: Vec<Artifact>,
        checkouts: &[Checkout],
    ) -> Result<Vec<FileRow>> {
        let mut mine: HashMap<ArtifactId, Checkout> = HashMap::new();
        for checkout in checkouts {
            let newer = mine
                .get(&checkout.artifact_id)
                .is_none_or(|held| checkout.created_at > held.created_at);
            if newer {
                mine.insert(checkout.artifact_id, checkout.clone());
            }
        }
        let workspace = self.workspace.clone();
        let device = self.device.clone();
        tokio::task::spawn_blocking(move || {
            artifacts
                .into_iter()
                .map(|artifact| {
                    let mine = mine.remove(&artifact.id);
                    let local = if artifact.path.placement_problem().is_some() {
                        crate::workspace::LocalState::Unplaceable
                    } else {
                        match workspace.known_digest(&artifact.path)? {
                            Ok(digest) => workspace.state_of(&artifact, mine.is_some(), digest)?,
                            Err(()) => crate::workspace::LocalState::Checking,
                        }
                    };
                    FileRow::of(&workspace, device.as_deref(), artifact, mine, local)
                })
                .collect::<Result<Vec<_>>>()
        })
        .await
        .map_err(|e| Error::Internal(format!("listing task: {e}")))?
    }
}

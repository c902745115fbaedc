//! The window's picture: every file with its holder and its copy's state
//! here, your check-outs and the open proposals; offline, the view last
//! fetched with local states as they are now. It reads; it never changes a
//! lease or a copy.

use std::path::PathBuf;

use serde::Serialize;

use super::offline::{self, is_unreachable};
use super::Desk;
use crate::error::{Error, Result};
use crate::model::*;
use crate::workspace::{LocalState, Workspace};

/// One file of the store as the window lists it.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct FileRow {
    pub artifact: Artifact,
    pub local: LocalState,
    /// Your open check-out of it, if any.
    pub mine: Option<Checkout>,
    /// Where its copy is or would go; `None` for a path that cannot be placed.
    pub local_path: Option<PathBuf>,
    /// The size of its copy here, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub local_size: Option<u64>,
    /// Your check-out of it cannot be checked in here: made on another
    /// device and its copy to edit not got here, or its copy not here
    /// (`desk::held_elsewhere`).
    pub elsewhere: bool,
}

impl FileRow {
    /// The row of `artifact`, whose copy is in state `local`, with your
    /// check-out `mine` of it. Blocking: reads the workspace's index.
    pub(super) fn of(
        workspace: &Workspace,
        device: Option<&str>,
        artifact: Artifact,
        mine: Option<Checkout>,
        local: LocalState,
    ) -> Result<Self> {
        let elsewhere = super::elsewhere::row_elsewhere(workspace, device, mine.as_ref(), local)?;
        Ok(FileRow {
            local_path: workspace.local_path(&artifact.path).ok(),
            local_size: workspace.local_size(&artifact.path)?,
            artifact,
            local,
            mine,
            elsewhere,
        })
    }
}

/// Everything the window shows at once but the list of files (which it
/// reads a screen at a time: `listing`).
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Overview {
    pub me: Participant,
    pub now: Timestamp,
    /// The rows of the files your check-outs, the open proposals and the
    /// requests name: what the other tabs show, however large the studio.
    pub involved: Vec<FileRow>,
    /// What changed in the list since the window last asked, and how many
    /// files the studio has that you may see.
    pub changes: super::ListChanges,
    /// Your open check-outs, soonest expiry first.
    pub checkouts: Vec<Checkout>,
    pub proposals: Vec<Proposal>,
    /// The requests to and from you that still stand (open or replied),
    /// newest first.
    pub requests: Vec<Request>,
    /// Set when no server answered: this is the view fetched then, with
    /// local states as they are now.
    pub offline_since: Option<Timestamp>,
    /// The server that answers, for a remote session (the shell fills it in).
    pub server: Option<String>,
    /// How long a check-out lasts when no time is asked for.
    #[ts(type = "number")]
    pub default_checkout_seconds: u64,
}

impl Desk {
    /// The picture; first the mirror of the studio's list is brought up to
    /// date by the events since (see `mirror`), so the server sends what
    /// changed, not the list, and the window then reads its screen of it
    /// (`listing`). Local states come from the digest cache: a copy whose
    /// size or mtime changed shows as `Checking` (see
    /// [`Desk::stale_digests`]), so listing never waits for a hash. When no
    /// server answers, the view last fetched is given, marked with its time
    /// (`offline_since`), with local states as they are now.
    pub async fn overview(&self) -> Result<Overview> {
        let fetched = tokio::try_join!(
            self.me(),
            self.sync_mirror(&self.origin, false, &|_| {}),
            self.backend.checkouts(true),
            self.backend.proposals(ProposalFilter {
                artifact: None,
                state: Some(ProposalState::Open),
            }),
            self.backend.requests(true),
        );
        let seen = match fetched {
            Ok((me, _, checkouts, proposals, requests)) => {
                let seen = offline::Seen {
                    me,
                    checkouts,
                    proposals,
                    requests,
                    fetched_at: self.clock.now(),
                };
                *self.link.seen() = Some(seen.clone());
                self.link.came_online();
                seen
            }
            Err(e) if is_unreachable(&e) => {
                self.link.went_offline(self.clock.now());
                match self.link.seen().clone() {
                    Some(seen) => seen,
                    None => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        self.view_of(seen).await
    }

    /// The picture of a view, with local states from the workspace now.
    async fn view_of(&self, seen: offline::Seen) -> Result<Overview> {
        let offline_since = self.connection().offline_since();
        let offline::Seen {
            me,
            mut checkouts,
            proposals,
            requests,
            ..
        } = seen;
        let named: Vec<ArtifactId> = checkouts
            .iter()
            .map(|c| c.artifact_id)
            .chain(proposals.iter().map(|p| p.artifact_id))
            .chain(requests.iter().map(|r| r.artifact_id))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mirror = self.workspace.clone();
        let artifacts =
            tokio::task::spawn_blocking(move || mirror.mirror().mirror_artifacts(&named))
                .await
                .map_err(|e| Error::Internal(format!("listing task: {e}")))??;
        let involved = self.rows_with(artifacts, &checkouts).await?;
        let changes = self.take_changes()?;
        checkouts.sort_by_key(|c| c.expires_at);
        Ok(Overview {
            me,
            now: self.clock.now(),
            involved,
            changes,
            checkouts,
            proposals,
            requests,
            offline_since,
            server: None,
            default_checkout_seconds: crate::model::DEFAULT_CHECKOUT_TTL_SECONDS,
        })
    }

    /// Your open check-outs; offline, as last seen.
    pub async fn my_checkouts(&self) -> Result<Vec<Checkout>> {
        let fetched = self.backend.checkouts(true).await;
        self.or_as_seen(fetched, |seen| seen.checkouts.clone())
    }

    /// The row of the file at `path`, as [`Desk::row`] (offline, from the view kept).
    pub async fn row_at(&self, path: &RepoPath) -> Result<FileRow> {
        match self.backend.artifact_by_path(path).await {
            Ok(artifact) => self.row(artifact.id).await,
            Err(e) if is_unreachable(&e) => {
                self.link.went_offline(self.clock.now());
                let parts = self
                    .workspace
                    .mirror()
                    .mirror_at(path.as_str())?
                    .and_then(|artifact| self.seen_row_parts(artifact.id));
                match parts {
                    Some((artifact, checkouts)) => self.row_of(artifact, checkouts).await,
                    None => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Repo paths whose local copies must be hashed before their state is known.
    pub fn stale_digests(overview: &Overview) -> Vec<RepoPath> {
        overview
            .involved
            .iter()
            .filter(|row| row.local == LocalState::Checking)
            .map(|row| row.artifact.path.clone())
            .collect()
    }

    /// One file's row, hashing its local copy if it changed (blocking work
    /// runs off the async threads). Offline, its artifact and your
    /// check-outs are as last seen; its local state is now's.
    pub async fn row(&self, artifact: ArtifactId) -> Result<FileRow> {
        let fetched = tokio::try_join!(
            self.backend.artifact(artifact),
            self.backend.checkouts(true)
        );
        let (artifact, checkouts) = match fetched {
            Ok(parts) => parts,
            Err(e) if is_unreachable(&e) => {
                self.link.went_offline(self.clock.now());
                self.seen_row_parts(artifact).ok_or(e)?
            }
            Err(e) => return Err(e),
        };
        self.row_of(artifact, checkouts).await
    }

    async fn row_of(&self, artifact: Artifact, checkouts: Vec<Checkout>) -> Result<FileRow> {
        // After a lapse one file may have two open check-outs of yours: the
        // newest holds the lease (as in `rows_with`).
        let mine = checkouts
            .into_iter()
            .filter(|c| c.artifact_id == artifact.id)
            .max_by_key(|c| c.created_at);
        let (workspace, device) = (self.workspace.clone(), self.device.clone());
        tokio::task::spawn_blocking(move || {
            let local = workspace.local_state(&artifact, mine.is_some())?;
            FileRow::of(&workspace, device.as_deref(), artifact, mine, local)
        })
        .await
        .map_err(|e| Error::Internal(format!("hashing task: {e}")))?
    }
}

//! What the desktop app shows and does, without the desktop: the file list
//! with each file's holder and local state, the user's own check-outs and the
//! open proposals, and each action the user can take, through the workspace
//! and one backend. Nothing here acts on its own: every lease change starts
//! with a call from the user's click.

mod history;
mod offline;

pub use crate::previews::{PreviewCache, DEFAULT_BOUND_BYTES as DEFAULT_PREVIEW_CACHE_BYTES};
pub use history::{CheckoutEnd, CheckoutEntry, HistoryEntry, HistoryPage};
pub use offline::{is_unreachable, reconnect_delay, Action, Connection};

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::backend::{Backend, Cancel, Progress};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::model::*;
use crate::workspace::{CheckedOut, Closed, LocalState, Workspace};

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
}

/// Everything the window shows at once.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Overview {
    pub me: Participant,
    pub now: Timestamp,
    pub files: Vec<FileRow>,
    /// Your open check-outs, soonest expiry first.
    pub checkouts: Vec<Checkout>,
    pub proposals: Vec<Proposal>,
    /// Set when no server answered: this is the view fetched then, with
    /// local states as they are now.
    pub offline_since: Option<Timestamp>,
    /// The server that answers, for a remote session (the shell fills it in).
    pub server: Option<String>,
    /// How long a check-out lasts when no time is asked for.
    #[ts(type = "number")]
    pub default_checkout_seconds: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum Decision {
    Accept,
    Rebuild,
    Reject,
}

/// What a restore did: where your changes went (none when the copy had none).
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Restored {
    pub checkout: CheckoutId,
    #[ts(type = "number")]
    pub version: u64,
    pub backup: Option<PathBuf>,
    /// The next check-in's description, prefilled: "Restored version N".
    pub draft: String,
}

#[derive(Clone)]
pub struct Desk {
    backend: Arc<dyn Backend>,
    workspace: Workspace,
    clock: Clock,
    previews: PreviewCache,
    digests: Arc<std::sync::Mutex<KnownDigests>>,
    link: Arc<offline::Link>,
}

/// Digests of versions and proposals already asked for (they never change).
#[derive(Default)]
struct KnownDigests {
    versions: HashMap<(ArtifactId, u64), Digest>,
    proposals: HashMap<ProposalId, Digest>,
}

impl Desk {
    /// A desk whose previews are cached beside the workspace's index (see
    /// [`Desk::with_preview_cache`] for the app's cache folder).
    pub fn new(backend: Arc<dyn Backend>, workspace: Workspace, clock: Clock) -> Self {
        let previews = PreviewCache::new(
            workspace.state_dir().join("previews"),
            DEFAULT_PREVIEW_CACHE_BYTES,
        );
        Self {
            backend,
            workspace,
            clock,
            previews,
            digests: Default::default(),
            link: Default::default(),
        }
    }

    /// Keeps previews in `cache` instead.
    pub fn with_preview_cache(mut self, cache: PreviewCache) -> Self {
        self.previews = cache;
        self
    }

    pub fn preview_cache(&self) -> &PreviewCache {
        &self.previews
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The whole picture. Local states come from the digest cache: a copy
    /// whose size or mtime changed shows as `Checking` (see
    /// [`Desk::stale_digests`]), so listing never waits for a hash. When no
    /// server answers, the view last fetched is given, marked with its time
    /// (`offline_since`), with local states as they are now.
    pub async fn overview(&self) -> Result<Overview> {
        let fetched = tokio::try_join!(
            self.backend.me(),
            self.backend.artifacts(),
            self.backend.checkouts(true),
            self.backend.proposals(ProposalFilter {
                artifact: None,
                state: Some(ProposalState::Open),
            }),
        );
        let seen = match fetched {
            Ok((me, artifacts, checkouts, proposals)) => {
                let seen = offline::Seen {
                    me,
                    artifacts,
                    checkouts,
                    proposals,
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

    /// The rows of a view, with local states from the workspace now.
    async fn view_of(&self, seen: offline::Seen) -> Result<Overview> {
        let offline_since = self.connection().offline_since();
        let offline::Seen {
            me,
            artifacts,
            checkouts,
            proposals,
            ..
        } = seen;
        let mut mine: HashMap<ArtifactId, Checkout> = HashMap::new();
        for checkout in &checkouts {
            let newer = mine
                .get(&checkout.artifact_id)
                .is_none_or(|held| checkout.created_at > held.created_at);
            if newer {
                mine.insert(checkout.artifact_id, checkout.clone());
            }
        }
        let workspace = self.workspace.clone();
        let files = tokio::task::spawn_blocking(move || {
            artifacts
                .into_iter()
                .map(|artifact| {
                    let mine = mine.remove(&artifact.id);
                    let local = if artifact.path.placement_problem().is_some() {
                        LocalState::Unplaceable
                    } else {
                        match workspace.known_digest(&artifact.path)? {
                            Ok(digest) => workspace.state_of(&artifact, mine.is_some(), digest)?,
                            Err(()) => LocalState::Checking,
                        }
                    };
                    Ok(FileRow {
                        local_path: workspace.local_path(&artifact.path).ok(),
                        artifact,
                        local,
                        mine,
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .await
        .map_err(|e| Error::Internal(format!("listing task: {e}")))??;
        let mut checkouts = checkouts;
        checkouts.sort_by_key(|c| c.expires_at);
        Ok(Overview {
            me,
            now: self.clock.now(),
            files,
            checkouts,
            proposals,
            offline_since,
            server: None,
            default_checkout_seconds: crate::model::DEFAULT_CHECKOUT_TTL_SECONDS,
        })
    }

    /// Whether the server answered the desk's last request.
    pub fn connection(&self) -> Connection {
        *self.link.connection.borrow()
    }

    /// Told each time the connection changes (offline, or back).
    pub fn connection_changes(&self) -> tokio::sync::watch::Receiver<Connection> {
        self.link.connection.subscribe()
    }

    /// Asks the server who you are, only to learn whether it answers: the
    /// one request made to reconnect. Any answer, even a refusal, is a server.
    pub async fn probe(&self) -> Connection {
        match self.backend.me().await {
            Err(e) if is_unreachable(&e) => self.link.went_offline(self.clock.now()),
            _ => self.link.came_online(),
        }
        self.connection()
    }

    /// Notes a server that did not answer, and gives `action`'s refusal for it.
    fn refused_offline<T>(&self, action: Action, outcome: Result<T>) -> Result<T> {
        outcome.map_err(|e| {
            if is_unreachable(&e) {
                self.link.went_offline(self.clock.now());
                action.refused()
            } else {
                e
            }
        })
    }

    /// Your open check-outs; offline, as last seen.
    pub async fn my_checkouts(&self) -> Result<Vec<Checkout>> {
        match self.backend.checkouts(true).await {
            Err(e) if is_unreachable(&e) => {
                self.link.went_offline(self.clock.now());
                let seen = self.link.seen();
                seen.as_ref().map(|s| s.checkouts.clone()).ok_or(e)
            }
            fetched => fetched,
        }
    }

    /// The row of the file at `path`, as [`Desk::row`] (offline, from the view kept).
    pub async fn row_at(&self, path: &RepoPath) -> Result<FileRow> {
        match self.backend.artifact_by_path(path).await {
            Ok(artifact) => self.row(artifact.id).await,
            Err(e) if is_unreachable(&e) => {
                self.link.went_offline(self.clock.now());
                let parts = self
                    .link
                    .seen()
                    .as_ref()
                    .and_then(|seen| seen.row_parts(seen.by_path(path)?));
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
            .files
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
                let parts = self
                    .link
                    .seen()
                    .as_ref()
                    .and_then(|s| s.row_parts(artifact));
                parts.ok_or(e)?
            }
            Err(e) => return Err(e),
        };
        self.row_of(artifact, checkouts).await
    }

    async fn row_of(&self, artifact: Artifact, checkouts: Vec<Checkout>) -> Result<FileRow> {
        // After a lapse one file may have two open check-outs of yours: the
        // newest holds the lease (as in `overview`).
        let mine = checkouts
            .into_iter()
            .filter(|c| c.artifact_id == artifact.id)
            .max_by_key(|c| c.created_at);
        let workspace = self.workspace.clone();
        let holding = mine.is_some();
        let (artifact, local) = tokio::task::spawn_blocking(move || {
            let local = workspace.local_state(&artifact, holding);
            (artifact, local)
        })
        .await
        .map_err(|e| Error::Internal(format!("hashing task: {e}")))?;
        Ok(FileRow {
            local_path: self.workspace.local_path(&artifact.path).ok(),
            local: local?,
            artifact,
            mine,
        })
    }

    pub async fn check_out(
        &self,
        artifact: ArtifactId,
        request: CheckoutRequest,
        progress: Option<Progress>,
    ) -> Result<CheckedOut> {
        let outcome = async {
            self.workspace
                .check_out(self.backend.as_ref(), artifact, request, progress)
                .await
        }
        .await;
        self.refused_offline(Action::CheckOut, outcome)
    }

    pub async fn extend(&self, checkout: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout> {
        let outcome = async { self.backend.extend(checkout, ttl_seconds).await }.await;
        self.refused_offline(Action::Extend, outcome)
    }

    /// Checks in your copy with `message` as the version's description
    /// (none when blank); the check-out's drafted description goes with it.
    pub async fn check_in(
        &self,
        checkout: CheckoutId,
        message: Option<String>,
        progress: Option<Progress>,
        cancel: Option<Cancel>,
    ) -> Result<Closed> {
        let outcome = async {
            let checkout = self.backend.checkout(checkout).await?;
            let message = message.filter(|m| !m.trim().is_empty());
            let closed = self
                .workspace
                .check_in_described(self.backend.as_ref(), &checkout, message, progress, cancel)
                .await?;
            self.workspace.set_draft(checkout.id, None)?;
            Ok(closed)
        }
        .await;
        self.refused_offline(Action::CheckIn, outcome)
    }

    /// A file's history, newest first, a page of at most `limit` of its
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

    /// A version's or a proposal's preview as a PNG file in the cache: the
    /// backend is asked once per (digest, size), then the file is served (a
    /// "no preview" answer is kept too). The head is resolved to its number
    /// first, so a commit meanwhile cannot file one image under another's digest.
    pub async fn preview(&self, of: PreviewOf, size: u32) -> Result<PathBuf> {
        let size = crate::previews::check_size(size)?;
        let (of, digest) = match of {
            PreviewOf::Version {
                artifact,
                version: None,
            } => {
                let head = self.backend.artifact(artifact).await?.head;
                let of = PreviewOf::Version {
                    artifact,
                    version: Some(head.version),
                };
                (of, head.digest)
            }
            PreviewOf::Version {
                artifact,
                version: Some(version),
            } => (of, self.digest_of_version(artifact, version).await?),
            PreviewOf::Proposal(id) => (of, self.digest_of_proposal(id).await?),
        };
        self.previews
            .get_or_make(&digest, size, || self.backend.preview(of, size))
            .await
    }

    /// A version's digest: versions never change, so each is asked once.
    async fn digest_of_version(&self, artifact: ArtifactId, version: u64) -> Result<Digest> {
        let key = (artifact, version);
        if let Some(known) = self.lock_digests().versions.get(&key) {
            return Ok(known.clone());
        }
        let artifact = self.backend.artifact(artifact).await?;
        let head = self.version_of(&artifact, version).await?;
        self.lock_digests()
            .versions
            .insert(key, head.digest.clone());
        Ok(head.digest)
    }

    /// A proposal's digest, asked once (a proposal's bytes never change).
    async fn digest_of_proposal(&self, id: ProposalId) -> Result<Digest> {
        if let Some(known) = self.lock_digests().proposals.get(&id) {
            return Ok(known.clone());
        }
        let digest = self.backend.proposal(id).await?.digest;
        self.lock_digests().proposals.insert(id, digest.clone());
        Ok(digest)
    }

    fn lock_digests(&self) -> std::sync::MutexGuard<'_, KnownDigests> {
        self.digests.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub async fn cancel(&self, checkout: CheckoutId) -> Result<Closed> {
        let outcome = async {
            let checkout = self.backend.checkout(checkout).await?;
            let closed = self
                .workspace
                .cancel(self.backend.as_ref(), &checkout)
                .await?;
            self.workspace.set_draft(checkout.id, None)?;
            Ok(closed)
        }
        .await;
        self.refused_offline(Action::CancelCheckout, outcome)
    }

    /// Brings your checked-out version here as your copy to edit, when the
    /// check-out was made elsewhere (or the copy is gone). The lease is not touched.
    pub async fn get_copy(
        &self,
        checkout: CheckoutId,
        progress: Option<Progress>,
    ) -> Result<CheckedOut> {
        let outcome = async {
            let checkout = self.backend.checkout(checkout).await?;
            if checkout.state != CheckoutState::Open {
                return Err(Error::CheckoutClosed(format!(
                    "your check-out of {} has ended: check the file out again to edit it",
                    checkout.path
                )));
            }
            self.workspace
                .get_copy(self.backend.as_ref(), checkout, progress)
                .await
        }
        .await;
        self.refused_offline(Action::GetCopy, outcome)
    }

    /// "Get latest" for a file you do not hold.
    pub async fn update(&self, artifact: ArtifactId) -> Result<Option<PathBuf>> {
        let outcome = async {
            let artifact = self.backend.artifact(artifact).await?;
            self.workspace
                .update(self.backend.as_ref(), &artifact)
                .await
        }
        .await;
        self.refused_offline(Action::Update, outcome)
    }

    /// Adds a file at `folder/<its name>` (or at the top if `folder` is empty).
    pub async fn add(&self, source: &Path, folder: &str) -> Result<Artifact> {
        let outcome = async {
            let name = source.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                Error::Invalid(format!("{} has no usable name", source.display()))
            })?;
            let folder = folder.trim_matches('/');
            let path: RepoPath = if folder.is_empty() {
                name.parse()?
            } else {
                format!("{folder}/{name}").parse()?
            };
            self.workspace
                .add(self.backend.as_ref(), source, &path)
                .await
        }
        .await;
        self.refused_offline(Action::Add, outcome)
    }

    /// The proposal's bytes as a file beside the local copy, to open next to
    /// the head: your own backup when it has those bytes, else downloaded
    /// (read-only), from either backend.
    pub async fn proposal_file(
        &self,
        artifact: ArtifactId,
        proposal: ProposalId,
    ) -> Result<PathBuf> {
        let outcome = async {
            let (artifact, proposals) = tokio::try_join!(
                self.backend.artifact(artifact),
                self.backend.proposals(ProposalFilter {
                    artifact: Some(artifact),
                    state: None,
                })
            )?;
            let wanted = proposals
                .into_iter()
                .find(|p| p.id == proposal)
                .ok_or_else(|| {
                    Error::NotFound(format!("no proposal {proposal} for {}", artifact.path))
                })?;
            // Its file would go beside a copy that cannot be placed here.
            self.workspace.local_path(&artifact.path)?;
            let (workspace, path, digest) = (
                self.workspace.clone(),
                artifact.path.clone(),
                wanted.digest.clone(),
            );
            let size = wanted.size;
            let beside =
                tokio::task::spawn_blocking(move || workspace.find_beside(&path, &digest, size))
                    .await
                    .map_err(|e| Error::Internal(format!("looking for the file: {e}")))?;
            if let Some(found) = beside {
                return Ok(found);
            }
            let (proposal, reader) = self.backend.proposal_content(proposal).await?;
            self.workspace
                .save_proposal(&artifact.path, &proposal, reader)
                .await
        }
        .await;
        self.refused_offline(Action::Read, outcome)
    }

    /// Version `version` of a file as a read-only copy beside your local
    /// copy, to open next to it: `hero (v3).psd` (digest-checked; an existing
    /// name is never written over: `hero (v3) 2.psd`). A copy of that version
    /// already there under such a name is given again.
    pub async fn open_copy(&self, artifact: ArtifactId, version: u64) -> Result<PathBuf> {
        let outcome = async {
            let artifact = self.backend.artifact(artifact).await?;
            // A path that cannot be placed here has nowhere to put a copy beside.
            self.workspace.local_path(&artifact.path)?;
            let head = self.version_of(&artifact, version).await?;
            let (workspace, path, wanted) =
                (self.workspace.clone(), artifact.path.clone(), head.clone());
            let found =
                tokio::task::spawn_blocking(move || workspace.find_version_copy(&path, &wanted))
                    .await
                    .map_err(|e| Error::Internal(format!("looking for the copy: {e}")))?;
            if let Some(found) = found {
                return Ok(found);
            }
            let content = self.backend.content(artifact.id, Some(version)).await?;
            self.workspace
                .save_version_copy(&artifact.path, &content.head, content.reader)
                .await
        }
        .await;
        self.refused_offline(Action::Read, outcome)
    }

    async fn version_of(&self, artifact: &Artifact, version: u64) -> Result<Head> {
        if version == artifact.head.version {
            return Ok(artifact.head.clone());
        }
        self.backend
            .versions(artifact.id)
            .await?
            .into_iter()
            .find(|head| head.version == version)
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "{} has no version {version} (its newest is {})",
                    artifact.path, artifact.head.version
                ))
            })
    }

    /// Your open check-out of the file (the newest, after a lapse), if any.
    async fn my_open_checkout(&self, artifact: ArtifactId) -> Result<Option<Checkout>> {
        Ok(self
            .backend
            .checkouts(true)
            .await?
            .into_iter()
            .filter(|c| c.artifact_id == artifact)
            .max_by_key(|c| c.created_at))
    }

    /// Puts version `version`'s bytes into your copy of a file you hold,
    /// keeping your changes as a backup beside it, and drafts "Restored
    /// version N" as the next check-in's description (kept across restarts).
    /// Refused unless you hold the file's check-out: nothing changes then.
    pub async fn restore(&self, artifact: ArtifactId, version: u64) -> Result<Restored> {
        let outcome = async {
            let (artifact, mine) = tokio::try_join!(
                self.backend.artifact(artifact),
                self.my_open_checkout(artifact)
            )?;
            let Some(checkout) = mine else {
                return Err(Error::Forbidden(format!(
                    "you do not hold {}, so nothing was restored: check it out first, then restore version {version} into your copy",
                    artifact.path.file_name()
                )));
            };
            let head = self.version_of(&artifact, version).await?;
            let backup = self
                .workspace
                .restore_version(self.backend.as_ref(), &checkout, &head)
                .await?;
            let draft = format!("Restored version {version}");
            self.workspace.set_draft(checkout.id, Some(&draft))?;
            Ok(Restored {
                checkout: checkout.id,
                version,
                backup,
                draft,
            })
        }
        .await;
        self.refused_offline(Action::Restore, outcome)
    }

    /// The description to prefill the check-in with: the drafted one (a
    /// restore's), else the check-out's note, else nothing.
    pub async fn checkin_draft(&self, checkout: CheckoutId) -> Result<String> {
        if let Some(draft) = self.workspace.draft(checkout)? {
            return Ok(draft);
        }
        Ok(self
            .backend
            .checkout(checkout)
            .await?
            .note
            .unwrap_or_default())
    }

    /// The preview of your local copy as it is now (a modified copy shows
    /// what you are about to check in), made here by the same core reader as
    /// the backend's, keyed by the copy's digest.
    pub async fn local_preview(&self, artifact: ArtifactId, size: u32) -> Result<PathBuf> {
        let size = crate::previews::check_size(size)?;
        // Your copy is here whether or not the server answers.
        let artifact = match self.backend.artifact(artifact).await {
            Err(e) if is_unreachable(&e) => {
                let seen = self
                    .link
                    .seen()
                    .as_ref()
                    .and_then(|s| s.row_parts(artifact));
                seen.map(|(artifact, _)| artifact).ok_or(e)?
            }
            fetched => fetched?,
        };
        let local = self.workspace.local_path(&artifact.path)?;
        // A save between hashing and reading would file one image under the
        // other's digest: the digest is taken again after, and must not move.
        for _ in 0..3 {
            let Some(digest) = self.local_digest(&artifact.path).await? else {
                return Err(Error::NotFound(format!(
                    "{} is not on this computer",
                    artifact.path.file_name()
                )));
            };
            let mut moved = false;
            let (moved_meanwhile, path, hashed, from) =
                (&mut moved, &artifact.path, &digest, local.clone());
            let made = self
                .previews
                .get_or_make(&digest, size, || async move {
                    let png = self.previews.decode(from, size).await;
                    if self.local_digest(path).await?.as_ref() != Some(hashed) {
                        *moved_meanwhile = true;
                        return Err(Error::Unavailable("the copy changed meanwhile".into()));
                    }
                    png
                })
                .await;
            if !moved {
                return made;
            }
        }
        Err(Error::Unavailable(format!(
            "{} keeps changing: its preview will come once it is saved",
            artifact.path.file_name()
        )))
    }

    async fn local_digest(&self, path: &RepoPath) -> Result<Option<Digest>> {
        let (workspace, path) = (self.workspace.clone(), path.clone());
        tokio::task::spawn_blocking(move || workspace.digest(&path))
            .await
            .map_err(|e| Error::Internal(format!("hashing task: {e}")))?
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

    pub async fn decide(&self, proposal: ProposalId, decision: Decision) -> Result<Proposal> {
        let outcome = async {
            match decision {
                Decision::Accept => self.backend.accept_proposal(proposal).await,
                Decision::Rebuild => self.backend.rebuild_proposal(proposal).await,
                Decision::Reject => self.backend.reject_proposal(proposal).await,
            }
        }
        .await;
        self.refused_offline(Action::Decide, outcome)
    }
}

/// A reminder about a lease of yours running out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reminder {
    /// At 30 minutes left, for a lease longer than that.
    ThirtyMinutes,
    /// At 5 minutes left, or at once for a shorter lease: the last call.
    FiveMinutes,
    Lapsed,
}

impl Reminder {
    /// The notification's title: the time actually left, in the window's words.
    pub fn title(self, checkout: &Checkout, now: Timestamp) -> String {
        let name = checkout.path.file_name();
        match self {
            Reminder::Lapsed => format!("{name}: your lease has lapsed"),
            _ => format!(
                "{name}: your lease ends in {}",
                time_left(checkout.expires_at - now)
            ),
        }
    }

    /// The notification's body: what to do.
    pub fn body(self) -> &'static str {
        match self {
            Reminder::ThirtyMinutes => "Extend it if you need longer.",
            Reminder::FiveMinutes => "Extend it now, or check in what you have.",
            Reminder::Lapsed => "Your file is safe. Check in to keep your work: if someone else took the file, it becomes a proposal.",
        }
    }
}

/// What is left of a lease as the window's countdown says it (`timeLeft` in
/// `ui/src/format.ts`): "1 h 05 min", "12 min", "40 s", or "lapsed".
pub fn time_left(left: chrono::TimeDelta) -> String {
    let seconds = left.num_seconds();
    match seconds {
        s if s <= 0 => "lapsed".into(),
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// Which reminders are due now. Each is given once per expiry time: an
/// extension moves the expiry and so arms them again. `sent` remembers.
/// The 30-minute one comes only to a lease longer than 30 minutes, none
/// being promised time it never had; the last call comes to every lease,
/// even one shorter than 5 minutes. Titles say what is left ([`Reminder::title`]).
pub fn due_reminders(
    checkouts: &[Checkout],
    now: Timestamp,
    sent: &mut HashSet<(CheckoutId, Timestamp, Reminder)>,
) -> Vec<(Checkout, Reminder)> {
    let thirty = chrono::TimeDelta::minutes(30);
    let mut due = Vec::new();
    for checkout in checkouts.iter().filter(|c| c.state == CheckoutState::Open) {
        let left = checkout.expires_at - now;
        let whole = checkout.expires_at - checkout.created_at;
        let reminder = if left <= chrono::TimeDelta::zero() {
            Reminder::Lapsed
        } else if left <= chrono::TimeDelta::minutes(5) {
            Reminder::FiveMinutes
        } else if left <= thirty && whole > thirty {
            Reminder::ThirtyMinutes
        } else {
            continue;
        };
        if sent.insert((checkout.id, checkout.expires_at, reminder)) {
            due.push((checkout.clone(), reminder));
        }
    }
    due
}

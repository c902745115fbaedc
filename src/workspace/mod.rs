//! The designer's workspace folder: local copies of artifacts at their repo
//! paths. A copy is read-only unless you hold its check-out; it is brought up
//! to date by digest (downloaded only if it differs); and a copy holding your
//! changes is never deleted or overwritten: a backup is kept beside it first
//! (`hero (my changes 2026-11-29 1405).psd`).
//!
//! Host-free: the desktop app calls it, and so can tests and the CLI.

mod index;
pub mod watch;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::Serialize;

use crate::backend::{self, Backend, Cancel, Progress, Upload};
use crate::blobs;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::local_file;
use crate::model::*;

use index::Index;
pub use index::{Stat, Synced};

/// How a local copy stands against the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum LocalState {
    /// No local copy, and none was ever brought here if you hold the file.
    NotLocal,
    /// The local copy is the head.
    UpToDate,
    /// The local copy has changes of yours.
    Modified,
    /// You hold the file, and its local copy, once brought here, is gone.
    Missing,
    /// The local copy is an older version, unchanged.
    OutOfDate,
    /// The local copy changed and is being hashed.
    Checking,
    /// Its path cannot be a file here (stored before the path rules: `CON`,
    /// `a:b`, `trail.`): never written to disk until an admin renames it.
    Unplaceable,
}

/// What a check-out did locally.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct CheckedOut {
    pub checkout: Checkout,
    /// Where your earlier changes went, if the head had to replace them.
    pub backup: Option<PathBuf>,
}

/// What a check-in or cancel did locally.
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Closed {
    pub checkout: Checkout,
    /// Where your changes were kept, when the head replaced them (a cancel, or
    /// a check-in that became a proposal).
    pub backup: Option<PathBuf>,
}

#[derive(Clone)]
pub struct Workspace {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    /// The app's own folder for this workspace (its index, the previews).
    state_dir: PathBuf,
    index: Index,
    clock: Clock,
    /// Files hashed since opening: what the digest cache saves is measured by it.
    hashed: AtomicU64,
    /// One lock per local copy: operations that look at a copy and then
    /// replace it (a double click, the tray and the window at once) take
    /// turns, so none backs up or replaces what another just put there.
    copy_locks: std::sync::Mutex<HashMap<RepoPath, Arc<tokio::sync::Mutex<()>>>>,
}

impl Workspace {
    /// Opens the workspace folder `root` (creating it), keeping its index in
    /// `state_dir` (the app's own folder, so the workspace holds only files).
    pub fn open(root: &Path, state_dir: &Path, clock: Clock) -> Result<Self> {
        std::fs::create_dir_all(root)?;
        Ok(Self {
            inner: Arc::new(Inner {
                root: root.to_owned(),
                state_dir: state_dir.to_owned(),
                index: Index::open(&state_dir.join("workspace.db"))?,
                clock,
                hashed: AtomicU64::new(0),
                copy_locks: Default::default(),
            }),
        })
    }

    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// Where the workspace keeps its own files (never in the workspace).
    pub fn state_dir(&self) -> &Path {
        &self.inner.state_dir
    }

    /// Waits for this local copy's turn (see `Inner::copy_locks`).
    async fn lock_copy(&self, path: &RepoPath) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = self
            .inner
            .copy_locks
            .lock()
            .expect("copy locks")
            .entry(path.clone())
            .or_default()
            .clone();
        lock.lock_owned().await
    }

    /// The local copy's place: the repo path under the workspace folder,
    /// through [`join_under`]; refused for a path that cannot be placed here.
    pub fn local_path(&self, path: &RepoPath) -> Result<PathBuf> {
        join_under(&self.inner.root, path.as_str())
    }

    /// The repo path of a file in the workspace, if it is one. In NFC (the
    /// parser's form), so the NFD names macOS hands back map to stored paths.
    pub fn repo_path(&self, local: &Path) -> Option<RepoPath> {
        let relative = local.strip_prefix(&self.inner.root).ok()?;
        let parts: Option<Vec<&str>> = relative
            .components()
            .map(|c| c.as_os_str().to_str())
            .collect();
        parts?.join("/").parse().ok()
    }

    /// How many files were hashed since opening (the rest came from the cache).
    pub fn files_hashed(&self) -> u64 {
        self.inner.hashed.load(Ordering::Relaxed)
    }

    /// The local copy's digest, or `None` if there is none. Hashes only when
    /// the file's size, mtime or inode changed since it was last hashed.
    /// Blocking: the hash of a big file takes a while.
    pub fn digest(&self, path: &RepoPath) -> Result<Option<Digest>> {
        let local = self.local_path(path)?;
        let stat = match std::fs::metadata(&local) {
            Ok(m) if m.is_file() => Stat::of(&m),
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if let Some(digest) = self.inner.index.fingerprint(path, stat)? {
            return Ok(Some(digest));
        }
        let (digest, _) = match blobs::digest_file(&local) {
            Ok(hashed) => hashed,
            Err(Error::NotFound(_)) => return Ok(None), // gone meanwhile
            Err(e) => return Err(e),
        };
        self.inner.hashed.fetch_add(1, Ordering::Relaxed);
        // Recorded against the stat taken before hashing: if the file changed
        // meanwhile, its new stat will not match and it is hashed again.
        self.inner.index.set_fingerprint(path, stat, &digest)?;
        Ok(Some(digest))
    }

    /// The local copy's digest if it is known without reading the file:
    /// `Ok(None)` when there is no copy, `Err(())` when it must be hashed.
    pub fn known_digest(&self, path: &RepoPath) -> Result<std::result::Result<Option<Digest>, ()>> {
        let stat = match std::fs::metadata(self.local_path(path)?) {
            Ok(m) if m.is_file() => Stat::of(&m),
            Ok(_) => return Ok(Ok(None)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ok(None)),
            Err(e) => return Err(e.into()),
        };
        Ok(self
            .inner
            .index
            .fingerprint(path, stat)?
            .map(Some)
            .ok_or(()))
    }

    /// How the local copy of `artifact` stands; `holding` if you hold its
    /// check-out. Blocking (see [`Workspace::digest`]).
    pub fn local_state(&self, artifact: &Artifact, holding: bool) -> Result<LocalState> {
        if artifact.path.placement_problem().is_some() {
            return Ok(LocalState::Unplaceable);
        }
        let digest = self.digest(&artifact.path)?;
        self.state_of(artifact, holding, digest)
    }

    /// The state a copy with digest `local` (`None`: no copy) is in.
    pub fn state_of(
        &self,
        artifact: &Artifact,
        holding: bool,
        local: Option<Digest>,
    ) -> Result<LocalState> {
        let Some(local) = local else {
            // Missing only if a copy of it was brought here: a check-out
            // made elsewhere of a file never fetched is simply not here.
            let was_here = holding
                && self
                    .inner
                    .index
                    .synced(&artifact.path)?
                    .is_some_and(|synced| synced.artifact == artifact.id);
            return Ok(if was_here {
                LocalState::Missing
            } else {
                LocalState::NotLocal
            });
        };
        if local == artifact.head.digest {
            return Ok(LocalState::UpToDate);
        }
        match self.inner.index.synced(&artifact.path)? {
            Some(synced) if synced.digest == local && synced.version < artifact.head.version => {
                Ok(LocalState::OutOfDate)
            }
            _ => Ok(LocalState::Modified),
        }
    }

    /// Adds a file to the store at `path` and places a read-only copy of it
    /// in the workspace (unless it is already that file).
    pub async fn add(
        &self,
        backend: &dyn Backend,
        source: &Path,
        path: &RepoPath,
    ) -> Result<Artifact> {
        let local = self.local_path(path)?;
        if local.exists() && !same_file(source, &local) {
            return Err(Error::Exists(format!(
                "{} is already in the workspace: add the file under another name",
                local.display()
            )));
        }
        let artifact = backend.import(path, Upload::file(source)).await?;
        if !same_file(source, &local) {
            self.download(backend, &artifact, None).await?;
        }
        self.record_synced(&artifact.path, artifact.id, &artifact.head)?;
        set_writable(&local, false)?;
        Ok(artifact)
    }

    /// Checks a file out: takes the lease, brings the local copy to the
    /// checked-out version, and makes it writable. Changes you made to that
    /// version before checking out are kept as they are (they are the start of
    /// your edit); changes to an older version are kept as a backup. If the
    /// local copy cannot be written, the check-out is cancelled (its lease
    /// released) and the error returned; if another program holds it open,
    /// the lease is kept (see [`Workspace::get_copy`]).
    pub async fn check_out(
        &self,
        backend: &dyn Backend,
        artifact: ArtifactId,
        request: CheckoutRequest,
        progress: Option<Progress>,
    ) -> Result<CheckedOut> {
        // A path that cannot be a file here is refused before any lease.
        self.local_path(&backend.artifact(artifact).await?.path)?;
        let checkout = backend.check_out(artifact, request).await?;
        match self.place_copy_to_edit(backend, &checkout, progress).await {
            Ok(backup) => Ok(CheckedOut { checkout, backup }),
            // Another program holds the copy (Windows): the lease stays yours,
            // and `get_copy` writes the version once the program lets go.
            Err(e @ Error::Unavailable(_)) => Err(e),
            Err(e) => {
                // Nobody can edit a copy that cannot be written: let the lease go.
                let _ = backend.cancel(checkout.id).await;
                Err(e)
            }
        }
    }

    /// Brings an open check-out's version here as your copy to edit, as a
    /// check-out does, without touching its lease: for a check-out made
    /// elsewhere (the CLI, another computer), or a copy that is gone. On a
    /// failure the check-out stays as it is.
    pub async fn get_copy(
        &self,
        backend: &dyn Backend,
        checkout: Checkout,
        progress: Option<Progress>,
    ) -> Result<CheckedOut> {
        let backup = self
            .place_copy_to_edit(backend, &checkout, progress)
            .await?;
        Ok(CheckedOut { checkout, backup })
    }

    /// Makes the local copy the check-out's version, writable (see
    /// [`Workspace::check_out`] for what happens to changes already there).
    async fn place_copy_to_edit(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
        progress: Option<Progress>,
    ) -> Result<Option<PathBuf>> {
        // Renamed in between to a path that cannot be placed: refused.
        let local = self.local_path(&checkout.path)?;
        let head = Head {
            version: checkout.version,
            digest: checkout.digest.clone(),
            size: 0,
            author: checkout.actor.clone(),
            committed_at: checkout.created_at,
            message: None,
        };
        let _turn = self.lock_copy(&checkout.path).await;
        let synced = self.inner.index.synced(&checkout.path)?;
        let backup = match self.digest_off_thread(&checkout.path).await? {
            Some(d) if d == checkout.digest => None,
            // Edited after syncing this very version: the edit goes on.
            Some(_) if synced.as_ref().is_some_and(|s| s.digest == checkout.digest) => {
                set_writable(&local, true)?;
                return Ok(None);
            }
            _ => {
                self.bring_to(
                    backend,
                    checkout.artifact_id,
                    &checkout.path,
                    &head,
                    progress,
                )
                .await?
            }
        };
        self.record_synced(&checkout.path, checkout.artifact_id, &head)?;
        set_writable(&local, true)?;
        Ok(backup)
    }

    /// Checks in the local copy: uploads it (with progress; `cancel` stops
    /// the upload, storing nothing), then makes it read-only. If the check-in
    /// became a proposal, your file is kept as a backup and the head takes
    /// its place.
    pub async fn check_in(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
        progress: Option<Progress>,
        cancel: Option<Cancel>,
    ) -> Result<Closed> {
        self.check_in_described(backend, checkout, None, progress, cancel)
            .await
    }

    /// [`Workspace::check_in`] with `message` as the new version's description.
    pub async fn check_in_described(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
        message: Option<String>,
        progress: Option<Progress>,
        cancel: Option<Cancel>,
    ) -> Result<Closed> {
        let local = self.local_path(&checkout.path)?;
        if !local.is_file() {
            return Err(Error::NotFound(format!(
                "{} is missing, so nothing was checked in; your check-out is still open",
                local.display()
            )));
        }
        // A copy last brought to another version than the one checked out
        // (the check-out's download failed, or a newer check-out of yours
        // replaced it) would undo the versions between: refuse.
        let synced = self.inner.index.synced(&checkout.path)?;
        if let Some(synced) = synced.filter(|s| s.digest != checkout.digest) {
            return Err(Error::Invalid(format!(
                "your copy of {} is version {}, not version {} that this check-out began from, \
                 so nothing was checked in: cancel this check-out (your changes are kept as a backup) \
                 and check the file out again",
                checkout.path.file_name(),
                synced.version,
                checkout.version
            )));
        }
        let mut upload = Upload::file(&local);
        upload.progress = progress;
        upload.cancel = cancel;
        upload.message = message;
        let done = backend.check_in(checkout.id, upload).await?;
        let backup = match &done.result {
            Some(CheckinResult::Committed { version, digest })
            | Some(CheckinResult::Unchanged { version, digest }) => {
                self.inner.index.set_synced(
                    &checkout.path,
                    &Synced {
                        artifact: checkout.artifact_id,
                        version: *version,
                        digest: digest.clone(),
                    },
                )?;
                set_writable(&local, false)?;
                None
            }
            Some(CheckinResult::Proposal { .. }) | None => {
                self.restore_head(backend, checkout).await?
            }
        };
        Ok(Closed {
            checkout: done,
            backup,
        })
    }

    /// Ends a check-out without checking in: the lease is released, your
    /// changes (if any) are kept as a backup, and the head is put back,
    /// read-only.
    pub async fn cancel(&self, backend: &dyn Backend, checkout: &Checkout) -> Result<Closed> {
        let done = backend.cancel(checkout.id).await?;
        let backup = self.restore_head(backend, checkout).await?;
        Ok(Closed {
            checkout: done,
            backup,
        })
    }

    /// Brings a local copy you do not hold up to the head ("get latest"),
    /// keeping a backup of your changes if it has any.
    pub async fn update(
        &self,
        backend: &dyn Backend,
        artifact: &Artifact,
    ) -> Result<Option<PathBuf>> {
        let local = self.local_path(&artifact.path)?;
        let _turn = self.lock_copy(&artifact.path).await;
        let backup = self
            .bring_to(backend, artifact.id, &artifact.path, &artifact.head, None)
            .await?;
        self.record_synced(&artifact.path, artifact.id, &artifact.head)?;
        set_writable(&local, false)?;
        Ok(backup)
    }

    /// After a check-out ends without a commit: the head in place, read-only,
    /// and your changes (if the copy differs from it) in a backup.
    async fn restore_head(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
    ) -> Result<Option<PathBuf>> {
        let artifact = backend.artifact(checkout.artifact_id).await?;
        // A path that cannot be placed here was never written: nothing to restore.
        let Ok(local) = self.local_path(&artifact.path) else {
            return Ok(None);
        };
        let _turn = self.lock_copy(&checkout.path).await;
        let backup = self
            .bring_to(backend, artifact.id, &artifact.path, &artifact.head, None)
            .await?;
        self.record_synced(&artifact.path, artifact.id, &artifact.head)?;
        if local.exists() {
            set_writable(&local, false)?;
        }
        Ok(backup)
    }

    /// Makes the local copy `head`'s bytes: nothing to do if it already is;
    /// a plain download over an unchanged older copy; a backup first if the
    /// copy holds changes (anything but the version last synced).
    async fn bring_to(
        &self,
        backend: &dyn Backend,
        artifact: ArtifactId,
        path: &RepoPath,
        head: &Head,
        progress: Option<Progress>,
    ) -> Result<Option<PathBuf>> {
        let local = self.local_path(path)?;
        let backup = match self.digest_off_thread(path).await? {
            Some(d) if d == head.digest => return Ok(None),
            None => None,
            Some(d) => {
                let synced = self.inner.index.synced(path)?;
                if synced.is_some_and(|s| s.digest == d) {
                    None
                } else {
                    Some(self.keep_backup(&local)?)
                }
            }
        };
        if let Some(dir) = local.parent() {
            std::fs::create_dir_all(dir)?;
        }
        backend::download(backend, artifact, Some(head.version), &local, progress).await?;
        // The download checked the digest; record it without hashing again.
        if let Ok(metadata) = std::fs::metadata(&local) {
            self.inner
                .index
                .set_fingerprint(path, Stat::of(&metadata), &head.digest)?;
        }
        Ok(backup)
    }

    async fn download(
        &self,
        backend: &dyn Backend,
        artifact: &Artifact,
        progress: Option<Progress>,
    ) -> Result<()> {
        self.bring_to(
            backend,
            artifact.id,
            &artifact.path,
            &artifact.head,
            progress,
        )
        .await
        .map(|_| ())
    }

    /// A file beside `path`'s local copy whose bytes have `digest` (your
    /// backup of a check-in that became a proposal, or an earlier download).
    /// Only files of the right size are hashed, and those once.
    pub fn find_beside(&self, path: &RepoPath, digest: &Digest, size: u64) -> Option<PathBuf> {
        let local = self.local_path(path).ok()?;
        let stem = local.file_stem()?.to_string_lossy().into_owned();
        std::fs::read_dir(local.parent()?)
            .ok()?
            .filter_map(|entry| entry.ok())
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{stem} ("))
                    && entry
                        .metadata()
                        .is_ok_and(|m| m.is_file() && m.len() == size)
            })
            .map(|entry| entry.path())
            .find(|candidate| {
                self.repo_path(candidate)
                    .and_then(|repo_path| self.digest(&repo_path).ok().flatten())
                    .is_some_and(|found| &found == digest)
            })
    }

    /// Saves a proposal's bytes beside the local copy, read-only, to compare
    /// with it: `hero (alice's proposal against v3).psd`. Verified against the
    /// proposal's digest; nothing is left behind if they differ.
    pub async fn save_proposal(
        &self,
        path: &RepoPath,
        proposal: &Proposal,
        reader: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
    ) -> Result<PathBuf> {
        let local = self.local_path(path)?;
        if let Some(dir) = local.parent() {
            tokio::fs::create_dir_all(dir).await?;
        }
        let label = format!(
            "{}'s proposal against v{}",
            proposal.author.name(),
            proposal.base_version
        );
        let dest = labelled_path(&local, &label);
        backend::save_verified(reader, &proposal.digest, &dest, None).await?;
        set_writable(&dest, false)?;
        Ok(dest)
    }

    /// A read-only copy of version `head` already beside `path`'s local copy
    /// under its name (`hero (v3).psd`, `hero (v3) 2.psd`…): files of the
    /// right size are hashed, once. Blocking.
    pub fn find_version_copy(&self, path: &RepoPath, head: &Head) -> Option<PathBuf> {
        let local = self.local_path(path).ok()?;
        let label = format!("v{}", head.version);
        (1..)
            .map(|n| numbered_after_label(&local, &label, n))
            .take_while(|candidate| candidate.exists())
            .find(|candidate| {
                std::fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.len() == head.size)
                    && self
                        .repo_path(candidate)
                        .and_then(|repo_path| self.digest(&repo_path).ok().flatten())
                        .is_some_and(|found| found == head.digest)
            })
    }

    /// Saves version `head`'s bytes beside the local copy, read-only, to open
    /// next to it: `hero (v3).psd`, else `hero (v3) 2.psd` and on. No existing
    /// name is ever written over: the copy is downloaded under a hidden name
    /// and linked to the free one, which fails on a name taken meanwhile.
    /// Verified against `head.digest`; nothing is left behind if they differ.
    pub async fn save_version_copy(
        &self,
        path: &RepoPath,
        head: &Head,
        reader: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
    ) -> Result<PathBuf> {
        let local = self.local_path(path)?;
        if let Some(dir) = local.parent() {
            tokio::fs::create_dir_all(dir).await?;
        }
        let staging = local.with_file_name(format!(
            ".{}.leasedesk-copy-{}",
            path.file_name(),
            uuid::Uuid::new_v4()
        ));
        backend::save_verified(reader, &head.digest, &staging, None).await?;
        // Read-only before it has its name: nobody sees it writable.
        let placed = set_writable(&staging, false).and_then(|()| {
            let label = format!("v{}", head.version);
            (1..)
                .map(|n| numbered_after_label(&local, &label, n))
                .find_map(
                    |candidate| match local_file::move_new(&staging, &candidate) {
                        Ok(()) => Some(Ok(candidate)),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                        Err(e) => Some(Err(e.into())),
                    },
                )
                .expect("a free name")
        });
        if placed.is_err() {
            let _ = set_writable(&staging, true);
            let _ = std::fs::remove_file(&staging);
        }
        let copy = placed?;
        // Its digest is known: a later look for it need not hash it.
        if let (Some(repo_path), Ok(metadata)) = (self.repo_path(&copy), std::fs::metadata(&copy)) {
            self.inner
                .index
                .set_fingerprint(&repo_path, Stat::of(&metadata), &head.digest)?;
        }
        Ok(copy)
    }

    /// Puts `head`'s bytes (an older version) into the copy you edit under
    /// `checkout`, keeping your changes as a backup beside it first (as the
    /// head's arrival would). The copy stays writable and still counts as a
    /// copy of the checked-out version, so checking it in makes `head`'s bytes
    /// the next version. Refused if the copy here is of another version.
    pub async fn restore_version(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
        head: &Head,
    ) -> Result<Option<PathBuf>> {
        let local = self.local_path(&checkout.path)?;
        let _turn = self.lock_copy(&checkout.path).await;
        let synced = self.inner.index.synced(&checkout.path)?;
        if synced.is_none_or(|s| s.digest != checkout.digest) {
            return Err(Error::Invalid(format!(
                "your copy of {} here is not the version {} you checked out, so nothing was restored: \
                 get your copy of the check-out first",
                checkout.path.file_name(),
                checkout.version
            )));
        }
        let backup = self
            .bring_to(backend, checkout.artifact_id, &checkout.path, head, None)
            .await?;
        set_writable(&local, true)?;
        Ok(backup)
    }

    /// The description drafted for the check-out's next check-in, if any.
    pub fn draft(&self, checkout: CheckoutId) -> Result<Option<String>> {
        self.inner.index.draft(checkout)
    }

    /// Remembers (`Some`) or forgets (`None`) a check-out's draft description.
    pub fn set_draft(&self, checkout: CheckoutId, message: Option<&str>) -> Result<()> {
        self.inner.index.set_draft(checkout, message)
    }

    /// A second name for the local copy, beside it: the download that follows
    /// replaces the original name only, so the user's bytes are never copied
    /// and never at risk. Falls back to a copy where hard links are refused.
    /// Neither ever writes over an existing name: if another backup takes the
    /// free name first (two restores at once), the next free name is used.
    fn keep_backup(&self, local: &Path) -> Result<PathBuf> {
        let now = self.inner.clock.now().with_timezone(&chrono::Local);
        let when = now.format("%Y-%m-%d %H%M").to_string();
        loop {
            let backup = backup_path(local, &when);
            let kept = std::fs::hard_link(local, &backup).or_else(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Err(e),
                _ => local_file::copy_to_new(local, &backup),
            });
            match kept {
                Ok(()) => return Ok(backup),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn record_synced(&self, path: &RepoPath, artifact: ArtifactId, head: &Head) -> Result<()> {
        self.inner.index.set_synced(
            path,
            &Synced {
                artifact,
                version: head.version,
                digest: head.digest.clone(),
            },
        )
    }

    async fn digest_off_thread(&self, path: &RepoPath) -> Result<Option<Digest>> {
        let (this, path) = (self.clone(), path.clone());
        match tokio::task::spawn_blocking(move || this.digest(&path)).await {
            Ok(digest) => digest,
            Err(e) => Err(Error::Internal(format!("hashing task: {e}"))),
        }
    }
}

/// The one way a repo path becomes a place on disk: `relative` under `root`,
/// proved to stay there, or refused. Checked first as a string, the same on
/// every OS (so a test on Linux can feed it Windows' dangers: `C:/x`, `C:x`,
/// `x:stream`, `..\\x`, `\\\\server\\share`, `CON`, `trail.`), then as this OS
/// reads it: only plain names (no prefix, root, `.` or `..`), and the joined
/// path still starts with `root` and is exactly that many names longer.
pub fn join_under(root: &Path, relative: &str) -> Result<PathBuf> {
    let refuse = |why: String| {
        Err(Error::Invalid(format!(
            "{relative:?} cannot be placed on this computer ({why}), so nothing was written \
             and no lease was taken: ask an admin to run `leasedesk rename {relative} NEW` \
             to give it a name every computer can hold"
        )))
    };
    if let Err(e) = RepoPath::stored(relative) {
        return refuse(e.to_string());
    }
    if let Some(why) = placement_problem(relative) {
        return refuse(format!("it {why}"));
    }
    let segments = relative.split('/').count();
    let mut names = 0;
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(_) => names += 1,
            // On Windows this is where `C:` and `\\\\server\\share` would show.
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => {
                return refuse(format!("this system reads {component:?} in it"))
            }
        }
    }
    #[cfg(windows)]
    if Path::new(relative).has_root() || relative.contains(['\\', ':']) {
        return refuse("Windows reads a drive, a root or a stream in it".into());
    }
    if names != segments {
        return refuse("this system reads its folders differently".into());
    }
    let joined = root.join(relative);
    if !joined.starts_with(root) || joined.components().count() != root.components().count() + names
    {
        return refuse("it would land outside the workspace folder".into());
    }
    Ok(joined)
}

/// `hero.psd` → `hero (my changes 2026-11-29 1405).psd`, numbered if taken.
pub fn backup_path(local: &Path, when: &str) -> PathBuf {
    labelled_path(local, &format!("my changes {when}"))
}

/// `hero.psd` → `hero (LABEL).psd`, or `hero (LABEL 2).psd` and on if taken.
fn labelled_path(local: &Path, label: &str) -> PathBuf {
    let stem = local
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let extension = local
        .extension()
        .map_or_else(String::new, |e| format!(".{}", e.to_string_lossy()));
    (1..)
        .map(|n| {
            let suffix = if n == 1 {
                String::new()
            } else {
                format!(" {n}")
            };
            local.with_file_name(format!("{stem} ({label}{suffix}){extension}"))
        })
        .find(|candidate| !candidate.exists())
        .expect("a free name")
}

/// `hero.psd` → `hero (LABEL).psd` for `n` = 1, else `hero (LABEL) N.psd`.
fn numbered_after_label(local: &Path, label: &str, n: u32) -> PathBuf {
    let stem = local
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let extension = local
        .extension()
        .map_or_else(String::new, |e| format!(".{}", e.to_string_lossy()));
    let number = if n == 1 {
        String::new()
    } else {
        format!(" {n}")
    };
    local.with_file_name(format!("{stem} ({label}){number}{extension}"))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Read-only unless checked out, as Perforce and Git LFS lockable files are:
/// an application then warns before editing a file nobody reserved.
fn set_writable(path: &Path, writable: bool) -> Result<()> {
    let mut permissions = std::fs::metadata(path)?.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = permissions.mode();
        permissions.set_mode(if writable {
            mode | 0o200
        } else {
            mode & !0o222
        });
    }
    #[cfg(not(unix))]
    permissions.set_readonly(!writable);
    std::fs::set_permissions(path, permissions)?;
    Ok(())
}

/// Whether the local copy can be written (for the UI's read-only state).
pub fn is_writable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

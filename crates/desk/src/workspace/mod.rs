//! The designer's workspace folder: local copies of artifacts at their repo
//! paths. A copy is read-only unless you hold its check-out; it is brought up
//! to date by digest (downloaded only if it differs); and a copy holding your
//! changes is never deleted or overwritten: a backup is kept beside it first
//! (`hero (my changes 2026-11-29 1405).psd`).
//!
//! Host-free: the desktop app calls it, and so can tests and the CLI. Here:
//! the copies' states and digests; `copies` brings and replaces them,
//! `checkin` reads one back in, `beside` keeps backups and read-only copies
//! beside it, `place` is where a repo path may land on disk. Nothing here
//! takes or lets go of a lease but on the caller's word.

mod beside;
mod changes;
mod checkin;
mod copies;
mod index;
mod mirror;
mod place;
pub mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::Serialize;

use crate::blobs;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::model::*;

pub use beside::backup_path;
pub use index::Index;
pub use index::{Stat, Synced};
pub use mirror::{Applied, Cursor, ListOrder, MirrorState, RowChange, SortKey, Table};
pub use place::{is_writable, join_under};

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
                index: {
                    let index = Index::open(&state_dir.join("workspace.db"))?;
                    mirror::create_tables(&index)?;
                    index
                },
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
    /// The mirror of the studio's list (see `desk::mirror`).
    pub fn mirror(&self) -> &Index {
        &self.inner.index
    }

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

    /// The size of the local copy of `path`, if there is one.
    pub fn local_size(&self, path: &RepoPath) -> Result<Option<u64>> {
        if path.placement_problem().is_some() {
            return Ok(None);
        }
        Ok(stat_of(&self.local_path(path)?)?.map(|stat| stat.size))
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
        let Some(stat) = stat_of(&local)? else {
            return Ok(None);
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
        let Some(stat) = stat_of(&self.local_path(path)?)? else {
            return Ok(Ok(None));
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

    /// Whether the check-out's copy to edit was placed here: checked out
    /// here, or got here ([`Workspace::get_copy`]) after a check-out made on
    /// another device.
    pub fn placed_here(&self, checkout: CheckoutId) -> Result<bool> {
        self.inner.index.placed(checkout)
    }

    /// The description drafted for the check-out's next check-in, if any.
    pub fn draft(&self, checkout: CheckoutId) -> Result<Option<String>> {
        self.inner.index.draft(checkout)
    }

    /// Remembers (`Some`) or forgets (`None`) a check-out's draft description.
    pub fn set_draft(&self, checkout: CheckoutId, message: Option<&str>) -> Result<()> {
        self.inner.index.set_draft(checkout, message)
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

/// The copy's size, mtime and inode, or `None` when no file is there.
fn stat_of(local: &Path) -> Result<Option<Stat>> {
    match std::fs::metadata(local) {
        Ok(m) if m.is_file() => Ok(Some(Stat::of(&m))),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

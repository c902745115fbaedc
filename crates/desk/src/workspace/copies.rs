//! Bringing a copy here and replacing it: adding a file, checking out (the
//! copy writable at the checked-out version), getting latest, putting the
//! head back after a check-out ends, restoring an older version. Each takes
//! the copy's turn first, and never replaces changes without a backup.
//! A copy is replaced only by a checked download (`backend::save_verified`,
//! then `local_file::replace`): in one rename, whole or not at all, and never
//! while another program holds it.

use std::path::{Path, PathBuf};

use super::place::{same_file, set_writable};
use super::{CheckedOut, Stat, Workspace};
use crate::backend::{self, Backend, Progress, Upload};
use crate::error::{Error, Result};
use crate::model::*;

impl Workspace {
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
    pub(super) async fn place_copy_to_edit(
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
            change_id: None,
        };
        let _turn = self.lock_copy(&checkout.path).await;
        let synced = self.inner.index.synced(&checkout.path)?;
        let backup = match self.digest_off_thread(&checkout.path).await? {
            Some(d) if d == checkout.digest => None,
            // Edited after syncing this very version: the edit goes on.
            Some(_) if synced.as_ref().is_some_and(|s| s.digest == checkout.digest) => {
                set_writable(&local, true)?;
                self.inner.index.set_placed(checkout.id, true)?;
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
        self.inner.index.set_placed(checkout.id, true)?;
        Ok(backup)
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
    pub(super) async fn restore_head(
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
        let had_copy = local.exists();
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
        // Over a link, only the chunks the copy (or its backup) lacks travel.
        let sources: Vec<PathBuf> = (backup.iter().cloned())
            .chain(had_copy.then(|| local.clone()))
            .collect();
        backend::download_reusing(backend, artifact, head.version, &local, &sources, progress)
            .await?;
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
}

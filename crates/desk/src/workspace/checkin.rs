//! Checking a copy back in (or cancelling): the copy read from disk and
//! uploaded only if it is of the version checked out, then read-only again;
//! a check-in that became a proposal, or a cancel, puts the head back with
//! your changes kept as a backup. It never uploads another version's copy.

use super::place::set_writable;
use super::{Closed, Synced, Workspace};
use crate::backend::{Backend, Upload, Watch};
use crate::error::{Error, Result};
use crate::model::*;

impl Workspace {
    /// Checks in the local copy: uploads it (telling `watch`, whose cancel
    /// stops the upload, storing nothing), then makes it read-only. If the check-in
    /// became a proposal, your file is kept as a backup and the head takes
    /// its place.
    pub async fn check_in(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
        watch: Watch,
    ) -> Result<Closed> {
        self.check_in_described(backend, checkout, None, watch)
            .await
    }

    /// [`Workspace::check_in`] with `message` as the new version's description.
    pub async fn check_in_described(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
        message: Option<String>,
        watch: Watch,
    ) -> Result<Closed> {
        let local = self.checked_in_copy(checkout)?;
        let mut upload = Upload::file(&local).watched(watch);
        upload.message = message;
        let done = backend.check_in(checkout.id, upload).await?;
        let backup = self.after_check_in(backend, checkout, &done.result).await?;
        Ok(Closed {
            checkout: done,
            backup,
        })
    }

    /// The local copy of `checkout`'s file, if it may be checked in: it
    /// exists and was last brought to the version checked out.
    pub(super) fn checked_in_copy(&self, checkout: &Checkout) -> Result<std::path::PathBuf> {
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
        Ok(local)
    }

    /// What a check-in's `result` leaves here: a committed (or unchanged)
    /// copy read-only at its version; else the head back, with your file
    /// kept as a backup (answered).
    pub(super) async fn after_check_in(
        &self,
        backend: &dyn Backend,
        checkout: &Checkout,
        result: &Option<CheckinResult>,
    ) -> Result<Option<std::path::PathBuf>> {
        let local = self.local_path(&checkout.path)?;
        // Closed: whether its copy was here no longer matters.
        self.inner.index.set_placed(checkout.id, false)?;
        Ok(match result {
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
        })
    }

    /// Ends a check-out without checking in: the lease is released, your
    /// changes (if any) are kept as a backup, and the head is put back,
    /// read-only.
    pub async fn cancel(&self, backend: &dyn Backend, checkout: &Checkout) -> Result<Closed> {
        let done = backend.cancel(checkout.id).await?;
        self.inner.index.set_placed(checkout.id, false)?;
        let backup = self.restore_head(backend, checkout).await?;
        Ok(Closed {
            checkout: done,
            backup,
        })
    }
}

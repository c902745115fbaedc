//! Several copies at once: checked out together (all or none, each copy
//! made writable at its version) and checked in as one change (each copy
//! staged, then one commit). Until the commit begins a change can be
//! cancelled, and then every file, copy and lease stays as it was.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{CheckedOut, Closed, Workspace};
use crate::backend::{check_cancel, Backend, Progress, Upload, Watch};
use crate::error::{Error, Result};
use crate::model::*;

impl Workspace {
    /// Checks out every artifact or none, each copy brought to its version
    /// and writable. If a copy cannot be written, every lease is let go.
    pub async fn check_out_many(
        &self,
        backend: &dyn Backend,
        request: CheckoutsRequest,
    ) -> Result<Vec<CheckedOut>> {
        // A path that cannot be a file here is refused before any lease.
        for id in &request.artifact_ids {
            self.local_path(&backend.artifact(*id).await?.path)?;
        }
        let checkouts = backend.check_out_many(request).await?;
        let mut placed = Vec::with_capacity(checkouts.len());
        for checkout in &checkouts {
            match self.place_copy_to_edit(backend, checkout, None).await {
                Ok(backup) => placed.push(CheckedOut {
                    checkout: checkout.clone(),
                    backup,
                }),
                // Another program holds a copy (Windows): the lease stays,
                // and `get_copy` writes it once the program lets go.
                Err(Error::Unavailable(_)) => placed.push(CheckedOut {
                    checkout: checkout.clone(),
                    backup: None,
                }),
                Err(e) => {
                    for taken in &checkouts {
                        let _ = self.cancel(backend, taken).await;
                    }
                    return Err(e);
                }
            }
        }
        Ok(placed)
    }

    /// Checks in the copies of `checkouts` as one change described by
    /// `message`: each staged (`progress` told the bytes of all so far),
    /// then committed together. `cancel` stops it before the commit begins,
    /// leaving every check-out open and every copy as it was.
    pub async fn check_in_change(
        &self,
        backend: &dyn Backend,
        checkouts: &[Checkout],
        message: Option<String>,
        watch: Watch,
    ) -> Result<(Change, Vec<Closed>)> {
        let Watch {
            progress, cancel, ..
        } = watch;
        let copies = checkouts
            .iter()
            .map(|c| self.checked_in_copy(c))
            .collect::<Result<Vec<PathBuf>>>()?;
        let sent_before = Arc::new(AtomicU64::new(0));
        for (checkout, copy) in checkouts.iter().zip(&copies) {
            let mut upload = Upload::file(copy);
            let size = std::fs::metadata(copy)?.len();
            upload.cancel = cancel.clone();
            upload.progress = progress.clone().map(|told| {
                let before = sent_before.load(Ordering::Relaxed);
                Arc::new(move |sent| told(before + sent)) as Progress
            });
            backend.stage(checkout.id, upload).await?;
            sent_before.fetch_add(size, Ordering::Relaxed);
        }
        // The last moment to stop: once the commit is asked for, it commits.
        check_cancel(cancel.as_deref())?;
        let request = ChangeRequest {
            checkouts: checkouts.iter().map(|c| c.id).collect(),
            message: message.filter(|m| !m.trim().is_empty()),
        };
        let change = backend.commit_change(request).await?;
        let mut closed = Vec::with_capacity(checkouts.len());
        for (checkout, file) in checkouts.iter().zip(&change.files) {
            let result = Some(file.result.clone());
            let backup = self.after_check_in(backend, checkout, &result).await?;
            let done = backend.checkout(checkout.id).await?;
            closed.push(Closed {
                checkout: done,
                backup,
            });
        }
        Ok((change, closed))
    }
}

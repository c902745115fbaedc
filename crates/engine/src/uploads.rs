//! An upload on its way into a row: staged (hashed into its store), then
//! persisted under its digest and held until the write that would name it
//! has ended. Never leaves a folder's blob that no row names: a failed or
//! refused write's blob is removed (an object store's is swept later).

use std::sync::Arc;

use super::{off_thread, Bundled, Shared};
use crate::backend::Upload;
use crate::blobs::{BlobHold, Blobs, Staged};
use crate::error::Result;
use crate::failpoint;
use crate::model::{check_message, CheckoutId, CheckoutState, Digest, Participant, Timestamp};
use crate::rules::{self, Blob};
use crate::store::{Durability, Tx};

/// The upload a write would name, and how its value tells whether it did.
pub(super) struct Naming<T> {
    pending: PendingBlob,
    names_it: fn(&T) -> bool,
}

impl<T> Naming<T> {
    pub(super) fn new(pending: PendingBlob, names_it: fn(&T) -> bool) -> Self {
        Self { pending, names_it }
    }

    /// After the write: kept if its value names the blob, else removed.
    pub(super) fn settle(self, outcome: &Result<T>) {
        match outcome {
            Ok(value) if (self.names_it)(value) => self.pending.named(),
            _ => drop(self.pending),
        }
    }
}

/// An upload's blob, held (see [`crate::blobs::BlobStore::hold`]) from before it is named by
/// its digest until the transaction that would name it in a row has ended.
/// Dropped without [`PendingBlob::named`] (that transaction failed or refused,
/// or never ran), it removes the blob unless a committed row names it or
/// another upload holds it; what a crash leaves, the next open sweeps.
pub(super) struct PendingBlob {
    hold: Option<BlobHold>,
    shared: Arc<Shared>,
}

impl PendingBlob {
    /// A committed row names the blob: only the hold is released.
    pub(super) fn named(mut self) {
        self.hold.take();
    }
}

impl Drop for PendingBlob {
    fn drop(&mut self) {
        let Some(hold) = self.hold.take() else {
            return;
        };
        let digest = hold.digest().clone();
        drop(hold);
        let shared = &self.shared;
        let removed = shared
            .blobs
            .remove_unnamed(&digest, |d| shared.store.read(|tx| tx.names_blob(d)));
        if let Err(e) = removed {
            tracing::warn!("an unnamed blob stays until the next open: {e}");
        }
    }
}

impl Bundled {
    /// Hashes an upload into a temporary blob, checking its declared digest.
    pub(super) async fn stage(&self, upload: Upload) -> Result<Staged> {
        let options = &self.shared.options;
        self.shared
            .blobs
            .stage(upload, options.max_upload, &options.failpoints)
            .await
    }

    /// Names a staged blob by its digest; rows may refer to it from then on.
    /// The blob is held until the returned pending blob is named or dropped.
    pub(super) async fn persist(&self, staged: Staged) -> Result<(Blob, PendingBlob)> {
        let blob = blob_of(&staged);
        let shared = self.shared.clone();
        let pending = match (&shared.blobs, staged) {
            (Blobs::Folder(store), Staged::Folder(staged)) => {
                let store = store.clone();
                off_thread(move || {
                    let pending = PendingBlob {
                        hold: Some(store.hold(&staged.digest)?),
                        shared: shared.clone(),
                    };
                    store.persist(staged)?;
                    shared.options.failpoints.hit(failpoint::at::BLOB_RENAMED)?;
                    Ok(pending)
                })
                .await?
            }
            // No hold: an object is never removed when its transaction fails.
            #[cfg(feature = "s3")]
            (Blobs::Objects(objects), Staged::Object(staged)) => {
                objects.persist(staged).await?;
                shared.options.failpoints.hit(failpoint::at::BLOB_RENAMED)?;
                PendingBlob {
                    hold: None,
                    shared: shared.clone(),
                }
            }
            #[cfg(feature = "s3")]
            _ => unreachable!("a blob is staged in the store that names it"),
        };
        Ok((blob, pending))
    }

    /// An upload that ends in a write (an import, a check-in, an edit's
    /// commit): its description checked and `precheck` read before a byte is
    /// read (a stranger, an unknown or closed check-out or edit is refused
    /// without reading them), the bytes
    /// staged, then `write` run on what it names. The staged bytes are
    /// persisted (and held), with the durability of a write that names new
    /// bytes, only where `needs_blob` says so of the precheck and the staged
    /// digest; else only their digest and size (a retry, the head's own bytes,
    /// or a write that will refuse), and nothing to remove after.
    pub(super) async fn upload_and_write<P: Send + 'static, T: Send + 'static>(
        &self,
        upload: Upload,
        precheck: impl FnOnce(&dyn Tx, &Participant, Timestamp) -> Result<P> + Send + 'static,
        needs_blob: impl FnOnce(P, &Digest) -> bool,
        names_it: fn(&T) -> bool,
        write: impl Fn(&dyn Tx, &Participant, &Blob, Timestamp) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let message = check_message(upload.message.clone())?;
        let before = self.read(move |tx, me, now| precheck(tx, me, now)).await?;
        let staged = self.stage(upload).await?;
        let (mut blob, durability, naming) = if needs_blob(before, staged.digest()) {
            let (blob, pending) = self.persist(staged).await?;
            (blob, Durability::Full, Some(Naming { pending, names_it }))
        } else {
            (blob_of(&staged), Durability::Normal, None)
        };
        blob.message = message;
        self.write_naming(durability, naming, move |tx, me, now, _| {
            write(tx, me, &blob, now)
        })
        .await
    }

    /// An upload to your check-out `id` (a check-in, or a file staged for a
    /// change) that `write` names. No new blob for a retry (its first
    /// upload stored the same bytes, or it is refused) nor for the head's
    /// bytes, which a committed row keeps. Any write that answers names its
    /// bytes (a version, a proposal, a staged file, or the head's own).
    pub(super) async fn upload_to_checkout<T: Send + 'static>(
        &self,
        id: CheckoutId,
        upload: Upload,
        write: impl Fn(&dyn Tx, &Participant, &Blob, Timestamp) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.upload_and_write(
            upload,
            move |tx, me, _| rules::checkin_precheck(tx, me, id),
            |(before, head_digest), digest| {
                before.checkout.state != CheckoutState::Closed && *digest != head_digest
            },
            |_: &T| true,
            write,
        )
        .await
    }
}

/// A staged upload as the blob a version or proposal names.
pub(crate) fn blob_of(staged: &Staged) -> Blob {
    Blob {
        digest: staged.digest().clone(),
        size: staged.size(),
        message: None,
        change: None,
    }
}

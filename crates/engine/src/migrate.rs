//! A data folder copied into a studio's store: blobs first (each checked), then
//! every row in one transaction. Never writes into a store that has rows.

use super::{in_place, off_thread, Bundled};
use crate::backend::Upload;
use crate::error::{Error, Result};
use crate::failpoint;
use crate::model::*;
use leasedesk_store_postgres::copy::{self, RowCounts};

/// How far a migration is (see [`Bundled::migrate_into`]): blob n of total.
#[derive(Clone, Copy, Debug)]
pub enum MigrationStep {
    BlobCopied(usize, usize),
    BlobKept(usize, usize),
}

impl Bundled {
    /// Copies this store (a data folder) into `target` (a studio's store, empty)
    /// with every user, token, version, check-out, edit, proposal and event.
    /// Blobs go first, each checked against its digest as it arrives, and any
    /// the target has already are skipped; then every row, in one transaction
    /// of the target's. Interrupted, it can be run again: rows were either all
    /// copied or none, and the blobs copied are kept.
    pub async fn migrate_into(
        &self,
        target: &Bundled,
        mut progress: impl FnMut(MigrationStep),
    ) -> Result<RowCounts> {
        let empty = target.shared.clone();
        off_thread(move || copy::ensure_empty(empty.store.postgres()?)).await?;
        let source = self.shared.clone();
        let digests = in_place(move || source.store.read(|tx| tx.blob_digests())).await?;
        let mut digests: Vec<Digest> = digests.into_iter().collect();
        digests.sort();
        let total = digests.len();
        for (n, digest) in digests.into_iter().enumerate() {
            if target.shared.blobs.contains(&digest).await? {
                progress(MigrationStep::BlobKept(n + 1, total));
                continue;
            }
            let reader = self.shared.blobs.open_read(&digest).await.map_err(|e| {
                Error::NotFound(format!(
                    "the data folder's blob {digest} cannot be read: {e}"
                ))
            })?;
            let upload = Upload::stream(reader).with_digest(digest.clone());
            let staged = target.stage(upload).await.map_err(|e| match e {
                Error::DigestMismatch { actual, .. } => Error::Invalid(format!(
                    "the data folder's blob {digest} is damaged (its bytes hash to {actual}): nothing was copied of it"
                )),
                other => other,
            })?;
            let (_, pending) = target.persist(staged).await?;
            // Named once the rows are copied; until then an unnamed blob of
            // an interrupted migration is what an open's sweep removes.
            pending.named();
            self.shared
                .options
                .failpoints
                .hit(failpoint::at::MIGRATE_BLOB)?;
            progress(MigrationStep::BlobCopied(n + 1, total));
        }
        let (source, target) = (self.shared.clone(), target.shared.clone());
        off_thread(move || copy::copy_rows(source.store.sqlite()?, target.store.postgres()?)).await
    }
}

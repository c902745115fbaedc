//! Uploads' parts as objects (`blobs::parts`): `PREFIX/uploads/<id>/<name>`,
//! each put whole in one request.

use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use tokio::io::AsyncRead;

use super::{age, ObjectBlobs};
use crate::error::{Error, Result};
use crate::model::UploadId;

impl ObjectBlobs {
    fn uploads_key(&self) -> Key {
        self.prefix.clone().join("uploads")
    }

    fn part_key(&self, upload: &str, name: &str) -> Key {
        self.uploads_key().join(upload).join(name)
    }

    pub(crate) async fn put_part(&self, upload: &str, name: &str, bytes: Vec<Bytes>) -> Result<()> {
        let payload: PutPayload = bytes.into_iter().collect();
        self.store
            .put(&self.part_key(upload, name), payload)
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(())
    }

    pub(crate) async fn open_part(
        &self,
        upload: &str,
        name: &str,
        range: Range<u64>,
    ) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        let options = object_store::GetOptions {
            range: Some(object_store::GetRange::Bounded(range)),
            ..Default::default()
        };
        let found = self
            .store
            .get_opts(&self.part_key(upload, name), options)
            .await
            .map_err(|e| match e {
                object_store::Error::NotFound { .. } => {
                    Error::Internal(format!("upload {upload}'s part {name} is missing"))
                }
                e => self.unavailable(e),
            })?;
        let stream = found.into_stream().map_err(io::Error::other);
        Ok(Box::pin(tokio_util::io::StreamReader::new(stream)))
    }

    pub(crate) async fn remove_parts(&self, upload: &str) -> Result<()> {
        self.remove_parts_in(&*self.store, upload).await
    }

    /// As [`ObjectBlobs::remove_parts`], blocking: for the sweep.
    pub(crate) fn remove_parts_blocking(&self, upload: &str) -> Result<()> {
        self.on_own_runtime(|store| async move { self.remove_parts_in(&*store, upload).await })
    }

    /// As [`ObjectBlobs::part_uploads`], blocking: for the sweep.
    pub(crate) fn part_uploads_blocking(&self) -> Result<Vec<(UploadId, Duration)>> {
        self.on_own_runtime(|store| async move { self.part_uploads_in(&*store).await })
    }

    async fn remove_parts_in(&self, store: &dyn ObjectStore, upload: &str) -> Result<()> {
        let under = self.uploads_key().join(upload);
        let keys: Vec<Key> = store
            .list(Some(&under))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .map_err(|e| self.unavailable(e))?;
        for key in keys {
            match store.delete(&key).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.unavailable(e)),
            }
        }
        Ok(())
    }

    /// Each upload with parts, and how long ago its newest part was written.
    async fn part_uploads_in(&self, store: &dyn ObjectStore) -> Result<Vec<(UploadId, Duration)>> {
        let mut newest: std::collections::HashMap<UploadId, Duration> = Default::default();
        let root = self.uploads_key();
        let mut listing = store.list(Some(&root));
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(|e| self.unavailable(e))?;
            let Some(id) = meta
                .location
                .prefix_match(&root)
                .and_then(|mut parts| parts.next())
                .and_then(|part| part.as_ref().parse::<UploadId>().ok())
            else {
                continue;
            };
            let written = age(meta.last_modified);
            newest
                .entry(id)
                .and_modify(|d| *d = (*d).min(written))
                .or_insert(written);
        }
        Ok(newest.into_iter().collect())
    }
}

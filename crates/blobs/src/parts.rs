//! Where resumable uploads wait (`bundled::transfers`): their chunk lists
//! and the bytes that came, as parts beside the blobs, so that every server
//! sharing the blobs reads the same ones: a folder's `uploads/<id>/<name>`
//! files, or a bucket's `PREFIX/uploads/<id>/<name>` objects. A part is
//! written whole before any row names it (a file written, synced and
//! renamed into place; an object put) and never changes: its name says
//! what it holds, so writing it again writes the same bytes.

use std::io;
use std::ops::Range;
use std::path::PathBuf;
use std::pin::Pin;
#[cfg(feature = "s3")]
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

use super::folder::{rename_durably, sync_dir};
use super::Blobs;
#[cfg(feature = "s3")]
use super::ObjectBlobs;
use crate::error::{Error, Result};
use crate::model::UploadId;
use crate::owner_only;

/// The uploads' parts of one store.
#[derive(Clone)]
pub enum UploadParts {
    /// In this folder, a folder per upload.
    Folder(PathBuf),
    /// In the bucket beside the blobs.
    #[cfg(feature = "s3")]
    Objects(Arc<ObjectBlobs>),
}

impl Blobs {
    /// Where these blobs' uploads keep their parts: beside them.
    pub fn upload_parts(&self) -> UploadParts {
        match self {
            Blobs::Folder(store) => UploadParts::Folder(
                store
                    .root()
                    .parent()
                    .unwrap_or(store.root())
                    .join("uploads"),
            ),
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => UploadParts::Objects(objects.clone()),
        }
    }
}

impl UploadParts {
    /// Writes the part `name` of upload `id`: `bytes`, one after another.
    pub async fn put(&self, id: UploadId, name: &str, bytes: Vec<Bytes>) -> Result<()> {
        match self {
            UploadParts::Folder(root) => {
                let dir = root.join(id.to_string());
                let (temp, path) = (dir.join(format!("{name}.part")), dir.join(name));
                let made = async {
                    let made = dir.clone();
                    tokio::task::spawn_blocking(move || owner_only::create_dir_all(&made))
                        .await
                        .map_err(io::Error::other)??;
                    let mut file = tokio::fs::File::create(&temp).await?;
                    for piece in &bytes {
                        file.write_all(piece).await?;
                    }
                    file.sync_data().await?;
                    drop(file);
                    let (temp, path, dir) = (temp.clone(), path.clone(), dir.clone());
                    tokio::task::spawn_blocking(move || {
                        rename_durably(&temp, &path)?;
                        sync_dir(&dir)
                    })
                    .await
                    .map_err(io::Error::other)?
                }
                .await;
                if made.is_err() {
                    let _ = tokio::fs::remove_file(&temp).await;
                }
                Ok(made?)
            }
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => objects.put_part(&id.to_string(), name, bytes).await,
        }
    }

    /// The bytes `range` of part `name` of upload `id`, as a stream.
    pub async fn open(
        &self,
        id: UploadId,
        name: &str,
        range: Range<u64>,
    ) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        match self {
            UploadParts::Folder(root) => {
                let path = root.join(id.to_string()).join(name);
                let mut file = tokio::fs::File::open(&path)
                    .await
                    .map_err(|e| missing(id, name, e))?;
                file.seek(io::SeekFrom::Start(range.start)).await?;
                Ok(Box::pin(file.take(range.end - range.start)))
            }
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => objects.open_part(&id.to_string(), name, range).await,
        }
    }

    /// The whole part `name` of upload `id`, which is `size` bytes.
    pub async fn read(&self, id: UploadId, name: &str, size: u64) -> Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(size as usize);
        self.open(id, name, 0..size)
            .await?
            .read_to_end(&mut bytes)
            .await?;
        if bytes.len() as u64 != size {
            return Err(Error::Internal(format!(
                "upload {id}'s {name} is {} bytes, not {size}",
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    /// Removes every part of upload `id` (none is not an error).
    pub async fn remove(&self, id: UploadId) -> Result<()> {
        match self {
            UploadParts::Folder(root) => {
                match tokio::fs::remove_dir_all(root.join(id.to_string())).await {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(e.into()),
                }
            }
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => objects.remove_parts(&id.to_string()).await,
        }
    }

    /// As [`UploadParts::remove`], blocking: for the sweep.
    pub fn remove_blocking(&self, id: UploadId) -> Result<()> {
        match self {
            UploadParts::Folder(root) => match std::fs::remove_dir_all(root.join(id.to_string())) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e.into()),
            },
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => objects.remove_parts_blocking(&id.to_string()),
        }
    }

    /// The uploads that have parts, each with how long ago its newest part
    /// was written: what a sweep looks over for uploads no row names.
    /// Blocking.
    pub fn uploads(&self) -> Result<Vec<(UploadId, Duration)>> {
        match self {
            UploadParts::Folder(root) => {
                let mut found = Vec::new();
                let entries = match std::fs::read_dir(root) {
                    Ok(entries) => entries,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(found),
                    Err(e) => return Err(e.into()),
                };
                for entry in entries.flatten() {
                    let Some(id) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                        continue;
                    };
                    let written = entry
                        .metadata()
                        .and_then(|m| m.modified())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    found.push((id, written.elapsed().unwrap_or_default()));
                }
                Ok(found)
            }
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => objects.part_uploads_blocking(),
        }
    }
}

fn missing(id: UploadId, name: &str, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::NotFound => Error::Internal(format!("upload {id}'s part {name} is missing")),
        _ => e.into(),
    }
}

//! Where resumable uploads wait (`bundled::transfers`): their chunk lists
//! and the bytes that came, beside the blobs, so that every server sharing
//! the blobs reads the same ones.
//!
//! - In a folder, `uploads/<id>/`: the list is a file `chunks`, and the
//!   bytes one file, `bytes`, each at its own offset, so that an upload of
//!   a whole file in order is that file, which becomes its blob by a link
//!   instead of a copy. Bytes count once synced; at any offset only the
//!   checked chunk that belongs there is written, so two requests writing
//!   at once (one superseded on another server) write the same, but for
//!   the unchecked part of a chunk a request's body ended in, which a
//!   request superseded meanwhile may write late: a file an earlier
//!   request wrote into is hashed again when it is used.
//! - In a bucket, `PREFIX/uploads/<id>/<name>` objects: the list, and a part
//!   per run of bytes, put whole and named by the run it holds.

use std::io::{self, Seek, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::pin::Pin;
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
use leasedesk_files::writeback::Writeback;

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
    /// Writes the named part `name` of upload `id` (its list): `bytes`, one
    /// after another, synced and renamed into place.
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

    /// Where a folder's upload `id` keeps its bytes; `None` in a bucket.
    pub fn spool(&self, id: UploadId) -> Option<PathBuf> {
        match self {
            UploadParts::Folder(root) => Some(root.join(id.to_string()).join(SPOOL)),
            #[cfg(feature = "s3")]
            UploadParts::Objects(_) => None,
        }
    }

    /// Begins writing upload `id`'s bytes from byte `at`.
    pub async fn writer(&self, id: UploadId, at: u64) -> Result<BytesWriter> {
        match self {
            UploadParts::Folder(root) => {
                let dir = root.join(id.to_string());
                let file = tokio::task::spawn_blocking(move || -> Result<std::fs::File> {
                    let path = dir.join(SPOOL);
                    let opened = owner_only::file_options()
                        .write(true)
                        .truncate(false)
                        .open(&path);
                    let mut file = match opened {
                        Ok(file) if file.metadata()?.len() >= at => file,
                        // Begun where its bytes are kept another way (by
                        // an older server), or cut short: begun again.
                        Ok(_) => return Err(begin_again(id)),
                        Err(e) if e.kind() == io::ErrorKind::NotFound && at == 0 => {
                            owner_only::create_dir_all(&dir)?;
                            let file = owner_only::file_options()
                                .write(true)
                                .create(true)
                                .truncate(false)
                                .open(&path)?;
                            // Its name is durable before any byte in it counts.
                            sync_dir(&dir)?;
                            if let Some(uploads) = dir.parent() {
                                sync_dir(uploads)?;
                            }
                            file
                        }
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {
                            return Err(begin_again(id))
                        }
                        Err(e) => return Err(e.into()),
                    };
                    file.seek(io::SeekFrom::Start(at))?;
                    Ok(file)
                })
                .await
                .map_err(io::Error::other)??;
                Ok(BytesWriter(Writing::Spool {
                    file: Arc::new(file),
                    writeback: Writeback::new(at),
                }))
            }
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => Ok(BytesWriter(Writing::Objects(objects.clone(), id))),
        }
    }

    /// The bytes `range` of the run `piece` (as counted, `(start, stop)`) of
    /// upload `id`, `range` counted from the run's start, as a stream.
    pub async fn open(
        &self,
        id: UploadId,
        piece: (u64, u64),
        range: Range<u64>,
    ) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        match self {
            UploadParts::Folder(root) => {
                let path = root.join(id.to_string()).join(SPOOL);
                let mut file = tokio::fs::File::open(&path).await.map_err(|e| {
                    if e.kind() == io::ErrorKind::NotFound {
                        // An upload an older server began in parts of its own.
                        begin_again(id)
                    } else {
                        e.into()
                    }
                })?;
                file.seek(io::SeekFrom::Start(piece.0 + range.start))
                    .await?;
                Ok(Box::pin(file.take(range.end - range.start)))
            }
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => {
                let name = piece_name(piece.0, piece.1);
                objects.open_part(&id.to_string(), &name, range).await
            }
        }
    }

    /// The whole named part `name` of upload `id` (its list), which is
    /// `size` bytes.
    pub async fn read(&self, id: UploadId, name: &str, size: u64) -> Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(size as usize);
        let mut part = self.open_named(id, name, size).await?;
        part.read_to_end(&mut bytes).await?;
        if bytes.len() as u64 != size {
            return Err(Error::Internal(format!(
                "upload {id}'s {name} is {} bytes, not {size}",
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    async fn open_named(
        &self,
        id: UploadId,
        name: &str,
        size: u64,
    ) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        match self {
            UploadParts::Folder(root) => {
                let path = root.join(id.to_string()).join(name);
                let file = tokio::fs::File::open(&path)
                    .await
                    .map_err(|e| missing(id, name, e))?;
                Ok(Box::pin(file.take(size)))
            }
            #[cfg(feature = "s3")]
            UploadParts::Objects(objects) => {
                objects.open_part(&id.to_string(), name, 0..size).await
            }
        }
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

/// An upload whose bytes are not where this server keeps them: the client
/// begins it again.
fn begin_again(id: UploadId) -> Error {
    Error::NotFound(format!("no upload {id}: begin a new one"))
}

/// The file of a folder's upload that holds its bytes.
const SPOOL: &str = "bytes";

/// The part of a bucket's upload holding its bytes `start..stop`.
#[cfg(feature = "s3")]
fn piece_name(start: u64, stop: u64) -> String {
    format!("{start}-{stop}")
}

/// Where one append writes an upload's checked bytes, in order.
pub struct BytesWriter(Writing);

enum Writing {
    /// A folder's spool, open at where the append writes next; its bytes
    /// are durable once synced ([`Durable`]).
    Spool {
        file: Arc<std::fs::File>,
        writeback: Writeback,
    },
    /// A bucket: each run is a part of its own, durable once put.
    #[cfg(feature = "s3")]
    Objects(Arc<ObjectBlobs>, UploadId),
}

/// Makes what a [`BytesWriter`] wrote durable, while it goes on writing.
#[derive(Clone)]
pub enum Durable {
    Spool(Arc<std::fs::File>),
    Already,
}

impl BytesWriter {
    /// Writes `bytes`, the upload's bytes `from..to`, which follow those
    /// written before. In a bucket they are durable on return; in a folder,
    /// once a [`Durable`] taken after returns.
    pub async fn write(&mut self, from: u64, to: u64, bytes: Vec<Bytes>) -> Result<()> {
        match &mut self.0 {
            Writing::Spool { file, writeback } => {
                let writing = file.clone();
                tokio::task::spawn_blocking(move || -> io::Result<()> {
                    for piece in &bytes {
                        (&*writing).write_all(piece)?;
                    }
                    Ok(())
                })
                .await
                .map_err(io::Error::other)??;
                writeback.wrote(file, to - from);
                Ok(())
            }
            #[cfg(feature = "s3")]
            Writing::Objects(objects, id) => {
                objects
                    .put_part(&id.to_string(), &piece_name(from, to), bytes)
                    .await
            }
        }
    }

    /// What makes every byte written so far durable.
    pub fn durable(&self) -> Durable {
        match &self.0 {
            Writing::Spool { file, .. } => Durable::Spool(file.clone()),
            #[cfg(feature = "s3")]
            Writing::Objects(..) => Durable::Already,
        }
    }

    /// How many checked bytes an append writes at most at once, and how
    /// many must be written before they are made durable and counted (which
    /// goes on beside the writing, one count at a time).
    pub fn sizes(&self) -> (usize, u64) {
        match &self.0 {
            Writing::Spool { .. } => (1 << 20, 256 << 10),
            #[cfg(feature = "s3")]
            Writing::Objects(..) => (2 << 20, 2 << 20),
        }
    }
}

impl Durable {
    /// Whether the runs written are one file, counted as one run; else
    /// each run is a part of its own, counted as it is.
    pub fn is_one_file(&self) -> bool {
        matches!(self, Durable::Spool(_))
    }

    pub async fn sync(self) -> Result<()> {
        match self {
            Durable::Spool(file) => {
                tokio::task::spawn_blocking(move || file.sync_data())
                    .await
                    .map_err(io::Error::other)??;
                Ok(())
            }
            Durable::Already => Ok(()),
        }
    }
}

fn missing(id: UploadId, name: &str, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::NotFound => Error::Internal(format!("upload {id}'s part {name} is missing")),
        _ => e.into(),
    }
}

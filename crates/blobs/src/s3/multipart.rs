//! A multipart upload to the S3 store, with a few parts in flight ([`PART`]
//! bytes each, [`PARTS_IN_FLIGHT`] at once), and the reading of an upload
//! into parts from a small pool of buffers. Never
//! completes an upload by itself: the S3 store does once the digest is right.

use bytes::Bytes;
use object_store::path::Path as Key;
use object_store::{MultipartUpload, ObjectStoreExt};
use tokio::io::AsyncRead;

use super::ObjectBlobs;
use crate::error::{Error, Result};
use crate::{read_full_async, Reading};

/// Size of a multipart upload's parts (S3 wants at least 5 MiB but the last).
pub(super) const PART: usize = 8 << 20;

/// Parts sent at once beyond the one being read: with it, what bounds an
/// upload's memory (three parts).
const PARTS_IN_FLIGHT: usize = 2;

/// What the client reads at a time while filling a part (for cancel checks
/// and progress).
const READ_PIECE: usize = 1 << 20;

/// A multipart upload with a few parts in flight. Dropped without
/// [`Multipart::complete`] or [`Multipart::abort`] (a client gone, a task
/// cancelled), it is aborted in the background: its parts never become an
/// object.
pub(super) struct Multipart {
    upload: Option<Box<dyn MultipartUpload>>,
    parts: tokio::task::JoinSet<object_store::Result<()>>,
    url: String,
}

impl Multipart {
    pub(super) async fn start(blobs: &ObjectBlobs, key: &Key) -> Result<Self> {
        let upload = blobs
            .store
            .put_multipart(key)
            .await
            .map_err(|e| blobs.unavailable(e))?;
        Ok(Self {
            upload: Some(upload),
            parts: tokio::task::JoinSet::new(),
            url: blobs.url.clone(),
        })
    }

    fn failed(&self, e: impl std::fmt::Display) -> Error {
        Error::Unavailable(format!("the blob store {} failed: {e}", self.url))
    }

    /// Sends a part once fewer than [`PARTS_IN_FLIGHT`] are on their way.
    pub(super) async fn send(&mut self, part: Bytes) -> Result<()> {
        while self.parts.len() >= PARTS_IN_FLIGHT {
            self.next_sent().await?;
        }
        let upload = self.upload.as_mut().expect("an open upload");
        self.parts.spawn(upload.put_part(part.into()));
        Ok(())
    }

    /// Sends a local file's bytes, part by part.
    pub(super) async fn send_file(&mut self, file: tokio::fs::File) -> Result<()> {
        let mut file = tokio::io::BufReader::with_capacity(READ_PIECE, file);
        loop {
            let mut part = PooledPart::take();
            let n = read_full_async(&mut file, &mut part.buf).await?;
            part.len = n;
            if n > 0 {
                self.send(Bytes::from_owner(part)).await?;
            }
            if n < PART {
                return Ok(());
            }
        }
    }

    async fn next_sent(&mut self) -> Result<()> {
        match self.parts.join_next().await {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(self.failed(e)),
            Some(Err(e)) => Err(self.failed(e)),
        }
    }

    /// Waits for every part, then completes: the object appears whole. Any
    /// failure aborts instead.
    pub(super) async fn complete(mut self) -> Result<()> {
        let done: Result<()> = async {
            while !self.parts.is_empty() {
                self.next_sent().await?;
            }
            let upload = self.upload.as_mut().expect("an open upload");
            upload.complete().await.map_err(|e| self.failed(e))?;
            Ok(())
        }
        .await;
        match done {
            Ok(()) => {
                self.upload = None;
                Ok(())
            }
            Err(e) => {
                self.abort().await;
                Err(e)
            }
        }
    }

    /// Stops sending and drops the parts sent (best effort: a bucket's
    /// lifecycle rule for incomplete uploads takes what a crash leaves).
    pub(super) async fn abort(mut self) {
        self.parts.shutdown().await;
        if let Some(mut upload) = self.upload.take() {
            if let Err(e) = upload.abort().await {
                tracing::warn!("an aborted upload's parts stay in {}: {e}", self.url);
            }
        }
    }
}

impl Drop for Multipart {
    fn drop(&mut self) {
        let Some(mut upload) = self.upload.take() else {
            return;
        };
        self.parts.abort_all();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = upload.abort().await;
                });
            }
            Err(_) => tracing::warn!("an abandoned upload's parts stay in {}", self.url),
        }
    }
}

/// Reads up to one part (fewer bytes only at the end), hashing it.
pub(super) async fn read_part(
    read: &mut Reading<'_>,
    reader: &mut (impl AsyncRead + Unpin),
) -> Result<Bytes> {
    let mut part = PooledPart::take();
    let mut filled = 0;
    while filled < PART {
        read.check_cancel()?;
        let piece = &mut part.buf[filled..(filled + READ_PIECE).min(PART)];
        let n = read_full_async(reader, piece).await?;
        if n == 0 {
            break;
        }
        read.take(&piece[..n])?;
        filled += n;
        if n < piece.len() {
            break;
        }
    }
    part.len = filled;
    Ok(Bytes::from_owner(part))
}

/// A part's buffer, given back to a small pool when the part is sent (and
/// any retry is over): allocating 8 MiB afresh for each part leaves freed
/// blocks in every thread's malloc arena, and a server's peak memory grows
/// with each upload.
struct PooledPart {
    buf: Vec<u8>,
    len: usize,
}

/// Spare part buffers, at most what one upload has in use.
static SPARE_PARTS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

impl PooledPart {
    fn take() -> Self {
        let spare = SPARE_PARTS.lock().unwrap_or_else(|p| p.into_inner()).pop();
        Self {
            buf: spare.unwrap_or_else(|| vec![0u8; PART]),
            len: 0,
        }
    }
}

impl AsRef<[u8]> for PooledPart {
    fn as_ref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Drop for PooledPart {
    fn drop(&mut self) {
        let mut spare = SPARE_PARTS.lock().unwrap_or_else(|p| p.into_inner());
        if spare.len() <= PARTS_IN_FLIGHT {
            spare.push(std::mem::take(&mut self.buf));
        }
    }
}

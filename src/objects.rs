//! Blobs in S3-compatible object storage (`--blobs s3://BUCKET/PREFIX`), through
//! the `object_store` crate, with its settings from the standard `AWS_*`
//! variables. A blob is the object `PREFIX/blobs/<hex>`; previews are under
//! `PREFIX/previews/`.
//!
//! An object appears whole or not at all: an upload larger than one part goes
//! as a multipart upload to its digest's key, hashed while it is sent, and is
//! completed only after the digest is found right; a mismatch, a client cut
//! off or any error aborts it. Small uploads (one part) are held in memory,
//! checked, then put. An upload that declares no digest and is larger than a
//! part cannot go to its key before it is known: it is hashed into a local
//! temporary file first and sent from there (a temporary key then a copy
//! would be limited to 5 GiB on S3).
//!
//! Several servers share a bucket and no lock spans them, so nothing here
//! removes a blob when a transaction fails: an object no row names is left,
//! and a sweep (at most once a day, at an open) deletes those last written
//! more than a day ago. An upload of bytes that are already stored rewrites
//! their object unless it was written within the hour, so that an object
//! about to be named again is never old enough to be swept.

use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as Key;
use object_store::{
    ClientOptions, MultipartUpload, ObjectStore, ObjectStoreExt, PutMode, PutOptions, RetryConfig,
};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::backend::{check_cancel, Progress};
use crate::blob::{BlobStore, StagedBlob};
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::Digest;

/// Size of a multipart upload's parts (S3 wants at least 5 MiB but the last).
pub const PART: usize = 8 << 20;

/// Parts sent at once beyond the one being read: with it, what bounds an
/// upload's memory (three parts).
const PARTS_IN_FLIGHT: usize = 2;

/// What the client reads at a time while filling a part (for cancel checks
/// and progress).
const READ_PIECE: usize = 1 << 20;

/// An unnamed object younger than this is never swept: an upload that
/// stored it may be about to commit the row that names it.
const SWEEP_AFTER: Duration = Duration::from_secs(24 * 3600);

/// An upload whose object exists rewrites it when it is older than this, so
/// that the object it is about to name is young again (see [`SWEEP_AFTER`]).
const REFRESH_AFTER: Duration = Duration::from_secs(3600);

/// How long a health check waits for the store.
const HEALTH_WITHIN: Duration = Duration::from_secs(5);

/// Where `--blobs` says blobs live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlobsUrl {
    /// `file:///PATH`: a (shared) folder.
    Folder(std::path::PathBuf),
    /// `s3://BUCKET/PREFIX`.
    S3 { bucket: String, prefix: String },
}

impl BlobsUrl {
    /// Parses a `--blobs` URL; anything else is `Invalid`, naming it.
    pub fn parse(url: &str) -> Result<Self> {
        let invalid = |why: &str| {
            Error::Invalid(format!(
                "--blobs {url}: {why} (use s3://BUCKET/PREFIX or file:///PATH)"
            ))
        };
        let parsed = url::Url::parse(url).map_err(|e| invalid(&e.to_string()))?;
        match parsed.scheme() {
            "file" => {
                if parsed
                    .host_str()
                    .is_some_and(|h| !h.is_empty() && h != "localhost")
                {
                    return Err(invalid("a file URL names no host"));
                }
                let path = parsed
                    .to_file_path()
                    .map_err(|()| invalid("not a folder's absolute path"))?;
                Ok(Self::Folder(path))
            }
            "s3" => {
                let bucket = parsed
                    .host_str()
                    .filter(|b| !b.is_empty())
                    .ok_or_else(|| invalid("no bucket"))?
                    .to_owned();
                if parsed.query().is_some() || parsed.fragment().is_some() {
                    return Err(invalid(
                        "settings come from the AWS_* variables, not the URL",
                    ));
                }
                let prefix = parsed.path().trim_matches('/').to_owned();
                Key::parse(&prefix).map_err(|e| invalid(&format!("the prefix: {e}")))?;
                Ok(Self::S3 { bucket, prefix })
            }
            _ => Err(invalid("not a kind of blob store Leasedesk knows")),
        }
    }
}

/// Blobs (and previews) in one bucket under one prefix.
pub struct ObjectBlobs {
    store: Arc<dyn ObjectStore>,
    url: String,
    bucket: String,
    prefix: Key,
    /// The `AWS_*` settings it was made with, for a store of its own at open.
    settings: Vec<(String, String)>,
    /// Where a large upload of undeclared digest is hashed before it is sent,
    /// and where a blob is copied for a preview's reader.
    spool: BlobStore,
}

impl std::fmt::Debug for ObjectBlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

impl ObjectBlobs {
    /// Opens the bucket (it must exist: checked now), with settings from the
    /// `AWS_*` variables. `spool` is a local folder for temporary files.
    pub fn open(url: &str, bucket: &str, prefix: &str, spool: &Path) -> Result<Self> {
        let settings: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| k.starts_with("AWS_"))
            .collect();
        let blobs = Self {
            store: build(url, bucket, &settings)?,
            url: url.to_owned(),
            bucket: bucket.to_owned(),
            prefix: Key::parse(prefix)
                .map_err(|e| Error::Invalid(format!("--blobs {url}: {e}")))?,
            settings,
            spool: BlobStore::open_spool(spool)?,
        };
        let this = &blobs;
        blobs.on_own_runtime(|store| async move { this.check_bucket(&*store).await })?;
        Ok(blobs)
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn blob_key(&self, digest: &Digest) -> Key {
        self.prefix.clone().join("blobs").join(digest.hex())
    }

    fn preview_key(&self, name: &str) -> Key {
        self.prefix.clone().join("previews").join(name)
    }

    /// Runs `f` on a runtime of its own, on a thread of its own, with a store
    /// of its own: open is synchronous and may be called on a runtime's
    /// thread, and a client's connections must not outlive their runtime.
    fn on_own_runtime<T, F, Fut>(&self, f: F) -> Result<T>
    where
        T: Send,
        F: FnOnce(Arc<dyn ObjectStore>) -> Fut + Send,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let store = build(&self.url, &self.bucket, &self.settings)?;
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(Error::from)?
                        .block_on(f(store))
                })
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// A listing under the prefix: fails when the bucket is missing or the
    /// store cannot be reached, and costs one small request.
    async fn check_bucket(&self, store: &dyn ObjectStore) -> Result<()> {
        match store.list_with_delimiter(Some(&self.prefix)).await {
            Ok(_) => Ok(()),
            Err(e) if is_missing_bucket(&e) => Err(Error::NotFound(format!(
                "the bucket {} does not exist (--blobs {}): create it first",
                self.bucket, self.url
            ))),
            Err(e) => Err(self.unavailable(e)),
        }
    }

    /// `Ok` when the store answers a listing within a few seconds; else why not.
    pub async fn health(&self) -> std::result::Result<(), String> {
        match tokio::time::timeout(HEALTH_WITHIN, self.check_bucket(&*self.store)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("blob store {}: {e}", self.url)),
            Err(_) => Err(format!(
                "blob store {}: no answer within {} s",
                self.url,
                HEALTH_WITHIN.as_secs()
            )),
        }
    }

    fn unavailable(&self, e: object_store::Error) -> Error {
        Error::Unavailable(format!("the blob store {} failed: {e}", self.url))
    }

    /// Reads an upload, hashing it, into a staged object (see the module's
    /// comment); `expected` is checked before anything becomes visible.
    pub async fn stage<R: AsyncRead + Unpin>(
        &self,
        mut reader: R,
        expected: Option<&Digest>,
        limit: u64,
        progress: Option<&Progress>,
        cancel: Option<&AtomicBool>,
        failpoints: &Failpoints,
    ) -> Result<StagedObject> {
        let mut read = Reading {
            hasher: blake3::Hasher::new(),
            size: 0,
            limit,
            progress,
            cancel,
        };
        let first = read.part(&mut reader).await?;
        if first.len() < PART {
            let digest = check(read.hasher.finalize().into(), expected)?;
            return Ok(StagedObject {
                digest,
                size: read.size,
                body: Body::Small(first),
            });
        }
        let Some(expected) = expected else {
            let rest = io::Cursor::new(first).chain(reader);
            let spooled = self
                .spool
                .stage_stream(rest, None, limit, progress, cancel, failpoints)
                .await?;
            return Ok(StagedObject {
                digest: spooled.digest.clone(),
                size: spooled.size,
                body: Body::Spooled(spooled),
            });
        };
        let mut upload = Multipart::start(self, &self.blob_key(expected)).await?;
        let sent: Result<()> = async {
            upload.send(first).await?;
            loop {
                failpoints.hit(failpoint::at::UPLOAD_STREAM)?;
                let part = read.part(&mut reader).await?;
                let last = part.len() < PART;
                if !part.is_empty() {
                    upload.send(part).await?;
                }
                if last {
                    return Ok(());
                }
            }
        }
        .await;
        let checked = sent.and_then(|()| check(read.hasher.finalize().into(), Some(expected)));
        match checked {
            Ok(digest) => Ok(StagedObject {
                digest,
                size: read.size,
                body: Body::Multipart(upload),
            }),
            Err(e) => {
                upload.abort().await;
                Err(e)
            }
        }
    }

    /// Makes a staged object visible under its digest's key. Bytes already
    /// stored there are the same bytes: they are left as they are, unless
    /// old enough that a sweep might take them soon (then written again).
    pub async fn persist(&self, staged: StagedObject) -> Result<()> {
        let key = self.blob_key(&staged.digest);
        let fresh = match self.store.head(&key).await {
            Ok(meta) => age(meta.last_modified) < REFRESH_AFTER,
            Err(object_store::Error::NotFound { .. }) => false,
            Err(e) => return Err(self.unavailable(e)),
        };
        match staged.body {
            Body::Multipart(upload) if fresh => {
                upload.abort().await;
                Ok(())
            }
            _ if fresh => Ok(()),
            Body::Small(bytes) => {
                let options = PutOptions {
                    mode: PutMode::Overwrite,
                    ..Default::default()
                };
                self.store
                    .put_opts(&key, bytes.into(), options)
                    .await
                    .map_err(|e| self.unavailable(e))?;
                Ok(())
            }
            Body::Multipart(upload) => upload.complete().await,
            Body::Spooled(spooled) => {
                let file = tokio::fs::File::open(spooled.temp_path()).await?;
                let mut upload = Multipart::start(self, &key).await?;
                let sent = async {
                    let mut file = tokio::io::BufReader::with_capacity(READ_PIECE, file);
                    loop {
                        let mut part = PooledPart::take();
                        let n = read_full(&mut file, &mut part.buf).await?;
                        part.len = n;
                        if n > 0 {
                            upload.send(Bytes::from_owner(part)).await?;
                        }
                        if n < PART {
                            return Ok(());
                        }
                    }
                }
                .await;
                match sent {
                    Ok(()) => upload.complete().await,
                    Err(e) => {
                        upload.abort().await;
                        Err(e)
                    }
                }
            }
        }
    }

    /// The blob's bytes as a stream (one GET, read as it arrives).
    /// Whether the bucket holds the blob `digest`.
    pub async fn contains(&self, digest: &Digest) -> Result<bool> {
        match self.store.head(&self.blob_key(digest)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.unavailable(e)),
        }
    }

    pub async fn open_read(&self, digest: &Digest) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        let found = self
            .store
            .get(&self.blob_key(digest))
            .await
            .map_err(|e| match e {
                object_store::Error::NotFound { .. } => {
                    Error::Internal(format!("blob {digest} is missing from {}", self.url))
                }
                e => self.unavailable(e),
            })?;
        let stream = found.into_stream().map_err(io::Error::other);
        Ok(Box::pin(tokio_util::io::StreamReader::new(stream)))
    }

    /// A local copy of the blob, its digest checked, removed when dropped:
    /// what a preview's reader (which wants a file) reads.
    pub async fn local_copy(&self, digest: &Digest) -> Result<StagedBlob> {
        let reader = self.open_read(digest).await?;
        self.spool
            .stage_stream(
                reader,
                Some(digest),
                u64::MAX,
                None,
                None,
                &Failpoints::default(),
            )
            .await
    }

    /// A stored preview: `Some((bytes, last written))`, or `None` if there is none.
    pub async fn preview(&self, name: &str) -> Result<Option<(Vec<u8>, Duration)>> {
        match self.store.get(&self.preview_key(name)).await {
            Ok(found) => {
                let written = age(found.meta.last_modified);
                let bytes = found.bytes().await.map_err(|e| self.unavailable(e))?;
                Ok(Some((bytes.to_vec(), written)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.unavailable(e)),
        }
    }

    /// Stores a preview (one PUT: a reader sees all of it or none).
    pub async fn put_preview(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.store
            .put(
                &self.preview_key(name),
                Bytes::copy_from_slice(bytes).into(),
            )
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(())
    }

    /// At most once a day (a stamp object says when it last ran), deletes
    /// every blob object that no committed row names and that was last
    /// written more than a day ago: what failed or refused uploads left.
    /// `named` is a snapshot; `is_named` asks afresh before each deletion.
    /// Returns how many it deleted.
    pub fn sweep_unnamed(
        &self,
        named: &HashSet<Digest>,
        is_named: impl Fn(&Digest) -> Result<bool> + Send + Sync,
    ) -> Result<usize> {
        self.on_own_runtime(|store| async move {
            let stamp = self.prefix.clone().join("swept");
            match store.head(&stamp).await {
                Ok(meta) if age(meta.last_modified) < SWEEP_AFTER => return Ok(0),
                Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.unavailable(e)),
            }
            store
                .put(&stamp, Bytes::new().into())
                .await
                .map_err(|e| self.unavailable(e))?;
            let blobs = self.prefix.clone().join("blobs");
            let mut listing = store.list(Some(&blobs));
            let mut removed = 0;
            while let Some(meta) = listing.next().await {
                let meta = meta.map_err(|e| self.unavailable(e))?;
                let Some(digest) = meta
                    .location
                    .filename()
                    .and_then(|hex| format!("blake3:{hex}").parse::<Digest>().ok())
                else {
                    continue; // not a blob of ours: leave it be
                };
                if named.contains(&digest) || age(meta.last_modified) < SWEEP_AFTER {
                    continue;
                }
                if is_named(&digest)? {
                    continue;
                }
                // Written again since the listing: an upload is about to name it.
                match store.head(&meta.location).await {
                    Ok(now) if age(now.last_modified) >= SWEEP_AFTER => {}
                    _ => continue,
                }
                match store.delete(&meta.location).await {
                    Ok(()) => removed += 1,
                    Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(self.unavailable(e)),
                }
            }
            Ok(removed)
        })
    }
}

/// An upload read and hashed, waiting to be made visible under its digest.
pub struct StagedObject {
    pub digest: Digest,
    pub size: u64,
    body: Body,
}

enum Body {
    /// The whole upload: it fit in one part.
    Small(Bytes),
    /// Every part sent to the digest's key; completed by `persist`, aborted if dropped.
    Multipart(Multipart),
    /// Hashed into a local file (no digest was declared): sent by `persist`.
    Spooled(StagedBlob),
}

/// A multipart upload with a few parts in flight. Dropped without
/// [`Multipart::complete`] or [`Multipart::abort`] (a client gone, a task
/// cancelled), it is aborted in the background: its parts never become an
/// object.
struct Multipart {
    upload: Option<Box<dyn MultipartUpload>>,
    parts: tokio::task::JoinSet<object_store::Result<()>>,
    url: String,
}

impl Multipart {
    async fn start(blobs: &ObjectBlobs, key: &Key) -> Result<Self> {
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
    async fn send(&mut self, part: Bytes) -> Result<()> {
        while self.parts.len() >= PARTS_IN_FLIGHT {
            self.next_sent().await?;
        }
        let upload = self.upload.as_mut().expect("an open upload");
        self.parts.spawn(upload.put_part(part.into()));
        Ok(())
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
    async fn complete(mut self) -> Result<()> {
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
    async fn abort(mut self) {
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

/// An upload's reading: the hash, the size so far, and what stops it.
struct Reading<'a> {
    hasher: blake3::Hasher,
    size: u64,
    limit: u64,
    progress: Option<&'a Progress>,
    cancel: Option<&'a AtomicBool>,
}

impl Reading<'_> {
    /// Reads up to one part (fewer bytes only at the end), hashing it.
    async fn part(&mut self, reader: &mut (impl AsyncRead + Unpin)) -> Result<Bytes> {
        let mut part = PooledPart::take();
        let mut filled = 0;
        while filled < PART {
            check_cancel(self.cancel)?;
            let piece = &mut part.buf[filled..(filled + READ_PIECE).min(PART)];
            let n = read_full(reader, piece).await?;
            if n == 0 {
                break;
            }
            self.size += n as u64;
            if self.size > self.limit {
                return Err(Error::TooLarge { limit: self.limit });
            }
            self.hasher.update(&piece[..n]);
            filled += n;
            if let Some(progress) = self.progress {
                progress(self.size);
            }
            if n < piece.len() {
                break;
            }
        }
        part.len = filled;
        Ok(Bytes::from_owner(part))
    }
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

fn check(actual: Digest, expected: Option<&Digest>) -> Result<Digest> {
    match expected {
        Some(expected) if *expected != actual => Err(Error::DigestMismatch {
            expected: expected.clone(),
            actual,
        }),
        _ => Ok(actual),
    }
}

async fn read_full(source: &mut (impl AsyncRead + Unpin), buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]).await? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// How long ago the store says an object was written (zero if in the future).
fn age(written: chrono::DateTime<chrono::Utc>) -> Duration {
    (chrono::Utc::now() - written).to_std().unwrap_or_default()
}

fn is_missing_bucket(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::NotFound { .. }) || e.to_string().contains("NoSuchBucket")
}

/// An S3 client for `bucket`: our timeouts and retries (a stalled store
/// gives an error within a minute, not after three), then the `AWS_*`
/// settings, which may change them (e.g. `AWS_TIMEOUT=5s`).
fn build(url: &str, bucket: &str, settings: &[(String, String)]) -> Result<Arc<dyn ObjectStore>> {
    let retry = RetryConfig {
        max_retries: 3,
        retry_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let client = ClientOptions::new()
        .with_timeout(Duration::from_secs(60))
        .with_connect_timeout(Duration::from_secs(5));
    let mut builder = AmazonS3Builder::new()
        .with_retry(retry)
        .with_client_options(client);
    for (key, value) in settings {
        if let Ok(key) = key.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
            builder = builder.with_config(key, value);
        }
    }
    let store = builder
        .with_bucket_name(bucket)
        .build()
        .map_err(|e| Error::Invalid(format!("--blobs {url}: {e}")))?;
    Ok(Arc::new(store))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_urls_parse_or_are_refused_by_name() {
        assert_eq!(
            BlobsUrl::parse("s3://studio-blobs/team/a").unwrap(),
            BlobsUrl::S3 {
                bucket: "studio-blobs".into(),
                prefix: "team/a".into()
            }
        );
        assert_eq!(
            BlobsUrl::parse("s3://studio-blobs").unwrap(),
            BlobsUrl::S3 {
                bucket: "studio-blobs".into(),
                prefix: String::new()
            }
        );
        #[cfg(unix)]
        assert_eq!(
            BlobsUrl::parse("file:///srv/leasedesk%20blobs").unwrap(),
            BlobsUrl::Folder("/srv/leasedesk blobs".into())
        );
        for bad in [
            "gs://bucket/x",
            "/srv/blobs",
            "s3:///prefix",
            "s3://bucket/a?region=eu",
            "file://server/share",
            "s3://bucket/a//b",
        ] {
            match BlobsUrl::parse(bad) {
                Err(Error::Invalid(why)) => assert!(why.contains(bad), "{why}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}

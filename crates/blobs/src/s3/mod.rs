//! The S3 store: blobs in S3-compatible object storage (`--blobs s3://BUCKET/PREFIX`), through
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
//! about to be named again is never old enough to be swept. A known gap: a
//! rewrite that lands between the sweep's last look at an object and its
//! delete (milliseconds) loses its bytes.

use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as Key;
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, RetryConfig};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::folder::BlobStore;
use super::staging::StagedBlob;
use super::{digest_named, Intake, Reading};
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::Digest;
use crate::previews::PreviewStore;

mod multipart;
mod parts;

use multipart::{read_part, Multipart, PART};

/// An unnamed object younger than this is never swept: an upload that
/// stored it may be about to commit the row that names it.
const SWEEP_AFTER: Duration = Duration::from_secs(24 * 3600);

/// An upload whose object exists rewrites it when it is older than this, so
/// that the object it is about to name is young again (see [`SWEEP_AFTER`]).
const REFRESH_AFTER: Duration = Duration::from_secs(3600);

/// How long a health check waits for the store.
const HEALTH_WITHIN: Duration = Duration::from_secs(5);

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
        intake: Intake<'_>,
    ) -> Result<StagedObject> {
        let mut read = Reading::new(intake);
        let first = read_part(&mut read, &mut reader).await?;
        if first.len() < PART {
            let digest = read.digest()?;
            return Ok(StagedObject {
                digest,
                size: read.size,
                body: Body::Small(first),
            });
        }
        let Some(expected) = intake.expected else {
            let rest = io::Cursor::new(first).chain(reader);
            let spooled = self.spool.stage_stream(rest, intake).await?;
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
                intake.failpoints.hit(failpoint::at::UPLOAD_STREAM)?;
                let part = read_part(&mut read, &mut reader).await?;
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
        let checked = sent.and_then(|()| read.digest());
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
                match upload.send_file(file).await {
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
        self.open_range(digest, None).await
    }

    /// The blob's bytes in `range` (all of them without one), as a stream.
    pub async fn open_range(
        &self,
        digest: &Digest,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        let options = object_store::GetOptions {
            range: range.map(object_store::GetRange::Bounded),
            ..Default::default()
        };
        let found = self
            .store
            .get_opts(&self.blob_key(digest), options)
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
        let failpoints = Failpoints::default();
        let intake = Intake {
            expected: Some(digest),
            limit: u64::MAX,
            progress: None,
            cancel: None,
            failpoints: &failpoints,
        };
        self.spool.stage_stream(reader, intake).await
    }

    /// At most once a day (a stamp object says when it last ran), deletes
    /// every blob object that no committed row names and that was last
    /// written more than a day ago: what failed or refused uploads left.
    /// `named` reads a snapshot of what rows name, only when a sweep is due;
    /// `is_named` asks afresh before each deletion. Returns how many it
    /// deleted.
    pub fn sweep_unnamed(
        &self,
        named: impl FnOnce() -> Result<HashSet<Digest>> + Send,
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
            let named = named()?;
            let blobs = self.prefix.clone().join("blobs");
            let mut listing = store.list(Some(&blobs));
            let mut removed = 0;
            while let Some(meta) = listing.next().await {
                let meta = meta.map_err(|e| self.unavailable(e))?;
                let Some(digest) = meta.location.filename().and_then(digest_named) else {
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

/// The bucket keeps the previews of its blobs (`PREFIX/previews/`), shared by
/// every server on it.
#[async_trait::async_trait]
impl PreviewStore for ObjectBlobs {
    /// A stored preview: `Some((bytes, last written))`, or `None` if there is none.
    async fn get(&self, name: &str) -> Result<Option<(Vec<u8>, Duration)>> {
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
    async fn put(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.store
            .put(
                &self.preview_key(name),
                Bytes::copy_from_slice(bytes).into(),
            )
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(())
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

//! Blobs: content-addressed bytes, and [`Blobs`], the one seam the bundled
//! engine stores them through. Two stores sit behind it: [`folder`] (the data
//! folder's `blobs/`, or a shared folder) and `s3` (an S3-compatible bucket,
//! with the `s3` feature). An upload is hashed while it is read and shows
//! under its digest only whole and checked. Previews are kept by digest and
//! size (`previews`).
//!
//! Never holds a whole file in memory (copies move through a few 1 MiB
//! buffers), and never knows which rows name a blob: its caller asks.

pub mod previews;

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_backend as backend;
#[cfg(windows)]
use leasedesk_files::long_path;
use leasedesk_files::{local_file, owner_only};
use leasedesk_model::read::read_full;
use leasedesk_model::{error, failpoint, model};
use leasedesk_preview as preview;

use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
#[cfg(feature = "s3")]
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::backend::{check_cancel, Progress, Upload, UploadSource};
use crate::error::{Error, Result};
use crate::failpoint::Failpoints;
use crate::model::Digest;
use crate::previews::{PreviewCache, DATA_FOLDER_BOUND_BYTES};

pub mod folder;
mod parts;
#[cfg(feature = "s3")]
pub mod s3;
mod staging;

pub use folder::{BlobHold, BlobStore};
pub use parts::{BytesWriter, Durable, UploadParts};
#[cfg(feature = "s3")]
pub use s3::{ObjectBlobs, StagedObject};
pub use staging::StagedBlob;

/// Size of the pieces a file is copied in: large enough for BLAKE3's SIMD and
/// few system calls, small enough that the few in flight cost little memory.
const CHUNK: usize = 1 << 20;

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
                // Refused alike whether or not this build can reach S3.
                let odd_part = |part: &str| part.is_empty() || part == "." || part == "..";
                if !prefix.is_empty() && prefix.split('/').any(odd_part) {
                    return Err(invalid("the prefix has an empty, `.` or `..` part"));
                }
                #[cfg(feature = "s3")]
                object_store::path::Path::parse(&prefix)
                    .map_err(|e| invalid(&format!("the prefix: {e}")))?;
                Ok(Self::S3 { bucket, prefix })
            }
            _ => Err(invalid("not a kind of blob store Leasedesk knows")),
        }
    }
}

/// How an upload is read: the digest it declares (checked before anything
/// shows under it), the most bytes taken, and its progress, cancel flag and
/// failure points.
#[derive(Clone, Copy)]
pub struct Intake<'a> {
    pub expected: Option<&'a Digest>,
    pub limit: u64,
    pub progress: Option<&'a Progress>,
    pub cancel: Option<&'a AtomicBool>,
    pub failpoints: &'a Failpoints,
}

/// An upload's reading: the hash and the size so far, stopped by a cancel or
/// a size past the limit. Each store's copy loop counts its bytes here.
struct Reading<'a> {
    hasher: blake3::Hasher,
    size: u64,
    intake: Intake<'a>,
}

impl<'a> Reading<'a> {
    fn new(intake: Intake<'a>) -> Self {
        Self {
            hasher: blake3::Hasher::new(),
            size: 0,
            intake,
        }
    }

    fn check_cancel(&self) -> Result<()> {
        check_cancel(self.intake.cancel)
    }

    /// The `n` bytes just read into `buf`, counted and hashed (`buf` is cut
    /// to them); false at the end of the input.
    fn filled(&mut self, buf: &mut Vec<u8>, n: usize) -> Result<bool> {
        if n == 0 {
            return Ok(false);
        }
        buf.truncate(n);
        self.take(buf)?;
        Ok(true)
    }

    /// Counts and hashes bytes just read: `TooLarge` past the limit.
    fn take(&mut self, bytes: &[u8]) -> Result<()> {
        self.size += bytes.len() as u64;
        let limit = self.intake.limit;
        if self.size > limit {
            return Err(Error::TooLarge { limit });
        }
        self.hasher.update(bytes);
        if let Some(progress) = self.intake.progress {
            progress(self.size);
        }
        Ok(())
    }

    /// The digest of what was read, checked against the declared one: a
    /// mismatch stores nothing.
    fn digest(&self) -> Result<Digest> {
        let actual: Digest = self.hasher.finalize().into();
        match self.intake.expected {
            Some(expected) if *expected != actual => Err(Error::DigestMismatch {
                expected: expected.clone(),
                actual,
            }),
            _ => Ok(actual),
        }
    }
}

/// The digest a blob's name (its hex) stands for, if it is one of ours.
fn digest_named(hex: &str) -> Option<Digest> {
    format!("blake3:{hex}").parse().ok()
}

async fn read_full_async(
    source: &mut (impl AsyncRead + Unpin),
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]).await? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

fn open_local(path: &Path) -> Result<File> {
    crate::local_file::open_to_read(path)
}

/// The digest and size of a local file, read on one thread: what a long-running
/// process uses (a mapped file that an application truncates meanwhile would
/// kill it with SIGBUS, and a background hash should leave the other core to
/// the designer's application).
pub fn digest_file(path: &Path) -> Result<(Digest, u64)> {
    let mut file = open_local(path)?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        let n = read_full(&mut file, &mut buf)?;
        if n == 0 {
            return Ok((hasher.finalize().into(), size));
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
}

/// The digest and size of a local file, memory-mapped and hashed on every core,
/// as `b3sum` does. For one-shot commands only: if another program truncates
/// the file meanwhile, the process dies of SIGBUS.
pub fn digest_file_mapped(path: &Path) -> Result<(Digest, u64)> {
    open_local(path)?;
    let mut hasher = blake3::Hasher::new();
    hasher.update_mmap_rayon(path)?;
    Ok((hasher.finalize().into(), hasher.count()))
}

/// Where a store keeps its blobs: a folder (the data folder's `blobs/`, or a
/// shared one given as `file:///PATH`) or an object store (`s3://…`).
#[derive(Clone, Debug)]
pub enum Blobs {
    Folder(BlobStore),
    #[cfg(feature = "s3")]
    Objects(Arc<ObjectBlobs>),
}

/// An upload read and hashed, not yet visible under its digest.
pub enum Staged {
    Folder(StagedBlob),
    #[cfg(feature = "s3")]
    Object(StagedObject),
}

impl Staged {
    pub fn digest(&self) -> &Digest {
        match self {
            Staged::Folder(staged) => &staged.digest,
            #[cfg(feature = "s3")]
            Staged::Object(staged) => &staged.digest,
        }
    }

    pub fn size(&self) -> u64 {
        match self {
            Staged::Folder(staged) => staged.size,
            #[cfg(feature = "s3")]
            Staged::Object(staged) => staged.size,
        }
    }
}

/// A blob as a local file, for what wants a path (a preview's reader): the
/// folder's own file, or a checked copy that is removed when this is dropped.
pub struct LocalBlob {
    path: PathBuf,
    _copy: Option<StagedBlob>,
}

impl LocalBlob {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Blobs {
    /// The blobs of a data folder `data`, or those `url` (`--blobs`) names,
    /// with the preview cache that lives beside them. A shared folder is a
    /// [`BlobStore`] like the data folder's (its fsync and rename make a blob
    /// durable before a row names it, and its holds are file locks, which a
    /// network file system with locking, such as NFSv4 or SMB3, shares).
    pub fn open(data: &Path, url: Option<&str>) -> Result<(Self, PreviewCache)> {
        let folder = |root: &Path| -> Result<(Self, PreviewCache)> {
            Ok((
                Blobs::Folder(BlobStore::open(&root.join("blobs"))?),
                PreviewCache::new(root.join("previews"), DATA_FOLDER_BOUND_BYTES),
            ))
        };
        match url.map(BlobsUrl::parse).transpose()? {
            None => folder(data),
            Some(BlobsUrl::Folder(root)) => {
                owner_only::create_dir_all(&root)?;
                folder(&root)
            }
            #[cfg(not(feature = "s3"))]
            Some(BlobsUrl::S3 { .. }) => Err(Error::Invalid(
                "this build of Leasedesk keeps blobs in folders only: serve S3 with the leasedesk command"
                    .into(),
            )),
            #[cfg(feature = "s3")]
            Some(BlobsUrl::S3 { bucket, prefix }) => {
                let url = url.expect("parsed from a URL");
                let objects = Arc::new(ObjectBlobs::open(
                    url,
                    &bucket,
                    &prefix,
                    &data.join("spool"),
                )?);
                let previews = PreviewCache::in_store(objects.clone());
                Ok((Blobs::Objects(objects), previews))
            }
        }
    }

    /// Whether the blob `digest` is there (made whole: stores never show a part).
    pub async fn contains(&self, digest: &Digest) -> Result<bool> {
        match self {
            Blobs::Folder(store) => Ok(store.path(digest).is_file()),
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => objects.contains(digest).await,
        }
    }

    /// Reads an upload (hashing it, checking a declared digest) into a
    /// staged blob: nothing is visible under its digest yet.
    pub async fn stage(
        &self,
        upload: Upload,
        limit: u64,
        failpoints: &Failpoints,
    ) -> Result<Staged> {
        let Upload {
            source,
            digest,
            progress,
            cancel,
            ..
        } = upload;
        let (source, hashed) = match source {
            UploadSource::Hashed(path) => (UploadSource::Checked(path), true),
            source => (source, false),
        };
        let source = match (self, source) {
            (Blobs::Folder(store), UploadSource::Checked(path)) => {
                let (store, expected, linked) = (store.clone(), digest.clone(), path.clone());
                let staged = blocking(move || match expected {
                    Some(digest) => store.stage_linked(&linked, digest, hashed),
                    None => Ok(None),
                })
                .await?;
                match staged {
                    Some(staged) => return Ok(Staged::Folder(staged)),
                    // No link here (another file system, say): a copy.
                    None => UploadSource::File(path),
                }
            }
            #[cfg(feature = "s3")]
            (Blobs::Objects(_), UploadSource::Checked(path)) => UploadSource::File(path),
            (_, source) => source,
        };
        let (reader, digest, limit): (Pin<Box<dyn AsyncRead + Send>>, _, _) = match (self, source) {
            (Blobs::Folder(store), UploadSource::File(path)) => {
                let (store, failpoints) = (store.clone(), failpoints.clone());
                let staged = blocking(move || {
                    let intake = Intake {
                        expected: digest.as_ref(),
                        limit: u64::MAX,
                        progress: progress.as_ref(),
                        cancel: cancel.as_deref(),
                        failpoints: &failpoints,
                    };
                    store.stage_file(&path, intake)
                })
                .await?;
                return Ok(Staged::Folder(staged));
            }
            #[cfg(feature = "s3")]
            (Blobs::Objects(_), UploadSource::File(path)) => {
                // Hashed first, so it goes straight to its key; a change
                // meanwhile is a mismatch and stores nothing.
                let digest = match digest {
                    Some(digest) => digest,
                    None => {
                        let hashed = path.clone();
                        blocking(move || digest_file(&hashed)).await?.0
                    }
                };
                let file = blocking(move || open_local(&path)).await?;
                let reader = Box::pin(tokio::fs::File::from_std(file));
                (reader, Some(digest), u64::MAX)
            }
            (_, UploadSource::Stream(reader)) => (reader, digest, limit),
            (_, UploadSource::Checked(_) | UploadSource::Hashed(_)) => {
                unreachable!("a checked file is staged as a file")
            }
        };
        let intake = Intake {
            expected: digest.as_ref(),
            limit,
            progress: progress.as_ref(),
            cancel: cancel.as_deref(),
            failpoints,
        };
        Ok(match self {
            Blobs::Folder(store) => Staged::Folder(store.stage_stream(reader, intake).await?),
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => Staged::Object(objects.stage(reader, intake).await?),
        })
    }

    /// The blob's bytes, as a stream.
    pub async fn open_read(&self, digest: &Digest) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        match self {
            Blobs::Folder(store) => Ok(Box::pin(tokio::fs::File::from_std(
                store.open_blob(digest)?,
            ))),
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => objects.open_read(digest).await,
        }
    }

    /// The blob's bytes from `range.start` to `range.end`, as a stream (the
    /// range must lie within the blob).
    pub async fn open_range(
        &self,
        digest: &Digest,
        range: std::ops::Range<u64>,
    ) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        match self {
            Blobs::Folder(store) => {
                use std::io::Seek;
                let mut file = store.open_blob(digest)?;
                file.seek(io::SeekFrom::Start(range.start))?;
                let file = tokio::fs::File::from_std(file);
                Ok(Box::pin(file.take(range.end - range.start)))
            }
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => objects.open_range(digest, Some(range)).await,
        }
    }

    /// The blob as a local file (see [`LocalBlob`]).
    pub async fn local_file(&self, digest: &Digest) -> Result<LocalBlob> {
        match self {
            Blobs::Folder(store) => Ok(LocalBlob {
                path: store.path(digest),
                _copy: None,
            }),
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => {
                let copy = objects.local_copy(digest).await?;
                Ok(LocalBlob {
                    path: copy.temp_path().to_owned(),
                    _copy: Some(copy),
                })
            }
        }
    }

    /// For the health check: whether a folder could take an upload (`Err`
    /// says why not). An object store is asked over the network instead,
    /// with a time limit of its own: see [`Blobs::health`].
    pub fn check_writable(&self) -> std::result::Result<(), String> {
        match self {
            Blobs::Folder(folder) => folder.check_writable(),
            #[cfg(feature = "s3")]
            Blobs::Objects(_) => Ok(()),
        }
    }

    /// Removes `digest`'s blob unless it is held or named (see
    /// [`BlobStore::remove_unnamed`]). An object store's is left: another
    /// server may be about to name it, and no lock spans servers; the sweep
    /// takes it once it is a day old.
    pub fn remove_unnamed(
        &self,
        digest: &Digest,
        is_named: impl FnOnce(&Digest) -> Result<bool>,
    ) -> Result<bool> {
        match self {
            Blobs::Folder(store) => store.remove_unnamed(digest, is_named),
            #[cfg(feature = "s3")]
            Blobs::Objects(_) => Ok(false),
        }
    }

    /// Removes what uploads that were never named left: a folder's, those
    /// of the uploads a killed process left unfinished (see
    /// [`BlobStore::sweep_interrupted`]); an object store's, once a day,
    /// every old object that `named` (what rows name, read only then) lacks.
    pub fn sweep_unnamed(
        &self,
        named: impl FnOnce() -> Result<HashSet<Digest>> + Send,
        is_named: impl Fn(&Digest) -> Result<bool> + Send + Sync,
    ) -> Result<usize> {
        #[cfg(not(feature = "s3"))]
        let _ = named;
        match self {
            Blobs::Folder(store) => store.sweep_interrupted(is_named),
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => objects.sweep_unnamed(named, is_named),
        }
    }

    /// `Ok` when the blobs can be reached; else why not.
    pub async fn health(&self) -> std::result::Result<(), String> {
        match self {
            Blobs::Folder(_) => Ok(()),
            #[cfg(feature = "s3")]
            Blobs::Objects(objects) => objects.health().await,
        }
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(Error::Internal(format!("task: {e}"))),
    }
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

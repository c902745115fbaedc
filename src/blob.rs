//! Content-addressed file storage. A blob is written to a temporary file in the
//! blob folder while it is hashed, fsynced, and only then renamed to its digest's
//! name; rows refer to a blob only after that rename. Nothing here holds a whole
//! file in memory.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::Digest;

/// Size of the pieces a stream is copied in: large enough for BLAKE3's SIMD and
/// few system calls, small enough that a few in flight cost little memory.
const CHUNK: usize = 1 << 20;

#[derive(Clone, Debug)]
pub struct BlobStore {
    root: PathBuf,
}

impl BlobStore {
    /// Opens (creating) the blob folder and removes temporary files that no live
    /// upload holds: what a killed process left behind.
    pub fn open(root: &Path) -> Result<Self> {
        let store = Self {
            root: root.to_owned(),
        };
        fs::create_dir_all(store.temp_dir())?;
        for entry in fs::read_dir(store.temp_dir())? {
            let path = entry?.path();
            // An upload in progress (maybe another process's) holds a lock on its file.
            if let Ok(file) = File::open(&path) {
                if file.try_lock().is_ok() {
                    let _ = fs::remove_file(&path);
                }
            }
        }
        Ok(store)
    }

    fn temp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    pub fn path(&self, digest: &Digest) -> PathBuf {
        let hex = digest.hex();
        self.root.join(&hex[..2]).join(hex)
    }

    pub fn contains(&self, digest: &Digest) -> bool {
        self.path(digest).is_file()
    }

    pub fn open_blob(&self, digest: &Digest) -> Result<File> {
        File::open(self.path(digest)).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::Internal(format!("blob {digest} is missing")),
            _ => e.into(),
        })
    }

    fn temp_blob(&self) -> Result<TempBlob> {
        let path = self
            .temp_dir()
            .join(format!("upload-{}", uuid::Uuid::new_v4()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        file.lock()?;
        Ok(TempBlob {
            path,
            file: Some(file),
        })
    }

    /// Copies a local file into a staged blob, hashing as it copies.
    /// Blocking: call it from a blocking thread.
    pub fn stage_file(
        &self,
        source: &Path,
        expected: Option<&Digest>,
        failpoints: &Failpoints,
    ) -> Result<StagedBlob> {
        let mut source = File::open(source).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => {
                Error::NotFound(format!("{} does not exist", source.display()))
            }
            _ => Error::from(e),
        })?;
        let mut temp = self.temp_blob()?;
        let mut hasher = blake3::Hasher::new();
        let mut size = 0u64;
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = read_full(&mut source, &mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            temp.write_all(&buf[..n])?;
            size += n as u64;
            failpoints.hit(failpoint::at::UPLOAD_STREAM)?;
        }
        temp.finish(hasher.finalize().into(), size, expected)
    }

    /// Streams a reader into a staged blob. The reader is read here while a
    /// blocking thread writes, so the copy uses both cores; at most a few chunks
    /// are in memory at once. Stops with `TooLarge` past `limit` bytes.
    pub async fn stage_stream<R: AsyncRead + Unpin>(
        &self,
        mut reader: R,
        expected: Option<&Digest>,
        limit: u64,
        failpoints: &Failpoints,
    ) -> Result<StagedBlob> {
        let mut temp = self.temp_blob()?;
        let (chunks, mut to_write) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
        let writer = tokio::task::spawn_blocking(move || -> Result<TempBlob> {
            while let Some(chunk) = to_write.blocking_recv() {
                temp.write_all(&chunk)?;
            }
            Ok(temp)
        });
        let mut hasher = blake3::Hasher::new();
        let mut size = 0u64;
        let read_result: Result<()> = async {
            loop {
                let mut buf = vec![0u8; CHUNK];
                let n = read_full_async(&mut reader, &mut buf).await?;
                if n == 0 {
                    return Ok(());
                }
                size += n as u64;
                if size > limit {
                    return Err(Error::TooLarge { limit });
                }
                buf.truncate(n);
                hasher.update(&buf);
                if chunks.send(buf).await.is_err() {
                    return Ok(()); // the writer failed: its error is reported below
                }
                failpoints.hit(failpoint::at::UPLOAD_STREAM)?;
            }
        }
        .await;
        drop(chunks);
        let temp = writer
            .await
            .map_err(|e| Error::Internal(format!("blob writer: {e}")))??;
        read_result?;
        temp.finish(hasher.finalize().into(), size, expected)
    }
}

/// An upload being written; removed on drop unless it was finished.
struct TempBlob {
    path: PathBuf,
    file: Option<File>,
}

impl TempBlob {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.as_mut().expect("open temp blob").write_all(bytes)
    }

    /// Checks the digest and makes the bytes durable. A mismatch stores nothing.
    fn finish(
        mut self,
        digest: Digest,
        size: u64,
        expected: Option<&Digest>,
    ) -> Result<StagedBlob> {
        if let Some(expected) = expected {
            if *expected != digest {
                return Err(Error::DigestMismatch {
                    expected: expected.clone(),
                    actual: digest,
                });
            }
        }
        self.file.as_mut().expect("open temp blob").sync_all()?;
        Ok(StagedBlob {
            digest,
            size,
            temp: self,
        })
    }
}

impl Drop for TempBlob {
    fn drop(&mut self) {
        drop(self.file.take());
        let _ = fs::remove_file(&self.path);
    }
}

/// A hashed, fsynced upload waiting to be named by its digest.
pub struct StagedBlob {
    pub digest: Digest,
    pub size: u64,
    temp: TempBlob,
}

impl StagedBlob {
    /// Renames the upload into place (once there, rows may refer to it). If the
    /// store already has these bytes, the upload is simply dropped.
    pub fn persist(self, store: &BlobStore) -> Result<()> {
        let target = store.path(&self.digest);
        if target.is_file() {
            return Ok(()); // dropping `self.temp` removes the upload
        }
        let dir = target.parent().expect("blob path has a folder");
        fs::create_dir_all(dir)?;
        fs::rename(&self.temp.path, &target)?;
        // The rename must survive power loss before any row names the blob.
        File::open(dir)?.sync_all()?;
        Ok(())
    }
}

/// Reads until `buf` is full or the source ends: fewer, larger chunks.
fn read_full(source: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
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

/// The digest and size of a local file, read in large chunks.
pub fn digest_file(path: &Path) -> Result<(Digest, u64)> {
    let mut file = File::open(path)?;
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

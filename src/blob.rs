//! Content-addressed file storage. A blob is written to a temporary file in the
//! blob folder while it is hashed, and only when a row is about to name it is it
//! fsynced and renamed to its digest's name. Nothing here holds a whole file in
//! memory: a copy moves through a few 1 MiB buffers.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::thread::JoinHandle;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::backend::{check_cancel, Progress};
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::Digest;

/// Size of the pieces a file is copied in: large enough for BLAKE3's SIMD and
/// few system calls, small enough that the few in flight cost little memory.
const CHUNK: usize = 1 << 20;

/// Chunks queued for the writer thread beyond the one it is writing.
const QUEUED_CHUNKS: usize = 2;

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
        store.create_shard_dirs()?;
        for entry in fs::read_dir(store.temp_dir())? {
            let path = entry?.path();
            // A live upload (maybe another process's) holds a lock on its file.
            if let Ok(file) = File::open(&path) {
                if file.try_lock().is_ok() {
                    let _ = fs::remove_file(&path);
                }
            }
        }
        Ok(store)
    }

    /// Makes the 256 folders blobs are spread over, once, durably: then a blob's
    /// rename never depends on a folder another process created a moment ago.
    fn create_shard_dirs(&self) -> Result<()> {
        let mut created = false;
        for shard in 0..=255u8 {
            let dir = self.root.join(format!("{shard:02x}"));
            if !dir.is_dir() {
                fs::create_dir_all(&dir)?;
                created = true;
            }
        }
        if created {
            sync_dir(&self.root)?;
        }
        Ok(())
    }

    fn temp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    pub fn path(&self, digest: &Digest) -> PathBuf {
        let hex = digest.hex();
        self.root.join(&hex[..2]).join(hex)
    }

    pub fn open_blob(&self, digest: &Digest) -> Result<File> {
        File::open(self.path(digest)).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::Internal(format!("blob {digest} is missing")),
            _ => e.into(),
        })
    }

    /// A new locked temporary file. Another process's cleanup may remove the
    /// file between its creation and its lock; then it is made again.
    fn temp_blob(&self) -> Result<TempBlob> {
        loop {
            let path = self
                .temp_dir()
                .join(format!("upload-{}", uuid::Uuid::new_v4()));
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            file.lock()?;
            if still_named(&file, &path)? {
                return Ok(TempBlob {
                    path,
                    file: Some(file),
                    written: 0,
                    flushing_from: 0,
                    flusher: None,
                });
            }
        }
    }

    /// Copies a local file into a staged blob, hashing as it reads while a
    /// second thread writes. Blocking: call it from a blocking thread.
    pub fn stage_file(
        &self,
        source: &Path,
        expected: Option<&Digest>,
        progress: Option<&Progress>,
        cancel: Option<&AtomicBool>,
        failpoints: &Failpoints,
    ) -> Result<StagedBlob> {
        let mut source = open_local(source)?;
        let mut pipe = Pipe::start(self.temp_blob()?);
        let mut hasher = blake3::Hasher::new();
        let mut size = 0u64;
        let copied: Result<()> = (|| loop {
            check_cancel(cancel)?;
            let mut buf = pipe.buffer();
            let n = read_full(&mut source, &mut buf)?;
            if n == 0 {
                return Ok(());
            }
            buf.truncate(n);
            hasher.update(&buf);
            size += n as u64;
            if let Some(progress) = progress {
                progress(size);
            }
            if !pipe.send_blocking(buf) {
                return Ok(()); // the writer failed: its error is reported below
            }
            if pipe.is_writing() {
                failpoints.hit(failpoint::at::UPLOAD_STREAM)?;
            }
        })();
        let temp = pipe.finish()?;
        copied?;
        temp.finish(hasher.finalize().into(), size, expected)
    }

    /// Streams a reader into a staged blob, hashing as it reads while a second
    /// thread writes. Stops with `TooLarge` past `limit` bytes.
    pub async fn stage_stream<R: AsyncRead + Unpin>(
        &self,
        mut reader: R,
        expected: Option<&Digest>,
        limit: u64,
        progress: Option<&Progress>,
        cancel: Option<&AtomicBool>,
        failpoints: &Failpoints,
    ) -> Result<StagedBlob> {
        let mut pipe = Pipe::start(self.temp_blob()?);
        let mut hasher = blake3::Hasher::new();
        let mut size = 0u64;
        let copied: Result<()> = async {
            loop {
                check_cancel(cancel)?;
                let mut buf = pipe.buffer();
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
                if let Some(progress) = progress {
                    progress(size);
                }
                if !pipe.send(buf).await {
                    return Ok(());
                }
                if pipe.is_writing() {
                    failpoints.hit(failpoint::at::UPLOAD_STREAM)?;
                }
            }
        }
        .await;
        let temp = tokio::task::spawn_blocking(move || pipe.finish())
            .await
            .map_err(|e| Error::Internal(format!("blob writer: {e}")))??;
        copied?;
        temp.finish(hasher.finalize().into(), size, expected)
    }
}

/// Hands chunks to a thread that writes them to a temporary blob, and takes the
/// written buffers back for reuse, so a copy of any size allocates a few chunks.
/// Small uploads stay cheap: buffers start small and grow, and a file that fits
/// in its first chunk is written here, with no thread.
struct Pipe {
    temp: Option<TempBlob>,
    first: Option<Vec<u8>>,
    writer: Option<Writer>,
    next_size: usize,
}

struct Writer {
    chunks: tokio::sync::mpsc::Sender<Vec<u8>>,
    spare: mpsc::Receiver<Vec<u8>>,
    thread: JoinHandle<io::Result<TempBlob>>,
}

/// The first buffer's size; each next one doubles, up to `CHUNK`.
const FIRST_CHUNK: usize = 64 << 10;

impl Pipe {
    fn start(temp: TempBlob) -> Self {
        Self {
            temp: Some(temp),
            first: None,
            writer: None,
            next_size: FIRST_CHUNK,
        }
    }

    /// Whether the writer thread has started (the upload is past its first chunk).
    fn is_writing(&self) -> bool {
        self.writer.is_some()
    }

    /// An empty buffer to read into, reused when the writer has one back.
    fn buffer(&mut self) -> Vec<u8> {
        let size = self.next_size;
        self.next_size = (size * 2).min(CHUNK);
        let mut buf = match &self.writer {
            Some(writer) => writer.spare.try_recv().unwrap_or_default(),
            None => Vec::new(),
        };
        buf.resize(size, 0);
        buf
    }

    /// Queues a chunk: the first is held back (it may be the whole file), the
    /// second starts the writer thread. False if the writer stopped (its error
    /// comes from `finish`).
    fn queue(&mut self, chunk: Vec<u8>) -> Option<(&tokio::sync::mpsc::Sender<Vec<u8>>, Vec<u8>)> {
        if self.writer.is_none() {
            if self.first.is_none() {
                self.first = Some(chunk);
                return None;
            }
            let mut temp = self
                .temp
                .take()
                .expect("temp blob before the writer starts");
            let first = self.first.take().expect("first chunk");
            let (chunks, mut to_write) = tokio::sync::mpsc::channel::<Vec<u8>>(QUEUED_CHUNKS);
            let (give_back, spare) = mpsc::channel();
            let thread = std::thread::spawn(move || {
                temp.write_all(&first)?;
                while let Some(chunk) = to_write.blocking_recv() {
                    temp.write_all(&chunk)?;
                    let _ = give_back.send(chunk);
                }
                Ok(temp)
            });
            self.writer = Some(Writer {
                chunks,
                spare,
                thread,
            });
        }
        let writer = self.writer.as_ref().expect("writer started");
        Some((&writer.chunks, chunk))
    }

    fn send_blocking(&mut self, chunk: Vec<u8>) -> bool {
        match self.queue(chunk) {
            None => true,
            Some((chunks, chunk)) => chunks.blocking_send(chunk).is_ok(),
        }
    }

    async fn send(&mut self, chunk: Vec<u8>) -> bool {
        match self.queue(chunk) {
            None => true,
            Some((chunks, chunk)) => chunks.send(chunk).await.is_ok(),
        }
    }

    /// Waits for every chunk to be written. Blocking.
    fn finish(self) -> Result<TempBlob> {
        match self.writer {
            Some(writer) => {
                drop(writer.chunks);
                match writer.thread.join() {
                    Ok(written) => Ok(written?),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            None => {
                let mut temp = self.temp.expect("temp blob without a writer");
                if let Some(first) = &self.first {
                    temp.write_all(first)?;
                }
                Ok(temp)
            }
        }
    }
}

/// An upload being written; removed on drop unless it was persisted.
struct TempBlob {
    path: PathBuf,
    file: Option<File>,
    written: u64,
    flushing_from: u64,
    flusher: Option<mpsc::Sender<(u64, u64)>>,
}

/// How much is written before its writeback is started.
const WRITEBACK_WINDOW: u64 = 8 << 20;

impl TempBlob {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file
            .as_mut()
            .expect("open temp blob")
            .write_all(bytes)?;
        self.written += bytes.len() as u64;
        if self.written - self.flushing_from >= WRITEBACK_WINDOW {
            self.start_writeback();
        }
        Ok(())
    }

    /// Has the part written since the last call written to disk in the
    /// background, so the fsync that makes the blob durable finds little left to
    /// do: the disk works while the copy goes on instead of after it. A thread of
    /// its own asks, since asking can block while the disk is busy. Best effort:
    /// without it the final fsync simply does all the work.
    fn start_writeback(&mut self) {
        if self.flusher.is_none() {
            self.flusher = self.file.as_ref().and_then(spawn_flusher);
        }
        if let Some(flusher) = &self.flusher {
            let range = (self.flushing_from, self.written - self.flushing_from);
            let _ = flusher.send(range);
        }
        self.flushing_from = self.written;
    }

    /// Checks the digest; a mismatch stores nothing.
    fn finish(self, digest: Digest, size: u64, expected: Option<&Digest>) -> Result<StagedBlob> {
        match expected {
            Some(expected) if *expected != digest => Err(Error::DigestMismatch {
                expected: expected.clone(),
                actual: digest,
            }),
            _ => Ok(StagedBlob {
                digest,
                size,
                temp: self,
            }),
        }
    }
}

impl Drop for TempBlob {
    fn drop(&mut self) {
        drop(self.file.take());
        let _ = fs::remove_file(&self.path);
    }
}

/// A hashed upload waiting to be named by its digest.
pub struct StagedBlob {
    pub digest: Digest,
    pub size: u64,
    temp: TempBlob,
}

impl StagedBlob {
    /// Makes the bytes durable under their digest's name; from then on rows may
    /// refer to them. If the store has these bytes already, the upload is dropped
    /// (and the existing name made durable, in case a crash interrupted its rename).
    pub fn persist(mut self, store: &BlobStore) -> Result<()> {
        let target = store.path(&self.digest);
        let dir = target.parent().expect("blob path has a folder");
        if target.is_file() {
            sync_dir(dir)?;
            return Ok(()); // dropping `self.temp` removes the upload
        }
        self.temp
            .file
            .as_mut()
            .expect("open temp blob")
            .sync_all()?;
        if !dir.is_dir() {
            // Made at open; someone removed it since.
            fs::create_dir_all(dir)?;
            sync_dir(&store.root)?;
        }
        fs::rename(&self.temp.path, &target)?;
        sync_dir(dir)?;
        Ok(())
    }
}

/// A thread that starts the writeback of the byte ranges it is sent (on Linux,
/// with sync_file_range; elsewhere there is none). It ends when its sender drops.
#[cfg(target_os = "linux")]
fn spawn_flusher(file: &File) -> Option<mpsc::Sender<(u64, u64)>> {
    use std::os::fd::AsRawFd;
    let file = file.try_clone().ok()?;
    let (ranges, to_flush) = mpsc::channel::<(u64, u64)>();
    let spawned = std::thread::Builder::new()
        .name("blob-writeback".into())
        .spawn(move || {
            for (from, len) in to_flush {
                // SAFETY: sync_file_range only reads its integer arguments, and
                // `file` keeps the descriptor open. Advisory: the final fsync
                // makes the blob durable and reports any error.
                unsafe {
                    libc::sync_file_range(
                        file.as_raw_fd(),
                        from as i64,
                        len as i64,
                        libc::SYNC_FILE_RANGE_WRITE,
                    )
                };
            }
        });
    spawned.ok().map(|_| ranges)
}

#[cfg(not(target_os = "linux"))]
fn spawn_flusher(_file: &File) -> Option<mpsc::Sender<(u64, u64)>> {
    None
}

/// Whether `path` still names the open `file` (and not nothing, or another file).
#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let ours = file.metadata()?;
    Ok(
        fs::metadata(path)
            .is_ok_and(|named| named.ino() == ours.ino() && named.dev() == ours.dev()),
    )
}

#[cfg(not(unix))]
fn still_named(_file: &File, path: &Path) -> io::Result<bool> {
    Ok(path.exists())
}

/// Makes a folder's entries (a rename, a new file) survive power loss.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
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

fn open_local(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound(format!("{} does not exist", path.display())),
        _ => Error::from(e),
    })
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

//! Content-addressed file storage. A blob is written to a temporary file in the
//! blob folder while it is hashed, and only when a row is about to name it is it
//! fsynced and renamed to its digest's name. Nothing here holds a whole file in
//! memory: a copy moves through a few 1 MiB buffers.

use std::collections::HashSet;
use std::fs::{self, File};
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
use crate::owner_only;

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
        owner_only::create_dir_all(&store.temp_dir())?;
        store.create_shard_dirs()?;
        store.remove_stale_temp_files()?;
        Ok(store)
    }

    fn remove_stale_temp_files(&self) -> Result<()> {
        for entry in fs::read_dir(self.temp_dir())? {
            let path = entry?.path();
            // A live upload (maybe another process's) holds a lock on its file,
            // and a hold's file may have been made again since it was opened here.
            if let Ok(file) = File::open(&path) {
                if file.try_lock().is_ok() && still_named(&file, &path)? {
                    let _ = fs::remove_file(&path);
                }
            }
        }
        Ok(())
    }

    /// A folder for temporary files only (an object store's uploads waiting
    /// for their digest, copies for a preview's reader): made if missing, and
    /// what a killed process left there removed, as [`BlobStore::open`] does.
    pub fn open_spool(root: &Path) -> Result<Self> {
        let store = Self {
            root: root.to_owned(),
        };
        owner_only::create_dir_all(&store.temp_dir())?;
        store.remove_stale_temp_files()?;
        Ok(store)
    }

    /// Removes every blob that no committed row names (`named` is the set a
    /// snapshot found; `is_named` asks again, fresh, before each removal) and
    /// no upload holds: what a process killed before its commit left behind.
    /// Returns how many it removed.
    pub fn sweep_unnamed(
        &self,
        named: &HashSet<Digest>,
        is_named: impl Fn(&Digest) -> Result<bool>,
    ) -> Result<usize> {
        let mut removed = 0;
        for shard in 0..=255u8 {
            for entry in fs::read_dir(self.root.join(format!("{shard:02x}")))? {
                let name = entry?.file_name();
                let Some(digest) = name
                    .to_str()
                    .and_then(|hex| format!("blake3:{hex}").parse::<Digest>().ok())
                else {
                    continue; // not a blob of ours: leave it be
                };
                if !named.contains(&digest) && self.remove_unnamed(&digest, &is_named)? {
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    fn hold_path(&self, digest: &Digest) -> PathBuf {
        self.temp_dir().join(format!("hold-{}", digest.hex()))
    }

    /// Opens the lock file of `digest`'s holds, as it is named now (a removal
    /// deletes it while it has it alone, and the next one makes it again).
    fn open_hold_file(&self, digest: &Digest, shared: bool) -> Result<Option<File>> {
        let path = self.hold_path(digest);
        let mut denied = 0;
        loop {
            let file = match owner_only::file_options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
            {
                Ok(file) => file,
                // Windows refuses to open a file that is being deleted: soon it is gone.
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied && denied < 100 => {
                    denied += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if shared {
                file.lock_shared()?;
            } else {
                match file.try_lock() {
                    Ok(()) => {}
                    Err(fs::TryLockError::WouldBlock) => return Ok(None),
                    Err(fs::TryLockError::Error(e)) => return Err(e.into()),
                }
            }
            if still_named(&file, &path)? {
                return Ok(Some(file));
            }
        }
    }

    /// Holds `digest`'s blob against removal, waiting while a removal decides.
    /// An upload takes this before its blob is named by its digest and keeps
    /// it until the transaction that would name it in a row has ended, so that
    /// no process removes it meanwhile (the bytes may be shared with another
    /// upload of the same digest, or with a committed row).
    pub fn hold(&self, digest: &Digest) -> Result<BlobHold> {
        let file = self
            .open_hold_file(digest, true)?
            .expect("a shared lock waits rather than fails");
        Ok(BlobHold {
            file: Some(file),
            path: self.hold_path(digest),
            digest: digest.clone(),
        })
    }

    /// Removes `digest`'s blob unless an upload holds it or `is_named` finds a
    /// committed row naming it. Nobody can start naming it meanwhile: naming
    /// needs a hold, and this has the digest's lock alone while it asks and
    /// removes. Returns whether it removed the blob.
    pub fn remove_unnamed(
        &self,
        digest: &Digest,
        is_named: impl FnOnce(&Digest) -> Result<bool>,
    ) -> Result<bool> {
        let Some(sole) = self.open_hold_file(digest, false)? else {
            return Ok(false); // an upload holds it: its own end decides
        };
        let removed = match is_named(digest) {
            Ok(true) => Ok(false),
            Ok(false) => match fs::remove_file(self.path(digest)) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
                Err(e) => Err(e.into()),
            },
            Err(e) => Err(e),
        };
        // The blob first, then the lock file: an upload that finds the lock
        // file made anew finds the blob gone too, and stores its own.
        let _ = fs::remove_file(self.hold_path(digest));
        drop(sole);
        removed
    }

    /// Makes the 256 folders blobs are spread over, once, durably: then a blob's
    /// rename never depends on a folder another process created a moment ago.
    fn create_shard_dirs(&self) -> Result<()> {
        let mut created = false;
        for shard in 0..=255u8 {
            let dir = self.root.join(format!("{shard:02x}"));
            if !dir.is_dir() {
                owner_only::create_dir_all(&dir)?;
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

    /// For the health check: the blob folder is there and an upload could be
    /// written into it (a probe file made and removed in its temp folder).
    /// `Err` says what is wrong, naming the folder.
    pub fn check_writable(&self) -> std::result::Result<(), String> {
        if !self.root.is_dir() {
            return Err(format!(
                "the blob folder {} is missing",
                self.root.display()
            ));
        }
        let probe = self
            .temp_dir()
            .join(format!("health-{}", uuid::Uuid::new_v4()));
        let written = owner_only::file_options()
            .write(true)
            .create_new(true)
            .open(&probe)
            .and_then(|mut file| file.write_all(b"ok"));
        let _ = fs::remove_file(&probe);
        written.map_err(|e| {
            format!(
                "the blob folder {} cannot be written to: {e}",
                self.root.display()
            )
        })
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
            let file = owner_only::file_options()
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
    /// The temporary file holding the bytes (removed when this is dropped).
    pub fn temp_path(&self) -> &Path {
        &self.temp.path
    }

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
            owner_only::create_dir_all(dir)?;
            sync_dir(&store.root)?;
        }
        rename_durably(&self.temp.path, &target)?;
        sync_dir(dir)?;
        Ok(())
    }
}

/// An upload's hold on its digest's blob (see [`BlobStore::hold`]), released
/// when dropped.
pub struct BlobHold {
    file: Option<File>,
    path: PathBuf,
    digest: Digest,
}

impl BlobHold {
    pub fn digest(&self) -> &Digest {
        &self.digest
    }
}

impl Drop for BlobHold {
    fn drop(&mut self) {
        // The last holder out removes the lock file, so that one is not left
        // per digest ever stored. It may do so only with the lock alone.
        let Some(file) = self.file.take() else { return };
        let _ = file.unlock();
        if file.try_lock().is_ok() && still_named(&file, &self.path).unwrap_or(false) {
            let _ = fs::remove_file(&self.path);
        }
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

/// Whether `path` still names the open `file` (and not nothing, or another
/// file): the same file identity (device and inode; on Windows, volume and
/// file index), since a file deleted and made again under the name must not
/// pass for the one that is locked.
fn still_named(file: &File, path: &Path) -> io::Result<bool> {
    let ours = same_file::Handle::from_file(file.try_clone()?)?;
    Ok(same_file::Handle::from_path(path).is_ok_and(|named| named == ours))
}

/// Makes a folder's entries (a rename, a new file) survive power loss.
#[cfg(not(windows))]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows cannot flush a folder (opening one as a file is refused, as
/// SQLite and PostgreSQL also find): NTFS journals a folder's entries, and
/// [`rename_durably`] writes its rename through, which commits the journal
/// up to it, folders made before it included.
#[cfg(windows)]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Renames a finished upload to its digest's name, durably.
#[cfg(not(windows))]
fn rename_durably(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

/// Renames a finished upload to its digest's name, returning once the rename
/// is on disk (`MOVEFILE_WRITE_THROUGH`). A blob that another upload of the
/// same bytes named meanwhile is kept: it may be open for a download, which
/// Windows would not let a rename replace.
#[cfg(windows)]
fn rename_durably(from: &Path, to: &Path) -> io::Result<()> {
    use windows_sys::Win32::Storage::FileSystem::{MoveFileExW, MOVEFILE_WRITE_THROUGH};
    let (from, to) = (crate::long_path::wide(from), crate::long_path::wide(to));
    // SAFETY: both are NUL-terminated UTF-16 strings that outlive the call.
    if unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), MOVEFILE_WRITE_THROUGH) } != 0 {
        return Ok(());
    }
    match io::Error::last_os_error() {
        e if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        e => Err(e),
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
    Objects(std::sync::Arc<crate::objects::ObjectBlobs>),
}

/// An upload read and hashed, not yet visible under its digest.
pub enum Staged {
    Folder(StagedBlob),
    Object(crate::objects::StagedObject),
}

impl Staged {
    pub fn digest(&self) -> &Digest {
        match self {
            Staged::Folder(staged) => &staged.digest,
            Staged::Object(staged) => &staged.digest,
        }
    }

    pub fn size(&self) -> u64 {
        match self {
            Staged::Folder(staged) => staged.size,
            Staged::Object(staged) => staged.size,
        }
    }
}

impl Blobs {
    /// The blobs of a data folder `data`, or those `url` (`--blobs`) names,
    /// with the preview cache that lives beside them. A shared folder is a
    /// [`BlobStore`] like the data folder's (its fsync and rename make a blob
    /// durable before a row names it, and its holds are file locks, which a
    /// network file system with locking, such as NFSv4 or SMB3, shares).
    pub fn open(data: &Path, url: Option<&str>) -> Result<(Self, crate::previews::PreviewCache)> {
        use crate::objects::{BlobsUrl, ObjectBlobs};
        use crate::previews::{PreviewCache, DATA_FOLDER_BOUND_BYTES};
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
            Some(BlobsUrl::S3 { bucket, prefix }) => {
                let url = url.expect("parsed from a URL");
                let objects = std::sync::Arc::new(ObjectBlobs::open(
                    url,
                    &bucket,
                    &prefix,
                    &data.join("spool"),
                )?);
                let previews = PreviewCache::in_objects(objects.clone());
                Ok((Blobs::Objects(objects), previews))
            }
        }
    }

    /// Whether the blob `digest` is there (made whole: stores never show a part).
    pub async fn contains(&self, digest: &Digest) -> Result<bool> {
        match self {
            Blobs::Folder(store) => Ok(store.path(digest).is_file()),
            Blobs::Objects(objects) => objects.contains(digest).await,
        }
    }

    /// Reads an upload (hashing it, checking a declared digest) into a
    /// staged blob: nothing is visible under its digest yet.
    pub async fn stage(
        &self,
        upload: crate::backend::Upload,
        limit: u64,
        failpoints: &Failpoints,
    ) -> Result<Staged> {
        use crate::backend::UploadSource;
        let crate::backend::Upload {
            source,
            digest,
            progress,
            cancel,
            ..
        } = upload;
        match (self, source) {
            (Blobs::Folder(store), UploadSource::File(path)) => {
                let (store, failpoints) = (store.clone(), failpoints.clone());
                let staged = blocking(move || {
                    store.stage_file(
                        &path,
                        digest.as_ref(),
                        progress.as_ref(),
                        cancel.as_deref(),
                        &failpoints,
                    )
                })
                .await?;
                Ok(Staged::Folder(staged))
            }
            (Blobs::Folder(store), UploadSource::Stream(reader)) => {
                let staged = store
                    .stage_stream(
                        reader,
                        digest.as_ref(),
                        limit,
                        progress.as_ref(),
                        cancel.as_deref(),
                        failpoints,
                    )
                    .await?;
                Ok(Staged::Folder(staged))
            }
            (Blobs::Objects(objects), UploadSource::File(path)) => {
                // Hashed first, so it goes straight to its key; a change
                // meanwhile is a mismatch and stores nothing.
                let digest = match digest {
                    Some(digest) => digest,
                    None => {
                        let hashed = path.clone();
                        blocking(move || digest_file(&hashed)).await?.0
                    }
                };
                let opened = path.clone();
                let file = tokio::fs::File::from_std(blocking(move || open_local(&opened)).await?);
                let staged = objects
                    .stage(
                        file,
                        Some(&digest),
                        u64::MAX,
                        progress.as_ref(),
                        cancel.as_deref(),
                        failpoints,
                    )
                    .await?;
                Ok(Staged::Object(staged))
            }
            (Blobs::Objects(objects), UploadSource::Stream(reader)) => {
                let staged = objects
                    .stage(
                        reader,
                        digest.as_ref(),
                        limit,
                        progress.as_ref(),
                        cancel.as_deref(),
                        failpoints,
                    )
                    .await?;
                Ok(Staged::Object(staged))
            }
        }
    }

    /// The blob's bytes, as a stream.
    pub async fn open_read(
        &self,
        digest: &Digest,
    ) -> Result<std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>> {
        match self {
            Blobs::Folder(store) => Ok(Box::pin(tokio::fs::File::from_std(
                store.open_blob(digest)?,
            ))),
            Blobs::Objects(objects) => objects.open_read(digest).await,
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
            Blobs::Objects(_) => Ok(false),
        }
    }

    /// Removes what uploads that were never named left (see each store's sweep).
    pub fn sweep_unnamed(
        &self,
        named: &HashSet<Digest>,
        is_named: impl Fn(&Digest) -> Result<bool> + Send + Sync,
    ) -> Result<usize> {
        match self {
            Blobs::Folder(store) => store.sweep_unnamed(named, is_named),
            Blobs::Objects(objects) => objects.sweep_unnamed(named, is_named),
        }
    }

    /// `Ok` when the blobs can be reached; else why not.
    pub async fn health(&self) -> std::result::Result<(), String> {
        match self {
            Blobs::Folder(_) => Ok(()),
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

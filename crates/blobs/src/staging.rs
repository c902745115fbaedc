//! An upload on its way into a temporary file: hashed as it is read while a
//! second thread writes it, checked against its declared digest. Used by the
//! folder store, and by the S3 store for what it hashes locally first.
//! Never names a blob by its digest: the store that made the file does.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use leasedesk_files::writeback::Writeback;
use std::thread::JoinHandle;

use tokio::io::AsyncRead;

use super::{read_full, read_full_async, Intake, Reading, CHUNK};
use crate::error::{Error, Result};
use crate::failpoint;
use crate::model::Digest;

/// How much of a linked blob is read and hashed at once.
const LINKED_READS: usize = 4 << 20;

/// Chunks queued for the writer thread beyond the one it is writing.
const QUEUED_CHUNKS: usize = 2;

/// Copies a local file into `temp`, hashing as it reads while a second thread
/// writes. Blocking: call it from a blocking thread.
pub(super) fn stage_file(
    temp: TempBlob,
    mut source: File,
    intake: Intake<'_>,
) -> Result<StagedBlob> {
    let mut pipe = Pipe::start(temp);
    let mut read = Reading::new(intake);
    let copied: Result<()> = (|| loop {
        read.check_cancel()?;
        let mut buf = pipe.buffer();
        let n = read_full(&mut source, &mut buf)?;
        if !read.filled(&mut buf, n)? || !pipe.send_blocking(buf, &intake)? {
            return Ok(()); // the end, or the writer failed: its error is reported below
        }
    })();
    let temp = pipe.finish()?;
    copied?;
    temp.finish(read)
}

/// Streams a reader into `temp`, hashing as it reads while a second thread
/// writes. Stops with `TooLarge` past `limit` bytes.
pub(super) async fn stage_stream<R: AsyncRead + Unpin>(
    temp: TempBlob,
    mut reader: R,
    intake: Intake<'_>,
) -> Result<StagedBlob> {
    let mut pipe = Pipe::start(temp);
    let mut read = Reading::new(intake);
    let copied: Result<()> = async {
        loop {
            read.check_cancel()?;
            let mut buf = pipe.buffer();
            let n = read_full_async(&mut reader, &mut buf).await?;
            if !read.filled(&mut buf, n)? || !pipe.send(buf, &intake).await? {
                return Ok(());
            }
        }
    }
    .await;
    let temp = tokio::task::spawn_blocking(move || pipe.finish())
        .await
        .map_err(|e| Error::Internal(format!("blob writer: {e}")))??;
    copied?;
    temp.finish(read)
}

/// A temporary blob that is a link to bytes already written: checked
/// against `digest`, hashed on every core a few MiB at a time (read, not
/// mapped, so the process's memory holds only those; a mismatch stores
/// nothing), unless they were `hashed` whole as they were written.
pub(super) fn linked(mut temp: TempBlob, digest: Digest, hashed: bool) -> Result<StagedBlob> {
    if hashed {
        let size = temp
            .file
            .as_ref()
            .expect("open temp blob")
            .metadata()?
            .len();
        return Ok(StagedBlob { digest, size, temp });
    }
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; LINKED_READS];
    let file = temp.file.as_mut().expect("open temp blob");
    loop {
        let n = read_full(file, &mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update_rayon(&buf[..n]);
    }
    let actual: Digest = hasher.finalize().into();
    if actual != digest {
        return Err(Error::DigestMismatch {
            expected: digest,
            actual,
        });
    }
    Ok(StagedBlob {
        digest,
        size: hasher.count(),
        temp,
    })
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

    fn send_blocking(&mut self, chunk: Vec<u8>, intake: &Intake) -> Result<bool> {
        let sent = match self.queue(chunk) {
            None => true,
            Some((chunks, chunk)) => chunks.blocking_send(chunk).is_ok(),
        };
        self.sent(sent, intake)
    }

    async fn send(&mut self, chunk: Vec<u8>, intake: &Intake<'_>) -> Result<bool> {
        let sent = match self.queue(chunk) {
            None => true,
            Some((chunks, chunk)) => chunks.send(chunk).await.is_ok(),
        };
        self.sent(sent, intake)
    }

    /// Whether a chunk went to the writer; a failpoint once the upload streams.
    fn sent(&self, sent: bool, intake: &Intake) -> Result<bool> {
        if sent && self.is_writing() {
            intake.failpoints.hit(failpoint::at::UPLOAD_STREAM)?;
        }
        Ok(sent)
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
pub(super) struct TempBlob {
    path: PathBuf,
    file: Option<File>,
    writeback: Writeback,
}

impl TempBlob {
    /// A temporary file just made (and locked) at `path`.
    pub(super) fn new(path: PathBuf, file: File) -> Self {
        Self {
            path,
            file: Some(file),
            writeback: Writeback::new(0),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let file = self.file.as_mut().expect("open temp blob");
        file.write_all(bytes)?;
        self.writeback.wrote(file, bytes.len() as u64);
        Ok(())
    }

    /// Checks the digest; a mismatch stores nothing.
    fn finish(self, read: Reading) -> Result<StagedBlob> {
        let size = read.size;
        Ok(StagedBlob {
            digest: read.digest()?,
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

    /// Makes the bytes durable on disk (before their rename to the digest's name).
    pub(super) fn sync_all(&mut self) -> std::io::Result<()> {
        self.temp.file.as_mut().expect("open temp blob").sync_all()
    }
}

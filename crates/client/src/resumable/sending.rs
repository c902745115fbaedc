//! What a resumable upload sends, read from the file: the chunks the server
//! lacks, each checked against its id before it leaves, as a stream of
//! buffers read on a blocking thread; and whether compressing them pays.

use std::io::{Read, Seek};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::Stream;

use crate::chunking::{Chunk, Chunked};
use crate::error::{Error, Result};
use crate::model::UploadState;

/// Compressing pays when a sample of the bytes to send shrinks below this
/// share of itself.
const COMPRESS_BELOW: f64 = 0.9;
pub(super) const ZSTD_LEVEL: i32 = 3;

/// What a resumable upload sends: the chunks the server lacks, in order,
/// with where each is in the file, and where each starts in the upload; or,
/// for an upload without a list, the file's first `size` bytes.
pub(super) struct Sending {
    file: PathBuf,
    pieces: Vec<(u64, Chunk)>,
    starts: Vec<u64>,
    unlisted: Option<u64>,
    /// Why reading the file failed, if it did (told apart from the link).
    pub(super) failed: Arc<std::sync::Mutex<Option<Error>>>,
}

impl Sending {
    pub(super) fn new(file: PathBuf, chunked: &Chunked, state: &UploadState) -> Self {
        let at: Vec<(u64, Chunk)> = chunked.offsets().map(|(o, c)| (o, *c)).collect();
        let pieces: Vec<(u64, Chunk)> = state
            .send
            .iter()
            .flat_map(|&(first, end)| first..end)
            .filter_map(|i| at.get(i as usize).copied())
            .collect();
        let starts = pieces
            .iter()
            .scan(0u64, |next, &(_, chunk)| {
                let start = *next;
                *next += u64::from(chunk.size);
                Some(start)
            })
            .collect();
        Self {
            file,
            pieces,
            starts,
            unlisted: None,
            failed: Default::default(),
        }
    }

    /// The whole file, `size` bytes, for an upload without a list.
    pub(super) fn unlisted(file: PathBuf, size: u64) -> Self {
        Self {
            file,
            pieces: Vec::new(),
            starts: Vec::new(),
            unlisted: Some(size),
            failed: Default::default(),
        }
    }

    /// A reader of the upload's bytes from `from`, read from the file.
    pub(super) fn reader(&self, from: u64) -> Result<Box<dyn Read + Send>> {
        if let Some(size) = self.unlisted {
            if from > size {
                return Err(Error::Internal(format!(
                    "the server says the upload is at byte {from} of {size}"
                )));
            }
            let mut file = crate::local_file::open_to_read(&self.file)?;
            file.seek(std::io::SeekFrom::Start(from))?;
            return Ok(Box::new(FileReader {
                file,
                left: size - from,
                failed: self.failed.clone(),
            }));
        }
        let total = self.starts.last().zip(self.pieces.last());
        let total = total.map_or(0, |(&s, (_, c))| s + u64::from(c.size));
        if from > total {
            return Err(Error::Internal(format!(
                "the server says the upload is at byte {from} of {total}"
            )));
        }
        let k = self
            .starts
            .partition_point(|&s| s <= from)
            .saturating_sub(1);
        let within = from - self.starts.get(k).copied().unwrap_or(0);
        Ok(Box::new(PieceReader {
            file: crate::local_file::open_to_read(&self.file)?,
            pieces: self.pieces.clone(),
            k,
            within: within as usize,
            chunk: Vec::new(),
            failed: self.failed.clone(),
        }))
    }
}

/// The rest of a file sent without a list, straight from it: checked only
/// by the server, against the digest, when the upload is used.
struct FileReader {
    file: std::fs::File,
    left: u64,
    failed: Arc<std::sync::Mutex<Option<Error>>>,
}

impl Read for FileReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let most = buf.len().min(self.left.try_into().unwrap_or(usize::MAX));
        if most == 0 {
            return Ok(0);
        }
        let n = self.file.read(&mut buf[..most])?;
        if n == 0 {
            // Shorter than when it was hashed.
            let e = super::changed_while_sent();
            *self.failed.lock().expect("failed") = Some(e.clone());
            return Err(std::io::Error::other(e));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// The chunks to send, one after another, read from the file a chunk at a
/// time, each checked against its id first: a file changed since it was
/// cut fails here, before a byte of it leaves.
struct PieceReader {
    file: std::fs::File,
    pieces: Vec<(u64, Chunk)>,
    k: usize,
    within: usize,
    chunk: Vec<u8>,
    failed: Arc<std::sync::Mutex<Option<Error>>>,
}

impl Read for PieceReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some(&(offset, chunk)) = self.pieces.get(self.k) else {
                return Ok(0);
            };
            if self.chunk.is_empty() {
                self.chunk.resize(chunk.size as usize, 0);
                self.file.seek(std::io::SeekFrom::Start(offset))?;
                let read = match self.file.read_exact(&mut self.chunk) {
                    Ok(()) if blake3::hash(&self.chunk) == chunk.id => Ok(()),
                    Ok(()) => Err(super::changed_while_sent()),
                    Err(e) => Err(e.into()),
                };
                if let Err(e) = read {
                    *self.failed.lock().expect("failed") = Some(e.clone());
                    return Err(std::io::Error::other(e));
                }
            }
            if self.within == self.chunk.len() {
                self.k += 1;
                self.within = 0;
                self.chunk.clear();
                continue;
            }
            let n = buf.len().min(self.chunk.len() - self.within);
            buf[..n].copy_from_slice(&self.chunk[self.within..self.within + n]);
            self.within += n;
            return Ok(n);
        }
    }
}

/// Counts the bytes read through it, for progress.
pub(super) struct Counted<R> {
    pub(super) inner: R,
    pub(super) read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A blocking reader as a stream of buffers, read on a blocking thread.
pub(super) fn stream_of(
    mut reader: impl Read + Send + 'static,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || loop {
        let mut buf = vec![0u8; 1 << 20];
        let mut filled = 0;
        let outcome = loop {
            match reader.read(&mut buf[filled..]) {
                Ok(0) => break Ok(true),
                Ok(n) => {
                    filled += n;
                    if filled == buf.len() {
                        break Ok(false);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        buf.truncate(filled);
        let end = !matches!(outcome, Ok(false));
        if filled > 0 && tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
            return;
        }
        if let Err(e) = outcome {
            let _ = tx.blocking_send(Err(e));
        }
        if end {
            return;
        }
    });
    tokio_stream_of(rx)
}

fn tokio_stream_of<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::Receiver<T>,
) -> impl Stream<Item = T> + Send + 'static {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// Whether zstd shrinks a sample of what will be sent (its first 4 MiB)
/// enough to be worth it. Blocking.
pub(super) fn worth_compressing(sending: &Sending, length: u64) -> Result<bool> {
    const SAMPLE: u64 = 4 << 20;
    let take = length.min(SAMPLE);
    if take < 64 << 10 {
        return Ok(false);
    }
    let mut sample = Vec::with_capacity(take as usize);
    sending.reader(0)?.take(take).read_to_end(&mut sample)?;
    let packed = zstd::bulk::compress(&sample, ZSTD_LEVEL)?;
    Ok((packed.len() as f64) < COMPRESS_BELOW * sample.len() as f64)
}

//! Transfers over links that break (`docs/API-transfers.md`). A local file
//! of some size goes up as a resumable upload of only the chunks the server
//! lacks, zstd-compressed when that helps, appended from wherever the server
//! says it is after a drop, and then named by the check-in (or stage, edit's
//! commit, import) that takes it. Downloads go on from the byte they reached
//! (`Range`, `If-Range` on the digest). A broken link is waited out with a
//! bounded backoff, telling the caller ("reconnecting…"); a transfer gives
//! up only after a long stretch in which nothing moved. Never sends again a
//! byte the server acknowledged, and never reads a whole file into memory.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::Method;
use serde::de::DeserializeOwned;
use tokio::io::AsyncRead;

use super::servers::Resend;
use super::{encoded, Remote};
use crate::backend::{check_cancel, Notes, Progress, TransferNote, Upload};
use crate::chunking::{self, Chunk, Chunked};
use crate::error::{Error, Result};
use crate::model::{check_message, UploadFor, UploadState};
use crate::wire::{DIGEST_HEADER, IDEMPOTENCY_KEY, MESSAGE_HEADER, OFFSET_HEADER, UPLOAD_HEADER};

/// Files smaller than this go in one request: a few round trips more would
/// cost more than resuming saves.
pub const RESUMABLE_FROM: u64 = 1 << 20;
/// The first wait after a drop, doubled at each drop up to [`MOST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(250);
const MOST_WAIT: Duration = Duration::from_secs(10);
/// How often an upload that vanished from its server (another server
/// answers now, or it was swept) is begun again.
const MOST_RESTARTS: usize = 3;
/// A transfer gives up once nothing moved for this long.
const GIVE_UP_AFTER: Duration = Duration::from_secs(600);
/// Compressing pays when a sample of the bytes to send shrinks below this
/// share of itself.
const COMPRESS_BELOW: f64 = 0.9;
const ZSTD_LEVEL: i32 = 3;

/// A transfer's dealings with a link that may break: how long to wait next,
/// since when nothing moved, and whom to tell.
pub(super) struct Link {
    notes: Option<Notes>,
    wait: Duration,
    quiet_since: Instant,
}

impl Link {
    pub(super) fn new(notes: Option<Notes>) -> Self {
        Self {
            notes,
            wait: FIRST_WAIT,
            quiet_since: Instant::now(),
        }
    }

    fn note(&self, note: TransferNote) {
        if let Some(notes) = &self.notes {
            notes(note);
        }
    }

    /// Bytes moved: the next drop waits little again.
    pub(super) fn moved(&mut self) {
        self.wait = FIRST_WAIT;
        self.quiet_since = Instant::now();
    }

    /// After a broken link: waits (telling so), or gives up if nothing
    /// moved for too long.
    pub(super) async fn pause(&mut self, broke: &Error) -> Result<()> {
        if self.quiet_since.elapsed() >= GIVE_UP_AFTER {
            return Err(Error::Unavailable(format!(
                "nothing moved for {} minutes ({broke}): try again later",
                GIVE_UP_AFTER.as_secs() / 60
            )));
        }
        self.note(TransferNote::Reconnecting {
            after: self.wait,
            reason: broke.to_string(),
        });
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(MOST_WAIT);
        Ok(())
    }

    /// Runs `f` until it answers, waiting out broken links.
    pub(super) async fn retry<T, F: std::future::Future<Output = Result<T>>>(
        &mut self,
        f: impl Fn() -> F,
    ) -> Result<T> {
        loop {
            match f().await {
                Err(e) if broken(&e) => self.pause(&e).await?,
                done => return done,
            }
        }
    }
}

/// Whether an error is the link's (worth waiting out), not an answer.
pub(super) fn broken(e: &Error) -> bool {
    matches!(e, Error::Unavailable(_))
}

/// What a resumable upload sends: the chunks the server lacks, in order,
/// with where each is in the file, and where each starts in the upload.
struct Sending {
    file: PathBuf,
    pieces: Vec<(u64, Chunk)>,
    starts: Vec<u64>,
    /// Why reading the file failed, if it did (told apart from the link).
    failed: Arc<std::sync::Mutex<Option<Error>>>,
}

impl Sending {
    fn new(file: PathBuf, chunked: &Chunked, state: &UploadState) -> Self {
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
            failed: Default::default(),
        }
    }

    /// A reader of the upload's bytes from `from`, read from the file.
    fn reader(&self, from: u64) -> Result<PieceReader> {
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
        Ok(PieceReader {
            file: crate::local_file::open_to_read(&self.file)?,
            pieces: self.pieces.clone(),
            k,
            within: within as usize,
            chunk: Vec::new(),
            failed: self.failed.clone(),
        })
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
                    Ok(()) => Err(Error::Invalid(
                        "the file changed while it was sent: nothing was stored; check it in again"
                            .into(),
                    )),
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
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A blocking reader as a stream of buffers, read on a blocking thread.
fn stream_of(
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
fn worth_compressing(sending: &Sending, length: u64) -> Result<bool> {
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

impl Remote {
    /// Sends a local file to `path` for `target` as a resumable upload of
    /// the chunks the server lacks, then asks `path` to take it. A file whose
    /// chunk list is too long for an upload goes in one request.
    pub(super) async fn post_resumable<T: DeserializeOwned>(
        &self,
        path: &str,
        target: UploadFor,
        file: PathBuf,
        upload: Upload,
    ) -> Result<T> {
        let listed = file.clone();
        let chunked =
            blocking(move || chunking::chunk_file(&crate::local_file::open_to_read(&listed)?))
                .await?;
        if let Some(expected) = &upload.digest {
            if *expected != chunked.digest {
                return Err(Error::DigestMismatch {
                    expected: expected.clone(),
                    actual: chunked.digest,
                });
            }
        }
        if chunked.chunks.len() as u64 > chunking::MOST_LISTED {
            return self
                .post_upload(
                    path,
                    Upload {
                        digest: Some(chunked.digest),
                        ..upload
                    },
                )
                .await;
        }
        let whole = Upload {
            source: crate::backend::UploadSource::File(file.clone()),
            digest: Some(chunked.digest.clone()),
            message: upload.message.clone(),
            progress: upload.progress.clone(),
            cancel: upload.cancel.clone(),
            notes: None,
        };
        let Upload {
            message,
            progress,
            cancel,
            notes,
            ..
        } = upload;
        let message = check_message(message)?;
        let mut link = Link::new(notes);
        let mut restarts = 0;
        loop {
            // One key for every try of this begin: a begin whose answer was
            // lost, sent again, begins nothing new.
            let key = uuid::Uuid::new_v4().to_string();
            let begun = link
                .retry(|| self.begin_upload(&target, &chunked, &key))
                .await;
            let mut state = match begun {
                Ok(state) => state,
                // A check-out that closed meanwhile (a server that committed
                // and died before its answer, say): the single request gets
                // the answer its rules give a retry.
                Err(Error::CheckoutClosed(_)) if restarts > 0 => {
                    return self.post_upload(path, whole).await
                }
                Err(e) => return Err(e),
            };
            link.note(TransferNote::Sending {
                bytes: state.length,
                size: chunked.size,
            });
            let sending = Arc::new(Sending::new(file.clone(), &chunked, &state));
            let compress = {
                let (sending, length) = (sending.clone(), state.length);
                blocking(move || worth_compressing(&sending, length)).await?
            };
            let progress = progress.clone();
            let sent = self
                .send_rest(
                    &mut link,
                    &mut state,
                    &sending,
                    compress,
                    progress,
                    cancel.clone(),
                )
                .await;
            // The last moment to stop: once the upload is used, it commits.
            let sent = sent.and_then(|()| check_cancel(cancel.as_deref()));
            let used = match sent {
                Ok(()) => {
                    link.retry(|| self.use_upload(path, &state, message.as_deref()))
                        .await
                }
                Err(e) => Err(e),
            };
            match used {
                // The server that had it is gone or swept it: begin again.
                Err(Error::NotFound(why))
                    if why.contains("no upload") && restarts < MOST_RESTARTS =>
                {
                    restarts += 1;
                }
                Err(e) => {
                    if !broken(&e) {
                        // Refused (a closed check-out, bytes that changed):
                        // nothing will use what came.
                        let _ = self.cancel_upload(&state).await;
                    }
                    return Err(e);
                }
                done => return done,
            }
        }
    }

    /// Appends until the server has every byte, resuming after each drop
    /// from the offset the server gives.
    async fn send_rest(
        &self,
        link: &mut Link,
        state: &mut UploadState,
        sending: &Arc<Sending>,
        compress: bool,
        progress: Option<Progress>,
        cancel: Option<crate::backend::Cancel>,
    ) -> Result<()> {
        // Progress only grows, whatever the server says after a drop.
        let told = Arc::new(AtomicU64::new(0));
        let progress: Option<Progress> = progress.map(|inner| {
            let told = told.clone();
            Arc::new(move |at: u64| {
                if told.fetch_max(at, Ordering::Relaxed) < at {
                    inner(at);
                }
            }) as Progress
        });
        let tell = |at: u64| {
            if let Some(progress) = &progress {
                progress(at);
            }
        };
        tell(state.offset);
        let (mut wrong, mut mismatches) = (0, 0);
        while !state.is_complete() {
            check_cancel(cancel.as_deref())?;
            let from = state.offset;
            match self
                .append(state, sending, compress, progress.clone(), cancel.clone())
                .await
            {
                Ok(now) => {
                    if now.offset > from {
                        link.moved();
                        wrong = 0;
                    } else if !now.is_complete() {
                        // Answered without taking a byte: wait before asking again.
                        link.pause(&Error::Unavailable("the server took no bytes".into()))
                            .await?;
                    }
                    *state = now;
                }
                Err(Error::WrongOffset { offset }) => {
                    // Another append of ours raced this one; twice in a row, wait.
                    wrong += 1;
                    if wrong > 2 {
                        link.pause(&Error::WrongOffset { offset }).await?;
                    }
                    state.offset = offset.min(state.length);
                }
                Err(e) if broken(&e) => {
                    link.pause(&e).await?;
                    let asked = state.clone();
                    *state = link.retry(|| self.upload_state(&asked)).await?;
                    if state.offset > from {
                        link.moved();
                    }
                    link.note(TransferNote::Resumed { from: state.offset });
                }
                // Each chunk was checked here before it left, so the bytes went
                // bad on the way or at the server: send them again, a few times.
                Err(Error::ChunkMismatch { offset, .. }) if mismatches < 3 => {
                    mismatches += 1;
                    state.offset = offset.min(state.length);
                }
                Err(e) => return Err(e),
            }
            tell(state.offset);
        }
        Ok(())
    }

    async fn begin_upload(
        &self,
        target: &UploadFor,
        chunked: &Chunked,
        key: &str,
    ) -> Result<UploadState> {
        let aim = match target {
            UploadFor::Checkout(id) => format!("checkout={id}"),
            UploadFor::Edit(id) => format!("edit={id}"),
            UploadFor::Import(path) => format!("path={}", encoded(path.as_str())),
        };
        let path = format!("/v1/uploads?{aim}&size={}", chunked.size);
        let list = Bytes::from(chunked.encode_list());
        let response = self
            .send(Resend::Safe, |base| {
                Ok(self
                    .request(base, Method::POST, &path)
                    .header(DIGEST_HEADER, chunked.digest.as_str())
                    .header(IDEMPOTENCY_KEY, key)
                    .header(
                        reqwest::header::CONTENT_TYPE,
                        "application/vnd.leasedesk.chunks",
                    )
                    .body(list.clone()))
            })
            .await?;
        read_answer(response).await
    }

    async fn upload_state(&self, state: &UploadState) -> Result<UploadState> {
        let path = format!("/v1/uploads/{}", state.id);
        read_answer(self.get_response(&path).await?).await
    }

    async fn cancel_upload(&self, state: &UploadState) -> Result<()> {
        let path = format!("/v1/uploads/{}", state.id);
        self.send(Resend::Safe, |base| {
            Ok(self.request(base, Method::DELETE, &path))
        })
        .await?;
        Ok(())
    }

    /// One append, from `state.offset` to the end or until the link breaks.
    async fn append(
        &self,
        state: &UploadState,
        sending: &Arc<Sending>,
        compress: bool,
        progress: Option<Progress>,
        cancel: Option<crate::backend::Cancel>,
    ) -> Result<UploadState> {
        let from = state.offset;
        let read = Arc::new(AtomicU64::new(0));
        let raw = Counted {
            inner: sending.reader(from)?,
            read: read.clone(),
        };
        let body: Pin<Box<dyn Stream<Item = std::io::Result<Bytes>> + Send>> = if compress {
            Box::pin(stream_of(zstd::stream::read::Encoder::new(
                raw, ZSTD_LEVEL,
            )?))
        } else {
            Box::pin(stream_of(raw))
        };
        let body = body.map(move |piece| {
            check_cancel(cancel.as_deref()).map_err(std::io::Error::other)?;
            if let Some(progress) = &progress {
                progress(from + read.load(Ordering::Relaxed));
            }
            piece
        });
        let body = std::sync::Mutex::new(Some(reqwest::Body::wrap_stream(body)));
        let path = format!("/v1/uploads/{}", state.id);
        let response = self
            .send(Resend::Never, |base| {
                let body = body.lock().expect("append body").take();
                let body = body.ok_or_else(|| Error::Internal("an append is sent once".into()))?;
                let mut request = self
                    .request(base, Method::PATCH, &path)
                    .header(OFFSET_HEADER, from)
                    .header(
                        reqwest::header::CONTENT_TYPE,
                        "application/offset+octet-stream",
                    );
                if compress {
                    request = request.header(reqwest::header::CONTENT_ENCODING, "zstd");
                }
                Ok(request.body(body))
            })
            .await;
        // The file's own failure, not the link's, if reading it stopped the body.
        if let Some(e) = sending.failed.lock().expect("failed").take() {
            return Err(e);
        }
        read_answer(response?).await
    }

    /// Asks `path` to take a finished upload's bytes.
    async fn use_upload<T: DeserializeOwned>(
        &self,
        path: &str,
        state: &UploadState,
        message: Option<&str>,
    ) -> Result<T> {
        let response = self
            .send(Resend::Safe, |base| {
                let mut request = self
                    .request(base, Method::POST, path)
                    .header(UPLOAD_HEADER, state.id.to_string())
                    .header(reqwest::header::CONTENT_LENGTH, 0);
                if let Some(message) = message {
                    request = request.header(MESSAGE_HEADER, encoded(message));
                }
                Ok(request)
            })
            .await?;
        read_answer(response).await
    }

    /// A GET's body read as it comes, going on from the byte it reached when
    /// the link breaks (`Range`, with `If-Range` on `etag`, so changed bytes
    /// are never spliced in).
    pub(super) fn resuming_download(
        &self,
        path: String,
        etag: String,
        start: u64,
        end: u64,
        notes: Option<Notes>,
    ) -> Pin<Box<dyn AsyncRead + Send>> {
        let remote = self.clone();
        struct Going {
            at: u64,
            body: Option<Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>>,
            link: Link,
        }
        let going = Going {
            at: start,
            body: None,
            link: Link::new(notes),
        };
        let stream = futures_util::stream::unfold(going, move |mut going| {
            let (remote, path, etag) = (remote.clone(), path.clone(), etag.clone());
            async move {
                loop {
                    if going.at >= end {
                        return None;
                    }
                    if going.body.is_none() {
                        let asked = remote.range(&path, &etag, going.at, end).await;
                        match asked {
                            Ok(body) => going.body = Some(body),
                            Err(e) if broken(&e) => {
                                if let Err(e) = going.link.pause(&e).await {
                                    return Some((Err(std::io::Error::other(e)), going));
                                }
                                continue;
                            }
                            Err(e) => return Some((Err(std::io::Error::other(e)), going)),
                        }
                    }
                    let body = going.body.as_mut().expect("a body");
                    match body.next().await {
                        Some(Ok(piece)) => {
                            let piece = piece.slice(..((end - going.at) as usize).min(piece.len()));
                            going.at += piece.len() as u64;
                            going.link.moved();
                            return Some((Ok(piece), going));
                        }
                        Some(Err(e)) => {
                            going.body = None;
                            let broke = Error::Unavailable(format!("the download broke: {e}"));
                            if let Err(e) = going.link.pause(&broke).await {
                                return Some((Err(std::io::Error::other(e)), going));
                            }
                        }
                        None if going.at < end => {
                            going.body = None;
                            let broke = Error::Unavailable("the download ended early".into());
                            if let Err(e) = going.link.pause(&broke).await {
                                return Some((Err(std::io::Error::other(e)), going));
                            }
                        }
                        None => return None,
                    }
                }
            }
        });
        Box::pin(tokio_util::io::StreamReader::new(stream))
    }

    /// The bytes `start..end` of a GET whose ETag must be `etag`.
    async fn range(
        &self,
        path: &str,
        etag: &str,
        start: u64,
        end: u64,
    ) -> Result<Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>> {
        let response = self
            .send(Resend::Safe, |base| {
                Ok(self
                    .request(base, Method::GET, path)
                    .header(reqwest::header::RANGE, format!("bytes={start}-{}", end - 1))
                    .header(reqwest::header::IF_RANGE, etag))
            })
            .await?;
        if response.status() != reqwest::StatusCode::PARTIAL_CONTENT {
            return Err(Error::Internal(format!(
                "the server answered {} to a range of {path}: its bytes changed",
                response.status()
            )));
        }
        Ok(Box::pin(response.bytes_stream()))
    }
}

/// An answer's JSON; a body cut off is the link's fault, not the server's.
async fn read_answer<T: DeserializeOwned>(response: reqwest::Response) -> Result<T> {
    let bytes = response
        .bytes()
        .await
        .map_err(|e| Error::Unavailable(format!("the answer was cut off: {e}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Internal(format!("the server's answer could not be read: {e}")))
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("task: {e}")))?
}

/// Whether a local file is large enough to go as a resumable upload.
pub(super) fn goes_resumable(file: &Path) -> bool {
    std::fs::metadata(file).is_ok_and(|m| m.len() >= RESUMABLE_FROM)
}

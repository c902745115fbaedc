//! One append of a resumable upload: the bytes that came, checked chunk by
//! chunk (an unlisted upload's only against its digest, at its use),
//! written and counted (see `transfers`).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::blobs::{BytesWriter, Durable};

/// What a count of an upload's bytes found: `None` when they counted;
/// else the upload as another request left it, or `None` if it is gone.
type Counted = Option<Option<UploadRow>>;

/// One append's work, in three steps that overlap:
///
/// 1. the body is read and cut at the chunks' ends;
/// 2. the whole chunks are checked against their ids and written, a run of
///    them at a time ([`BytesWriter::sizes`]), on other threads, while the
///    next run is read;
/// 3. what was written is made durable and counted, one count at a time,
///    each taking all that was written by then: so a server that dies loses
///    about what came during one sync, whatever the link's speed.
///
/// When the request ends, what is left is written and counted, with the
/// part of a chunk that came (which the next append checks as the chunk
/// completes).
pub(super) struct Appending<'a> {
    pub(super) me: &'a Bundled,
    pub(super) row: UploadRow,
    pub(super) turn: &'a Turn,
    /// The writer, while no run is being written.
    pub(super) writer: Option<BytesWriter>,
    pub(super) durable: Durable,
    /// Whole chunks after those handed to the writer, not yet checked.
    pub(super) run: Run,
    /// The run being checked and written, on other threads.
    pub(super) writing: Option<tokio::task::JoinHandle<(BytesWriter, Result<Written>)>>,
    /// Whether a count failed: none is made after it.
    pub(super) count_failed: bool,
    /// Where the bytes written end (`row.reached` counts those durable),
    /// and the runs written since the last count.
    pub(super) written_to: u64,
    pub(super) uncounted: Vec<(u64, u64)>,
    /// The count under way, and where it ends.
    pub(super) counting: Option<(u64, tokio::task::JoinHandle<Result<Counted>>)>,
    /// The bytes after those of the chunk under way.
    pub(super) partial: Vec<u8>,
    /// Where the upload goes back to: a chunk begun by an earlier request
    /// turned out not to be its id.
    pub(super) cut_to: Option<u64>,
    /// What stopped the writing (a chunk that was not its id, a write or
    /// a sync that failed): nothing after it is written or counted.
    pub(super) stopped: Option<Error>,
    /// The whole file's hash, of every byte written so far, while this
    /// request writes the whole file from its first byte, in order, into
    /// one spool (with the run being written while that is on its way).
    pub(super) whole: Option<WholeHash>,
}

/// The whole file's hash, taken on a thread of its own from the chunks as
/// they are written, in order: the writing waits for it only when it is
/// [`HASH_BEHIND`] chunks behind.
pub(super) struct WholeHash {
    chunks: std::sync::mpsc::SyncSender<Bytes>,
    hashing: std::thread::JoinHandle<blake3::Hasher>,
}

/// How many chunks the whole file's hash may lag behind the writing: at
/// most 4 MiB held for it, 1 MiB on average. It hashes several times
/// faster than a link brings bytes, but shares the cores: 4 chunks made
/// the writing wait (an append of 1 GiB 1.6 s, against 1.3 s with 16).
const HASH_BEHIND: usize = 16;

/// The most whole-file hashes a server takes at once (a thread and up to
/// 4 MiB each); an append past them is read again at its use instead.
const MOST_HASHING: usize = 8;
static HASHING: AtomicUsize = AtomicUsize::new(0);

impl WholeHash {
    /// A hash begun, or `None` if [`MOST_HASHING`] are under way or no
    /// thread could take it.
    pub(super) fn start() -> Option<Self> {
        if HASHING.fetch_add(1, Ordering::SeqCst) >= MOST_HASHING {
            HASHING.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        let (chunks, arriving) = std::sync::mpsc::sync_channel::<Bytes>(HASH_BEHIND);
        let hashing = std::thread::Builder::new()
            .name("upload-hash".into())
            .spawn(move || {
                let mut hasher = blake3::Hasher::new();
                for chunk in arriving {
                    hasher.update(&chunk);
                }
                HASHING.fetch_sub(1, Ordering::SeqCst);
                hasher
            });
        match hashing {
            Ok(hashing) => Some(Self { chunks, hashing }),
            Err(_) => {
                HASHING.fetch_sub(1, Ordering::SeqCst);
                None
            }
        }
    }

    /// Hands on the next chunk written (blocking while the hash is far
    /// behind); `None` if its thread is gone.
    fn add(self, chunk: &Bytes) -> Option<Self> {
        self.chunks.send(chunk.clone()).ok()?;
        Some(self)
    }

    /// The hash of every chunk handed on.
    async fn finish(self) -> Option<blake3::Hasher> {
        let Self { chunks, hashing } = self;
        drop(chunks);
        let joined = tokio::task::spawn_blocking(move || hashing.join().ok()).await;
        joined.ok().flatten()
    }
}

/// Whole chunks waiting to be checked and written, in order, from `from`.
#[derive(Default)]
pub(super) struct Run {
    from: u64,
    bytes: usize,
    /// Each chunk's bytes, its id (`None`: checked already, or an unlisted
    /// upload's piece), and its position among the chunks to send.
    chunks: Vec<(Bytes, Option<Digest32>, usize)>,
}

type Digest32 = [u8; 32];

/// What a run's writing came to: where the bytes written end, the
/// position of the first chunk that was not its id, with its start, and
/// the whole file's hash gone on through the run (if every chunk was).
pub(super) struct Written {
    to: u64,
    mismatch: Option<(usize, u64)>,
    whole: Option<WholeHash>,
}

impl Appending<'_> {
    /// Reads the body and cuts it into chunks, which are checked as they
    /// are written, until the body ends, breaks or goes wrong, a chunk is
    /// not its id, or a newer request supersedes this one.
    pub(super) async fn run(
        &mut self,
        to_send: &ToSend,
        body: &mut (impl AsyncRead + Unpin),
    ) -> Result<()> {
        let (write_size, count_size) = self.writer.as_ref().expect("writer").sizes();
        let length = self.row.length;
        let mut k = to_send.chunk_at(self.row.reached);
        self.run.from = self.written_to;
        // The chunk under way began in an earlier request: checked here, as
        // its bytes that came before are hashed again.
        let mut resumed = None;
        let (chunk_start, _, id) = to_send.piece(k);
        if chunk_start < self.row.reached && id.is_some() {
            let mut hasher = blake3::Hasher::new();
            hasher.update(&self.me.upload_bytes(&self.row, chunk_start).await?);
            resumed = Some(hasher);
        }
        let mut buf = vec![0u8; 256 << 10];
        loop {
            let read = tokio::select! {
                biased;
                () = self.turn.until_superseded() => return Ok(()),
                read = body.read(&mut buf) => read,
            };
            let at = |me: &Appending| (me.run.from + me.run.bytes as u64) + me.partial.len() as u64;
            let n = match read {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) => {
                    return Err(Error::BadRequest(format!(
                        "the body stopped at byte {}: {e}",
                        at(self)
                    )))
                }
            };
            let mut rest = &buf[..n];
            while !rest.is_empty() {
                if at(self) == length {
                    return Err(Error::Invalid(format!(
                        "the body goes past the upload's {length} bytes"
                    )));
                }
                let (start, size, id) = to_send.piece(k);
                let end = start + size;
                let take = ((end - at(self)) as usize).min(rest.len());
                if let Some(hasher) = &mut resumed {
                    hasher.update(&rest[..take]);
                }
                self.partial.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if at(self) < end {
                    continue;
                }
                let bytes = Bytes::from(std::mem::take(&mut self.partial));
                self.run.bytes += bytes.len();
                match resumed.take() {
                    Some(hasher) if Some(*hasher.finalize().as_bytes()) != id => {
                        // Dropped: the upload goes back to the chunk's start.
                        self.cut_to = Some(start);
                        return Err(self.mismatch_at(k, start));
                    }
                    // Checked here with its first bytes, which an earlier
                    // request wrote: only the rest is written now.
                    Some(_) => self.run.chunks.push((bytes, None, k)),
                    None => self.run.chunks.push((bytes, id, k)),
                }
                k += 1;
                // A run goes as soon as the writer is free: on a slow link
                // each chunk is durable soon after it came; on a fast one
                // runs grow while the one before is written.
                let idle = self.writing.as_ref().is_none_or(|w| w.is_finished());
                if self.run.bytes >= write_size || idle {
                    self.hand_over().await?;
                    let done = self.counting.as_ref().is_none_or(|(_, c)| c.is_finished());
                    if done && self.written_to - self.row.reached >= count_size {
                        self.counted().await?;
                        self.start_count();
                    }
                }
            }
        }
    }

    /// Keeps what came: the checked chunks and the part of one under way,
    /// or goes back to where a chunk that was not its id began.
    pub(super) async fn finish(&mut self) -> Result<()> {
        if let Some(to) = self.cut_to {
            // The chunk began in an earlier request, so it was this one's
            // first: nothing was written here.
            let (shared, id, writer) = (self.me.shared.clone(), self.row.id, self.row.writer);
            let cut = in_place(move || {
                shared
                    .store
                    .write(Durability::Normal, |tx| tx.cut_upload(id, writer, to))
            })
            .await?;
            if cut {
                self.row.reached = to;
            }
            return Ok(());
        }
        let written = self.hand_over().await.and(self.written().await);
        if written.is_ok() && !self.partial.is_empty() && self.still_writer().await? {
            // The part of a chunk that came, checked when it completes.
            // Only while this request has the upload: a request another
            // server superseded must not write unchecked bytes where the
            // upload may have gone on (even into a blob the upload became).
            // The file is not whole here: its hash stops.
            self.whole = None;
            let partial = Bytes::from(std::mem::take(&mut self.partial));
            self.run.bytes = partial.len();
            self.run.chunks.push((partial, None, usize::MAX));
            self.hand_over().await?;
            self.written().await?;
        }
        self.counted().await?;
        self.start_count();
        self.counted().await?;
        let whole = match self.whole.take() {
            Some(whole) if written.is_ok() && self.row.reached == self.row.size => {
                whole.finish().await
            }
            _ => None,
        };
        if let Some(hasher) = whole.filter(|hasher| hasher.count() == self.row.size) {
            let uploads = &self.me.shared.uploads;
            uploads.arrived(self.row.id, hasher.finalize().into());
        }
        written
    }

    /// The error for the chunk at position `k` of those to send, which
    /// starts at `start` and was not its id; nothing after it is kept.
    fn mismatch_at(&mut self, k: usize, start: u64) -> Error {
        let index = self.row.send.iter().flat_map(|&(f, e)| f..e).nth(k);
        let error = Error::ChunkMismatch {
            index: index.unwrap_or_default(),
            offset: start,
        };
        self.stop(error)
    }

    /// Ends the writing with `error`: what was gathered is dropped, and
    /// nothing after is written or counted.
    fn stop(&mut self, error: Error) -> Error {
        self.partial.clear();
        self.run = Run::default();
        self.stopped = Some(error.clone());
        error
    }

    /// Whether this request still has the upload's turn, here and in the
    /// store (another server's request may have taken it).
    async fn still_writer(&self) -> Result<bool> {
        if self.turn.superseded() {
            return Ok(false);
        }
        let (shared, id) = (self.me.shared.clone(), self.row.id);
        let now = in_place(move || shared.store.read(|tx| tx.upload(id))).await?;
        Ok(now.is_some_and(|now| now.writer == self.row.writer))
    }

    /// Hands the run gathered to the writer, once it has written the one
    /// before: checked and written on other threads while more is read.
    async fn hand_over(&mut self) -> Result<()> {
        self.written().await?;
        if self.run.chunks.is_empty() {
            return Ok(());
        }
        let Some(mut writer) = self.writer.take() else {
            return Err(self.stop(Error::Internal("an upload's writer was lost".into())));
        };
        let run = std::mem::take(&mut self.run);
        self.run.from = run.from + run.bytes as u64;
        let whole = self.whole.take();
        self.writing = Some(tokio::spawn(async move {
            let written = write_run(&mut writer, run, whole).await;
            (writer, written)
        }));
        Ok(())
    }

    /// Waits for the run being written, if any; a chunk in it that was not
    /// its id ends the append.
    async fn written(&mut self) -> Result<()> {
        let Some(writing) = self.writing.take() else {
            return match &self.stopped {
                Some(e) => Err(e.clone()),
                None => Ok(()),
            };
        };
        let (writer, written) = match writing.await {
            Ok(done) => done,
            Err(e) => {
                let e = Error::Internal(format!("writing an upload's bytes: {e}"));
                return Err(self.stop(e));
            }
        };
        self.writer = Some(writer);
        // A run that failed counts none of its bytes, nor any after.
        let written = written.map_err(|e| self.stop(e))?;
        if written.to > self.written_to {
            self.uncounted.push((self.written_to, written.to));
        }
        self.written_to = written.to;
        self.whole = written.whole;
        match written.mismatch {
            Some((k, start)) => Err(self.mismatch_at(k, start)),
            None => Ok(()),
        }
    }

    /// Begins making the bytes written so far durable and counting them, if
    /// this request still has the upload's turn then.
    fn start_count(&mut self) {
        let (from, to) = (self.row.reached, self.written_to);
        // After a failed sync, what was written may be lost whatever a
        // later sync says: it is never counted.
        if to == from || self.count_failed {
            return;
        }
        let mut runs = std::mem::take(&mut self.uncounted);
        if self.durable.is_one_file() {
            runs = vec![(from, to)];
        }
        let durable = self.durable.clone();
        let (shared, id, writer) = (self.me.shared.clone(), self.row.id, self.row.writer);
        let count = tokio::spawn(async move {
            durable.sync().await?;
            off_thread(move || {
                shared.store.write(Durability::Normal, |tx| {
                    for &(from, to) in &runs {
                        if !tx.add_upload_piece(id, writer, from, to)? {
                            return Ok(Some(tx.upload(id)?));
                        }
                    }
                    Ok(None)
                })
            })
            .await
        });
        self.counting = Some((to, count));
    }

    /// Waits for the count under way, if any.
    async fn counted(&mut self) -> Result<()> {
        let Some((to, count)) = self.counting.take() else {
            return Ok(());
        };
        let counted = count
            .await
            .map_err(|e| Error::Internal(format!("counting an upload's bytes: {e}")))
            .and_then(|counted| counted);
        let counted = counted.inspect_err(|_| self.count_failed = true)?;
        match counted {
            None => {
                self.row.reached = to;
                Ok(())
            }
            // Another server's request took the upload over meanwhile.
            Some(Some(now)) => Err(Error::WrongOffset {
                offset: now.reached,
            }),
            // Removed meanwhile: what was just written goes too.
            Some(None) => {
                let id = self.row.id;
                let _ = self.me.shared.uploads.parts.remove(id).await;
                Err(no_upload(id))
            }
        }
    }
}

/// Checks a run's chunks against their ids (on a blocking thread) and
/// writes those before the first that is not its id; the whole file's
/// hash goes on through them if every one was.
async fn write_run(
    writer: &mut BytesWriter,
    run: Run,
    whole: Option<WholeHash>,
) -> Result<Written> {
    let Run { from, chunks, .. } = run;
    let (chunks, mismatch, whole) = tokio::task::spawn_blocking(move || {
        let bad = chunks
            .iter()
            .position(|(bytes, id, _)| id.is_some_and(|id| *blake3::hash(bytes).as_bytes() != id));
        let whole = whole.filter(|_| bad.is_none()).and_then(|whole| {
            chunks
                .iter()
                .try_fold(whole, |whole, (bytes, _, _)| whole.add(bytes))
        });
        (chunks, bad, whole)
    })
    .await
    .map_err(|e| Error::Internal(format!("checking an upload's chunks: {e}")))?;
    let good = mismatch.unwrap_or(chunks.len());
    let mut to = from;
    let mut bytes = Vec::with_capacity(good);
    for (chunk, _, _) in &chunks[..good] {
        to += chunk.len() as u64;
        bytes.push(chunk.clone());
    }
    if to > from {
        writer.write(from, to, bytes).await?;
    }
    Ok(Written {
        to,
        mismatch: mismatch.map(|i| (chunks[i].2, to)),
        whole,
    })
}

/// The runs an upload counted that hold its bytes up to `reached`, each as
/// `(start, end, run)`: a run's bytes count up to where the next begins (a
/// run written again after a chunk that was not its id starts earlier than
/// the one it replaces ends).
pub(super) fn held_in(pieces: &[(u64, u64)], reached: u64) -> Vec<(u64, u64, (u64, u64))> {
    pieces
        .iter()
        .enumerate()
        .filter_map(|(i, &(start, stop))| {
            let next = pieces.get(i + 1).map_or(u64::MAX, |p| p.0);
            let end = stop.min(next).min(reached);
            (start < end).then_some((start, end, (start, stop)))
        })
        .collect()
}

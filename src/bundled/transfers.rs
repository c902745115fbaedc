//! Resumable uploads and chunk lists: what a server needs so that a file
//! travels once, in chunks the server lacks, over as many requests as the
//! link allows (`docs/API-transfers.md`).
//!
//! An upload is one participant's, for one target fixed when it begins (a
//! check-out, an edit, an import's path). Its bytes wait in the data
//! folder's `uploads/<id>/` (`meta.json`, the chunk list, and `data`, the
//! chunks to send one after another), each chunk checked against its id as it
//! comes and the whole file against its digest when a check-in (or a stage,
//! an edit's commit, an import) uses it, which goes the usual way from there.
//! It is removed once used, after a day, or when its check-out or edit
//! closes. The server says it has a chunk only when a blob the caller may
//! read holds it: a version or proposal of the very file the upload is for,
//! or bytes staged for its check-out; an import is told of none. Never holds a
//! file in memory: chunk lists, a few buffers and the spool's position only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use futures_util::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

use super::{in_place, off_thread, Bundled};
use crate::backend::Upload;
use crate::chunking::{self, Chunk, Chunked, LISTED_BYTES, MOST_LISTED};
use crate::error::{Error, Result};
use crate::model::*;
use crate::owner_only;
use crate::rules;
use crate::store::{Durability, EditState};

/// How long an unfinished upload is kept.
const UPLOAD_KEPT: chrono::Duration = chrono::Duration::hours(24);
/// Unfinished uploads one participant may have at once.
const MOST_LIVE_EACH: usize = 32;
/// How many of the file's newest versions, and of its proposals, offer
/// their chunks.
const KNOWN_VERSIONS: usize = 8;
const KNOWN_PROPOSALS: usize = 8;
/// How long a used upload stays, so that a request that used it and whose
/// answer was lost can be sent again (a check-in's retry is answered as the
/// first was).
const USED_KEPT: chrono::Duration = chrono::Duration::minutes(10);
/// How often unfinished uploads are looked over.
const SWEEP_UPLOADS_EVERY: chrono::Duration = chrono::Duration::seconds(60);

/// The unfinished uploads of a data folder.
pub(super) struct Uploads {
    root: PathBuf,
    live: std::sync::Mutex<HashMap<UploadId, Arc<Spool>>>,
    /// What the chunk lists in memory may take (see [`Listed`]).
    lists: Arc<tokio::sync::Semaphore>,
    last_swept: std::sync::Mutex<Option<Timestamp>>,
}

/// One upload: what was declared, fixed, and how far it has come. Its
/// chunk list stays on disk but while a request needs it (see [`Listed`]).
struct Spool {
    meta: Meta,
    dir: PathBuf,
    at: tokio::sync::Mutex<At>,
    /// When a request used it, if one did.
    used_at: std::sync::Mutex<Option<Timestamp>>,
}

/// An upload's chunk list, read for a request that needs it: the chunks,
/// and the chunks to send in order (their place in the list, and where
/// their bytes start in `data`). A list may be tens of megabytes, so the
/// lists in memory at once are bounded by [`LISTS_IN_MEMORY`].
struct Listed {
    chunks: Vec<Chunk>,
    order: Vec<(u32, u64)>,
    _budget: tokio::sync::OwnedSemaphorePermit,
}

/// The bytes of chunk lists that requests may hold in memory at once, in
/// units of 64 KiB (each list counted twice its size on disk).
const LISTS_IN_MEMORY: usize = (256 << 20) >> 16;
/// How long a request waits for room for its chunk list before it is told
/// to come back (503): lists held by slow requests never stall the rest.
const LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Room for a chunk list of `bytes` on disk, within [`LIST_WAIT`].
async fn room_for_list(
    budget: &Arc<tokio::sync::Semaphore>,
    bytes: u64,
) -> Result<tokio::sync::OwnedSemaphorePermit> {
    let units = (2 * bytes)
        .div_ceil(1 << 16)
        .clamp(1, LISTS_IN_MEMORY as u64) as u32;
    match tokio::time::timeout(LIST_WAIT, budget.clone().acquire_many_owned(units)).await {
        Ok(Ok(permit)) => Ok(permit),
        Ok(Err(_)) => Err(Error::Internal("the budget of chunk lists closed".into())),
        Err(_) => Err(Error::Unavailable(
            "the server is busy with other uploads' chunk lists: try again shortly".into(),
        )),
    }
}

/// How many bytes of `data` are the upload's, and whether the chunks in them
/// were read back since this process found the spool.
struct At {
    offset: u64,
    checked: bool,
}

#[derive(Serialize, Deserialize)]
struct Meta {
    id: UploadId,
    owner: Participant,
    target: UploadFor,
    size: u64,
    digest: Digest,
    send: Vec<(u64, u64)>,
    length: u64,
    expires_at: Timestamp,
}

/// Where a chunk's bytes are found when the upload is used.
#[derive(Clone, PartialEq, Eq)]
enum Source {
    Spool,
    Blob(Digest),
}

/// A run of the file's bytes from one source.
struct Piece {
    source: Source,
    start: u64,
    end: u64,
}

impl Uploads {
    /// The uploads a previous process left in `root` (made if missing); a
    /// spool that cannot be read is removed.
    pub(super) fn open(root: PathBuf) -> Result<Self> {
        owner_only::create_dir_all(&root)?;
        let mut live = HashMap::new();
        for entry in std::fs::read_dir(&root)? {
            let dir = entry?.path();
            match Spool::load(&dir) {
                Ok(spool) => {
                    live.insert(spool.meta.id, Arc::new(spool));
                }
                Err(e) => {
                    tracing::warn!("an unreadable upload is removed ({}): {e}", dir.display());
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
        }
        Ok(Self {
            root,
            live: std::sync::Mutex::new(live),
            lists: Arc::new(tokio::sync::Semaphore::new(LISTS_IN_MEMORY)),
            last_swept: Default::default(),
        })
    }

    /// The upload `id`: one this process knows, or one another process
    /// sharing the data folder began since (read from its spool).
    fn get(&self, id: UploadId) -> Option<Arc<Spool>> {
        if let Some(spool) = self.live.lock().expect("uploads").get(&id) {
            return Some(spool.clone());
        }
        let spool = Arc::new(Spool::load(&self.root.join(id.to_string())).ok()?);
        let mut live = self.live.lock().expect("uploads");
        Some(live.entry(id).or_insert(spool).clone())
    }

    fn remove(&self, id: UploadId) {
        let spool = self.live.lock().expect("uploads").remove(&id);
        if let Some(spool) = spool {
            if let Err(e) = std::fs::remove_dir_all(&spool.dir) {
                tracing::warn!("upload {id} stays on disk until the next start: {e}");
            }
        }
    }
}

impl Listed {
    /// The place in `order` of the chunk the byte `offset` falls in.
    fn chunk_at(&self, offset: u64) -> usize {
        self.order.partition_point(|&(_, start)| start <= offset) - 1
    }

    fn chunk(&self, k: usize) -> Chunk {
        self.chunks[self.order[k].0 as usize]
    }
}

impl Spool {
    fn load(dir: &Path) -> Result<Self> {
        let meta: Meta = serde_json::from_slice(&std::fs::read(dir.join("meta.json"))?)
            .map_err(|e| Error::Internal(format!("meta.json: {e}")))?;
        let listed = std::fs::metadata(dir.join("chunks"))?.len();
        if listed % LISTED_BYTES as u64 != 0 || listed / LISTED_BYTES as u64 > MOST_LISTED {
            return Err(Error::Internal("its chunk list is damaged".into()));
        }
        let offset = std::fs::metadata(dir.join("data"))?.len();
        Ok(Self::new(meta, dir.to_owned(), offset, false))
    }

    fn new(meta: Meta, dir: PathBuf, offset: u64, checked: bool) -> Self {
        Self {
            meta,
            dir,
            at: tokio::sync::Mutex::new(At { offset, checked }),
            used_at: Default::default(),
        }
    }

    /// Reads the chunk list, once the budget for lists in memory allows.
    async fn listed(self: &Arc<Self>, budget: &Arc<tokio::sync::Semaphore>) -> Result<Listed> {
        let bytes = tokio::fs::metadata(self.dir.join("chunks")).await?.len();
        let permit = room_for_list(budget, bytes).await?;
        let spool = self.clone();
        let list = off_thread(move || {
            let bytes = std::fs::read(spool.dir.join("chunks"))?;
            Chunked::decode_list(spool.meta.digest.clone(), Some(spool.meta.size), &bytes)
                .map_err(|e| Error::Internal(format!("upload {}'s chunk list: {e}", spool.meta.id)))
        })
        .await?;
        let mut order = Vec::new();
        let mut start = 0u64;
        for &(first, end) in &self.meta.send {
            for index in first..end {
                let chunk = list.chunks.get(index as usize).ok_or_else(|| {
                    Error::Internal(format!(
                        "upload {}'s list is shorter than its runs",
                        self.meta.id
                    ))
                })?;
                order.push((index as u32, start));
                start += u64::from(chunk.size);
            }
        }
        Ok(Listed {
            chunks: list.chunks,
            order,
            _budget: permit,
        })
    }

    fn state(&self, offset: u64) -> UploadState {
        UploadState {
            id: self.meta.id,
            size: self.meta.size,
            digest: self.meta.digest.clone(),
            send: self.meta.send.clone(),
            length: self.meta.length,
            offset,
            expires_at: self.meta.expires_at,
        }
    }

    fn used_at(&self) -> Option<Timestamp> {
        *self.used_at.lock().expect("used_at")
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// After a restart, reads back the bytes kept: every whole chunk must be
    /// its id (a power cut may have left the last writes unsaved); the first
    /// that is not, and all after it, are dropped. Blocking.
    fn check_kept(&self, listed: &Listed, at: &mut At) -> Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(self.data())?;
        let mut good = 0u64;
        let mut buf = vec![0u8; chunking::MAX_CHUNK as usize];
        for k in 0..listed.order.len() {
            let chunk = listed.chunk(k);
            let end = good + u64::from(chunk.size);
            if end > at.offset {
                break; // a part of a chunk, unchecked: sent again
            }
            let bytes = &mut buf[..chunk.size as usize];
            std::io::Read::read_exact(&mut file, bytes)?;
            if blake3::hash(bytes) != chunk.id {
                break;
            }
            good = end;
        }
        if good < at.offset {
            file.set_len(good)?;
            file.sync_all()?;
        }
        at.offset = good;
        at.checked = true;
        Ok(())
    }

    /// Appends the body's bytes at `at.offset`, each chunk checked as it
    /// completes; what came is kept (and made durable) whatever ends the body.
    async fn append(
        &self,
        listed: &Listed,
        at: &mut At,
        body: &mut (impl AsyncRead + Unpin),
    ) -> Result<()> {
        let mut file = tokio::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(self.data())
            .await?;
        if listed.order.is_empty() {
            // Nothing to send: the server had every chunk.
            let mut byte = [0u8; 1];
            return match body.read(&mut byte).await {
                Ok(0) => Ok(()),
                _ => Err(Error::Invalid(
                    "the upload takes no bytes: the server has them all".into(),
                )),
            };
        }
        let mut k = listed.chunk_at(at.offset.min(self.meta.length.saturating_sub(1)));
        let mut hasher = blake3::Hasher::new();
        // The part of the current chunk that came before, hashed again.
        let chunk_start = listed.order.get(k).map_or(at.offset, |&(_, s)| s);
        if chunk_start < at.offset {
            let mut part = vec![0u8; (at.offset - chunk_start) as usize];
            file.seek(std::io::SeekFrom::Start(chunk_start)).await?;
            file.read_exact(&mut part).await?;
            hasher.update(&part);
        }
        file.seek(std::io::SeekFrom::Start(at.offset)).await?;
        let mut buf = vec![0u8; 1 << 20];
        let outcome: Result<()> = async {
            loop {
                // Up to a buffer at a time, so the file takes few writes;
                // what came before a cut is kept like the rest.
                let mut filled = 0;
                let mut stopped = None;
                while filled < buf.len() {
                    match body.read(&mut buf[filled..]).await {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) => {
                            stopped = Some(Error::BadRequest(format!(
                                "the body stopped at byte {}: {e}",
                                at.offset + filled as u64
                            )));
                            break;
                        }
                    }
                }
                let room = (self.meta.length - at.offset) as usize;
                let piece = &buf[..filled.min(room)];
                // Written first, then checked chunk by chunk: a chunk that is
                // not its id is cut off again, with all after it.
                if let Err(e) = file.write_all(piece).await {
                    file.set_len(at.offset).await?;
                    return Err(e.into());
                }
                let mut rest = piece;
                while !rest.is_empty() {
                    let (index, start) = listed.order[k];
                    let chunk = listed.chunk(k);
                    let end = start + u64::from(chunk.size);
                    let take = ((end - at.offset) as usize).min(rest.len());
                    hasher.update(&rest[..take]);
                    at.offset += take as u64;
                    rest = &rest[take..];
                    if at.offset == end {
                        if hasher.finalize() != chunk.id {
                            file.set_len(start).await?;
                            at.offset = start;
                            return Err(Error::ChunkMismatch {
                                index: u64::from(index),
                                offset: start,
                            });
                        }
                        hasher = blake3::Hasher::new();
                        k += 1;
                    }
                }
                if filled > room {
                    return Err(Error::Invalid(format!(
                        "the body goes past the upload's {} bytes",
                        self.meta.length
                    )));
                }
                if let Some(stopped) = stopped {
                    return Err(stopped);
                }
                if filled < buf.len() {
                    return Ok(());
                }
            }
        }
        .await;
        file.sync_all().await?;
        outcome
    }

    /// The file's bytes, chunk by chunk, as runs from the spool or from the
    /// blobs that `known` says hold them.
    fn pieces(&self, listed: &Listed, known: &Known) -> Result<Vec<Piece>> {
        let sent: HashMap<blake3::Hash, u64> = listed
            .order
            .iter()
            .map(|&(index, start)| (listed.chunks[index as usize].id, start))
            .collect();
        let mut pieces: Vec<Piece> = Vec::new();
        for chunk in &listed.chunks {
            let (source, start) = match (sent.get(&chunk.id), known.get(&chunk.id)) {
                (Some(&start), _) => (Source::Spool, start),
                (None, Some((digest, start, size))) if *size == chunk.size => {
                    (Source::Blob(digest.clone()), *start)
                }
                // Pushed out of what it may use since it began (newer
                // versions, a new stage): the client begins again.
                _ => {
                    return Err(Error::NotFound(format!(
                    "no upload {}: chunks it counted on are no longer the file's; begin a new one",
                    self.meta.id
                )))
                }
            };
            let end = start + u64::from(chunk.size);
            match pieces.last_mut() {
                Some(last) if last.source == source && last.end == start => last.end = end,
                _ => pieces.push(Piece { source, start, end }),
            }
        }
        Ok(pieces)
    }
}

/// The runs of places in `chunks` whose ids `known` lacks, each id once.
/// Refuses a list that names one chunk id with two sizes, or a chunk the
/// server has with another size than it has: its bytes could not be its id.
fn to_send(chunks: &[Chunk], known: &Known) -> Result<Vec<(u64, u64)>> {
    let mut seen: HashMap<blake3::Hash, u32> = HashMap::new();
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let size = known.get(&chunk.id).map(|k| k.2);
        let size = size.or_else(|| seen.get(&chunk.id).copied());
        if size.is_some_and(|size| size != chunk.size) {
            return Err(Error::Invalid(format!(
                "chunk {i} is {} bytes, but its id is of {} bytes",
                chunk.size,
                size.unwrap_or_default()
            )));
        }
        let i = i as u64;
        if known.contains_key(&chunk.id) || seen.insert(chunk.id, chunk.size).is_some() {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.1 == i => run.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    Ok(runs)
}

/// Each chunk the caller may be told the server has: the blob, the offset
/// and the size of a copy of it.
type Known = HashMap<blake3::Hash, (Digest, u64, u32)>;

impl Bundled {
    /// Begins a resumable upload of a file of `size` bytes and `digest`
    /// for `target`, whose chunk list `list` reads (`chunking`'s kept form).
    /// The answer says which chunks to send: those no blob the caller may
    /// read for this file has.
    pub async fn begin_upload(
        &self,
        target: UploadFor,
        size: u64,
        digest: Digest,
        list: &mut (impl AsyncRead + Unpin + Send),
    ) -> Result<UploadState> {
        let limit = self.shared.options.max_upload;
        if size > limit {
            return Err(Error::TooLarge { limit });
        }
        let most = chunking::most_chunks(size);
        let mut bytes = Vec::new();
        let cap = most.min(MOST_LISTED) * LISTED_BYTES as u64;
        let _budget = room_for_list(&self.shared.uploads.lists, cap).await?;
        list.take(cap + 1)
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| Error::BadRequest(format!("the chunk list did not arrive: {e}")))?;
        if bytes.len() as u64 > cap {
            return Err(Error::Invalid(format!(
                "the chunk list is longer than {} entries: more than a file of {size} bytes \
                 has{}",
                cap / LISTED_BYTES as u64,
                if most > MOST_LISTED {
                    "; send a file this large in one request"
                } else {
                    ""
                }
            )));
        }
        let list = Chunked::decode_list(digest.clone(), Some(size), &bytes)?;
        drop(bytes);
        let known = self.known_chunks(&target, true).await?;
        let mine = {
            let live = self.shared.uploads.live.lock().expect("uploads");
            live.values()
                .filter(|s| s.meta.owner == self.participant && s.used_at().is_none())
                .count()
        };
        if mine >= MOST_LIVE_EACH {
            return Err(Error::TooMany(format!(
                "you have {mine} unfinished uploads: finish or cancel one first"
            )));
        }
        let send = to_send(&list.chunks, &known)?;
        let length = send
            .iter()
            .flat_map(|&(first, end)| first..end)
            .map(|i| u64::from(list.chunks[i as usize].size))
            .sum();
        let id = UploadId::new();
        let meta = Meta {
            id,
            owner: self.participant.clone(),
            target,
            size,
            digest,
            send,
            length,
            expires_at: self.clock().now() + UPLOAD_KEPT,
        };
        let dir = self.shared.uploads.root.join(id.to_string());
        let kept = list.encode_list();
        let written = {
            let (dir, meta_json) = (
                dir.clone(),
                serde_json::to_vec(&meta).map_err(|e| Error::Internal(e.to_string()))?,
            );
            off_thread(move || {
                owner_only::create_dir_all(&dir)?;
                for (name, bytes) in [
                    ("chunks", &kept[..]),
                    ("data", &[][..]),
                    ("meta.json", &meta_json[..]),
                ] {
                    let mut file = std::fs::File::create(dir.join(name))?;
                    std::io::Write::write_all(&mut file, bytes)?;
                    file.sync_all()?;
                }
                Ok(())
            })
            .await
        };
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        let spool = Arc::new(Spool::new(meta, dir, 0, true));
        let state = spool.state(0);
        self.shared
            .uploads
            .live
            .lock()
            .expect("uploads")
            .insert(id, spool);
        Ok(state)
    }

    /// An upload of the caller's and how far it has come.
    pub async fn upload_state(&self, id: UploadId) -> Result<UploadState> {
        let spool = self.own_upload(id)?;
        let mut at = spool.at.lock().await;
        if !at.checked {
            let listed = self.listed(&spool).await?;
            self.check_kept(&spool, &mut at, listed).await?;
        }
        Ok(spool.state(at.offset))
    }

    /// What [`Bundled::append_upload`] checks before it reads a byte: the
    /// upload is the caller's, its target open, and `offset` where it is.
    pub async fn may_append(&self, id: UploadId, offset: u64) -> Result<()> {
        let spool = self.own_upload(id)?;
        self.target_open(&spool.meta.target).await?;
        let at = spool.at.lock().await;
        if at.checked && offset != at.offset {
            return Err(Error::WrongOffset { offset: at.offset });
        }
        Ok(())
    }

    /// Appends `body` to an upload at `offset`, which must be where it is.
    /// Refused once its check-out or edit closed (and then removed).
    pub async fn append_upload(
        &self,
        id: UploadId,
        offset: u64,
        mut body: impl AsyncRead + Unpin + Send,
    ) -> Result<UploadState> {
        let spool = self.own_upload(id)?;
        if let Err(e) = self.target_open(&spool.meta.target).await {
            if matches!(e, Error::CheckoutClosed(_) | Error::NotFound(_)) {
                self.shared.uploads.remove(id);
            }
            return Err(e);
        }
        let mut at = spool.at.lock().await;
        let listed = self.listed(&spool).await?;
        let listed = self.check_kept(&spool, &mut at, listed).await?;
        if offset != at.offset {
            return Err(Error::WrongOffset { offset: at.offset });
        }
        spool.append(&listed, &mut at, &mut body).await?;
        Ok(spool.state(at.offset))
    }

    /// Removes an upload of the caller's.
    pub async fn cancel_upload(&self, id: UploadId) -> Result<()> {
        self.own_upload(id)?;
        self.shared.uploads.remove(id);
        Ok(())
    }

    /// A whole upload's bytes for `target` (which must be the one it was
    /// begun for), read from its spool and the blobs that hold its other
    /// chunks, with its declared digest: the check-in (or stage, commit,
    /// import) that takes them checks the whole file as it reads. Call
    /// [`Bundled::upload_used`] once that succeeded.
    pub async fn finished_upload(&self, id: UploadId, target: &UploadFor) -> Result<Upload> {
        let spool = self.own_upload(id)?;
        if spool.meta.target != *target {
            return Err(Error::Invalid(format!(
                "upload {id} was begun for something else: begin one for this"
            )));
        }
        let listed = {
            let mut at = spool.at.lock().await;
            let listed = self.listed(&spool).await?;
            let listed = self.check_kept(&spool, &mut at, listed).await?;
            if at.offset < spool.meta.length {
                return Err(Error::UploadIncomplete {
                    offset: at.offset,
                    length: spool.meta.length,
                });
            }
            listed
        };
        // A closed check-out is left to the write's rules: a retry of a
        // check-in whose answer was lost is answered as the first was.
        let known = self.known_chunks(target, false).await?;
        let pieces = spool.pieces(&listed, &known)?;
        drop(listed);
        let blobs = self.shared.blobs.clone();
        let data = spool.data();
        let stream = futures_util::stream::iter(pieces)
            .then(move |piece| {
                let (blobs, data) = (blobs.clone(), data.clone());
                async move {
                    let reader: Pin<Box<dyn AsyncRead + Send>> = match &piece.source {
                        Source::Blob(digest) => {
                            blobs.open_range(digest, piece.start..piece.end).await?
                        }
                        Source::Spool => {
                            let mut file = tokio::fs::File::open(&data).await?;
                            file.seek(std::io::SeekFrom::Start(piece.start)).await?;
                            Box::pin(file.take(piece.end - piece.start))
                        }
                    };
                    Ok::<_, Error>(tokio_util::io::ReaderStream::with_capacity(reader, 1 << 20))
                }
            })
            .map_err(std::io::Error::other)
            .try_flatten();
        let reader = tokio_util::io::StreamReader::new(stream);
        Ok(Upload::stream(reader).with_digest(spool.meta.digest.clone()))
    }

    /// After the write that used an upload: its chunk list is kept for its
    /// blob (the next transfer of the file needs no new one), and it is
    /// removed in a few minutes (see [`USED_KEPT`]).
    pub async fn upload_used(&self, id: UploadId) {
        let Some(spool) = self.shared.uploads.get(id) else {
            return;
        };
        let kept = match self.listed(&spool).await {
            Ok(listed) => {
                let list = Chunked {
                    digest: spool.meta.digest.clone(),
                    size: spool.meta.size,
                    chunks: listed.chunks,
                };
                self.keep_chunk_list(&list).await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = kept {
            tracing::warn!("upload {id}'s chunk list is made again when needed: {e}");
        }
        spool
            .used_at
            .lock()
            .expect("used_at")
            .get_or_insert(self.clock().now());
    }

    /// The chunk list of a version of an artifact the caller may read (the
    /// head's when `version` is `None`), made the first time it is asked for.
    pub async fn version_chunks(&self, id: ArtifactId, version: Option<u64>) -> Result<Chunked> {
        let head = self
            .read(move |tx, me, _| rules::version_head(tx, me, id, version))
            .await?;
        self.chunk_list(&head.digest, head.size).await
    }

    /// A blob's kept chunk list, if one was made.
    async fn kept_chunk_list(&self, digest: &Digest, size: u64) -> Result<Option<Chunked>> {
        let shared = self.shared.clone();
        let wanted = digest.clone();
        let kept = in_place(move || shared.store.read(|tx| tx.chunk_list(&wanted))).await?;
        kept.map(|kept| {
            Chunked::decode_list(digest.clone(), Some(size), &kept)
                .map_err(|e| Error::Internal(format!("the kept chunk list of {digest}: {e}")))
        })
        .transpose()
    }

    /// A blob's chunk list: the kept one, or made now from its bytes and kept.
    async fn chunk_list(&self, digest: &Digest, size: u64) -> Result<Chunked> {
        if let Some(kept) = self.kept_chunk_list(digest, size).await? {
            return Ok(kept);
        }
        let local = self.shared.blobs.local_file(digest).await?;
        let path = local.path().to_owned();
        let list =
            off_thread(move || chunking::chunk_file(&crate::local_file::open_to_read(&path)?))
                .await?;
        drop(local);
        if list.digest != *digest {
            return Err(Error::Internal(format!(
                "blob {digest} reads as {}: it is damaged",
                list.digest
            )));
        }
        self.keep_chunk_list(&list).await?;
        Ok(list)
    }

    async fn keep_chunk_list(&self, list: &Chunked) -> Result<()> {
        let shared = self.shared.clone();
        let (digest, kept) = (list.digest.clone(), list.encode_list());
        in_place(move || {
            shared
                .store
                .write(Durability::Normal, |tx| tx.put_chunk_list(&digest, &kept))
        })
        .await
    }

    /// Every chunk the caller may be told the server has for `target`, with
    /// the blob and offset that hold it: those of the file's newest versions
    /// and proposals and of the check-out's staged bytes. Refuses a target
    /// the caller may not write (or that closed) as its use would.
    async fn known_chunks(&self, target: &UploadFor, refuse_closed: bool) -> Result<Known> {
        let target = target.clone();
        let blobs = self
            .read(move |tx, me, _| {
                let (artifact, staged) = match &target {
                    UploadFor::Import(path) => {
                        rules::import_precheck(tx, me, path)?;
                        return Ok(Vec::new());
                    }
                    UploadFor::Checkout(id) => {
                        let (row, _) = rules::checkin_precheck(tx, me, *id)?;
                        if refuse_closed && row.checkout.state == CheckoutState::Closed {
                            return Err(closed_checkout(*id));
                        }
                        (row.checkout.artifact_id, row.staged)
                    }
                    UploadFor::Edit(id) => {
                        let (row, _) = rules::edit_precheck(tx, me, *id)?;
                        if refuse_closed && row.state != EditState::Open {
                            return Err(Error::CheckoutClosed(format!("edit {id} has ended")));
                        }
                        (row.edit.artifact_id, None)
                    }
                };
                // Only the head's list (and the staged bytes') is made now if
                // it is not kept yet: the others are offered if kept, so that
                // a file's first chunked check-in reads one blob, not sixteen.
                let mut blobs: Vec<(Digest, u64, bool)> = tx
                    .versions(artifact)?
                    .into_iter()
                    .take(KNOWN_VERSIONS)
                    .enumerate()
                    .map(|(i, (head, _))| (head.digest, head.size, i == 0))
                    .collect();
                let filter = ProposalFilter {
                    artifact: Some(artifact),
                    state: None,
                };
                let mut proposals = tx.proposals(&filter)?;
                proposals.sort_by_key(|p| std::cmp::Reverse(p.created_at));
                blobs.extend(
                    proposals
                        .into_iter()
                        .take(KNOWN_PROPOSALS)
                        .map(|p| (p.digest, p.size, false)),
                );
                blobs.extend(staged.map(|s| (s.digest, s.size, true)));
                Ok(blobs)
            })
            .await?;
        let mut known = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for (digest, size, make) in blobs {
            if size == 0 || !seen.insert(digest.clone()) {
                continue;
            }
            let list = match make {
                true => self.chunk_list(&digest, size).await?,
                false => match self.kept_chunk_list(&digest, size).await? {
                    Some(list) => list,
                    None => continue,
                },
            };
            for (start, chunk) in list.offsets() {
                known
                    .entry(chunk.id)
                    .or_insert_with(|| (digest.clone(), start, chunk.size));
            }
        }
        Ok(known)
    }

    /// Refuses an upload's target that closed or that the caller may no
    /// longer write.
    async fn target_open(&self, target: &UploadFor) -> Result<()> {
        let target = target.clone();
        self.read(move |tx, me, _| match &target {
            UploadFor::Import(_) => Ok(()),
            UploadFor::Checkout(id) => {
                let (row, _) = rules::checkin_precheck(tx, me, *id)?;
                if row.checkout.state == CheckoutState::Closed {
                    return Err(closed_checkout(*id));
                }
                Ok(())
            }
            UploadFor::Edit(id) => {
                let (row, _) = rules::edit_precheck(tx, me, *id)?;
                if row.state != EditState::Open {
                    return Err(Error::CheckoutClosed(format!("edit {id} has ended")));
                }
                Ok(())
            }
        })
        .await
    }

    /// The caller's upload `id`; another's is as unknown as one that never was.
    fn own_upload(&self, id: UploadId) -> Result<Arc<Spool>> {
        self.shared
            .uploads
            .get(id)
            .filter(|s| s.meta.owner == self.participant)
            .ok_or_else(|| Error::NotFound(format!("no upload {id}: begin a new one")))
    }

    /// [`Spool::check_kept`] if it was not yet, off the thread; the list back.
    async fn check_kept(&self, spool: &Arc<Spool>, at: &mut At, listed: Listed) -> Result<Listed> {
        if at.checked {
            return Ok(listed);
        }
        let (spool, mut here) = (
            spool.clone(),
            At {
                offset: at.offset,
                checked: false,
            },
        );
        let (here, listed) = off_thread(move || {
            spool
                .check_kept(&listed, &mut here)
                .map(|()| (here, listed))
        })
        .await?;
        *at = here;
        Ok(listed)
    }

    /// The upload's chunk list, within the budget of lists in memory.
    async fn listed(&self, spool: &Arc<Spool>) -> Result<Listed> {
        spool.listed(&self.shared.uploads.lists).await
    }

    /// Removes the uploads that lapsed or whose check-out or edit closed;
    /// at most once a minute (by the store's clock). Blocking.
    pub(super) fn sweep_uploads(&self) -> Result<()> {
        let uploads = &self.shared.uploads;
        let now = self.clock().now();
        {
            let mut last = uploads.last_swept.lock().expect("uploads");
            if last.is_some_and(|at| now - at < SWEEP_UPLOADS_EVERY) {
                return Ok(());
            }
            *last = Some(now);
        }
        let spools: Vec<Arc<Spool>> = uploads
            .live
            .lock()
            .expect("uploads")
            .values()
            .cloned()
            .collect();
        for spool in spools {
            let over = match spool.used_at() {
                Some(used) => used + USED_KEPT <= now,
                None => false,
            } || spool.meta.expires_at <= now
                || spool.used_at().is_none()
                    && self.shared.store.read(|tx| {
                        Ok(match &spool.meta.target {
                            UploadFor::Import(_) => false,
                            UploadFor::Checkout(id) => tx
                                .checkout(*id)?
                                .is_none_or(|row| row.checkout.state == CheckoutState::Closed),
                            UploadFor::Edit(id) => {
                                tx.edit(*id)?.is_none_or(|row| row.state != EditState::Open)
                            }
                        })
                    })?;
            if over {
                uploads.remove(spool.meta.id);
            }
        }
        Ok(())
    }
}

fn closed_checkout(id: CheckoutId) -> Error {
    Error::CheckoutClosed(format!(
        "check-out {id} is closed: its upload was removed; check the file out again"
    ))
}

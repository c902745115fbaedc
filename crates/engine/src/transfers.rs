//! Resumable uploads and chunk lists: what a server needs so that a file
//! travels once, in chunks the server lacks, over as many requests as the
//! link allows (`docs/API-transfers.md`).
//!
//! An upload is one participant's, for one target fixed when it begins (a
//! check-out, an edit, an import's path). Its row (`store::uploads`) says
//! what was declared and how far it has come, so every server of the store
//! resumes it; its chunk list and the bytes that came are parts beside the
//! blobs (`blobs::parts`), each part a run of whole chunks checked against
//! their ids, counted only once it is written. An upload begun without a
//! list sends the whole file, in pieces checked only by its digest, and
//! its blob's list is made once it is used. The whole file is checked
//! against its digest as it arrives (one request writing it whole, in
//! order) or else when a check-in (or a stage, an edit's commit, an
//! import) uses it, which goes the usual way from there. It is removed once
//! used, after a day, or when its check-out or edit closes. The server says
//! it has a chunk only when a blob the caller may read holds it: a version
//! or proposal of the very file the upload is for, or bytes staged for its
//! check-out; an import is told of none.
//!
//! Never holds a file in memory, and holds chunk lists only within the room
//! of [`room`]: taken as a list arrives, and for what is made from it.

mod appending;
mod arriving;
mod lists;
mod plan;
mod room;
mod sweep;
mod turns;
mod upload_row;
mod using;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::{in_place, off_thread, Bundled};
use crate::backend::Upload;
use crate::blobs::UploadParts;
use crate::chunking::{self, Chunk, Chunked, AVG_CHUNK, LISTED_BYTES, MOST_LISTED};
use crate::error::{Error, Result};
use crate::model::*;
use crate::owner_only;
use crate::rules;
use crate::store::{Durability, EditState, UploadRow};
use appending::{held_in, Appending};
use plan::{ById, Found, Sources};
use room::{Held, Room};
use turns::{Turn, Turns};
use upload_row::UploadRowReading;

/// How long an unfinished upload is kept.
const UPLOAD_KEPT: chrono::Duration = chrono::Duration::hours(24);
/// Unfinished uploads one participant may have at once.
const MOST_OPEN_EACH: u64 = 32;
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
/// Parts no row names are removed once this old: a begin writes its list
/// before its row, an append its part before counting it.
const ORPHAN_PARTS_AFTER: Duration = Duration::from_secs(3600);
/// A chunk list arrives within this, plus a second for each [`LIST_RATE`]
/// bytes it may be: a list trickled in is dropped, whatever its rate.
const LIST_GRACE: Duration = Duration::from_secs(20);
const LIST_RATE: u64 = 256 << 10;
/// How long a begin whose list came waits for room to read it.
const LIST_ROOM_WAIT: Duration = Duration::from_secs(20);
/// Lists one participant may be sending at once.
const MOST_ARRIVING_EACH: usize = 8;
/// The longest `Idempotency-Key` a begin may send.
const MOST_KEY: usize = 128;
/// What a run of a finished upload's bytes takes while it is read (a chunk
/// may be a run of its own).
const RUN_BYTES: u64 = 24;
/// The part holding an upload's chunk list.
const LIST_PART: &str = "chunks";
/// How many uploads' digests as they arrived are kept (the newest).
const MOST_ARRIVED: usize = 256;

/// The unfinished uploads of a server: where their parts are, the room
/// their chunk lists take in memory, and whose turn it is at each.
pub(super) struct Uploads {
    parts: UploadParts,
    /// Where chunk lists wait as they arrive, and how many each sends.
    spool: PathBuf,
    arriving: std::sync::Mutex<HashMap<Participant, Arc<tokio::sync::Semaphore>>>,
    room: Room,
    turns: Turns,
    last_swept: std::sync::Mutex<Option<Timestamp>>,
    /// The digests of the newest uploads one request wrote whole, in
    /// order, into a spool: hashed as they arrived, not read again.
    arrived: std::sync::Mutex<VecDeque<(UploadId, Digest)>>,
    /// The blobs whose chunk lists are being made, each with its turn.
    making: std::sync::Mutex<HashMap<Digest, Arc<tokio::sync::Mutex<()>>>>,
    /// The turn to make a used upload's list off its request.
    background_lists: Arc<tokio::sync::Semaphore>,
}

impl Uploads {
    pub(super) fn new(parts: UploadParts, spool: PathBuf) -> Self {
        Self {
            parts,
            spool,
            arriving: Default::default(),
            room: Room::new(),
            turns: Turns::default(),
            last_swept: Default::default(),
            arrived: Default::default(),
            making: Default::default(),
            background_lists: Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }

    /// The turn to make a chunk list off a request, if it is free.
    fn background_list(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.background_lists.clone().try_acquire_owned().ok()
    }

    /// The turn to make blob `digest`'s chunk list. Turns no one holds or
    /// waits for are dropped as others are handed out.
    fn making(&self, digest: &Digest) -> Arc<tokio::sync::Mutex<()>> {
        let mut making = self.making.lock().unwrap_or_else(|p| p.into_inner());
        making.retain(|_, turn| Arc::strong_count(turn) > 1);
        making.entry(digest.clone()).or_default().clone()
    }

    /// Keeps the digest upload `id`'s spool hashed to as it was written.
    fn arrived(&self, id: UploadId, digest: Digest) {
        let mut arrived = self.arrived.lock().unwrap_or_else(|p| p.into_inner());
        arrived.retain(|(old, _)| *old != id);
        if arrived.len() == MOST_ARRIVED {
            arrived.pop_front();
        }
        arrived.push_back((id, digest));
    }

    /// The digest upload `id`'s spool hashed to as it was written, if kept.
    fn arrived_as(&self, id: UploadId) -> Option<Digest> {
        let arrived = self.arrived.lock().unwrap_or_else(|p| p.into_inner());
        arrived
            .iter()
            .find(|(old, _)| *old == id)
            .map(|(_, d)| d.clone())
    }
}

/// Checks a begin's `Idempotency-Key`: 1 to 128 visible ASCII characters.
pub fn check_upload_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > MOST_KEY || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::Invalid(format!(
            "an Idempotency-Key is 1 to {MOST_KEY} visible ASCII characters"
        )));
    }
    Ok(())
}

/// What an append checks an upload's bytes against, piece by piece.
enum ToSend {
    /// The chunks to send, in order, with where each starts in the
    /// upload's bytes: each checked against its id as it completes.
    Listed {
        chunks: Vec<Chunk>,
        starts: Vec<u64>,
        _room: Held,
    },
    /// An unlisted upload's bytes, the whole file: pieces of
    /// [`UNLISTED_PIECE`] bytes, checked only against the file's digest.
    Unlisted { size: u64 },
}

/// The pieces an unlisted upload's bytes are written and counted in.
const UNLISTED_PIECE: u64 = 256 << 10;

impl ToSend {
    /// The position of the piece the byte `offset` falls in.
    fn chunk_at(&self, offset: u64) -> usize {
        match self {
            Self::Listed { starts, .. } => starts.partition_point(|&start| start <= offset) - 1,
            Self::Unlisted { .. } => (offset / UNLISTED_PIECE) as usize,
        }
    }

    /// Where the piece at position `k` starts, its size, and the id its
    /// bytes must have, if any.
    fn piece(&self, k: usize) -> (u64, u64, Option<[u8; 32]>) {
        match self {
            Self::Listed { chunks, starts, .. } => (
                starts[k],
                u64::from(chunks[k].size),
                Some(*chunks[k].id.as_bytes()),
            ),
            Self::Unlisted { size } => {
                let start = k as u64 * UNLISTED_PIECE;
                (start, UNLISTED_PIECE.min(size - start), None)
            }
        }
    }
}

impl Bundled {
    /// Begins a resumable upload of a file of `size` bytes and `digest`
    /// for `target`, whose chunk list `list` reads (`chunking`'s kept form).
    /// The answer says which chunks to send: those no blob the caller may
    /// read for this file has. With `key` (its `Idempotency-Key`), a begin
    /// sent again answers the upload the first one began.
    pub async fn begin_upload(
        &self,
        target: UploadFor,
        size: u64,
        digest: Digest,
        key: Option<String>,
        list: &mut (impl AsyncRead + Unpin + Send),
    ) -> Result<UploadState> {
        let limit = self.shared.options.max_upload;
        if size > limit {
            return Err(Error::TooLarge { limit });
        }
        if let Some(key) = &key {
            check_upload_key(key)?;
            let (me, wanted) = (self.participant.clone(), key.clone());
            let begun = self
                .read(move |tx, _, _| tx.upload_by_key(&me, &wanted))
                .await?;
            if let Some(begun) = begun {
                let mut state = same_begin(&begun, &target, size, &digest)?;
                if begun.is_unlisted() {
                    state.known = Some(self.known_bytes(&target).await?);
                }
                return Ok(state);
            }
        }
        let most = chunking::most_chunks(size).min(MOST_LISTED);
        let cap = most * LISTED_BYTES as u64;
        let uploads = &self.shared.uploads;
        let arriving = uploads.receive_list(&self.participant, list, cap).await?;
        if arriving.len == 0 && size > 0 {
            drop(arriving);
            return self.begin_unlisted(target, size, digest, key).await;
        }
        if arriving.len > cap {
            return Err(Error::Invalid(format!(
                "the chunk list is longer than {most} entries: more than a file of {size} bytes \
                 has{}",
                if chunking::most_chunks(size) > MOST_LISTED {
                    "; begin an upload of a file this large without a list"
                } else {
                    ""
                }
            )));
        }
        // Room, all at once now that the list's length is known, for it,
        // what it decodes to, its index, and the lists of the blobs that
        // may have its chunks (one at a time).
        let n = (arriving.len / LISTED_BYTES as u64) as usize;
        let blobs = self.known_blobs(&target, true).await?;
        let held = uploads
            .room
            .take_within(
                &self.participant,
                2 * arriving.len + ById::bytes(n) + n as u64 + known_bound(&blobs),
                LIST_ROOM_WAIT,
            )
            .await?;
        let raw = tokio::fs::read(&arriving.path).await?;
        drop(arriving);
        let chunks = Chunked::decode_list(digest.clone(), Some(size), &raw)?.chunks;
        let by_id = ById::new(&chunks);
        let mut known = vec![false; n];
        for (blob, blob_size, make) in blobs {
            if let Some(kept) = self.kept_list_bytes(&blob, blob_size, make).await? {
                plan::mark_known(&chunks, &by_id, &kept, &mut known)?;
            }
        }
        let send = plan::to_send(&chunks, &by_id, &known)?;
        let length = send
            .iter()
            .flat_map(|&(first, end)| first..end)
            .map(|i| u64::from(chunks[i as usize].size))
            .sum();
        // The runs' last end must be the list's length: `list_len` says so.
        let send = with_list_end(send, n as u64);
        drop((chunks, by_id, known));
        let row = self.new_upload_row(target, size, digest, key, send, length);
        let parts = &self.shared.uploads.parts;
        parts.put(row.id, LIST_PART, vec![Bytes::from(raw)]).await?;
        drop(held);
        self.insert_upload(row).await
    }

    /// Begins an upload sent without a chunk list: every byte of the file,
    /// in order, checked against its digest when it is used. Its answer
    /// says how many bytes a list would have been matched against.
    async fn begin_unlisted(
        &self,
        target: UploadFor,
        size: u64,
        digest: Digest,
        key: Option<String>,
    ) -> Result<UploadState> {
        let known = self.known_bytes(&target).await?;
        let row = self.new_upload_row(target, size, digest, key, Vec::new(), size);
        let mut state = self.insert_upload(row).await?;
        state.known = Some(known);
        Ok(state)
    }

    /// The bytes a begin with a list would match its chunks against: the
    /// sizes of the blobs of [`Bundled::known_blobs`] that have a list or
    /// would get one. Refuses a target as a begin would.
    async fn known_bytes(&self, target: &UploadFor) -> Result<u64> {
        let mut known = 0;
        for (blob, size, make) in self.known_blobs(target, true).await? {
            if size == 0 || size > MOST_LISTED * u64::from(AVG_CHUNK) {
                continue;
            }
            let shared = self.shared.clone();
            let kept =
                make || in_place(move || shared.store.read(|tx| tx.has_chunk_list(&blob))).await?;
            if kept {
                known += size;
            }
        }
        Ok(known)
    }

    fn new_upload_row(
        &self,
        target: UploadFor,
        size: u64,
        digest: Digest,
        client_key: Option<String>,
        send: Vec<(u64, u64)>,
        length: u64,
    ) -> UploadRow {
        let now = self.clock().now();
        UploadRow {
            id: UploadId::new(),
            owner: self.participant.clone(),
            client_key,
            target,
            size,
            digest,
            send,
            length,
            reached: 0,
            writer: 0,
            created_at: now,
            expires_at: now + UPLOAD_KEPT,
            used_at: None,
        }
    }

    /// Inserts a new upload's row, within the caller's count of unfinished
    /// uploads; or answers the upload its `Idempotency-Key` began meanwhile.
    async fn insert_upload(&self, row: UploadRow) -> Result<UploadState> {
        let now = row.created_at;
        let parts = &self.shared.uploads.parts;
        let inserted = {
            let (shared, row, now) = (self.shared.clone(), row.clone(), now);
            in_place(move || {
                shared.store.write(Durability::Normal, |tx| {
                    tx.lock_uploads_of(&row.owner)?;
                    if let Some(key) = &row.client_key {
                        if let Some(begun) = tx.upload_by_key(&row.owner, key)? {
                            return Ok(Err(begun));
                        }
                    }
                    let open = tx.open_uploads_of(&row.owner, now)?;
                    if open >= MOST_OPEN_EACH {
                        return Err(Error::TooMany(format!(
                            "you have {open} unfinished uploads: finish or cancel one first"
                        )));
                    }
                    tx.insert_upload(&row)?;
                    Ok(Ok(()))
                })
            })
            .await
        };
        match inserted {
            Ok(Ok(())) => {
                let (id, listed, length) = (row.id, !row.is_unlisted(), row.length);
                tracing::info!(upload = %id, listed, length, "upload begun");
                Ok(row.state())
            }
            Ok(Err(begun)) => {
                // The same key's begin, on another request meanwhile.
                let _ = parts.remove(row.id).await;
                same_begin(&begun, &row.target, row.size, &row.digest)
            }
            Err(e) => {
                let _ = parts.remove(row.id).await;
                Err(e)
            }
        }
    }

    /// An upload of the caller's and how far it has come. An append of it
    /// still running here stops first (keeping what it checked): a client
    /// asks this when it resumes.
    pub async fn upload_state(&self, id: UploadId) -> Result<UploadState> {
        self.own_upload(id).await?;
        let _turn = self.shared.uploads.turns.take(id).await;
        Ok(self.own_upload(id).await?.state())
    }

    /// What [`Bundled::append_upload`] checks before it reads a byte: the
    /// upload is the caller's and its target open.
    pub async fn may_append(&self, id: UploadId) -> Result<()> {
        let row = self.own_upload(id).await?;
        self.target_open(&row.target).await
    }

    /// Appends `body` to an upload at `offset`, which must be where it is.
    /// Supersedes any append of it still running (here or on another
    /// server). Refused once its check-out or edit closed (and then removed).
    pub async fn append_upload(
        &self,
        id: UploadId,
        offset: u64,
        mut body: impl AsyncRead + Unpin + Send,
    ) -> Result<UploadState> {
        let row = self.own_upload(id).await?;
        if let Err(e) = self.target_open(&row.target).await {
            if matches!(e, Error::CheckoutClosed(_) | Error::NotFound(_)) {
                self.remove_upload(id).await?;
            }
            return Err(e);
        }
        let turn = self.shared.uploads.turns.take(id).await;
        let shared = self.shared.clone();
        let row = in_place(move || {
            shared
                .store
                .write(Durability::Normal, |tx| tx.next_upload_writer(id))
        })
        .await?
        .ok_or_else(|| no_upload(id))?;
        if offset != row.reached {
            return Err(Error::WrongOffset {
                offset: row.reached,
            });
        }
        if row.reached == row.length {
            // Nothing to send (the server had every chunk, or all came).
            let mut byte = [0u8; 1];
            return match body.read(&mut byte).await {
                Ok(0) => Ok(row.state()),
                _ => Err(Error::Invalid(format!(
                    "the body goes past the upload's {} bytes",
                    row.length
                ))),
            };
        }
        let to_send = self.to_send(&row).await?;
        let writer = self.shared.uploads.parts.writer(id, row.reached).await?;
        let written_to = row.reached;
        // The whole file, from its first byte, into one file, by the
        // upload's first append: hashed as it is written, so its use need
        // not read it again. After an earlier append (a link that broke),
        // that one may still write the unchecked part of a chunk it had
        // (see `Appending::finish`): the use reads the file then.
        let first = row.writer == 1 && row.reached == 0;
        let whole = (first && row.length == row.size && writer.durable().is_one_file())
            .then(appending::WholeHash::start)
            .flatten();
        let mut appending = Appending {
            me: self,
            row,
            turn: &turn,
            durable: writer.durable(),
            writer: Some(writer),
            run: Default::default(),
            writing: None,
            written_to,
            uncounted: Vec::new(),
            counting: None,
            partial: Vec::new(),
            cut_to: None,
            stopped: None,
            count_failed: false,
            whole,
        };
        let outcome = appending.run(&to_send, &mut body).await;
        // What came is kept, whatever ended the body.
        let kept = appending.finish().await;
        let row = appending.row;
        match (outcome, kept) {
            (Ok(()), Ok(())) => Ok(row.state()),
            (Err(e), _) | (Ok(()), Err(e)) => Err(e),
        }
    }

    /// Removes an upload of the caller's.
    pub async fn cancel_upload(&self, id: UploadId) -> Result<()> {
        self.own_upload(id).await?;
        // An append still running here ends first, so it writes no part after.
        let _turn = self.shared.uploads.turns.take(id).await;
        self.remove_upload(id).await
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
    async fn own_upload(&self, id: UploadId) -> Result<UploadRow> {
        self.read(move |tx, me, _| Ok(tx.upload(id)?.filter(|row| row.owner == *me)))
            .await?
            .ok_or_else(|| no_upload(id))
    }

    /// Removes an upload's row, then its parts.
    async fn remove_upload(&self, id: UploadId) -> Result<()> {
        let shared = self.shared.clone();
        in_place(move || {
            shared
                .store
                .write(Durability::Normal, |tx| tx.delete_upload(id))
        })
        .await?;
        self.shared.uploads.parts.remove(id).await
    }

    /// The bytes of an upload from `from` to where it is (a part of a chunk).
    async fn upload_bytes(&self, row: &UploadRow, from: u64) -> Result<Vec<u8>> {
        let (shared, id) = (self.shared.clone(), row.id);
        let pieces = in_place(move || shared.store.read(|tx| tx.upload_pieces(id))).await?;
        let mut bytes = Vec::with_capacity((row.reached - from) as usize);
        for (start, end, run) in held_in(&pieces, row.reached) {
            if end <= from {
                continue;
            }
            let range = from.max(start) - start..end - start;
            self.shared
                .uploads
                .parts
                .open(id, run, range)
                .await?
                .read_to_end(&mut bytes)
                .await?;
        }
        if bytes.len() as u64 != row.reached - from {
            return Err(Error::Internal(format!("upload {id}'s parts are short")));
        }
        Ok(bytes)
    }

    /// Room to read the upload's list: its bytes, and what they decode to.
    async fn list_room(&self, row: &UploadRow) -> Result<Held> {
        let room = &self.shared.uploads.room;
        room.take(&self.participant, 2 * row.list_bytes()).await
    }

    /// The upload's list as it came (see [`Self::list_room`]).
    async fn list_bytes(&self, row: &UploadRow) -> Result<Vec<u8>> {
        let parts = &self.shared.uploads.parts;
        parts.read(row.id, LIST_PART, row.list_bytes()).await
    }

    /// The upload's list, checked against its row.
    async fn read_list(&self, row: &UploadRow) -> Result<Vec<Chunk>> {
        let bytes = self.list_bytes(row).await?;
        Chunked::decode_list(row.digest.clone(), Some(row.size), &bytes)
            .map(|list| list.chunks)
            .map_err(|e| Error::Internal(format!("upload {}'s chunk list: {e}", row.id)))
    }

    /// The chunks an upload sends, in order, within the room for lists.
    async fn to_send(&self, row: &UploadRow) -> Result<ToSend> {
        if row.is_unlisted() {
            return Ok(ToSend::Unlisted { size: row.size });
        }
        let room = self.list_room(row).await?;
        let list = self.read_list(row).await?;
        let mut chunks = Vec::new();
        let mut starts = Vec::new();
        let mut at = 0u64;
        for &(first, end) in &row.send {
            for position in first..end {
                let chunk = *list.get(position as usize).ok_or_else(|| {
                    Error::Internal(format!("upload {}'s list is shorter than its runs", row.id))
                })?;
                chunks.push(chunk);
                starts.push(at);
                at += u64::from(chunk.size);
            }
        }
        Ok(ToSend::Listed {
            chunks,
            starts,
            _room: room,
        })
    }
}

/// The room that reading the lists of `blobs` one at a time takes: the
/// largest, three times over if it is to be made (its chunks, its kept
/// form, and the copy the store is given).
fn known_bound(blobs: &[(Digest, u64, bool)]) -> u64 {
    blobs
        .iter()
        .map(|&(_, size, make)| list_bound(size) * if make { 3 } else { 1 })
        .max()
        .unwrap_or(0)
}

/// The most a kept list of a blob of `size` bytes may take.
fn list_bound(size: u64) -> u64 {
    chunking::most_chunks(size).min(MOST_LISTED) * LISTED_BYTES as u64
}

/// `send` with an empty run at the list's end when its last run ends
/// earlier, so the runs say how long the list is.
fn with_list_end(mut send: Vec<(u64, u64)>, len: u64) -> Vec<(u64, u64)> {
    if send.last().map_or(0, |run| run.1) < len {
        send.push((len, len));
    }
    send
}

/// The answer to a begin whose `Idempotency-Key` began `begun` before: that
/// upload, if it is of the same file for the same target.
fn same_begin(
    begun: &UploadRow,
    target: &UploadFor,
    size: u64,
    digest: &Digest,
) -> Result<UploadState> {
    if begun.target != *target || begun.size != size || begun.digest != *digest {
        return Err(Error::Invalid(
            "this Idempotency-Key began an upload of another file or for another target: \
             use a new key for each upload"
                .into(),
        ));
    }
    Ok(begun.state())
}

fn no_upload(id: UploadId) -> Error {
    Error::NotFound(format!("no upload {id}: begin a new one"))
}

fn no_upload_any_more(id: UploadId) -> Error {
    Error::NotFound(format!(
        "no upload {id}: chunks it counted on are no longer the file's; begin a new one"
    ))
}

fn closed_checkout(id: CheckoutId) -> Error {
    Error::CheckoutClosed(format!(
        "check-out {id} is closed: its upload was removed; check the file out again"
    ))
}

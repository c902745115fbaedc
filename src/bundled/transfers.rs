//! Resumable uploads and chunk lists: what a server needs so that a file
//! travels once, in chunks the server lacks, over as many requests as the
//! link allows (`docs/API-transfers.md`).
//!
//! An upload is one participant's, for one target fixed when it begins (a
//! check-out, an edit, an import's path). Its row (`store::uploads`) says
//! what was declared and how far it has come, so every server of the store
//! resumes it; its chunk list and the bytes that came are parts beside the
//! blobs (`blobs::parts`), each part a run of whole chunks checked against
//! their ids, counted only once it is written. The whole file is checked
//! against its digest when a check-in (or a stage, an edit's commit, an
//! import) uses it, which goes the usual way from there. It is removed once
//! used, after a day, or when its check-out or edit closes. The server says
//! it has a chunk only when a blob the caller may read holds it: a version
//! or proposal of the very file the upload is for, or bytes staged for its
//! check-out; an import is told of none.
//!
//! Never holds a file in memory, and holds chunk lists only within the room
//! of [`room`]: taken as a list arrives, and for what is made from it.

mod plan;
mod room;
mod turns;

use std::collections::HashMap;
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
use plan::{ById, Found, Sources};
use room::{Held, Room};
use turns::{Turn, Turns};

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
        }
    }
}

/// The part holding the bytes `start..stop` of an upload.
fn piece_name(start: u64, stop: u64) -> String {
    format!("{start}-{stop}")
}

/// How many checked bytes an append gathers before it writes them as a part:
/// a folder's part is a synced file; an object store's, one request.
fn piece_size(parts: &UploadParts) -> usize {
    match parts {
        UploadParts::Folder(_) => 512 << 10,
        #[cfg(feature = "s3")]
        UploadParts::Objects(_) => 2 << 20,
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

/// An upload's chunks to send, in order, with where each starts in its
/// bytes: what an append checks the bytes against.
struct ToSend {
    chunks: Vec<Chunk>,
    starts: Vec<u64>,
    _room: Held,
}

impl ToSend {
    /// The place of the chunk the byte `offset` falls in.
    fn chunk_at(&self, offset: u64) -> usize {
        self.starts.partition_point(|&start| start <= offset) - 1
    }
}

impl UploadRow {
    fn state(&self) -> UploadState {
        UploadState {
            id: self.id,
            size: self.size,
            digest: self.digest.clone(),
            send: self.send.clone(),
            length: self.length,
            offset: self.reached,
            expires_at: self.expires_at,
        }
    }

    fn list_bytes(&self) -> u64 {
        self.list_len() * LISTED_BYTES as u64
    }

    /// How many chunks the list has: the end of the last run at least, and
    /// exactly what the list part holds (its size is checked as it is read).
    fn list_len(&self) -> u64 {
        self.send.last().map_or(0, |run| run.1)
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
                return same_begin(&begun, &target, size, &digest);
            }
        }
        let most = chunking::most_chunks(size).min(MOST_LISTED);
        let cap = most * LISTED_BYTES as u64;
        let uploads = &self.shared.uploads;
        let arriving = uploads.receive_list(&self.participant, list, cap).await?;
        if arriving.len > cap {
            return Err(Error::Invalid(format!(
                "the chunk list is longer than {most} entries: more than a file of {size} bytes \
                 has{}",
                if chunking::most_chunks(size) > MOST_LISTED {
                    "; send a file this large in one request"
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
        let now = self.clock().now();
        let row = UploadRow {
            id: UploadId::new(),
            owner: self.participant.clone(),
            client_key: key,
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
        };
        let parts = &self.shared.uploads.parts;
        parts.put(row.id, LIST_PART, vec![Bytes::from(raw)]).await?;
        drop(held);
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
            Ok(Ok(())) => Ok(row.state()),
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
        let mut appending = Appending {
            me: self,
            row,
            turn: &turn,
            piece: Vec::new(),
            gathered: 0,
            partial: Vec::new(),
            cut_to: None,
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

    /// A whole upload's bytes for `target` (which must be the one it was
    /// begun for), read from its parts and the blobs that hold its other
    /// chunks, with its declared digest: the check-in (or stage, commit,
    /// import) that takes them checks the whole file as it reads. Call
    /// [`Bundled::upload_used`] once that succeeded.
    pub async fn finished_upload(&self, id: UploadId, target: &UploadFor) -> Result<Upload> {
        let row = self.own_upload(id).await?;
        if row.target != *target {
            return Err(Error::Invalid(format!(
                "upload {id} was begun for something else: begin one for this"
            )));
        }
        if row.reached < row.length {
            return Err(Error::UploadIncomplete {
                offset: row.reached,
                length: row.length,
            });
        }
        let n = row.list_len() as usize;
        // A closed check-out is left to the write's rules: a retry of a
        // check-in whose answer was lost is answered as the first was.
        let known = self.known_blobs(target, false).await?;
        let held = self
            .shared
            .uploads
            .room
            .take(
                &self.participant,
                2 * row.list_bytes()
                    + ById::bytes(n)
                    + Sources::bytes(n)
                    + n as u64 * RUN_BYTES
                    + known_bound(&known),
            )
            .await?;
        let chunks = self.read_list(&row).await?;
        let by_id = ById::new(&chunks);
        let mut sources = Sources::sent(&chunks, &by_id, &row.send);
        let mut blobs = Vec::new();
        for (blob, blob_size, make) in known {
            if sources.complete() {
                break;
            }
            if let Some(kept) = self.kept_list_bytes(&blob, blob_size, make).await? {
                sources.look_in(&chunks, &by_id, blobs.len() as u8, &kept);
                blobs.push(blob);
            }
        }
        if !sources.complete() {
            // Pushed out of what it may use since it began (newer
            // versions, a new stage): the client begins again.
            return Err(no_upload_any_more(id));
        }
        let runs = sources.runs(&chunks);
        drop((chunks, by_id, sources));
        // The runs stay while the file is read: their room with them.
        let mut held = held;
        held.shrink_to(runs.len() as u64 * RUN_BYTES);
        let shared = self.shared.clone();
        let pieces = in_place(move || shared.store.read(|tx| tx.upload_pieces(id))).await?;
        let pieces = held_in(&pieces, row.reached);
        let (store_blobs, parts) = (self.shared.blobs.clone(), self.shared.uploads.parts.clone());
        let stream = futures_util::stream::iter(runs)
            .flat_map(move |(found, start, end)| {
                let reads: Vec<(Option<Digest>, String, u64, u64)> = match found {
                    Found::Blob(k) => {
                        vec![(Some(blobs[k as usize].clone()), String::new(), start, end)]
                    }
                    // A run of the upload's own bytes, part by part: the
                    // parts are in order, so found from the first that ends
                    // after it starts (a file may have a million runs).
                    _ => pieces[pieces.partition_point(|(_, to, _)| *to <= start)..]
                        .iter()
                        .take_while(|(from, _, _)| *from < end)
                        .map(|(from, to, name)| {
                            (
                                None,
                                name.clone(),
                                start.max(*from) - from,
                                end.min(*to) - from,
                            )
                        })
                        .collect(),
                };
                futures_util::stream::iter(reads)
            })
            .then(move |(blob, part, start, end)| {
                let _room = &held;
                let (blobs, parts) = (store_blobs.clone(), parts.clone());
                async move {
                    let reader: Pin<Box<dyn AsyncRead + Send>> = match blob {
                        Some(digest) => blobs.open_range(&digest, start..end).await?,
                        None => parts.open(id, &part, start..end).await?,
                    };
                    Ok::<_, Error>(tokio_util::io::ReaderStream::with_capacity(reader, 1 << 20))
                }
            })
            .map_err(std::io::Error::other)
            .try_flatten();
        let reader = tokio_util::io::StreamReader::new(stream);
        Ok(Upload::stream(reader).with_digest(row.digest.clone()))
    }

    /// After the write that used an upload: its chunk list is kept for its
    /// blob (the next transfer of the file needs no new one), and it is
    /// removed in a few minutes (see [`USED_KEPT`]).
    pub async fn upload_used(&self, id: UploadId) {
        let Ok(row) = self.own_upload(id).await else {
            return;
        };
        let kept = async {
            let _room = self
                .shared
                .uploads
                .room
                .take(&self.participant, 2 * row.list_bytes())
                .await?;
            let bytes = self
                .shared
                .uploads
                .parts
                .read(id, LIST_PART, row.list_bytes())
                .await?;
            self.keep_chunk_list(&row.digest, bytes).await
        }
        .await;
        if let Err(e) = kept {
            tracing::warn!("upload {id}'s chunk list is made again when needed: {e}");
        }
        let (shared, at) = (self.shared.clone(), self.clock().now());
        let marked = in_place(move || {
            shared
                .store
                .write(Durability::Normal, |tx| tx.mark_upload_used(id, at))
        })
        .await;
        if let Err(e) = marked {
            tracing::warn!("upload {id} stays until it lapses: {e}");
        }
    }

    /// The chunk list of a version of an artifact the caller may read (the
    /// head's when `version` is `None`), made the first time it is asked for.
    pub async fn version_chunks(&self, id: ArtifactId, version: Option<u64>) -> Result<Chunked> {
        let head = self
            .read(move |tx, me, _| rules::version_head(tx, me, id, version))
            .await?;
        let _room = self
            .shared
            .uploads
            .room
            .take(&self.participant, 3 * list_bound(head.size))
            .await?;
        match self.kept_list_bytes(&head.digest, head.size, true).await? {
            Some(kept) => Chunked::decode_list(head.digest.clone(), Some(head.size), &kept)
                .map_err(|e| {
                    Error::Internal(format!("the kept chunk list of {}: {e}", head.digest))
                }),
            None => Err(Error::Invalid(format!(
                "this version is too large for a chunk list (over {MOST_LISTED} chunks): \
                 download it whole"
            ))),
        }
    }

    /// A blob's chunk list as kept: the kept one, or (when `make`) made now
    /// from its bytes and kept. `None` when none is kept and it is not to be
    /// made, or the blob is too large for a list. The caller holds the room
    /// [`known_bound`] says.
    async fn kept_list_bytes(
        &self,
        digest: &Digest,
        size: u64,
        make: bool,
    ) -> Result<Option<Vec<u8>>> {
        if size == 0 || size > MOST_LISTED * u64::from(AVG_CHUNK) {
            return Ok(None);
        }
        let shared = self.shared.clone();
        let wanted = digest.clone();
        let kept = in_place(move || shared.store.read(|tx| tx.chunk_list(&wanted))).await?;
        if let Some(kept) = kept {
            return Ok(Some(kept));
        }
        if !make {
            return Ok(None);
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
        if list.chunks.len() as u64 > MOST_LISTED {
            return Ok(None);
        }
        let kept = list.encode_list();
        drop(list);
        self.keep_chunk_list(digest, kept.clone()).await?;
        Ok(Some(kept))
    }

    async fn keep_chunk_list(&self, digest: &Digest, kept: Vec<u8>) -> Result<()> {
        let (shared, digest) = (self.shared.clone(), digest.clone());
        in_place(move || {
            shared
                .store
                .write(Durability::Normal, |tx| tx.put_chunk_list(&digest, &kept))
        })
        .await
    }

    /// The blobs whose chunks the caller may be told the server has for
    /// `target`, each with its size and whether its list is made now if
    /// none is kept: the file's newest versions and proposals and the
    /// check-out's staged bytes. Refuses a target the caller may not write
    /// (or that closed) as its use would.
    async fn known_blobs(
        &self,
        target: &UploadFor,
        refuse_closed: bool,
    ) -> Result<Vec<(Digest, u64, bool)>> {
        let target = target.clone();
        let blobs = self
            .read(move |tx, me, now| {
                let (artifact, staged) = match &target {
                    UploadFor::Import(path) => {
                        rules::import_precheck(tx, me, path, now)?;
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
        let mut seen = std::collections::HashSet::new();
        Ok(blobs
            .into_iter()
            .filter(|(digest, _, _)| seen.insert(digest.clone()))
            .collect())
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
        for (start, end, name) in held_in(&pieces, row.reached) {
            if end <= from {
                continue;
            }
            let range = from.max(start) - start..end - start;
            self.shared
                .uploads
                .parts
                .open(id, &name, range)
                .await?
                .read_to_end(&mut bytes)
                .await?;
        }
        if bytes.len() as u64 != row.reached - from {
            return Err(Error::Internal(format!("upload {id}'s parts are short")));
        }
        Ok(bytes)
    }

    /// The upload's list, checked against its row.
    async fn read_list(&self, row: &UploadRow) -> Result<Vec<Chunk>> {
        let bytes = self
            .shared
            .uploads
            .parts
            .read(row.id, LIST_PART, row.list_bytes())
            .await?;
        Chunked::decode_list(row.digest.clone(), Some(row.size), &bytes)
            .map(|list| list.chunks)
            .map_err(|e| Error::Internal(format!("upload {}'s chunk list: {e}", row.id)))
    }

    /// The chunks an upload sends, in order, within the room for lists.
    async fn to_send(&self, row: &UploadRow) -> Result<ToSend> {
        let room = self
            .shared
            .uploads
            .room
            .take(&self.participant, 2 * row.list_bytes())
            .await?;
        let list = self.read_list(row).await?;
        let mut chunks = Vec::new();
        let mut starts = Vec::new();
        let mut at = 0u64;
        for &(first, end) in &row.send {
            for place in first..end {
                let chunk = *list.get(place as usize).ok_or_else(|| {
                    Error::Internal(format!("upload {}'s list is shorter than its runs", row.id))
                })?;
                chunks.push(chunk);
                starts.push(at);
                at += u64::from(chunk.size);
            }
        }
        Ok(ToSend {
            chunks,
            starts,
            _room: room,
        })
    }

    /// Removes the uploads that lapsed or whose check-out or edit closed;
    /// at most once a minute (by the store's clock), and parts no upload
    /// names. Blocking.
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
        let store = &self.shared.store;
        let (mut over, open) = store.read(|tx| tx.uploads_to_look_over(now, now - USED_KEPT))?;
        for (id, target) in open {
            let closed = store.read(|tx| {
                Ok(match &target {
                    UploadFor::Import(_) => false,
                    UploadFor::Checkout(c) => tx
                        .checkout(*c)?
                        .is_none_or(|row| row.checkout.state == CheckoutState::Closed),
                    UploadFor::Edit(e) => {
                        tx.edit(*e)?.is_none_or(|row| row.state != EditState::Open)
                    }
                })
            })?;
            if closed {
                over.push(id);
            }
        }
        for &id in &over {
            store.write(Durability::Normal, |tx| tx.delete_upload(id))?;
            uploads.parts.remove_blocking(id)?;
        }
        // Parts no row names: a begin or a server that died midway.
        for (id, age) in uploads.parts.uploads()? {
            if age >= ORPHAN_PARTS_AFTER && !store.read(|tx| tx.upload_exists(id))? {
                uploads.parts.remove_blocking(id)?;
            }
        }
        // Lists a killed process was receiving.
        for entry in std::fs::read_dir(&uploads.spool)
            .into_iter()
            .flatten()
            .flatten()
        {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| at.elapsed().unwrap_or_default() >= ORPHAN_PARTS_AFTER);
            if old {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}

/// One append's work: the bytes that came gathered into a part, written
/// and counted every [`piece_size`] bytes of whole checked chunks and when
/// the request ends (then with the part of a chunk that came, which the
/// next append checks as the chunk completes).
struct Appending<'a> {
    me: &'a Bundled,
    row: UploadRow,
    turn: &'a Turn,
    /// Whole checked chunks' bytes from `row.reached`, not yet written.
    piece: Vec<Bytes>,
    gathered: usize,
    /// The bytes after those of the chunk under way, not yet checked.
    partial: Vec<u8>,
    /// Where the upload goes back to: a chunk begun by an earlier request
    /// turned out not to be its id.
    cut_to: Option<u64>,
}

impl Appending<'_> {
    /// Reads the body and checks each chunk as it completes, until the body
    /// ends, breaks or goes wrong, or a newer request supersedes this one.
    async fn run(&mut self, to_send: &ToSend, body: &mut (impl AsyncRead + Unpin)) -> Result<()> {
        let piece_size = piece_size(&self.me.shared.uploads.parts);
        let length = self.row.length;
        let mut k = to_send.chunk_at(self.row.reached);
        let mut hasher = blake3::Hasher::new();
        // The part of the chunk under way that came before, hashed again.
        let chunk_start = to_send.starts[k];
        if chunk_start < self.row.reached {
            hasher.update(&self.me.upload_bytes(&self.row, chunk_start).await?);
        }
        let mut buf = vec![0u8; 256 << 10];
        loop {
            let read = tokio::select! {
                biased;
                () = self.turn.until_superseded() => return Ok(()),
                read = body.read(&mut buf) => read,
            };
            let at = |me: &Appending| me.row.reached + (me.gathered + me.partial.len()) as u64;
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
                let (expected, start) = (to_send.chunks[k], to_send.starts[k]);
                let end = start + u64::from(expected.size);
                let take = ((end - at(self)) as usize).min(rest.len());
                hasher.update(&rest[..take]);
                self.partial.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if at(self) < end {
                    continue;
                }
                if std::mem::take(&mut hasher).finalize() != expected.id {
                    // Dropped, with all after it: the upload goes back to its start.
                    self.partial.clear();
                    if start < self.row.reached {
                        self.cut_to = Some(start);
                    }
                    let index = self.row.send.iter().flat_map(|&(f, e)| f..e).nth(k);
                    return Err(Error::ChunkMismatch {
                        index: index.unwrap_or_default(),
                        offset: start,
                    });
                }
                self.gathered += self.partial.len();
                self.piece
                    .push(Bytes::from(std::mem::take(&mut self.partial)));
                k += 1;
                if self.gathered >= piece_size {
                    self.write_piece().await?;
                }
            }
        }
    }

    /// Keeps what came: the checked chunks and the part of one under way,
    /// or goes back to where a chunk that was not its id began.
    async fn finish(&mut self) -> Result<()> {
        if let Some(to) = self.cut_to {
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
        if !self.partial.is_empty() {
            self.gathered += self.partial.len();
            self.piece
                .push(Bytes::from(std::mem::take(&mut self.partial)));
        }
        self.write_piece().await
    }

    /// Writes the bytes gathered as a part and counts it, if this request
    /// still has the upload's turn.
    async fn write_piece(&mut self) -> Result<()> {
        if self.gathered == 0 {
            return Ok(());
        }
        let (id, writer) = (self.row.id, self.row.writer);
        let (from, to) = (self.row.reached, self.row.reached + self.gathered as u64);
        let piece = std::mem::take(&mut self.piece);
        self.gathered = 0;
        self.me
            .shared
            .uploads
            .parts
            .put(id, &piece_name(from, to), piece)
            .await?;
        let shared = self.me.shared.clone();
        let counted = in_place(move || {
            shared.store.write(Durability::Normal, |tx| {
                if tx.add_upload_piece(id, writer, from, to)? {
                    return Ok(None);
                }
                Ok(Some(tx.upload(id)?))
            })
        })
        .await?;
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
                let _ = self.me.shared.uploads.parts.remove(id).await;
                Err(no_upload(id))
            }
        }
    }
}

/// The parts of an upload that hold its bytes up to `reached`, each as
/// `(start, end, name)`: a part's bytes count up to where the next begins
/// (a part written again after a chunk that was not its id starts earlier
/// than the one it replaces ends).
fn held_in(pieces: &[(u64, u64)], reached: u64) -> Vec<(u64, u64, String)> {
    pieces
        .iter()
        .enumerate()
        .filter_map(|(i, &(start, stop))| {
            let next = pieces.get(i + 1).map_or(u64::MAX, |p| p.0);
            let end = stop.min(next).min(reached);
            (start < end).then(|| (start, end, piece_name(start, stop)))
        })
        .collect()
}

/// A chunk list as it arrives, in a file of its own, removed when dropped:
/// a list trickled in holds a file, and no memory.
struct Arriving {
    path: PathBuf,
    len: u64,
    _turn: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for Arriving {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Uploads {
    /// Reads a chunk list of at most `cap` bytes (one more, to tell a
    /// longer one) into a file; refused if it does not arrive within
    /// [`LIST_GRACE`] and a second for each [`LIST_RATE`] bytes of `cap`.
    async fn receive_list(
        &self,
        who: &Participant,
        list: &mut (impl AsyncRead + Unpin + Send),
        cap: u64,
    ) -> Result<Arriving> {
        let lane = self
            .arriving
            .lock()
            .expect("arriving")
            .entry(who.clone())
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(MOST_ARRIVING_EACH)))
            .clone();
        let turn = tokio::time::timeout(room::ROOM_WAIT, lane.acquire_owned())
            .await
            .map_err(|_| {
                Error::Unavailable(format!(
                    "you are sending {MOST_ARRIVING_EACH} chunk lists already: try again shortly"
                ))
            })?
            .map_err(|_| Error::Internal("the lists arriving closed".into()))?;
        let within = LIST_GRACE + Duration::from_secs(cap / LIST_RATE);
        owner_only::create_dir_all(&self.spool)?;
        let mut arriving = Arriving {
            path: self.spool.join(format!("{}.list", UploadId::new())),
            len: 0,
            _turn: turn,
        };
        let mut file = tokio::fs::File::create(&arriving.path).await?;
        let mut body = list.take(cap + 1);
        let copied = tokio::time::timeout(within, async {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match body.read(&mut buf).await {
                    Ok(0) => return Ok(()),
                    Ok(n) => {
                        file.write_all(&buf[..n]).await?;
                        arriving.len += n as u64;
                    }
                    Err(e) => {
                        return Err(Error::BadRequest(format!(
                            "the chunk list did not arrive: {e}"
                        )))
                    }
                }
            }
        })
        .await;
        match copied {
            Ok(done) => done?,
            Err(_) => {
                return Err(Error::BadRequest(format!(
                    "the chunk list did not arrive within {} s: send it faster",
                    within.as_secs()
                )))
            }
        }
        file.flush().await?;
        Ok(arriving)
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

//! The one trait every operation goes through, bundled or remote: [`Backend`],
//! with [`Studio`] (invites, devices, groups, permissions), [`Upload`] (a file
//! or a stream, with progress and cancel) and [`Content`]. Also how bytes
//! travel (`chunking`: content-defined chunks named by BLAKE3) and an agent's
//! edit as one call over any backend (`agent`).
//!
//! A backend value acts as one participant (the bundled one is told which;
//! the remote one is whoever its token names). Never knows a store, HTTP or
//! the app: only the trait and what crosses it.

pub mod agent;
pub mod chunking;

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_files::local_file;
use leasedesk_files::writeback::Writeback;
use leasedesk_model::{error, model};

use std::ops::Range;
use std::path::PathBuf;
use std::pin::Pin;

use async_trait::async_trait;
use tokio::io::AsyncRead;

use crate::error::{Error, Result};
use crate::model::*;

/// Bytes to store: a local file (read in large blocking chunks, the fast path)
/// or any stream. `digest`, when given, must match or nothing is stored.
pub struct Upload {
    pub source: UploadSource,
    pub digest: Option<Digest>,
    /// The description of the version (or proposal) it makes.
    pub message: Option<String>,
    /// Told the bytes sent so far, as they go (for a progress bar).
    pub progress: Option<Progress>,
    /// Set to stop the upload before its next chunk: nothing is stored. Once
    /// every byte is read it has no effect, so a commit is never cut short.
    pub cancel: Option<Cancel>,
    /// Told what a transfer over a link will send, and when it reconnects.
    pub notes: Option<Notes>,
}

/// What a transfer over a link tells as it goes, beside its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransferNote {
    /// `bytes` of the file's `size` will travel; the server has the rest.
    /// Progress then counts up to `bytes`.
    Sending { bytes: u64, size: u64 },
    /// The link broke (`reason`); trying again after `after`.
    Reconnecting {
        after: std::time::Duration,
        reason: String,
    },
    /// Going on from byte `from` of those to send: nothing before it again.
    Resumed { from: u64 },
}

/// A callback told a transfer's notes.
pub type Notes = std::sync::Arc<dyn Fn(TransferNote) + Send + Sync>;

/// Whoever watches a transfer: told its bytes (`progress`) and its notes,
/// and able to stop it (`cancel`; see [`Upload::cancel`]).
#[derive(Clone, Default)]
pub struct Watch {
    pub progress: Option<Progress>,
    pub notes: Option<Notes>,
    pub cancel: Option<Cancel>,
}

/// A flag that cancels an upload (see `Upload::cancel`).
pub type Cancel = std::sync::Arc<std::sync::atomic::AtomicBool>;

/// Fails if `cancel` is set: what an upload checks before each chunk.
pub fn check_cancel(cancel: Option<&std::sync::atomic::AtomicBool>) -> Result<()> {
    match cancel {
        Some(flag) if flag.load(std::sync::atomic::Ordering::Relaxed) => Err(Error::Invalid(
            "the upload was cancelled: nothing was stored".into(),
        )),
        _ => Ok(()),
    }
}

/// A callback told how many bytes have moved so far.
pub type Progress = std::sync::Arc<dyn Fn(u64) + Send + Sync>;

pub enum UploadSource {
    File(PathBuf),
    Stream(Pin<Box<dyn AsyncRead + Send>>),
    /// A file of the server's own (a resumable upload that holds a whole
    /// file) whose bytes were checked as they came: a folder of blobs takes
    /// it by a link instead of a copy, still checking it against the digest.
    Checked(PathBuf),
    /// As `Checked`, of a file whose every byte was also hashed whole, in
    /// order, as it was written (an upload sent in one request): its digest
    /// is known, so the link is taken without reading the file again.
    Hashed(PathBuf),
}

impl Upload {
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self::of_source(UploadSource::File(path.into()))
    }

    pub fn stream(reader: impl AsyncRead + Send + 'static) -> Self {
        Self::of_source(UploadSource::Stream(Box::pin(reader)))
    }

    /// A file of the server's own that holds the bytes of `digest`, checked
    /// as they came (see [`UploadSource::Checked`]).
    pub fn checked(path: impl Into<PathBuf>, digest: Digest) -> Self {
        Self::of_source(UploadSource::Checked(path.into())).with_digest(digest)
    }

    /// A file of the server's own whose bytes hashed to `digest` as they
    /// were written (see [`UploadSource::Hashed`]).
    pub fn hashed(path: impl Into<PathBuf>, digest: Digest) -> Self {
        Self::of_source(UploadSource::Hashed(path.into())).with_digest(digest)
    }

    fn of_source(source: UploadSource) -> Self {
        Self {
            source,
            digest: None,
            message: None,
            progress: None,
            cancel: None,
            notes: None,
        }
    }

    /// Told and stopped as `watch` says.
    pub fn watched(mut self, watch: Watch) -> Self {
        self.progress = watch.progress;
        self.notes = watch.notes;
        self.cancel = watch.cancel;
        self
    }

    /// Declares the upload's digest: a mismatch fails with `DigestMismatch`.
    pub fn with_digest(mut self, digest: Digest) -> Self {
        self.digest = Some(digest);
        self
    }

    /// Describes the version (or proposal) the upload makes.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    pub fn with_progress(mut self, progress: impl Fn(u64) + Send + Sync + 'static) -> Self {
        self.progress = Some(std::sync::Arc::new(progress));
        self
    }

    pub fn with_notes(mut self, notes: impl Fn(TransferNote) + Send + Sync + 'static) -> Self {
        self.notes = Some(std::sync::Arc::new(notes));
        self
    }
}

/// Downloads a version to `dest`: streamed to a temporary file beside it while
/// hashed, and renamed into place only if the digest is the version's. A
/// failed download leaves `dest` as it was.
pub async fn download(
    backend: &dyn Backend,
    id: ArtifactId,
    version: Option<u64>,
    dest: &std::path::Path,
    progress: Option<Progress>,
) -> Result<Head> {
    let content = backend.content(id, version).await?;
    save_verified(content.reader, &content.head.digest, dest, progress).await?;
    Ok(content.head)
}

/// Downloads a version to `dest` as [`download`] does, but over a link
/// fetches only the chunks that none of the local `sources` (the copy
/// being replaced, a backup) has: each chunk read from a source is checked
/// against its id on the way, and the whole file against the version's
/// digest before it takes `dest`'s place. `progress` counts the bytes fetched.
pub async fn download_reusing(
    backend: &dyn Backend,
    id: ArtifactId,
    version: u64,
    dest: &std::path::Path,
    sources: &[std::path::PathBuf],
    progress: Option<Progress>,
) -> Result<()> {
    let sources: Vec<_> = sources
        .iter()
        .filter(|s| std::fs::metadata(s).is_ok_and(|m| m.is_file() && m.len() > 0))
        .cloned()
        .collect();
    if !backend.over_a_link() || sources.is_empty() {
        return download(backend, id, Some(version), dest, progress)
            .await
            .map(|_| ());
    }
    let list = backend.chunks(id, Some(version)).await?;
    let listed = sources.clone();
    let have = tokio::task::spawn_blocking(move || {
        let mut have = std::collections::HashMap::new();
        for (i, source) in listed.iter().enumerate() {
            // A source that cannot be read just offers nothing.
            let opened = crate::local_file::open_to_read(source);
            if let Ok(chunked) = opened.and_then(|file| crate::chunking::chunk_file(&file)) {
                for (offset, chunk) in chunked.offsets() {
                    have.entry(chunk.id).or_insert((i, offset));
                }
            }
        }
        have
    })
    .await
    .map_err(|e| Error::Internal(format!("task: {e}")))?;
    let missing = list.bytes_lacking(|id| have.contains_key(id));
    if missing * 10 >= list.size * 9 {
        return download(backend, id, Some(version), dest, progress)
            .await
            .map(|_| ());
    }
    let temp = temp_beside(dest);
    let plan = Reuse {
        list: &list,
        have: &have,
        sources: &sources,
    };
    let placed = match plan.write(backend, id, version, &temp, progress).await {
        Ok(()) => crate::local_file::replace(&temp, dest).await,
        Err(e) => Err(e),
    };
    if placed.is_err() {
        let _ = tokio::fs::remove_file(&temp).await;
    }
    placed
}

/// A version to write from local sources where they have its chunks.
struct Reuse<'a> {
    list: &'a crate::chunking::Chunked,
    /// Each chunk id a source has: which source, and where in it.
    have: &'a std::collections::HashMap<blake3::Hash, (usize, u64)>,
    sources: &'a [std::path::PathBuf],
}

impl Reuse<'_> {
    /// Writes the version to `temp`: each chunk from a source that has it
    /// (checked against its id) or, in runs, from the backend.
    async fn write(
        &self,
        backend: &dyn Backend,
        id: ArtifactId,
        version: u64,
        temp: &std::path::Path,
        progress: Option<Progress>,
    ) -> Result<()> {
        use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
        let mut out = tokio::fs::File::create(temp).await?;
        let mut behind = WrittenBehind::of(&out).await;
        let mut opened: Vec<Option<tokio::fs::File>> = self.sources.iter().map(|_| None).collect();
        let mut hashed = HashedCopy::new(progress.as_ref());
        let mut buf = vec![0u8; crate::chunking::MAX_CHUNK as usize];
        let chunks: Vec<(u64, crate::chunking::Chunk)> =
            self.list.offsets().map(|(o, c)| (o, *c)).collect();
        // Chunks fetched already, by where they are in `temp`: a chunk that
        // comes again (a region of one colour) is read back, not fetched.
        let mut fetched: std::collections::HashMap<blake3::Hash, u64> = Default::default();
        let mut written: Option<tokio::fs::File> = None;
        let mut i = 0;
        while i < chunks.len() {
            let (offset, chunk) = chunks[i];
            let size = chunk.size as usize;
            let found = match (self.have.get(&chunk.id), fetched.get(&chunk.id)) {
                (Some(&(source, at)), _) => {
                    let file = match &mut opened[source] {
                        Some(file) => file,
                        empty => empty.insert(tokio::fs::File::open(&self.sources[source]).await?),
                    };
                    Some((file, at))
                }
                (None, Some(&at)) => {
                    out.flush().await?;
                    let file = match &mut written {
                        Some(file) => file,
                        empty => empty.insert(tokio::fs::File::open(temp).await?),
                    };
                    Some((file, at))
                }
                (None, None) => None,
            };
            if let Some((file, at)) = found {
                file.seek(std::io::SeekFrom::Start(at)).await?;
                let read = file.read_exact(&mut buf[..size]).await;
                if read.is_ok() && blake3::hash(&buf[..size]) == chunk.id {
                    hashed.hasher.update(&buf[..size]);
                    out.write_all(&buf[..size]).await?;
                    behind.wrote(size);
                    i += 1;
                    continue;
                }
                // The source changed since it was cut: this chunk is fetched.
            }
            // A run of chunks nothing here has (or this one, whose source
            // changed), up to one that comes again within it.
            let mut end = i + 1;
            let mut in_run = std::collections::HashSet::from([chunk.id]);
            while end < chunks.len()
                && !self.have.contains_key(&chunks[end].1.id)
                && !fetched.contains_key(&chunks[end].1.id)
                && in_run.insert(chunks[end].1.id)
            {
                end += 1;
            }
            let stop = chunks.get(end).map_or(self.list.size, |&(o, _)| o);
            let mut reader = backend
                .content_range(id, Some(version), offset, Some(stop))
                .await?
                .reader;
            hashed
                .copy(&mut reader, &mut out, &mut behind, &mut buf)
                .await?;
            for &(at, chunk) in &chunks[i..end] {
                fetched.entry(chunk.id).or_insert(at);
            }
            i = end;
        }
        out.sync_all().await?;
        hashed.check(&self.list.digest)
    }
}

/// Streams `reader` to `dest` through a temporary file beside it, hashing as
/// it goes; `dest` appears only if the bytes have the `expected` digest.
pub async fn save_verified(
    mut reader: Pin<Box<dyn AsyncRead + Send>>,
    expected: &Digest,
    dest: &std::path::Path,
    progress: Option<Progress>,
) -> Result<()> {
    let temp = temp_beside(dest);
    let copied = async {
        let mut out = tokio::fs::File::create(&temp).await?;
        let mut behind = WrittenBehind::of(&out).await;
        let mut hashed = HashedCopy::new(progress.as_ref());
        let mut buf = vec![0u8; 1 << 20];
        hashed
            .copy(&mut reader, &mut out, &mut behind, &mut buf)
            .await?;
        out.sync_all().await?;
        hashed.check(expected)?;
        crate::local_file::replace(&temp, dest).await?;
        Ok(())
    }
    .await;
    if copied.is_err() {
        let _ = tokio::fs::remove_file(&temp).await;
    }
    copied
}

/// A temporary file's name beside `dest`, for bytes that take its place
/// only once whole and checked.
fn temp_beside(dest: &std::path::Path) -> std::path::PathBuf {
    let name = dest
        .file_name()
        .map_or_else(|| "download".into(), |n| n.to_string_lossy().into_owned());
    dest.with_file_name(format!(".{name}.leasedesk-{}", uuid::Uuid::new_v4()))
}

/// Bytes written to a file, hashed as they go; those copied from a reader
/// are counted to `progress`.
/// A download's file, its writeback started as it is written and its
/// pages dropped behind (see [`Writeback`]): a file of a gigabyte is then
/// not a gigabyte of page cache taken from the designer's applications.
struct WrittenBehind(Option<(Writeback, std::fs::File)>);

impl WrittenBehind {
    async fn of(out: &tokio::fs::File) -> Self {
        match out.try_clone().await {
            Ok(file) => Self(Some((Writeback::new(0), file.into_std().await))),
            // Best effort: the final sync does the work.
            Err(_) => Self(None),
        }
    }

    fn wrote(&mut self, n: usize) {
        if let Some((writeback, file)) = &mut self.0 {
            writeback.wrote(file, n as u64);
        }
    }
}

struct HashedCopy<'a> {
    hasher: blake3::Hasher,
    moved: u64,
    progress: Option<&'a Progress>,
}

impl<'a> HashedCopy<'a> {
    fn new(progress: Option<&'a Progress>) -> Self {
        Self {
            hasher: blake3::Hasher::new(),
            moved: 0,
            progress,
        }
    }

    /// Copies `reader` to its end into `out` through `buf`.
    async fn copy(
        &mut self,
        reader: &mut (impl AsyncRead + Unpin + ?Sized),
        out: &mut tokio::fs::File,
        behind: &mut WrittenBehind,
        buf: &mut [u8],
    ) -> Result<()> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let n = reader.read(buf).await?;
            if n == 0 {
                return Ok(());
            }
            self.hasher.update(&buf[..n]);
            out.write_all(&buf[..n]).await?;
            behind.wrote(n);
            self.moved += n as u64;
            if let Some(progress) = self.progress {
                progress(self.moved);
            }
        }
    }

    /// `DigestMismatch` unless what was hashed is `expected`.
    fn check(&self, expected: &Digest) -> Result<()> {
        let actual: Digest = self.hasher.finalize().into();
        if &actual != expected {
            return Err(Error::DigestMismatch {
                expected: expected.clone(),
                actual,
            });
        }
        Ok(())
    }
}

/// A version's bytes, as a stream.
pub struct Content {
    pub head: Head,
    pub reader: Pin<Box<dyn AsyncRead + Send>>,
}

#[async_trait]
pub trait Backend: Send + Sync {
    /// The participant this backend acts as.
    async fn me(&self) -> Result<Participant>;

    /// Stores a new artifact at `path` as its version 1.
    async fn import(&self, path: &RepoPath, upload: Upload) -> Result<Artifact>;
    /// Every artifact the caller may read, by path.
    async fn artifacts(&self) -> Result<Vec<Artifact>> {
        Ok(self
            .artifact_page(ArtifactQuery::default())
            .await?
            .artifacts)
    }
    /// A page of artifacts by path, under a folder, containing a text or
    /// held (every one without a limit), as of an event sequence number.
    async fn artifact_page(&self, query: ArtifactQuery) -> Result<ArtifactPage>;
    /// The folders directly under `folder` (`""` for the top), with the
    /// files under each and how many are held.
    async fn folders(&self, folder: &str) -> Result<FolderList>;
    async fn artifact(&self, id: ArtifactId) -> Result<Artifact>;
    async fn artifact_by_path(&self, path: &RepoPath) -> Result<Artifact>;
    /// Versions, newest first.
    async fn versions(&self, id: ArtifactId) -> Result<Vec<Head>>;
    /// A version's bytes (the head's when `version` is `None`).
    async fn content(&self, id: ArtifactId, version: Option<u64>) -> Result<Content>;
    /// A version's head (the newest when `version` is `None`).
    async fn version_head(&self, id: ArtifactId, version: Option<u64>) -> Result<Head>;
    /// The bytes `range` of `id`'s version `head`, within its size: what
    /// [`Backend::content_range`] reads once it has checked the range.
    async fn open_range(&self, id: ArtifactId, head: Head, range: Range<u64>) -> Result<Content>;
    /// A version's bytes from `start` to `end` (or its end), for a download
    /// that resumes or fetches only the chunks it lacks; a start past the
    /// end is `RangeNotSatisfiable`.
    async fn content_range(
        &self,
        id: ArtifactId,
        version: Option<u64>,
        start: u64,
        end: Option<u64>,
    ) -> Result<Content> {
        let head = self.version_head(id, version).await?;
        let end = end.unwrap_or(head.size).min(head.size);
        // An empty version's whole is the one empty range there is.
        if start >= end && !(start == 0 && head.size == 0) {
            return Err(Error::RangeNotSatisfiable { size: head.size });
        }
        self.open_range(id, head, start..end).await
    }
    /// A version's chunk list (`chunking`), to fetch only the chunks a copy lacks.
    async fn chunks(
        &self,
        id: ArtifactId,
        version: Option<u64>,
    ) -> Result<crate::chunking::Chunked>;
    /// Whether bytes cross a link, so that a download is worth making from
    /// the chunks a local copy has (see [`download_reusing`]); a bundled
    /// backend copies locally.
    fn over_a_link(&self) -> bool {
        false
    }

    async fn check_out(&self, id: ArtifactId, request: CheckoutRequest) -> Result<Checkout>;
    async fn checkout(&self, id: CheckoutId) -> Result<Checkout>;
    /// The caller's own check-outs, newest first; only open ones if `open_only`.
    async fn checkouts(&self, open_only: bool) -> Result<Vec<Checkout>>;
    async fn extend(&self, id: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout>;
    async fn check_in(&self, id: CheckoutId, upload: Upload) -> Result<Checkout>;
    async fn cancel(&self, id: CheckoutId) -> Result<Checkout>;
    /// Checks out every artifact, or none (`Error::SomeBusy` names each
    /// one someone else holds); the check-outs in the order asked.
    async fn check_out_many(&self, request: CheckoutsRequest) -> Result<Vec<Checkout>>;
    /// Keeps a file's bytes for the check-out's next change (again: replaced).
    async fn stage(&self, id: CheckoutId, upload: Upload) -> Result<StagedFile>;
    /// Checks in the staged bytes of these check-outs as one change: every
    /// changed file commits, or, if any is stale, each becomes a proposal of
    /// the change. The same check-outs again return the same change.
    async fn commit_change(&self, request: ChangeRequest) -> Result<Change>;
    async fn change(&self, id: ChangeId) -> Result<Change>;

    async fn begin_edit(&self, id: ArtifactId, ttl_seconds: Option<u64>) -> Result<Edit>;
    async fn commit_edit(&self, id: EditId, upload: Upload) -> Result<CheckinResult>;
    async fn release_edit(&self, id: EditId) -> Result<()>;

    async fn proposals(&self, filter: ProposalFilter) -> Result<Vec<Proposal>>;
    async fn accept_proposal(&self, id: ProposalId) -> Result<Proposal>;
    async fn rebuild_proposal(&self, id: ProposalId) -> Result<Proposal>;
    async fn reject_proposal(&self, id: ProposalId) -> Result<Proposal>;
    /// One proposal, for any participant (a reviewer need not be its author).
    async fn proposal(&self, id: ProposalId) -> Result<Proposal>;
    /// A proposal's bytes, to compare with the head.
    async fn proposal_content(
        &self,
        id: ProposalId,
    ) -> Result<(Proposal, Pin<Box<dyn AsyncRead + Send>>)>;

    /// A PNG of the image of a version or a proposal, fitted into
    /// `size`×`size` (16 to 4096); `Error::NoPreview` when it has none.
    async fn preview(&self, of: PreviewOf, size: u32) -> Result<Vec<u8>>;

    /// Ends someone's lease (admins only); `reason` is shown to them.
    async fn break_lease(&self, id: ArtifactId, reason: &str) -> Result<Artifact>;

    /// Gives an artifact a new path (admins only; refused while someone holds
    /// it). `to` must satisfy the strict rules; the old path may be one that
    /// cannot be placed on a computer, which is what renaming fixes.
    async fn rename(&self, id: ArtifactId, to: &RepoPath) -> Result<Artifact>;

    /// Asks whoever holds the file under a check-out to release it, with a
    /// message; asking again while one's request stands replaces its
    /// message. The request, and whether it is new. Releases nothing.
    async fn ask(&self, id: ArtifactId, message: Option<&str>) -> Result<(Request, bool)>;
    /// The requests to and from the caller, newest first; only those that
    /// still stand (open or replied) if `live_only`.
    async fn requests(&self, live_only: bool) -> Result<Vec<Request>>;
    /// The holder answers a request (again, if they like).
    async fn reply(&self, id: RequestId, message: &str) -> Result<Request>;
    /// The asker takes a request back.
    async fn withdraw(&self, id: RequestId) -> Result<Request>;

    /// Opens a thread on a version or a proposal, with its first comment.
    async fn open_thread(&self, id: ArtifactId, new: NewThread) -> Result<Thread>;
    /// A file's threads, by number, with their comments.
    async fn threads(&self, id: ArtifactId, query: ThreadQuery) -> Result<Vec<Thread>>;
    /// Answers in a thread.
    async fn comment(&self, thread: ThreadId, body: &str) -> Result<Comment>;
    /// Resolves a thread (`true`) or reopens it.
    async fn resolve_thread(&self, thread: ThreadId, resolved: bool) -> Result<Thread>;
    /// The caller's decision on a version or a proposal.
    async fn review(&self, id: ArtifactId, new: NewReview) -> Result<Review>;
    /// A version's or a proposal's decisions and review state.
    async fn reviews(&self, id: ArtifactId, target: ReviewTarget) -> Result<ReviewList>;
    /// Asks reviewers to look at a version or a proposal.
    async fn request_review(&self, id: ArtifactId, new: NewReviewRequest) -> Result<Requested>;
    /// A page of the caller's inbox and their unread count.
    async fn inbox(&self, query: InboxQuery) -> Result<InboxPage>;
    /// Marks the caller's items up to `up_to` read; the unread count.
    async fn mark_inbox_read(&self, up_to: u64) -> Result<u64>;

    /// Events with a sequence number above `after`, oldest first, at most `limit`.
    async fn events(&self, after: u64, limit: u32) -> Result<EventPage> {
        self.query_events(EventQuery {
            after: Some(after),
            limit,
            ..EventQuery::default()
        })
        .await
    }

    /// Events of one artifact or all, after a sequence number (oldest first)
    /// or before one (newest first, for paging back through a history).
    async fn query_events(&self, query: EventQuery) -> Result<EventPage>;
}

/// A studio's people and folders: invites, devices, groups and folder
/// permissions (`docs/API.md`, "Joining a studio", "Folder permissions").
/// Listing people and every change but to one's own devices is for admins.
#[async_trait]
pub trait Studio: Send + Sync {
    /// An invite for someone new, or a device more for a participant; its
    /// code is shown only now.
    async fn invite(&self, request: InviteRequest) -> Result<Invite>;
    /// An invite for another device of the caller's.
    async fn invite_myself(&self, expires_seconds: Option<u64>) -> Result<Invite>;
    /// The invites neither used nor lapsed, oldest first (never a code).
    async fn invites(&self) -> Result<Vec<OpenInvite>>;
    /// Revokes an open invite: its code then works no more.
    async fn revoke_invite(&self, id: InviteId) -> Result<()>;
    async fn my_devices(&self) -> Result<MyDevices>;
    /// Revokes one of the caller's devices (this one too: it is signed out).
    async fn revoke_my_device(&self, id: &str) -> Result<()>;
    async fn members(&self) -> Result<Vec<Member>>;
    /// Revokes anyone's device; its token stops working at once.
    async fn revoke_device(&self, owner: &Participant, id: &str) -> Result<()>;
    async fn groups(&self) -> Result<Vec<Group>>;
    /// Makes or replaces a group.
    async fn put_group(&self, group: Group) -> Result<Group>;
    /// Removes a group no rule names.
    async fn delete_group(&self, name: &GroupName) -> Result<()>;
    async fn permission_rules(&self) -> Result<Vec<Rule>>;
    /// Replaces every rule; for the next request on every server.
    async fn put_permission_rules(&self, rules: Vec<Rule>) -> Result<Vec<Rule>>;
}

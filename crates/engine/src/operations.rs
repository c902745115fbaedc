//! The `Backend` trait over the store: reads, and writes through the rules.
//! Never decides a lease here: every rule is in `rules`, so both backends
//! answer alike. No read writes: listing, reading content and events run on
//! a read transaction and never touch a lease.

use std::ops::Range;
use std::pin::Pin;

use async_trait::async_trait;
use tokio::io::AsyncRead;

use super::{in_place, Bundled};
use crate::backend::{Backend, Content, Upload};
use crate::error::{Error, Result};
use crate::model::*;
use crate::rules;
use crate::rules::access::Caller;
use crate::rules::review;
use crate::store::{Durability, EditState};

#[async_trait]
impl Backend for Bundled {
    async fn me(&self) -> Result<Participant> {
        Ok(self.participant.clone())
    }

    async fn import(&self, path: &RepoPath, upload: Upload) -> Result<Artifact> {
        // A new path meets the strict rules, whichever constructor made it.
        let path: RepoPath = path.as_str().parse()?;
        let checked = path.clone();
        self.upload_and_write(
            upload,
            move |tx, me, now| rules::import_precheck(tx, me, &checked, now),
            |(), _| true,
            |_: &Artifact| true,
            move |tx, me, blob, now| rules::import(tx, me, &path, blob, now),
        )
        .await
    }

    async fn artifact_page(&self, query: ArtifactQuery) -> Result<ArtifactPage> {
        let query = query.checked()?;
        // As of an event a crash cannot undo: the page may show later ones
        // too, which the caller then applies again (see `durable_events`).
        let shared = self.shared.clone();
        let durable = in_place(move || shared.store.durable_events()).await?;
        let mut page = self
            .read(move |tx, me, now| rules::artifact_page(tx, me, &query, now))
            .await?;
        page.seq = page.seq.min(durable);
        Ok(page)
    }

    async fn folders(&self, folder: &str) -> Result<FolderList> {
        check_folder(folder)?;
        let folder = folder.to_owned();
        self.read(move |tx, me, now| rules::folders(tx, me, &folder, now))
            .await
    }

    async fn artifact(&self, id: ArtifactId) -> Result<Artifact> {
        self.read(move |tx, me, now| Ok(rules::visible(rules::readable(tx, me, id)?, now)))
            .await
    }

    async fn artifact_by_path(&self, path: &RepoPath) -> Result<Artifact> {
        let path = path.clone();
        self.read(move |tx, me, now| Ok(rules::visible(rules::artifact_at(tx, me, &path)?, now)))
            .await
    }

    async fn versions(&self, id: ArtifactId) -> Result<Vec<Head>> {
        self.read(move |tx, me, _| {
            rules::readable(tx, me, id)?;
            Ok(tx.versions(id)?.into_iter().map(|(head, _)| head).collect())
        })
        .await
    }

    async fn content(&self, id: ArtifactId, version: Option<u64>) -> Result<Content> {
        let head = self.version_head(id, version).await?;
        let reader = self.shared.blobs.open_read(&head.digest).await?;
        Ok(Content { head, reader })
    }

    async fn version_head(&self, id: ArtifactId, version: Option<u64>) -> Result<Head> {
        self.read(move |tx, me, _| rules::version_head(tx, me, id, version))
            .await
    }

    async fn open_range(&self, _: ArtifactId, head: Head, range: Range<u64>) -> Result<Content> {
        let reader = self.shared.blobs.open_range(&head.digest, range).await?;
        Ok(Content { head, reader })
    }

    async fn chunks(
        &self,
        id: ArtifactId,
        version: Option<u64>,
    ) -> Result<crate::chunking::Chunked> {
        self.version_chunks(id, version).await
    }

    async fn check_out(&self, id: ArtifactId, request: CheckoutRequest) -> Result<Checkout> {
        let device = self.device.clone();
        self.write(Durability::Normal, move |tx, me, now, failpoints| {
            let device = rules::device_of(tx, me, device.as_deref())?;
            rules::check_out(tx, me, device.as_ref(), id, &request, now, failpoints, None)
        })
        .await?
    }

    async fn checkout(&self, id: CheckoutId) -> Result<Checkout> {
        self.read(move |tx, me, _| rules::checkout(tx, me, id))
            .await
    }

    async fn checkouts(&self, open_only: bool) -> Result<Vec<Checkout>> {
        self.read(move |tx, me, _| {
            let caller = Caller::of(tx, me)?;
            let mut checkouts = tx.checkouts_of(me, open_only)?;
            checkouts.retain(|c| caller.level(&c.path) != Level::None);
            Ok(checkouts)
        })
        .await
    }

    async fn extend(&self, id: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout> {
        self.write_normal(move |tx, me, now| rules::extend(tx, me, id, ttl_seconds, now, None))
            .await?
    }

    async fn check_in(&self, id: CheckoutId, upload: Upload) -> Result<Checkout> {
        self.upload_to_checkout(id, upload, move |tx, me, blob, now| {
            rules::check_in(tx, me, id, blob, now)
        })
        .await
    }

    async fn cancel(&self, id: CheckoutId) -> Result<Checkout> {
        self.write_normal(move |tx, me, now| rules::cancel(tx, me, id, now, None))
            .await
    }

    async fn check_out_many(&self, request: CheckoutsRequest) -> Result<Vec<Checkout>> {
        let device = self.device.clone();
        self.write(Durability::Normal, move |tx, me, now, failpoints| {
            let device = rules::device_of(tx, me, device.as_deref())?;
            rules::check_out_many(tx, me, device.as_ref(), &request, now, failpoints)
        })
        .await?
    }

    async fn stage(&self, id: CheckoutId, upload: Upload) -> Result<StagedFile> {
        self.upload_to_checkout(id, upload, move |tx, me, blob, _| {
            rules::stage(tx, me, id, blob)
        })
        .await
    }

    async fn commit_change(&self, request: ChangeRequest) -> Result<Change> {
        self.write(Durability::Full, move |tx, me, now, failpoints| {
            rules::commit_change(tx, me, &request, now, failpoints)
        })
        .await
    }

    async fn change(&self, id: ChangeId) -> Result<Change> {
        self.read(move |tx, me, _| rules::change(tx, me, id)).await
    }

    async fn begin_edit(&self, id: ArtifactId, ttl_seconds: Option<u64>) -> Result<Edit> {
        self.write_normal(move |tx, me, now| rules::begin_edit(tx, me, id, ttl_seconds, now))
            .await?
    }

    async fn commit_edit(&self, id: EditId, upload: Upload) -> Result<CheckinResult> {
        self.upload_and_write(
            upload,
            move |tx, me, _| rules::edit_precheck(tx, me, id),
            // Versions only grow: if the base is not the head now, the commit
            // is refused, and the head's own bytes are kept by a committed row
            // already.
            |(before, head), digest| {
                let head_is_base = head.version == before.edit.base_version
                    && head.digest == before.edit.base_digest;
                before.state == EditState::Open && head_is_base && *digest != head.digest
            },
            // Only a commit that answers without a refusal names the bytes.
            Result::is_ok,
            move |tx, me, blob, now| rules::commit_edit(tx, me, id, blob, now),
        )
        .await?
    }

    async fn release_edit(&self, id: EditId) -> Result<()> {
        self.write_normal(move |tx, me, now| rules::release_edit(tx, me, id, now))
            .await
    }

    async fn proposals(&self, filter: ProposalFilter) -> Result<Vec<Proposal>> {
        self.read(move |tx, me, _| rules::proposals(tx, me, &filter))
            .await
    }

    async fn proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.read(move |tx, me, _| rules::proposal(tx, me, id))
            .await
    }

    async fn proposal_content(
        &self,
        id: ProposalId,
    ) -> Result<(Proposal, Pin<Box<dyn AsyncRead + Send>>)> {
        let proposal = self.proposal(id).await?;
        let reader = self.shared.blobs.open_read(&proposal.digest).await?;
        Ok((proposal, reader))
    }

    async fn preview(&self, of: PreviewOf, size: u32) -> Result<Vec<u8>> {
        crate::previews::check_size(size)?;
        let digest = match of {
            PreviewOf::Version { artifact, version } => {
                self.version_head(artifact, version).await?.digest
            }
            PreviewOf::Proposal(id) => self.proposal(id).await?.digest,
        };
        let previews = &self.shared.previews;
        previews
            .get_or_make_bytes(&digest, size, || async {
                // The readers want a file: an object store's is a checked
                // copy, removed after.
                let file = self.shared.blobs.local_file(&digest).await?;
                previews.decode(file.path().to_owned(), size).await
            })
            .await
    }

    async fn accept_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.write(Durability::Full, move |tx, me, now, _| {
            rules::accept_proposal(tx, me, id, now)
        })
        .await?
    }

    async fn rebuild_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.write(Durability::Full, move |tx, me, now, _| {
            rules::rebuild_proposal(tx, me, id, now)
        })
        .await
    }

    async fn reject_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.write_normal(move |tx, me, now| rules::reject_proposal(tx, me, id, now))
            .await
    }

    async fn break_lease(&self, id: ArtifactId, reason: &str) -> Result<Artifact> {
        let reason = reason.to_owned();
        self.write_normal(move |tx, me, now| rules::break_lease(tx, me, id, &reason, now, None))
            .await
    }

    async fn rename(&self, id: ArtifactId, to: &RepoPath) -> Result<Artifact> {
        let to: RepoPath = to.as_str().parse()?;
        self.write_normal(move |tx, me, now| rules::rename(tx, me, id, &to, now))
            .await
    }

    async fn ask(&self, id: ArtifactId, message: Option<&str>) -> Result<(Request, bool)> {
        let message = message.map(str::to_owned);
        self.write_normal(move |tx, me, now| rules::ask(tx, me, id, message.as_deref(), now))
            .await
    }

    async fn requests(&self, live_only: bool) -> Result<Vec<Request>> {
        self.read(move |tx, me, _| rules::requests(tx, me, live_only))
            .await
    }

    async fn reply(&self, id: RequestId, message: &str) -> Result<Request> {
        let message = message.to_owned();
        self.write_normal(move |tx, me, now| rules::reply(tx, me, id, &message, now))
            .await
    }

    async fn withdraw(&self, id: RequestId) -> Result<Request> {
        self.write_normal(move |tx, me, now| rules::withdraw(tx, me, id, now))
            .await
    }

    async fn open_thread(&self, id: ArtifactId, new: NewThread) -> Result<Thread> {
        self.write_durable(move |tx, me, now| review::open_thread(tx, me, id, new.clone(), now))
            .await
    }

    async fn threads(&self, id: ArtifactId, query: ThreadQuery) -> Result<Vec<Thread>> {
        self.read(move |tx, me, _| review::threads(tx, me, id, query))
            .await
    }

    async fn comment(&self, thread: ThreadId, body: &str) -> Result<Comment> {
        let body = body.to_owned();
        self.write_durable(move |tx, me, now| review::comment(tx, me, thread, &body, now))
            .await
    }

    async fn resolve_thread(&self, thread: ThreadId, resolved: bool) -> Result<Thread> {
        self.write_durable(move |tx, me, now| review::resolve(tx, me, thread, resolved, now))
            .await
    }

    async fn review(&self, id: ArtifactId, new: NewReview) -> Result<Review> {
        self.write_durable(move |tx, me, now| review::submit_review(tx, me, id, new.clone(), now))
            .await
    }

    async fn reviews(&self, id: ArtifactId, target: ReviewTarget) -> Result<ReviewList> {
        self.read(move |tx, me, _| review::reviews(tx, me, id, target))
            .await
    }

    async fn request_review(&self, id: ArtifactId, new: NewReviewRequest) -> Result<Requested> {
        self.write_durable(move |tx, me, now| review::request_review(tx, me, id, new.clone(), now))
            .await
    }

    async fn inbox(&self, query: InboxQuery) -> Result<InboxPage> {
        self.read(move |tx, me, _| review::inbox(tx, me, query))
            .await
    }

    async fn mark_inbox_read(&self, up_to: u64) -> Result<u64> {
        self.write_normal(move |tx, me, _| review::mark_inbox_read(tx, me, up_to))
            .await
    }

    async fn query_events(&self, query: EventQuery) -> Result<EventPage> {
        let query = EventQuery {
            limit: query.limit.clamp(1, MAX_EVENTS_PAGE),
            ..query
        };
        let shared = self.shared.clone();
        let durable = in_place(move || shared.store.durable_events()).await?;
        self.read(move |tx, me, _| {
            let caller = Caller::of(tx, me)?;
            if let Some(artifact) = query.artifact {
                rules::readable(tx, me, artifact)?;
            }
            let (mut events, next) = match (query.after, query.before) {
                (Some(_), Some(_)) => {
                    return Err(Error::Invalid(
                        "ask for events after a sequence number or before one, not both".into(),
                    ))
                }
                (after, None) => {
                    let after = after.unwrap_or(0);
                    let mut events = tx.events_after(query.artifact, after, query.limit)?;
                    // Only events a crash cannot undo (see `Store::durable_events`).
                    events.retain(|e| e.seq <= durable);
                    let next = events.last().map_or(after, |e| e.seq);
                    (events, next)
                }
                (None, Some(before)) => {
                    let before = before.min(durable.saturating_add(1));
                    let events = tx.events_before(query.artifact, before, query.limit)?;
                    let next = events.last().map_or(before, |e| e.seq);
                    (events, next)
                }
            };
            // Events of files the caller cannot see are left out, and so are
            // such files in an event of several (a change's), which is left
            // out when none is left. `next` still moves past them.
            if !caller.unlimited() {
                let mut seen = std::collections::HashMap::new();
                let mut sees = |id: ArtifactId| -> Result<bool> {
                    if let Some(visible) = seen.get(&id) {
                        return Ok(*visible);
                    }
                    let visible = tx
                        .artifact(id)?
                        .is_some_and(|a| caller.level(&a.path) != Level::None);
                    seen.insert(id, visible);
                    Ok(visible)
                };
                let mut kept = Vec::with_capacity(events.len());
                for mut event in events {
                    let visible = match (event.artifact_id, event.data.get_mut("files")) {
                        (Some(id), _) => sees(id)?,
                        (None, None) => true,
                        (None, Some(files)) => {
                            let mut shown = Vec::new();
                            for file in files.as_array().into_iter().flatten() {
                                let id =
                                    file["artifact_id"].as_str().and_then(|id| id.parse().ok());
                                if let Some(id) = id {
                                    if sees(id)? {
                                        shown.push(file.clone());
                                    }
                                }
                            }
                            let any = !shown.is_empty();
                            *files = serde_json::Value::Array(shown);
                            any
                        }
                    };
                    if visible {
                        kept.push(event);
                    }
                }
                events = kept;
            }
            Ok(EventPage { events, next })
        })
        .await
    }
}

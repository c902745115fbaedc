//! Review on the work (API.md "Review (additions)"): threads pinned to a
//! version's or a proposal's picture, their comments and @mentions,
//! resolving, each reviewer's decision, review requests, and the inbox.
//! Anyone who may read a file may do any of it. Each write reads its file
//! first (on PostgreSQL, locking it) and writes its rows, its inbox items
//! and its event in the one transaction. Nobody is told of a file they may
//! not read: a mention or a request reaches only readers, and the inbox is
//! filtered again when it is read. Never reads the clock.

use std::collections::HashMap;

use serde_json::json;

use super::access::Caller;
use super::{event, readable};
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::rows::NewInboxItem;
use crate::store::Tx;

/// Opens a thread on a version or a proposal of a file, with its first comment.
pub fn open_thread(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    new: NewThread,
    now: Timestamp,
) -> Result<Thread> {
    let target = ReviewTarget::from_parts(new.version, new.proposal_id)?;
    if let Some(pin) = &new.pin {
        pin.check()?;
    }
    if let Some(image) = &new.image {
        image.check()?;
    }
    let body = check_comment_body(&new.body)?;
    let names = mentioned_names(&body)?;
    let artifact = readable(tx, actor, artifact_id)?;
    let owner = target_owner(tx, &artifact, target)?;
    let (count, highest, bytes) = tx.thread_numbers(artifact_id)?;
    if count >= MAX_THREADS_PER_FILE {
        return Err(Error::Invalid(format!(
            "{} has {count} threads, the most a file may have: answer in one of them",
            artifact.path
        )));
    }
    room_for(&artifact, bytes, &body)?;
    let mentions = readers_named(tx, &artifact.path, &names)?;
    let (version, proposal_id) = target.parts();
    let mut thread = Thread {
        id: ThreadId::new(),
        artifact_id,
        number: highest + 1,
        version,
        proposal_id,
        pin: new.pin,
        image: new.pin.and(new.image),
        state: ThreadState::Open,
        author: actor.clone(),
        created_at: now,
        resolved_by: None,
        resolved_at: None,
        comments: Vec::new(),
    };
    let comment = Comment {
        id: CommentId::new(),
        thread_id: thread.id,
        author: actor.clone(),
        body,
        mentions,
        created_at: now,
    };
    tx.insert_thread(&thread)?;
    tx.insert_comment(&comment, artifact_id, 1)?;
    let mut told = Told::new(actor);
    told.add(&comment.mentions, InboxKind::Mention);
    told.add(owner.as_slice(), InboxKind::ThreadOnYours);
    told.write(tx, &artifact.path, artifact_id, Some(thread.id), None, now)?;
    event(
        tx,
        "thread.opened",
        artifact_id,
        actor,
        None,
        now,
        json!({ "thread_id": thread.id, "number": thread.number, "comment_id": comment.id,
                "version": thread.version, "proposal_id": thread.proposal_id }),
    )?;
    thread.comments.push(comment);
    Ok(thread)
}

/// A file's threads as `filter` picks them, by number.
pub fn threads(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    filter: ThreadQuery,
) -> Result<Vec<Thread>> {
    readable(tx, actor, artifact_id)?;
    tx.threads(artifact_id, &filter)
}

/// Adds a comment to a thread, open or resolved.
pub fn comment(
    tx: &dyn Tx,
    actor: &Participant,
    thread_id: ThreadId,
    body: &str,
    now: Timestamp,
) -> Result<Comment> {
    let body = check_comment_body(body)?;
    let names = mentioned_names(&body)?;
    let (artifact, thread) = known_thread(tx, actor, thread_id)?;
    room_for(&artifact, tx.thread_numbers(artifact.id)?.2, &body)?;
    let count = tx.comment_count(thread_id)?;
    if count >= MAX_COMMENTS_PER_THREAD {
        return Err(Error::Invalid(format!(
            "thread {} of {} has {count} comments, the most a thread may have: open another",
            thread.number, artifact.path
        )));
    }
    let comment = Comment {
        id: CommentId::new(),
        thread_id,
        author: actor.clone(),
        body,
        mentions: readers_named(tx, &artifact.path, &names)?,
        created_at: now,
    };
    tx.insert_comment(&comment, artifact.id, count + 1)?;
    // Those in the conversation: the work's author, the thread's, and
    // whoever has answered in it.
    let owner = target_owner(tx, &artifact, thread_target(&thread))?;
    let mut in_it: Vec<Participant> = owner.into_iter().collect();
    in_it.push(thread.author.clone());
    in_it.extend(tx.comment_authors(thread_id)?);
    let mut told = Told::new(actor);
    told.add(&comment.mentions, InboxKind::Mention);
    told.add(&in_it, InboxKind::CommentInYours);
    told.write(tx, &artifact.path, artifact.id, Some(thread_id), None, now)?;
    event(
        tx,
        "comment.added",
        artifact.id,
        actor,
        None,
        now,
        json!({ "thread_id": thread_id, "comment_id": comment.id }),
    )?;
    Ok(comment)
}

/// Resolves a thread (`true`) or reopens it; one already so stays as it is.
pub fn resolve(
    tx: &dyn Tx,
    actor: &Participant,
    thread_id: ThreadId,
    resolved: bool,
    now: Timestamp,
) -> Result<Thread> {
    let (artifact, mut thread) = known_thread(tx, actor, thread_id)?;
    let wanted = if resolved {
        ThreadState::Resolved
    } else {
        ThreadState::Open
    };
    if thread.state != wanted {
        thread.state = wanted;
        (thread.resolved_by, thread.resolved_at) = match resolved {
            true => (Some(actor.clone()), Some(now)),
            false => (None, None),
        };
        tx.set_thread_state(&thread)?;
        let kind = if resolved {
            "thread.resolved"
        } else {
            "thread.reopened"
        };
        event(
            tx,
            kind,
            artifact.id,
            actor,
            None,
            now,
            json!({ "thread_id": thread_id }),
        )?;
    }
    thread.comments = tx
        .thread_with_comments(thread_id)?
        .map(|t| t.comments)
        .unwrap_or_default();
    Ok(thread)
}

/// A reviewer's decision on a version or a proposal.
pub fn submit_review(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    new: NewReview,
    now: Timestamp,
) -> Result<Review> {
    let target = ReviewTarget::from_parts(new.version, new.proposal_id)?;
    let message = match new.message.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(m) => Some(check_comment_body(m)?),
    };
    if let Some(chars) = message.as_ref().map(|m| m.chars().count()) {
        if chars > MAX_REVIEW_MESSAGE_CHARS {
            return Err(Error::Invalid(format!(
                "the message is {chars} characters long, over the limit of {MAX_REVIEW_MESSAGE_CHARS}: say more in a thread"
            )));
        }
    }
    let artifact = readable(tx, actor, artifact_id)?;
    let owner = target_owner(tx, &artifact, target)?;
    let decided = tx.review_count(artifact_id)?;
    if decided >= MAX_REVIEWS_PER_FILE {
        return Err(Error::Invalid(format!(
            "{} has {decided} decisions, the most a file may have",
            artifact.path
        )));
    }
    let review = Review {
        id: ReviewId::new(),
        artifact_id,
        version: new.version,
        proposal_id: new.proposal_id,
        reviewer: actor.clone(),
        decision: new.decision,
        message,
        created_at: now,
    };
    tx.insert_review(&review)?;
    let mut told = Told::new(actor);
    told.add(owner.as_slice(), InboxKind::DecisionOnYours);
    told.write(tx, &artifact.path, artifact_id, None, Some(review.id), now)?;
    event(
        tx,
        "review.submitted",
        artifact_id,
        actor,
        None,
        now,
        json!({ "review_id": review.id, "decision": review.decision,
                "version": review.version, "proposal_id": review.proposal_id }),
    )?;
    Ok(review)
}

/// A version's or a proposal's decisions and its review state.
pub fn reviews(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    target: ReviewTarget,
) -> Result<ReviewList> {
    let artifact = readable(tx, actor, artifact_id)?;
    target_owner(tx, &artifact, target)?;
    let reviews = tx.reviews(artifact_id, target)?;
    let requested = tx.review_requests(artifact_id, target)?;
    let (state, waiting_for) = review_state(&reviews, &requested);
    Ok(ReviewList {
        reviews,
        state,
        waiting_for,
    })
}

/// The state API.md gives from each reviewer's newest decision: changes
/// requested if any asks for them, else approved if any approves, else
/// pending while a reviewer asked has not decided, else none. And who is
/// still waited for.
pub fn review_state(
    reviews: &[Review],
    requested: &[Participant],
) -> (ReviewState, Vec<Participant>) {
    let mut newest: HashMap<&Participant, ReviewDecision> = HashMap::new();
    for review in reviews {
        newest.insert(&review.reviewer, review.decision);
    }
    let decided = |p: &Participant| {
        matches!(
            newest.get(p),
            Some(ReviewDecision::Approved | ReviewDecision::ChangesRequested)
        )
    };
    let waiting_for: Vec<Participant> = requested.iter().filter(|p| !decided(p)).cloned().collect();
    let state = if newest
        .values()
        .any(|d| *d == ReviewDecision::ChangesRequested)
    {
        ReviewState::ChangesRequested
    } else if newest.values().any(|d| *d == ReviewDecision::Approved) {
        ReviewState::Approved
    } else if !waiting_for.is_empty() {
        ReviewState::Pending
    } else {
        ReviewState::None
    };
    (state, waiting_for)
}

/// Asks reviewers to look at a version or a proposal; answers everyone
/// asked in this call (asking someone again tells them no second time).
pub fn request_review(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    new: NewReviewRequest,
    now: Timestamp,
) -> Result<Requested> {
    let target = ReviewTarget::from_parts(new.version, new.proposal_id)?;
    if new.reviewers.is_empty() {
        return Err(Error::Invalid("name at least one reviewer".into()));
    }
    if new.reviewers.len() > MAX_REVIEWERS {
        return Err(Error::Invalid(format!(
            "{} reviewers were named: ask at most {MAX_REVIEWERS} at once",
            new.reviewers.len()
        )));
    }
    let artifact = readable(tx, actor, artifact_id)?;
    target_owner(tx, &artifact, target)?;
    let mut reviewers: Vec<Participant> = Vec::new();
    for reviewer in new.reviewers {
        if reviewer == *actor {
            return Err(Error::Invalid("you cannot ask yourself to review".into()));
        }
        if !may_read(tx, &reviewer, &artifact.path)? {
            return Err(Error::Invalid(format!(
                "{reviewer} cannot review {}: they are not a participant who may read it",
                artifact.path
            )));
        }
        if !reviewers.contains(&reviewer) {
            reviewers.push(reviewer);
        }
    }
    let already = tx.review_requests(artifact_id, target)?;
    let new_ones: Vec<Participant> = reviewers
        .iter()
        .filter(|r| !already.contains(r))
        .cloned()
        .collect();
    for reviewer in &new_ones {
        tx.insert_review_request(artifact_id, target, reviewer, actor, now)?;
    }
    let mut told = Told::new(actor);
    told.add(&new_ones, InboxKind::ReviewRequested);
    told.write(tx, &artifact.path, artifact_id, None, None, now)?;
    if !new_ones.is_empty() {
        let (version, proposal_id) = target.parts();
        event(
            tx,
            "review.requested",
            artifact_id,
            actor,
            None,
            now,
            json!({ "reviewers": new_ones, "version": version, "proposal_id": proposal_id }),
        )?;
    }
    Ok(Requested {
        requested: reviewers,
    })
}

/// Refuses a comment that would take a file's threads past
/// [`MAX_COMMENT_BYTES_PER_FILE`].
fn room_for(artifact: &Artifact, held: u64, body: &str) -> Result<()> {
    if held + body.len() as u64 > MAX_COMMENT_BYTES_PER_FILE {
        return Err(Error::Invalid(format!(
            "the threads of {} hold {} MiB of comments, the most a file may: nothing was stored",
            artifact.path,
            MAX_COMMENT_BYTES_PER_FILE >> 20
        )));
    }
    Ok(())
}

/// How many items an inbox read looks at for one page, at most, when files
/// the caller may not read hide some: a page may then come short, with
/// `next` past what was looked at.
const INBOX_SCAN_ROUNDS: u32 = 8;

/// A page of the caller's inbox, and their unread count.
pub fn inbox(tx: &dyn Tx, actor: &Participant, query: InboxQuery) -> Result<InboxPage> {
    let limit = query
        .limit
        .unwrap_or(DEFAULT_INBOX_PAGE)
        .clamp(1, MAX_INBOX_PAGE);
    let caller = Caller::of(tx, actor)?;
    let mark = tx.inbox_read_mark(actor)?;
    let unread_after = query.unread.then_some(mark);
    let (older, mut bound) = match query.before {
        Some(before) => (true, before),
        None => (false, query.after.unwrap_or(0)),
    };
    let mut items = Vec::new();
    for _ in 0..INBOX_SCAN_ROUNDS {
        let want = limit - items.len() as u32;
        let page = tx.inbox(actor, older, bound, unread_after, want)?;
        let done = (page.len() as u32) < want;
        for mut item in page {
            bound = item.seq;
            if caller.level(&item.path) == Level::None {
                continue;
            }
            item.read = item.seq <= mark;
            items.push(item);
        }
        if done || items.len() as u32 >= limit {
            break;
        }
    }
    Ok(InboxPage {
        items,
        next: bound,
        unread: unread_count(tx, actor, &caller, mark)?,
    })
}

/// Marks every item up to `up_to` read (never an item not yet made);
/// answers the unread count.
pub fn mark_inbox_read(tx: &dyn Tx, actor: &Participant, up_to: u64) -> Result<u64> {
    let caller = Caller::of(tx, actor)?;
    let newest = tx
        .inbox(actor, true, u64::MAX, None, 1)?
        .first()
        .map_or(0, |item| item.seq);
    let mark = tx.inbox_read_mark(actor)?.max(up_to.min(newest));
    tx.mark_inbox_read(actor, mark)?;
    unread_count(tx, actor, &caller, mark)
}

/// The caller's items past `mark` on files they may read, counted up to
/// [`MAX_UNREAD_COUNTED`]: one count when no rule limits them, else those
/// of the newest so many whose file they may read.
fn unread_count(tx: &dyn Tx, actor: &Participant, caller: &Caller, mark: u64) -> Result<u64> {
    if caller.unlimited() {
        return tx.inbox_count(actor, mark, MAX_UNREAD_COUNTED);
    }
    let paths = tx.inbox_paths(actor, mark, MAX_UNREAD_COUNTED)?;
    Ok(paths
        .iter()
        .filter(|path| caller.level(path) != Level::None)
        .count() as u64)
}

/// A thread on a file the actor may read, and that file (locked first on
/// PostgreSQL, so the thread is read as the write sees it). One the actor
/// may not read is a thread that never was.
fn known_thread(tx: &dyn Tx, actor: &Participant, id: ThreadId) -> Result<(Artifact, Thread)> {
    let unknown = || Error::NotFound(format!("no thread {id}"));
    let artifact_id = tx.thread(id)?.ok_or_else(unknown)?.artifact_id;
    let artifact = readable(tx, actor, artifact_id).map_err(|e| match e {
        Error::NotFound(_) => unknown(),
        e => e,
    })?;
    let thread = tx.thread(id)?.ok_or_else(unknown)?;
    Ok((artifact, thread))
}

fn thread_target(thread: &Thread) -> ReviewTarget {
    match (thread.proposal_id, thread.version) {
        (_, Some(v)) => ReviewTarget::Version(v),
        (Some(id), None) => ReviewTarget::Proposal(id),
        (None, None) => ReviewTarget::Version(0),
    }
}

/// Who made the version or the proposal a review is about, which must be
/// the file's (else 422).
fn target_owner(
    tx: &dyn Tx,
    artifact: &Artifact,
    target: ReviewTarget,
) -> Result<Option<Participant>> {
    match target {
        ReviewTarget::Version(v) => {
            if v == 0 || v > artifact.head.version {
                return Err(Error::Invalid(format!(
                    "{} has no version {v}: its versions are 1 to {}",
                    artifact.path, artifact.head.version
                )));
            }
            Ok(tx.version(artifact.id, v)?.map(|head| head.author))
        }
        ReviewTarget::Proposal(id) => match tx.proposal(id)? {
            Some(p) if p.artifact_id == artifact.id => Ok(Some(p.author)),
            _ => Err(Error::Invalid(format!(
                "{} has no proposal {id}",
                artifact.path
            ))),
        },
    }
}

/// Whether `who` is a participant of the store who may read `path`.
fn may_read(tx: &dyn Tx, who: &Participant, path: &RepoPath) -> Result<bool> {
    if tx.account(who)?.is_none() {
        return Ok(false);
    }
    Ok(Caller::of(tx, who)?.level(path) != Level::None)
}

/// The participants `names` name (`user:NAME` first, then `agent:NAME`) who
/// may read `path`: a name that reaches nobody who may is only text.
fn readers_named(tx: &dyn Tx, path: &RepoPath, names: &[String]) -> Result<Vec<Participant>> {
    let mut found = Vec::new();
    for name in names {
        for who in [Participant::user(name), Participant::agent(name)]
            .into_iter()
            .flatten()
        {
            if may_read(tx, &who, path)? {
                found.push(who);
                break;
            }
        }
    }
    Ok(found)
}

/// Whom one act tells, each once, by the first reason given; never the actor.
struct Told<'a> {
    actor: &'a Participant,
    whom: Vec<(Participant, InboxKind)>,
}

impl<'a> Told<'a> {
    fn new(actor: &'a Participant) -> Self {
        Self {
            actor,
            whom: Vec::new(),
        }
    }

    fn add(&mut self, people: &[Participant], kind: InboxKind) {
        for who in people {
            if who != self.actor && !self.whom.iter().any(|(w, _)| w == who) {
                self.whom.push((who.clone(), kind));
            }
        }
    }

    /// One inbox item each, for those who may read the file.
    fn write(
        self,
        tx: &dyn Tx,
        path: &RepoPath,
        artifact_id: ArtifactId,
        thread_id: Option<ThreadId>,
        review_id: Option<ReviewId>,
        now: Timestamp,
    ) -> Result<()> {
        let mut items = Vec::with_capacity(self.whom.len());
        for (participant, kind) in self.whom {
            if may_read(tx, &participant, path)? {
                items.push(NewInboxItem {
                    participant,
                    kind,
                    artifact_id,
                    thread_id,
                    review_id,
                    from: self.actor.clone(),
                    at: now,
                });
            }
        }
        tx.add_inbox_items(items)
    }
}

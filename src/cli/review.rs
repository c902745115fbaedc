//! The review commands (API.md "Review (additions)"): comment (open a
//! thread, or answer in one), threads, resolve, review (a decision, or a
//! request to reviewers), reviews, inbox. A thread is named here by its
//! number within its file, as people say it; the API's ids are looked up
//! from the file's threads. Who may do what is the rules' alone.

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use super::{lines_of, local_time, Output};

/// What a review command is on, as its flags name it: a version, a
/// proposal, or neither (the head).
#[derive(Clone, Copy)]
pub(super) struct Work {
    pub(super) version: Option<u64>,
    pub(super) proposal: Option<ProposalId>,
}

impl Work {
    fn target(self, artifact: &Artifact) -> ReviewTarget {
        match (self.version, self.proposal) {
            (_, Some(id)) => ReviewTarget::Proposal(id),
            (Some(version), None) => ReviewTarget::Version(version),
            (None, None) => ReviewTarget::Version(artifact.head.version),
        }
    }
}

fn target_words(target: ReviewTarget) -> String {
    match target {
        ReviewTarget::Version(v) => format!("version {v}"),
        ReviewTarget::Proposal(id) => format!("proposal {id}"),
    }
}

/// `comment PATH [--version N | --proposal ID] [--at X,Y[,W,H]] -m TEXT`:
/// a new thread with its first comment.
pub(super) async fn open(
    store: &dyn Backend,
    path: &RepoPath,
    work: Work,
    pin: Option<Pin>,
    body: String,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let target = work.target(&artifact);
    let (version, proposal_id) = target.parts();
    let new = NewThread {
        version,
        proposal_id,
        pin,
        // The CLI has no picture open: a window that draws the pin knows the size.
        image: None,
        body,
    };
    let thread = store.open_thread(artifact.id, new).await?;
    let mentions = match thread.comments.first() {
        Some(first) => {
            tell_unreached(&first.body, &first.mentions, path);
            first.mentions.as_slice()
        }
        None => &[],
    };
    out.print(&thread, || {
        let mut line = format!(
            "opened thread {} on {} of {path}",
            thread.number,
            target_words(target)
        );
        if let Some(pin) = &thread.pin {
            line += &format!(", pinned {}", pin_words(pin));
        }
        line + &mentioned(mentions)
    });
    Ok(())
}

/// `comment PATH --thread NUMBER -m TEXT`: an answer in a thread.
pub(super) async fn answer(
    store: &dyn Backend,
    path: &RepoPath,
    number: u64,
    body: &str,
    out: &Output,
) -> Result<(), Error> {
    let thread = numbered(store, path, number).await?;
    let comment = store.comment(thread.id, body).await?;
    tell_unreached(&comment.body, &comment.mentions, path);
    out.print(&comment, || {
        format!("answered in thread {number} of {path}") + &mentioned(&comment.mentions)
    });
    Ok(())
}

/// `threads PATH`: the file's threads by number, each with its comments.
pub(super) async fn threads(
    store: &dyn Backend,
    path: &RepoPath,
    work: Work,
    open_only: bool,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let query = ThreadQuery {
        version: work.version,
        proposal: work.proposal,
        state: open_only.then_some(ThreadState::Open),
    };
    let threads = store.threads(artifact.id, query).await?;
    out.print(&threads, || {
        if threads.is_empty() {
            let open = if open_only { "open " } else { "" };
            return format!("no {open}threads on {path}");
        }
        lines_of(&threads, thread_lines)
    });
    Ok(())
}

/// `resolve PATH NUMBER [--reopen]`.
pub(super) async fn resolve(
    store: &dyn Backend,
    path: &RepoPath,
    number: u64,
    resolved: bool,
    out: &Output,
) -> Result<(), Error> {
    let thread = numbered(store, path, number).await?;
    let thread = store.resolve_thread(thread.id, resolved).await?;
    out.print(&thread, || {
        let done = if resolved { "resolved" } else { "reopened" };
        format!("{done} thread {number} of {path}")
    });
    Ok(())
}

/// `review PATH --approve|--changes [-m TEXT]`: the caller's decision, then
/// the review state it leaves.
pub(super) async fn decide(
    store: &dyn Backend,
    path: &RepoPath,
    work: Work,
    decision: ReviewDecision,
    message: Option<String>,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let target = work.target(&artifact);
    let (version, proposal_id) = target.parts();
    let new = NewReview {
        version,
        proposal_id,
        decision,
        message,
    };
    let review = store.review(artifact.id, new).await?;
    // The state is what a reviewer wants to know next; JSON keeps the API's
    // Review alone (`reviews` gives the state).
    let state = match out.json {
        true => None,
        false => Some(store.reviews(artifact.id, target).await?),
    };
    out.print(&review, || {
        let did = match review.decision {
            ReviewDecision::Approved => "approved",
            ReviewDecision::ChangesRequested => "requested changes to",
            ReviewDecision::Commented => "commented on",
        };
        let mut line = format!("{did} {} of {path}", target_words(target));
        if let Some(list) = &state {
            line += &format!("; review state: {}", state_words(list));
        }
        line
    });
    Ok(())
}

/// `review PATH --request WHO,...`: reviewers asked.
pub(super) async fn request(
    store: &dyn Backend,
    path: &RepoPath,
    work: Work,
    reviewers: Vec<Participant>,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let target = work.target(&artifact);
    let (version, proposal_id) = target.parts();
    let new = NewReviewRequest {
        version,
        proposal_id,
        reviewers,
    };
    let requested = store.request_review(artifact.id, new).await?;
    out.print(&requested, || {
        format!(
            "asked {} to review {} of {path}",
            names(&requested.requested),
            target_words(target)
        )
    });
    Ok(())
}

/// `reviews PATH`: the decisions on a version or a proposal, oldest first,
/// and its review state.
pub(super) async fn reviews(
    store: &dyn Backend,
    path: &RepoPath,
    work: Work,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let target = work.target(&artifact);
    let list = store.reviews(artifact.id, target).await?;
    out.print(&list, || {
        let mut lines = vec![format!(
            "{} of {path}: {}",
            target_words(target),
            state_words(&list)
        )];
        lines.extend(list.reviews.iter().map(|r| {
            let did = match r.decision {
                ReviewDecision::Approved => "approved",
                ReviewDecision::ChangesRequested => "requested changes",
                ReviewDecision::Commented => "commented",
            };
            let mut line = format!("  {}  {} {did}", local_time(r.created_at), r.reviewer);
            if let Some(message) = &r.message {
                line += &format!(": \"{message}\"");
            }
            line
        }));
        lines.join("\n")
    });
    Ok(())
}

/// `inbox [--unread] [--read] [--limit N]`: the caller's items, newest
/// first; with `read`, everything up to the newest shown is then marked
/// read (never an item that came after it was shown).
pub(super) async fn inbox(
    store: &dyn Backend,
    unread_only: bool,
    mark_read: bool,
    limit: u32,
    out: &Output,
) -> Result<(), Error> {
    let query = InboxQuery {
        // Newest first from the top: the API's seqs stay below i64::MAX.
        before: Some(i64::MAX as u64),
        limit: Some(limit),
        unread: unread_only,
        ..InboxQuery::default()
    };
    let mut page = store.inbox(query).await?;
    let newest = page.items.iter().map(|item| item.seq).max();
    let marked = match (mark_read, newest) {
        (true, Some(up_to)) => {
            page.unread = store.mark_inbox_read(up_to).await?;
            true
        }
        _ => false,
    };
    out.print(&page, || {
        let mut lines: Vec<String> = page.items.iter().map(inbox_line).collect();
        if lines.is_empty() {
            lines.push(match unread_only {
                true => "nothing unread".into(),
                false => "your inbox is empty".into(),
            });
        }
        match marked {
            true => lines.push(format!("marked read; {} unread", page.unread)),
            false if page.unread > 0 => lines.push(format!("{} unread", page.unread)),
            false => {}
        }
        lines.join("\n")
    });
    Ok(())
}

/// One inbox item: `*` when unread, when, who did what where.
fn inbox_line(item: &InboxItem) -> String {
    let what = match item.kind {
        InboxKind::Mention => "mentioned you in",
        InboxKind::ReviewRequested => "asks you to review",
        InboxKind::ThreadOnYours => "opened a thread on your work in",
        InboxKind::CommentInYours => "answered in a thread of",
        InboxKind::DecisionOnYours => "reviewed your work in",
    };
    let mark = if item.read { ' ' } else { '*' };
    format!(
        "{mark} {}  {} {what} {}",
        local_time(item.at),
        item.from,
        item.path
    )
}

/// A file's thread by its number, as `threads` shows it.
async fn numbered(store: &dyn Backend, path: &RepoPath, number: u64) -> Result<Thread, Error> {
    let artifact = store.artifact_by_path(path).await?;
    store
        .threads(artifact.id, ThreadQuery::default())
        .await?
        .into_iter()
        .find(|t| t.number == number)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "{path} has no thread {number}: see its threads with leasedesk threads {path}"
            ))
        })
}

/// A thread as lines: its number, state, what it is on and its pin, then
/// each comment indented.
fn thread_lines(thread: &Thread) -> String {
    let state = match (&thread.state, &thread.resolved_by) {
        (ThreadState::Resolved, Some(by)) => format!("resolved by {by}"),
        (ThreadState::Resolved, None) => "resolved".into(),
        (ThreadState::Open, _) => "open".into(),
    };
    let on = match (thread.version, thread.proposal_id) {
        (Some(v), Some(id)) => format!("version {v} (from proposal {id})"),
        (Some(v), None) => format!("version {v}"),
        (None, Some(id)) => format!("proposal {id}"),
        (None, None) => "?".into(),
    };
    let mut head = format!("thread {}  {state}  on {on}", thread.number);
    if let Some(pin) = &thread.pin {
        head += &format!("  {}", pin_words(pin));
    }
    let mut lines = vec![head];
    for comment in &thread.comments {
        // Later lines of a body line up under its first.
        let body = comment.body.replace('\n', "\n      ");
        lines.push(format!(
            "    {}  {}: {body}",
            local_time(comment.created_at),
            comment.author
        ));
    }
    lines.join("\n")
}

fn pin_words(pin: &Pin) -> String {
    match (pin.w, pin.h) {
        (Some(w), Some(h)) => format!("at {},{} ({w} x {h})", pin.x, pin.y),
        _ => format!("at {},{}", pin.x, pin.y),
    }
}

fn state_words(list: &ReviewList) -> String {
    let state = match list.state {
        ReviewState::Approved => "approved",
        ReviewState::ChangesRequested => "changes requested",
        ReviewState::Pending => "pending",
        ReviewState::None => "no decision yet",
    };
    match list.waiting_for.is_empty() {
        true => state.into(),
        false => format!("{state}, waiting for {}", names(&list.waiting_for)),
    }
}

fn mentioned(mentions: &[Participant]) -> String {
    match mentions.is_empty() {
        true => String::new(),
        false => format!(" (told {})", names(mentions)),
    }
}

fn names(people: &[Participant]) -> String {
    people
        .iter()
        .map(Participant::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Says on stderr which `@names` reached nobody (no participant of that
/// name may read the file), so a typo is seen; they stay as text.
fn tell_unreached(body: &str, mentions: &[Participant], path: &RepoPath) {
    let names = mentioned_names(body).unwrap_or_default();
    for name in names {
        if !mentions.iter().any(|p| p.name() == name) {
            eprintln!("leasedesk: @{name} is no participant who may read {path}: nobody was told");
        }
    }
}

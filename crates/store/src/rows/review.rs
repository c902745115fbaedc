//! Review's rows: threads and their comments, decisions, the reviewers
//! asked, and inbox items with each participant's read mark.

use super::field::{by_key, int, text, text_opt};
use super::{
    json, millis, parsed, parsed_opt, stored_path, time_at, unsigned, Field, Row, Statement,
};
use crate::error::Result;
use crate::model::*;

spellings! {
    ThreadState: thread_state_str, thread_state {
        Open => "open", Resolved => "resolved"
    } else Resolved;
    ReviewDecision: decision_str, decision {
        Approved => "approved", ChangesRequested => "changes_requested", Commented => "commented"
    } else Commented;
    pub InboxKind: inbox_kind_str, inbox_kind {
        Mention => "mention", ReviewRequested => "review_requested",
        ThreadOnYours => "thread_on_yours", CommentInYours => "comment_in_yours",
        DecisionOnYours => "decision_on_yours"
    } else Mention;
}

/// Where reviews, requests and threads of a target are: `{p}2` (and on) is
/// the target.
fn target_is(p: char, target: ReviewTarget) -> (String, Field) {
    match target {
        ReviewTarget::Version(v) => (format!("version = {p}2"), int(v as i64)),
        ReviewTarget::Proposal(id) => (format!("proposal_id = {p}2"), text(id)),
    }
}

fn target_fields(target: ReviewTarget) -> [Field; 2] {
    match target {
        ReviewTarget::Version(v) => [int(v as i64), Field::Text(None)],
        ReviewTarget::Proposal(id) => [Field::Int(None), text(id)],
    }
}

fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("a pin and an image size are always JSON")
}

const THREAD_COLUMNS: &str = "t.id, t.artifact_id, t.number, t.version, t.proposal_id, \
     t.pin, t.image, t.state, t.author, t.created_at, t.resolved_by, t.resolved_at";

/// A thread as stored, without its comments.
pub fn thread(row: &(impl Row + ?Sized)) -> Result<Thread> {
    Ok(Thread {
        id: parsed(row, 0)?,
        artifact_id: parsed(row, 1)?,
        number: unsigned(row.int(2)?)?,
        version: row.int_opt(3)?.map(unsigned).transpose()?,
        proposal_id: parsed_opt(row, 4)?,
        pin: json(row, 5)?,
        image: json(row, 6)?,
        state: thread_state(&row.text(7)?),
        author: parsed(row, 8)?,
        created_at: time_at(row, 9)?,
        resolved_by: parsed_opt(row, 10)?,
        resolved_at: row.int_opt(11)?.map(super::time).transpose()?,
        comments: Vec::new(),
    })
}

pub fn select_thread(p: char, id: ThreadId) -> Statement {
    by_key(
        format!("SELECT {THREAD_COLUMNS} FROM review_threads t WHERE t.id = {p}1"),
        id,
    )
}

/// The `WHERE` of a file's threads as `filter` picks them (`{p}1` the file).
fn threads_where(p: char, filter: &ThreadQuery) -> (String, Vec<Field>) {
    let mut sql = format!("t.artifact_id = {p}1");
    let mut params = Vec::new();
    if let Some(version) = filter.version {
        params.push(int(version as i64));
        sql.push_str(&format!(" AND t.version = {p}{}", params.len() + 1));
    }
    if let Some(proposal) = filter.proposal {
        params.push(text(proposal));
        sql.push_str(&format!(" AND t.proposal_id = {p}{}", params.len() + 1));
    }
    if let Some(state) = filter.state {
        sql.push_str(&format!(" AND t.state = '{}'", thread_state_str(state)));
    }
    (sql, params)
}

/// A file's threads by number.
pub fn select_threads(p: char, artifact: ArtifactId, filter: &ThreadQuery) -> Statement {
    let (predicate, params) = threads_where(p, filter);
    Statement::new(
        format!(
            "SELECT {THREAD_COLUMNS} FROM review_threads t WHERE {predicate} ORDER BY t.number"
        ),
        [text(artifact)].into_iter().chain(params).collect(),
    )
}

const COMMENT_COLUMNS: &str = "c.id, c.thread_id, c.author, c.body, c.mentions, c.created_at";

pub fn comment(row: &(impl Row + ?Sized)) -> Result<Comment> {
    let mentions = row.text(4)?;
    Ok(Comment {
        id: parsed(row, 0)?,
        thread_id: parsed(row, 1)?,
        author: parsed(row, 2)?,
        body: row.text(3)?,
        mentions: mentions
            .lines()
            .map(|line| {
                line.parse().map_err(|e| {
                    crate::error::Error::Internal(format!("a stored mention cannot be read: {e}"))
                })
            })
            .collect::<Result<_>>()?,
        created_at: time_at(row, 5)?,
    })
}

/// The comments of a file's threads as `filter` picks them, in each
/// thread's order (threads in no order: the caller groups them).
pub fn select_thread_comments(p: char, artifact: ArtifactId, filter: &ThreadQuery) -> Statement {
    let everything =
        filter.version.is_none() && filter.proposal.is_none() && filter.state.is_none();
    if everything {
        // One walk of the file's comments, without its threads.
        return by_key(
            format!("SELECT {COMMENT_COLUMNS} FROM review_comments c WHERE c.artifact_id = {p}1 ORDER BY c.thread_id, c.ord"),
            artifact,
        );
    }
    let (predicate, params) = threads_where(p, filter);
    Statement::new(
        format!(
            "SELECT {COMMENT_COLUMNS} FROM review_comments c
             JOIN review_threads t ON t.id = c.thread_id
             WHERE c.artifact_id = {p}1 AND {predicate} ORDER BY c.thread_id, c.ord"
        ),
        [text(artifact)].into_iter().chain(params).collect(),
    )
}

/// Who has commented in a thread, each once.
pub fn select_comment_authors(p: char, thread: ThreadId) -> Statement {
    by_key(
        format!("SELECT DISTINCT author FROM review_comments WHERE thread_id = {p}1"),
        thread,
    )
}

/// One thread's comments, in order.
pub fn select_comments(p: char, thread: ThreadId) -> Statement {
    by_key(
        format!("SELECT {COMMENT_COLUMNS} FROM review_comments c WHERE c.thread_id = {p}1 ORDER BY c.ord"),
        thread,
    )
}

/// How many threads a file has, its highest number, and the bytes of their comments.
pub fn select_thread_numbers(p: char, artifact: ArtifactId) -> Statement {
    by_key(
        format!(
            "SELECT count(*), COALESCE(MAX(number), 0), CAST(COALESCE(SUM(body_bytes), 0) AS BIGINT)
             FROM review_threads WHERE artifact_id = {p}1"
        ),
        artifact,
    )
}

/// A thread's highest comment number (its count: none is removed).
pub fn select_comment_count(p: char, thread: ThreadId) -> Statement {
    by_key(
        format!("SELECT COALESCE(MAX(ord), 0) FROM review_comments WHERE thread_id = {p}1"),
        thread,
    )
}

pub fn insert_thread(p: char, t: &Thread) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO review_threads (id, artifact_id, number, version, proposal_id, pin, image,
                 state, author, created_at, resolved_by, resolved_at, body_bytes)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9, {p}10, NULL, NULL, 0)"
        ),
        vec![
            text(t.id),
            text(t.artifact_id),
            int(t.number as i64),
            Field::Int(t.version.map(|v| v as i64)),
            text_opt(t.proposal_id),
            text_opt(t.pin.as_ref().map(to_json)),
            text_opt(t.image.as_ref().map(to_json)),
            text(thread_state_str(t.state)),
            text(&t.author),
            int(millis(t.created_at)),
        ],
    )
}

/// Resolves or reopens a thread.
pub fn set_thread_state(p: char, t: &Thread) -> Statement {
    Statement::new(
        format!(
            "UPDATE review_threads SET state = {p}2, resolved_by = {p}3, resolved_at = {p}4
             WHERE id = {p}1"
        ),
        vec![
            text(t.id),
            text(thread_state_str(t.state)),
            text_opt(t.resolved_by.as_ref()),
            Field::Int(t.resolved_at.map(millis)),
        ],
    )
}

/// Counts a new comment's bytes in its thread's.
pub fn count_comment_bytes(p: char, c: &Comment) -> Statement {
    Statement::new(
        format!("UPDATE review_threads SET body_bytes = body_bytes + {p}2 WHERE id = {p}1"),
        vec![text(c.thread_id), int(c.body.len() as i64)],
    )
}

pub fn insert_comment(p: char, c: &Comment, artifact: ArtifactId, ord: u64) -> Statement {
    let mentions: Vec<&str> = c.mentions.iter().map(Participant::as_str).collect();
    Statement::new(
        format!(
            "INSERT INTO review_comments (id, thread_id, artifact_id, ord, author, body, mentions, created_at)
             VALUES ({p}1, {p}2, {p}8, {p}3, {p}4, {p}5, {p}6, {p}7)"
        ),
        vec![
            text(c.id),
            text(c.thread_id),
            int(ord as i64),
            text(&c.author),
            text(&c.body),
            text(mentions.join("\n")),
            int(millis(c.created_at)),
            text(artifact),
        ],
    )
}

const REVIEW_COLUMNS: &str =
    "id, artifact_id, version, proposal_id, reviewer, decision, message, created_at";

pub fn review(row: &(impl Row + ?Sized)) -> Result<Review> {
    Ok(Review {
        id: parsed(row, 0)?,
        artifact_id: parsed(row, 1)?,
        version: row.int_opt(2)?.map(unsigned).transpose()?,
        proposal_id: parsed_opt(row, 3)?,
        reviewer: parsed(row, 4)?,
        decision: decision(&row.text(5)?),
        message: row.text_opt(6)?,
        created_at: time_at(row, 7)?,
    })
}

/// A target's decisions, oldest first.
pub fn select_reviews(p: char, artifact: ArtifactId, target: ReviewTarget) -> Statement {
    let (predicate, param) = target_is(p, target);
    Statement::new(
        format!("SELECT {REVIEW_COLUMNS} FROM reviews WHERE artifact_id = {p}1 AND {predicate} ORDER BY ord"),
        vec![text(artifact), param],
    )
}

pub fn select_review(p: char, id: ReviewId) -> Statement {
    by_key(
        format!("SELECT {REVIEW_COLUMNS} FROM reviews WHERE id = {p}1"),
        id,
    )
}

/// A file's highest decision number.
pub fn select_review_count(p: char, artifact: ArtifactId) -> Statement {
    by_key(
        format!("SELECT COALESCE(MAX(ord), 0) FROM reviews WHERE artifact_id = {p}1"),
        artifact,
    )
}

pub fn insert_review(p: char, r: &Review, ord: u64) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO reviews (id, artifact_id, ord, version, proposal_id, reviewer, decision, message, created_at)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9)"
        ),
        vec![
            text(r.id),
            text(r.artifact_id),
            int(ord as i64),
            Field::Int(r.version.map(|v| v as i64)),
            text_opt(r.proposal_id),
            text(&r.reviewer),
            text(decision_str(r.decision)),
            text_opt(r.message.as_ref()),
            int(millis(r.created_at)),
        ],
    )
}

/// The reviewers asked to look at a target, in the order asked.
pub fn select_review_requests(p: char, artifact: ArtifactId, target: ReviewTarget) -> Statement {
    let (predicate, param) = target_is(p, target);
    Statement::new(
        format!(
            "SELECT reviewer FROM review_requests WHERE artifact_id = {p}1 AND {predicate}
             ORDER BY created_at, reviewer"
        ),
        vec![text(artifact), param],
    )
}

pub fn insert_review_request(
    p: char,
    artifact: ArtifactId,
    target: ReviewTarget,
    reviewer: &Participant,
    by: &Participant,
    now: Timestamp,
) -> Statement {
    let [version, proposal] = target_fields(target);
    Statement::new(
        format!(
            "INSERT INTO review_requests (artifact_id, version, proposal_id, reviewer, requested_by, created_at)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6)"
        ),
        vec![text(artifact), version, proposal, text(reviewer), text(by), int(millis(now))],
    )
}

/// Moves what was said about a proposal to what it became: the version it
/// was accepted as (keeping the proposal named), or the proposal a rebuild
/// made. One statement a table.
pub fn follow_proposal(p: char, from: ProposalId, to: ReviewTarget) -> Vec<Statement> {
    ["review_threads", "reviews", "review_requests"]
        .into_iter()
        .map(|table| {
            let set = match to {
                ReviewTarget::Version(_) => "version",
                ReviewTarget::Proposal(_) => "proposal_id",
            };
            let [version, proposal] = target_fields(to);
            let value = match to {
                ReviewTarget::Version(_) => version,
                ReviewTarget::Proposal(_) => proposal,
            };
            Statement::new(
                format!("UPDATE {table} SET {set} = {p}2 WHERE proposal_id = {p}1"),
                vec![text(from), value],
            )
        })
        .collect()
}

/// Takes `n` inbox numbers: answers the last (SQLite's one writer at a
/// time keeps them in commit order; PostgreSQL numbers its items at commit).
pub fn take_inbox_seqs(p: char, n: u64) -> Statement {
    Statement::new(
        format!("UPDATE inbox_counter SET last_seq = last_seq + {p}1 RETURNING last_seq"),
        vec![int(n as i64)],
    )
}

/// An inbox item to add, numbered as it is written.
#[derive(Clone, Debug)]
pub struct NewInboxItem {
    pub participant: Participant,
    pub kind: InboxKind,
    pub artifact_id: ArtifactId,
    pub thread_id: Option<ThreadId>,
    pub review_id: Option<ReviewId>,
    pub from: Participant,
    pub at: Timestamp,
}

pub fn insert_inbox_item(p: char, item: &NewInboxItem, seq: u64) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO inbox_items (participant, seq, kind, artifact_id, thread_id, review_id, from_participant, at)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8)"
        ),
        vec![
            text(&item.participant),
            int(seq as i64),
            text(inbox_kind_str(item.kind)),
            text(item.artifact_id),
            text_opt(item.thread_id),
            text_opt(item.review_id),
            text(&item.from),
            int(millis(item.at)),
        ],
    )
}

/// One page of a participant's inbox: after `bound` oldest first, or before
/// it newest first; only past `unread_after` if given. `read` is left
/// false: the caller knows the read mark.
pub fn select_inbox(
    p: char,
    participant: &Participant,
    older: bool,
    bound: u64,
    unread_after: Option<u64>,
    limit: u32,
) -> Statement {
    let (compare, order) = if older { ("<", "DESC") } else { (">", "ASC") };
    Statement::new(
        format!(
            "SELECT i.seq, i.kind, i.artifact_id, a.path, i.thread_id, i.review_id, i.from_participant, i.at
             FROM inbox_items i JOIN artifacts a ON a.id = i.artifact_id
             WHERE i.participant = {p}1 AND i.seq {compare} {p}2 AND i.seq > {p}3
             ORDER BY i.seq {order} LIMIT {p}4"
        ),
        vec![
            text(participant),
            int(bound.min(i64::MAX as u64) as i64),
            int(unread_after.unwrap_or(0) as i64),
            int(i64::from(limit)),
        ],
    )
}

pub fn inbox_item(row: &(impl Row + ?Sized)) -> Result<InboxItem> {
    Ok(InboxItem {
        seq: unsigned(row.int(0)?)?,
        kind: inbox_kind(&row.text(1)?),
        artifact_id: parsed(row, 2)?,
        path: stored_path(row, 3)?,
        thread_id: parsed_opt(row, 4)?,
        review_id: parsed_opt(row, 5)?,
        from: parsed(row, 6)?,
        at: time_at(row, 7)?,
        read: false,
    })
}

/// How many of a participant's items are past `after`, counting at most `most`.
pub fn select_inbox_count(p: char, participant: &Participant, after: u64, most: u64) -> Statement {
    Statement::new(
        format!(
            "SELECT count(*) FROM (SELECT 1 FROM inbox_items
             WHERE participant = {p}1 AND seq > {p}2 LIMIT {p}3) newest"
        ),
        vec![
            text(participant),
            int(after.min(i64::MAX as u64) as i64),
            int(most as i64),
        ],
    )
}

/// The paths of a participant's newest `most` items past `after`.
pub fn select_inbox_paths(p: char, participant: &Participant, after: u64, most: u64) -> Statement {
    Statement::new(
        format!(
            "SELECT a.path FROM inbox_items i JOIN artifacts a ON a.id = i.artifact_id
             WHERE i.participant = {p}1 AND i.seq > {p}2 ORDER BY i.seq DESC LIMIT {p}3"
        ),
        vec![
            text(participant),
            int(after.min(i64::MAX as u64) as i64),
            int(most as i64),
        ],
    )
}

pub fn select_inbox_read(p: char, participant: &Participant) -> Statement {
    by_key(
        format!("SELECT up_to FROM inbox_reads WHERE participant = {p}1"),
        participant,
    )
}

/// Moves a participant's read mark up to `up_to` (never back).
pub fn put_inbox_read(p: char, participant: &Participant, up_to: u64) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO inbox_reads (participant, up_to) VALUES ({p}1, {p}2)
             ON CONFLICT (participant) DO UPDATE SET up_to = excluded.up_to
             WHERE inbox_reads.up_to < excluded.up_to"
        ),
        vec![text(participant), int(up_to.min(i64::MAX as u64) as i64)],
    )
}

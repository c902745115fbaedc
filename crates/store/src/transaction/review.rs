//! Review's rows: threads and comments, decisions, the reviewers asked,
//! and each participant's inbox with its read mark.

use super::{fetch_all, fetch_first, fetch_one, Sql};
use crate::error::Result;
use crate::model::*;
use crate::rows::{self, count, unsigned, NewInboxItem};

/// Review's rows. Part of every [`Tx`](super::Tx). The rules lock a file
/// (by reading it in a write) before they change what is said about it.
pub trait ReviewRows: Sql {
    /// A thread without its comments.
    fn thread(&self, id: ThreadId) -> Result<Option<Thread>> {
        fetch_first(self, rows::select_thread(self.p(), id), |r| rows::thread(r))
    }

    /// A thread with its comments.
    fn thread_with_comments(&self, id: ThreadId) -> Result<Option<Thread>> {
        let Some(mut thread) = self.thread(id)? else {
            return Ok(None);
        };
        thread.comments = fetch_all(self, rows::select_comments(self.p(), id), |r| {
            rows::comment(r)
        })?;
        Ok(Some(thread))
    }

    /// A file's threads as `filter` picks them, by number, with their comments.
    fn threads(&self, artifact: ArtifactId, filter: &ThreadQuery) -> Result<Vec<Thread>> {
        let mut threads = fetch_all(
            self,
            rows::select_threads(self.p(), artifact, filter),
            |r| rows::thread(r),
        )?;
        let comments = fetch_all(
            self,
            rows::select_thread_comments(self.p(), artifact, filter),
            |r| rows::comment(r),
        )?;
        // Each thread's comments come together, in order.
        let at: std::collections::HashMap<ThreadId, usize> =
            threads.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        for comment in comments {
            if let Some(&i) = at.get(&comment.thread_id) {
                threads[i].comments.push(comment);
            }
        }
        Ok(threads)
    }

    /// How many threads a file has, its highest number, and the bytes of
    /// their comments.
    fn thread_numbers(&self, artifact: ArtifactId) -> Result<(u64, u64, u64)> {
        fetch_one(self, rows::select_thread_numbers(self.p(), artifact), |r| {
            Ok((count(r, 0)?, unsigned(r.int(1)?)?, unsigned(r.int(2)?)?))
        })
    }

    fn insert_thread(&self, thread: &Thread) -> Result<()> {
        self.queue(rows::insert_thread(self.p(), thread))
    }

    /// Writes a thread's state, who resolved it and when.
    fn set_thread_state(&self, thread: &Thread) -> Result<()> {
        self.queue(rows::set_thread_state(self.p(), thread))
    }

    /// How many comments a thread has.
    fn comment_count(&self, thread: ThreadId) -> Result<u64> {
        fetch_one(self, rows::select_comment_count(self.p(), thread), |r| {
            unsigned(r.int(0)?)
        })
    }

    /// Who has commented in a thread, each once.
    fn comment_authors(&self, thread: ThreadId) -> Result<Vec<Participant>> {
        fetch_all(self, rows::select_comment_authors(self.p(), thread), |r| {
            rows::parsed(r, 0)
        })
    }

    /// Adds a thread's comment number `ord` (its count after it).
    fn insert_comment(&self, comment: &Comment, artifact: ArtifactId, ord: u64) -> Result<()> {
        self.queue(rows::insert_comment(self.p(), comment, artifact, ord))?;
        self.queue(rows::count_comment_bytes(self.p(), comment))
    }

    fn review(&self, id: ReviewId) -> Result<Option<Review>> {
        fetch_first(self, rows::select_review(self.p(), id), |r| rows::review(r))
    }

    /// A target's decisions, oldest first.
    fn reviews(&self, artifact: ArtifactId, target: ReviewTarget) -> Result<Vec<Review>> {
        fetch_all(
            self,
            rows::select_reviews(self.p(), artifact, target),
            |r| rows::review(r),
        )
    }

    /// How many decisions a file has.
    fn review_count(&self, artifact: ArtifactId) -> Result<u64> {
        fetch_one(self, rows::select_review_count(self.p(), artifact), |r| {
            unsigned(r.int(0)?)
        })
    }

    /// Adds a decision: the file's newest.
    fn insert_review(&self, review: &Review) -> Result<()> {
        let last = self.review_count(review.artifact_id)?;
        self.queue(rows::insert_review(self.p(), review, last + 1))
    }

    /// The reviewers asked to look at a target, in the order asked.
    fn review_requests(
        &self,
        artifact: ArtifactId,
        target: ReviewTarget,
    ) -> Result<Vec<Participant>> {
        fetch_all(
            self,
            rows::select_review_requests(self.p(), artifact, target),
            |r| rows::parsed(r, 0),
        )
    }

    fn insert_review_request(
        &self,
        artifact: ArtifactId,
        target: ReviewTarget,
        reviewer: &Participant,
        by: &Participant,
        now: Timestamp,
    ) -> Result<()> {
        self.queue(rows::insert_review_request(
            self.p(),
            artifact,
            target,
            reviewer,
            by,
            now,
        ))
    }

    /// Moves a proposal's threads, decisions and requests to what it became.
    fn follow_proposal(&self, from: ProposalId, to: ReviewTarget) -> Result<()> {
        for statement in rows::follow_proposal(self.p(), from, to) {
            self.queue(statement)?;
        }
        Ok(())
    }

    /// Adds inbox items, numbered after every item committed before them.
    /// PostgreSQL numbers them at commit instead (see its `ReviewRows`).
    fn add_inbox_items(&self, items: Vec<NewInboxItem>) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let n = items.len() as u64;
        let last = fetch_one(self, rows::take_inbox_seqs(self.p(), n), |r| {
            unsigned(r.int(0)?)
        })?;
        for (seq, item) in (last + 1 - n..).zip(&items) {
            self.queue(rows::insert_inbox_item(self.p(), item, seq))?;
        }
        Ok(())
    }

    /// One page of a participant's inbox (see [`rows::select_inbox`]).
    fn inbox(
        &self,
        participant: &Participant,
        older: bool,
        bound: u64,
        unread_after: Option<u64>,
        limit: u32,
    ) -> Result<Vec<InboxItem>> {
        let page = rows::select_inbox(self.p(), participant, older, bound, unread_after, limit);
        fetch_all(self, page, |r| rows::inbox_item(r))
    }

    /// How many of a participant's items are past `after`, counting at most `most`.
    fn inbox_count(&self, participant: &Participant, after: u64, most: u64) -> Result<u64> {
        let counted = rows::select_inbox_count(self.p(), participant, after, most);
        fetch_one(self, counted, |r| count(r, 0))
    }

    /// The paths of a participant's newest `most` items past `after`.
    fn inbox_paths(
        &self,
        participant: &Participant,
        after: u64,
        most: u64,
    ) -> Result<Vec<RepoPath>> {
        let newest = rows::select_inbox_paths(self.p(), participant, after, most);
        fetch_all(self, newest, |r| rows::stored_path(r, 0))
    }

    /// Every item up to this one is read (0: none).
    fn inbox_read_mark(&self, participant: &Participant) -> Result<u64> {
        let found = fetch_first(self, rows::select_inbox_read(self.p(), participant), |r| {
            unsigned(r.int(0)?)
        })?;
        Ok(found.unwrap_or(0))
    }

    /// Moves the read mark up to `up_to` (never back).
    fn mark_inbox_read(&self, participant: &Participant, up_to: u64) -> Result<()> {
        self.queue(rows::put_inbox_read(self.p(), participant, up_to))
    }
}

//! Review as the app does it: a file's threads (every version's and
//! proposal's, for the window to pin on the picture it shows), a thread
//! opened on a version or a proposal with its pin and the picture's size, a
//! comment, a thread resolved or reopened, a reviewer's decision and the
//! review state of a version or a proposal; and which ledger events are
//! review news for a file on screen ([`is_review_event`]). Who may do what
//! is the rules'; nothing here changes a lease.

use super::offline::Action;
use super::Desk;
use crate::error::{Error, Result};
use crate::model::*;

/// The events a review writes: the window reads the file's threads and
/// review states again when one names the file it shows.
pub const REVIEW_EVENTS: [&str; 6] = [
    "thread.opened",
    "comment.added",
    "thread.resolved",
    "thread.reopened",
    "review.submitted",
    "review.requested",
];

/// Whether `event` is one a review writes.
pub fn is_review_event(event: &Event) -> bool {
    REVIEW_EVENTS.contains(&event.kind.as_str())
}

/// Exactly one of a version and a proposal, as the window names what a
/// thread or a decision is on.
fn target(version: Option<u64>, proposal: Option<ProposalId>) -> Result<ReviewTarget> {
    Ok(ReviewTarget::from_parts(version, proposal)?)
}

/// A comment's text as the window sends it: blank is no comment, refused
/// here so that nothing is asked of the server for it.
fn said(body: &str) -> Result<&str> {
    let body = body.trim();
    if body.is_empty() {
        return Err(Error::Invalid("say something: the comment is empty".into()));
    }
    Ok(body)
}

impl Desk {
    /// Every thread of `artifact`, on any version or proposal, by number,
    /// with their comments: the window picks those of the picture it shows.
    pub async fn threads(&self, artifact: ArtifactId) -> Result<Vec<Thread>> {
        let fetched = self.backend.threads(artifact, ThreadQuery::default()).await;
        let mut threads = self.refused_offline(Action::Read, fetched)?;
        threads.sort_by_key(|t| t.number);
        Ok(threads)
    }

    /// Opens a thread on version `version` or proposal `proposal` of
    /// `artifact`, pinned at `pin` (fractions of the picture) on a picture
    /// of `image`'s size, with its first comment.
    pub async fn open_thread(
        &self,
        artifact: ArtifactId,
        version: Option<u64>,
        proposal: Option<ProposalId>,
        pin: Option<Pin>,
        image: Option<ImageSize>,
        body: &str,
    ) -> Result<Thread> {
        target(version, proposal)?;
        if let Some(pin) = &pin {
            pin.check()?;
        }
        let new = NewThread {
            version,
            proposal_id: proposal,
            pin,
            // A size without a pin says nothing.
            image: image.filter(|_| pin.is_some()),
            body: said(body)?.to_owned(),
        };
        let outcome = self.backend.open_thread(artifact, new).await;
        self.refused_offline(Action::Comment, outcome)
    }

    /// Answers in a thread.
    pub async fn comment(&self, thread: ThreadId, body: &str) -> Result<Comment> {
        let outcome = self.backend.comment(thread, said(body)?).await;
        self.refused_offline(Action::Comment, outcome)
    }

    /// Resolves a thread (`resolved`), or reopens it.
    pub async fn resolve_thread(&self, thread: ThreadId, resolved: bool) -> Result<Thread> {
        let outcome = self.backend.resolve_thread(thread, resolved).await;
        self.refused_offline(Action::Comment, outcome)
    }

    /// Your decision on version `version` or proposal `proposal`, with a
    /// message (none when blank); it replaces your earlier one.
    pub async fn submit_review(
        &self,
        artifact: ArtifactId,
        version: Option<u64>,
        proposal: Option<ProposalId>,
        decision: ReviewDecision,
        message: Option<&str>,
    ) -> Result<Review> {
        target(version, proposal)?;
        let new = NewReview {
            version,
            proposal_id: proposal,
            decision,
            message: message
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
        };
        let outcome = self.backend.review(artifact, new).await;
        self.refused_offline(Action::Comment, outcome)
    }

    /// The decisions on version `version` or proposal `proposal` and its
    /// review state.
    pub async fn review_state(
        &self,
        artifact: ArtifactId,
        version: Option<u64>,
        proposal: Option<ProposalId>,
    ) -> Result<ReviewList> {
        let on = target(version, proposal)?;
        let fetched = self.backend.reviews(artifact, on).await;
        self.refused_offline(Action::Read, fetched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str) -> Event {
        Event {
            seq: 3,
            id: uuid::Uuid::new_v4(),
            kind: kind.into(),
            artifact_id: Some(ArtifactId::new()),
            participant: None,
            holder: None,
            at: chrono::Utc::now(),
            data: serde_json::json!({}),
        }
    }

    #[test]
    fn only_what_a_review_writes_is_review_news() {
        for kind in REVIEW_EVENTS {
            assert!(is_review_event(&event(kind)), "{kind}");
        }
        for kind in [
            "lease.acquired",
            "proposal.accepted",
            "request.opened",
            "thread",
        ] {
            assert!(!is_review_event(&event(kind)), "{kind}");
        }
    }

    #[test]
    fn a_thread_or_a_decision_is_on_one_version_or_one_proposal() {
        assert_eq!(target(Some(3), None).unwrap(), ReviewTarget::Version(3));
        let id = ProposalId::new();
        assert_eq!(target(None, Some(id)).unwrap(), ReviewTarget::Proposal(id));
        assert!(matches!(target(None, None), Err(Error::Invalid(_))));
        assert!(matches!(target(Some(1), Some(id)), Err(Error::Invalid(_))));
    }

    #[test]
    fn a_blank_comment_is_refused_before_it_is_sent() {
        assert!(matches!(said(" \n "), Err(Error::Invalid(_))));
        assert_eq!(said("  fix the sun\n").unwrap(), "fix the sun");
    }
}

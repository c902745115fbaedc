//! Review on the work (API.md "Review (additions)"): threads pinned to a
//! version's or a proposal's picture, comments and @mentions, resolving,
//! decisions and the review state, review requests, the inbox with its read
//! marks, what follows a proposal when it is accepted or rebuilt, and folder
//! permissions throughout. On every backend.

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use crate::harness::*;

mod bounds;
mod decisions;
mod inbox;
mod threads;

fn on_version(version: u64, body: &str) -> NewThread {
    NewThread {
        version: Some(version),
        body: body.into(),
        ..NewThread::default()
    }
}

fn point(x: f64, y: f64) -> Pin {
    Pin {
        x,
        y,
        w: None,
        h: None,
    }
}

fn invalid<T: std::fmt::Debug>(result: Result<T, Error>, what: &str) {
    assert!(
        matches!(result, Err(Error::Invalid(_))),
        "{what}: {result:?}"
    );
}

fn not_found<T: std::fmt::Debug>(result: Result<T, Error>, what: &str) {
    assert!(
        matches!(result, Err(Error::NotFound(_))),
        "{what}: {result:?}"
    );
}

fn decision(version: u64, decision: ReviewDecision) -> NewReview {
    NewReview {
        version: Some(version),
        decision,
        ..NewReview::default()
    }
}

/// A request to `reviewers` to look at version `version`.
fn asking(version: u64, reviewers: &[&str]) -> NewReviewRequest {
    NewReviewRequest {
        version: Some(version),
        reviewers: reviewers.iter().copied().map(participant).collect(),
        ..NewReviewRequest::default()
    }
}

async fn inbox_of(backend: &dyn Backend) -> InboxPage {
    backend.inbox(InboxQuery::default()).await.unwrap()
}

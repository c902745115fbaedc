//! Decisions and the review state, and what follows a proposal when it is
//! accepted or rebuilt.

use super::*;

async fn the_review_state_follows_each_reviewers_newest_decision(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let state = |list: ReviewList| (list.state, list.waiting_for);
    let target = ReviewTarget::Version(1);
    assert_eq!(
        state(f.alice.reviews(a.id, target).await.unwrap()),
        (ReviewState::None, vec![])
    );
    f.alice
        .request_review(a.id, asking(1, &["user:bob"]))
        .await
        .unwrap();
    assert_eq!(
        state(f.alice.reviews(a.id, target).await.unwrap()),
        (ReviewState::Pending, vec![participant("user:bob")])
    );
    f.bob
        .review(a.id, decision(1, ReviewDecision::Commented))
        .await
        .unwrap();
    assert_eq!(
        f.alice.reviews(a.id, target).await.unwrap().state,
        ReviewState::Pending,
        "a comment decides nothing"
    );
    f.bob
        .review(a.id, decision(1, ReviewDecision::Approved))
        .await
        .unwrap();
    assert_eq!(
        state(f.alice.reviews(a.id, target).await.unwrap()),
        (ReviewState::Approved, vec![])
    );
    f.admin
        .review(a.id, decision(1, ReviewDecision::ChangesRequested))
        .await
        .unwrap();
    assert_eq!(
        f.alice.reviews(a.id, target).await.unwrap().state,
        ReviewState::ChangesRequested
    );
    let approved = f
        .admin
        .review(
            a.id,
            NewReview {
                message: Some("better now".into()),
                ..decision(1, ReviewDecision::Approved)
            },
        )
        .await
        .unwrap();
    assert_eq!(approved.message.as_deref(), Some("better now"));
    let list = f.bob.reviews(a.id, target).await.unwrap();
    assert_eq!(
        list.state,
        ReviewState::Approved,
        "the newest decision is each reviewer's"
    );
    assert_eq!(list.reviews.len(), 4);
    assert_eq!(f.events_of("review.submitted").await.len(), 4);
    assert_eq!(f.events_of("review.requested").await.len(), 1);

    invalid(
        f.alice
            .request_review(a.id, asking(1, &["user:alice"]))
            .await,
        "oneself",
    );
    invalid(
        f.alice
            .request_review(a.id, asking(1, &["user:mallory"]))
            .await,
        "a stranger",
    );
    invalid(f.alice.request_review(a.id, asking(1, &[])).await, "nobody");
    invalid(
        f.bob
            .review(a.id, decision(3, ReviewDecision::Approved))
            .await,
        "a version that is not",
    );
    invalid(
        f.bob
            .review(
                a.id,
                NewReview {
                    decision: ReviewDecision::Approved,
                    ..NewReview::default()
                },
            )
            .await,
        "no target",
    );
    invalid(
        f.bob.reviews(a.id, ReviewTarget::Version(9)).await,
        "reviews of a version that is not",
    );
    assert_eq!(
        f.bob.reviews(a.id, target).await.unwrap().reviews.len(),
        4,
        "nothing more was written"
    );
}

async fn threads_and_reviews_follow_a_proposal_accepted_or_rebuilt(f: Fixture) {
    // Rebuilt: the new proposal shows them.
    let (a, proposal) = f.stale_proposal("a.psd", b"alice's").await;
    let on_proposal = NewThread {
        proposal_id: Some(proposal.id),
        pin: Some(point(0.5, 0.5)),
        body: "the sky is too blue".into(),
        ..NewThread::default()
    };
    let thread = f.bob.open_thread(a.id, on_proposal).await.unwrap();
    assert_eq!(
        (thread.version, thread.proposal_id),
        (None, Some(proposal.id))
    );
    f.bob
        .review(
            a.id,
            NewReview {
                proposal_id: Some(proposal.id),
                decision: ReviewDecision::ChangesRequested,
                ..NewReview::default()
            },
        )
        .await
        .unwrap();
    let alices = inbox_of(f.alice.as_ref()).await;
    assert_eq!(
        alices.items.iter().map(|i| i.kind).collect::<Vec<_>>(),
        [InboxKind::ThreadOnYours, InboxKind::DecisionOnYours],
        "alice made the proposal"
    );
    check_out_and_in_as(f.bob.as_ref(), a.id, b"bob's again").await;
    let rebuilt = f.alice.rebuild_proposal(proposal.id).await.unwrap();
    let on_new = f
        .bob
        .threads(
            a.id,
            ThreadQuery {
                proposal: Some(rebuilt.id),
                ..ThreadQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(on_new.iter().map(|t| t.id).collect::<Vec<_>>(), [thread.id]);
    let reviews = f
        .bob
        .reviews(a.id, ReviewTarget::Proposal(rebuilt.id))
        .await
        .unwrap();
    assert_eq!(reviews.state, ReviewState::ChangesRequested);
    assert!(f
        .bob
        .threads(
            a.id,
            ThreadQuery {
                proposal: Some(proposal.id),
                ..ThreadQuery::default()
            }
        )
        .await
        .unwrap()
        .is_empty());

    // Accepted: the version it becomes shows them.
    f.bob
        .review(
            a.id,
            NewReview {
                proposal_id: Some(rebuilt.id),
                decision: ReviewDecision::Approved,
                ..NewReview::default()
            },
        )
        .await
        .unwrap();
    f.alice.accept_proposal(rebuilt.id).await.unwrap();
    let head = f.artifact(a.id).await.head.version;
    let on_version = f
        .bob
        .threads(
            a.id,
            ThreadQuery {
                version: Some(head),
                ..ThreadQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(on_version.len(), 1);
    assert_eq!(
        (on_version[0].version, on_version[0].proposal_id),
        (Some(head), Some(rebuilt.id))
    );
    assert_eq!(on_version[0].pin, Some(point(0.5, 0.5)));
    assert_eq!(
        f.bob
            .reviews(a.id, ReviewTarget::Version(head))
            .await
            .unwrap()
            .state,
        ReviewState::Approved
    );
}

crate::contract!(
    the_review_state_follows_each_reviewers_newest_decision,
    threads_and_reviews_follow_a_proposal_accepted_or_rebuilt,
);

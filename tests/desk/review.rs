//! Review through the desk, as the window does it: a thread pinned on a
//! version, answered, resolved and reopened; a decision and the review
//! state; what the desk refuses before asking the server.

use leasedesk::Error;

use super::*;

/// bob pins a thread on version 1, alice answers and resolves it, bob
/// reopens it; every thread of the file is listed by number with its
/// comments; alice approves and the state says so.
async fn a_pinned_thread_is_answered_resolved_and_reopened(f: Fixture) {
    let (alice, bob) = (desk_for(&f, &f.alice, "alice"), desk_for(&f, &f.bob, "bob"));
    let a = f
        .alice
        .import(&path("poster.png"), bytes(b"v1"))
        .await
        .unwrap();
    let pin = Pin {
        x: 0.25,
        y: 0.3,
        w: None,
        h: None,
    };
    let size = ImageSize {
        width: 640,
        height: 400,
    };
    let opened = bob
        .open_thread(
            a.id,
            Some(1),
            None,
            Some(pin),
            Some(size),
            "  The sun sits too low\n",
        )
        .await
        .unwrap();
    assert_eq!((opened.number, opened.version), (1, Some(1)));
    assert_eq!((opened.pin, opened.image), (Some(pin), Some(size)));
    assert_eq!(opened.comments[0].body, "The sun sits too low", "trimmed");
    // Not pinned: no picture size is kept for it.
    let loose = alice
        .open_thread(a.id, Some(1), None, None, Some(size), "And the title?")
        .await
        .unwrap();
    assert_eq!((loose.number, loose.pin, loose.image), (2, None, None));

    alice.comment(opened.id, "Raised it").await.unwrap();
    let resolved = alice.resolve_thread(opened.id, true).await.unwrap();
    assert_eq!(resolved.state, ThreadState::Resolved);
    let reopened = bob.resolve_thread(opened.id, false).await.unwrap();
    assert_eq!(reopened.state, ThreadState::Open);

    let threads = bob.threads(a.id).await.unwrap();
    let numbers: Vec<u64> = threads.iter().map(|t| t.number).collect();
    assert_eq!(numbers, [1, 2], "every thread of the file, by number");
    let said: Vec<&str> = threads[0]
        .comments
        .iter()
        .map(|c| c.body.as_str())
        .collect();
    assert_eq!(said, ["The sun sits too low", "Raised it"]);

    let before = bob.review_state(a.id, Some(1), None).await.unwrap();
    assert_eq!(before.state, ReviewState::None);
    alice
        .submit_review(a.id, Some(1), None, ReviewDecision::Approved, Some("  "))
        .await
        .unwrap();
    let after = bob.review_state(a.id, Some(1), None).await.unwrap();
    assert_eq!(after.state, ReviewState::Approved);
    assert_eq!(after.reviews[0].message, None, "a blank message is none");
}

/// A blank comment, a pin off the picture, a thread or a decision on both
/// a version and a proposal or on neither: refused as invalid, and nothing
/// is written.
async fn what_cannot_be_a_comment_is_refused(f: Fixture) {
    let bob = desk_for(&f, &f.bob, "bob");
    let a = f
        .alice
        .import(&path("poster.png"), bytes(b"v1"))
        .await
        .unwrap();
    let off = Pin {
        x: 1.5,
        y: 0.5,
        w: None,
        h: None,
    };
    let proposal = ProposalId::new();
    let refusals = [
        bob.open_thread(a.id, Some(1), None, None, None, " \n")
            .await,
        bob.open_thread(a.id, Some(1), None, Some(off), None, "here")
            .await,
        bob.open_thread(a.id, None, None, None, None, "on what?")
            .await,
        bob.open_thread(a.id, Some(1), Some(proposal), None, None, "both")
            .await,
    ];
    for refused in refusals {
        assert!(matches!(refused, Err(Error::Invalid(_))), "{refused:?}");
    }
    let decided = bob
        .submit_review(a.id, None, None, ReviewDecision::Approved, None)
        .await;
    assert!(matches!(decided, Err(Error::Invalid(_))), "{decided:?}");
    assert!(
        bob.threads(a.id).await.unwrap().is_empty(),
        "nothing written"
    );
}

crate::contract!(
    a_pinned_thread_is_answered_resolved_and_reopened,
    what_cannot_be_a_comment_is_refused,
);

//! Review on the work (API.md "Review (additions)"): threads pinned to a
//! version's or a proposal's picture, comments and @mentions, resolving,
//! decisions and the review state, review requests, the inbox with its read
//! marks, what follows a proposal when it is accepted or rebuilt, and folder
//! permissions throughout. On every backend.

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use crate::harness::*;

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

async fn a_thread_is_pinned_answered_resolved_and_reopened(f: Fixture) {
    let a = f.import("brand/hero.psd", b"v1").await;
    let pinned = NewThread {
        pin: Some(Pin {
            x: 0.25,
            y: 0.5,
            w: Some(0.5),
            h: Some(0.25),
        }),
        image: Some(ImageSize {
            width: 4000,
            height: 3000,
        }),
        ..on_version(1, "the logo is 4 px off here")
    };
    let thread = f.bob.open_thread(a.id, pinned).await.unwrap();
    assert_eq!(
        (thread.number, thread.version, thread.proposal_id),
        (1, Some(1), None)
    );
    assert_eq!(
        thread.pin,
        Some(Pin {
            x: 0.25,
            y: 0.5,
            w: Some(0.5),
            h: Some(0.25)
        })
    );
    assert_eq!(
        thread.image,
        Some(ImageSize {
            width: 4000,
            height: 3000
        })
    );
    assert_eq!(
        (thread.state, &thread.author),
        (ThreadState::Open, &participant("user:bob"))
    );
    assert_eq!(thread.comments.len(), 1);
    assert_eq!(thread.comments[0].body, "the logo is 4 px off here");
    let opened = f.last_event("thread.opened").await;
    assert_eq!(opened.data["thread_id"], thread.id.to_string());
    assert_eq!(opened.artifact_id, Some(a.id));

    let second = f
        .alice
        .open_thread(
            a.id,
            NewThread {
                pin: Some(point(1.0, 0.0)),
                ..on_version(1, "and here")
            },
        )
        .await
        .unwrap();
    assert_eq!(second.number, 2);
    assert_eq!(second.image, None, "no picture size was given");

    let reply = f
        .alice
        .comment(thread.id, "fixed in the next one")
        .await
        .unwrap();
    assert_eq!(
        (reply.thread_id, &reply.author),
        (thread.id, &participant("user:alice"))
    );
    assert_eq!(
        f.last_event("comment.added").await.data["comment_id"],
        reply.id.to_string()
    );

    let resolved = f.alice.resolve_thread(thread.id, true).await.unwrap();
    assert_eq!(resolved.state, ThreadState::Resolved);
    assert_eq!(resolved.resolved_by, Some(participant("user:alice")));
    assert!(resolved.resolved_at.is_some());
    assert_eq!(resolved.comments.len(), 2);
    let again = f.bob.resolve_thread(thread.id, true).await.unwrap();
    assert_eq!(
        again.resolved_by,
        Some(participant("user:alice")),
        "resolving twice changes nothing"
    );
    assert_eq!(f.events_of("thread.resolved").await.len(), 1);

    let open = f
        .alice
        .threads(
            a.id,
            ThreadQuery {
                state: Some(ThreadState::Open),
                ..ThreadQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(open.iter().map(|t| t.number).collect::<Vec<_>>(), [2]);
    let all = f.bob.threads(a.id, ThreadQuery::default()).await.unwrap();
    assert_eq!(all.iter().map(|t| t.number).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(
        all[0]
            .comments
            .iter()
            .map(|c| c.body.as_str())
            .collect::<Vec<_>>(),
        ["the logo is 4 px off here", "fixed in the next one"]
    );

    let reopened = f.bob.resolve_thread(thread.id, false).await.unwrap();
    assert_eq!(
        (reopened.state, reopened.resolved_by),
        (ThreadState::Open, None)
    );
    assert_eq!(f.events_of("thread.reopened").await.len(), 1);
    // A comment on a thread of a version that is no longer the head is fine.
    check_out_and_in_as(f.alice.as_ref(), a.id, b"v2").await;
    f.bob.comment(thread.id, "still there in v1").await.unwrap();
    let v1 = f
        .bob
        .threads(
            a.id,
            ThreadQuery {
                version: Some(1),
                ..ThreadQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(v1.len(), 2);
    assert!(f
        .bob
        .threads(
            a.id,
            ThreadQuery {
                version: Some(2),
                ..ThreadQuery::default()
            }
        )
        .await
        .unwrap()
        .is_empty());
}

async fn a_thread_names_one_existing_version_or_proposal_and_fits(f: Fixture) {
    let a = f.import("a.png", b"v1").await;
    let (other, proposal) = f.stale_proposal("b.psd", b"alice's").await;
    invalid(
        f.bob
            .open_thread(a.id, on_version(2, "no such version"))
            .await,
        "version 2",
    );
    invalid(
        f.bob.open_thread(a.id, on_version(0, "version 0")).await,
        "version 0",
    );
    invalid(
        f.bob
            .open_thread(
                a.id,
                NewThread {
                    body: "none".into(),
                    ..NewThread::default()
                },
            )
            .await,
        "no target",
    );
    let both = NewThread {
        proposal_id: Some(proposal.id),
        ..on_version(1, "both")
    };
    invalid(
        f.bob.open_thread(other.id, both).await,
        "a version and a proposal",
    );
    let elsewhere = NewThread {
        proposal_id: Some(proposal.id),
        body: "not this file's".into(),
        ..NewThread::default()
    };
    invalid(
        f.bob.open_thread(a.id, elsewhere).await,
        "another file's proposal",
    );
    for pin in [
        point(-0.01, 0.5),
        point(0.5, 1.5),
        Pin {
            x: 0.9,
            y: 0.1,
            w: Some(0.2),
            h: Some(0.1),
        },
        Pin {
            x: 0.1,
            y: 0.1,
            w: Some(0.1),
            h: None,
        },
    ] {
        invalid(
            f.bob
                .open_thread(
                    a.id,
                    NewThread {
                        pin: Some(pin),
                        ..on_version(1, "pinned")
                    },
                )
                .await,
            &format!("{pin:?}"),
        );
    }
    // JSON has no NaN: a client sends null, which the body refuses (400).
    let nan = NewThread {
        pin: Some(point(f64::NAN, 0.5)),
        ..on_version(1, "pinned")
    };
    let refused = f.bob.open_thread(a.id, nan).await;
    assert!(
        matches!(refused, Err(Error::Invalid(_) | Error::BadRequest(_))),
        "NaN: {refused:?}"
    );
    invalid(
        f.bob.open_thread(a.id, on_version(1, " \n ")).await,
        "an empty body",
    );
    invalid(
        f.bob
            .open_thread(a.id, on_version(1, &"é".repeat(10_001)))
            .await,
        "10,001 characters",
    );
    let flood: String = (0..1000).map(|n| format!("@user{n} ")).collect();
    invalid(
        f.bob.open_thread(a.id, on_version(1, &flood)).await,
        "1,000 @names",
    );
    not_found(
        f.bob
            .open_thread(ArtifactId::new(), on_version(1, "hm"))
            .await,
        "a file that never was",
    );
    not_found(
        f.bob.comment(ThreadId::new(), "hm").await,
        "a thread that never was",
    );
    not_found(
        f.bob.resolve_thread(ThreadId::new(), true).await,
        "a thread that never was",
    );
    assert!(
        f.bob
            .threads(a.id, ThreadQuery::default())
            .await
            .unwrap()
            .is_empty(),
        "nothing was written"
    );
    assert!(f.events_of("thread.opened").await.is_empty());
    let fits = f
        .bob
        .open_thread(a.id, on_version(1, &"é".repeat(10_000)))
        .await
        .unwrap();
    invalid(
        f.bob.comment(fits.id, &"é".repeat(10_001)).await,
        "a long comment",
    );
    assert_eq!(
        f.bob.threads(a.id, ThreadQuery::default()).await.unwrap()[0]
            .comments
            .len(),
        1
    );
}

async fn a_mention_reaches_a_reader_and_the_inbox_keeps_read_marks(f: Fixture) {
    let a = f.import("brand/hero.psd", b"v1").await;
    // Alice made version 1: a thread on it is hers to hear about.
    let thread = f
        .bob
        .open_thread(
            a.id,
            on_version(1, "@agent.x? no: @admin please look, and @nobody"),
        )
        .await
        .unwrap();
    assert_eq!(thread.comments[0].mentions, [participant("user:admin")]);
    let admins = inbox_of(f.admin.as_ref()).await;
    assert_eq!(admins.items.len(), 1);
    let item = &admins.items[0];
    assert_eq!(
        (item.kind, item.artifact_id, item.thread_id, &item.from),
        (
            InboxKind::Mention,
            a.id,
            Some(thread.id),
            &participant("user:bob")
        )
    );
    assert_eq!((item.path.as_str(), item.read), ("brand/hero.psd", false));
    assert_eq!(admins.unread, 1);
    let alices = inbox_of(f.alice.as_ref()).await;
    assert_eq!(
        alices.items.iter().map(|i| i.kind).collect::<Vec<_>>(),
        [InboxKind::ThreadOnYours]
    );
    assert!(
        inbox_of(f.bob.as_ref()).await.items.is_empty(),
        "never one's own act"
    );

    // Alice answers: bob (whose thread it is) hears of it; a mention of alice herself tells nobody.
    f.alice.comment(thread.id, "on it @alice").await.unwrap();
    let bobs = inbox_of(f.bob.as_ref()).await;
    assert_eq!(
        bobs.items.iter().map(|i| i.kind).collect::<Vec<_>>(),
        [InboxKind::CommentInYours]
    );
    assert_eq!(inbox_of(f.alice.as_ref()).await.items.len(), 1);

    // Decisions on alice's version and requests to review.
    f.bob
        .review(a.id, decision(1, ReviewDecision::ChangesRequested))
        .await
        .unwrap();
    let asked = f
        .alice
        .request_review(a.id, asking(1, &["user:admin", "user:admin"]))
        .await
        .unwrap();
    assert_eq!(asked.requested, [participant("user:admin")]);
    let alices = inbox_of(f.alice.as_ref()).await;
    assert_eq!(
        alices.items.iter().map(|i| i.kind).collect::<Vec<_>>(),
        [InboxKind::ThreadOnYours, InboxKind::DecisionOnYours]
    );
    assert_eq!(alices.unread, 2);
    let admins = inbox_of(f.admin.as_ref()).await;
    assert_eq!(
        admins.items.iter().map(|i| i.kind).collect::<Vec<_>>(),
        [InboxKind::Mention, InboxKind::ReviewRequested]
    );

    // Read marks: up to the first item, then all; never past what exists.
    let first = alices.items[0].seq;
    assert_eq!(f.alice.mark_inbox_read(first).await.unwrap(), 1);
    let page = inbox_of(f.alice.as_ref()).await;
    assert_eq!(
        page.items.iter().map(|i| i.read).collect::<Vec<_>>(),
        [true, false]
    );
    let unread = f
        .alice
        .inbox(InboxQuery {
            unread: true,
            ..InboxQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(unread.items.len(), 1);
    assert_eq!(f.alice.mark_inbox_read(u64::MAX >> 1).await.unwrap(), 0);
    assert_eq!(
        f.alice.mark_inbox_read(0).await.unwrap(),
        0,
        "a mark never moves back"
    );
    f.bob.comment(thread.id, "and one more").await.unwrap();
    let after = inbox_of(f.alice.as_ref()).await;
    assert_eq!(
        after.unread, 1,
        "an item made after a mark far ahead is unread"
    );
    assert!(!after.items.last().unwrap().read);
}

async fn the_inbox_pages_both_ways(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let thread = f
        .alice
        .open_thread(a.id, on_version(1, "first"))
        .await
        .unwrap();
    for n in 0..25 {
        f.alice
            .comment(thread.id, &format!("@bob comment {n}"))
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut after = 0;
    loop {
        let page = f
            .bob
            .inbox(InboxQuery {
                after: Some(after),
                limit: Some(10),
                ..InboxQuery::default()
            })
            .await
            .unwrap();
        assert_eq!(page.unread, 25);
        if page.items.is_empty() {
            assert_eq!(page.next, after, "next stays on an empty page");
            break;
        }
        assert!(page.items.len() <= 10);
        seen.extend(page.items.iter().map(|i| i.seq));
        after = page.next;
    }
    assert_eq!(seen.len(), 25);
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "oldest first: {seen:?}"
    );
    let newest = f
        .bob
        .inbox(InboxQuery {
            before: Some(u64::MAX >> 1),
            limit: Some(5),
            ..InboxQuery::default()
        })
        .await
        .unwrap();
    let newest: Vec<u64> = newest.items.iter().map(|i| i.seq).collect();
    assert_eq!(
        newest,
        seen.iter().rev().take(5).copied().collect::<Vec<_>>()
    );
    let capped = f
        .bob
        .inbox(InboxQuery {
            limit: Some(100_000),
            ..InboxQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(capped.items.len(), 25);
}

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

async fn nobody_hears_of_a_file_they_may_not_read(f: Fixture) {
    let secret = f.import("finance/q3.psd", b"v1").await;
    let open = f.import("brand/logo.png", b"v1").await;
    f.studio("user:admin")
        .put_permission_rules(vec![Rule::parse("finance/", "user:bob", "none").unwrap()])
        .await
        .unwrap();
    // A mention of bob on a file he may not read reaches nobody.
    let thread = f
        .alice
        .open_thread(secret.id, on_version(1, "@bob look at the numbers"))
        .await
        .unwrap();
    assert!(thread.comments[0].mentions.is_empty());
    let before = inbox_of(f.bob.as_ref()).await;
    assert!(before.items.is_empty());
    assert_eq!(before.unread, 0);
    invalid(
        f.alice
            .request_review(secret.id, asking(1, &["user:bob"]))
            .await,
        "bob may not read it",
    );
    // The hidden file's threads answer as ids that never were.
    not_found(
        f.bob.comment(thread.id, "hm").await,
        "a hidden file's thread",
    );
    not_found(
        f.bob.resolve_thread(thread.id, true).await,
        "a hidden file's thread",
    );
    not_found(
        f.bob.threads(secret.id, ThreadQuery::default()).await,
        "a hidden file's threads",
    );
    not_found(
        f.bob.reviews(secret.id, ReviewTarget::Version(1)).await,
        "a hidden file's reviews",
    );
    not_found(
        f.bob.open_thread(secret.id, on_version(1, "hm")).await,
        "a hidden file",
    );
    let hidden = f
        .bob
        .comment(thread.id, "hm")
        .await
        .unwrap_err()
        .to_string();
    let never = ThreadId::new();
    let unknown = f.bob.comment(never, "hm").await.unwrap_err().to_string();
    assert_eq!(
        hidden.replace(&thread.id.to_string(), "ID"),
        unknown.replace(&never.to_string(), "ID"),
        "the same refusal as a thread that never was"
    );
    // A mention on a file bob may read reaches him; once the rules hide it,
    // the item is left out and not counted.
    let open_thread = f
        .alice
        .open_thread(open.id, on_version(1, "@bob the logo"))
        .await
        .unwrap();
    assert_eq!(open_thread.comments[0].mentions, [participant("user:bob")]);
    assert_eq!(inbox_of(f.bob.as_ref()).await.unread, 1);
    f.studio("user:admin")
        .put_permission_rules(vec![
            Rule::parse("finance/", "user:bob", "none").unwrap(),
            Rule::parse("brand/", "user:bob", "none").unwrap(),
        ])
        .await
        .unwrap();
    let hidden = inbox_of(f.bob.as_ref()).await;
    assert!(hidden.items.is_empty());
    assert_eq!(hidden.unread, 0);
    let kinds: Vec<String> = f
        .bob
        .events(0, 1000)
        .await
        .unwrap()
        .events
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert!(
        !kinds
            .iter()
            .any(|k| k.starts_with("thread.") || k.starts_with("comment.")),
        "{kinds:?}"
    );
}

async fn ten_thousand_threads_are_a_files_most(f: Fixture) {
    let a = f.import("busy.psd", b"v1").await;
    let store = f.store.acting_as(participant("user:alice"));
    let mut made = 0u64;
    while made < MAX_THREADS_PER_FILE {
        let batch: Vec<_> = (0..200)
            .map(|n| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .open_thread(a.id, on_version(1, &format!("thread {n}")))
                        .await
                })
            })
            .collect();
        for made_one in batch {
            made_one.await.unwrap().unwrap();
            made += 1;
        }
    }
    invalid(
        f.bob.open_thread(a.id, on_version(1, "one more")).await,
        "the 10,001st thread",
    );
    let all = f.bob.threads(a.id, ThreadQuery::default()).await.unwrap();
    assert_eq!(all.len() as u64, MAX_THREADS_PER_FILE);
    let mut numbers: Vec<u64> = all.iter().map(|t| t.number).collect();
    numbers.dedup();
    assert_eq!(
        numbers,
        (1..=MAX_THREADS_PER_FILE).collect::<Vec<_>>(),
        "numbered densely, once each"
    );
}

async fn a_files_comments_and_decisions_are_bounded(f: Fixture) {
    let a = f.import("talky.psd", b"v1").await;
    let store = f.store.acting_as(participant("user:alice"));
    // 20,000 bytes a comment: as many as fit in 8 MiB with the first.
    let long = "é".repeat(10_000);
    let thread = store
        .open_thread(a.id, on_version(1, "start"))
        .await
        .unwrap();
    let fit = (MAX_COMMENT_BYTES_PER_FILE - 5) / long.len() as u64;
    for _ in 0..fit {
        store.comment(thread.id, &long).await.unwrap();
    }
    let past = f.bob.comment(thread.id, &long).await.map(|c| c.id);
    invalid(past, "past 8 MiB a file");
    let past = f
        .bob
        .open_thread(a.id, on_version(1, &long))
        .await
        .map(|t| t.id);
    invalid(past, "a thread past 8 MiB a file");
    f.bob.comment(thread.id, "short still fits").await.unwrap();
    let all = f.bob.threads(a.id, ThreadQuery::default()).await.unwrap();
    let bytes: usize = all
        .iter()
        .flat_map(|t| &t.comments)
        .map(|c| c.body.len())
        .sum();
    assert!(bytes as u64 <= MAX_COMMENT_BYTES_PER_FILE, "{bytes}");

    let message = "é".repeat(MAX_REVIEW_MESSAGE_CHARS + 1);
    invalid(
        f.bob
            .review(
                a.id,
                NewReview {
                    message: Some(message),
                    ..decision(1, ReviewDecision::Approved)
                },
            )
            .await,
        "a long message",
    );
    let batch: Vec<_> = (0..MAX_REVIEWS_PER_FILE)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .review(a.id, decision(1, ReviewDecision::Commented))
                    .await
            })
        })
        .collect();
    for decided in batch {
        decided.await.unwrap().unwrap();
    }
    invalid(
        f.bob
            .review(a.id, decision(1, ReviewDecision::Approved))
            .await,
        "the 2,001st decision",
    );
    let list = f.bob.reviews(a.id, ReviewTarget::Version(1)).await.unwrap();
    assert_eq!(list.reviews.len() as u64, MAX_REVIEWS_PER_FILE);
    assert_eq!(list.state, ReviewState::None);
}

async fn the_unread_count_stops_at_a_thousand(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let alice = f.store.acting_as(participant("user:alice"));
    // Three threads: a thread holds at most 1,000 comments.
    let mut threads = Vec::new();
    for _ in 0..3 {
        let opened = alice.open_thread(a.id, on_version(1, "@bob look")).await;
        threads.push(opened.unwrap().id);
    }
    let told: Vec<_> = (3..MAX_UNREAD_COUNTED + 5)
        .map(|n| {
            let (alice, thread) = (alice.clone(), threads[n as usize % 3]);
            tokio::spawn(async move { alice.comment(thread, &format!("@bob {n}")).await })
        })
        .collect();
    for comment in told {
        comment.await.unwrap().unwrap();
    }
    let page = inbox_of(f.bob.as_ref()).await;
    assert_eq!(page.unread, MAX_UNREAD_COUNTED, "counted up to the bound");
    let newest = f
        .bob
        .inbox(InboxQuery {
            before: Some(i64::MAX as u64),
            limit: Some(1),
            ..InboxQuery::default()
        })
        .await
        .unwrap();
    let seq = newest.items[0].seq;
    // Read all but the newest three: counted exactly again.
    assert_eq!(f.bob.mark_inbox_read(seq - 3).await.unwrap(), 3);
    assert_eq!(inbox_of(f.bob.as_ref()).await.unread, 3);
}

crate::contract!(
    a_thread_is_pinned_answered_resolved_and_reopened,
    a_thread_names_one_existing_version_or_proposal_and_fits,
    a_mention_reaches_a_reader_and_the_inbox_keeps_read_marks,
    the_inbox_pages_both_ways,
    the_review_state_follows_each_reviewers_newest_decision,
    threads_and_reviews_follow_a_proposal_accepted_or_rebuilt,
    nobody_hears_of_a_file_they_may_not_read,
    ten_thousand_threads_are_a_files_most,
    a_files_comments_and_decisions_are_bounded,
    the_unread_count_stops_at_a_thousand,
);

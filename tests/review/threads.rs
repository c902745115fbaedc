//! Threads: pinned to a version's or a proposal's picture, answered,
//! resolved and reopened; what a thread may name and how long it may be.

use super::*;

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

crate::contract!(
    a_thread_is_pinned_answered_resolved_and_reopened,
    a_thread_names_one_existing_version_or_proposal_and_fits,
);

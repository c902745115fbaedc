//! The inbox: @mentions that reach a reader, read marks, pages both ways,
//! and nobody told of a file they may not read.

use super::*;

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

crate::contract!(
    a_mention_reaches_a_reader_and_the_inbox_keeps_read_marks,
    the_inbox_pages_both_ways,
    nobody_hears_of_a_file_they_may_not_read,
);

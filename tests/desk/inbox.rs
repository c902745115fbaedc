//! The inbox as the app shows it: newest first by pages, the unread count,
//! read marks, and the news the event follower asks for, each item told
//! once, never one's own act, never a file one may not read.

use super::*;

fn on_version_one(body: &str) -> NewThread {
    NewThread {
        version: Some(1),
        body: body.into(),
        ..NewThread::default()
    }
}

fn kinds(items: &[InboxItem]) -> Vec<InboxKind> {
    items.iter().map(|i| i.kind).collect()
}

async fn the_inbox_tells_each_new_item_once_and_pages_newest_first(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    // alice made version 1: a thread on it is hers to hear about.
    let a = f.import("brand/hero.psd", b"v1").await;
    let thread = f
        .bob
        .open_thread(a.id, on_version_one("the sky is too blue"))
        .await
        .unwrap();

    // What was there before the app looked is counted, not news.
    let first = alice.inbox_news().await.unwrap();
    assert_eq!((first.items.len(), first.unread), (0, 1));
    assert_eq!(alice.inbox_unread_known(), Some(1));

    f.bob
        .comment(thread.id, "@alice can you look at it?")
        .await
        .unwrap();
    f.admin
        .request_review(
            a.id,
            NewReviewRequest {
                version: Some(1),
                reviewers: vec![participant("user:alice")],
                ..NewReviewRequest::default()
            },
        )
        .await
        .unwrap();
    let news = alice.inbox_news().await.unwrap();
    assert_eq!(
        kinds(&news.items),
        [InboxKind::Mention, InboxKind::ReviewRequested],
        "oldest first"
    );
    assert_eq!(news.unread, 3);
    assert_eq!(alice.inbox_unread_known(), Some(3));
    let titles: Vec<String> = news.items.iter().map(desk::inbox_title).collect();
    assert_eq!(
        titles,
        [
            "bob mentioned you in hero.psd",
            "admin asked you to review hero.psd"
        ]
    );
    assert_eq!(desk::alerts(&news.items).len(), 2, "both call for her");
    assert_eq!(
        news.items[0].thread_id,
        Some(thread.id),
        "opens at the thread"
    );

    // Told once; her own comment, even naming herself, never reaches her.
    assert!(alice.inbox_news().await.unwrap().items.is_empty());
    alice
        .backend()
        .comment(thread.id, "@alice note to self")
        .await
        .unwrap();
    let own = alice.inbox_news().await.unwrap();
    assert!(own.items.is_empty(), "{:?}", own.items);
    assert_eq!(own.unread, 3);

    // The window's pages: newest first, then back from `next`.
    let page = alice.inbox(None, 2).await.unwrap();
    assert_eq!(
        kinds(&page.items),
        [InboxKind::ReviewRequested, InboxKind::Mention]
    );
    let older = alice.inbox(Some(page.next), 2).await.unwrap();
    assert_eq!(kinds(&older.items), [InboxKind::ThreadOnYours]);
    assert!(older.items.iter().all(|i| !i.read));

    // Read up to the mention: the request to review is left; then all.
    assert_eq!(alice.mark_inbox_read(news.items[0].seq).await.unwrap(), 1);
    assert_eq!(alice.inbox_unread_known(), Some(1));
    let page = alice.inbox(None, 10).await.unwrap();
    assert_eq!(
        page.items.iter().map(|i| i.read).collect::<Vec<_>>(),
        [false, true, true]
    );
    assert_eq!(alice.mark_inbox_read(page.items[0].seq).await.unwrap(), 0);
    assert_eq!(alice.inbox_unread().await.unwrap(), 0);
    assert!(
        alice.inbox_news().await.unwrap().items.is_empty(),
        "reading brings no news"
    );
}

/// More news than a page, some on files alice may no longer read: each
/// item she may read is told once, the hidden ones never, and the next
/// look starts past them all.
async fn news_spans_pages_and_skips_files_you_may_not_read(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let open = f.import("brand/logo.png", b"v1").await;
    let secret = f.import("finance/q3.psd", b"v1").await;
    let on_open = f
        .bob
        .open_thread(open.id, on_version_one("first"))
        .await
        .unwrap();
    let on_secret = f
        .bob
        .open_thread(secret.id, on_version_one("first"))
        .await
        .unwrap();
    assert_eq!(alice.inbox_news().await.unwrap().unread, 2);

    let many = MAX_INBOX_PAGE as usize + 5;
    for n in 0..many {
        f.bob
            .comment(on_open.id, &format!("@alice look {n}"))
            .await
            .unwrap();
    }
    for n in 0..3 {
        f.bob
            .comment(on_secret.id, &format!("@alice the numbers {n}"))
            .await
            .unwrap();
    }
    f.studio("user:admin")
        .put_permission_rules(vec![Rule::parse("finance/", "user:alice", "none").unwrap()])
        .await
        .unwrap();

    let news = alice.inbox_news().await.unwrap();
    assert_eq!(news.items.len(), many, "every mention on the logo, once");
    assert!(news.items.iter().all(|i| i.artifact_id == open.id));
    assert!(news.items.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(
        news.unread,
        many as u64 + 1,
        "the first thread and the mentions"
    );
    assert_eq!(
        desk::alerts(&news.items),
        vec![desk::InboxAlert::Many(many)],
        "a flood is one notification"
    );

    // Past the hidden items too: a new mention is the only news.
    f.bob.comment(on_open.id, "@alice one more").await.unwrap();
    let next = alice.inbox_news().await.unwrap();
    assert_eq!(next.items.len(), 1);
    assert!(next.items[0].seq > news.items.last().unwrap().seq);
}

crate::contract!(
    the_inbox_tells_each_new_item_once_and_pages_newest_first,
    news_spans_pages_and_skips_files_you_may_not_read,
);

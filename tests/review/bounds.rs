//! A file's threads, comments and decisions are bounded, and so is the
//! unread count.

use super::*;

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
    ten_thousand_threads_are_a_files_most,
    a_files_comments_and_decisions_are_bounded,
    the_unread_count_stops_at_a_thousand,
);

//! Several files in the app: checked out together with writable copies, and
//! checked in as one change with one progress for the whole set, or
//! cancelled before the commit with every file as it was.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::*;

async fn copies_checked_out_together_go_in_as_one_change_with_one_progress(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let files = [
        f.import("layout/a.indd", b"a v1").await,
        f.import("layout/b.psd", b"b v1").await,
    ];
    let request = CheckoutsRequest {
        artifact_ids: files.iter().map(|a| a.id).collect(),
        ttl_seconds: None,
        note: Some("logo".into()),
    };
    let taken = alice.check_out_many(request).await.unwrap();
    let root = f.dir.path().join("alice/files");
    for (file, new) in files.iter().zip([&b"a, longer v2"[..], b"b v2"]) {
        let local = root.join(file.path.as_str());
        assert!(workspace::is_writable(&local), "{} is writable", file.path);
        std::fs::write(&local, new).unwrap();
    }
    let ids: Vec<CheckoutId> = taken.iter().map(|t| t.checkout.id).collect();
    let open: Vec<Checkout> = taken.iter().map(|t| t.checkout.clone()).collect();

    // Cancelled before the commit: every check-out open, every copy as it was.
    let cancelled = Watch {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..Watch::default()
    };
    let refused = alice
        .check_in_change(&open, Some("new".into()), cancelled)
        .await;
    assert!(refused.is_err(), "{refused:?}");
    for (id, file) in ids.iter().zip(&files) {
        assert_eq!(
            f.alice.checkout(*id).await.unwrap().state,
            CheckoutState::Open
        );
        assert_eq!(f.artifact(file.id).await.head.version, 1);
    }
    assert_eq!(std::fs::read(root.join("layout/b.psd")).unwrap(), b"b v2");

    let sent = Arc::new(AtomicU64::new(0));
    let seen = sent.clone();
    let progress: leasedesk::backend::Progress = Arc::new(move |n| {
        assert!(n >= seen.load(Ordering::Relaxed), "progress only grows");
        seen.store(n, Ordering::Relaxed);
    });
    let watched = Watch {
        progress: Some(progress),
        ..Watch::default()
    };
    let (change, closed) = alice
        .check_in_change(&open, Some("new logo".into()), watched)
        .await
        .unwrap();
    assert_eq!(change.outcome, ChangeOutcome::Committed);
    assert_eq!(
        sent.load(Ordering::Relaxed),
        12 + 4,
        "the bytes of both files, in one count"
    );
    for (done, file) in closed.iter().zip(&files) {
        assert_eq!(done.checkout.change_id, Some(change.id));
        assert!(
            !workspace::is_writable(&root.join(file.path.as_str())),
            "read-only again"
        );
        assert_eq!(
            f.artifact(file.id).await.head.message.as_deref(),
            Some("new logo")
        );
    }
}

crate::contract!(copies_checked_out_together_go_in_as_one_change_with_one_progress);

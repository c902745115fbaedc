//! The app's mirror of the studio's list: filled by pages, kept by the
//! events after its `seq`, exact whatever happens while it fills, and
//! whole when a fill is cut off.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use leasedesk::desk::{FillProgress, Synced};

use super::*;

/// Everything the mirror holds, by path.
fn mirrored(desk: &Desk) -> Vec<Artifact> {
    desk.workspace()
        .mirror()
        .mirror_page("", None, 100_000)
        .unwrap()
}

/// What the backend lists, by path: what the mirror must equal. The
/// mirror's folder tree must then equal the backend's, every folder's
/// counts and held counts.
async fn listed(backend: &Arc<dyn leasedesk::Backend>) -> Vec<Artifact> {
    backend.artifacts().await.unwrap()
}

/// The mirror holds what the backend lists, and its tree is the backend's.
async fn assert_mirrors(desk: &Desk, backend: &Arc<dyn leasedesk::Backend>) {
    assert_eq!(mirrored(desk), listed(backend).await);
    assert_same_tree(desk, backend).await;
}

/// The mirror's folder tree is the backend's, folder by folder.
async fn assert_same_tree(desk: &Desk, backend: &Arc<dyn leasedesk::Backend>) {
    let mut folders = vec![String::new()];
    while let Some(folder) = folders.pop() {
        let theirs = backend.folders(&folder).await.unwrap();
        let ours = desk.folder_tree(&folder).unwrap();
        assert_eq!(ours, theirs, "the folder {folder:?}");
        folders.extend(theirs.folders.into_iter().map(|f| f.path));
    }
}

async fn a_mirror_filled_by_pages_then_kept_by_events_is_exact(f: Fixture) {
    for i in 0..30 {
        f.import(&format!("shots/s{i:02}.psd"), b"v1").await;
    }
    let desk = desk_for(&f, &f.alice, "alice");
    let seen = Mutex::new(Vec::new());
    let filled = desk
        .sync_mirror_by("studio", false, 7, &|p| seen.lock().unwrap().push(p))
        .await
        .unwrap();
    assert_eq!(filled, Synced::Filled);
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 5, "30 files in pages of 7: {seen:?}");
    assert_eq!(
        seen.last(),
        Some(&FillProgress {
            loaded: 30,
            total: 30
        })
    );
    assert_mirrors(&desk, &f.alice).await;

    let first = mirrored(&desk)[0].id;
    f.bob.check_out(first, checkout_request()).await.unwrap();
    f.import("aa/new.psd", b"new").await;
    let moved = mirrored(&desk)[5].id;
    f.admin.rename(moved, &path("zz/moved.psd")).await.unwrap();
    let synced = desk.sync_mirror("studio", true, &|_| {}).await.unwrap();
    assert!(
        matches!(synced, Synced::CaughtUp(n) if n >= 3),
        "{synced:?}"
    );
    let now = mirrored(&desk);
    assert_eq!(now, listed(&f.alice).await);
    assert_eq!(now.len(), 31);
    assert!(now.iter().any(|a| a.id == first && a.lease.is_some()));
    assert_eq!(
        desk.sync_mirror("studio", true, &|_| {}).await.unwrap(),
        Synced::CaughtUp(0)
    );
    // The same workspace for another server is another mirror: filled anew.
    assert_eq!(
        desk.sync_mirror("elsewhere", false, &|_| {}).await.unwrap(),
        Synced::Filled
    );
    assert_mirrors(&desk, &f.alice).await;
}

async fn what_changes_while_the_mirror_fills_ends_in_it_once_as_it_is_now(f: Fixture) {
    let mut ids = std::collections::HashMap::new();
    for p in [
        "b/one.psd",
        "b/two.psd",
        "finance/q3.xlsx",
        "m/three.psd",
        "zz/four.psd",
    ] {
        ids.insert(p, f.import(p, p.as_bytes()).await.id);
    }
    for i in 0..20 {
        f.import(&format!("m/many{i:02}.psd"), b"x").await;
    }
    let desk = desk_for(&f, &f.alice, "alice");
    let pages = AtomicUsize::new(0);
    let runtime = tokio::runtime::Handle::current();
    let meanwhile = |_: FillProgress| {
        let page = pages.fetch_add(1, Ordering::SeqCst);
        tokio::task::block_in_place(|| {
            runtime.block_on(async {
                match page {
                    // Behind the walk: only the events tell these.
                    0 => {
                        f.import("a/imported.psd", b"new").await;
                        f.admin
                            .rename(ids["zz/four.psd"], &path("a/four.psd"))
                            .await
                            .unwrap();
                    }
                    // Ahead of the walk: met twice, kept once.
                    1 => {
                        f.admin
                            .rename(ids["b/one.psd"], &path("zz/one.psd"))
                            .await
                            .unwrap();
                        f.bob
                            .check_out(ids["b/two.psd"], checkout_request())
                            .await
                            .unwrap();
                    }
                    // A file hidden meanwhile: the list is read again.
                    2 => {
                        f.hide("finance/", "user:alice").await;
                    }
                    _ => {}
                }
            })
        })
    };
    let filled = desk
        .sync_mirror_by("studio", false, 4, &meanwhile)
        .await
        .unwrap();
    assert_eq!(filled, Synced::Filled);
    assert!(pages.load(Ordering::SeqCst) > 8, "filled twice");
    let now = mirrored(&desk);
    assert_eq!(now, listed(&f.alice).await);
    let paths: Vec<&str> = now.iter().map(|a| a.path.as_str()).collect();
    assert!(paths.contains(&"a/imported.psd") && paths.contains(&"a/four.psd"));
    assert!(paths.contains(&"zz/one.psd") && !paths.contains(&"b/one.psd"));
    assert!(!paths.contains(&"finance/q3.xlsx"));
    let mut unique: Vec<_> = now.iter().map(|a| a.id).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), now.len(), "each file once");

    // Shown again by a rule: the next sync fills anew and finds it.
    f.studio("user:admin")
        .put_permission_rules(vec![])
        .await
        .unwrap();
    assert_eq!(
        desk.sync_mirror("studio", false, &|_| {}).await.unwrap(),
        Synced::Filled
    );
    assert_mirrors(&desk, &f.alice).await;
}

async fn a_page_of_events_all_hidden_does_not_end_the_catch_up(f: Fixture) {
    let secret = f.import("secret/plan.psd", b"v1").await;
    f.hide("secret/", "user:bob").await;
    let desk = desk_for(&f, &f.bob, "bob");
    desk.sync_mirror("studio", false, &|_| {}).await.unwrap();
    // More events bob may not see than a page of events holds, then one he may.
    for _ in 0..520 {
        f.check_out_and_cancel(secret.id).await;
    }
    f.import("open/new.psd", b"new").await;
    let synced = desk.sync_mirror("studio", false, &|_| {}).await.unwrap();
    assert!(
        matches!(synced, Synced::CaughtUp(n) if n >= 1),
        "{synced:?}"
    );
    let paths: Vec<String> = mirrored(&desk).iter().map(|a| a.path.to_string()).collect();
    assert_eq!(paths, ["open/new.psd"]);
}

crate::contract!(
    a_page_of_events_all_hidden_does_not_end_the_catch_up,
    a_mirror_filled_by_pages_then_kept_by_events_is_exact,
    what_changes_while_the_mirror_fills_ends_in_it_once_as_it_is_now,
);

/// A fill that loses its server part-way (alice's device revoked while it
/// reads) fails and leaves the mirror as it was: never half of each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fill_cut_off_leaves_the_mirror_as_it_was() {
    let f = remote_fixture().await;
    for i in 0..12 {
        f.import(&format!("s{i:02}.psd"), b"v1").await;
    }
    let desk = desk_for(&f, &f.alice, "alice");
    desk.sync_mirror("studio", false, &|_| {}).await.unwrap();
    let before = mirrored(&desk);
    for i in 12..24 {
        f.import(&format!("s{i:02}.psd"), b"v1").await;
    }
    // A rule change makes the next sync fill anew.
    f.hide("x/", "user:bob").await;
    let alice_studio = f.studio("user:alice");
    let device = alice_studio.my_devices().await.unwrap().current;
    let pages = AtomicUsize::new(0);
    let runtime = tokio::runtime::Handle::current();
    let cut = |_: FillProgress| {
        if pages.fetch_add(1, Ordering::SeqCst) == 1 {
            tokio::task::block_in_place(|| {
                runtime
                    .block_on(alice_studio.revoke_my_device(&device))
                    .unwrap()
            });
        }
    };
    let failed = desk.sync_mirror_by("studio", false, 5, &cut).await;
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(mirrored(&desk), before, "the mirror as it was");
    assert_eq!(before.len(), 12);
}

/// The store behind the mirror (restored from a backup older than the
/// mirror): a sync that checks the store fills the mirror anew, exact; one
/// that does not would keep files the store no longer has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_gone_back_in_time_fills_the_mirror_anew() {
    let (before, restored) = (crate::harness::fixture(), crate::harness::fixture());
    for i in 0..5 {
        before.import(&format!("brand/b{i}.psd"), b"v1").await;
    }
    restored.import("brand/only.psd", b"v1").await;
    let home = tempfile::tempdir().unwrap();
    let desk = desk_in(home.path(), before.alice.clone(), before.clock.clone());
    desk.sync_mirror("studio", false, &|_| {}).await.unwrap();
    assert_eq!(mirrored(&desk).len(), 5);

    let desk = desk_in(home.path(), restored.alice.clone(), restored.clock.clone());
    let unchecked = desk.sync_mirror("studio", false, &|_| {}).await.unwrap();
    assert_eq!(
        unchecked,
        Synced::CaughtUp(0),
        "nothing tells it, unchecked"
    );
    let synced = desk.sync_mirror("studio", true, &|_| {}).await.unwrap();
    assert_eq!(synced, Synced::Filled);
    assert_mirrors(&desk, &restored.alice).await;
}

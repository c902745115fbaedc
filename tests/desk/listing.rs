//! What the window lists a screen at a time: a folder's files by place from
//! the mirror (places right after files come, go and move), the folder tree,
//! a search and the files others hold from the server (with Git locks and
//! the paths held with no file yet).

use super::*;
use leasedesk::error::Code;
use leasedesk::workspace::{ListOrder, SortKey};

/// The paths of `rows`.
fn paths(rows: &[desk::FileRow]) -> Vec<String> {
    rows.iter().map(|r| r.artifact.path.to_string()).collect()
}

/// Every path the backend lists under `folder`, in the list's order.
async fn backend_paths(f: &Fixture, folder: &str) -> Vec<String> {
    let mut all = listed_paths(f.alice.as_ref()).await;
    all.retain(|p| p.starts_with(folder));
    all
}

/// The screen at `offset` is the backend's list from `offset`, wherever the
/// list last was read (places remembered or not).
async fn assert_places(f: &Fixture, desk: &Desk, folder: &str, offsets: &[u64]) {
    let all = backend_paths(f, folder).await;
    for &offset in offsets {
        let page = desk.folder_rows(folder, offset, 30).await.unwrap();
        assert_eq!(page.total, all.len() as u64, "{folder:?}'s count");
        let start = (offset as usize).min(all.len());
        let end = (start + 30).min(all.len());
        assert_eq!(paths(&page.rows), all[start..end], "{folder:?} at {offset}");
    }
}

async fn a_folder_is_listed_by_place_and_places_follow_files_that_come_go_and_move(f: Fixture) {
    for i in 0..120 {
        let folder = ["brand", "shots", "shots/night"][i % 3];
        f.import(&format!("{folder}/f{i:03}.psd"), b"v1").await;
    }
    let alice = desk_for(&f, &f.alice, "alice");
    alice.overview().await.unwrap();
    assert_places(&f, &alice, "", &[0, 30, 90, 119, 500, 60, 1]).await;
    assert_places(&f, &alice, "shots/", &[0, 50, 79, 10]).await;
    assert_places(&f, &alice, "shots/night/", &[0, 39, 20]).await;
    assert_places(&f, &alice, "", &[60, 90]).await;

    // Files that come before the places read, and one that moves from the
    // end to the start: each place is the file there now.
    f.import("brand/a-first.psd", b"v1").await;
    f.import("aaa.psd", b"v1").await;
    let last = f
        .alice
        .artifact_by_path(&path("shots/night/f119.psd"))
        .await;
    let last = last.unwrap();
    f.admin
        .rename(last.id, &path("brand/0-moved.psd"))
        .await
        .unwrap();
    alice.overview().await.unwrap();
    assert_places(&f, &alice, "", &[60, 0, 30, 121, 90]).await;
    assert_places(&f, &alice, "shots/", &[50, 0, 78]).await;
    assert_places(&f, &alice, "brand/", &[0, 41]).await;

    let refused = alice.folder_rows("shots", 0, 10).await.unwrap_err();
    assert_eq!(refused.code(), Code::Invalid, "{refused}");
    assert_eq!(
        alice
            .folder_rows("", 0, 1_000_000)
            .await
            .unwrap()
            .rows
            .len(),
        122.min(desk::MOST_ROWS as usize),
        "a page is at most MOST_ROWS"
    );
}

async fn the_tree_counts_what_is_held_and_follows_each_lease(f: Fixture) {
    let a = f.import("brand/logo.ai", b"v1").await;
    f.import("brand/2026/hero.psd", b"v1").await;
    let c = f.import("brand/2026/poster.psd", b"v1").await;
    f.import("readme.txt", b"v1").await;
    let alice = desk_for(&f, &f.alice, "alice");
    alice.overview().await.unwrap();
    let top = alice.folder_tree("").unwrap();
    assert_eq!(top.files, 1, "readme, directly at the top");
    assert_eq!(
        top.folders,
        [FolderCount {
            path: "brand/".into(),
            files: 3,
            held: 0
        }]
    );
    f.bob.check_out(c.id, checkout_request()).await.unwrap();
    f.bob.check_out(a.id, checkout_request()).await.unwrap();
    alice.overview().await.unwrap();
    let brand = alice.folder_tree("brand/").unwrap();
    assert_eq!(brand.files, 1);
    assert_eq!(
        brand.folders,
        [FolderCount {
            path: "brand/2026/".into(),
            files: 2,
            held: 1
        }]
    );
    assert_eq!(alice.folder_tree("").unwrap().folders[0].held, 2);

    // A free file renamed out: the counts follow it, the held ones stay
    // where their leases are, in the store and in the mirror alike.
    let hero = f
        .alice
        .artifact_by_path(&path("brand/2026/hero.psd"))
        .await
        .unwrap();
    f.admin
        .rename(hero.id, &path("other/hero.psd"))
        .await
        .unwrap();
    alice.overview().await.unwrap();
    let counts = |list: &FolderList| -> Vec<(String, u64, u64)> {
        list.folders
            .iter()
            .map(|f| (f.path.clone(), f.files, f.held))
            .collect()
    };
    let expected = [("brand/".to_owned(), 2, 2), ("other/".to_owned(), 1, 0)];
    assert_eq!(counts(&f.alice.folders("").await.unwrap()), expected);
    assert_eq!(counts(&alice.folder_tree("").unwrap()), expected);
    assert_eq!(
        alice.folder_tree("brand").unwrap_err().code(),
        Code::Invalid,
        "a folder's path ends in /"
    );
}

async fn held_by_others_and_a_search_are_the_servers_answers(f: Fixture) {
    let mine = f.import("brand/mine.psd", b"v1").await;
    let bobs = f.import("brand/bobs.psd", b"v1").await;
    let other = f.import("shots/bobs-too.psd", b"v1").await;
    f.import("shots/free.psd", b"v1").await;
    let alice = desk_for(&f, &f.alice, "alice");
    alice
        .check_out(mine.id, checkout_request(), None)
        .await
        .unwrap();
    f.bob.check_out(bobs.id, checkout_request()).await.unwrap();
    f.bob.check_out(other.id, checkout_request()).await.unwrap();
    alice.overview().await.unwrap();

    let held = alice.held_by_others(None, 100).await.unwrap();
    assert_eq!(
        paths(&held.rows),
        ["brand/bobs.psd", "shots/bobs-too.psd"],
        "bob's, not alice's own"
    );
    assert_eq!(held.next, None);
    // By pages of one: alice's own takes a page that shows nothing, and
    // the walk goes on past it.
    let (mut walked, mut after, mut pages) = (Vec::new(), None, 0);
    loop {
        let page = alice.held_by_others(after, 1).await.unwrap();
        walked.extend(paths(&page.rows));
        pages += 1;
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(walked, ["brand/bobs.psd", "shots/bobs-too.psd"]);
    assert!(pages >= 3, "one page each, {pages}");

    let found = alice.search_rows("BOBS", None, 100).await.unwrap();
    assert_eq!(paths(&found.rows), ["brand/bobs.psd", "shots/bobs-too.psd"]);
    let mine_found = alice.search_rows("mine", None, 100).await.unwrap();
    assert!(
        mine_found.rows[0].mine.is_some(),
        "your check-out on its row"
    );
    let refused = alice.search_rows("b", None, 100).await.unwrap_err();
    assert_eq!(refused.code(), Code::Invalid, "one letter: {refused}");
}

/// Held by others shows a Git lock as the check-out it is (its note is
/// Git's), and the paths others hold with no file yet among the rows, by
/// path and page by page; not your own, nor one in a folder hidden from
/// you; gone once it lapses.
async fn held_by_others_has_git_locks_and_paths_held_with_no_file(f: Fixture) {
    f.import("art/hero.psd", b"v1").await;
    f.import("art/zebra.psd", b"v1").await;
    // Locks as the server's /lfs routes take them, on the same store.
    let bob_from_git = f.store.acting_as(participant("user:bob"));
    bob_from_git.git_lock(&path("art/hero.psd")).await.unwrap();
    let new = bob_from_git.git_lock(&path("art/new.psd")).await.unwrap();
    assert!(new.no_file, "art/new.psd has no file: a hold");
    bob_from_git
        .git_lock(&path("secret/plan.psd"))
        .await
        .unwrap();
    f.store
        .acting_as(participant("user:alice"))
        .git_lock(&path("art/mine.psd"))
        .await
        .unwrap();
    let zebra = f.alice.artifact_by_path(&path("art/zebra.psd")).await;
    f.bob
        .check_out(zebra.unwrap().id, checkout_request())
        .await
        .unwrap();
    f.hide("secret/", "user:alice").await;
    let alice = desk_for(&f, &f.alice, "alice");
    alice.overview().await.unwrap();

    let held = alice.held_by_others(None, 100).await.unwrap();
    assert_eq!(paths(&held.rows), ["art/hero.psd", "art/zebra.psd"]);
    let git = held.rows[0].artifact.lease.as_ref().unwrap();
    assert_eq!(
        (git.participant.as_str(), git.note.as_deref()),
        ("user:bob", Some(GIT_LOCK_NOTE)),
        "a Git lock is bob's check-out with Git's note"
    );
    let holds: Vec<_> = held
        .holds
        .iter()
        .map(|h| {
            let lease = &h.lease;
            (
                h.path.as_str(),
                lease.participant.as_str(),
                lease.note.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        holds,
        [("art/new.psd", "user:bob", Some(GIT_LOCK_NOTE))],
        "bob's hold; not alice's own, nor the one in secret/ hidden from her"
    );
    let hold = &held.holds[0].lease;
    assert_eq!(
        hold.checkout_id.map(|id| id.0),
        Some(new.id),
        "the lock's id"
    );
    assert_eq!(hold.kind, LeaseKind::Checkout);
    assert_eq!(hold.expires_at, new.expires_at);
    assert_eq!(held.next, None);

    // By pages of one: the hold takes a page of its own, in its place by
    // path; alice's own takes one that shows nothing.
    let (mut walked, mut after) = (Vec::new(), None);
    loop {
        let page = alice.held_by_others(after, 1).await.unwrap();
        assert!(page.rows.len() + page.holds.len() <= 1, "a page of one");
        walked.extend(paths(&page.rows));
        walked.extend(page.holds.iter().map(|h| h.path.to_string()));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(walked, ["art/hero.psd", "art/new.psd", "art/zebra.psd"]);

    // A search is of files: a hold is no file.
    let found = alice.search_rows("new.psd", None, 100).await.unwrap();
    assert!(found.rows.is_empty() && found.holds.is_empty(), "{found:?}");

    // The Git lock time passed: every hold has lapsed.
    f.clock.advance(std::time::Duration::from_secs(
        DEFAULT_GIT_LOCK_HOURS * 3600 + 60,
    ));
    let later = alice.held_by_others(None, 100).await.unwrap();
    assert!(later.holds.is_empty(), "{:?}", later.holds);
}

/// What the window reads again after an event: the files named, and
/// whether places moved; once told, not told again.
async fn the_window_is_told_what_changed_in_the_list_once(f: Fixture) {
    let hero = f.import("brand/hero.psd", b"v1").await;
    let alice = desk_for(&f, &f.alice, "alice");
    alice.overview().await.unwrap();
    let none = alice.list_changes().await.unwrap();
    assert_eq!((none.changed.len(), none.moved, none.total), (0, false, 1));

    f.bob.check_out(hero.id, checkout_request()).await.unwrap();
    let leased = alice.list_changes().await.unwrap();
    assert_eq!(leased.changed, [hero.id], "bob's check-out");
    assert!(!leased.moved, "no file came, went or moved");
    let counts: Vec<(&str, u64)> = leased
        .folders
        .iter()
        .map(|c| (c.path.as_str(), c.held))
        .collect();
    assert_eq!(
        counts,
        [("", 1), ("brand/", 1)],
        "the folders above it, held now"
    );
    assert!(
        alice.list_changes().await.unwrap().changed.is_empty(),
        "told once"
    );

    f.import("brand/logo.psd", b"v1").await;
    let came = alice.list_changes().await.unwrap();
    assert!(came.moved, "a file came");
    assert_eq!(came.total, 2);
}

/// Every path the backend lists under `folder`, in `order` (ties by path;
/// reversed whole when descending).
async fn backend_paths_in(f: &Fixture, folder: &str, order: ListOrder) -> Vec<String> {
    let mut all: Vec<Artifact> = f.alice.artifacts().await.unwrap();
    all.retain(|a| a.path.as_str().starts_with(folder));
    all.sort_by(|a, b| {
        let key = |a: &Artifact| match order.by {
            SortKey::Path => (0, 0, String::new()),
            SortKey::Size => (a.head.size as i64, 0, String::new()),
            SortKey::Modified => (a.head.committed_at.timestamp_micros(), 0, String::new()),
            SortKey::Version => (a.head.version as i64, 0, String::new()),
            SortKey::Holder => (
                0,
                0,
                a.lease
                    .as_ref()
                    .map_or_else(String::new, |l| l.participant.to_string()),
            ),
        };
        (key(a), a.path.as_str()).cmp(&(key(b), b.path.as_str()))
    });
    if order.descending {
        all.reverse();
    }
    all.iter().map(|a| a.path.to_string()).collect()
}

/// Pages of 7 from the first place to the last give every file under
/// `folder` once, in `order`; then screens read at places out of turn
/// (places remembered or not) are the same list's.
async fn assert_sorted_places(f: &Fixture, desk: &Desk, folder: &str, order: ListOrder) {
    let all = backend_paths_in(f, folder, order).await;
    let mut walked = Vec::new();
    let mut offset = 0;
    loop {
        let page = desk.folder_rows_in(folder, order, offset, 7).await.unwrap();
        assert_eq!(page.total, all.len() as u64, "{folder:?}'s count");
        if page.rows.is_empty() {
            break;
        }
        offset += page.rows.len() as u64;
        walked.extend(paths(&page.rows));
    }
    assert_eq!(walked, all, "{folder:?} paged through in {order:?}");
    for offset in [40, 3, 90, 0, 61, 500, 20] {
        let page = desk.folder_rows_in(folder, order, offset, 9).await.unwrap();
        let start = (offset as usize).min(all.len());
        let end = (start + 9).min(all.len());
        assert_eq!(
            paths(&page.rows),
            all[start..end],
            "{folder:?} at {offset} in {order:?}"
        );
    }
}

async fn a_folder_is_listed_by_size_modified_version_and_holder_page_by_page(f: Fixture) {
    let mut ids = Vec::new();
    for i in 0..100u64 {
        let folder = ["brand", "shots", "shots/night", "brand/2026"][(i % 4) as usize];
        // Sizes 0 to 12, many alike; saved in tens of seconds, some at once.
        let data = vec![b'x'; (i * 7 % 13) as usize];
        ids.push(f.import(&format!("{folder}/f{i:03}.psd"), &data).await.id);
        if i % 3 == 0 {
            f.clock.advance(std::time::Duration::from_secs(10));
        }
    }
    // A folder of under one file in 32 is sorted from its paths.
    for name in ["c", "a", "b"] {
        f.import(&format!("tiny/{name}.psd"), name.as_bytes()).await;
    }
    for (n, id) in ids.iter().enumerate().step_by(9) {
        f.check_out_and_in(*id, &vec![b'y'; n % 5 + 20]).await;
    }
    for id in ids.iter().skip(2).step_by(11) {
        f.bob.check_out(*id, checkout_request()).await.unwrap();
    }
    let alice = desk_for(&f, &f.alice, "alice");
    alice.overview().await.unwrap();
    for by in [
        SortKey::Size,
        SortKey::Modified,
        SortKey::Version,
        SortKey::Holder,
        SortKey::Path,
    ] {
        for descending in [false, true] {
            let order = order(by, descending);
            for folder in ["", "shots/", "brand/2026/", "tiny/"] {
                assert_sorted_places(&f, &alice, folder, order).await;
            }
        }
    }

    // A file grows, another is taken and one comes: each place in each
    // order is the file there now.
    let by_size = order(SortKey::Size, true);
    let by_holder = order(SortKey::Holder, false);
    alice.folder_rows_in("", by_size, 50, 10).await.unwrap();
    alice.folder_rows_in("", by_holder, 50, 10).await.unwrap();
    f.check_out_and_in(ids[50], &[b'z'; 40]).await;
    f.bob.check_out(ids[51], checkout_request()).await.unwrap();
    alice.overview().await.unwrap();
    assert_sorted_places(&f, &alice, "", by_size).await;
    assert_sorted_places(&f, &alice, "", by_holder).await;
    f.import("shots/0.psd", &[b'q'; 30]).await;
    alice.overview().await.unwrap();
    assert_sorted_places(&f, &alice, "shots/", by_size).await;

    // A copy here has its size in its row; a file not here has none.
    let here = f.alice.artifact_by_path(&path("tiny/a.psd")).await.unwrap();
    alice
        .check_out(here.id, checkout_request(), None)
        .await
        .unwrap();
    assert_eq!(alice.row(here.id).await.unwrap().local_size, Some(1));
    let page = alice.folder_rows("tiny/", 0, 3).await.unwrap();
    let sizes: Vec<_> = page.rows.iter().map(|r| r.local_size).collect();
    assert_eq!(sizes, [Some(1), None, None], "a, b and c");
}

crate::contract!(
    a_folder_is_listed_by_size_modified_version_and_holder_page_by_page,
    the_window_is_told_what_changed_in_the_list_once,
    a_folder_is_listed_by_place_and_places_follow_files_that_come_go_and_move,
    the_tree_counts_what_is_held_and_follows_each_lease,
    held_by_others_and_a_search_are_the_servers_answers,
    held_by_others_has_git_locks_and_paths_held_with_no_file,
);

/// The order by `by`, from the last when `descending`.
fn order(by: SortKey, descending: bool) -> ListOrder {
    ListOrder { by, descending }
}

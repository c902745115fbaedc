//! What only Windows does to a designer's files, run under Wine by the
//! Windows leg of `cargo xtask test`: files other programs hold open, the
//! read-only attribute, paths past 260 characters. (Names Windows reads as a
//! device, a drive or a stream are refused before a lease in `paths.rs`, which
//! runs there too.)

use std::fs::File;
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use leasedesk::model::{Artifact, ArtifactId};
use leasedesk::workspace::{self, Workspace};
use leasedesk::Error;

use crate::harness::*;

fn workspace_at(f: &Fixture, root: &Path) -> Workspace {
    Workspace::open(root, &f.dir.path().join("state"), f.clock.clone()).unwrap()
}

/// A workspace in `files` where Alice has a copy of `p` (imported with
/// `data`), not checked out: the fixture, the workspace, the file and the
/// copy's path.
async fn a_copy_in_a_workspace(p: &str, data: &[u8]) -> (Fixture, Workspace, Artifact, PathBuf) {
    let f = fixture();
    let ws = workspace_at(&f, &f.dir.path().join("files"));
    let a = f.import(p, data).await;
    get_latest(&f, &ws, a.id).await;
    let local = ws.local_path(&a.path).unwrap();
    (f, ws, a, local)
}

/// Brings the head of `a` into `ws` as Alice's copy, not checked out.
async fn get_latest(f: &Fixture, ws: &Workspace, a: ArtifactId) {
    ws.update(f.alice.as_ref(), &f.artifact(a).await)
        .await
        .unwrap();
}

/// Bob checks `a` out and in with `data`: a newer head.
async fn bob_commits(f: &Fixture, a: ArtifactId, data: &[u8]) {
    check_out_and_in_as(f.bob.as_ref(), a, data).await;
}

/// Opens `path` as Photoshop keeps a document open: shared for reading, never
/// for writing or deleting, so nobody may replace it meanwhile. (The copy is
/// read-only, so it is opened to read.)
fn hold_as_an_editor_does(path: &Path) -> File {
    const FILE_SHARE_READ: u32 = 1;
    std::fs::OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ)
        .open(path)
        .unwrap()
}

/// A check-out that finds the copy open in another program waits a moment,
/// then says so and changes nothing: the copy keeps its bytes, no temporary
/// file is left beside it, and the lease is held. Once the program lets go,
/// bringing the copy up to date writes the head.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_held_open_is_never_half_overwritten_and_gets_the_head_once_free() {
    let (f, ws, a, local) = a_copy_in_a_workspace("brand/hero.psd", b"version one").await;
    bob_commits(&f, a.id, b"version two, by bob").await;

    let held = hold_as_an_editor_does(&local);
    let started = Instant::now();
    let refused = ws
        .check_out(f.alice.as_ref(), a.id, checkout_request(), None)
        .await;
    let waited = started.elapsed();
    match &refused {
        Err(Error::Unavailable(message)) => {
            assert!(message.contains("hero.psd"), "{message}");
            assert!(message.contains("is open in"), "{message}");
            assert!(message.contains("nothing was changed"), "{message}");
        }
        other => panic!("a held copy is refused clearly: {other:?}"),
    }
    assert!(
        waited > Duration::from_secs(1),
        "a short hold is waited out first ({waited:?})"
    );
    drop(held);
    assert_eq!(std::fs::read(&local).unwrap(), b"version one", "untouched");
    let beside: Vec<_> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        beside,
        ["hero.psd"],
        "nothing half-written is left beside it"
    );
    let lease = f.artifact(a.id).await.lease.expect("the lease is held");
    assert_eq!(lease.participant.as_str(), "user:alice");

    // Free now: the check-out is brought here, with the head.
    let checkout = f
        .alice
        .checkouts(true)
        .await
        .unwrap()
        .into_iter()
        .next()
        .expect("alice's check-out");
    ws.get_copy(f.alice.as_ref(), checkout, None).await.unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"version two, by bob");
    assert!(workspace::is_writable(&local));
}

/// A file a scanner locks for a moment after it is written does not fail a
/// check-in: it is read once the lock goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_in_waits_out_a_scanners_short_hold() {
    let f = fixture();
    let ws = workspace_at(&f, &f.dir.path().join("files"));
    let a = f.import("scan.psd", b"v1").await;
    let out = ws
        .check_out(f.alice.as_ref(), a.id, checkout_request(), None)
        .await
        .unwrap();
    let local = ws.local_path(&a.path).unwrap();
    std::fs::write(&local, b"v2, just saved").unwrap();
    let scanner = {
        let held = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(0)
            .open(&local)
            .unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        })
    };
    let closed = ws
        .check_in(f.alice.as_ref(), &out.checkout, Watch::default())
        .await
        .unwrap();
    scanner.join().unwrap();
    assert!(
        matches!(
            closed.checkout.result,
            Some(leasedesk::model::CheckinResult::Committed { version: 2, .. })
        ),
        "{:?}",
        closed.checkout.result
    );
    assert!(!workspace::is_writable(&local), "read-only again");
}

/// Perforce's way: a copy not checked out carries the read-only attribute; a
/// check-out clears it; a newer head replaces the read-only copy (which a
/// plain rename on Windows refuses).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_only_attribute_follows_the_check_out() {
    let (f, ws, a, local) = a_copy_in_a_workspace("attr.psd", b"v1").await;
    assert!(std::fs::metadata(&local).unwrap().permissions().readonly());
    assert!(
        std::fs::write(&local, b"typed into it").is_err(),
        "Windows refuses to write a read-only file"
    );
    bob_commits(&f, a.id, b"v2").await;
    get_latest(&f, &ws, a.id).await;
    assert_eq!(std::fs::read(&local).unwrap(), b"v2");
    assert!(std::fs::metadata(&local).unwrap().permissions().readonly());

    let out = ws
        .check_out(f.alice.as_ref(), a.id, checkout_request(), None)
        .await
        .unwrap();
    assert!(!std::fs::metadata(&local).unwrap().permissions().readonly());
    std::fs::write(&local, b"v3").unwrap();
    ws.check_in(f.alice.as_ref(), &out.checkout, Watch::default())
        .await
        .unwrap();
    assert!(std::fs::metadata(&local).unwrap().permissions().readonly());
}

/// A workspace deep enough that its files' paths pass 260 characters works:
/// check out, save, check in, cancel with a backup beside the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_longer_than_260_characters_work() {
    let f = fixture();
    let deep = (0..6).fold(f.dir.path().join("files"), |dir, n| {
        dir.join(format!("a folder forty characters long, number {n}"))
    });
    let ws = workspace_at(&f, &deep);
    let name = format!("brand/campaign/{}.psd", "a long name".repeat(3));
    let a = f.import(&name, b"v1").await;
    let out = ws
        .check_out(f.alice.as_ref(), a.id, checkout_request(), None)
        .await
        .unwrap();
    let local = ws.local_path(&a.path).unwrap();
    assert!(
        local.as_os_str().len() > 300,
        "{} characters",
        local.as_os_str().len()
    );
    std::fs::write(&local, b"v2 from deep down").unwrap();
    ws.check_in(f.alice.as_ref(), &out.checkout, Watch::default())
        .await
        .unwrap();
    assert_eq!(
        read_content(f.alice.as_ref(), a.id, None).await,
        b"v2 from deep down"
    );

    let again = ws
        .check_out(f.alice.as_ref(), a.id, checkout_request(), None)
        .await
        .unwrap();
    std::fs::write(&local, b"abandoned").unwrap();
    let closed = ws.cancel(f.alice.as_ref(), &again.checkout).await.unwrap();
    let backup = closed.backup.expect("the changes are kept beside the file");
    assert_eq!(std::fs::read(backup).unwrap(), b"abandoned");
    assert_eq!(std::fs::read(&local).unwrap(), b"v2 from deep down");
}

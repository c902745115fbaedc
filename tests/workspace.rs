//! The workspace folder: local copies on a real disk, on both backends.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use leasedesk::model::*;
use leasedesk::workspace::{self, CheckedOut, Closed, LocalState, Workspace};
use leasedesk::Error;

use crate::harness::*;

fn workspace(f: &Fixture, name: &str) -> Workspace {
    let dir = f.dir.path().join(name);
    Workspace::open(&dir.join("files"), &dir.join("state"), f.clock.clone()).unwrap()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Saves the way design applications do: write a temporary file beside the
/// original, then rename it over the original.
fn save_atomically(path: &Path, data: &[u8]) {
    let temp = path.with_extension("tmp~");
    std::fs::write(&temp, data).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

/// A user who makes a read-only copy writable and saves over it (the app
/// will offer a check-out).
fn edit_without_checking_out(path: &Path, data: &[u8]) {
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    #[cfg(unix)]
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o644);
    #[cfg(windows)]
    #[allow(clippy::permissions_set_readonly_false)] // Windows: one attribute
    permissions.set_readonly(false);
    std::fs::set_permissions(path, permissions).unwrap();
    save_atomically(path, data);
}

/// Which file a path names (not its content): a new download is a new file.
fn file_identity(path: &Path) -> (u64, u64) {
    #[cfg(unix)]
    {
        let metadata = std::fs::metadata(path).unwrap();
        use std::os::unix::fs::MetadataExt;
        (metadata.dev(), metadata.ino())
    }
    #[cfg(windows)]
    {
        let file = std::fs::File::open(path).unwrap();
        let info = winapi_util::file::information(&file).unwrap();
        (info.volume_serial_number(), info.file_index())
    }
}

/// alice checks `id` out through her workspace.
async fn check_out(ws: &Workspace, f: &Fixture, id: ArtifactId) -> CheckedOut {
    ws.check_out(f.alice.as_ref(), id, checkout_request(), None)
        .await
        .unwrap()
}

/// alice checks her copy in through her workspace.
async fn check_in(ws: &Workspace, f: &Fixture, checkout: &Checkout) -> Closed {
    ws.check_in(f.alice.as_ref(), checkout, Watch::default())
        .await
        .unwrap()
}

/// alice's copy of `id` brought to its head: where her changes went, if any.
async fn update(ws: &Workspace, f: &Fixture, id: ArtifactId) -> Option<PathBuf> {
    ws.update(f.alice.as_ref(), &f.artifact(id).await)
        .await
        .unwrap()
}

/// bob checks `data` in as the next version of `id`.
async fn bob_commits(f: &Fixture, id: ArtifactId, data: &[u8]) {
    check_out_and_in_as(f.bob.as_ref(), id, data).await;
}

/// Alice's workspace with `hero.psd` (imported as `v1`) in it as a copy she
/// does not hold: the workspace, the file and the copy's path.
async fn a_read_only_copy(f: &Fixture) -> (Workspace, Artifact, PathBuf) {
    let ws = workspace(f, "alice");
    let a = f.import("hero.psd", b"v1").await;
    update(&ws, f, a.id).await;
    let local = ws.local_path(&a.path).unwrap();
    (ws, a, local)
}

/// Alice's workspace with `p` (imported as `v1`) checked out into it: the
/// workspace, the file, the check-out and the copy's path.
async fn a_checked_out_copy(f: &Fixture, p: &str) -> (Workspace, Artifact, CheckedOut, PathBuf) {
    let ws = workspace(f, "alice");
    let a = f.import(p, b"v1").await;
    let out = check_out(&ws, f, a.id).await;
    let local = ws.local_path(&a.path).unwrap();
    (ws, a, out, local)
}

async fn state(ws: &Workspace, f: &Fixture, id: ArtifactId, holding: bool) -> LocalState {
    ws.local_state(&f.artifact(id).await, holding).unwrap()
}

async fn check_out_brings_the_head_and_makes_it_writable_check_in_makes_it_read_only(f: Fixture) {
    let ws = workspace(&f, "alice");
    let a = f.import("brand/hero.psd", b"v1").await;
    assert_eq!(state(&ws, &f, a.id, false).await, LocalState::NotLocal);

    let out = check_out(&ws, &f, a.id).await;
    let local = ws.local_path(&a.path).unwrap();
    assert_eq!(
        local,
        ws.root().join("brand/hero.psd"),
        "the folder mirrors the repo path"
    );
    assert_eq!(read(&local), b"v1", "the head was downloaded");
    assert!(
        workspace::is_writable(&local),
        "a checked-out copy is writable"
    );
    assert!(out.backup.is_none());
    assert_eq!(state(&ws, &f, a.id, true).await, LocalState::UpToDate);

    save_atomically(&local, b"v2 by alice");
    assert_eq!(state(&ws, &f, a.id, true).await, LocalState::Modified);

    let done = check_in(&ws, &f, &out.checkout).await;
    assert_committed(&done.checkout.result, 2);
    assert!(
        !workspace::is_writable(&local),
        "read-only again after check-in"
    );
    assert_eq!(read(&local), b"v2 by alice");
    assert_eq!(state(&ws, &f, a.id, false).await, LocalState::UpToDate);
}

async fn a_copy_is_downloaded_only_when_its_digest_differs(f: Fixture) {
    let (ws, a, out, local) = a_checked_out_copy(&f, "hero.psd").await;
    ws.cancel(f.alice.as_ref(), &out.checkout).await.unwrap();
    let identity = file_identity(&local);

    check_out(&ws, &f, a.id).await;
    let again = file_identity(&local);
    assert_eq!(
        identity, again,
        "an up-to-date copy is not downloaded again"
    );
}

async fn another_users_commit_makes_the_copy_out_of_date_and_update_brings_it(f: Fixture) {
    let (ws, a, local) = a_read_only_copy(&f).await;
    assert!(
        !workspace::is_writable(&local),
        "a copy you do not hold is read-only"
    );

    bob_commits(&f, a.id, b"v2 by bob").await;
    assert_eq!(state(&ws, &f, a.id, false).await, LocalState::OutOfDate);

    let backup = update(&ws, &f, a.id).await;
    assert!(backup.is_none(), "an unchanged copy needs no backup");
    assert_eq!(read(&local), b"v2 by bob");
    assert_eq!(state(&ws, &f, a.id, false).await, LocalState::UpToDate);
}

async fn cancel_keeps_your_changes_in_a_backup_and_puts_the_head_back(f: Fixture) {
    let (ws, a, out, local) = a_checked_out_copy(&f, "brand/hero.psd").await;
    save_atomically(&local, b"my unfinished work");

    let done = ws.cancel(f.alice.as_ref(), &out.checkout).await.unwrap();
    assert_eq!(done.checkout.state, CheckoutState::Closed);
    let backup = done.backup.expect("the changes were kept");
    let name = backup.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("hero (my changes ") && name.ends_with(").psd"),
        "the backup is named for a person: {name}"
    );
    assert_eq!(
        backup.parent(),
        local.parent(),
        "the backup sits beside the file"
    );
    assert_eq!(read(&backup), b"my unfinished work");
    assert_eq!(read(&local), b"v1", "the head is back in place");
    assert!(!workspace::is_writable(&local));
    assert!(
        f.artifact(a.id).await.lease.is_none(),
        "the lease was released"
    );
}

async fn a_stale_check_in_becomes_a_proposal_and_keeps_your_file_as_a_backup(f: Fixture) {
    let ws = workspace(&f, "alice");
    let a = f.import("hero.psd", b"v1").await;
    let out = ws
        .check_out(f.alice.as_ref(), a.id, for_seconds(60), None)
        .await
        .unwrap();
    let local = ws.local_path(&a.path).unwrap();
    save_atomically(&local, b"alice's late work");
    f.advance(Duration::from_secs(61));
    bob_commits(&f, a.id, b"v2 by bob").await;

    let done = check_in(&ws, &f, &out.checkout).await;
    let Some(CheckinResult::Proposal { proposal }) = &done.checkout.result else {
        panic!("a stale check-in is a proposal: {:?}", done.checkout.result);
    };
    assert_eq!(
        proposal.digest,
        digest(b"alice's late work"),
        "nothing was lost"
    );
    let backup = done.backup.expect("alice's file is kept beside the head");
    assert_eq!(read(&backup), b"alice's late work");
    assert_eq!(read(&local), b"v2 by bob", "the head is in place");
    assert_eq!(state(&ws, &f, a.id, false).await, LocalState::UpToDate);
}

async fn changes_made_before_checking_out_the_head_are_kept_as_the_start_of_the_edit(f: Fixture) {
    let (ws, a, local) = a_read_only_copy(&f).await;
    edit_without_checking_out(&local, b"edited first");
    assert_eq!(state(&ws, &f, a.id, false).await, LocalState::Modified);

    let out = check_out(&ws, &f, a.id).await;
    assert!(out.backup.is_none());
    assert_eq!(
        read(&local),
        b"edited first",
        "the edit on the head goes on"
    );
    let done = check_in(&ws, &f, &out.checkout).await;
    assert_committed(&done.checkout.result, 2);
}

async fn changes_to_an_older_version_are_backed_up_before_the_head_replaces_them(f: Fixture) {
    let (ws, a, local) = a_read_only_copy(&f).await;
    edit_without_checking_out(&local, b"edited v1");
    bob_commits(&f, a.id, b"v2 by bob").await;

    let out = check_out(&ws, &f, a.id).await;
    assert_eq!(
        read(&local),
        b"v2 by bob",
        "the check-out starts from the head"
    );
    assert_eq!(read(&out.backup.expect("a backup")), b"edited v1");
}

/// Several restores of one changed file at once (a double click, the tray and
/// the window) each keep a whole backup: none writes over another's name,
/// which for a hard link would truncate the user's bytes.
async fn restores_at_once_keep_every_backup_whole(f: Fixture) {
    let (ws, a, local) = a_read_only_copy(&f).await;
    bob_commits(&f, a.id, b"v2 by bob").await;
    let head = f.artifact(a.id).await;
    for round in 0..5 {
        edit_without_checking_out(&local, format!("alice's edit {round}").as_bytes());
        let updates: Vec<_> = (0..6)
            .map(|_| {
                let (ws, alice, head) = (ws.clone(), f.alice.clone(), head.clone());
                tokio::spawn(async move { ws.update(alice.as_ref(), &head).await })
            })
            .collect();
        let mut kept = Vec::new();
        for update in updates {
            kept.extend(update.await.unwrap().unwrap());
        }
        assert!(!kept.is_empty(), "round {round}: the edit was kept");
        for backup in &kept {
            assert_eq!(
                read(backup),
                format!("alice's edit {round}").as_bytes(),
                "round {round}: {} is whole",
                backup.display()
            );
        }
        assert_eq!(read(&local), b"v2 by bob");
    }
}

/// A check-out whose copy was never brought to its version (the download
/// failed) must not check in the older bytes: that would undo a version.
async fn a_copy_of_another_version_than_the_check_outs_is_not_checked_in(f: Fixture) {
    let ws = workspace(&f, "alice");
    let a = f.import("hero.psd", b"v1").await;
    update(&ws, &f, a.id).await;
    bob_commits(&f, a.id, b"v2 by bob").await;
    // Checked out at version 2, but the copy was never brought up from 1.
    let open = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let local = ws.local_path(&a.path).unwrap();
    edit_without_checking_out(&local, b"alice's edit of v1");

    let refused = ws.check_in(f.alice.as_ref(), &open, Watch::default()).await;
    assert!(
        matches!(&refused, Err(Error::Invalid(m)) if m.contains("version 1, not version 2")),
        "{refused:?}"
    );
    assert_eq!(f.artifact(a.id).await.head.version, 2, "no version undone");
    let still = f.alice.checkout(open.id).await.unwrap();
    assert_eq!(still.state, CheckoutState::Open, "the check-out stays open");
    assert_eq!(read(&local), b"alice's edit of v1", "the copy is untouched");
}

/// Cancelling a check-in's upload part-way stores nothing and keeps the
/// check-out open; checking in again then commits.
async fn a_cancelled_upload_stores_nothing_and_keeps_the_check_out(f: Fixture) {
    let (ws, a, out, local) = a_checked_out_copy(&f, "hero.psd").await;
    let edit: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&local, &edit).unwrap();
    // The user clicks Cancel as the first chunk goes.
    let cancel = leasedesk::backend::Cancel::default();
    let click = cancel.clone();
    let progress: leasedesk::backend::Progress =
        Arc::new(move |_| click.store(true, std::sync::atomic::Ordering::Relaxed));

    let cancelled = ws
        .check_in(
            f.alice.as_ref(),
            &out.checkout,
            Watch {
                progress: Some(progress),
                notes: None,
                cancel: Some(cancel),
            },
        )
        .await;
    assert!(cancelled.is_err(), "{cancelled:?}");
    assert_eq!(f.artifact(a.id).await.head.version, 1, "nothing stored");
    let still = f.alice.checkout(out.checkout.id).await.unwrap();
    assert_eq!(still.state, CheckoutState::Open, "the check-out stays open");
    assert_eq!(read(&local), edit, "the copy is untouched");

    let done = check_in(&ws, &f, &out.checkout).await;
    assert_committed(&done.checkout.result, 2);
}

async fn a_missing_local_copy_is_missing_and_is_not_checked_in(f: Fixture) {
    let (ws, a, out, local) = a_checked_out_copy(&f, "hero.psd").await;
    std::fs::remove_file(&local).unwrap();
    assert_eq!(state(&ws, &f, a.id, true).await, LocalState::Missing);
    let refused = ws
        .check_in(f.alice.as_ref(), &out.checkout, Watch::default())
        .await;
    assert!(matches!(refused, Err(Error::NotFound(_))), "{refused:?}");
    let still = f.alice.checkout(out.checkout.id).await.unwrap();
    assert_eq!(still.state, CheckoutState::Open, "the check-out stays open");
}

async fn a_check_out_whose_copy_cannot_be_written_is_cancelled(f: Fixture) {
    let ws = workspace(&f, "alice");
    let a = f.import("brand/hero.psd", b"v1").await;
    // A plain file where the folder `brand` should be: nothing can go there.
    std::fs::write(ws.root().join("brand"), b"in the way").unwrap();
    let refused = ws
        .check_out(f.alice.as_ref(), a.id, checkout_request(), None)
        .await;
    assert!(refused.is_err(), "the copy cannot be made: {refused:?}");
    assert!(
        f.artifact(a.id).await.lease.is_none(),
        "its lease was released"
    );
    assert!(f.alice.checkouts(true).await.unwrap().is_empty());
    assert_eq!(
        read(&ws.root().join("brand")),
        b"in the way",
        "nothing of the user's was touched"
    );
}

async fn adding_a_file_imports_it_and_places_a_read_only_copy(f: Fixture) {
    let ws = workspace(&f, "alice");
    let source = f.dir.path().join("Downloads-hero.psd");
    std::fs::write(&source, b"fresh").unwrap();
    let added = ws
        .add(f.alice.as_ref(), &source, &path("art/hero.psd"))
        .await
        .unwrap();
    assert_eq!(added.head.version, 1);
    let local = ws.local_path(&added.path).unwrap();
    assert_eq!(read(&local), b"fresh");
    assert!(!workspace::is_writable(&local));
    assert_eq!(read(&source), b"fresh", "the original is left alone");

    let again = ws
        .add(f.alice.as_ref(), &source, &path("art/hero.psd"))
        .await;
    assert!(matches!(again, Err(Error::Exists(_))), "{again:?}");
}

crate::contract!(
    check_out_brings_the_head_and_makes_it_writable_check_in_makes_it_read_only,
    a_copy_is_downloaded_only_when_its_digest_differs,
    another_users_commit_makes_the_copy_out_of_date_and_update_brings_it,
    cancel_keeps_your_changes_in_a_backup_and_puts_the_head_back,
    a_stale_check_in_becomes_a_proposal_and_keeps_your_file_as_a_backup,
    changes_made_before_checking_out_the_head_are_kept_as_the_start_of_the_edit,
    changes_to_an_older_version_are_backed_up_before_the_head_replaces_them,
    restores_at_once_keep_every_backup_whole,
    a_copy_of_another_version_than_the_check_outs_is_not_checked_in,
    a_cancelled_upload_stores_nothing_and_keeps_the_check_out,
    a_missing_local_copy_is_missing_and_is_not_checked_in,
    a_check_out_whose_copy_cannot_be_written_is_cancelled,
    adding_a_file_imports_it_and_places_a_read_only_copy,
);

#[test]
fn backups_are_numbered_when_the_name_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("hero.psd");
    let first = workspace::backup_path(&local, "2026-11-29 1405");
    assert_eq!(
        first,
        dir.path().join("hero (my changes 2026-11-29 1405).psd")
    );
    std::fs::write(&first, b"x").unwrap();
    let second = workspace::backup_path(&local, "2026-11-29 1405");
    assert_eq!(
        second,
        dir.path().join("hero (my changes 2026-11-29 1405 2).psd")
    );
}

#[test]
fn unchanged_files_are_not_hashed_again_when_the_workspace_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let (root, state) = (dir.path().join("files"), dir.path().join("state"));
    let open = || Workspace::open(&root, &state, leasedesk::clock::Clock::system()).unwrap();
    let ws = open();
    for i in 0..5 {
        std::fs::write(root.join(format!("f{i}.psd")), format!("file {i}")).unwrap();
    }
    for i in 0..5 {
        let d = ws.digest(&path(&format!("f{i}.psd"))).unwrap();
        assert_eq!(d, Some(digest(format!("file {i}").as_bytes())));
    }
    assert_eq!(ws.files_hashed(), 5);
    drop(ws);

    let ws = open();
    save_atomically(&root.join("f3.psd"), b"changed");
    for i in 0..5 {
        ws.digest(&path(&format!("f{i}.psd"))).unwrap();
    }
    assert_eq!(
        ws.files_hashed(),
        1,
        "only the changed file is hashed at start"
    );
    assert_eq!(
        ws.digest(&path("f3.psd")).unwrap(),
        Some(digest(b"changed"))
    );
}

/// Saves in the ways applications do, and checks the watcher reports the
/// file each time, soon: the app then looks at it again.
#[tokio::test]
async fn the_watcher_reports_atomic_saves_blender_saves_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    // The watcher names paths under the root as given: the temp folder's real
    // path (macOS reaches it through a symbolic link). Windows' canonical form
    // is `\\?\C:\…`, where `/` is no separator, so there the path stays as it is.
    let root = if cfg!(windows) {
        dir.path().to_owned()
    } else {
        dir.path().canonicalize().unwrap()
    };
    std::fs::create_dir_all(root.join("scenes")).unwrap();
    let file = root.join("scenes/shot.blend");
    std::fs::write(&file, b"v1").unwrap();
    let (_watcher, mut changes) = workspace::watch::watch(&root).unwrap();
    // Wine's recursive ReadDirectoryChangesW misses a folder that existed
    // before the watch until a handle to it is opened (Windows does not).
    #[cfg(windows)]
    std::fs::read_dir(root.join("scenes")).unwrap();

    save_atomically(&file, b"v2");
    let took = expect_report(&mut changes, &file, "temp file renamed over it").await;
    assert!(took < Duration::from_secs(1), "reported in {took:?}");

    // Blender: the original becomes .blend1, then the temp file takes its name.
    std::fs::rename(&file, root.join("scenes/shot.blend1")).unwrap();
    std::fs::write(root.join("scenes/shot.blend@"), b"v3").unwrap();
    std::fs::rename(root.join("scenes/shot.blend@"), &file).unwrap();
    expect_report(&mut changes, &file, "Blender's save").await;
    assert_eq!(read(&file), b"v3");

    std::fs::remove_file(&file).unwrap();
    expect_report(&mut changes, &file, "delete").await;

    // A file that comes back by a rename and goes again within one debounce
    // window: a debouncer that reports net effects says nothing of it, yet
    // the path changed (it had been deleted, and may have been looked at in
    // between). This is the second half of a Blender save, then a delete.
    std::fs::write(root.join("scenes/shot.blend@"), b"v4").unwrap();
    std::fs::rename(root.join("scenes/shot.blend@"), &file).unwrap();
    std::fs::remove_file(&file).unwrap();
    expect_report(&mut changes, &file, "a save at once deleted").await;
}

/// The backstop for lost events: a second look names the files whose stat
/// changed since the first, and only those.
#[test]
fn a_second_look_names_the_files_changed_since_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let [kept, saved, deleted, appeared] =
        ["kept.psd", "saved.psd", "deleted.psd", "appeared.psd"].map(|n| dir.path().join(n));
    for file in [&kept, &saved, &deleted] {
        std::fs::write(file, b"v1").unwrap();
    }
    let all = || {
        vec![
            kept.clone(),
            saved.clone(),
            deleted.clone(),
            appeared.clone(),
        ]
    };
    let mut restat = workspace::watch::Restat::default();
    assert_eq!(
        restat.changed(all()),
        Vec::<PathBuf>::new(),
        "the first look takes note"
    );

    save_atomically(&saved, b"v2, longer");
    std::fs::remove_file(&deleted).unwrap();
    std::fs::write(&appeared, b"new").unwrap();
    assert_eq!(
        restat.changed(all()),
        vec![saved.clone(), deleted.clone(), appeared.clone()]
    );
    assert_eq!(
        restat.changed(all()),
        Vec::<PathBuf>::new(),
        "nothing since"
    );

    // A path not looked at before counts as changed.
    let added = dir.path().join("added.psd");
    assert_eq!(restat.changed([kept, added.clone()]), vec![added]);
}

/// Waits for a batch that names `file`; how long it took.
async fn expect_report(
    changes: &mut tokio::sync::mpsc::UnboundedReceiver<Vec<std::path::PathBuf>>,
    file: &Path,
    what: &str,
) -> Duration {
    let started = Instant::now();
    loop {
        let batch = tokio::time::timeout(Duration::from_secs(2), changes.recv())
            .await
            .unwrap_or_else(|_| panic!("{what}: no report within 2 s"))
            .expect("the watcher runs");
        if batch.iter().any(|p| p == file) {
            return started.elapsed();
        }
    }
}

//! A real `leasedesk` process killed (SIGKILL) in the middle of a check-in
//! leaves the whole check-in or none of it, and a store that opens cleanly.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use leasedesk::failpoint;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Upload};

use crate::harness::*;

/// Writes `work` to `work.psd` in `data`, runs its check-in as alice in a
/// child process, waits until it stops at `failpoint` (and `ready` holds),
/// then kills it with SIGKILL; answers the file's path.
fn kill_checkin_at(
    data: &Path,
    work: impl AsRef<[u8]>,
    failpoint: &str,
    ready: impl Fn() -> bool,
) -> PathBuf {
    let file = data.join("work.psd");
    std::fs::write(&file, work).unwrap();
    let checkin = [OsStr::new("checkin"), OsStr::new("a.psd"), file.as_os_str()];
    kill_at(data, &checkin, failpoint, ready, || {});
    file
}

/// The CLI on the data folder `data` as alice.
fn alice_cli(data: &Path) -> testkit::Cli {
    cli_on().data(data).as_participant("user:alice")
}

/// Runs `args` as alice in a child process, waits until it stops at
/// `failpoint` (and `ready` holds), calls `meanwhile`, then kills it with SIGKILL.
fn kill_at(
    data: &Path,
    args: &[&OsStr],
    failpoint: &str,
    ready: impl Fn() -> bool,
    meanwhile: impl FnOnce(),
) {
    let mut child = alice_cli(data)
        .command()
        .args(args)
        .env("LEASEDESK_FAILPOINTS", format!("{failpoint}=pause"))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("start leasedesk");
    // Read stderr on a thread, so a child that hangs silently fails the test
    // at the deadline instead of hanging it.
    let said = testkit::tool::lines_of(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    let reached = format!("failpoint {failpoint} reached");
    let stopped = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match said.recv_timeout(left) {
            Ok(line) if line.contains(&reached) => break true,
            Ok(_) => continue,
            Err(_) => break false,
        }
    };
    while stopped && !ready() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if stopped {
        meanwhile();
    }
    child.kill().expect("SIGKILL"); // Child::kill sends SIGKILL on Unix
    child.wait().unwrap();
    assert!(stopped, "the child never reached {failpoint}");
}

/// A data folder with a.psd at version 1 checked out by alice.
async fn checked_out_store() -> (tempfile::TempDir, Checkout, Vec<Event>) {
    let dir = tempfile::tempdir().unwrap();
    let alice = Bundled::open(dir.path())
        .unwrap()
        .acting_as(participant("user:alice"));
    let a = alice.import(&path("a.psd"), bytes(b"v1")).await.unwrap();
    let c = alice.check_out(a.id, checkout_request()).await.unwrap();
    let events = all_events(&alice).await;
    (dir, c, events)
}

fn assert_store_is_sound(data: &Path) {
    let db = rusqlite::Connection::open(data.join("leasedesk.db")).unwrap();
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let orphans: i64 = db
        .query_row(
            "SELECT (SELECT COUNT(*) FROM versions WHERE artifact_id NOT IN (SELECT id FROM artifacts))
                  + (SELECT COUNT(*) FROM proposals WHERE artifact_id NOT IN (SELECT id FROM artifacts))
                  + (SELECT COUNT(*) FROM artifacts a WHERE NOT EXISTS
                        (SELECT 1 FROM versions v WHERE v.artifact_id = a.id AND v.version = a.head_version))",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0, "no orphan row");
}

async fn assert_nothing_of_the_checkin_happened(
    data: &Path,
    c: &Checkout,
    events_before: &[Event],
) {
    assert_store_is_sound(data);
    let alice = Bundled::open(data)
        .unwrap()
        .acting_as(participant("user:alice"));
    assert_eq!(
        std::fs::read_dir(data.join("blobs/tmp")).unwrap().count(),
        0,
        "reopening removed the killed upload's temporary file"
    );
    assert_eq!(
        blob_files(data),
        named_blobs(data),
        "reopening removed the killed check-in's blob"
    );
    assert_eq!(
        all_events(&alice).await,
        events_before,
        "no event of the check-in"
    );
    assert_eq!(
        alice.checkout(c.id).await.unwrap(),
        *c,
        "the check-out is still open"
    );
    let artifact = alice.artifact(c.artifact_id).await.unwrap();
    assert_eq!(artifact.head.version, 1, "no version was committed");
    assert_eq!(
        artifact.lease.map(|l| l.holder),
        Some(c.holder.clone()),
        "alice still holds the lease"
    );
    assert!(all_proposals(&alice).await.is_empty(), "no proposal");

    // The retry goes through whole.
    let work = data.join("retry.psd");
    std::fs::write(&work, b"the work, again").unwrap();
    let done = alice.check_in(c.id, Upload::file(&work)).await.unwrap();
    assert_eq!(
        done.result,
        Some(CheckinResult::Committed {
            version: 2,
            digest: digest(b"the work, again")
        })
    );
}

#[tokio::test]
async fn killed_in_the_middle_of_a_checkin_upload_leaves_none_of_it() {
    let (dir, c, events) = checked_out_store().await;
    let temp_files = || -> Vec<u64> {
        std::fs::read_dir(dir.path().join("blobs/tmp"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .collect()
    };
    // Several chunks.
    kill_checkin_at(dir.path(), vec![7u8; 4 << 20], "upload.stream", || {
        temp_files().iter().any(|&len| len > 0)
    });
    let left = temp_files();
    assert!(
        left.len() == 1 && left[0] > 0 && left[0] < 4 << 20,
        "the killed upload left a partial temporary file: {left:?}"
    );
    assert_nothing_of_the_checkin_happened(dir.path(), &c, &events).await;
}

#[tokio::test]
async fn killed_in_the_middle_of_a_checkin_commit_leaves_none_of_it() {
    let (dir, c, events) = checked_out_store().await;
    kill_checkin_at(
        dir.path(),
        b"the work",
        "store.before_durable_commit",
        || true,
    );
    assert_nothing_of_the_checkin_happened(dir.path(), &c, &events).await;
}

#[tokio::test]
async fn killed_after_the_commit_before_answering_a_retry_gets_the_same_answer() {
    let (dir, c, _) = checked_out_store().await;
    let file = kill_checkin_at(
        dir.path(),
        b"the work",
        "store.after_durable_commit",
        || true,
    );
    assert_store_is_sound(dir.path());

    let retry = alice_cli(dir.path()).ok(&["--json", "checkin", "a.psd", file.to_str().unwrap()]);
    let answer: serde_json::Value = serde_json::from_str(&retry).unwrap();
    assert_eq!(
        (answer["id"].as_str(), answer["result"]["version"].as_u64()),
        (Some(c.id.to_string().as_str()), Some(2))
    );
    let alice = Bundled::open(dir.path())
        .unwrap()
        .acting_as(participant("user:alice"));
    assert_eq!(
        alice.versions(c.artifact_id).await.unwrap().len(),
        2,
        "committed once"
    );
}

/// An import killed after its blob was renamed to its digest, before the
/// transaction naming it: while the process lives, another process's open
/// leaves the blob alone; once it is dead, the next open removes it.
#[tokio::test]
async fn killed_between_a_blobs_rename_and_its_commit_leaves_no_blob() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let alice = Bundled::open(data)
        .unwrap()
        .acting_as(participant("user:alice"));
    alice.import(&path("a.psd"), bytes(b"v1")).await.unwrap();
    drop(alice);
    let file = data.join("new.psd");
    std::fs::write(&file, b"bytes no row will name").unwrap();
    let orphan = digest(b"bytes no row will name").hex().to_owned();
    let import = [
        OsStr::new("import"),
        OsStr::new("new.psd"),
        file.as_os_str(),
    ];
    let mut survived_a_sweep = false;
    kill_at(
        data,
        &import,
        failpoint::at::BLOB_RENAMED,
        || true,
        || {
            assert!(blob_files(data).contains(&orphan), "renamed to its digest");
            // This process's open sweeps; the live upload's blob stays.
            drop(Bundled::open(data).unwrap());
            survived_a_sweep = blob_files(data).contains(&orphan);
        },
    );
    assert!(survived_a_sweep, "a sweep left the live upload's blob");
    assert!(
        blob_files(data).contains(&orphan),
        "the killed process left it"
    );

    let reopened = Bundled::open(data).unwrap();
    assert!(
        !blob_files(data).contains(&orphan),
        "the open after the crash removed it"
    );
    assert_eq!(blob_files(data), named_blobs(data));
    assert_eq!(reopened.artifacts().await.unwrap().len(), 1, "no import");
    assert_store_is_sound(data);
}

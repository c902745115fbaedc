//! The blob folder holds exactly the blobs that rows name: an upload that loses
//! a race, or whose transaction fails, leaves nothing behind, and never takes
//! a blob that someone else's row names.

use std::time::Duration;

use tokio::io::AsyncWriteExt;

use leasedesk::failpoint::{self, Action, Failpoints};
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Error, Options, Upload};

use crate::contract_with_blob_folder;
use crate::harness::*;

/// An upload whose bytes the test sends later (its checks before reading run now).
fn gated_upload() -> (Upload, tokio::io::DuplexStream) {
    let (sender, reader) = tokio::io::duplex(64 << 10);
    (Upload::stream(reader), sender)
}

async fn send_and_close(mut sender: tokio::io::DuplexStream, data: &[u8]) {
    sender.write_all(data).await.expect("send upload bytes");
    sender.shutdown().await.unwrap();
}

fn assert_only_named_blobs(f: &Fixture) {
    assert_eq!(
        blob_files(f.dir.path()),
        f.named_blobs(),
        "the blob folder holds exactly the blobs rows name"
    );
    let left: Vec<_> = std::fs::read_dir(f.dir.path().join("blobs/tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "no upload or hold file is left: {left:?}");
}

const RACERS: usize = 16;

/// `RACERS` imports of one new path, each past its check that the path is
/// free before any sends its bytes (`bytes_of(i)`): their outcomes.
async fn race_imports(
    f: &Fixture,
    at: &str,
    bytes_of: impl Fn(usize) -> Vec<u8>,
) -> Vec<Result<Artifact, Error>> {
    let path = path(at);
    let mut senders = Vec::new();
    let mut imports = Vec::new();
    for _ in 0..RACERS {
        let (upload, sender) = gated_upload();
        senders.push(sender);
        let (alice, path) = (f.alice.clone(), path.clone());
        imports.push(tokio::spawn(
            async move { alice.import(&path, upload).await },
        ));
    }
    wait_for_uploads(f.dir.path(), RACERS).await;
    for (i, sender) in senders.into_iter().enumerate() {
        send_and_close(sender, &bytes_of(i)).await;
    }
    let mut outcomes = Vec::new();
    for import in imports {
        outcomes.push(import.await.unwrap());
    }
    outcomes
}

/// 16 imports of one new path, with different bytes: one wins, and the 15
/// losers' blobs are gone.
async fn concurrent_imports_of_one_new_path_leave_only_named_blobs(f: Fixture) {
    let outcomes = race_imports(&f, "race/new.psd", |i| {
        format!("bytes of racer {i}").into_bytes()
    })
    .await;
    let mut won = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(artifact) => won.push(artifact),
            Err(Error::Exists(_)) => {}
            Err(other) => panic!("a loser is told the path exists, not {other:?}"),
        }
    }
    assert_eq!(won.len(), 1, "one import wins");
    assert_eq!(blob_files(f.dir.path()).len(), 1, "one blob is left");
    assert_only_named_blobs(&f);
    let head = &won[0].head;
    let bytes = read_content(f.bob.as_ref(), won[0].id, None).await;
    assert_eq!(digest(&bytes), head.digest, "the winner's bytes are served");
}

/// 16 imports of one new path with the same bytes share one blob: the
/// losers' cleanup leaves the winner's.
async fn identical_bytes_of_a_winner_and_its_losers_keep_the_winners_blob(f: Fixture) {
    let outcomes = race_imports(&f, "race/same.psd", |_| b"the same bytes".to_vec()).await;
    let winner = outcomes
        .into_iter()
        .find_map(Result::ok)
        .expect("one import wins");
    assert_only_named_blobs(&f);
    assert_eq!(
        read_content(f.bob.as_ref(), winner.id, None).await,
        b"the same bytes"
    );
}

/// A check-in and its retry with other bytes, both past their checks: one
/// commits, the other is refused, and its blob is gone.
async fn a_check_in_raced_by_a_retry_with_other_bytes_leaves_no_extra_blob(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let mut checkins = Vec::new();
    let mut senders = Vec::new();
    for _ in 0..2 {
        let (upload, sender) = gated_upload();
        senders.push(sender);
        let alice = f.alice.clone();
        checkins.push(tokio::spawn(
            async move { alice.check_in(c.id, upload).await },
        ));
    }
    wait_for_uploads(f.dir.path(), 2).await;
    for (i, sender) in senders.into_iter().enumerate() {
        send_and_close(sender, format!("the work, take {i}").as_bytes()).await;
    }
    let mut outcomes = Vec::new();
    for checkin in checkins {
        outcomes.push(checkin.await.unwrap());
    }
    assert_eq!(
        outcomes.iter().filter(|o| o.is_ok()).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .any(|o| matches!(o, Err(Error::CheckoutClosed(_)))),
        "{outcomes:?}"
    );
    assert_eq!(blob_files(f.dir.path()).len(), 2, "v1 and the winner's");
    assert_only_named_blobs(&f);
}

/// An edit whose base stopped being the head while its bytes were on the way
/// is refused as stale, and its blob is gone.
async fn a_stale_edit_commit_leaves_no_extra_blob(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let edit = f.agent.begin_edit(a.id, Some(1)).await.unwrap();
    let (upload, sender) = gated_upload();
    let agent = f.agent.clone();
    let commit = tokio::spawn(async move { agent.commit_edit(edit.id, upload).await });
    wait_for_uploads(f.dir.path(), 1).await;
    // Meanwhile the edit's lease lapses and bob commits version 2.
    f.advance(Duration::from_secs(2));
    check_out_and_in_as(f.bob.as_ref(), a.id, b"bob's v2").await;
    send_and_close(sender, b"the agent's late work").await;
    match commit.await.unwrap() {
        Err(Error::Stale { head }) => assert_eq!(head.version, 2),
        other => panic!("the edit is refused as stale, not {other:?}"),
    }
    assert_eq!(blob_files(f.dir.path()).len(), 2, "v1 and v2");
    assert_only_named_blobs(&f);
}

contract_with_blob_folder!(
    concurrent_imports_of_one_new_path_leave_only_named_blobs,
    identical_bytes_of_a_winner_and_its_losers_keep_the_winners_blob,
    a_check_in_raced_by_a_retry_with_other_bytes_leaves_no_extra_blob,
    a_stale_edit_commit_leaves_no_extra_blob,
);

/// The same data folder, with `failpoints` set, acting as alice.
fn alice_failing_at(f: &Fixture, failpoints: Failpoints) -> Bundled {
    let options = Options {
        clock: f.clock.clone(),
        failpoints,
        ..Options::default()
    };
    Bundled::open_with(f.dir.path(), options)
        .unwrap()
        .acting_as(participant("user:alice"))
}

/// A check-in whose transaction fails removes the blob it stored, except when
/// a committed row names the same bytes (here another file's head).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_in_whose_transaction_fails_removes_only_its_own_blob() {
    let f = fixture();
    let a = f.import("a.psd", b"v1").await;
    let other = f.import("other.psd", b"bytes someone committed").await;
    let failing = alice_failing_at(
        &f,
        Failpoints::new([(failpoint::at::BEFORE_DURABLE_COMMIT, Action::Error)]),
    );
    let c = failing.check_out(a.id, checkout_request()).await.unwrap();

    let failed = failing.check_in(c.id, bytes(b"new work")).await;
    assert!(matches!(failed, Err(Error::Internal(_))), "{failed:?}");
    assert!(
        !blob_files(f.dir.path()).contains(digest(b"new work").hex()),
        "the failed check-in's blob is gone"
    );
    assert_only_named_blobs(&f);

    let failed = failing
        .check_in(c.id, bytes(b"bytes someone committed"))
        .await;
    assert!(matches!(failed, Err(Error::Internal(_))), "{failed:?}");
    assert_only_named_blobs(&f);
    assert_eq!(
        read_content(f.bob.as_ref(), other.id, None).await,
        b"bytes someone committed",
        "the committed row's blob is kept"
    );

    // The check-out is still open, and a check-in without the failure commits.
    let done = f.alice.check_in(c.id, bytes(b"new work")).await.unwrap();
    assert_committed(&done.result, 2);
    assert_only_named_blobs(&f);
}

//! Links cut during a transfer, at chosen or random points, and a server
//! killed mid-upload: each transfer finishes, sending each byte about once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use leasedesk::backend::{Backend, TransferNote, Upload};
use leasedesk::model::*;
use testkit::link::Shape;

use super::*;

/// A client through a link that is cut several times during a check-in.
async fn a_checkin_through_a_link_cut_again_and_again_finishes_sending_each_byte_once(f: Fixture) {
    let (link, alice) = f.linked("user:alice", Shape::default()).await;
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("big.psb");
    let data = noise(13, 12 * MIB);
    std::fs::write(&file, &data).unwrap();
    let a = f.import("big.psb", b"v1").await;
    let c = alice.check_out(a.id, checkout_request()).await.unwrap();
    let before = link.sent_up();
    // Cut at 30 %, then again a little later, then at 80 % of the file.
    link.cut_when_up(before + (data.len() as u64 * 3 / 10));
    let reconnects = Arc::new(AtomicBool::new(false));
    let told = reconnects.clone();
    let cuts = {
        let link_cut = Arc::new(link);
        let link = link_cut.clone();
        let watcher = tokio::spawn(async move {
            for share in [5, 8] {
                link.until_sent_up(before + data_len() * share / 10).await;
                link.cut_now();
            }
        });
        (link_cut, watcher)
    };
    fn data_len() -> u64 {
        12 * MIB as u64
    }
    let upload = Upload::file(&file).with_notes(move |note| {
        if matches!(note, TransferNote::Reconnecting { .. }) {
            told.store(true, Ordering::SeqCst);
        }
    });
    let done = alice.check_in(c.id, upload).await.unwrap();
    let (link, watcher) = cuts;
    watcher.await.unwrap();
    assert!(
        matches!(done.result, Some(CheckinResult::Committed { .. })),
        "{:?}",
        done.result
    );
    assert!(
        reconnects.load(Ordering::SeqCst),
        "the client told it reconnected"
    );
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, data);
    assert_eq!(
        f.alice.versions(a.id).await.unwrap().len(),
        2,
        "committed once"
    );
    let sent = link.sent_up() - before;
    assert_sent_about_once(sent, data.len());
}

/// Twenty check-ins through a link cut once each at a random point (in a
/// chunk list, an append, a check-in that names the upload): each commits
/// once, the server keeps exactly the blobs its rows name, and an upload
/// left unfinished is removed once its check-out closes.
async fn twenty_transfers_cut_at_random_points_each_commit_once(f: Fixture) {
    let (link, alice) = f.linked("user:alice", Shape::default()).await;
    let folder = tempfile::tempdir().unwrap();
    let mut steps = Xorshift::new(0x2545_F491_4F6C_DD1D);
    let mut random = move |below: u64| steps.next_u64() % below;
    for n in 0..20u64 {
        let size = (3 * MIB / 2) as u64 + random(2 * MIB as u64);
        let data = noise(100 + n, size as usize);
        let file = folder.path().join(format!("{n}.psd"));
        std::fs::write(&file, &data).unwrap();
        let a = f.import(&format!("f{n}.psd"), b"v1").await;
        let c = alice.check_out(a.id, checkout_request()).await.unwrap();
        link.cut_when_up(link.sent_up() + random(size + 20_000));
        let done = alice.check_in(c.id, Upload::file(&file)).await.unwrap();
        assert!(
            matches!(
                done.result,
                Some(CheckinResult::Committed { version: 2, .. })
            ),
            "transfer {n}: {:?}",
            done.result
        );
        assert_eq!(
            f.alice.versions(a.id).await.unwrap().len(),
            2,
            "transfer {n}"
        );
        assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, data);
    }
    // One more, begun and half sent, never finished; its check-out is cancelled.
    let api = Api::of(&f, "user:alice");
    let a = f.import("left.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let data = noise(200, 2 * MIB);
    let list = list_of(&data);
    let (_, state) = api.begin(&format!("checkout={}", c.id), &list).await;
    let id = state["id"].as_str().unwrap().to_owned();
    api.append(&id, 0, to_send(&data, &list, &state)[..MIB].to_vec())
        .await;
    f.alice.cancel(c.id).await.unwrap();
    f.advance(std::time::Duration::from_secs(11 * 60));
    f.store.sweep().unwrap();
    assert_eq!(f.kept_uploads(), 0, "every upload, used or left, is gone");
    assert_eq!(
        f.stored_blobs(),
        f.named_blobs(),
        "exactly the blobs the rows name"
    );
}

/// A download through a link cut in the middle goes on from where it was.
async fn a_download_through_a_cut_link_resumes(f: Fixture) {
    let (link, alice) = f.linked("user:alice", Shape::default()).await;
    let link = Arc::new(link);
    let data = noise(14, 8 * MIB);
    let a = f.import("a.psd", &data).await;
    let start = link.sent_down();
    let cutter = {
        let link = link.clone();
        tokio::spawn(async move {
            link.until_sent_down(start + 3 * MIB as u64).await;
            link.cut_now();
        })
    };
    let folder = tempfile::tempdir().unwrap();
    let dest = folder.path().join("a.psd");
    leasedesk::backend::download(&alice, a.id, None, &dest, None)
        .await
        .unwrap();
    cutter.await.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    let down = link.sent_down() - start;
    assert!(down < data.len() as u64 * 11 / 10, "{down} bytes came down");
}

/// A server killed mid-upload and started again on the same data folder:
/// the client goes on from what the server had, and nothing acknowledged
/// is sent twice.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_survives_its_server_being_killed() {
    use leasedesk::remote::Remote;
    use testkit::link::Link;

    let cli = cli_in_temp_dir();
    let token = cli.add_user("alice");
    let mut serve = cli.serve().spawn();
    let address: std::net::SocketAddr = serve.addr().parse().unwrap();
    // Slow enough up (16 MB/s) that the kill comes mid-upload.
    let shape = Shape {
        up_rate: Some(16_000_000),
        ..Shape::default()
    };
    let link = Arc::new(Link::to(address, shape).await);
    let alice = Arc::new(Remote::new(&link.url(), &token).unwrap());
    let data = noise(15, 24 * MIB);
    let a = alice.import(&path("big.psb"), bytes(b"v1")).await.unwrap();
    let c = alice.check_out(a.id, checkout_request()).await.unwrap();
    let start = link.sent_up();
    let (_folder, checkin) = checking_in(alice.clone(), c.id, "big.psb", &data);
    link.until_sent_up(start + 8 * MIB as u64).await;
    tokio::task::spawn_blocking(move || {
        serve.kill();
        serve
    })
    .await
    .unwrap();
    let again = cli.serve().listen(&address.to_string()).spawn();
    let done = checkin.await.unwrap().unwrap();
    assert!(
        matches!(done.result, Some(CheckinResult::Committed { .. })),
        "{:?}",
        done.result
    );
    assert_eq!(read_content(alice.as_ref(), a.id, None).await, data);
    let sent = link.sent_up() - start;
    assert_sent_about_once(sent, data.len());
    drop(again);
}

// Cases of the HTTP API: on a server over SQLite and one over PostgreSQL and S3.
crate::served!(
    a_checkin_through_a_link_cut_again_and_again_finishes_sending_each_byte_once,
    a_download_through_a_cut_link_resumes,
    twenty_transfers_cut_at_random_points_each_commit_once,
);

//! What is sent and what is refused: only the chunks a server lacks, in
//! uploads and updates; chunk lists and ranges from a hostile client;
//! uploads left unfinished or changed while sent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use leasedesk::backend::{Backend, TransferNote, Upload};
use leasedesk::chunking::chunk_reader;
use leasedesk::model::*;
use testkit::link::Shape;

use super::*;

async fn only_the_chunks_the_server_lacks_are_sent(f: Fixture) {
    let api = Api::of(&f, "user:alice");
    let v1 = noise(1, 6 * MIB);
    let a = f.import("art/hero.psd", &v1).await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let v2 = edited(&v1, 3 * MIB, 1000, 2);
    let list = list_of(&v2);
    let (status, state) = api.begin(&format!("checkout={}", c.id), &list).await;
    assert_eq!(status, 201, "{state}");
    let length = state["length"].as_u64().unwrap();
    assert!(
        length > 0 && length <= 2 * u64::from(leasedesk::chunking::MAX_CHUNK),
        "an edit of 1000 bytes sends {length} of {}",
        v2.len()
    );
    assert_eq!(state["offset"], 0);
    assert_eq!(state["size"], v2.len());
    let id = state["id"].as_str().unwrap().to_owned();
    let bytes = to_send(&v2, &list, &state);
    assert_eq!(bytes.len() as u64, length);

    // Before every byte came, the check-in is refused and commits nothing.
    let half = bytes.len() / 2;
    let (status, _) = api.append(&id, 0, bytes[..half].to_vec()).await;
    assert_eq!(status, 200);
    let checkin = format!("/v1/checkouts/{}/checkin", c.id);
    let (status, refused) = api.use_upload(&checkin, &id).await;
    assert_eq!(
        (status.as_u16(), &refused["error"]),
        (409, &"upload_incomplete".into())
    );
    assert_eq!(refused["offset"], half);

    let (status, state) = api.append(&id, half as u64, bytes[half..].to_vec()).await;
    assert_eq!((status.as_u16(), &state["offset"]), (200, &length.into()));
    let (status, done) = api.use_upload(&checkin, &id).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["outcome"], "committed", "{done}");
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, v2);

    // The new version's chunk list is the one that came, kept.
    let kept = f.alice.chunks(a.id, None).await.unwrap();
    assert_eq!(kept, list);
}

async fn a_large_file_checks_in_through_the_backend_and_sends_only_its_change(f: Fixture) {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("hero.psd");
    let v1 = noise(3, 5 * MIB);
    std::fs::write(&file, &v1).unwrap();
    let a = f
        .alice
        .import(&path("hero.psd"), Upload::file(&file))
        .await
        .unwrap();
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, v1);
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let v2 = edited(&v1, MIB, 4000, 4);
    std::fs::write(&file, &v2).unwrap();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let told = notes.clone();
    let upload = Upload::file(&file)
        .with_message("one layer")
        .with_notes(move |n| told.lock().unwrap().push(n));
    let done = f.alice.check_in(c.id, upload).await.unwrap();
    assert!(
        matches!(done.result, Some(CheckinResult::Committed { .. })),
        "{:?}",
        done.result
    );
    let head = f.artifact(a.id).await.head;
    assert_eq!(
        (head.version, head.message.as_deref()),
        (2, Some("one layer"))
    );
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, v2);
    if f.server.is_some() {
        let notes = notes.lock().unwrap();
        let Some(TransferNote::Sending { bytes, size }) = notes.first().cloned() else {
            panic!("told nothing of what it sends: {notes:?}");
        };
        assert_eq!(size, v2.len() as u64);
        assert!(bytes < size / 8, "sent {bytes} of {size}");
    }
}

async fn refusals_commit_nothing(f: Fixture) {
    let alice = Api::of(&f, "user:alice");
    let bob = Api::of(&f, "user:bob");
    let v1 = noise(5, 2 * MIB);
    let a = f.import("a.psd", &v1).await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let v2 = noise(6, 2 * MIB);
    let list = list_of(&v2);
    let aim = format!("checkout={}", c.id);

    // Another participant's check-out: refused as its check-in would be.
    let (status, body) = bob.begin(&aim, &list).await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (403, &"forbidden".into())
    );

    let (_, state) = alice.begin(&aim, &list).await;
    let id = state["id"].as_str().unwrap().to_owned();
    let bytes = to_send(&v2, &list, &state);
    // Another's upload does not exist for bob.
    let (status, body) = bob.append(&id, 0, Vec::new()).await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (404, &"not_found".into())
    );
    // An append at a wrong offset is told the right one.
    alice.append(&id, 0, bytes[..1000].to_vec()).await;
    let (status, body) = alice.append(&id, 5000, bytes[5000..6000].to_vec()).await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (409, &"wrong_offset".into())
    );
    assert_eq!(body["offset"], 1000);
    // A chunk whose bytes are not its id: dropped, back to its start.
    let mut damaged = bytes[1000..].to_vec();
    damaged[200_000] ^= 1;
    let (status, body) = alice.append(&id, 1000, damaged).await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (422, &"chunk_mismatch".into())
    );
    let restart = body["offset"].as_u64().unwrap();
    assert!(restart <= 200_000 + 1000, "{body}");
    let (_, state) = alice.state(&id).await;
    assert_eq!(state["offset"], restart);
    // More than the upload's length.
    let mut longer = bytes[restart as usize..].to_vec();
    longer.extend_from_slice(b"more");
    let (status, body) = alice.append(&id, restart, longer).await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (422, &"invalid".into()),
        "{body}"
    );
    // The whole upload came; but the check-out is closed now: refused.
    f.alice.cancel(c.id).await.unwrap();
    let (status, body) = alice
        .use_upload(&format!("/v1/checkouts/{}/checkin", c.id), &id)
        .await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (409, &"checkout_closed".into()),
        "{body}"
    );
    let (status, body) = alice.append(&id, 0, Vec::new()).await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (409, &"checkout_closed".into())
    );
    // ... and the upload is gone with it.
    let (status, _) = alice.state(&id).await;
    assert_eq!(status, 404);
    assert_eq!(
        f.alice.versions(a.id).await.unwrap().len(),
        1,
        "nothing committed"
    );
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, v1);
}

async fn hostile_chunk_lists_are_refused_at_once(f: Fixture) {
    let alice = Api::of(&f, "user:alice");
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let aim = format!("checkout={}", c.id);
    let data = noise(7, MIB);
    let good = list_of(&data);
    let begin = |size: u64, body: Vec<u8>| {
        alice
            .request(
                reqwest::Method::POST,
                &format!("/v1/uploads?{aim}&size={size}"),
            )
            .header("Leasedesk-Digest", good.digest.as_str())
            .body(body)
            .send()
    };
    // A million chunks of one byte: more entries than the size allows.
    let mut tiny = Vec::with_capacity(1_000_000 * 36);
    for _ in 0..1_000_000 {
        tiny.extend_from_slice(blake3::hash(b"x").as_bytes());
        tiny.extend_from_slice(&1u32.to_le_bytes());
    }
    let started = std::time::Instant::now();
    let refused = begin(1_000_000, tiny).await.unwrap();
    assert_eq!(refused.status(), 422);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("longer than"),
        "{body}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // A list that does not add up to the size.
    let refused = begin(good.size + 1, good.encode_list()).await.unwrap();
    assert_eq!(refused.status(), 422);
    // Entries cut short.
    let mut cut = good.encode_list();
    cut.pop();
    assert_eq!(begin(good.size, cut).await.unwrap().status(), 422);
    // Ids repeated (a file of zeros has them) are fine, and sent once.
    let zeros = vec![0u8; 2 * MIB];
    let repeated = list_of(&zeros);
    let (status, state) = alice.begin(&aim, &repeated).await;
    assert_eq!(status, 201);
    let distinct: std::collections::HashSet<_> = repeated.chunks.iter().map(|c| c.id).collect();
    let sent: u64 = state["send"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1].as_u64().unwrap() - r[0].as_u64().unwrap())
        .sum();
    assert_eq!(sent, distinct.len() as u64);
    let id = state["id"].as_str().unwrap();
    alice
        .append(id, 0, to_send(&zeros, &repeated, &state))
        .await;
    let (status, done) = alice
        .use_upload(&format!("/v1/checkouts/{}/checkin", c.id), id)
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, zeros);
    // The head's own chunks again: nothing to send, and an empty append is fine.
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let aim = format!("checkout={}", c.id);
    let (status, same) = alice.begin(&aim, &repeated).await;
    assert_eq!(
        (status.as_u16(), &same["length"]),
        (201, &0.into()),
        "{same}"
    );
    let id = same["id"].as_str().unwrap();
    let (status, _) = alice.append(id, 0, Vec::new()).await;
    assert_eq!(status, 200);
    let (status, unchanged) = alice
        .use_upload(&format!("/v1/checkouts/{}/checkin", c.id), id)
        .await;
    assert_eq!(status, 200, "{unchanged}");
    assert_eq!(unchanged["result"]["outcome"], "unchanged");
    // A chunk the server has, listed with another size: its bytes cannot be its id.
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let aim = format!("checkout={}", c.id);
    let mut lying = repeated.clone();
    lying.chunks[0].size -= 1000;
    lying.chunks.push(leasedesk::chunking::Chunk {
        id: blake3::hash(b"the last 1000"),
        size: 1000,
    });
    lying.check().unwrap(); // within the rules of any list
    let (status, body) = alice.begin(&aim, &lying).await;
    assert_eq!(
        (status.as_u16(), &body["error"]),
        (422, &"invalid".into()),
        "{body}"
    );
    f.alice.cancel(c.id).await.unwrap();
    // No target, two targets, no digest.
    for query in ["size=5", &format!("{aim}&path=x.psd&size=5")] {
        let refused = alice
            .request(reqwest::Method::POST, &format!("/v1/uploads?{query}"))
            .header("Leasedesk-Digest", good.digest.as_str())
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 422, "{query}");
    }
}

async fn the_server_tells_of_no_chunk_of_a_file_the_caller_cannot_read(f: Fixture) {
    let alice = Api::of(&f, "user:alice");
    let secret = noise(8, 2 * MIB);
    f.import("secret/plan.psd", &secret).await;
    let studio = f.studio("user:admin");
    let rules = vec![Rule {
        folder: "secret/".into(),
        who: "user:alice".parse().unwrap(),
        level: Level::None,
    }];
    studio.put_permission_rules(rules).await.unwrap();
    let open = f.import("open/plan.psd", b"v1").await;
    let c = f
        .alice
        .check_out(open.id, checkout_request())
        .await
        .unwrap();
    // Alice's check-in of the secret file's bytes: every chunk to send.
    let list = list_of(&secret);
    let (status, state) = alice.begin(&format!("checkout={}", c.id), &list).await;
    assert_eq!(status, 201, "{state}");
    assert_eq!(state["length"], secret.len(), "{state}");
    // An import is told of no chunk either, even of its own earlier files.
    let (_, state) = alice
        .begin("path=open/copy.psd", &list_of(&noise(9, MIB)))
        .await;
    assert_eq!(state["length"], MIB);
    let own = noise(10, MIB);
    f.import("open/mine.psd", &own).await;
    let (_, state) = alice.begin("path=open/again.psd", &list_of(&own)).await;
    assert_eq!(
        state["length"], MIB,
        "an import names no file whose chunks it may have"
    );
}

async fn ranges_resume_downloads_and_refuse_changed_bytes(f: Fixture) {
    let alice = Api::of(&f, "user:alice");
    let data = noise(11, MIB);
    let a = f.import("a.psd", &data).await;
    let content = format!("/v1/artifacts/{}/content", a.id);
    let etag = format!("\"{}\"", digest(&data));
    let ranged = alice
        .request(reqwest::Method::GET, &content)
        .header("Range", "bytes=1000-1999")
        .header("If-Range", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(ranged.status(), 206);
    assert_eq!(
        ranged.headers()["content-range"],
        format!("bytes 1000-1999/{}", data.len()).as_str()
    );
    assert_eq!(ranged.bytes().await.unwrap(), &data[1000..2000]);
    let open_ended = alice
        .request(reqwest::Method::GET, &content)
        .header("Range", format!("bytes={}-", data.len() - 10))
        .send()
        .await
        .unwrap();
    assert_eq!(open_ended.bytes().await.unwrap(), &data[data.len() - 10..]);
    // Bytes of another version are never given for a range of this one.
    let other = alice
        .request(reqwest::Method::GET, &content)
        .header("Range", "bytes=1000-")
        .header("If-Range", format!("\"{}\"", digest(b"other")))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    assert_eq!(other.bytes().await.unwrap().len(), data.len());
    let past = alice
        .request(reqwest::Method::GET, &content)
        .header("Range", format!("bytes={}-", data.len()))
        .send()
        .await
        .unwrap();
    assert_eq!(past.status(), 416);
    let body: serde_json::Value = past.json().await.unwrap();
    assert_eq!(body["error"], "range_not_satisfiable");
    // Through the backend too.
    let part = f
        .alice
        .content_range(a.id, None, 10, Some(20))
        .await
        .unwrap();
    let mut bytes = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut { part.reader }, &mut bytes)
        .await
        .unwrap();
    assert_eq!(bytes, &data[10..20]);
}

async fn unfinished_uploads_are_removed_after_a_day_or_with_their_checkout(f: Fixture) {
    let alice = Api::of(&f, "user:alice");
    let a = f.import("a.psd", b"v1").await;
    let b = f.import("b.psd", b"v1").await;
    let ca = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let cb = f.alice.check_out(b.id, checkout_request()).await.unwrap();
    let data = noise(12, 2 * MIB);
    let list = list_of(&data);
    let (_, first) = alice.begin(&format!("checkout={}", ca.id), &list).await;
    let (_, second) = alice.begin(&format!("checkout={}", cb.id), &list).await;
    let kept = || f.kept_uploads();
    assert_eq!(kept(), 2);
    f.alice.cancel(ca.id).await.unwrap();
    f.advance(std::time::Duration::from_secs(61));
    f.store.sweep().unwrap();
    assert_eq!(kept(), 1, "the closed check-out's upload is gone");
    assert_eq!(alice.state(first["id"].as_str().unwrap()).await.0, 404);
    assert_eq!(alice.state(second["id"].as_str().unwrap()).await.0, 200);
    f.advance(std::time::Duration::from_secs(24 * 3600));
    f.store.sweep().unwrap();
    assert_eq!(kept(), 0, "a day later the other is gone too");
}

/// A file changed while it is sent fails at once, as the change is read:
/// nothing is committed, and the server's upload is cancelled.
async fn a_file_changed_while_it_is_sent_stores_nothing(f: Fixture) {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("big.psd");
    std::fs::write(&file, noise(19, 8 * MIB)).unwrap();
    let a = f.import("big.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let changed = Arc::new(AtomicBool::new(false));
    let upload = {
        let (file, changed) = (file.clone(), changed.clone());
        Upload::file(&file).with_progress(move |_| {
            if !changed.swap(true, Ordering::SeqCst) {
                // The application saves again while the check-in goes.
                use std::io::{Seek, Write};
                let mut open = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
                open.seek(std::io::SeekFrom::Start(7 * MIB as u64)).unwrap();
                open.write_all(&noise(20, 1000)).unwrap();
            }
        })
    };
    let started = std::time::Instant::now();
    let refused = f.alice.check_in(c.id, upload).await;
    assert!(
        matches!(&refused, Err(leasedesk::Error::Invalid(m)) if m.contains("changed while it was sent")),
        "{refused:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(f.alice.versions(a.id).await.unwrap().len(), 1);
    // Removed as the append that was reading it ends: on Windows a file
    // still open there is deleted only once closed, a moment later.
    let kept = || f.kept_uploads();
    let waited = std::time::Instant::now();
    while kept() > 0 && waited.elapsed() < std::time::Duration::from_secs(10) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(kept(), 0, "the server's upload was cancelled");
}

/// Bob's copy of a file in his workspace, got through a link that counts
/// what comes down.
struct CopyOverLink {
    link: testkit::link::Link,
    bob: leasedesk::remote::Remote,
    workspace: leasedesk::workspace::Workspace,
    local: std::path::PathBuf,
}

impl CopyOverLink {
    /// Gets the latest of `a` into the copy, which must then hold `data`:
    /// the bytes that came down for it.
    async fn update(&self, a: ArtifactId, data: &[u8]) -> u64 {
        let before = self.link.sent_down();
        let artifact = self.bob.artifact(a).await.unwrap();
        self.workspace.update(&self.bob, &artifact).await.unwrap();
        assert_eq!(std::fs::read(&self.local).unwrap(), data);
        self.link.sent_down() - before
    }
}

/// Getting the latest over a link fetches only the chunks the copy lacks.
async fn an_update_fetches_only_what_the_copy_lacks(f: Fixture) {
    let (link, bob) = f.linked("user:bob", Shape::default()).await;
    let v1 = noise(17, 8 * MIB);
    let a = f.import("hero.psd", &v1).await;
    let dir = f.dir.path().join("bob");
    let workspace = leasedesk::workspace::Workspace::open(
        &dir.join("files"),
        &dir.join("state"),
        f.clock.clone(),
    )
    .unwrap();
    let copy = CopyOverLink {
        link,
        bob,
        workspace,
        local: dir.join("files/hero.psd"),
    };
    copy.update(a.id, &v1).await;
    let v2 = edited(&v1, 5 * MIB, 2000, 18);
    f.check_out_and_in(a.id, &v2).await;
    let down = copy.update(a.id, &v2).await;
    assert!(
        down < MIB as u64,
        "{down} bytes came down for a change of 2000"
    );
    // Two MiB painted one colour: the same chunk eight times, fetched once.
    let mut v3 = v2;
    v3[MIB..3 * MIB].fill(9);
    f.check_out_and_in(a.id, &v3).await;
    let down = copy.update(a.id, &v3).await;
    assert!(
        down < MIB as u64,
        "{down} bytes came down for 2 MiB of one colour"
    );
}

crate::contract!(a_large_file_checks_in_through_the_backend_and_sends_only_its_change);

// Cases of the HTTP API: on a server over SQLite and one over PostgreSQL and S3.
crate::served!(
    only_the_chunks_the_server_lacks_are_sent,
    refusals_commit_nothing,
    hostile_chunk_lists_are_refused_at_once,
    the_server_tells_of_no_chunk_of_a_file_the_caller_cannot_read,
    ranges_resume_downloads_and_refuse_changed_bytes,
    an_update_fetches_only_what_the_copy_lacks,
    a_file_changed_while_it_is_sent_stores_nothing,
);

mod folder {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unfinished_uploads_are_removed_after_a_day_or_with_their_checkout() {
        super::unfinished_uploads_are_removed_after_a_day_or_with_their_checkout(
            crate::harness::remote_fixture().await,
        )
        .await
    }
}

#[test]
fn a_file_is_chunked_as_its_bytes_are() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("f");
    let data = noise(16, 3 * MIB + 17);
    std::fs::write(&file, &data).unwrap();
    let opened = std::fs::File::open(&file).unwrap();
    assert_eq!(chunk_reader(opened).unwrap(), list_of(&data));
}

//! Uploads begun without a chunk list: the whole file, in order, checked
//! against its digest at its use; what the answer says the server has for
//! the file; and the client's choice between such an upload and a list.

use super::*;

impl Api {
    /// Begins an upload of `size` bytes without a list, declaring `digest`.
    async fn begin_unlisted(
        &self,
        aim: &str,
        size: usize,
        digest: &leasedesk::model::Digest,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        self.begin_unlisted_keyed(aim, size, digest, &uuid::Uuid::new_v4().to_string())
            .await
    }

    async fn begin_unlisted_keyed(
        &self,
        aim: &str,
        size: usize,
        digest: &leasedesk::model::Digest,
        key: &str,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let response = self
            .request(
                reqwest::Method::POST,
                &format!("/v1/uploads?{aim}&size={size}"),
            )
            .header("Leasedesk-Digest", digest.as_str())
            .header("Idempotency-Key", key)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }
}

/// An upload without a list takes every byte of the file, in order, over
/// as many requests as it needs (here cut inside a piece), and its use
/// checks them against the digest: bytes that are not the declared file
/// store nothing. Its begin says how many bytes the server has for the
/// file; an import is told of none. The blob it became gets its chunk
/// list, so an edit of the file then sends only its change.
async fn an_upload_without_a_list_is_the_whole_file_checked_at_its_use(f: Fixture) {
    let api = Api::of(&f, "user:alice");
    let a = f.import("art/poster.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let aim = format!("checkout={}", c.id);
    let data = noise(31, 3 * MIB + 5);
    let digest = list_of(&data).digest;

    let (status, state) = api
        .begin_unlisted_keyed(&aim, data.len(), &digest, "poster-1")
        .await;
    assert_eq!(status, 201, "{state}");
    assert_eq!(state["send"], serde_json::json!([]), "{state}");
    assert_eq!(state["length"], data.len(), "every byte is sent");
    assert_eq!(state["known"], 2, "the server has the 2-byte head");
    // Sent again (its answer lost): the same upload, with what is known.
    let (status, again) = api
        .begin_unlisted_keyed(&aim, data.len(), &digest, "poster-1")
        .await;
    assert_eq!((status.as_u16(), &again), (201, &state));
    let (_, import) = api
        .begin_unlisted("path=art/new.psd", data.len(), &digest)
        .await;
    assert_eq!(import["known"], 0, "an import is told of nothing");

    let id = state["id"].as_str().unwrap().to_owned();
    let cut = data.len() / 2 + 333;
    let (status, state) = api.append(&id, 0, data[..cut].to_vec()).await;
    assert_eq!((status.as_u16(), &state["offset"]), (200, &cut.into()));
    // A byte past the file is refused; the file's bytes before it stay.
    let mut past = data[cut..].to_vec();
    past.push(0);
    let (status, refused) = api.append(&id, cut as u64, past).await;
    assert_eq!(
        (status.as_u16(), &refused["error"]),
        (422, &"invalid".into()),
        "{refused}"
    );
    let (_, state) = api.state(&id).await;
    assert_eq!(state["offset"], data.len(), "{state}");
    let checkin = format!("/v1/checkouts/{}/checkin", c.id);
    let (status, done) = api.use_upload(&checkin, &id).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, data);
    #[cfg(unix)]
    {
        // Sent over two requests, nothing checked its bytes as they came:
        // its spool (in a folder) is copied into the blob, not linked, so a
        // request superseded elsewhere cannot write into the blob.
        use std::os::unix::fs::MetadataExt;
        let spool = f.dir.path().join("uploads").join(&id).join("bytes");
        if let Ok(spool) = std::fs::metadata(&spool) {
            let linked = std::fs::read_dir(f.dir.path().join("blobs"))
                .unwrap()
                .map(|shard| shard.unwrap().path())
                .filter(|shard| !shard.ends_with("tmp"))
                .flat_map(|shard| std::fs::read_dir(shard).unwrap())
                .any(|blob| blob.unwrap().metadata().unwrap().ino() == spool.ino());
            assert!(!linked, "the blob is a copy of the spool");
        }
    }

    // Bytes that are not the declared digest: refused, nothing committed.
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let other = noise(32, 2 * MIB);
    let (_, state) = api
        .begin_unlisted(&format!("checkout={}", c.id), other.len(), &digest)
        .await;
    // The head; not the first version, whose list was never made.
    assert_eq!(state["known"], 3 * MIB + 5, "{state}");
    let id = state["id"].as_str().unwrap().to_owned();
    assert_eq!(api.append(&id, 0, other.clone()).await.0, 200);
    let checkin = format!("/v1/checkouts/{}/checkin", c.id);
    api.use_refused_as_mismatch(&checkin, &id).await;
    assert_eq!(f.artifact(a.id).await.head.version, 2, "nothing committed");

    // An edit of one place, listed: the blob that came unlisted has its
    // list, and only the chunks about the edit are sent.
    let v3 = edited(&data, MIB, 4000, 33);
    let list = list_of(&v3);
    let (status, state) = api.begin(&format!("checkout={}", c.id), &list).await;
    assert_eq!(status, 201, "{state}");
    let length = state["length"].as_u64().unwrap();
    assert!(
        length < v3.len() as u64 / 10,
        "sends {length} bytes: {state}"
    );
    let id = state["id"].as_str().unwrap().to_owned();
    let bytes = to_send(&v3, &list, &state);
    assert_eq!(api.append(&id, 0, bytes).await.0, 200);
    let (status, done) = api.use_upload(&checkin, &id).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, v3);
}

crate::served!(an_upload_without_a_list_is_the_whole_file_checked_at_its_use);

/// The client sends a new file whole, without a list, since the server has
/// nothing for it; an edit of it goes as a list, of which only the chunks
/// about the edit are sent. Read from the server's log of uploads begun.
#[test]
fn the_client_lists_a_file_only_when_the_server_has_enough_of_it() {
    let cli = crate::harness::cli_in_temp_dir();
    let token = cli.add_user("alice");
    let server = crate::harness::serve_logged(&cli).spawn();
    let alice = server.client_cli(&token);
    let work = cli.dir().join("hero.psd");
    std::fs::write(&work, b"v1").unwrap();
    alice.ok(&["import", "art/hero.psd", work.to_str().unwrap()]);
    let begun = |listed: bool| {
        let line = format!("listed={listed}");
        let log = server.log_text();
        log.lines()
            .filter(|l| l.contains("upload begun") && l.contains(&line))
            .count()
    };

    let v2 = noise(34, 4 * MIB);
    std::fs::write(&work, &v2).unwrap();
    alice.ok(&["checkout", "art/hero.psd"]);
    alice.ok(&["checkin", "art/hero.psd", work.to_str().unwrap()]);
    assert_eq!((begun(false), begun(true)), (1, 0), "sent whole, once");

    let v3 = edited(&v2, 2 * MIB, 4000, 35);
    std::fs::write(&work, &v3).unwrap();
    alice.ok(&["checkout", "art/hero.psd"]);
    let told = alice.ok(&["checkin", "art/hero.psd", work.to_str().unwrap()]);
    assert_eq!(
        (begun(false), begun(true)),
        (2, 1),
        "asked without a list, then listed"
    );
    let fetched = cli.dir().join("fetched.psd");
    alice.ok(&["get", "art/hero.psd", "-o", fetched.to_str().unwrap()]);
    assert_eq!(std::fs::read(&fetched).unwrap(), v3, "{told}");
}

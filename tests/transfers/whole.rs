//! A new file sent whole: its upload's spool becomes its blob without a
//! copy, and, sent in one request, without being read again.

use super::*;

/// A new file sent whole (every chunk, in order, over two requests) is
/// the upload's spool, which becomes its blob by a link: the bytes are
/// written once. Sent over several requests, it is read again at its use:
/// a spool changed after its chunks were checked is caught by the digest
/// and stores nothing. Sent in one, it was hashed as it came and is not
/// read again; a declared digest its bytes do not have is refused all the
/// same.
async fn a_new_file_sent_whole_becomes_its_blob_without_a_copy(f: Fixture) {
    let api = Api::of(&f, "user:alice");
    let a = f.import("art/poster.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let data = noise(21, 3 * MIB + 5);
    let list = list_of(&data);
    let (status, state) = api.begin(&format!("checkout={}", c.id), &list).await;
    assert_eq!(status, 201, "{state}");
    assert_eq!(state["length"], data.len(), "a new file sends every byte");
    let id = state["id"].as_str().unwrap().to_owned();
    let half = data.len() / 2 + 333;
    assert_eq!(api.append(&id, 0, data[..half].to_vec()).await.0, 200);
    let (status, state) = api.append(&id, half as u64, data[half..].to_vec()).await;
    assert_eq!(
        (status.as_u16(), &state["offset"]),
        (200, &data.len().into())
    );
    let spool = f.dir.path().join("uploads").join(&id).join("bytes");
    assert_eq!(
        std::fs::read(&spool).unwrap(),
        data,
        "the spool is the file"
    );

    let checkin = format!("/v1/checkouts/{}/checkin", c.id);
    let (status, done) = api.use_upload(&checkin, &id).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, data);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let spool_inode = std::fs::metadata(&spool).unwrap().ino();
        let linked = std::fs::read_dir(f.dir.path().join("blobs"))
            .unwrap()
            .map(|shard| shard.unwrap().path())
            .filter(|shard| !shard.ends_with("tmp"))
            .flat_map(|shard| std::fs::read_dir(shard).unwrap())
            .any(|blob| blob.unwrap().metadata().unwrap().ino() == spool_inode);
        assert!(linked, "the blob is the spool's bytes, not a copy of them");
    }

    // The same again, but the spool changes on the server's disk after its
    // chunks were checked: the digest refuses it, and nothing is stored.
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let other = noise(22, 2 * MIB);
    let list = list_of(&other);
    let (_, state) = api.begin(&format!("checkout={}", c.id), &list).await;
    let id = state["id"].as_str().unwrap().to_owned();
    assert_eq!(api.append(&id, 0, other[..MIB].to_vec()).await.0, 200);
    let rest = other[MIB..].to_vec();
    assert_eq!(api.append(&id, MIB as u64, rest).await.0, 200);
    let spool = f.dir.path().join("uploads").join(&id).join("bytes");
    let mut changed = std::fs::read(&spool).unwrap();
    changed[MIB] ^= 0xff;
    std::fs::write(&spool, &changed).unwrap();
    let blobs_before = blob_files(f.dir.path()).len();
    let checkin = format!("/v1/checkouts/{}/checkin", c.id);
    api.use_refused_as_mismatch(&checkin, &id).await;
    assert_eq!(f.artifact(a.id).await.head.version, 2, "nothing committed");
    assert_eq!(
        blob_files(f.dir.path()).len(),
        blobs_before,
        "nothing stored"
    );

    // In one request, declaring a digest the bytes do not have: hashed as
    // they came, they are not that digest, so the use checks them and
    // refuses them.
    let mut lying = list_of(&other);
    lying.digest = list_of(&data).digest;
    let (_, state) = api.begin(&format!("checkout={}", c.id), &lying).await;
    let id = state["id"].as_str().unwrap().to_owned();
    assert_eq!(api.append(&id, 0, other.clone()).await.0, 200);
    api.use_refused_as_mismatch(&checkin, &id).await;
    assert_eq!(blob_files(f.dir.path()).len(), blobs_before);

    // In one request, true: its blob, linked, with its bytes and digest.
    let (_, state) = api.begin(&format!("checkout={}", c.id), &list).await;
    let id = state["id"].as_str().unwrap().to_owned();
    assert_eq!(api.append(&id, 0, other.clone()).await.0, 200);
    let (status, done) = api.use_upload(&checkin, &id).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(f.artifact(a.id).await.head.digest, list.digest);
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, other);
    assert_eq!(blob_files(f.dir.path()).len(), blobs_before + 1);
}

mod folder {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_new_file_sent_whole_becomes_its_blob_without_a_copy() {
        super::a_new_file_sent_whole_becomes_its_blob_without_a_copy(
            crate::harness::remote_fixture().await,
        )
        .await
    }
}

/// How many bytes process `pid` has taken through read calls (`rchar`):
/// from its files and its database (its sockets are read with `recv`,
/// which `rchar` does not count).
#[cfg(target_os = "linux")]
fn bytes_read_by(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("rchar: "))
        .and_then(|n| n.parse().ok())
        .expect("rchar in /proc/PID/io")
}

/// A new file sent whole in one request was hashed as it arrived, so its
/// use reads none of it again; sent in two, it is read once more to check
/// it. Watched from outside, as the bytes a real `leasedesk serve` reads.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_sent_whole_in_one_request_is_not_read_again_to_be_used() {
    let cli = crate::harness::cli_in_temp_dir();
    let token = cli.add_user("alice");
    let server = cli.serve().spawn();
    let api = Api {
        base: server.url.clone(),
        token,
        http: reqwest::Client::new(),
    };
    let imported = api
        .request(reqwest::Method::POST, "/v1/artifacts?path=art/film.psd")
        .body("v1")
        .send()
        .await
        .unwrap();
    assert_eq!(imported.status(), 201);
    let artifact = imported.json::<serde_json::Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let size = 16 * MIB;
    // What the use reads: the file again (checked), or only its rows (hashed).
    let mut used_reading = Vec::new();
    for (seed, requests) in [(41, 1), (42, 2)] {
        let checkout = api
            .request(
                reqwest::Method::POST,
                &format!("/v1/artifacts/{artifact}/checkouts"),
            )
            .json(&serde_json::json!({}))
            .send()
            .await
            .unwrap()
            .json::<serde_json::Value>()
            .await
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let data = noise(seed, size);
        let (status, state) = api
            .begin(&format!("checkout={checkout}"), &list_of(&data))
            .await;
        assert_eq!((status.as_u16(), &state["length"]), (201, &size.into()));
        let id = state["id"].as_str().unwrap().to_owned();
        let cut = size / requests;
        for at in (0..size).step_by(cut) {
            let (status, state) = api
                .append(&id, at as u64, data[at..at + cut].to_vec())
                .await;
            assert_eq!(status, 200, "{state}");
        }
        let before = bytes_read_by(server.child.id());
        let (status, done) = api
            .use_upload(&format!("/v1/checkouts/{checkout}/checkin"), &id)
            .await;
        assert_eq!(status, 200, "{done}");
        used_reading.push(bytes_read_by(server.child.id()) - before);
    }
    let [hashed, checked] = used_reading[..] else {
        unreachable!()
    };
    assert!(
        hashed < size as u64 / 8,
        "sent in one request, its use read {hashed} bytes of a {size}-byte file"
    );
    assert!(
        checked >= size as u64,
        "sent in two, its use read only {checked} bytes: it was not checked"
    );
}

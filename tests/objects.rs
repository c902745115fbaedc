//! Blobs in object storage (`--blobs s3://…` on moto, `--blobs file:///…`):
//! the same answers as the data folder's blobs, and no visible object but a
//! whole one under its digest.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use leasedesk::failpoint::{self, Action, Failpoints};
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Error, Location, Options, Remote, Upload};
use object_store::ObjectStoreExt;
use testkit::ServeProcess;

use crate::harness::*;

/// Each `s3()` is a new, empty bucket on the one moto of this process, and
/// its variables reach it.
#[test]
fn s3_gives_a_fresh_empty_bucket_each_time() {
    let (a, b) = (s3(), s3());
    assert_ne!(a.bucket, b.bucket);
    assert_eq!(a.endpoint, b.endpoint, "one moto per test process");
    assert!(a.keys().is_empty() && b.keys().is_empty());
    let endpoint = a
        .env
        .iter()
        .find(|(k, _)| *k == "AWS_ENDPOINT_URL")
        .unwrap();
    assert_eq!(endpoint.1, a.endpoint);
    assert_eq!(std::env::var("AWS_ENDPOINT_URL").unwrap(), a.endpoint);
    assert_eq!(a.url("team"), format!("s3://{}/team", a.bucket));
}

fn png(side: u32) -> Vec<u8> {
    let image = image::RgbaImage::from_fn(side, side, |x, y| {
        image::Rgba([(x * 7) as u8, (y * 5) as u8, 90, 255])
    });
    leasedesk::preview::encode_png(&image)
}

/// A store on `blobs` (a `--blobs` URL) with a data folder of its own,
/// acting as alice (an account made now).
fn open_on(blobs: &str, failpoints: Failpoints) -> (tempfile::TempDir, Bundled) {
    let data = tempfile::tempdir().unwrap();
    let store = open_at(data.path(), blobs, failpoints).expect("open the store");
    let alice = participant("user:alice");
    store.add_account(&alice, false).expect("add alice");
    (data, store.acting_as(alice))
}

fn open_at(data: &Path, blobs: &str, failpoints: Failpoints) -> leasedesk::Result<Bundled> {
    let location = Location {
        data: data.to_owned(),
        database: None,
        blobs: Some(blobs.to_owned()),
    };
    let options = Options {
        failpoints,
        ..Options::default()
    };
    Bundled::open_at(&location, options)
}

fn blob_key(prefix: &str, data: &[u8]) -> String {
    format!("{prefix}/blobs/{}", digest(data).hex())
}

/// The blob objects in the bucket, by key.
fn blob_keys(s3: &S3) -> std::collections::BTreeSet<String> {
    s3.keys()
        .into_iter()
        .filter(|k| k.contains("/blobs/"))
        .collect()
}

/// What an import, two check-ins (one of several parts with its digest
/// declared, one of several parts without) and a preview leave in the
/// bucket: exactly one object per version's bytes under its digest, and the
/// preview; nothing in the data folder; every version reads back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_blobs_hold_each_version_under_its_digest_and_serve_it_and_its_preview() {
    let s3 = s3();
    let (data, alice) = open_on(&s3.url("team"), Failpoints::default());
    let v1 = png(300);
    let v2 = noise(1, 20 << 20); // three parts, digest declared
    let v3 = noise(2, 12 << 20); // two parts, digest unknown until the end
    let artifact = alice.import(&path("art/a.png"), bytes(&v1)).await.unwrap();
    let out = alice
        .check_out(artifact.id, checkout_request())
        .await
        .unwrap();
    alice
        .check_in(out.id, bytes(&v2).with_digest(digest(&v2)))
        .await
        .unwrap();
    check_out_and_in_as(&alice, artifact.id, &v3).await;

    for (version, want) in [(1, &v1), (2, &v2), (3, &v3)] {
        let got = read_content(&alice, artifact.id, Some(version)).await;
        assert!(got == *want, "version {version} reads back whole");
    }
    let want: std::collections::BTreeSet<_> = [&v1, &v2, &v3]
        .iter()
        .map(|v| blob_key("team", v))
        .collect();
    assert_eq!(blob_keys(&s3), want);
    assert_eq!(s3.open_multipart_uploads(), 0);

    let of = PreviewOf::Version {
        artifact: artifact.id,
        version: Some(1),
    };
    let preview = alice.preview(of, 64).await.unwrap();
    let decoded = image::load_from_memory(&preview).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (64, 64));
    let preview_key = format!(
        "team/previews/{}-64-r{}.png",
        digest(&v1).hex(),
        leasedesk::preview::READER_GENERATION
    );
    assert!(s3.keys().contains(&preview_key), "{:?}", s3.keys());
    assert_eq!(
        alice.preview(of, 64).await.unwrap(),
        preview,
        "served again"
    );

    assert!(
        !data.path().join("blobs").exists(),
        "no blob in the data folder"
    );
    assert!(!data.path().join("previews").exists());
    let spooled = std::fs::read_dir(data.path().join("spool/tmp"))
        .unwrap()
        .count();
    assert_eq!(spooled, 0, "no temporary file is left");
}

/// `file:///PATH` keeps the data folder's layout in that folder: blobs by
/// digest in its shard folders, previews beside them, nothing in `--data`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_blobs_live_in_the_shared_folder_and_serve_content_and_previews() {
    let shared = tempfile::tempdir().unwrap();
    let url = url::Url::from_directory_path(shared.path()).unwrap();
    let (data, alice) = open_on(url.as_str(), Failpoints::default());
    let v1 = png(200);
    let v2 = noise(3, 3 << 20);
    let artifact = alice.import(&path("art/b.png"), bytes(&v1)).await.unwrap();
    check_out_and_in_as(&alice, artifact.id, &v2).await;
    assert!(read_content(&alice, artifact.id, Some(1)).await == v1);
    assert!(read_content(&alice, artifact.id, None).await == v2);
    let preview = alice
        .preview(
            PreviewOf::Version {
                artifact: artifact.id,
                version: Some(1),
            },
            64,
        )
        .await
        .unwrap();
    assert!(image::load_from_memory(&preview).is_ok());

    let want: std::collections::BTreeSet<_> = [&v1, &v2]
        .iter()
        .map(|v| digest(v).hex().to_owned())
        .collect();
    assert_eq!(blob_files(shared.path()), want);
    let previews = shared.path().join("previews");
    assert!(previews
        .join(format!(
            "{}-64-r{}.png",
            digest(&v1).hex(),
            leasedesk::preview::READER_GENERATION
        ))
        .is_file());
    assert!(
        !data.path().join("blobs").exists(),
        "no blob in the data folder"
    );
    assert!(!data.path().join("previews").exists());
}

/// A declared digest that the bytes do not have: refused, and no object
/// appears under either digest, for one part (never put) and for several
/// (the multipart upload aborted, not completed). The check-out stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digest_mismatch_on_s3_leaves_no_object_and_no_upload() {
    let s3 = s3();
    let (_data, alice) = open_on(&s3.url("team"), Failpoints::default());
    let out = import_checked_out(&alice, "m.bin", b"first").await;
    let declared = digest(b"something else");
    for sent in [noise(4, 1000), noise(5, 20 << 20)] {
        let refused = alice
            .check_in(out.id, bytes(&sent).with_digest(declared.clone()))
            .await;
        assert_eq!(
            refused.unwrap_err(),
            Error::DigestMismatch {
                expected: declared.clone(),
                actual: digest(&sent),
            }
        );
        assert_eq!(s3.open_multipart_uploads(), 0, "its parts are dropped");
    }
    assert_eq!(blob_keys(&s3), [blob_key("team", b"first")].into());
    let still = alice.checkout(out.id).await.unwrap();
    assert_eq!(still.state, CheckoutState::Open);
}

/// A client that goes away halfway through a check-in's body, over a real
/// connection to the server: no object under the digest, the multipart
/// upload aborted, the check-out still open, and the same check-in whole
/// works after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cut_off_mid_upload_leaves_no_object_and_the_check_out_open() {
    let s3 = s3();
    let (_data, store) = open_on(&s3.url("p"), Failpoints::default());
    let token = store.new_token(store.participant()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(leasedesk::server::run(listener, store.clone(), async {
        let _ = stopped.await;
    }));
    let alice = Remote::new(&format!("http://{addr}"), &token).unwrap();
    let out = import_checked_out(&alice, "cut.bin", b"v1").await;

    let body = noise(6, 24 << 20);
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /v1/checkouts/{}/checkin HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {token}\r\nleasedesk-digest: {}\r\ncontent-length: {}\r\n\r\n",
        out.id,
        digest(&body),
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body[..18 << 20]).await.unwrap();
    // Two parts sent (or on their way) before the client goes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(socket);

    let deadline = Instant::now() + Duration::from_secs(20);
    while s3.open_multipart_uploads() > 0 {
        assert!(Instant::now() < deadline, "the upload was never aborted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!blob_keys(&s3).contains(&blob_key("p", &body)));
    check_in_after_all(&alice, &out, &body).await;
}

/// After a check-in of `out` failed, the check-out is still open, and a
/// check-in of `body` again closes it with `body` as the head.
async fn check_in_after_all(alice: &dyn Backend, out: &Checkout, body: &[u8]) {
    let still = alice.checkout(out.id).await.unwrap();
    assert_eq!(still.state, CheckoutState::Open);
    let done = alice
        .check_in(out.id, bytes(body).with_digest(digest(body)))
        .await
        .unwrap();
    assert_eq!(done.state, CheckoutState::Closed);
    assert!(read_content(alice, out.artifact_id, None).await == body);
}

/// An upload whose bytes are stored but whose transaction never commits (a
/// failure right after): its object is left, since another server may be
/// about to name the same bytes, and an open's sweep leaves an unnamed
/// object younger than a day; named ones always stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unnamed_young_object_is_left_by_failures_and_by_the_sweep() {
    let s3 = s3();
    let failing = Failpoints::new([(failpoint::at::BLOB_RENAMED, Action::Error)]);
    let (data, failing_alice) = open_on(&s3.url("q"), failing);
    let unnamed = noise(7, 2000);
    let failed = failing_alice.import(&path("u.bin"), bytes(&unnamed)).await;
    assert!(matches!(failed, Err(Error::Internal(_))), "{failed:?}");
    assert!(failing_alice.artifacts().await.unwrap().is_empty());
    assert_eq!(blob_keys(&s3), [blob_key("q", &unnamed)].into());
    drop(failing_alice);

    // The sweep runs at most once a day: forget that it ran.
    s3.client().delete(&"q/swept".into()).await.unwrap();
    let alice = open_at(data.path(), &s3.url("q"), Failpoints::default())
        .unwrap()
        .acting_as(participant("user:alice"));
    let named = b"named bytes";
    alice.import(&path("n.bin"), bytes(named)).await.unwrap();
    assert!(s3.keys().contains(&"q/swept".to_owned()), "it swept");
    assert_eq!(
        blob_keys(&s3),
        [blob_key("q", &unnamed), blob_key("q", named)].into()
    );
}

/// `--blobs` on a bucket that does not exist, or of a kind we do not know:
/// a clear error naming it, before anything is written.
#[test]
fn a_missing_bucket_or_an_unknown_blobs_url_is_refused_by_name() {
    let _moto = s3(); // the AWS_* variables of this process
    let data = tempfile::tempdir().unwrap();
    let missing = format!("leasedesk-missing-{}", uuid::Uuid::new_v4().simple());
    match open_at(
        data.path(),
        &format!("s3://{missing}/x"),
        Failpoints::default(),
    ) {
        Err(Error::NotFound(why)) => assert!(why.contains(&missing), "{why}"),
        other => panic!("{:?}", other.err()),
    }
    for url in ["gs://bucket/x", "s3:///no-bucket", "blobs"] {
        match open_at(data.path(), url, Failpoints::default()) {
            Err(Error::Invalid(why)) => assert!(why.contains(url), "{why}"),
            other => panic!("{url}: {:?}", other.err()),
        }
    }
}

/// The health check asks the object store: fine while its bucket answers,
/// and naming the store once it is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_names_the_object_store_when_its_bucket_is_gone() {
    let s3 = s3();
    let (_data, alice) = open_on(&s3.url("h"), Failpoints::default());
    assert_eq!(alice.health().await, Ok(()));
    for key in s3.keys() {
        s3.client().delete(&key.as_str().into()).await.unwrap();
    }
    let (status, body) = http(&s3.endpoint, "DELETE", &format!("/{}", s3.bucket)).unwrap();
    assert_eq!(status, 204, "{body}");
    let started = Instant::now();
    let reason = alice.health().await.unwrap_err();
    assert!(reason.contains(&s3.url("h")), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A real `leasedesk serve --blobs s3://…` process.
struct Served {
    process: ServeProcess,
    token: String,
}

impl Served {
    fn start(s3: &S3, prefix: &str, extra_env: &[(&str, &str)]) -> Self {
        let cli = crate::harness::cli_in_temp_dir()
            .envs(s3.env.iter().map(|(k, v)| (k, v)))
            .envs(extra_env.iter().copied())
            .blobs(&s3.url(prefix));
        let token = cli.add_user("alice");
        Self {
            process: cli.serve().spawn(),
            token,
        }
    }

    fn client(&self) -> Remote {
        Remote::new(&self.process.url, &self.token).unwrap()
    }

    /// The process's peak resident memory (VmHWM), in bytes.
    fn peak_memory(&self) -> u64 {
        self.process.peak_memory().expect("VmHWM")
    }
}

/// moto frozen (SIGSTOP) in the middle of a check-in to a real server: the
/// check-in fails with an error that names the blob store, nothing appears
/// under the digest, and once moto is back the same check-in works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_s3_during_an_upload_stores_nothing_and_the_check_in_works_after() {
    let moto = Moto::start();
    let s3 = moto.bucket();
    // A short request timeout, so the frozen store is given up on in seconds.
    let served = Served::start(&s3, "f", &[("AWS_TIMEOUT", "2s")]);
    let alice = served.client();
    let out = import_checked_out(&alice, "f.bin", b"v1").await;

    let body = noise(8, 20 << 20);
    let (mut sender, reader) = tokio::io::duplex(1 << 20);
    let upload = Upload::stream(reader).with_digest(digest(&body));
    let check_in = tokio::spawn({
        let alice = served.client();
        async move { alice.check_in(out.id, upload).await }
    });
    sender.write_all(&body[..9 << 20]).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await; // its first part is on its way
    moto.pause();
    sender.write_all(&body[9 << 20..]).await.unwrap();
    sender.shutdown().await.unwrap();
    let failed = tokio::time::timeout(Duration::from_secs(90), check_in)
        .await
        .expect("an answer while the store is frozen")
        .unwrap();
    moto.resume();
    match failed {
        Err(Error::Unavailable(why)) => assert!(why.contains("blob store"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(!blob_keys(&s3).contains(&blob_key("f", &body)));
    check_in_after_all(&alice, &out, &body).await;
    assert!(blob_keys(&s3).contains(&blob_key("f", &body)));
}

/// A 64 MiB import and its download through a real server on S3: the bytes
/// come back whole, and the server's peak memory grows by much less than the
/// file's size (parts in flight, never the file).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_64_mib_blob_goes_up_and_down_through_s3_with_bounded_memory() {
    let s3 = s3();
    let served = Served::start(&s3, "big", &[]);
    let alice = served.client();
    alice.artifacts().await.unwrap();
    let at_start = served.peak_memory();
    let size = 64usize << 20;
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut hasher = blake3::Hasher::new();
    {
        let mut out = std::io::BufWriter::new(file.as_file());
        for i in 0..64 {
            let chunk = noise(i, 1 << 20);
            hasher.update(&chunk);
            out.write_all(&chunk).unwrap();
        }
    }
    let sent: Digest = hasher.finalize().into();
    let artifact = alice
        .import(
            &path("big.bin"),
            Upload::file(file.path()).with_digest(sent.clone()),
        )
        .await
        .unwrap();
    assert!(blob_keys(&s3).contains(&format!("big/blobs/{}", sent.hex())));
    eprintln!(
        "serve's peak memory after the upload: {} MiB",
        served.peak_memory() >> 20
    );

    let mut content = alice.content(artifact.id, None).await.unwrap();
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut got = 0;
    loop {
        let n = content.reader.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        got += n;
    }
    assert_eq!(got, size);
    assert_eq!(Digest::from(hasher.finalize()), sent);
    // Three parts of 8 MiB and the buffers around them; the file would be 64.
    let grown = served.peak_memory() - at_start;
    assert!(
        grown < 48 << 20,
        "the server's peak memory grew by {} MiB",
        grown >> 20
    );
}

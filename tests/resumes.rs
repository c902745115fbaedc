//! Resumable uploads under what a fault campaign did to a team server:
//! begins trickled in to hold the room for chunk lists, the largest lists
//! all at once, an append left half open, a server gone for good midway.
//! Real `leasedesk serve` processes (on a data folder, on PostgreSQL, and on
//! PostgreSQL with S3) and real links between them and their clients.

use std::sync::Arc;
use std::time::{Duration, Instant};

use leasedesk::backend::{Backend, Upload};
use leasedesk::model::*;
use leasedesk::remote::Remote;
use testkit::link::{Link, Shape};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::*;

const MIB: usize = 1 << 20;
/// The largest file a chunk list may be sent for, and that list: a
/// million chunks of 64 KiB, 37.7 MB.
const LARGEST: u64 = 64 << 30;
const LARGEST_CHUNKS: usize = 1 << 20;

/// A store to serve, and what keeps it (a bucket) alive.
struct Store {
    cli: testkit::Cli,
    _bucket: Option<S3>,
}

impl Store {
    fn folder() -> Self {
        Self {
            cli: cli_in_temp_dir(),
            _bucket: None,
        }
    }

    #[cfg(target_os = "linux")]
    fn postgres() -> Self {
        Self {
            cli: cli_in_temp_dir().database(&postgres_database()),
            _bucket: None,
        }
    }

    /// Rows in PostgreSQL, blobs (and uploads' parts) in S3: a team's.
    #[cfg(target_os = "linux")]
    fn team() -> Self {
        let bucket = s3();
        let cli = cli_in_temp_dir()
            .database(&postgres_database())
            .envs(bucket.env.iter().map(|(k, v)| (k, v)))
            .blobs(&bucket.url("team"));
        Self {
            cli,
            _bucket: Some(bucket),
        }
    }
}

/// A chunk list of `chunks` chunks of 64 KiB with ids no file has.
fn list_of_64k(chunks: usize, seed: u64) -> bytes::Bytes {
    let mut list = Vec::with_capacity(chunks * 36);
    let mut ids = Xorshift::new(seed | 1);
    for _ in 0..chunks {
        let mut id = [0u8; 32];
        ids.fill(&mut id);
        list.extend_from_slice(&id);
        list.extend_from_slice(&(64u32 << 10).to_le_bytes());
    }
    list.into()
}

/// Begins an import of `name` with `list` for a file of `size` bytes,
/// with `key`, if any, as its Idempotency-Key: the status and the answer.
async fn begin(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    name: &str,
    size: u64,
    list: bytes::Bytes,
    key: Option<&str>,
) -> (u16, serde_json::Value) {
    let digest = blake3::hash(name.as_bytes());
    let mut request = http
        .post(format!("{base}/v1/uploads?path={name}&size={size}"))
        .bearer_auth(token)
        .header("leasedesk-digest", format!("blake3:{}", digest.to_hex()));
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let response = request.body(list).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or_default())
}

/// A begin whose body comes at `rate` bytes a second, `total` bytes in
/// all, on a connection of its own: what it is answered, if it is.
async fn trickled_begin(
    address: &str,
    token: &str,
    name: &str,
    size: u64,
    total: usize,
    rate: usize,
) -> String {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /v1/uploads?path={name}&size={size} HTTP/1.1\r\nHost: {address}\r\n\
         Authorization: Bearer {token}\r\nLeasedesk-Digest: blake3:{}\r\n\
         Content-Length: {total}\r\n\r\n",
        blake3::hash(name.as_bytes()).to_hex()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reading, mut writing) = stream.into_split();
    let trickle = tokio::spawn(async move {
        let piece = vec![7u8; rate.max(1)];
        let mut sent = 0;
        while sent < total {
            let n = piece.len().min(total - sent);
            if writing.write_all(&piece[..n]).await.is_err() {
                return;
            }
            sent += n;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let mut answer = vec![0u8; 4096];
    let n = reading.read(&mut answer).await.unwrap_or(0);
    trickle.abort();
    String::from_utf8_lossy(&answer[..n]).into_owned()
}

/// Four begins that declare 64 GiB files and send their lists at 1.5 KiB/s
/// hold only what came of them: another participant's 3 MB check-in
/// finishes at once meanwhile, and a list that does not arrive in time is
/// refused soon after its deadline.
async fn slow_begins_hold_up_nobody_else(store: Store) {
    let (alice, bob) = (store.cli.add_user("alice"), store.cli.add_user("bob"));
    let server = store.cli.serve().spawn();
    let address = server.url.trim_start_matches("http://").to_owned();
    let total = LARGEST_CHUNKS * 36;
    let slow: Vec<_> = (0..4)
        .map(|i| {
            let (address, alice) = (address.clone(), alice.clone());
            tokio::spawn(async move {
                trickled_begin(
                    &address,
                    &alice,
                    &format!("slow{i}.psb"),
                    LARGEST,
                    total,
                    1536,
                )
                .await
            })
        })
        .collect();
    // A list for a 1 MiB file is at most 64 entries: it has 20 s.
    let late = {
        let (address, alice) = (address.clone(), alice.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let answer =
                trickled_begin(&address, &alice, "late.psd", MIB as u64, 64 * 36, 10).await;
            (answer, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_secs(2)).await;

    let remote = Remote::new(&server.url, &bob).unwrap();
    let a = remote.import(&path("bob.psd"), bytes(b"v1")).await.unwrap();
    let c = remote.check_out(a.id, checkout_request()).await.unwrap();
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("bob.psd");
    let data = noise(37, 3 * MIB);
    std::fs::write(&file, &data).unwrap();
    let started = Instant::now();
    remote.check_in(c.id, Upload::file(&file)).await.unwrap();
    let took = started.elapsed();
    eprintln!("a 3 MB check-in beside four slow begins took {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(read_content(&remote, a.id, None).await, data);

    let (refused, after) = late.await.unwrap();
    assert!(
        refused.starts_with("HTTP/1.1 400") && refused.contains("did not arrive within 20 s"),
        "{refused}"
    );
    // Soon after its deadline: the rest of a list that came too slowly is
    // not waited for (it would take 230 s at this rate).
    assert!(after < Duration::from_secs(35), "refused after {after:?}");
    for begin in &slow {
        assert!(
            !begin.is_finished(),
            "a slow list is still taken while it comes"
        );
    }
    for begin in slow {
        begin.abort();
    }
}

/// Sixteen begins at once with the largest list there is, from four
/// participants: the server stays within its bound of 256 MiB of lists
/// (each begin waits its turn for room, or is told to come back, and
/// begins when it does).
#[cfg(target_os = "linux")]
async fn the_largest_begins_at_once_stay_within_the_bound(store: Store) {
    let tokens: Vec<String> = ["ann", "ben", "cat", "dan"]
        .iter()
        .map(|name| store.cli.add_user(name))
        .collect();
    let server = store.cli.serve().spawn();
    let http = reqwest::Client::new();
    // The server at rest, having answered a begin.
    let (status, _) = begin(
        &http,
        &server.url,
        &tokens[0],
        "warm.psd",
        64 << 10,
        list_of_64k(1, 9),
        None,
    )
    .await;
    assert_eq!(status, 201);
    let at_rest = server.peak_memory().unwrap();
    let list = list_of_64k(LARGEST_CHUNKS, 1);
    let started = Instant::now();
    let begins: Vec<_> = (0..16)
        .map(|i| {
            let (http, base, token) = (http.clone(), server.url.clone(), tokens[i % 4].clone());
            let list = list.clone();
            tokio::spawn(async move {
                let mut busy = 0;
                loop {
                    match begin(
                        &http,
                        &base,
                        &token,
                        &format!("big{i}.psb"),
                        LARGEST,
                        list.clone(),
                        None,
                    )
                    .await
                    {
                        (201, state) => return (state, busy),
                        (503, _) => busy += 1,
                        (status, body) => panic!("{status}: {body}"),
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            })
        })
        .collect();
    let mut told_busy = 0;
    for begun in begins {
        let (state, busy) = begun.await.unwrap();
        assert_eq!(state["length"], LARGEST, "every chunk to send");
        told_busy += busy;
    }
    let peak = server.peak_memory().unwrap();
    let grew = peak.saturating_sub(at_rest);
    eprintln!(
        "16 largest begins: {:?}, {told_busy} told to come back, peak {} MiB ({} MiB at rest)",
        started.elapsed(),
        peak >> 20,
        at_rest >> 20
    );
    assert!(
        grew < (256 + 64) << 20,
        "the server grew by {} MiB",
        grew >> 20
    );
}

/// An append whose link is left half open (its client gone, the server
/// hearing nothing more) gives way to the client's next request at once:
/// the check-in resumes within the client's backoff, not the server's
/// 60 s stall limit, and sends what the server kept only once.
async fn a_half_open_append_gives_way_at_once(f: Fixture) {
    let shape = Shape {
        up_rate: Some(10_000_000),
        ..Shape::default()
    };
    let (link, alice) = f.linked("user:alice", shape).await;
    let (link, alice) = (Arc::new(link), Arc::new(alice));
    let a = f.import("half.psb", b"v1").await;
    let c = alice.check_out(a.id, checkout_request()).await.unwrap();
    let data = noise(41, 50 * MIB);
    let start = link.sent_up();
    let (_folder, checkin) = checking_in(alice.clone(), c.id, "half.psb", &data);
    link.until_sent_up(start + 25 * MIB as u64).await;
    link.half_open_now();
    let cut = Instant::now();
    let done = checkin.await.unwrap().unwrap();
    let after = cut.elapsed();
    eprintln!("a 50 MB check-in went on and finished {after:?} after a half-open cut");
    assert!(matches!(done.result, Some(CheckinResult::Committed { .. })));
    assert!(after < Duration::from_secs(20), "{after:?} after the cut");
    assert_eq!(read_content(alice.as_ref(), a.id, None).await, data);
    let sent = link.sent_up() - start;
    assert_sent_about_once(sent, data.len());
}

/// An append left half open on server A while its client goes on with
/// server B (the link to A down): B takes the upload over from what A
/// counted, and A's append, once it ends, counts nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_open_append_on_one_server_gives_way_to_another() {
    let store = Store::folder();
    let alice = store.cli.add_user("alice");
    let (first, second) = (store.cli.serve().spawn(), store.cli.serve().spawn());
    let to = |url: &str| url.trim_start_matches("http://").parse().unwrap();
    let shape = Shape {
        up_rate: Some(10_000_000),
        ..Shape::default()
    };
    let link = Link::to(to(&first.url), shape).await;
    let servers = format!("{},{}", link.url(), second.url);
    let remote = Arc::new(Remote::new(&servers, &alice).unwrap());
    let a = remote
        .import(&path("both.psb"), bytes(b"v1"))
        .await
        .unwrap();
    let c = remote.check_out(a.id, checkout_request()).await.unwrap();
    let data = noise(47, 50 * MIB);
    let start = link.sent_up();
    let (_folder, checkin) = checking_in(remote.clone(), c.id, "both.psb", &data);
    link.until_sent_up(start + 25 * MIB as u64).await;
    link.half_open_now();
    link.set_down(true);
    let cut = Instant::now();
    let done = checkin.await.unwrap().unwrap();
    let after = cut.elapsed();
    eprintln!("went on with the other server and finished {after:?} after a half-open cut");
    assert!(matches!(done.result, Some(CheckinResult::Committed { .. })));
    assert!(after < Duration::from_secs(30), "{after:?} after the cut");
    let reader = Remote::new(&second.url, &alice).unwrap();
    assert_eq!(read_content(&reader, a.id, None).await, data);
}

/// An upload begun on server A, which dies for good halfway, finishes on
/// server B (the CLI's `--server A,B`): B resumes it from what A kept,
/// and little more than the file goes up in all.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_finishes_on_another_server_when_its_own_dies() {
    let store = Store::team();
    let alice = store.cli.add_user("alice");
    let mut first = store.cli.serve().spawn();
    let second = store.cli.serve().spawn();
    let to = |url: &str| url.trim_start_matches("http://").parse().unwrap();
    let shape = Shape {
        up_rate: Some(20_000_000),
        ..Shape::default()
    };
    let (link_a, link_b) = (
        Link::to(to(&first.url), shape).await,
        Link::to(to(&second.url), Shape::default()).await,
    );
    let servers = format!("{},{}", link_a.url(), link_b.url());
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("big.psb");
    let data = noise(43, 128 * MIB);
    std::fs::write(&file, &data).unwrap();
    let cli = |args: &[&str]| {
        let mut command = leasedesk();
        command
            .args(["--server", &servers])
            .args(args)
            .env("LEASEDESK_TOKEN", &alice);
        command
    };
    let small = folder.path().join("v1");
    std::fs::write(&small, b"v1").unwrap();
    assert!(cli(&["import", "big.psb", small.to_str().unwrap()])
        .status()
        .unwrap()
        .success());
    assert!(cli(&["checkout", "big.psb"]).status().unwrap().success());
    let start = link_a.sent_up();
    let checkin = cli(&["checkin", "big.psb", file.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    link_a.until_sent_up(start + 64 * MIB as u64).await;
    tokio::task::spawn_blocking(move || first.kill())
        .await
        .unwrap();
    let sent_to_a = link_a.sent_up() - start;
    drop(link_a);
    let status = tokio::task::spawn_blocking(move || checkin.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let sent = sent_to_a + link_b.sent_up();
    eprintln!(
        "128 MiB: {} MiB to A before it died, {} MiB to B",
        sent_to_a >> 20,
        link_b.sent_up() >> 20
    );
    assert_sent_about_once(sent, data.len());
    let remote = Remote::new(&second.url, &alice).unwrap();
    let artifact = remote
        .artifacts()
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.path.as_str() == "big.psb")
        .unwrap();
    assert_eq!(artifact.head.version, 2);
    assert_eq!(read_content(&remote, artifact.id, None).await, data);
}

/// A begin sent again with its Idempotency-Key (its answer lost) answers
/// the upload the first began, and begins nothing new; the same key for
/// another file is refused.
async fn a_begin_sent_again_with_its_key_begins_nothing_new(f: Fixture) {
    let server = f.server.as_ref().unwrap();
    let token = server.token("user:alice");
    let http = reqwest::Client::new();
    let list = list_of_64k(4, 5);
    let send = |name: &'static str, key: &'static str| {
        begin(
            &http,
            &server.base,
            token,
            name,
            4 * 65536,
            list.clone(),
            Some(key),
        )
    };
    let (status, first) = send("keyed.psd", "begin-1").await;
    assert_eq!(status, 201, "{first}");
    // Thirty-two begins of the same key, some at once: one upload.
    let again = futures_util::future::join_all((0..32).map(|_| send("keyed.psd", "begin-1"))).await;
    for (status, state) in again {
        assert_eq!((status, &state["id"]), (201, &first["id"]), "{state}");
    }
    // Were each a new upload, the 33rd would be refused.
    let (status, other) = send("other.psd", "begin-2").await;
    assert_eq!(status, 201, "{other}");
    let (status, refused) = send("third.psd", "begin-1").await;
    assert_eq!(
        (status, &refused["error"]),
        (422, &"invalid".into()),
        "{refused}"
    );
}

/// Begins at once beyond a participant's 32 unfinished uploads: exactly
/// 32 are taken, whatever the race.
async fn parallel_begins_take_exactly_thirty_two(f: Fixture) {
    let server = f.server.as_ref().unwrap();
    let token = server.token("user:bob");
    let http = reqwest::Client::new();
    let list = list_of_64k(1, 3);
    let answers = futures_util::future::join_all((0..48).map(|i| {
        begin(
            &http,
            &server.base,
            token,
            Box::leak(format!("many{i}.psd").into_boxed_str()),
            65536,
            list.clone(),
            None,
        )
    }))
    .await;
    let taken = answers.iter().filter(|(status, _)| *status == 201).count();
    let refused = answers
        .iter()
        .filter(|(status, body)| *status == 429 && body["error"] == "too_many")
        .count();
    assert_eq!((taken, refused), (32, 16));
}

/// Folder and PostgreSQL servers for the cases that need a process of
/// their own (its memory, its address), and the in-process fixtures for
/// the others.
mod folder {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slow_begins_hold_up_nobody_else() {
        super::slow_begins_hold_up_nobody_else(super::Store::folder()).await
    }

    /// Memory as Linux counts it (VmHWM).
    #[cfg(target_os = "linux")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_largest_begins_at_once_stay_within_the_bound() {
        super::the_largest_begins_at_once_stay_within_the_bound(super::Store::folder()).await
    }
}

#[cfg(target_os = "linux")]
mod team {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slow_begins_hold_up_nobody_else() {
        super::slow_begins_hold_up_nobody_else(super::Store::team()).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_largest_begins_at_once_stay_within_the_bound() {
        super::the_largest_begins_at_once_stay_within_the_bound(super::Store::postgres()).await
    }
}

crate::served!(
    a_half_open_append_gives_way_at_once,
    a_begin_sent_again_with_its_key_begins_nothing_new,
    parallel_begins_take_exactly_thirty_two,
);

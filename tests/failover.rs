//! Clients given several servers move on when one dies: real `leasedesk
//! serve` processes on one store, one of them killed with SIGKILL.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leasedesk::failpoint;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Error, Remote, Upload};

use crate::harness::*;
use testkit::tool::lines_of;

/// One store that several servers share: a data folder here (several
/// processes may share one). On PostgreSQL it would be a database and a blob
/// store; only `args`, `open` and the blob check know which.
pub(crate) struct SharedStore {
    dir: tempfile::TempDir,
    /// Rows in this PostgreSQL database, not the data folder's SQLite file.
    pub(crate) database: Option<String>,
}

impl SharedStore {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            database: None,
        }
    }

    /// A team's store: rows in a new PostgreSQL database.
    #[cfg(target_os = "linux")]
    pub(crate) fn postgres() -> Self {
        Self::on_database(postgres_database())
    }

    /// Rows in the PostgreSQL database `url`.
    pub(crate) fn on_database(url: String) -> Self {
        Self {
            database: Some(url),
            ..Self::new()
        }
    }

    /// The `leasedesk` CLI on this store.
    pub(crate) fn command(&self) -> Command {
        self.cli().command()
    }

    /// The `leasedesk` CLI (and its `serve`) on this store.
    pub(crate) fn cli(&self) -> testkit::Cli {
        crate::harness::cli_on().store_args(self.args())
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// What points a `leasedesk` process at this store.
    fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--data".into(), self.data().into()];
        if let Some(database) = &self.database {
            args.extend(["--database".into(), database.into()]);
        }
        args
    }

    /// The store in this process, for setting up and looking afterwards.
    fn open(&self) -> Bundled {
        let location = leasedesk::Location {
            data: self.data(),
            database: self.database.clone(),
            blobs: None,
        };
        Bundled::open_at(&location, Default::default()).unwrap()
    }

    fn as_alice(&self) -> Bundled {
        self.open().acting_as(participant("user:alice"))
    }

    /// A participant's token.
    pub(crate) fn account(&self, name: &str) -> String {
        self.open()
            .add_account(&participant(name), false)
            .unwrap()
            .1
    }

    /// An admin's token.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the team tests'
    pub(crate) fn admin(&self, name: &str) -> String {
        self.open().add_account(&participant(name), true).unwrap().1
    }

    /// A file outside the store.
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let file = self.dir.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        file
    }

    /// Every blob is one a row names, and no upload is left half written
    /// (looked at after an open, which sweeps what a killed process left).
    fn assert_no_half_made_blob(&self) {
        drop(self.open());
        let data = self.data();
        let named = named_blobs_at(&data, self.database.as_deref());
        assert_eq!(blob_files(&data), named, "no blob unnamed");
        assert_eq!(uploads_in_flight(&data), 0, "no upload half written");
    }
}

/// A real `leasedesk serve` on 127.0.0.1:0, its stderr read line by line;
/// killed (SIGKILL) when dropped.
pub(crate) struct ServeProcess {
    process: testkit::ServeProcess,
    pub(crate) url: String,
    log: Receiver<String>,
}

impl ServeProcess {
    /// A server on `store`, with failpoints (`name=pause`, see
    /// `crates/model/src/failpoint.rs`) if any.
    pub(crate) fn start(store: &SharedStore, failpoints: &str) -> Self {
        Self::start_on(store, "127.0.0.1:0", failpoints)
    }

    /// A server on `store` listening on `address`.
    pub(crate) fn start_on(store: &SharedStore, address: &str, failpoints: &str) -> Self {
        let mut process = store
            .cli()
            .serve()
            .listen(address)
            .env("LEASEDESK_FAILPOINTS", failpoints)
            .stderr(Stdio::piped())
            .spawn();
        let log = lines_of(process.child.stderr.take().unwrap());
        Self {
            url: process.url.clone(),
            process,
            log,
        }
    }

    /// A client of this server alone.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the team tests'
    pub(crate) fn client(&self, token: &str) -> Arc<dyn Backend> {
        Arc::new(Remote::new(&self.url, token).unwrap())
    }

    /// Waits (up to 60 s) until the server says it stopped at `name`.
    fn wait_for_failpoint(&self, name: &str) {
        let reached = format!("failpoint {name} reached");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.log.recv_timeout(left) {
                Ok(line) if line.contains(&reached) => return,
                Ok(_) => continue,
                Err(_) => panic!("the server never reached {name}"),
            }
        }
    }

    pub(crate) fn kill(&mut self) {
        self.process.kill();
    }
}

/// Two servers on one store.
fn two_servers(store: &SharedStore, first_failpoints: &str) -> [ServeProcess; 2] {
    [
        ServeProcess::start(store, first_failpoints),
        ServeProcess::start(store, ""),
    ]
}

/// `leasedesk --server SERVERS --json events --follow` with `token`: the
/// process, and the lines it prints (events) and says (stderr) as they come.
pub(crate) fn follow_events(
    servers: &str,
    token: &str,
) -> (std::process::Child, Receiver<String>, Receiver<String>) {
    let mut follow = crate::harness::leasedesk()
        .args(["--server", servers, "--json", "events", "--follow"])
        .env("LEASEDESK_TOKEN", token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let printed = lines_of(follow.stdout.take().unwrap());
    let said = lines_of(follow.stderr.take().unwrap());
    (follow, printed, said)
}

/// The CLI against `servers` with `token`.
fn cli(servers: &str, token: &str, args: &[&str]) -> Output {
    crate::harness::leasedesk()
        .args(["--server", servers])
        .args(args)
        .env("LEASEDESK_TOKEN", token)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_server_list_with_a_bad_url_is_refused_naming_it() {
    let token = "ld_0000000000000000_000000000000000000000000000000000000000000000000";
    for (list, named) in [
        (
            "http://127.0.0.1:1, ftp://files.example",
            "ftp://files.example",
        ),
        ("http://a.example,,http://b.example", "empty entry"),
        ("", "empty entry"),
        ("http://a.example/v1", "http://a.example/v1"),
        (
            "http://alice:secret@a.example",
            "http://alice:secret@a.example",
        ),
        ("a.example:7070", "a.example:7070"),
    ] {
        match Remote::new(list, token) {
            Err(Error::Invalid(message)) => {
                assert!(message.contains(named), "{list:?}: {message}")
            }
            Err(other) => panic!("{list:?}: {other:?}"),
            Ok(_) => panic!("{list:?} was taken"),
        }
    }
    let two = Remote::new(" http://a.example:7070/ , https://b.example ", token).unwrap();
    assert_eq!(two.server(), "http://a.example:7070", "the first, trimmed");

    let refused = cli("http://a.example,ftp://b.example", token, &["ls"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("\"ftp://b.example\" is not http(s)://host[:port]"),
        "{}",
        text(&refused.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_whose_first_server_is_dead_works_and_says_it_uses_the_second() {
    let store = SharedStore::new();
    let token = store.account("user:alice");
    store
        .as_alice()
        .import(&path("a.psd"), bytes(b"v1"))
        .await
        .unwrap();
    let [mut first, second] = two_servers(&store, "");
    let servers = format!("{},{}", first.url, second.url);
    first.kill();

    let status = cli(&servers, &token, &["status"]);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert_eq!(
        text(&status.stdout).trim(),
        format!("server {} as user:alice", second.url)
    );
    assert_eq!(
        text(&status.stderr).trim(),
        format!(
            "leasedesk: server {} did not answer; using {}",
            first.url, second.url
        ),
        "one line says the CLI moved"
    );
    let listed = cli(&servers, &token, &["ls"]);
    assert!(text(&listed.stdout).contains("a.psd  v1  free"));
    let local = crate::harness::leasedesk()
        .args(store.args())
        .args(["--as", "user:alice", "--json", "status"])
        .output()
        .unwrap();
    let local: serde_json::Value = serde_json::from_slice(&local.stdout).unwrap();
    assert_eq!(
        (local["data"].as_str(), local["participant"].as_str()),
        (store.data().to_str(), Some("user:alice")),
        "status on a data folder names it"
    );

    // In a program, the move holds for every clone, and is told once.
    let remote = Remote::new(&servers, &token).unwrap();
    let moves = Arc::new(Mutex::new(Vec::new()));
    let told = moves.clone();
    remote.on_move(move |from, to| told.lock().unwrap().push((from.to_owned(), to.to_owned())));
    let clone = remote.clone();
    let reads = (0..4).map(|_| {
        let remote = remote.clone();
        tokio::spawn(async move { remote.artifacts().await })
    });
    for read in reads {
        assert_eq!(read.await.unwrap().unwrap().len(), 1);
    }
    assert_eq!(clone.server(), second.url, "a clone uses the second too");
    assert_eq!(
        *moves.lock().unwrap(),
        [(first.url.clone(), second.url.clone())],
        "told once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_even_a_refusal_never_moves_the_client() {
    let store = SharedStore::new();
    let token = store.account("user:alice");
    let [first, second] = two_servers(&store, "");
    let servers = format!("{},{}", first.url, second.url);
    let remote = Remote::new(&servers, &token).unwrap();
    let unknown = remote.artifact(ArtifactId::new()).await;
    assert!(matches!(unknown, Err(Error::NotFound(_))), "{unknown:?}");
    let stranger = Remote::new(&servers, "ld_0000000000000000_0000").unwrap();
    let refused = stranger.artifacts().await;
    assert!(
        matches!(refused, Err(Error::Unauthorized(_))),
        "{refused:?}"
    );
    assert_eq!(remote.server(), first.url);
    assert_eq!(stranger.server(), first.url);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_in_the_middle_of_several_checkins_leaves_each_committed_once() {
    a_server_killed_in_the_middle_of_several_checkins_leaves_each_committed_once_on(
        SharedStore::new(),
    )
    .await
}

/// The same on two servers over one PostgreSQL database.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_in_the_middle_of_several_checkins_leaves_each_committed_once_on_postgres()
{
    a_server_killed_in_the_middle_of_several_checkins_leaves_each_committed_once_on(
        SharedStore::postgres(),
    )
    .await
}

async fn a_server_killed_in_the_middle_of_several_checkins_leaves_each_committed_once_on(
    store: SharedStore,
) {
    let token = store.account("user:alice");
    let alice = store.as_alice();
    let mut work = Vec::new();
    for n in 0..4 {
        let a = alice
            .import(&path(&format!("{n}.psd")), bytes(b"v1"))
            .await
            .unwrap();
        let c = alice.check_out(a.id, checkout_request()).await.unwrap();
        // Several chunks, different in each file.
        let bytes: Vec<u8> = (0..3 << 20).map(|i| (i * (n + 3)) as u8).collect();
        let file = store.file(&format!("work{n}.psd"), &bytes);
        work.push((c, file, digest(&bytes)));
    }
    drop(alice);
    let events_before = all_events(&store.as_alice()).await;

    // The first server stops after its first check-in commit, before it answers.
    let [mut first, second] = two_servers(&store, "store.after_durable_commit=pause");
    let remote = Remote::new(&format!("{},{}", first.url, second.url), &token).unwrap();
    let checkins: Vec<_> = work
        .iter()
        .map(|(c, file, _)| {
            let (remote, id, file) = (remote.clone(), c.id, file.clone());
            tokio::spawn(async move { remote.check_in(id, Upload::file(file)).await })
        })
        .collect();
    first.wait_for_failpoint(failpoint::at::AFTER_DURABLE_COMMIT);
    tokio::time::sleep(Duration::from_millis(300)).await; // the others reach it too
    let looked = store.as_alice();
    let mut answered_by_first = HashMap::new();
    for (c, _, _) in &work {
        let now = looked.checkout(c.id).await.unwrap();
        if now.result.is_some() {
            answered_by_first.insert(c.id, now);
        }
    }
    assert!(!answered_by_first.is_empty(), "the first server committed");
    first.kill();

    for (checkin, (c, _, digest)) in checkins.into_iter().zip(&work) {
        let answer = checkin.await.unwrap().expect("the check-in, on the second");
        assert_eq!(
            answer.result,
            Some(CheckinResult::Committed {
                version: 2,
                digest: digest.clone()
            })
        );
        if let Some(first_answer) = answered_by_first.get(&c.id) {
            assert_eq!(&answer, first_answer, "the answer the first server gave");
        }
    }
    assert_eq!(remote.server(), second.url);

    let events = all_events(&store.as_alice()).await;
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "dense");
    let mut committed = BTreeMap::new();
    let mut closed = BTreeMap::new();
    for e in &events[events_before.len()..] {
        let counter = match e.kind.as_str() {
            "version.committed" => &mut committed,
            "checkout.closed" => &mut closed,
            _ => continue,
        };
        *counter.entry(e.artifact_id.unwrap()).or_insert(0) += 1;
    }
    let first_version = digest(b"v1");
    for (c, _, digest) in &work {
        assert_eq!(committed.get(&c.artifact_id), Some(&1), "committed once");
        assert_eq!(closed.get(&c.artifact_id), Some(&1), "closed once");
        let versions = store.open().versions(c.artifact_id).await.unwrap();
        assert_eq!(
            versions
                .iter()
                .map(|h| (h.version, &h.digest))
                .collect::<Vec<_>>(),
            [(2, digest), (1, &first_version)]
        );
    }
    drop(second);
    store.assert_no_half_made_blob();
}

// Also on two servers over one PostgreSQL database.
crate::on_sqlite_and_postgres!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    events_follow_goes_on_on_the_other_server_after_a_kill(
        SharedStore::new(),
        SharedStore::postgres(),
    )
);

async fn events_follow_goes_on_on_the_other_server_after_a_kill(store: SharedStore) {
    let token = store.account("user:alice");
    let alice = store.as_alice();
    let a = alice.import(&path("a.psd"), bytes(b"v1")).await.unwrap();
    // A change made beside the servers, as a third process would: a
    // check-out and its cancel. Returns the last event's seq.
    let change = || async {
        let c = alice.check_out(a.id, checkout_request()).await.unwrap();
        alice.cancel(c.id).await.unwrap();
        all_events(&alice).await.last().unwrap().seq
    };
    let [mut first, second] = two_servers(&store, "");
    let servers = format!("{},{}", first.url, second.url);
    let (mut follow, printed, said) = follow_events(&servers, &token);
    let mut seen = Vec::new();
    let mut read_until = |last: u64| {
        tokio::task::block_in_place(|| {
            while seen.last() < Some(&last) {
                let line = printed
                    .recv_timeout(Duration::from_secs(20))
                    .unwrap_or_else(|_| panic!("event {last} never came; had {seen:?}"));
                let event: Event = serde_json::from_str(&line).unwrap();
                seen.push(event.seq);
            }
            seen.clone()
        })
    };
    let before_the_kill = change().await;
    read_until(before_the_kill);
    first.kill();
    change().await; // while the follower has no server
    let last = change().await;
    let seen = read_until(last);
    assert!(last > before_the_kill + 1);
    assert_eq!(
        seen,
        (1..=last).collect::<Vec<_>>(),
        "none lost or repeated"
    );
    let moved = tokio::task::block_in_place(|| said.recv_timeout(Duration::from_secs(5)));
    assert_eq!(
        moved.unwrap(),
        format!(
            "leasedesk: server {} did not answer; using {}",
            first.url, second.url
        )
    );
    follow.kill().unwrap();
    follow.wait().unwrap();
    drop(second);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkout_cut_off_by_a_kill_fails_clearly_and_does_not_move() {
    let store = SharedStore::new();
    let token = store.account("user:alice");
    let a = store
        .as_alice()
        .import(&path("a.psd"), bytes(b"v1"))
        .await
        .unwrap();
    let [mut first, second] = two_servers(&store, "checkout.record=pause");
    let remote = Remote::new(&format!("{},{}", first.url, second.url), &token).unwrap();
    let checkout = {
        let remote = remote.clone();
        tokio::spawn(async move { remote.check_out(a.id, checkout_request()).await })
    };
    first.wait_for_failpoint(failpoint::at::CHECKOUT_RECORD);
    first.kill();
    match checkout.await.unwrap() {
        Err(Error::Unavailable(message)) => {
            assert!(
                message.contains(&first.url) && message.contains("may or may not"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        remote.server(),
        first.url,
        "a change sent is not sent again"
    );
    let artifact = store.open().artifact(a.id).await.unwrap();
    assert_eq!(artifact.lease, None, "the killed transaction left no lease");

    // Once the first refuses connections, a change goes to the second: a
    // request whose connection was never made was not sent, so it is safe.
    let checked_out = remote.check_out(a.id, checkout_request()).await.unwrap();
    assert_eq!(remote.server(), second.url);
    assert_eq!(
        store
            .open()
            .artifact(a.id)
            .await
            .unwrap()
            .lease
            .map(|l| l.holder),
        Some(checked_out.holder)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_upload_is_tried_once_and_a_dead_first_server_is_a_clear_error() {
    let store = SharedStore::new();
    let token = store.account("user:alice");
    let [mut first, second] = two_servers(&store, "");
    let servers = format!("{},{}", first.url, second.url);
    first.kill();
    let remote = Remote::new(&servers, &token).unwrap();
    // A stream's bytes went with the first try: they cannot go to the second.
    match remote.import(&path("a.psd"), bytes(b"v1")).await {
        Err(Error::Unavailable(message)) => assert!(
            message.contains(&first.url) && message.contains("cannot be reached"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(store.open().artifacts().await.unwrap().is_empty());
    // A file is read again: it goes to the second.
    let file = store.file("a.psd", b"v1");
    let imported = remote.import(&path("a.psd"), Upload::file(&file)).await;
    assert_eq!(imported.unwrap().head.digest, digest(b"v1"));
    assert_eq!(remote.server(), second.url);
}

//! What every test needs: a data folder in a temp dir, a clock the test moves,
//! and one backend per participant over the same store.

use std::io::Cursor;
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeZone;
use leasedesk::clock::Clock;
use leasedesk::failpoint::Failpoints;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Options, Remote, Upload};
use tempfile::TempDir;

#[allow(dead_code)] // each test module uses a part
mod s3;
#[allow(unused_imports)] // each test module uses a part
pub use s3::{http, s3, Moto, S3};

pub struct Fixture {
    pub dir: TempDir,
    pub clock: Clock,
    /// The store itself (the server's, for a remote fixture).
    pub store: Bundled,
    pub alice: Arc<dyn Backend>,
    pub bob: Arc<dyn Backend>,
    pub agent: Arc<dyn Backend>,
    pub admin: Arc<dyn Backend>,
    /// A remote fixture's server address and each participant's token.
    pub server: Option<Server>,
    /// Stops the server of a remote fixture when dropped.
    _stop: Option<tokio::sync::oneshot::Sender<()>>,
}

pub struct Server {
    pub base: String,
    pub tokens: Vec<(Participant, String)>,
}

impl Server {
    pub fn token(&self, p: &str) -> &str {
        &self
            .tokens
            .iter()
            .find(|(q, _)| q.as_str() == p)
            .expect("a known participant")
            .1
    }
}

const PARTICIPANTS: [&str; 4] = ["user:alice", "user:bob", "agent:resizer", "user:admin"];

pub fn start_time() -> Timestamp {
    chrono::Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap()
}

pub fn fixture() -> Fixture {
    fixture_with(Failpoints::default())
}

pub fn fixture_with(failpoints: Failpoints) -> Fixture {
    let (dir, clock, store) = store_with(failpoints, Options::default().max_upload);
    for p in PARTICIPANTS {
        store
            .add_account(&participant(p), p == "user:admin")
            .expect("add participant");
    }
    let as_ = |p: &str| -> Arc<dyn Backend> { Arc::new(store.acting_as(participant(p))) };
    Fixture {
        alice: as_("user:alice"),
        bob: as_("user:bob"),
        agent: as_("agent:resizer"),
        admin: as_("user:admin"),
        clock,
        store,
        dir,
        server: None,
        _stop: None,
    }
}

fn store_with(failpoints: Failpoints, max_upload: u64) -> (TempDir, Clock, Bundled) {
    let dir = tempfile::tempdir().expect("temp dir");
    let clock = Clock::manual(start_time());
    let options = Options {
        clock: clock.clone(),
        failpoints,
        max_upload,
    };
    let store = Bundled::open_with(dir.path(), options).expect("open store");
    (dir, clock, store)
}

/// The same participants, each through the remote backend, over a real
/// `leasedesk serve` (its `run`, in this process) on 127.0.0.1:0.
pub async fn remote_fixture() -> Fixture {
    remote_fixture_with(Options::default().max_upload).await
}

pub async fn remote_fixture_with(max_upload: u64) -> Fixture {
    let (dir, clock, store) = store_with(Failpoints::default(), max_upload);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(leasedesk::server::run(listener, store.clone(), async {
        let _ = stopped.await;
    }));
    let mut clients = Vec::new();
    let mut tokens = Vec::new();
    for p in PARTICIPANTS {
        let (_, token) = store
            .add_account(&participant(p), p == "user:admin")
            .expect("add participant");
        clients.push(Arc::new(Remote::new(&base, &token).expect("client")) as Arc<dyn Backend>);
        tokens.push((participant(p), token));
    }
    let [alice, bob, agent, admin]: [Arc<dyn Backend>; 4] = clients.try_into().ok().unwrap();
    Fixture {
        alice,
        bob,
        agent,
        admin,
        clock,
        store,
        dir,
        server: Some(Server { base, tokens }),
        _stop: Some(stop),
    }
}

/// Runs each named `async fn(Fixture)` twice: on the bundled backend, and on
/// the remote one against a real server. Both must pass the same assertions.
#[macro_export]
macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod bundled {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::fixture()).await
                }
            )*
        }
        mod remote {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::remote_fixture().await).await
                }
            )*
        }
    };
}

pub fn participant(p: &str) -> Participant {
    p.parse().expect("valid participant")
}

pub fn path(p: &str) -> RepoPath {
    p.parse().expect("valid path")
}

/// An upload of `data`, streamed.
pub fn bytes(data: &[u8]) -> Upload {
    Upload::stream(Cursor::new(data.to_vec()))
}

pub fn digest(data: &[u8]) -> Digest {
    blake3::hash(data).into()
}

/// A check-out with the default lease (8 hours) and no note.
pub fn checkout_request() -> CheckoutRequest {
    CheckoutRequest::default()
}

/// A check-out whose lease lasts `seconds`.
pub fn for_seconds(seconds: u64) -> CheckoutRequest {
    CheckoutRequest {
        ttl_seconds: Some(seconds),
        note: None,
    }
}

/// A check-out with the default lease and a note for whoever is refused.
pub fn with_note(note: &str) -> CheckoutRequest {
    CheckoutRequest {
        ttl_seconds: None,
        note: Some(note.into()),
    }
}

impl Fixture {
    /// Imports `data` at `p` as alice.
    pub async fn import(&self, p: &str, data: &[u8]) -> Artifact {
        self.alice
            .import(&path(p), bytes(data))
            .await
            .expect("import")
    }

    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    pub async fn all_events(&self) -> Vec<Event> {
        all_events(self.alice.as_ref()).await
    }

    pub async fn last_seq(&self) -> u64 {
        self.all_events().await.last().map_or(0, |e| e.seq)
    }

    /// Event types after `seq`, in order.
    pub async fn kinds_after(&self, seq: u64) -> Vec<String> {
        self.all_events()
            .await
            .into_iter()
            .filter(|e| e.seq > seq)
            .map(|e| e.kind)
            .collect()
    }

    pub async fn artifact(&self, id: ArtifactId) -> Artifact {
        self.alice.artifact(id).await.expect("artifact")
    }
}

pub async fn all_events(backend: &dyn Backend) -> Vec<Event> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let page = backend.events(after, 1000).await.expect("events");
        if page.events.is_empty() {
            return events;
        }
        after = page.next;
        events.extend(page.events);
    }
}

pub async fn read_content(backend: &dyn Backend, id: ArtifactId, version: Option<u64>) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut content = backend.content(id, version).await.expect("content");
    let mut out = Vec::new();
    content
        .reader
        .read_to_end(&mut out)
        .await
        .expect("read content");
    out
}

pub const HOUR: Duration = Duration::from_secs(3600);

/// The digests (as hex, like the blob files' names) that a version or a
/// proposal of the data folder `data` names: every row that serves bytes.
pub fn named_blobs(data: &std::path::Path) -> std::collections::BTreeSet<String> {
    let db = rusqlite::Connection::open(data.join("leasedesk.db")).expect("open the database");
    let mut stmt = db
        .prepare("SELECT digest FROM versions UNION SELECT digest FROM proposals")
        .unwrap();
    let digests = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|d| d.unwrap().trim_start_matches("blake3:").to_owned())
        .collect();
    digests
}

/// The blob files in the data folder `data`'s shard folders, by name.
pub fn blob_files(data: &std::path::Path) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for shard in std::fs::read_dir(data.join("blobs")).expect("blob folder") {
        let shard = shard.unwrap();
        if shard.file_name() == "tmp" {
            continue;
        }
        for blob in std::fs::read_dir(shard.path()).unwrap() {
            names.insert(blob.unwrap().file_name().into_string().unwrap());
        }
    }
    names
}

/// Temporary files of uploads being written in `data`.
pub fn uploads_in_flight(data: &std::path::Path) -> usize {
    std::fs::read_dir(data.join("blobs/tmp"))
        .expect("temp folder")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("upload-"))
        })
        .count()
}

/// Waits (up to 30 s) until `n` uploads are being written in `data`: their
/// requests got past every check made before the bytes are read.
pub async fn wait_for_uploads(data: &std::path::Path, n: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while uploads_in_flight(data) < n {
        assert!(
            std::time::Instant::now() < deadline,
            "{n} uploads never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A Python with the tools that write the preview tests' images (psd-tools,
/// Pillow, numpy), in a virtual environment made once under `target/` from
/// `tests/fixtures/requirements.txt`; `LEASEDESK_PYTHON` names another.
#[allow(dead_code)] // the preview tests are being written
pub fn python() -> std::process::Command {
    static VENV: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let interpreter = VENV.get_or_init(|| {
        if let Some(given) = std::env::var_os("LEASEDESK_PYTHON") {
            return given.into();
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let requirements = root.join("tests/fixtures/requirements.txt");
        let venv = root.join("target/test-python");
        let python = venv.join("bin/python");
        let stamp = venv.join("installed.txt");
        let wanted = std::fs::read_to_string(&requirements).expect("the requirements");
        if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
            let run = |cmd: &mut std::process::Command| {
                let status = cmd.status().expect("python3 runs");
                assert!(status.success(), "{cmd:?} failed: {status}");
            };
            run(std::process::Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv));
            run(std::process::Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                ])
                .arg(&requirements));
            std::fs::write(&stamp, wanted).expect("the stamp");
        }
        python
    });
    std::process::Command::new(interpreter)
}

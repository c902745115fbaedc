//! What every test needs: a data folder in a temp dir, a clock the test moves,
//! and one backend per participant over the same store.

use std::io::Cursor;
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeZone;
use leasedesk::clock::Clock;
use leasedesk::failpoint::Failpoints;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Location, Options, Remote, Upload};
use tempfile::TempDir;

#[allow(unused_imports)] // each test module uses a part
pub use testkit::s3::{http, s3, Moto, S3};

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
    /// The PostgreSQL database of the store, if its rows are not in the data folder.
    pub database: Option<String>,
    /// The bucket and prefix of the store's blobs, if they are not in the data folder.
    pub bucket: Option<(S3, String)>,
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
        database: None,
        bucket: None,
        _stop: None,
    }
}

fn store_with(failpoints: Failpoints, max_upload: u64) -> (TempDir, Clock, Bundled) {
    store_at(failpoints, max_upload, None, None)
}

/// A store in a temp data folder, its rows in `database` and its blobs in
/// `blobs` if given.
fn store_at(
    failpoints: Failpoints,
    max_upload: u64,
    database: Option<String>,
    blobs: Option<String>,
) -> (TempDir, Clock, Bundled) {
    let dir = tempfile::tempdir().expect("temp dir");
    let clock = Clock::manual(start_time());
    let options = Options {
        clock: clock.clone(),
        failpoints,
        max_upload,
    };
    let location = Location {
        data: dir.path().to_owned(),
        database,
        blobs,
    };
    let store = Bundled::open_at(&location, options).expect("open store");
    (dir, clock, store)
}

/// The same participants, each through the remote backend, over a real
/// `leasedesk serve` (its `run`, in this process) on 127.0.0.1:0.
pub async fn remote_fixture() -> Fixture {
    remote_fixture_with(Options::default().max_upload).await
}

pub async fn remote_fixture_with(max_upload: u64) -> Fixture {
    served_fixture(store_with(Failpoints::default(), max_upload)).await
}

/// The remote fixture over a server whose rows are in PostgreSQL (a new
/// database on the test cluster) and whose blobs are in an S3 bucket (a new
/// one on the test moto): the contract's third configuration.
#[cfg(target_os = "linux")]
pub async fn team_fixture() -> Fixture {
    let bucket = s3();
    let prefix = "contract".to_owned();
    let blobs = Some(bucket.url(&prefix));
    Fixture {
        bucket: Some((bucket, prefix)),
        ..postgres_fixture_with(blobs).await
    }
}

/// The same with the blobs in the data folder, for the cases that look into
/// that folder (its holds, temp files and sweeps).
#[cfg(target_os = "linux")]
pub async fn postgres_fixture() -> Fixture {
    postgres_fixture_with(None).await
}

#[cfg(target_os = "linux")]
async fn postgres_fixture_with(blobs: Option<String>) -> Fixture {
    let database = postgres_database();
    let max_upload = Options::default().max_upload;
    let url = database.clone();
    let store = tokio::task::spawn_blocking(move || {
        store_at(Failpoints::default(), max_upload, Some(url), blobs)
    })
    .await
    .expect("open store");
    Fixture {
        database: Some(database),
        ..served_fixture(store).await
    }
}

async fn served_fixture((dir, clock, store): (TempDir, Clock, Bundled)) -> Fixture {
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
        database: None,
        bucket: None,
        _stop: Some(stop),
    }
}

/// Runs each named `async fn(Fixture)` (with its attributes, such as a
/// `cfg`) three times: on the bundled backend, on
/// the remote one against a real server, and on the remote one against a
/// server on PostgreSQL and S3 (a team's). All must pass the same assertions.
#[macro_export]
macro_rules! contract {
    ($($cases:tt)*) => {
        $crate::contract_on!(team, team_fixture; $($cases)*);
    };
}

/// [`contract!`] for cases that look into the data folder's blobs (holds,
/// temp files, sweeps): the third configuration keeps its blobs there.
#[macro_export]
macro_rules! contract_with_blob_folder {
    ($($cases:tt)*) => {
        $crate::contract_on!(postgres, postgres_fixture; $($cases)*);
    };
}

/// The cases on the bundled backend, the remote one, and the remote one over
/// the third configuration: module `$third`, each case given `$fixture()`.
#[macro_export]
macro_rules! contract_on {
    ($third:ident, $fixture:ident; $($(#[$attr:meta])* $name:ident),* $(,)?) => {
        mod bundled {
            $(
                $(#[$attr])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::fixture()).await
                }
            )*
        }
        mod remote {
            $(
                $(#[$attr])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::remote_fixture().await).await
                }
            )*
        }
        // PostgreSQL and moto run beside the tests on Linux only.
        #[cfg(target_os = "linux")]
        mod $third {
            $(
                $(#[$attr])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::$fixture().await).await
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

    /// Where the store is, to open it again.
    pub fn location(&self) -> Location {
        Location {
            data: self.dir.path().to_owned(),
            database: self.database.clone(),
            blobs: self.bucket.as_ref().map(|(s3, prefix)| s3.url(prefix)),
        }
    }

    /// The digests (as hex) of the blobs stored, in the data folder or the bucket.
    pub fn stored_blobs(&self) -> std::collections::BTreeSet<String> {
        match &self.bucket {
            None => blob_files(self.dir.path()),
            Some((s3, prefix)) => {
                let folder = format!("{prefix}/blobs/");
                s3.keys()
                    .iter()
                    .filter_map(|key| key.strip_prefix(&folder).map(str::to_owned))
                    .collect()
            }
        }
    }

    /// Uploads begun and neither finished nor cleaned away: temporary files of
    /// the blob folder, or the bucket's open multipart uploads and the spool's files.
    pub fn unfinished_uploads(&self) -> usize {
        let files_in = |folder: std::path::PathBuf| {
            std::fs::read_dir(folder).map_or(0, |entries| entries.count())
        };
        match &self.bucket {
            None => files_in(self.dir.path().join("blobs/tmp")),
            Some((s3, _)) => {
                s3.open_multipart_uploads() + files_in(self.dir.path().join("spool/tmp"))
            }
        }
    }

    /// Replaces the stored bytes of the blob `of` (a disk's or a bucket's rot).
    pub async fn overwrite_blob(&self, of: &Digest, bytes: &[u8]) {
        match &self.bucket {
            None => {
                let blob = self
                    .dir
                    .path()
                    .join("blobs")
                    .join(&of.hex()[..2])
                    .join(of.hex());
                let mut permissions = std::fs::metadata(&blob).unwrap().permissions();
                #[allow(clippy::permissions_set_readonly_false)]
                permissions.set_readonly(false);
                std::fs::set_permissions(&blob, permissions).unwrap();
                std::fs::write(&blob, bytes).unwrap();
            }
            Some((s3, prefix)) => {
                use object_store::ObjectStoreExt;
                let key = object_store::path::Path::from(format!("{prefix}/blobs/{}", of.hex()));
                s3.client()
                    .put(&key, bytes.to_vec().into())
                    .await
                    .expect("the bucket takes the bytes");
            }
        }
    }

    /// Runs SQL on the store's database as an outside tool would (an older
    /// version, an admin), and returns the first column of each row it gives.
    pub fn sql(&self, sql: &str) -> Vec<String> {
        self.try_sql(sql)
            .unwrap_or_else(|e| panic!("{sql} failed: {e}"))
    }

    /// [`Fixture::sql`], or the database's refusal.
    pub fn try_sql(&self, sql: &str) -> Result<Vec<String>, String> {
        sql_at(self.dir.path(), self.database.as_deref(), sql)
    }

    /// The digests (as hex) that a version or a proposal names.
    pub fn named_blobs(&self) -> std::collections::BTreeSet<String> {
        named_blobs_at(self.dir.path(), self.database.as_deref())
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

/// Counts a racing check-in's result as `[committed, unchanged, proposal]`.
pub fn count_outcome(outcomes: &mut [usize; 3], result: &Option<CheckinResult>) {
    match result {
        Some(CheckinResult::Committed { .. }) => outcomes[0] += 1,
        Some(CheckinResult::Unchanged { .. }) => outcomes[1] += 1,
        Some(CheckinResult::Proposal { .. }) => outcomes[2] += 1,
        None => panic!("a check-in has a result"),
    }
}

/// The racing tasks' counts added up: the race must have made both commits
/// and proposals (stale check-ins).
pub async fn race_outcomes(tasks: Vec<tokio::task::JoinHandle<[usize; 3]>>) -> [usize; 3] {
    let mut outcomes = [0usize; 3];
    for task in tasks {
        for (total, n) in outcomes.iter_mut().zip(task.await.unwrap()) {
            *total += n;
        }
    }
    let [committed, _, proposals] = outcomes;
    assert!(
        committed > 0 && proposals > 0,
        "the race exercised commits and stale check-ins: {outcomes:?}"
    );
    outcomes
}

/// Runs SQL on the database of the store at `data` (its SQLite file, or
/// `database` on the test PostgreSQL server) as an outside tool would, and
/// returns the first column of each row it gives, or the database's refusal.
pub fn sql_at(
    data: &std::path::Path,
    database: Option<&str>,
    sql: &str,
) -> Result<Vec<String>, String> {
    match database {
        None => {
            let db =
                rusqlite::Connection::open(data.join("leasedesk.db")).expect("open the database");
            db.busy_timeout(Duration::from_secs(10)).unwrap();
            let mut stmt = db.prepare(sql).map_err(|e| e.to_string())?;
            let rows = stmt
                .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
                .map_err(|e| e.to_string())?;
            rows.map(|v| match v.map_err(|e| e.to_string())? {
                rusqlite::types::Value::Text(t) => Ok(t),
                rusqlite::types::Value::Integer(n) => Ok(n.to_string()),
                other => Ok(format!("{other:?}")),
            })
            .collect()
        }
        Some(url) => {
            let out = std::process::Command::new(pg_cluster().tool("psql"))
                .args([
                    "-X",
                    "-q",
                    "-A",
                    "-t",
                    "-v",
                    "ON_ERROR_STOP=1",
                    "-d",
                    url,
                    "-c",
                    sql,
                ])
                .output()
                .expect("psql runs");
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).into_owned());
            }
            Ok(String::from_utf8(out.stdout)
                .expect("UTF-8")
                .lines()
                .map(str::to_owned)
                .collect())
        }
    }
}

/// The digests (as hex) that a version or a proposal of the store at `data`
/// names: every row that serves bytes.
pub fn named_blobs_at(
    data: &std::path::Path,
    database: Option<&str>,
) -> std::collections::BTreeSet<String> {
    sql_at(
        data,
        database,
        "SELECT digest FROM versions UNION SELECT digest FROM proposals",
    )
    .expect("the digests")
    .into_iter()
    .map(|d| d.trim_start_matches("blake3:").to_owned())
    .collect()
}

/// The digests (as hex, like the blob files' names) that a version or a
/// proposal of the data folder `data` names: every row that serves bytes.
pub fn named_blobs(data: &std::path::Path) -> std::collections::BTreeSet<String> {
    named_blobs_at(data, None)
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
        testkit::python::venv(
            &root.join("tests/fixtures/requirements.txt"),
            &root.join("target/test-python"),
        )
        .join("bin/python")
    });
    std::process::Command::new(interpreter)
}

/// The `leasedesk` binary the tests run: `LEASEDESK_BIN` when set (the
/// Windows leg runs a copy staged where Wine's user can read it), else cargo's.
pub fn leasedesk_bin() -> std::path::PathBuf {
    std::env::var_os("LEASEDESK_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_leasedesk").into(), Into::into)
}

/// A `leasedesk` command.
pub fn leasedesk() -> std::process::Command {
    std::process::Command::new(leasedesk_bin())
}

/// Whether a test can ask a server to stop as an admin would and see it stop
/// cleanly: SIGTERM on Unix. Wine cannot deliver Ctrl+Break to another
/// process group (GenerateConsoleCtrlEvent fails, with or without a
/// console), so on Windows the server is ended instead, and its clean stop is
/// a manual check (docs/WINDOWS.md).
pub const GRACEFUL_STOP: bool = cfg!(unix);

/// Asks a server to stop: SIGTERM, or on Windows ends it (see [`GRACEFUL_STOP`]).
pub use testkit::ask_to_stop;

/// The `leasedesk` CLI (and its `serve`) on a data folder of its own in a
/// temp folder, where a server's log can go too (`serve_log`).
pub fn cli_in_temp_dir() -> testkit::Cli {
    testkit::Cli::in_temp_dir(leasedesk_bin())
}

/// The `leasedesk` CLI (and its `serve`) on no store yet.
pub fn cli_on() -> testkit::Cli {
    testkit::Cli::new(leasedesk_bin())
}

/// `leasedesk serve` on `cli`'s temp folder, its log in `serve.log` there.
pub fn serve_logged(cli: &testkit::Cli) -> testkit::Serve {
    cli.serve().log_to(cli.dir().join("serve.log"))
}

/// Deletes a file as a person would, read-only or not (Windows refuses to
/// delete a read-only file; Explorer asks, then clears the attribute).
pub fn delete_file(path: &std::path::Path) {
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    if cfg!(windows) && permissions.readonly() {
        #[allow(clippy::permissions_set_readonly_false)] // Windows only: one attribute
        permissions.set_readonly(false);
        std::fs::set_permissions(path, permissions).unwrap();
    }
    std::fs::remove_file(path).unwrap();
}

/// Whether this process runs as root (never on Windows, which has no such user).
pub use testkit::postgres::running_as_root;

/// A test PostgreSQL server (testkit's): one shared by the tests of this
/// process, made on first use, or one of a test's own.
pub use testkit::postgres::PgCluster;

/// What every test cluster runs with: no fsync (nothing here must outlive a
/// power cut) and room for many servers' connections.
const TEST_SETTINGS: [&str; 2] = ["fsync=off", "max_connections=400"];

/// A cluster of a test's own, for a test that stops and starts it.
pub fn own_pg_cluster() -> PgCluster {
    own_pg_cluster_with::<&str>(&[])
}

/// A cluster of a test's own, with `settings` (`name=value`) besides.
pub fn own_pg_cluster_with<S: AsRef<str>>(settings: &[S]) -> PgCluster {
    let settings: Vec<&str> = TEST_SETTINGS
        .into_iter()
        .chain(settings.iter().map(AsRef::as_ref))
        .collect();
    PgCluster::start(&settings)
}

fn pg_cluster() -> &'static PgCluster {
    static CLUSTER: std::sync::OnceLock<PgCluster> = std::sync::OnceLock::new();
    CLUSTER.get_or_init(own_pg_cluster)
}

/// The URL of a new, empty database on the test PostgreSQL server.
pub fn postgres_database() -> String {
    pg_cluster().database()
}

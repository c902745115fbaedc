//! What every test needs: a data folder in a temp dir, a clock the test moves,
//! and one backend per participant over the same store. Beside it: one case
//! run on several configurations (`cases`), what a test does through a
//! backend in one call (`calls`), a server below the client (`net`), the
//! processes beside the tests (`processes`), a store as a tool sees it
//! (`store`).

use std::io::Cursor;
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeZone;
use leasedesk::clock::Clock;
use leasedesk::failpoint::Failpoints;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Location, Options, Remote, Studio, Upload};
use tempfile::TempDir;

mod calls;
mod cases;
mod net;
mod processes;
mod store;

pub use calls::*;
pub use net::*;
pub use processes::*;
pub use store::*;

/// How a test watches a check-in from the workspace or the desk.
pub use leasedesk::backend::Watch;
/// Deterministic noise, different for each seed, so a failure can be replayed.
pub use testkit::noise::{noise, Xorshift};
#[allow(unused_imports)] // each test module uses a part
pub use testkit::s3::{http, s3, Moto, S3};
pub use testkit::WithEnvironment;

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
        ..Options::default()
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

/// The app's desk on `backend`, its workspace (files and state) in `dir`.
pub fn desk_in(
    dir: &std::path::Path,
    backend: Arc<dyn Backend>,
    clock: Clock,
) -> leasedesk::desk::Desk {
    let workspace = leasedesk::workspace::Workspace::open(
        &dir.join("files"),
        &dir.join("state"),
        clock.clone(),
    )
    .unwrap();
    leasedesk::desk::Desk::new(backend, workspace, clock)
}

impl Fixture {
    /// Alice's stale check-in of `data` to `p` (imported as "v1"), kept as a
    /// proposal while bob committed version 2: the artifact and the proposal.
    pub async fn stale_proposal(&self, p: &str, data: &[u8]) -> (Artifact, Proposal) {
        self.stale_proposal_after(self.bob.as_ref(), p, data).await
    }

    /// [`Fixture::stale_proposal`], version 2 committed by `taker`.
    pub async fn stale_proposal_after(
        &self,
        taker: &dyn Backend,
        p: &str,
        data: &[u8],
    ) -> (Artifact, Proposal) {
        let a = self.import(p, b"v1").await;
        let alice = self.alice.check_out(a.id, for_seconds(60)).await.unwrap();
        self.advance(HOUR);
        check_out_and_in_as(taker, a.id, b"v2").await;
        let done = self.alice.check_in(alice.id, bytes(data)).await.unwrap();
        (a, proposal_of(done))
    }

    /// `p`'s studio calls: over HTTP with its token on a served fixture,
    /// else in-process.
    pub fn studio(&self, p: &str) -> Arc<dyn Studio> {
        match &self.server {
            Some(server) => Arc::new(Remote::new(&server.base, server.token(p)).expect("client")),
            None => Arc::new(self.store.acting_as(participant(p))),
        }
    }

    /// Redeems an invite's code as the device `device`, as a new computer
    /// would: over HTTP without a token on a served fixture.
    pub async fn redeem(&self, code: &str, device: &str) -> leasedesk::Result<Redeemed> {
        match &self.server {
            Some(server) => {
                Remote::redeem(&server.base, leasedesk::Trust::default(), code, device).await
            }
            None => self.store.redeem_invite(code, device, None).await,
        }
    }

    /// The backend and studio calls of a redeemed device: its token over
    /// HTTP on a served fixture, else its participant in-process.
    pub fn device(&self, redeemed: &Redeemed) -> (Arc<dyn Backend>, Arc<dyn Studio>) {
        match &self.server {
            Some(server) => {
                let remote = Remote::new(&server.base, &redeemed.token).expect("client");
                (Arc::new(remote.clone()), Arc::new(remote))
            }
            None => {
                let store = self.store.acting_as(redeemed.participant.clone());
                (Arc::new(store.clone()), Arc::new(store))
            }
        }
    }

    /// `p`'s token on a served fixture.
    pub fn token(&self, p: &str) -> &str {
        self.server.as_ref().expect("a served fixture").token(p)
    }

    /// A link shaped `shape` to the served fixture's server (a real TCP
    /// proxy the test slows and cuts), and `p`'s client through it.
    pub async fn linked(
        &self,
        p: &str,
        shape: testkit::link::Shape,
    ) -> (testkit::link::Link, Remote) {
        let server = self.server.as_ref().expect("a served fixture");
        let address = server.base.trim_start_matches("http://").parse().unwrap();
        let link = testkit::link::Link::to(address, shape).await;
        let client = Remote::new(&link.url(), server.token(p)).expect("client");
        (link, client)
    }

    /// The admin sets one rule: `folder` hidden from `who`.
    pub async fn hide(&self, folder: &str, who: &str) {
        let rule = Rule::parse(folder, who, "none").expect("a rule");
        let admin = self.studio("user:admin");
        admin
            .put_permission_rules(vec![rule])
            .await
            .expect("rules set");
    }

    /// Adds carol, a user the fixture does not know yet: her token.
    pub fn add_carol(&self) -> String {
        self.store
            .add_account(&participant("user:carol"), false)
            .unwrap()
            .1
    }

    /// Alice checks `a` out and checks `data` in: the closed check-out.
    pub async fn check_out_and_in(&self, a: ArtifactId, data: &[u8]) -> Checkout {
        check_out_and_in_as(self.alice.as_ref(), a, data).await
    }

    /// Alice checks `a` out and cancels: the events of both, no lease left.
    pub async fn check_out_and_cancel(&self, a: ArtifactId) {
        check_out_and_cancel_as(self.alice.as_ref(), a).await
    }

    /// Imports `data` at `p` as alice.
    pub async fn import(&self, p: &str, data: &[u8]) -> Artifact {
        import_as(self.alice.as_ref(), p, data).await
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

    /// Resumable uploads whose parts are kept: folders of the data folder's
    /// `uploads/`, or upload ids under the bucket's `uploads/`.
    pub fn kept_uploads(&self) -> usize {
        match &self.bucket {
            None => std::fs::read_dir(self.dir.path().join("uploads"))
                .map_or(0, |entries| entries.count()),
            Some((s3, prefix)) => {
                let folder = format!("{prefix}/uploads/");
                s3.keys()
                    .iter()
                    .filter_map(|key| key.strip_prefix(&folder)?.split('/').next())
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()
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

    /// The events of type `kind`, in order.
    pub async fn events_of(&self, kind: &str) -> Vec<Event> {
        let mut all = self.all_events().await;
        all.retain(|e| e.kind == kind);
        all
    }

    /// The newest event of type `kind`; a panic if there is none.
    pub async fn last_event(&self, kind: &str) -> Event {
        let mut of_kind = self.events_of(kind).await;
        of_kind.pop().unwrap_or_else(|| panic!("no {kind} event"))
    }

    /// That `retry`, a call made again (its answer lost), answers `first`
    /// again and records no event.
    pub async fn assert_retry_changes_nothing<T: PartialEq + std::fmt::Debug>(
        &self,
        retry: impl std::future::Future<Output = leasedesk::Result<T>>,
        first: &T,
        what: &str,
    ) {
        let seq = self.last_seq().await;
        assert_eq!(&retry.await.unwrap(), first, "{what}");
        assert_eq!(self.kinds_after(seq).await, Vec::<String>::new());
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

pub const HOUR: Duration = Duration::from_secs(3600);

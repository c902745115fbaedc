//! The bundled backend: the rules in-process over an SQLite file and a blob
//! folder in one data directory. Several processes may share the directory.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::AsyncRead;

use crate::backend::{Backend, Content, Upload};
use crate::blob::{BlobHold, Blobs, Staged};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::*;
use crate::owner_only;
use crate::rules::{self, Blob};
use crate::store::{Durability, EditState, PgStore, Store, Tx};
use crate::token;

/// How a bundled backend is set up; `Default` is what the app and the CLI use.
#[derive(Clone, Debug)]
pub struct Options {
    pub clock: Clock,
    pub failpoints: Failpoints,
    /// Largest upload accepted, in bytes.
    pub max_upload: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            clock: Clock::system(),
            failpoints: Failpoints::default(),
            max_upload: 64 << 30,
        }
    }
}

/// Where a bundled backend keeps its rows and its blobs.
#[derive(Clone, Debug)]
pub struct Location {
    /// The data folder: the SQLite database and the blobs unless told otherwise.
    pub data: PathBuf,
    /// `postgres://…`: rows in PostgreSQL instead of the data folder's SQLite file.
    pub database: Option<String>,
    /// `s3://BUCKET/PREFIX` or `file:///PATH`: blobs there instead of the data folder.
    pub blobs: Option<String>,
}

impl Location {
    /// Everything in the data folder `dir`.
    pub fn folder(dir: &Path) -> Self {
        Self {
            data: dir.to_owned(),
            database: None,
            blobs: None,
        }
    }
}

/// The bundled backend, acting as one participant. Cheap to clone; clones share
/// one store.
#[derive(Clone)]
pub struct Bundled {
    shared: Arc<Shared>,
    participant: Participant,
}

struct Shared {
    store: Store,
    blobs: Blobs,
    options: Options,
    /// Woken after every write, for followers of the event ledger.
    changed: Arc<tokio::sync::Notify>,
    /// Writers wait their turn here, asleep, rather than blocked on the store's
    /// lock: only the writer whose turn it is holds a thread, and it runs
    /// every write queued meanwhile (see [`Bundled::write`]). On PostgreSQL
    /// each server's turns run beside the other servers'.
    write_turn: tokio::sync::Semaphore,
    /// Previews made once per (digest, size), beside the blobs.
    previews: crate::previews::PreviewCache,
    queued_writes: std::sync::Mutex<Vec<Box<dyn Queued>>>,
    /// Tokens found good lately, by hash, with when.
    known_tokens: std::sync::Mutex<KnownTokens>,
    /// The SQLite file, which the health check finds still there.
    /// The SQLite file, if the rows are in one.
    database_file: Option<PathBuf>,
    /// How many writes each group commit ran together, for the metrics.
    batch_sizes: prometheus_client::metrics::histogram::Histogram,
    /// Checks of the health check (or the scrape) that gave up waiting and
    /// are still running: the same check is not started again until it
    /// ends, so a hung disk or database does not pile up threads.
    stalled_checks: std::sync::Mutex<std::collections::HashMap<&'static str, StalledCheck>>,
}

/// A bounded check still running after it was given up on.
struct StalledCheck {
    since: std::time::Instant,
    finished: Arc<std::sync::atomic::AtomicBool>,
}

/// How long the health check waits for each thing it checks.
pub const HEALTH_CHECK_LIMIT: Duration = Duration::from_secs(2);

/// The health check's step for the store: the SQLite file is still where it
/// was opened (a server writing into a moved or deleted file would lose it
/// all at its next start), and a cheap read answers.
fn check_store(shared: &Shared) -> Result<()> {
    shared.options.failpoints.hit(failpoint::at::STORE_PROBE)?;
    if let Some(file) = shared.database_file.as_ref().filter(|file| !file.is_file()) {
        return Err(Error::Unavailable(format!(
            "the database file {} is missing: it was moved or deleted while the server runs",
            file.display()
        )));
    }
    shared.store.read(|tx| tx.last_event_seq()).map(drop)
}

/// The health check's step for the blobs: the blob folder can take an upload.
fn check_blobs(shared: &Shared) -> Result<()> {
    match &shared.blobs {
        Blobs::Folder(folder) => folder.check_writable().map_err(Error::Unavailable),
        // Asked over the network, with a time limit of its own: see `health`.
        Blobs::Objects(_) => Ok(()),
    }
}

impl Shared {
    fn stalled_checks(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<&'static str, StalledCheck>> {
        self.stalled_checks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn queued_writes(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Queued>>> {
        self.queued_writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs queued writes in one transaction (durable if any needs it) and
    /// answers each. Writes whose caller has gone are skipped, as if never sent.
    fn run_batch(&self, mut batch: Vec<Box<dyn Queued>>) {
        batch.retain(|write| !write.abandoned());
        if !batch.is_empty() {
            self.batch_sizes.observe(batch.len() as f64);
        }
        let durability = match batch.iter().any(|w| w.durability() == Durability::Full) {
            true => Durability::Full,
            false => Durability::Normal,
        };
        let outcomes = match &mut batch[..] {
            [] => return,
            // Alone, a write is its transaction: no savepoint to pay for.
            [write] => Ok(vec![self
                .store
                .write(durability, |tx| write.run(tx, &self.options))]),
            writes => self.store.write(durability, |tx| {
                writes
                    .iter_mut()
                    .map(|write| tx.savepoint(&mut |tx| write.run(tx, &self.options)))
                    .collect::<Result<Vec<_>>>()
            }),
        };
        match outcomes {
            Ok(outcomes) => {
                for (write, outcome) in batch.into_iter().zip(outcomes) {
                    write.answer(outcome);
                }
            }
            Err(failed) => {
                for write in batch {
                    write.answer(Err(failed.clone()));
                }
            }
        }
    }
}

/// How far a migration is (see [`Bundled::migrate_into`]): blob n of total.
#[derive(Clone, Copy, Debug)]
pub enum MigrationStep {
    BlobCopied(usize, usize),
    BlobKept(usize, usize),
}

/// A write waiting for its batch, its type erased so any write can join.
trait Queued: Send {
    fn durability(&self) -> Durability;
    fn abandoned(&self) -> bool;
    /// Runs the write (perhaps twice: see [`Store::write`]), keeping its value.
    fn run(&mut self, tx: &Tx, options: &Options) -> Result<()>;
    /// Sends the caller its value, or the error that ended its write or batch.
    fn answer(self: Box<Self>, outcome: Result<()>);
}

struct QueuedWrite<T, F> {
    f: F,
    participant: Participant,
    durability: Durability,
    value: Option<T>,
    reply: tokio::sync::oneshot::Sender<Result<T>>,
    blob: Option<Naming<T>>,
}

/// The upload a write would name, and how its value tells whether it did.
struct Naming<T> {
    pending: PendingBlob,
    names_it: fn(&T) -> bool,
}

impl<T, F> Queued for QueuedWrite<T, F>
where
    T: Send,
    F: Fn(&Tx, &Participant, Timestamp, &Failpoints) -> Result<T> + Send,
{
    fn durability(&self) -> Durability {
        self.durability
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    fn run(&mut self, tx: &Tx, options: &Options) -> Result<()> {
        let now = tx.now(&options.clock)?;
        self.value = Some((self.f)(tx, &self.participant, now, &options.failpoints)?);
        Ok(())
    }

    fn answer(self: Box<Self>, outcome: Result<()>) {
        let QueuedWrite {
            value, reply, blob, ..
        } = *self;
        let outcome = outcome.map(|()| value.expect("a value after a good run"));
        // Before the caller hears: then a refused upload's blob is gone by then.
        if let Some(Naming { pending, names_it }) = blob {
            match &outcome {
                Ok(value) if names_it(value) => pending.named(),
                _ => drop(pending),
            }
        }
        let _ = reply.send(outcome);
    }
}

/// An upload's blob, held (see [`BlobStore::hold`]) from before it is named by
/// its digest until the transaction that would name it in a row has ended.
/// Dropped without [`PendingBlob::named`] (that transaction failed or refused,
/// or never ran), it removes the blob unless a committed row names it or
/// another upload holds it; what a crash leaves, the next open sweeps.
struct PendingBlob {
    hold: Option<BlobHold>,
    shared: Arc<Shared>,
}

impl PendingBlob {
    /// A committed row names the blob: only the hold is released.
    fn named(mut self) {
        self.hold.take();
    }
}

impl Drop for PendingBlob {
    fn drop(&mut self) {
        let Some(hold) = self.hold.take() else {
            return;
        };
        let digest = hold.digest().clone();
        drop(hold);
        let shared = &self.shared;
        let removed = shared
            .blobs
            .remove_unnamed(&digest, |d| shared.store.read(|tx| tx.names_blob(d)));
        if let Err(e) = removed {
            tracing::warn!("an unnamed blob stays until the next open: {e}");
        }
    }
}

type KnownTokens = std::collections::HashMap<String, (Participant, std::time::Instant)>;

/// How often a store kept open sweeps lapsed leases.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A running sweeper of lapsed leases (see [`Bundled::spawn_sweeper`]): it
/// stops when dropped, so it lives exactly as long as whoever keeps the store open.
#[must_use = "a sweeper stops when dropped"]
pub struct Sweeper(tokio::task::JoinHandle<()>);

impl Sweeper {
    /// Stops it now, as dropping it does.
    pub fn abort(&self) {
        self.0.abort();
    }

    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How long a token found good is trusted before the store is asked again.
const TOKEN_RECHECK: Duration = Duration::from_secs(1);

impl Bundled {
    /// Opens (creating) the data folder `dir`, acting as the OS login's user.
    pub fn open(dir: &Path) -> Result<Self> {
        Self::open_with(dir, Options::default())
    }

    pub fn open_with(dir: &Path, options: Options) -> Result<Self> {
        Self::open_at(&Location::folder(dir), options)
    }

    /// Opens (creating) the store at `location`.
    pub fn open_at(location: &Location, options: Options) -> Result<Self> {
        let dir = location.data.as_path();
        owner_only::create_dir_all(dir)?;
        owner_only::restrict_if_open_to_all(dir);
        let changed = Arc::new(tokio::sync::Notify::new());
        let (store, database_file) = match &location.database {
            Some(url) => (
                Store::Postgres(PgStore::open(
                    url,
                    options.failpoints.clone(),
                    changed.clone(),
                )?),
                None,
            ),
            None => {
                let database = dir.join("leasedesk.db");
                owner_only::create_file(&database)?;
                let store = Store::open(&database, options.failpoints.clone())?;
                (store, Some(database))
            }
        };
        let (blobs, previews) = Blobs::open(dir, location.blobs.as_deref())?;
        // Blobs of uploads that a killed process never named. Best effort: a
        // failed sweep is tried again at the next open.
        let swept = store
            .read(|tx| tx.blob_digests())
            .and_then(|named| blobs.sweep_unnamed(&named, |d| store.read(|tx| tx.names_blob(d))));
        if let Err(e) = swept {
            tracing::warn!("unnamed blobs stay until the next open: {e}");
        }
        let shared = Shared {
            store,
            blobs,
            options,
            changed,
            write_turn: tokio::sync::Semaphore::new(1),
            previews,
            queued_writes: Default::default(),
            known_tokens: Default::default(),
            database_file,
            batch_sizes: prometheus_client::metrics::histogram::Histogram::new(
                prometheus_client::metrics::histogram::exponential_buckets(1.0, 2.0, 10),
            ),
            stalled_checks: Default::default(),
        };
        Ok(Self {
            shared: Arc::new(shared),
            participant: os_user(),
        })
    }

    /// Whether the store and the blobs can be reached: `Err(reason)` when not.
    /// A sequence of steps, each given at most [`HEALTH_CHECK_LIMIT`].
    pub async fn health(&self) -> std::result::Result<(), String> {
        self.bounded("the database", check_store).await?;
        self.bounded("the blob store", check_blobs).await?;
        self.shared.blobs.health().await
    }

    /// Live leases now, read within [`HEALTH_CHECK_LIMIT`] (for the metrics
    /// scrape); `Err` says why not.
    pub async fn live_lease_count(&self) -> std::result::Result<u64, String> {
        self.bounded("the database", |shared| {
            shared.options.failpoints.hit(failpoint::at::STORE_PROBE)?;
            let clock = &shared.options.clock;
            shared.store.read(|tx| tx.live_lease_count(tx.now(clock)?))
        })
        .await
    }

    /// The sizes of group commits (see [`Bundled::write`]) so far; clones
    /// share the counts.
    pub fn batch_sizes(&self) -> prometheus_client::metrics::histogram::Histogram {
        self.shared.batch_sizes.clone()
    }

    /// Runs `step` (blocking work: a read, a file made) on the blocking pool
    /// and waits at most [`HEALTH_CHECK_LIMIT`] for it. `what` names the thing
    /// checked in the reason; while an earlier step of that name that gave
    /// up is still running, answers at once without starting another.
    async fn bounded<T: Send + 'static>(
        &self,
        what: &'static str,
        step: impl FnOnce(&Shared) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, String> {
        {
            let mut stalled = self.shared.stalled_checks();
            if let Some(check) = stalled.get(what) {
                if !check.finished.load(std::sync::atomic::Ordering::Acquire) {
                    return Err(format!(
                        "{what} has not answered a check begun {} s ago",
                        check.since.elapsed().as_secs()
                    ));
                }
                stalled.remove(what);
            }
        }
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let task = {
            let (shared, finished) = (self.shared.clone(), finished.clone());
            tokio::task::spawn_blocking(move || {
                let outcome = step(&shared);
                finished.store(true, std::sync::atomic::Ordering::Release);
                outcome
            })
        };
        let started = std::time::Instant::now();
        match tokio::time::timeout(HEALTH_CHECK_LIMIT, task).await {
            Ok(Ok(outcome)) => outcome.map_err(|e| format!("{what} cannot be reached: {e}")),
            Ok(Err(e)) => Err(format!("the check of {what} failed: {e}")),
            Err(_) => {
                self.shared.stalled_checks().insert(
                    what,
                    StalledCheck {
                        since: started,
                        finished,
                    },
                );
                Err(format!(
                    "{what} did not answer within {} s",
                    HEALTH_CHECK_LIMIT.as_secs()
                ))
            }
        }
    }

    /// Copies this store (a data folder) into `target` (a team's store, empty)
    /// with every user, token, version, check-out, edit, proposal and event.
    /// Blobs go first, each checked against its digest as it arrives, and any
    /// the target has already are skipped; then every row, in one transaction
    /// of the target's. Interrupted, it can be run again: rows were either all
    /// copied or none, and the blobs copied are kept.
    pub async fn migrate_into(
        &self,
        target: &Bundled,
        mut progress: impl FnMut(MigrationStep),
    ) -> Result<crate::store::copy::RowCounts> {
        let empty = target.shared.clone();
        off_thread(move || crate::store::copy::ensure_empty(&empty.store)).await?;
        let source = self.shared.clone();
        let digests = in_place(move || source.store.read(|tx| tx.blob_digests())).await?;
        let mut digests: Vec<Digest> = digests.into_iter().collect();
        digests.sort();
        let total = digests.len();
        for (n, digest) in digests.into_iter().enumerate() {
            if target.shared.blobs.contains(&digest).await? {
                progress(MigrationStep::BlobKept(n + 1, total));
                continue;
            }
            let reader = self.shared.blobs.open_read(&digest).await.map_err(|e| {
                Error::NotFound(format!(
                    "the data folder's blob {digest} cannot be read: {e}"
                ))
            })?;
            let upload = Upload::stream(reader).with_digest(digest.clone());
            let staged = target.stage(upload).await.map_err(|e| match e {
                Error::DigestMismatch { actual, .. } => Error::Invalid(format!(
                    "the data folder's blob {digest} is damaged (its bytes hash to {actual}): nothing was copied of it"
                )),
                other => other,
            })?;
            let (_, pending) = target.persist(staged).await?;
            // Named once the rows are copied; until then an unnamed blob of
            // an interrupted migration is what an open's sweep removes.
            pending.named();
            self.shared
                .options
                .failpoints
                .hit(failpoint::at::MIGRATE_BLOB)?;
            progress(MigrationStep::BlobCopied(n + 1, total));
        }
        let (source, target) = (self.shared.clone(), target.shared.clone());
        off_thread(move || crate::store::copy::copy_rows(&source.store, &target.store)).await
    }

    /// The same store, acting as `participant`.
    pub fn acting_as(&self, participant: Participant) -> Self {
        Self {
            shared: self.shared.clone(),
            participant,
        }
    }

    pub fn participant(&self) -> &Participant {
        &self.participant
    }

    pub fn clock(&self) -> &Clock {
        &self.shared.options.clock
    }

    /// Registers a participant (admins may break leases and decide any
    /// proposal) and gives it its first token, which is shown only now.
    pub fn add_account(&self, participant: &Participant, admin: bool) -> Result<(Account, String)> {
        if admin && participant.kind() == ParticipantKind::Agent {
            return Err(Error::Invalid(format!(
                "{participant} is an agent: only users can be admins"
            )));
        }
        let account = Account {
            participant: participant.clone(),
            admin,
            created_at: self.clock().now(),
        };
        let new = token::generate()?;
        self.shared.store.write(Durability::Normal, |tx| {
            tx.insert_account(&account)?;
            tx.insert_token(
                &new.id,
                participant,
                &token::hash(&new.token),
                account.created_at,
            )
        })?;
        Ok((account, new.token))
    }

    /// Another token for a known participant.
    pub fn new_token(&self, participant: &Participant) -> Result<String> {
        let new = token::generate()?;
        let now = self.clock().now();
        self.shared.store.write(Durability::Normal, |tx| {
            if tx.account(participant)?.is_none() {
                return Err(Error::NotFound(format!("no participant {participant}")));
            }
            tx.insert_token(&new.id, participant, &token::hash(&new.token), now)
        })?;
        Ok(new.token)
    }

    /// Revokes every token of a participant; returns how many. (A server in
    /// another process trusts a token it checked for up to a second more.)
    pub fn revoke_tokens(&self, participant: &Participant) -> Result<usize> {
        self.shared
            .known_tokens
            .lock()
            .expect("token cache")
            .retain(|_, (p, _)| p != participant);
        let now = self.clock().now();
        self.shared.store.write(Durability::Normal, |tx| {
            if tx.account(participant)?.is_none() {
                return Err(Error::NotFound(format!("no participant {participant}")));
            }
            tx.revoke_tokens(participant, now)
        })
    }

    /// The participant a bearer token names, or `Unauthorized`. A token found
    /// good is remembered for a second (by its hash), so a busy server reads
    /// the store once a second per token, not once a request; a revocation
    /// takes effect within that second.
    pub async fn authenticate(&self, bearer: &str) -> Result<Participant> {
        let hash = token::hash(bearer);
        if let Some((participant, checked)) = self
            .shared
            .known_tokens
            .lock()
            .expect("token cache")
            .get(&hash)
        {
            if checked.elapsed() < TOKEN_RECHECK {
                return Ok(participant.clone());
            }
        }
        self.recheck(bearer).await
    }

    /// Like `authenticate`, but asks the store whatever the cache says: for
    /// what must end as soon as a token is revoked (an event stream).
    pub async fn recheck(&self, bearer: &str) -> Result<Participant> {
        let refused = || Error::Unauthorized("the token is missing, unknown or revoked".into());
        let id = token::id_of(bearer).ok_or_else(refused)?.to_owned();
        let hash = token::hash(bearer);
        let now = std::time::Instant::now();
        let found = self.read(move |tx, _, _| tx.live_token(&id)).await?;
        let mut known = self.shared.known_tokens.lock().expect("token cache");
        match found {
            Some((participant, stored)) if token::matches(bearer, &stored) => {
                known.retain(|_, (_, checked)| now.duration_since(*checked) < TOKEN_RECHECK);
                known.insert(hash, (participant.clone(), now));
                Ok(participant)
            }
            _ => {
                known.remove(&hash);
                Err(refused())
            }
        }
    }

    pub fn accounts(&self) -> Result<Vec<Account>> {
        self.shared.store.read(|tx| tx.accounts())
    }

    /// Records `lease.expired` for every lease that lapsed unrecorded.
    pub fn sweep(&self) -> Result<usize> {
        let clock = self.clock().clone();
        let lapsed = self
            .shared
            .store
            .write(Durability::Normal, |tx| rules::sweep(tx, tx.now(&clock)?))?;
        if lapsed > 0 {
            self.shared.changed.notify_waiters();
        }
        Ok(lapsed)
    }

    /// Sweeps lapsed leases every `every`, so their `lease.expired` appears even
    /// when nobody touches the file. Whoever keeps a store open for long (the
    /// server, the app's bundled session, a follower of events) holds one
    /// while it does: it stops when dropped, and by itself once the store's
    /// last handle is gone, since it holds the store only weakly.
    pub fn spawn_sweeper(&self, every: Duration) -> Sweeper {
        let store = Arc::downgrade(&self.shared);
        let participant = self.participant.clone();
        Sweeper(tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            // After a sleep (a laptop's lid), one sweep, not a burst.
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(shared) = store.upgrade() else {
                    return;
                };
                let backend = Bundled {
                    shared,
                    participant: participant.clone(),
                };
                // A failed sweep is retried at the next tick; operations record lapses too.
                let _ = tokio::task::spawn_blocking(move || {
                    crate::store::may_block(|| backend.sweep())
                })
                .await;
            }
        }))
    }

    /// Runs a write, with `now` given by its transaction (see
    /// [`crate::store::Transaction::now`]). `durability`: see [`Store::write`].
    ///
    /// Group commit: writers queue their work, and whoever gets the write turn
    /// runs everything queued in one transaction, each write in a savepoint of
    /// its own, and answers the others. Under load one commit (one set of WAL
    /// pages, one thread in the store) serves many lease changes; alone, a
    /// write is its own batch.
    async fn write<T: Send + 'static>(
        &self,
        durability: Durability,
        f: impl Fn(&Tx, &Participant, Timestamp, &Failpoints) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.write_naming(durability, None, f).await
    }

    /// [`Bundled::write`], for a write that names an upload's blob when
    /// `names_it` says so of its value; otherwise the blob is removed.
    async fn write_naming<T: Send + 'static>(
        &self,
        durability: Durability,
        blob: Option<Naming<T>>,
        f: impl Fn(&Tx, &Participant, Timestamp, &Failpoints) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        self.shared.queued_writes().push(Box::new(QueuedWrite {
            f,
            participant: self.participant.clone(),
            durability,
            value: None,
            reply,
            blob,
        }));
        let lost = || {
            Err(Error::Internal(
                "the write's batch ended without an answer".into(),
            ))
        };
        tokio::select! {
            biased;
            answer = &mut answer => return answer.unwrap_or_else(|_| lost()),
            turn = self.shared.write_turn.acquire() => {
                let batch = std::mem::take(&mut *self.shared.queued_writes());
                if !batch.is_empty() {
                    let shared = self.shared.clone();
                    in_place(move || {
                        shared.run_batch(batch);
                        Ok(())
                    })
                    .await?;
                    self.shared.changed.notify_waiters();
                }
                drop(turn);
            }
        }
        // Our write was in this batch, or in one that has already answered.
        answer.await.unwrap_or_else(|_| lost())
    }

    /// Resolves after the next write through this store, or on PostgreSQL
    /// through any server (an SQLite file's other processes are not heard:
    /// poll as well).
    pub fn changed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        // Registered now, not when first polled: a change made between a
        // caller's read and its wait still wakes it.
        self.shared.changed.clone().notified_owned()
    }

    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Tx, &Participant, Timestamp) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let this = self.clone();
        in_place(move || {
            let clock = &this.shared.options.clock;
            this.shared
                .store
                .read(|tx| f(tx, &this.participant, tx.now(clock)?))
        })
        .await
    }

    /// Hashes an upload into a temporary blob, checking its declared digest.
    async fn stage(&self, upload: Upload) -> Result<Staged> {
        let options = &self.shared.options;
        self.shared
            .blobs
            .stage(upload, options.max_upload, &options.failpoints)
            .await
    }

    /// Names a staged blob by its digest; rows may refer to it from then on.
    /// The blob is held until the returned pending blob is named or dropped.
    async fn persist(&self, staged: Staged) -> Result<(Blob, PendingBlob)> {
        let blob = Blob::from(&staged);
        let shared = self.shared.clone();
        let pending = match (&shared.blobs, staged) {
            (Blobs::Folder(store), Staged::Folder(staged)) => {
                let store = store.clone();
                off_thread(move || {
                    let pending = PendingBlob {
                        hold: Some(store.hold(&staged.digest)?),
                        shared: shared.clone(),
                    };
                    staged.persist(&store)?;
                    shared.options.failpoints.hit(failpoint::at::BLOB_RENAMED)?;
                    Ok(pending)
                })
                .await?
            }
            // No hold: an object is never removed when its transaction fails.
            (Blobs::Objects(objects), Staged::Object(staged)) => {
                objects.persist(staged).await?;
                shared.options.failpoints.hit(failpoint::at::BLOB_RENAMED)?;
                PendingBlob {
                    hold: None,
                    shared: shared.clone(),
                }
            }
            _ => unreachable!("a blob is staged in the store that names it"),
        };
        Ok((blob, pending))
    }
}

/// Runs a short blocking store transaction. On a multi-threaded runtime it runs
/// right here (the worker's other tasks move to another thread meanwhile),
/// which saves two thread switches per lease change; elsewhere off the thread.
async fn in_place<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        return tokio::task::block_in_place(|| crate::store::may_block(f));
    }
    off_thread(f).await
}

/// Runs long blocking work (copying a file) on tokio's blocking pool, so the
/// caller's task stays responsive (a timeout around it can fire).
async fn off_thread<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    match tokio::task::spawn_blocking(|| crate::store::may_block(f)).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(Error::Internal(format!("task: {e}"))),
    }
}

impl From<&Staged> for Blob {
    fn from(staged: &Staged) -> Self {
        Blob {
            digest: staged.digest().clone(),
            size: staged.size(),
            message: None,
        }
    }
}

/// `user:` and the OS login name, as the bundled backend's default participant.
pub fn os_user() -> Participant {
    let login = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "me".to_owned());
    let name: String = login
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    Participant::user(&name).unwrap_or_else(|_| Participant::user("me").expect("valid name"))
}

#[async_trait]
impl Backend for Bundled {
    async fn me(&self) -> Result<Participant> {
        Ok(self.participant.clone())
    }

    async fn import(&self, path: &RepoPath, upload: Upload) -> Result<Artifact> {
        // A new path meets the strict rules, whichever constructor made it.
        let path: RepoPath = path.as_str().parse()?;
        let message = check_message(upload.message.clone())?;
        let checked = path.clone();
        self.read(move |tx, _, _| rules::import_precheck(tx, &checked))
            .await?;
        let staged = self.stage(upload).await?;
        let (mut blob, pending) = self.persist(staged).await?;
        blob.message = message;
        let named = Some(Naming {
            pending,
            names_it: |_: &Artifact| true,
        });
        self.write_naming(Durability::Full, named, move |tx, me, now, _| {
            rules::import(tx, me, &path, &blob, now)
        })
        .await
    }

    async fn artifacts(&self) -> Result<Vec<Artifact>> {
        self.read(|tx, _, now| {
            Ok(tx
                .artifacts()?
                .into_iter()
                .map(|a| rules::visible(a, now))
                .collect())
        })
        .await
    }

    async fn artifact(&self, id: ArtifactId) -> Result<Artifact> {
        self.read(move |tx, _, now| {
            tx.artifact(id)?
                .map(|a| rules::visible(a, now))
                .ok_or_else(|| Error::NotFound(format!("no artifact {id}")))
        })
        .await
    }

    async fn artifact_by_path(&self, path: &RepoPath) -> Result<Artifact> {
        let path = path.clone();
        self.read(move |tx, _, now| {
            let id = tx
                .artifact_id_by_path(&path)?
                .ok_or_else(|| Error::NotFound(format!("no artifact at {path}")))?;
            let artifact = tx.artifact(id)?.expect("artifact found by path exists");
            Ok(rules::visible(artifact, now))
        })
        .await
    }

    async fn versions(&self, id: ArtifactId) -> Result<Vec<Head>> {
        self.read(move |tx, _, _| {
            if tx.artifact(id)?.is_none() {
                return Err(Error::NotFound(format!("no artifact {id}")));
            }
            Ok(tx.versions(id)?.into_iter().map(|(head, _)| head).collect())
        })
        .await
    }

    async fn content(&self, id: ArtifactId, version: Option<u64>) -> Result<Content> {
        let head = self
            .read(move |tx, _, _| rules::version_head(tx, id, version))
            .await?;
        let reader = self.shared.blobs.open_read(&head.digest).await?;
        Ok(Content { head, reader })
    }

    async fn check_out(&self, id: ArtifactId, request: CheckoutRequest) -> Result<Checkout> {
        self.write(Durability::Normal, move |tx, me, now, failpoints| {
            rules::check_out(tx, me, id, &request, now, failpoints)
        })
        .await?
    }

    async fn checkout(&self, id: CheckoutId) -> Result<Checkout> {
        self.read(move |tx, me, _| rules::checkout(tx, me, id))
            .await
    }

    async fn checkouts(&self, open_only: bool) -> Result<Vec<Checkout>> {
        self.read(move |tx, me, _| tx.checkouts_of(me, open_only))
            .await
    }

    async fn extend(&self, id: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout> {
        self.write(Durability::Normal, move |tx, me, now, _| {
            rules::extend(tx, me, id, ttl_seconds, now)
        })
        .await?
    }

    async fn check_in(&self, id: CheckoutId, upload: Upload) -> Result<Checkout> {
        let message = check_message(upload.message.clone())?;
        // Refuse a stranger or an unknown check-out before reading the upload.
        let (before, head_digest) = self
            .read(move |tx, me, _| rules::checkin_precheck(tx, me, id))
            .await?;
        let staged = self.stage(upload).await?;
        // No new blob for a retry (its first check-in stored the same bytes, or it
        // is refused) nor for the head's bytes, which a committed row keeps.
        // Any check-in that answers names its bytes (a version, a proposal,
        // or the head's own).
        let (mut blob, durability, pending) =
            if before.checkout.state == CheckoutState::Closed || *staged.digest() == head_digest {
                (Blob::from(&staged), Durability::Normal, None)
            } else {
                let (blob, pending) = self.persist(staged).await?;
                let names_it = |_: &Checkout| true;
                (blob, Durability::Full, Some(Naming { pending, names_it }))
            };
        blob.message = message;
        self.write_naming(durability, pending, move |tx, me, now, _| {
            rules::check_in(tx, me, id, &blob, now)
        })
        .await
    }

    async fn cancel(&self, id: CheckoutId) -> Result<Checkout> {
        self.write(Durability::Normal, move |tx, me, now, _| {
            rules::cancel(tx, me, id, now)
        })
        .await
    }

    async fn begin_edit(&self, id: ArtifactId, ttl_seconds: Option<u64>) -> Result<Edit> {
        self.write(Durability::Normal, move |tx, me, now, _| {
            rules::begin_edit(tx, me, id, ttl_seconds, now)
        })
        .await?
    }

    async fn commit_edit(&self, id: EditId, upload: Upload) -> Result<CheckinResult> {
        let message = check_message(upload.message.clone())?;
        let (before, head) = self
            .read(move |tx, me, _| rules::edit_precheck(tx, me, id))
            .await?;
        let staged = self.stage(upload).await?;
        // Versions only grow: if the base is not the head now, the commit is
        // refused, and the head's own bytes are kept by a committed row already.
        let head_is_base =
            head.version == before.edit.base_version && head.digest == before.edit.base_digest;
        let needs_blob =
            before.state == EditState::Open && head_is_base && *staged.digest() != head.digest;
        // Only a commit that answers without a refusal names the bytes.
        let (mut blob, durability, pending) = if needs_blob {
            let (blob, pending) = self.persist(staged).await?;
            let names_it = Result::is_ok;
            (blob, Durability::Full, Some(Naming { pending, names_it }))
        } else {
            (Blob::from(&staged), Durability::Normal, None)
        };
        blob.message = message;
        self.write_naming(durability, pending, move |tx, me, now, _| {
            rules::commit_edit(tx, me, id, &blob, now)
        })
        .await?
    }

    async fn release_edit(&self, id: EditId) -> Result<()> {
        self.write(Durability::Normal, move |tx, me, now, _| {
            rules::release_edit(tx, me, id, now)
        })
        .await
    }

    async fn proposals(&self, filter: ProposalFilter) -> Result<Vec<Proposal>> {
        self.read(move |tx, _, _| tx.proposals(&filter)).await
    }

    async fn proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.read(move |tx, _, _| {
            tx.proposal(id)?
                .ok_or_else(|| Error::NotFound(format!("no proposal {id}")))
        })
        .await
    }

    async fn proposal_content(
        &self,
        id: ProposalId,
    ) -> Result<(Proposal, Pin<Box<dyn AsyncRead + Send>>)> {
        let proposal = self.proposal(id).await?;
        let reader = self.shared.blobs.open_read(&proposal.digest).await?;
        Ok((proposal, reader))
    }

    async fn preview(&self, of: PreviewOf, size: u32) -> Result<Vec<u8>> {
        crate::previews::check_size(size)?;
        let digest = match of {
            PreviewOf::Version { artifact, version } => {
                self.read(move |tx, _, _| rules::version_head(tx, artifact, version))
                    .await?
                    .digest
            }
            PreviewOf::Proposal(id) => self.proposal(id).await?.digest,
        };
        let previews = &self.shared.previews;
        previews
            .get_or_make_bytes(&digest, size, || async {
                match &self.shared.blobs {
                    Blobs::Folder(store) => previews.decode(store.path(&digest), size).await,
                    // The readers want a file: a checked copy, removed after.
                    Blobs::Objects(objects) => {
                        let copy = objects.local_copy(&digest).await?;
                        previews.decode(copy.temp_path().to_owned(), size).await
                    }
                }
            })
            .await
    }

    async fn accept_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.write(Durability::Full, move |tx, me, now, _| {
            rules::accept_proposal(tx, me, id, now)
        })
        .await?
    }

    async fn rebuild_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.write(Durability::Full, move |tx, me, now, _| {
            rules::rebuild_proposal(tx, me, id, now)
        })
        .await
    }

    async fn reject_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.write(Durability::Normal, move |tx, me, now, _| {
            rules::reject_proposal(tx, me, id, now)
        })
        .await
    }

    async fn break_lease(&self, id: ArtifactId, reason: &str) -> Result<Artifact> {
        let reason = reason.to_owned();
        self.write(Durability::Normal, move |tx, me, now, _| {
            rules::break_lease(tx, me, id, &reason, now)
        })
        .await
    }

    async fn rename(&self, id: ArtifactId, to: &RepoPath) -> Result<Artifact> {
        let to: RepoPath = to.as_str().parse()?;
        self.write(Durability::Normal, move |tx, me, now, _| {
            rules::rename(tx, me, id, &to, now)
        })
        .await
    }

    async fn query_events(&self, query: EventQuery) -> Result<EventPage> {
        let query = EventQuery {
            limit: query.limit.clamp(1, MAX_EVENTS_PAGE),
            ..query
        };
        let shared = self.shared.clone();
        let durable = in_place(move || shared.store.durable_events()).await?;
        self.read(move |tx, _, _| {
            let (events, next) = match (query.after, query.before) {
                (Some(_), Some(_)) => {
                    return Err(Error::Invalid(
                        "ask for events after a sequence number or before one, not both".into(),
                    ))
                }
                (after, None) => {
                    let after = after.unwrap_or(0);
                    let mut events = tx.events_after(query.artifact, after, query.limit)?;
                    // Only events a crash cannot undo (see `Store::durable_events`).
                    events.retain(|e| e.seq <= durable);
                    let next = events.last().map_or(after, |e| e.seq);
                    (events, next)
                }
                (None, Some(before)) => {
                    let before = before.min(durable.saturating_add(1));
                    let events = tx.events_before(query.artifact, before, query.limit)?;
                    let next = events.last().map_or(before, |e| e.seq);
                    (events, next)
                }
            };
            Ok(EventPage { events, next })
        })
        .await
    }
}

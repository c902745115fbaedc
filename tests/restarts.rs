//! Event streams through database restarts and crashes: a stream open on a
//! server stays open while its database is away and goes on once it is
//! back, and no reader ever sees an event that a crash can undo. The
//! PostgreSQL tests run on Linux only, beside Debian's PostgreSQL.

use std::time::Duration;

use futures_util::StreamExt;
use leasedesk::model::*;

#[cfg(unix)]
use crate::failover::{ServeProcess, SharedStore};
use crate::harness::*;

/// What a raw SSE connection to `/v1/events/stream` received: each event,
/// and each keep-alive comment (as `None`), as they came.
struct RawStream {
    received: tokio::sync::mpsc::UnboundedReceiver<Option<Event>>,
    _reader: tokio::task::JoinHandle<()>,
}

impl RawStream {
    /// Opens the stream on `url` after `after`, read by a task of its own;
    /// it ends (the channel closes) when the server ends it.
    async fn open(url: &str, token: &str, after: u64) -> Self {
        let response = reqwest::Client::new()
            .get(format!("{url}/v1/events/stream?after={after}"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let (sender, received) = tokio::sync::mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut bytes = response.bytes_stream();
            let mut buffer = Vec::new();
            while let Some(Ok(chunk)) = bytes.next().await {
                buffer.extend_from_slice(&chunk);
                while let Some(data) = leasedesk::remote::next_message_data(&mut buffer) {
                    let event = match data.is_empty() {
                        true => None,
                        false => Some(serde_json::from_str(&data).expect("an event")),
                    };
                    if sender.send(event).is_err() {
                        return;
                    }
                }
            }
        });
        Self {
            received,
            _reader: reader,
        }
    }

    /// The next event within `within`, skipping keep-alives; `None` if the
    /// stream ended.
    async fn next_event(&mut self, within: Duration) -> Option<Event> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.received.recv()).await {
                Ok(Some(Some(event))) => return Some(event),
                Ok(Some(None)) => continue,
                Ok(None) => return None,
                Err(_) => panic!("no event within {within:?}"),
            }
        }
    }
}

/// A number in `0..n`, from a random UUID (the tests have no rand crate).
fn random_below(n: u64) -> u64 {
    (uuid::Uuid::new_v4().as_u128() % n as u128) as u64
}

/// SQLite: lease changes commit without an fsync, so a power loss may undo
/// them. A reader is given one only once the log that holds it is synced:
/// while the log cannot be synced, a check-out's events are withheld, and a
/// check-in (whose commit syncs the log) makes them durable and given.
#[tokio::test]
async fn a_reader_is_given_no_lease_change_before_its_log_is_synced() {
    use leasedesk::failpoint::{at, Action, Failpoints};
    let f = fixture_with(Failpoints::new([(at::WAL_SYNC, Action::Error)]));
    let a = f.import("a.psd", b"v1").await;
    let imported = f.last_seq().await;
    assert!(
        imported > 0,
        "an import commits durably, so its events are given"
    );
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let kinds = f.kinds_after(imported).await;
    assert!(
        kinds.is_empty(),
        "the check-out's events wait for a sync: {kinds:?}"
    );
    f.alice.check_in(c.id, bytes(b"v2")).await.unwrap();
    let kinds = f.kinds_after(imported).await;
    assert!(
        kinds.starts_with(&["lease.acquired".to_owned(), "checkout.opened".to_owned()])
            && kinds.contains(&"version.committed".to_owned()),
        "given once a durable commit synced the log: {kinds:?}"
    );
}

/// SQLite: a server killed (SIGKILL) three times while clients work, and
/// started again on its data folder: a follower that opens its stream again
/// after the last event it got ends with the ledger, event for event.
/// Unix only: under Wine this test hung after a kill, with no server left
/// running (not yet understood; docs/WINDOWS.md).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_of_a_server_killed_three_times_sees_only_the_ledger() {
    let store = SharedStore::new();
    let token = store.account("user:alice");
    let mut server = ServeProcess::start(&store, "");
    let setup = server.client(&token);
    let a = setup.import(&path("a.psd"), bytes(b"x")).await.unwrap();
    let mut seen: Vec<(u64, uuid::Uuid)> = Vec::new();
    for _ in 0..3 {
        let mut follower =
            RawStream::open(&server.url, &token, seen.last().map_or(0, |e| e.0)).await;
        let clients: Vec<_> = (0..4)
            .map(|_| {
                let backend = server.client(&token);
                tokio::spawn(async move {
                    // Until the server is killed under them.
                    while let Ok(edit) = backend.begin_edit(a.id, Some(30)).await {
                        let _ = backend.release_edit(edit.id).await;
                    }
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300 + random_below(500))).await;
        server.kill();
        for client in clients {
            client.await.unwrap();
        }
        // What the stream delivered before the kill.
        loop {
            match tokio::time::timeout(Duration::from_millis(200), follower.received.recv()).await {
                Ok(Some(Some(event))) => seen.push((event.seq, event.id)),
                Ok(Some(None)) => continue,
                _ => break, // it ended with the server
            }
        }
        server = ServeProcess::start(&store, "");
    }
    let ledger: Vec<(u64, uuid::Uuid)> = all_events(server.client(&token).as_ref())
        .await
        .into_iter()
        .map(|e| (e.seq, e.id))
        .collect();
    assert!(ledger.len() > 20, "the clients got work done");
    assert!(
        ledger.starts_with(&seen),
        "the follower saw {} events, each as the ledger has it",
        seen.len()
    );
}

/// The team server: a database restarted or crashed under it.
#[cfg(target_os = "linux")]
mod postgres {
    use std::time::Instant;

    use leasedesk::Error;

    use super::*;
    use crate::failover::follow_events;

    /// A PostgreSQL cluster of the test's own (to stop and crash), a team
    /// store on it, and alice's token.
    fn own_cluster() -> (PgCluster, SharedStore, String) {
        let cluster = own_pg_cluster();
        let team = SharedStore::on_database(cluster.database());
        let token = team.account("user:alice");
        (cluster, team, token)
    }

    /// How a test takes the database away.
    #[derive(Clone, Copy, Debug)]
    enum Outage {
        /// `pg_ctl stop -m fast`: every connection ended, a clean shutdown.
        Stop,
        /// `pg_ctl stop -m immediate`: a crash, recovered at the next start.
        Crash,
    }

    /// Imports `name` through `backend` once the database answers again.
    async fn import_when_back(backend: &dyn leasedesk::Backend, name: &str) -> Artifact {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match backend.import(&path(name), bytes(name.as_bytes())).await {
                Ok(artifact) => return artifact,
                Err(Error::Unavailable(_)) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await
                }
                Err(e) => panic!("the import once the database is back: {e}"),
            }
        }
    }

    /// A stream open across an outage of its database stays open, and delivers
    /// what is written once the database is back within 2 s, through the server
    /// it is open on and through another.
    async fn a_stream_lives_through(outage: Outage) {
        let (cluster, team, token) = own_cluster();
        let servers = [
            ServeProcess::start(&team, ""),
            ServeProcess::start(&team, ""),
        ];
        let alice = servers[0].client(&token);
        let before = alice
            .import(&path("before.psd"), bytes(b"x"))
            .await
            .unwrap();
        let mut streams = [
            RawStream::open(&servers[0].url, &token, 0).await,
            RawStream::open(&servers[1].url, &token, 0).await,
        ];
        for stream in &mut streams {
            let first = stream.next_event(Duration::from_secs(5)).await.unwrap();
            assert_eq!(first.artifact_id, Some(before.id));
        }

        match outage {
            Outage::Stop => cluster.stop(),
            Outage::Crash => cluster.crash(),
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        cluster.resume();

        let after = import_when_back(alice.as_ref(), "after.psd").await;
        let answered = Instant::now();
        for (n, stream) in streams.iter_mut().enumerate() {
            let event = stream
                .next_event(Duration::from_secs(2))
                .await
                .unwrap_or_else(|| panic!("server {n}'s stream ended ({outage:?})"));
            assert_eq!(
                event.artifact_id,
                Some(after.id),
                "server {n}'s stream: the import after the restart ({outage:?}), not {event:?}"
            );
            assert!(answered.elapsed() < Duration::from_secs(2));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_lives_through_a_database_stopped_and_started_again() {
        a_stream_lives_through(Outage::Stop).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_lives_through_a_database_crash() {
        a_stream_lives_through(Outage::Crash).await;
    }

    /// Eight clients change leases through two servers while PostgreSQL is
    /// killed (`-m immediate`) five times at random moments. A follower on each
    /// server ends with the ledger itself, event for event: it never saw an
    /// event the crash undid (whose number the ledger then gave to another).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn followers_never_see_what_a_database_crash_undoes() {
        const CLIENTS: usize = 8;
        const FILES: usize = 4;
        let (cluster, team, token) = own_cluster();
        let servers = [
            ServeProcess::start(&team, ""),
            ServeProcess::start(&team, ""),
        ];
        let setup = servers[0].client(&token);
        let mut files = Vec::new();
        for n in 0..FILES {
            files.push(
                setup
                    .import(&path(&format!("f{n}.psd")), bytes(&[n as u8]))
                    .await
                    .unwrap()
                    .id,
            );
        }
        let mut followers = [
            RawStream::open(&servers[0].url, &token, 0).await,
            RawStream::open(&servers[1].url, &token, 0).await,
        ];

        let working = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        // A reader of pages (`GET /v1/events`) beside the streams.
        let poller = {
            let (backend, working) = (servers[1].client(&token), working.clone());
            tokio::spawn(async move {
                let mut seen: Vec<(u64, uuid::Uuid)> = Vec::new();
                let mut last_look = false;
                while !last_look {
                    last_look = !working.load(std::sync::atomic::Ordering::Relaxed);
                    let after = seen.last().map_or(0, |(seq, _)| *seq);
                    match backend.events(after, 1000).await {
                        Ok(page) => seen.extend(page.events.into_iter().map(|e| (e.seq, e.id))),
                        Err(Error::Unavailable(_)) => last_look = false,
                        Err(e) => panic!("a page of events: {e}"),
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                seen
            })
        };
        let edits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let clients: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let backend = servers[n % 2].client(&token);
                let (working, files, edits) = (working.clone(), files.clone(), edits.clone());
                tokio::spawn(async move {
                    while working.load(std::sync::atomic::Ordering::Relaxed) {
                        let file = files[random_below(FILES as u64) as usize];
                        // Refusals and outages are expected; the ledger says what
                        // happened. Short leases: a crash may undo a release.
                        match backend.begin_edit(file, Some(2)).await {
                            Ok(edit) => {
                                edits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                let _ = backend.release_edit(edit.id).await;
                            }
                            Err(Error::Unavailable(_)) => {
                                tokio::time::sleep(Duration::from_millis(50)).await
                            }
                            Err(_) => {}
                        }
                    }
                })
            })
            .collect();
        // Each crash comes once the clients are back at work (twenty edits
        // since the last), at a random moment after.
        let edits_made = || edits.load(std::sync::atomic::Ordering::Relaxed);
        for _ in 0..5 {
            let (since, deadline) = (edits_made(), Instant::now() + Duration::from_secs(60));
            while edits_made() < since + 20 {
                assert!(
                    Instant::now() < deadline,
                    "the clients work again after a restart"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(Duration::from_millis(random_below(400))).await;
            cluster.crash();
            cluster.resume();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        working.store(false, std::sync::atomic::Ordering::Relaxed);
        for client in clients {
            client.await.unwrap();
        }

        let ledger: Vec<(u64, uuid::Uuid)> = all_events(setup.as_ref())
            .await
            .into_iter()
            .map(|e| (e.seq, e.id))
            .collect();
        let last = ledger.last().unwrap().0;
        let paged = poller.await.unwrap();
        assert!(
            ledger.starts_with(&paged),
            "the pages read ({} events) are the ledger's beginning",
            paged.len()
        );
        for (n, follower) in followers.iter_mut().enumerate() {
            let mut seen = Vec::new();
            while seen.last().is_none_or(|(seq, _)| *seq < last) {
                let event = follower
                    .next_event(Duration::from_secs(10))
                    .await
                    .unwrap_or_else(|| panic!("follower {n}'s stream ended"));
                seen.push((event.seq, event.id));
            }
            if seen != ledger {
                let differ = seen.iter().zip(&ledger).position(|(a, b)| a != b);
                panic!(
                    "follower {n} saw {} events, the ledger has {}; they first differ at {differ:?}",
                    seen.len(),
                    ledger.len()
                );
            }
        }
    }

    /// `leasedesk events --follow` on a server goes on through its database
    /// stopping and the server itself being killed and started again: it says
    /// it is reconnecting, prints every event once, in order, and exits only
    /// when asked.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_follow_goes_on_through_a_restart_of_the_database_and_the_server() {
        let (cluster, team, token) = own_cluster();
        let address = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .to_string();
        let mut server = ServeProcess::start_on(&team, &address, "");
        let alice = server.client(&token);
        alice.import(&path("a.psd"), bytes(b"a")).await.unwrap();

        let (mut follow, printed, said) = follow_events(&server.url, &token);
        let mut seqs = Vec::new();
        let mut read_until = |last: u64| {
            while seqs.last().is_none_or(|seq| *seq < last) {
                let line = printed
                    .recv_timeout(Duration::from_secs(10))
                    .expect("the follower prints the next event");
                let event: Event = serde_json::from_str(&line).expect("an event as JSON");
                seqs.push(event.seq);
            }
        };
        read_until(all_events(alice.as_ref()).await.last().unwrap().seq);

        cluster.stop();
        tokio::time::sleep(Duration::from_secs(2)).await;
        server.kill();
        let reconnecting = said
            .recv_timeout(Duration::from_secs(10))
            .expect("the follower says why it waits");
        assert!(reconnecting.contains("reconnecting…"), "{reconnecting}");
        tokio::time::sleep(Duration::from_secs(2)).await;
        cluster.resume();
        let server = ServeProcess::start_on(&team, &address, "");
        let alice = server.client(&token);
        alice.import(&path("b.psd"), bytes(b"b")).await.unwrap();
        let ledger: Vec<u64> = all_events(alice.as_ref())
            .await
            .iter()
            .map(|e| e.seq)
            .collect();
        read_until(*ledger.last().unwrap());
        assert_eq!(seqs, ledger, "every event printed once, in order");
        assert!(
            follow.try_wait().unwrap().is_none(),
            "the follower is still running"
        );
        follow.kill().unwrap();
        follow.wait().unwrap();
    }
}

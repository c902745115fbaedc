//! Several `leasedesk serve` processes on one PostgreSQL database act as one
//! server: the rules hold across them, a lapse is recorded once, and an event
//! stream on one hears what another wrote.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use leasedesk::model::*;
use leasedesk::{Backend, Error, Remote, Upload};

use crate::failover::{ServeProcess, SharedStore};
use crate::harness::*;
use crate::races::check_history;

mod group_commit;
mod streams;

/// `N` servers on `team`'s store.
fn servers_on<const N: usize>(team: &SharedStore) -> [ServeProcess; N] {
    std::array::from_fn(|_| ServeProcess::start(team, ""))
}

type Client = Arc<dyn Backend>;

/// Two servers on `team`'s store, and a client of each with `token`.
fn clients_of_two_servers(team: &SharedStore, token: &str) -> ([ServeProcess; 2], Client, Client) {
    let servers: [ServeProcess; 2] = servers_on(team);
    let (one, two) = (servers[0].client(token), servers[1].client(token));
    (servers, one, two)
}

/// Every event of the ledger is numbered 1, 2, 3...: none skipped, none twice.
pub(crate) async fn assert_dense(backend: &dyn Backend) -> usize {
    let seqs: Vec<u64> = all_events(backend).await.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "event numbers are dense and in order"
    );
    seqs.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_clients_split_over_two_servers_keep_every_rule() {
    const CYCLES: usize = 160;
    let team = SharedStore::postgres();
    let tokens: Vec<String> = (0..16)
        .map(|i| team.account(&format!("user:c{i}")))
        .collect();
    let servers: [ServeProcess; 2] = servers_on(&team);
    let first = servers[0].client(&tokens[0]);
    let a = first.import(&path("a.psd"), bytes(b"v1")).await.unwrap();
    let cycles = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let me = servers[i % 2].client(token);
        let cycles = cycles.clone();
        tasks.push(tokio::spawn(async move {
            let mut outcomes = [0usize; 3]; // committed, unchanged, proposal
            let mut turn = 0usize;
            while cycles.load(Ordering::SeqCst) < CYCLES {
                match me.check_out(a.id, for_seconds(1)).await {
                    Ok(c) => {
                        turn += 1;
                        cycles.fetch_add(1, Ordering::SeqCst);
                        // Now and then the lease lapses before the check-in,
                        // so others take the file and the check-in is stale.
                        if turn.is_multiple_of(12) {
                            tokio::time::sleep(Duration::from_millis(1100)).await;
                        }
                        let content = format!("c{i} {}", c.id);
                        let done = me.check_in(c.id, bytes(content.as_bytes())).await.unwrap();
                        count_outcome(&mut outcomes, &done.result);
                    }
                    Err(Error::ArtifactBusy { .. }) => {
                        tokio::time::sleep(Duration::from_millis(2)).await
                    }
                    Err(e) => panic!("client {i}: {e}"),
                }
            }
            outcomes
        }));
    }
    let [committed, _, proposals] = race_outcomes(tasks).await;
    // Read through the other server: both see one ledger.
    let other = servers[1].client(&tokens[1]);
    assert_eq!(check_history(other.as_ref(), a.id).await, committed);
    assert_dense(other.as_ref()).await;
    // Each write reads its time as it begins, before it waits for the file:
    // the one that waited longest runs again, so times still follow commits.
    let events: Vec<Event> = all_events(other.as_ref())
        .await
        .into_iter()
        .filter(|e| e.artifact_id == Some(a.id))
        .collect();
    for pair in events.windows(2) {
        assert!(
            pair[0].at <= pair[1].at,
            "times on one file follow its commits: seq {} at {}, then seq {} at {}",
            pair[0].seq,
            pair[0].at,
            pair[1].seq,
            pair[1].at
        );
    }
    let kept = proposals_of(&*other, a.id, None).await;
    assert_eq!(kept.len(), proposals, "every stale check-in is a proposal");
}

/// Of two writes racing for one name, exactly one took it, and the other
/// was told it is taken.
fn one_took_the_name<A: std::fmt::Debug, B: std::fmt::Debug>(
    round: usize,
    first: &leasedesk::Result<A>,
    second: &leasedesk::Result<B>,
) {
    let refused = match (first, second) {
        (Ok(_), Err(e)) | (Err(e), Ok(_)) => e,
        _ => panic!("round {round}: exactly one takes the name: {first:?}, {second:?}"),
    };
    assert!(
        matches!(refused, Error::Exists(_)),
        "round {round}: the other is told the name is taken: {refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paths_that_collide_on_a_computer_imported_through_two_servers_at_once_leave_one() {
    let team = SharedStore::postgres();
    let (_servers, one, two) = clients_of_two_servers(&team, &team.account("user:alice"));
    for round in 0..12 {
        // The same file on Windows and macOS, which do not tell case apart.
        let (upper, lower) = (
            path(&format!("r{round}/Hero.psd")),
            path(&format!("r{round}/hero.psd")),
        );
        let (first, second) = tokio::join!(
            one.import(&upper, bytes(b"from one")),
            two.import(&lower, bytes(b"from two"))
        );
        one_took_the_name(round, &first, &second);
    }
    let listed = one.artifacts().await.unwrap();
    assert_eq!(listed.len(), 12, "one file a round: {listed:?}");
}

/// A rename on one server and an import on the other race for paths that
/// collide on a computer: exactly one takes the name each time, the other
/// is told it is taken, and no write fails on the way (a deadlock between
/// the two would be run again, not reported).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rename_and_an_import_racing_for_one_name_through_two_servers_leave_one() {
    let team = SharedStore::postgres();
    let (_servers, one, two) = clients_of_two_servers(&team, &team.admin("user:admin"));
    for round in 0..12 {
        let moved = one
            .import(&path(&format!("r{round}/draft.psd")), bytes(b"draft"))
            .await
            .unwrap();
        let (upper, lower) = (
            path(&format!("r{round}/Hero.psd")),
            path(&format!("r{round}/hero.psd")),
        );
        let (renamed, imported) = tokio::join!(
            one.rename(moved.id, &upper),
            two.import(&lower, bytes(b"new"))
        );
        one_took_the_name(round, &renamed, &imported);
        let mut paths = listed_paths(one.as_ref()).await;
        paths.retain(|p| p.starts_with(&format!("r{round}/")));
        paths.sort();
        let expected = match renamed.is_ok() {
            true => vec![format!("r{round}/Hero.psd")],
            false => vec![format!("r{round}/draft.psd"), format!("r{round}/hero.psd")],
        };
        assert_eq!(paths, expected, "round {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapse_is_recorded_once_while_every_server_sweeps() {
    let team = SharedStore::postgres();
    let token = team.account("user:alice");
    let servers: [ServeProcess; 3] = servers_on(&team);
    let alice = servers[0].client(&token);
    let mut ids = Vec::new();
    for n in 0..12 {
        let artifact = alice
            .import(&path(&format!("f{n}.psd")), bytes(&[n]))
            .await
            .unwrap();
        alice.check_out(artifact.id, for_seconds(1)).await.unwrap();
        ids.push(artifact.id);
    }
    // Each server sweeps every second; nobody touches the files.
    let deadline = Instant::now() + Duration::from_secs(10);
    let lapses = loop {
        let lapses: Vec<Event> = all_events(alice.as_ref())
            .await
            .into_iter()
            .filter(|e| e.kind == "lease.expired")
            .collect();
        if lapses.len() >= ids.len() || Instant::now() > deadline {
            break lapses;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Another round of sweeps must find nothing left to record.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let again = all_events(alice.as_ref())
        .await
        .into_iter()
        .filter(|e| e.kind == "lease.expired")
        .count();
    assert_eq!(again, lapses.len(), "no lapse is recorded twice");
    let mut lapsed: Vec<ArtifactId> = lapses.iter().filter_map(|e| e.artifact_id).collect();
    lapsed.sort();
    ids.sort();
    assert_eq!(lapsed, ids, "each lapse recorded exactly once");
    for id in &ids {
        assert!(alice.artifact(*id).await.unwrap().lease.is_none());
    }
    assert_dense(alice.as_ref()).await;
}

/// PostgreSQL stops while a check-in is being sent: the check-in is a clear
/// error naming the database, health says why, nothing is committed and the
/// check-out stays open; once the database is back, the same check-in lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_stopped_mid_checkin_is_a_clear_error_and_the_server_recovers() {
    let cluster = own_pg_cluster();
    let team = SharedStore::on_database(cluster.database());
    let token = team.account("user:alice");
    let server = ServeProcess::start(&team, "");
    let alice = server.client(&token);
    let a = alice.import(&path("a.psd"), bytes(b"v1")).await.unwrap();
    let c = alice.check_out(a.id, checkout_request()).await.unwrap();

    let content = vec![7u8; 4 << 20];
    let (mut sender, body) = tokio::io::duplex(64 << 10);
    let (first_half, second_half) = content.split_at(content.len() / 2);
    let (first_half, second_half) = (first_half.to_vec(), second_half.to_vec());
    let (stopped, wait_for_stop) = tokio::sync::oneshot::channel::<()>();
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        sender.write_all(&first_half).await.unwrap();
        wait_for_stop.await.unwrap();
        sender.write_all(&second_half).await.unwrap();
    });
    let checkin = {
        let alice = alice.clone();
        tokio::spawn(async move { alice.check_in(c.id, Upload::stream(body)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.stop();
    stopped.send(()).unwrap();
    writer.await.unwrap();
    let refused = checkin.await.unwrap();
    match &refused {
        Err(Error::Unavailable(message)) => assert!(
            message.contains(team.database.as_deref().unwrap()),
            "names the database: {message}"
        ),
        other => panic!("a clear error, not {other:?}"),
    }
    let health = reqwest::get(format!("{}/v1/health", server.url))
        .await
        .unwrap();
    assert_eq!(health.status(), 503);
    let reason: serde_json::Value = health.json().await.unwrap();
    assert!(
        reason["reason"].as_str().unwrap().contains("database"),
        "{reason}"
    );

    cluster.resume();
    let deadline = Instant::now() + Duration::from_secs(15);
    let done = loop {
        match alice
            .check_in(c.id, Upload::stream(std::io::Cursor::new(content.clone())))
            .await
        {
            Ok(done) => break done,
            Err(Error::Unavailable(_)) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(e) => panic!("after the database is back: {e}"),
        }
    };
    assert_committed(&done.result, 2);
    let versions: Vec<u64> = alice
        .versions(a.id)
        .await
        .unwrap()
        .iter()
        .map(|h| h.version)
        .collect();
    assert_eq!(versions, [2, 1], "one version committed, once");
    assert_dense(alice.as_ref()).await;
}

/// A token revoked through one server (or the CLI on the database) is refused
/// by every other within the second a server trusts a token it checked (with
/// a second of slack for a loaded machine), and an event stream open on
/// another server ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_anywhere_is_refused_by_every_server_within_a_second() {
    let team = SharedStore::postgres();
    let token = team.account("user:alice");
    let [a, b] = servers_on(&team);
    let on_b = b.client(&token);
    on_b.me().await.unwrap();
    let follower = Remote::new(&b.url, &token).unwrap();
    let mut stream = Box::pin(follower.follow_events(0).await.unwrap());
    a.client(&token).me().await.unwrap();
    let out = team
        .command()
        .args(["user", "revoke", "alice"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let revoked = Instant::now();
    loop {
        match on_b.me().await {
            Err(Error::Unauthorized(_)) => break,
            Ok(_) => assert!(
                revoked.elapsed() < Duration::from_secs(2),
                "server b still took the token {:?} after its revocation",
                revoked.elapsed()
            ),
            Err(e) => panic!("{e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ended = tokio::time::timeout(Duration::from_secs(3), async {
        while let Some(event) = stream.next().await {
            event.ok();
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the stream on server b ends once its token is revoked"
    );
}

/// One lease per artifact is the database's rule, not only a check before an
/// insert: a second lease row for a held artifact is refused by PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_itself_refuses_a_second_lease_on_an_artifact() {
    let f = postgres_fixture().await;
    let a = f.import("a.psd", b"v1").await;
    f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let refused = f.try_sql(&format!(
        "INSERT INTO leases (artifact_id, holder, participant, kind, acquired_at, expires_at)
         VALUES ('{}', 'checkout:x:user:bob', 'user:bob', 'checkout', 0, 9999999999999)",
        a.id
    ));
    assert!(
        matches!(&refused, Err(e) if e.contains("duplicate key")),
        "{refused:?}"
    );
    let lease = f.artifact(a.id).await.lease.unwrap();
    assert_eq!(lease.participant.as_str(), "user:alice");
}

/// `status` on a team's database names it, never with its password.
#[test]
fn status_on_a_database_names_it_without_its_password() {
    let url = postgres_database();
    // The test cluster trusts local connections: the password is ignored.
    let with_password = url.replacen("://leasedesk@", "://leasedesk:hunter2@", 1);
    assert_ne!(url, with_password);
    let team = SharedStore::on_database(with_password);
    team.account("user:alice");
    let status = |format: &[&str]| {
        let out = team
            .command()
            .args(["--as", "user:alice"])
            .args(format)
            .arg("status")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(status(&[]).trim(), format!("database {url} as user:alice"));
    let json: serde_json::Value = serde_json::from_str(&status(&["--json"])).unwrap();
    assert_eq!(json["database"].as_str(), Some(url.as_str()));
    assert!(!status(&["--json"]).contains("hunter2"));
}

/// A database that does not answer is a clear error within seconds, naming it.
#[test]
fn an_unreachable_database_is_a_clear_error_within_seconds() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port(); // free once the listener drops: nobody answers there
    let dir = tempfile::tempdir().unwrap();
    let database = format!("postgres://leasedesk:secret@127.0.0.1:{port}/studio");
    let started = Instant::now();
    let out = crate::harness::leasedesk()
        .arg("--database")
        .arg(&database)
        .arg("--data")
        .arg(dir.path())
        .arg("ls")
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(
        stderr.contains(&format!("postgres://leasedesk@127.0.0.1:{port}/studio")),
        "names the database: {stderr}"
    );
    assert!(!stderr.contains("secret"), "never the password: {stderr}");
}

/// Twelve authors on two servers comment at once, mentioning bob, on three
/// files, while bob follows his inbox with `after`: every thread is
/// numbered once per file, every comment is kept in its thread, and bob's
/// follower, which never reads an item twice, ends with every mention, in
/// one order of numbers: an item that commits later never takes a number
/// below one already read.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mentions_through_two_servers_reach_an_inbox_follower_once_each_in_order() {
    const AUTHORS: usize = 12;
    const ROUNDS: usize = 8;
    let team = SharedStore::postgres();
    let bob_token = team.account("user:bob");
    let tokens: Vec<String> = (0..AUTHORS)
        .map(|i| team.account(&format!("user:c{i}")))
        .collect();
    let servers: [ServeProcess; 2] = servers_on(&team);
    let first = servers[0].client(&tokens[0]);
    let mut files = Vec::new();
    for name in ["a.psd", "b.psd", "c.psd"] {
        files.push(first.import(&path(name), bytes(b"v1")).await.unwrap().id);
    }
    let bob = servers[1].client(&bob_token);
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let follower = {
        let (bob, done) = (bob.clone(), done.clone());
        tokio::spawn(async move {
            let (mut after, mut read) = (0, Vec::new());
            loop {
                let finished = done.load(Ordering::SeqCst);
                let query = InboxQuery {
                    after: Some(after),
                    limit: Some(7),
                    ..InboxQuery::default()
                };
                let page = bob.inbox(query).await.unwrap();
                read.extend(page.items.iter().map(|i| i.seq));
                after = page.next;
                if finished && page.items.is_empty() {
                    return read;
                }
            }
        })
    };
    let mut tasks = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let me = servers[i % 2].client(token);
        let files = files.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                let file = files[(i + round) % files.len()];
                let new = NewThread {
                    version: Some(1),
                    body: format!("@bob round {round} from c{i}"),
                    ..NewThread::default()
                };
                let thread = me.open_thread(file, new).await.unwrap();
                me.comment(thread.id, "@bob and once more").await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    done.store(true, Ordering::SeqCst);
    let read = follower.await.unwrap();
    let mentions = AUTHORS * ROUNDS * 2;
    assert_eq!(read.len(), mentions, "every mention read once");
    assert!(
        read.windows(2).all(|w| w[0] < w[1]),
        "in one order: {read:?}"
    );
    let mut threads = 0;
    for file in files {
        let all = bob.threads(file, ThreadQuery::default()).await.unwrap();
        let numbers: Vec<u64> = all.iter().map(|t| t.number).collect();
        assert_eq!(numbers, (1..=all.len() as u64).collect::<Vec<_>>());
        assert!(all.iter().all(|t| t.comments.len() == 2));
        threads += all.len();
    }
    assert_eq!(threads, AUTHORS * ROUNDS);
    assert_eq!(
        bob.inbox(InboxQuery::default()).await.unwrap().unread,
        mentions as u64
    );
}

//! Many writers race on one artifact; a checker over the recorded history
//! proves that the rules held.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use std::time::Duration;

use leasedesk::clock::Clock;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Error, Options};

use crate::harness::*;

const ROUNDS: usize = 500;

/// Rounds of the two-process race: fewer under Wine, where each of its
/// processes takes a fifth of a second to start.
const PROCESS_ROUNDS: usize = if cfg!(windows) { 100 } else { ROUNDS };

/// Checks a whole history: two leases were never live at once; every version
/// was committed by the participant holding the live lease; every committed
/// version's base was the previous head (and a check-out's direct commit was
/// made on the version it checked out); versions have no gaps; a lapse is
/// recorded only after the expiry; sequence numbers strictly increase.
/// Returns how many versions were committed after the first.
pub async fn check_history(backend: &dyn Backend, artifact: ArtifactId) -> usize {
    let events = all_events(backend).await;
    for pair in events.windows(2) {
        assert!(
            pair[0].seq < pair[1].seq,
            "sequence numbers strictly increase: {} then {}",
            pair[0].seq,
            pair[1].seq
        );
    }

    struct Live {
        holder: String,
        participant: Option<Participant>,
        expires_at: Timestamp,
    }
    let expiry =
        |e: &Event| -> Timestamp { e.data["expires_at"].as_str().unwrap().parse().unwrap() };
    let mut live: Option<Live> = None;
    let mut head = 0u64;
    let mut checked_out_version: HashMap<String, u64> = HashMap::new();
    for e in events.iter().filter(|e| e.artifact_id == Some(artifact)) {
        let holder = e.holder.clone().unwrap_or_default();
        match e.kind.as_str() {
            "lease.acquired" => {
                if let Some(other) = &live {
                    panic!(
                        "seq {}: {holder} acquired while {} was live until {}",
                        e.seq, other.holder, other.expires_at
                    );
                }
                live = Some(Live {
                    holder,
                    participant: e.participant.clone(),
                    expires_at: expiry(e),
                });
            }
            "lease.renewed" => {
                let current = live.as_mut().expect("renewed with no lease");
                assert_eq!(
                    current.holder, holder,
                    "seq {}: renewed by a non-holder",
                    e.seq
                );
                assert!(
                    current.expires_at > e.at,
                    "seq {}: a lapsed lease was renewed, not taken again",
                    e.seq
                );
                current.expires_at = expiry(e);
            }
            "lease.released" | "lease.expired" | "lease.broken" => {
                assert_eq!(
                    live.as_ref().map(|l| &l.holder),
                    Some(&holder),
                    "seq {}: {} by a non-holder",
                    e.seq,
                    e.kind
                );
                if e.kind == "lease.expired" {
                    let expired_at: Timestamp =
                        e.data["expired_at"].as_str().unwrap().parse().unwrap();
                    assert!(
                        expired_at <= e.at,
                        "seq {}: recorded as lapsed before its expiry",
                        e.seq
                    );
                }
                live = None;
            }
            "version.committed" => {
                let version = e.data["version"].as_u64().unwrap();
                assert_eq!(version, head + 1, "seq {}: versions have no gaps", e.seq);
                if version > 1 {
                    assert_eq!(
                        e.data["base_version"].as_u64(),
                        Some(head),
                        "seq {}: base is the previous head",
                        e.seq
                    );
                    let lease = live
                        .as_ref()
                        .unwrap_or_else(|| panic!("seq {}: committed with no lease", e.seq));
                    assert_eq!(
                        lease.participant, e.participant,
                        "seq {}: committed by the lease's holder",
                        e.seq
                    );
                    assert!(
                        lease.expires_at > e.at,
                        "seq {}: committed under a live lease",
                        e.seq
                    );
                }
                head = version;
            }
            "checkout.opened" => {
                checked_out_version.insert(holder, e.data["version"].as_u64().unwrap());
            }
            "checkout.closed" if e.data["result"]["outcome"] == "committed" => {
                let committed = e.data["result"]["version"].as_u64().unwrap();
                assert_eq!(
                    Some(committed - 1),
                    checked_out_version.get(&holder).copied(),
                    "seq {}: a direct commit is made on the version checked out",
                    e.seq
                );
            }
            _ => {}
        }
    }

    let mut versions: Vec<u64> = backend
        .versions(artifact)
        .await
        .unwrap()
        .iter()
        .map(|h| h.version)
        .collect();
    versions.reverse();
    assert_eq!(
        versions,
        (1..=head).collect::<Vec<_>>(),
        "the stored versions are exactly those the ledger committed"
    );
    head as usize - 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_tasks_race_checkout_and_checkin_500_times() {
    // A clock the tasks move, and 2-second leases: leases lapse mid-edit, the
    // sweeper races the operations, and stale check-ins become proposals.
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::manual(start_time());
    let options = Options {
        clock: clock.clone(),
        ..Options::default()
    };
    let store = Bundled::open_with(dir.path(), options).unwrap();
    let a = store
        .acting_as(participant("user:setup"))
        .import(&path("a.psd"), bytes(b"v1"))
        .await
        .unwrap();
    let cycles = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for t in 0..8u64 {
        let me = store.acting_as(participant(&format!("user:t{t}")));
        let (cycles, clock) = (cycles.clone(), clock.clone());
        tasks.push(tokio::spawn(async move {
            let mut random = Xorshift::seeded(t);
            let mut next = move || random.next_u64();
            let mut outcomes = [0usize; 3]; // committed, unchanged, proposal
            while cycles.load(Ordering::SeqCst) < ROUNDS {
                match me.check_out(a.id, for_seconds(2)).await {
                    Ok(c) => {
                        cycles.fetch_add(1, Ordering::SeqCst);
                        if next() % 4 == 0 {
                            clock.advance(Duration::from_millis(next() % 3000));
                        }
                        if next() % 8 == 0 {
                            me.sweep().unwrap();
                        }
                        let content = format!("t{t} {}", c.id);
                        let done = me.check_in(c.id, bytes(content.as_bytes())).await.unwrap();
                        count_outcome(&mut outcomes, &done.result);
                    }
                    Err(Error::ArtifactBusy { lease: Some(_), .. }) => {
                        tokio::time::sleep(Duration::from_micros(300)).await
                    }
                    Err(e) => panic!("task {t}: {e}"),
                }
            }
            outcomes
        }));
    }
    let [committed, _, proposals] = race_outcomes(tasks).await;
    let from_history = check_history(&store, a.id).await;
    assert_eq!(
        from_history, committed,
        "every reported commit is in the history, and nothing else"
    );
    let kept = proposals_of(&store, a.id, None).await;
    assert_eq!(
        kept.len(),
        proposals,
        "every stale check-in was kept as a proposal"
    );
}

#[tokio::test]
async fn two_processes_race_checkout_and_checkin_500_times_on_one_data_folder() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = Bundled::open(&data).unwrap();
    let a = store
        .acting_as(participant("user:setup"))
        .import(&path("a.psd"), bytes(b"v1"))
        .await
        .unwrap();
    // Two processes at a time, one of each side's: each round a side runs
    // `checkout`, and when it got the file writes it and runs `checkin`.
    let sides: Vec<_> = ["p1", "p2"]
        .into_iter()
        .map(|who| {
            let (data, work) = (data.clone(), dir.path().to_owned());
            std::thread::spawn(move || {
                let as_who = format!("user:{who}");
                let run = |args: &[&str]| {
                    // Under Wine on a loaded machine a process now and then
                    // fails to start at all (CreateProcess: 1359): that is
                    // no outcome of the race, so it is started again.
                    let mut tries = 0;
                    loop {
                        let started = Command::new(leasedesk_bin())
                            .arg("--data")
                            .arg(&data)
                            .args(["--as", &as_who])
                            .args(args)
                            .stdout(Stdio::piped())
                            .stderr(Stdio::piped())
                            .spawn();
                        match started {
                            Ok(child) => break child.wait_with_output().expect("leasedesk ran"),
                            Err(e) if tries < 5 => {
                                eprintln!("leasedesk did not start ({e}): again");
                                tries += 1;
                                std::thread::sleep(Duration::from_millis(200));
                            }
                            Err(e) => panic!("leasedesk did not start: {e}"),
                        }
                    }
                };
                let file = work.join(format!("{who}.psd"));
                let mut commits = 0;
                for round in 0..PROCESS_ROUNDS / 2 {
                    let out = run(&["checkout", "a.psd"]);
                    if !out.status.success() {
                        assert_eq!(
                            out.status.code(),
                            Some(75),
                            "a process failed with something other than busy: {}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                        continue;
                    }
                    std::fs::write(&file, format!("{who} {round}")).unwrap();
                    let out = run(&["checkin", "a.psd", file.to_str().unwrap()]);
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    commits += 1;
                }
                commits
            })
        })
        .collect();
    let committed: usize = sides.into_iter().map(|side| side.join().unwrap()).sum();
    assert!(committed > 0);
    let from_history = check_history(&store, a.id).await;
    assert_eq!(from_history, committed);
}

/// Writes that arrive together share one transaction (group commit), each in
/// a savepoint: a refused or failing write changes nothing, and takes nothing
/// from the writes committed beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_committed_together_keep_their_own_outcomes() {
    let f = fixture();
    let shared = f.import("shared.psd", b"v1").await;
    let mut own = Vec::new();
    for i in 0..16 {
        own.push(f.import(&format!("own-{i}.psd"), b"v1").await.id);
    }
    let held_by_bob = f.bob.check_out(own[0], checkout_request()).await.unwrap();
    let before = f.last_seq().await;

    let mut tasks = Vec::new();
    for i in 0..16 {
        let me = f.store.acting_as(participant(&format!("user:u{i}")));
        let own = own[i];
        tasks.push(tokio::spawn(async move {
            let busy = me.check_out(shared.id, with_note(&format!("u{i}"))).await;
            let mine = match i {
                0 => None, // own[0] is bob's
                _ => Some(me.check_out(own, checkout_request()).await),
            };
            // Two that fail inside their savepoint: not found, not theirs.
            let missing = me.check_out(ArtifactId::new(), checkout_request()).await;
            let forbidden = me.extend(held_by_bob.id, None).await;
            (busy, mine, missing, forbidden)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        let (busy, mine, missing, forbidden) = task.await.unwrap();
        match busy {
            Ok(checkout) => winners.push(checkout),
            Err(Error::ArtifactBusy { .. }) => {}
            Err(e) => panic!("a contended check-out is taken or busy, not {e:?}"),
        }
        if let Some(mine) = mine {
            assert_eq!(mine.unwrap().state, CheckoutState::Open);
        }
        assert!(matches!(missing, Err(Error::NotFound(_))), "{missing:?}");
        assert!(
            matches!(forbidden, Err(Error::Forbidden(_))),
            "{forbidden:?}"
        );
    }
    assert_eq!(winners.len(), 1, "one check-out of the shared file wins");
    let lease = f
        .artifact(shared.id)
        .await
        .lease
        .expect("the winner's lease");
    assert_eq!(lease.holder, winners[0].holder);

    let kinds = f.kinds_after(before).await;
    let acquired = kinds.iter().filter(|k| *k == "lease.acquired").count();
    assert_eq!(
        acquired,
        1 + 15,
        "the shared file's winner and 15 own files"
    );
    let held = f.bob.checkout(held_by_bob.id).await.unwrap();
    assert_eq!(
        held.expires_at, held_by_bob.expires_at,
        "nobody else extended bob's"
    );
}

//! Many writers race on one artifact; a checker over the recorded history
//! proves that the rules held.

use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Error};

use crate::harness::*;

const ROUNDS: usize = 500;

/// Checks a whole history: two leases were never live at once; every committed
/// version's base was the previous head (and a check-out's direct commit was
/// made on the version it checked out); versions have no gaps; sequence numbers
/// strictly increase. Returns how many versions were committed after the first.
async fn check_history(backend: &dyn Backend, artifact: ArtifactId) -> usize {
    let events = all_events(backend).await;
    for pair in events.windows(2) {
        assert!(
            pair[0].seq < pair[1].seq,
            "sequence numbers strictly increase: {} then {}",
            pair[0].seq,
            pair[1].seq
        );
    }

    let mut live: Option<(String, Timestamp)> = None;
    let mut head = 0u64;
    let mut checked_out_version: HashMap<String, u64> = HashMap::new();
    for e in events.iter().filter(|e| e.artifact_id == Some(artifact)) {
        let holder = e.holder.clone().unwrap_or_default();
        match e.kind.as_str() {
            "lease.acquired" => {
                if let Some((other, expires_at)) = &live {
                    panic!(
                        "seq {}: {holder} acquired while {other} was live until {expires_at}",
                        e.seq
                    );
                }
                live = Some((
                    holder,
                    e.data["expires_at"].as_str().unwrap().parse().unwrap(),
                ));
            }
            "lease.renewed" => {
                assert_eq!(
                    live.as_ref().map(|l| &l.0),
                    Some(&holder),
                    "seq {}: renewed by a non-holder",
                    e.seq
                );
                live = Some((
                    holder,
                    e.data["expires_at"].as_str().unwrap().parse().unwrap(),
                ));
            }
            "lease.released" | "lease.expired" | "lease.broken" => {
                assert_eq!(
                    live.as_ref().map(|l| &l.0),
                    Some(&holder),
                    "seq {}: {} by a non-holder",
                    e.seq,
                    e.kind
                );
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
    let dir = tempfile::tempdir().unwrap();
    let store = Bundled::open(dir.path()).unwrap();
    let a = store
        .acting_as(participant("user:setup"))
        .import(&path("a.psd"), bytes(b"v1"))
        .await
        .unwrap();
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for t in 0..8 {
        let me = store.acting_as(participant(&format!("user:t{t}")));
        let attempts = attempts.clone();
        tasks.push(tokio::spawn(async move {
            let mut committed = 0;
            while attempts.fetch_add(1, Ordering::SeqCst) < ROUNDS {
                match me.check_out(a.id, checkout_request()).await {
                    Ok(c) => {
                        let done = me
                            .check_in(c.id, bytes(format!("t{t} {}", c.id).as_bytes()))
                            .await
                            .unwrap();
                        assert!(
                            matches!(done.result, Some(CheckinResult::Committed { .. })),
                            "{:?}",
                            done.result
                        );
                        committed += 1;
                    }
                    Err(Error::ArtifactBusy { lease: Some(_), .. }) => {
                        tokio::task::yield_now().await
                    }
                    Err(e) => panic!("task {t}: {e}"),
                }
            }
            committed
        }));
    }
    let mut committed = 0;
    for task in tasks {
        committed += task.await.unwrap();
    }
    assert!(committed > 0);
    let from_history = check_history(&store, a.id).await;
    assert_eq!(
        from_history, committed,
        "every reported commit is in the history, and nothing else"
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
    let script = r#"
        for i in $(seq 1 "$ROUNDS"); do
            if "$LEASEDESK" --as "user:$WHO" checkout a.psd >/dev/null 2>>"$WORK/$WHO.err"; then
                echo "$WHO $i" > "$WORK/$WHO.psd"
                "$LEASEDESK" --as "user:$WHO" checkin a.psd "$WORK/$WHO.psd" >/dev/null || exit 1
                echo ok >> "$WORK/$WHO.commits"
            else
                code=$?
                [ "$code" -eq 75 ] || exit "$code"
            fi
        done
    "#;
    let children: Vec<_> = ["p1", "p2"]
        .iter()
        .map(|who| {
            Command::new("bash")
                .args(["-c", script])
                .env("LEASEDESK", env!("CARGO_BIN_EXE_leasedesk"))
                .env("LEASEDESK_DATA", &data)
                .env("ROUNDS", (ROUNDS / 2).to_string())
                .env("WHO", who)
                .env("WORK", dir.path())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = child.wait().unwrap();
        assert!(
            status.success(),
            "a process failed with something other than busy: {status}"
        );
    }
    let committed: usize = ["p1", "p2"]
        .iter()
        .map(|who| {
            std::fs::read_to_string(dir.path().join(format!("{who}.commits")))
                .unwrap_or_default()
                .lines()
                .count()
        })
        .sum();
    assert!(committed > 0);
    let from_history = check_history(&store, a.id).await;
    assert_eq!(from_history, committed);
}

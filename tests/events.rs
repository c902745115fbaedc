//! Rules 17–19: reads change nothing; every lease change has its event, once.

use std::time::Duration;

use leasedesk::model::*;

use crate::harness::*;

async fn rule17_reads_acquire_and_renew_nothing(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let before = (f.all_events().await, f.artifact(a.id).await);
    for backend in [&f.alice, &f.bob, &f.agent] {
        backend.artifacts().await.unwrap();
        backend.artifact(a.id).await.unwrap();
        backend.artifact_by_path(&path("a.psd")).await.unwrap();
        backend.versions(a.id).await.unwrap();
        read_content(backend.as_ref(), a.id, None).await;
        backend.checkouts(true).await.unwrap();
        backend.proposals(ProposalFilter::default()).await.unwrap();
        backend.events(0, 10).await.unwrap();
    }
    f.alice.checkout(c.id).await.unwrap();
    assert_eq!((f.all_events().await, f.artifact(a.id).await), before);

    // A lapsed lease is hidden from readers, and reading records nothing.
    f.advance(9 * HOUR);
    assert_eq!(f.artifact(a.id).await.lease, None);
    assert_eq!(f.bob.artifacts().await.unwrap()[0].lease, None);
    assert_eq!(f.all_events().await, before.0);
}

async fn rule18_every_lease_change_writes_its_event(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, with_note("n")).await.unwrap();
    f.alice.extend(c.id, None).await.unwrap();
    f.alice.check_in(c.id, bytes(b"v2")).await.unwrap();
    assert_eq!(
        f.kinds_after(0).await,
        [
            "version.committed",
            "lease.acquired",
            "checkout.opened",
            "lease.renewed",
            "lease.renewed",
            "version.committed",
            "lease.released",
            "checkout.closed"
        ]
    );
    let events = f.all_events().await;
    let acquired = &events[1];
    assert_eq!(acquired.participant, Some(participant("user:alice")));
    assert_eq!(acquired.holder.as_deref(), Some(c.holder.as_str()));
    assert_eq!(acquired.artifact_id, Some(a.id));
    assert_eq!(acquired.at, start_time());
}

async fn rule18_a_contender_asking_again_does_not_repeat_lease_contended(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    for _ in 0..3 {
        f.bob.check_out(a.id, checkout_request()).await.unwrap_err();
        f.bob.begin_edit(a.id, None).await.unwrap_err();
    }
    f.agent.begin_edit(a.id, None).await.unwrap_err();
    let contended = f.events_of("lease.contended").await;
    let who: Vec<_> = contended
        .iter()
        .map(|e| e.participant.clone().unwrap())
        .collect();
    assert_eq!(
        who,
        [participant("user:bob"), participant("agent:resizer")],
        "one per contender"
    );

    // A new lease (alice's lapsed, she took it again) is a new holder lease: bob's contention counts again.
    f.advance(HOUR);
    let c2 = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    f.bob.check_out(a.id, checkout_request()).await.unwrap_err();
    let last = f.last_event("lease.contended").await;
    assert_eq!(last.holder.as_deref(), Some(c2.holder.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule19_a_lapse_gets_exactly_one_lease_expired_whoever_finds_it_first() {
    // The sweeper first, then an operation.
    let f = fixture();
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(Duration::from_secs(61));
    assert_eq!(f.store.sweep().unwrap(), 1);
    assert_eq!(f.store.sweep().unwrap(), 0, "a second sweep finds nothing");
    f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.alice.cancel(c.id).await.unwrap();
    let expired = f.events_of("lease.expired").await;
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].holder.as_deref(), Some(c.holder.as_str()));

    // An operation first, then the sweeper.
    let g = fixture();
    let b = g.import("b.psd", b"v1").await;
    g.alice.check_out(b.id, for_seconds(60)).await.unwrap();
    g.advance(Duration::from_secs(61));
    g.bob.check_out(b.id, checkout_request()).await.unwrap();
    g.advance(Duration::from_secs(9 * 3600));
    assert_eq!(
        g.store.sweep().unwrap(),
        1,
        "only bob's lapse is left to record"
    );
    let expired = g
        .kinds_after(0)
        .await
        .iter()
        .filter(|k| *k == "lease.expired")
        .count();
    assert_eq!(expired, 2, "one per lapse: alice's and bob's");
}

async fn rule19_the_background_sweeper_records_a_lapse_nobody_touches(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(Duration::from_secs(61));
    let sweeper = f.store.spawn_sweeper(Duration::from_millis(10));
    let mut seen = false;
    for _ in 0..1000 {
        if f.kinds_after(0)
            .await
            .contains(&"lease.expired".to_string())
        {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    sweeper.abort();
    assert!(seen, "the sweeper wrote lease.expired");
}

async fn rule19_release_is_idempotent(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let edit = f.agent.begin_edit(a.id, None).await.unwrap();
    f.agent.release_edit(edit.id).await.unwrap();
    let seq = f.last_seq().await;
    f.agent.release_edit(edit.id).await.unwrap();
    f.agent.release_edit(edit.id).await.unwrap();
    assert_eq!(f.kinds_after(seq).await, Vec::<String>::new());
}

async fn event_pages_follow_the_sequence(f: Fixture) {
    for i in 0..5 {
        f.import(&format!("f{i}.psd"), b"x").await;
    }
    let first = f.alice.events(0, 2).await.unwrap();
    assert_eq!(
        first.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(first.next, 2);
    let rest = f.alice.events(first.next, 100).await.unwrap();
    assert_eq!(
        rest.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [3, 4, 5]
    );
    let none = f.alice.events(rest.next, 100).await.unwrap();
    assert_eq!(
        (none.events.len(), none.next),
        (0, 5),
        "nothing new: next stays"
    );
}

/// A sweeper never keeps a closed store alive: once the store's last handle
/// is gone (the app switched backends, a follower ended), it ends too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweeper_ends_with_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = leasedesk::Bundled::open(dir.path()).unwrap();
    let sweeper = store.spawn_sweeper(Duration::from_millis(10));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!sweeper.is_finished(), "it sweeps while the store is open");
    drop(store);
    let started = std::time::Instant::now();
    while !sweeper.is_finished() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the sweeper outlived its store"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

crate::contract!(
    rule17_reads_acquire_and_renew_nothing,
    rule18_every_lease_change_writes_its_event,
    rule18_a_contender_asking_again_does_not_repeat_lease_contended,
    rule19_the_background_sweeper_records_a_lapse_nobody_touches,
    rule19_release_is_idempotent,
    event_pages_follow_the_sequence,
);

//! Rules 1–6: taking a file.

use leasedesk::failpoint::{self, Action, Failpoints};
use leasedesk::model::*;
use leasedesk::Error;

use crate::harness::*;

async fn rule1_holder_names_the_record_and_the_participant_so_two_windows_are_two_holders(
    f: Fixture,
) {
    let a = f.import("brand/hero.psd", b"v1").await;
    let first = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    assert_eq!(first.holder, format!("checkout:{}:user:alice", first.id));
    let lease = f
        .artifact(a.id)
        .await
        .lease
        .expect("the check-out holds the lease");
    assert_eq!(lease.holder, first.holder);
    assert_eq!(lease.checkout_id, Some(first.id));
    assert_eq!(lease.kind, LeaseKind::Checkout);

    // Alice's second window is another holder: refused like anyone else.
    let second = f.alice.check_out(a.id, checkout_request()).await;
    assert!(
        matches!(&second, Err(Error::ArtifactBusy { lease: Some(l), .. }) if l.holder == first.holder),
        "a second check-out by the same person is a second holder: {second:?}"
    );
}

async fn rule2_default_lease_is_eight_hours_and_nothing_renews_it_in_the_background(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    assert_eq!(c.expires_at, start_time() + chrono::TimeDelta::hours(8));

    // Hours pass with reads and a sweep: the expiry does not move.
    f.advance(7 * HOUR);
    f.alice.artifacts().await.unwrap();
    f.alice.checkouts(true).await.unwrap();
    f.store.sweep().unwrap();
    assert_eq!(
        f.artifact(a.id).await.lease.unwrap().expires_at,
        c.expires_at
    );

    f.advance(HOUR);
    assert_eq!(
        f.artifact(a.id).await.lease,
        None,
        "at its expiry the lease is no longer live"
    );
}

async fn rule2_renewal_by_acquiring_again_moves_the_expiry_and_records_lease_renewed(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    f.advance(HOUR);
    let seq = f.last_seq().await;
    let extended = f.alice.extend(c.id, Some(2 * 3600)).await.unwrap();
    assert_eq!(
        extended.expires_at,
        start_time() + chrono::TimeDelta::hours(3)
    );
    assert_eq!(
        f.artifact(a.id).await.lease.unwrap().expires_at,
        extended.expires_at
    );
    assert_eq!(f.kinds_after(seq).await, ["lease.renewed"]);
    assert_eq!(
        f.alice.checkout(c.id).await.unwrap().expires_at,
        extended.expires_at
    );
}

async fn rule2_an_extend_after_a_lapse_nobody_took_takes_the_lease_again(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    let seq = f.last_seq().await;
    let extended = f.alice.extend(c.id, None).await.unwrap();
    assert_eq!(
        extended.expires_at,
        start_time() + chrono::TimeDelta::hours(9)
    );
    assert_eq!(
        f.kinds_after(seq).await,
        ["lease.expired", "lease.acquired"]
    );
}

async fn rule3_only_the_actor_extends_checks_in_or_cancels(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let seq = f.last_seq().await;

    let extend = f.bob.extend(c.id, None).await;
    assert_forbidden(&extend, "bob extends alice's check-out");
    let checkin = f.bob.check_in(c.id, bytes(b"bob's")).await;
    assert_forbidden(&checkin, "bob checks in alice's check-out");
    let cancel = f.bob.cancel(c.id).await;
    assert_forbidden(&cancel, "bob cancels alice's check-out");
    let see = f.bob.checkout(c.id).await;
    assert_forbidden(&see, "bob reads alice's check-out record");
    // Not even an admin acts for alice.
    let admin = f.admin.check_in(c.id, bytes(b"admin's")).await;
    assert_forbidden(&admin, "the admin checks in alice's check-out");

    assert_eq!(
        f.alice.checkout(c.id).await.unwrap(),
        c,
        "alice's check-out is untouched"
    );
    assert_eq!(
        f.kinds_after(seq).await,
        Vec::<String>::new(),
        "refusals change nothing"
    );
    assert_eq!(f.alice.versions(a.id).await.unwrap().len(), 1);
}

async fn rule4_a_busy_refusal_says_who_holds_it_until_when_and_their_note(f: Fixture) {
    let a = f.import("brand/hero.psd", b"v1").await;
    let note = "retouching the sky for the print run";
    let c = f
        .alice
        .check_out(
            a.id,
            CheckoutRequest {
                ttl_seconds: Some(3600),
                note: Some(note.into()),
            },
        )
        .await
        .unwrap();
    let refused = f.bob.check_out(a.id, checkout_request()).await.unwrap_err();
    let Error::ArtifactBusy {
        lease: Some(lease),
        path,
    } = &refused
    else {
        panic!("expected ArtifactBusy with the lease, got {refused:?}");
    };
    assert_eq!(path, "brand/hero.psd");
    assert_eq!(lease.participant, participant("user:alice"));
    assert_eq!(lease.expires_at, c.expires_at);
    assert_eq!(lease.note.as_deref(), Some(note));
    let message = refused.to_string();
    assert!(
        message.contains("user:alice") && message.contains(note) && message.contains("10:00"),
        "{message}"
    );
    assert_eq!(refused.to_body()["lease"]["participant"], "user:alice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule5_a_checkout_that_fails_to_be_recorded_releases_its_lease() {
    for action in [Action::Error, Action::Panic] {
        let f = fixture_with(Failpoints::new([(failpoint::at::CHECKOUT_RECORD, action)]));
        let a = f.import("a.psd", b"v1").await;
        let seq = f.last_seq().await;
        let alice = f.alice.clone();
        let failed =
            tokio::spawn(async move { alice.check_out(a.id, checkout_request()).await }).await;
        match action {
            Action::Panic => assert!(failed.is_err(), "the failure panics"),
            _ => assert!(matches!(failed, Ok(Err(Error::Internal(_)))), "{failed:?}"),
        }
        assert_eq!(
            f.artifact(a.id).await.lease,
            None,
            "{action:?}: the lease was released"
        );
        assert_eq!(
            f.kinds_after(seq).await,
            Vec::<String>::new(),
            "{action:?}: no half-recorded check-out"
        );
        assert!(f.alice.checkouts(false).await.unwrap().is_empty());
        // The store is usable and the file free at once (the panic poisoned nothing),
        // here through a second backend on the same folder without the failpoint.
        let bob = leasedesk::Bundled::open(f.dir.path())
            .unwrap()
            .acting_as(participant("user:bob"));
        leasedesk::Backend::check_out(&bob, a.id, checkout_request())
            .await
            .expect("the file is free for bob");
    }
}

async fn rule6_a_checkout_is_always_of_the_head(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    f.check_out_and_in(a.id, b"v2").await;
    let c2 = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    assert_eq!((c2.version, c2.digest), (2, digest(b"v2")));
}

async fn a_checkout_refused_for_a_missing_artifact_or_bad_ttl_takes_nothing(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let missing = f
        .alice
        .check_out(ArtifactId::new(), checkout_request())
        .await;
    assert!(matches!(missing, Err(Error::NotFound(_))), "{missing:?}");
    for ttl in [0, MAX_TTL_SECONDS + 1] {
        let bad = f
            .alice
            .check_out(
                a.id,
                CheckoutRequest {
                    ttl_seconds: Some(ttl),
                    note: None,
                },
            )
            .await;
        assert!(matches!(bad, Err(Error::Invalid(_))), "ttl {ttl}: {bad:?}");
    }
    let long_note = f
        .alice
        .check_out(
            a.id,
            CheckoutRequest {
                ttl_seconds: None,
                note: Some("x".repeat(MAX_NOTE_BYTES + 1)),
            },
        )
        .await;
    assert!(matches!(long_note, Err(Error::Invalid(_))), "{long_note:?}");
    assert_eq!(f.artifact(a.id).await.lease, None);
}

async fn cancel_closes_without_committing_releases_and_is_idempotent(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let cancelled = f.alice.cancel(c.id).await.unwrap();
    assert_eq!(
        (cancelled.state, &cancelled.result),
        (CheckoutState::Closed, &None)
    );
    assert_eq!(f.artifact(a.id).await.lease, None);
    f.assert_retry_changes_nothing(
        f.alice.cancel(c.id),
        &cancelled,
        "cancel again returns it unchanged",
    )
    .await;
    let checkin = f.alice.check_in(c.id, bytes(b"late")).await;
    assert!(
        matches!(checkin, Err(Error::CheckoutClosed(_))),
        "{checkin:?}"
    );
    assert_eq!(f.alice.versions(a.id).await.unwrap().len(), 1);
}

crate::contract!(
    rule1_holder_names_the_record_and_the_participant_so_two_windows_are_two_holders,
    rule2_default_lease_is_eight_hours_and_nothing_renews_it_in_the_background,
    rule2_renewal_by_acquiring_again_moves_the_expiry_and_records_lease_renewed,
    rule2_an_extend_after_a_lapse_nobody_took_takes_the_lease_again,
    rule3_only_the_actor_extends_checks_in_or_cancels,
    rule4_a_busy_refusal_says_who_holds_it_until_when_and_their_note,
    rule6_a_checkout_is_always_of_the_head,
    a_checkout_refused_for_a_missing_artifact_or_bad_ttl_takes_nothing,
    cancel_closes_without_committing_releases_and_is_idempotent,
);

//! Writes that arrive together on PostgreSQL share one transaction (group
//! commit): each writer's outcome is its own, as if it had run alone in
//! the order it arrived.

use std::time::Duration;

use leasedesk::model::*;

use super::assert_dense;
use crate::harness::*;

/// A group commit whose queued write fails in the database runs again,
/// each writer on its own: the write that failed is refused alone, every
/// other writer of its group commits, and nothing of the failed one stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_that_fails_in_the_database_fails_alone_in_its_group_commit() {
    let f = postgres_fixture().await;
    let mut artifacts = Vec::new();
    for n in 0..8 {
        artifacts.push(f.import(&format!("group/{n}.psd"), b"v1").await);
    }
    // The lease row is among a check-out's queued writes: refused by the
    // database only when it is sent, after the rules have answered.
    f.sql(
        "CREATE FUNCTION refuse_lease() RETURNS trigger LANGUAGE plpgsql AS
             $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
         CREATE TRIGGER refuse_lease BEFORE INSERT OR UPDATE ON leases FOR EACH ROW
             WHEN (NEW.note = 'refuse') EXECUTE FUNCTION refuse_lease()",
    );
    for round in 0..6 {
        let refused = round % artifacts.len();
        let refuse = || CheckoutRequest {
            ttl_seconds: None,
            note: Some("refuse".into()),
        };
        // Alone, after a pause: its commit also carries the notice of
        // changes, and the next write on its connection must find it clean.
        tokio::time::sleep(Duration::from_millis(60)).await;
        let alone = f.alice.check_out(artifacts[refused].id, refuse()).await;
        assert!(alone.is_err(), "round {round}: {alone:?}");
        let results =
            futures_util::future::join_all(artifacts.iter().enumerate().map(|(n, artifact)| {
                let request = match n == refused {
                    true => refuse(),
                    false => checkout_request(),
                };
                f.alice.check_out(artifact.id, request)
            }))
            .await;
        for (n, result) in results.into_iter().enumerate() {
            let lease = f.artifact(artifacts[n].id).await.lease;
            if n == refused {
                assert!(result.is_err(), "round {round}: {result:?}");
                assert!(lease.is_none(), "round {round}: {lease:?}");
            } else {
                let checkout = result.unwrap_or_else(|e| panic!("round {round}, {n}: {e}"));
                assert_eq!(lease.unwrap().checkout_id, Some(checkout.id));
                f.alice.cancel(checkout.id).await.unwrap();
            }
        }
        let open = f.alice.checkouts(true).await.unwrap();
        assert!(open.is_empty(), "round {round}: {open:?}");
    }
    let events = all_events(f.alice.as_ref()).await;
    let refused_artifacts: Vec<_> = (0..6).map(|r| artifacts[r % 8].id).collect();
    for (round, id) in refused_artifacts.iter().enumerate() {
        let acquired = events
            .iter()
            .filter(|e| e.artifact_id == Some(*id) && e.kind == "lease.acquired")
            .count();
        // One a round but its own.
        assert_eq!(acquired, 5, "artifact of round {round}");
    }
    assert_dense(f.alice.as_ref()).await;
}

/// A commit that fails (PostgreSQL refuses its events) while it carries the
/// notice of changes leaves its connection outside any transaction: the
/// next write on that connection commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_leaves_its_connection_ready_for_the_next_write() {
    let f = postgres_fixture().await;
    let refused = f.import("refused.psd", b"v1").await;
    let fine = f.import("fine.psd", b"v1").await;
    f.sql(&format!(
        "CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS
             $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
         CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW
             WHEN (NEW.artifact_id = '{}') EXECUTE FUNCTION refuse_event()",
        refused.id
    ));
    for round in 0..3 {
        // After a pause, the next commit carries the notice.
        tokio::time::sleep(Duration::from_millis(60)).await;
        let failed = f.alice.check_out(refused.id, checkout_request()).await;
        assert!(failed.is_err(), "round {round}: {failed:?}");
        assert_eq!(f.artifact(refused.id).await.lease, None);
        let checkout = f
            .alice
            .check_out(fine.id, checkout_request())
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        f.alice.cancel(checkout.id).await.unwrap();
    }
}

/// A writer refused in a group commit is answered by what it meets when
/// the group runs again, never by an earlier attempt, whose refusal may
/// rest on a change that does not happen this time. Here an extend is
/// refused in the first attempt because a cancel before it in the group
/// closed the check-out; the database refuses that cancel the second time,
/// so the check-out is open and the extend is granted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_writer_is_answered_by_the_attempt_that_commits_not_by_an_earlier_one() {
    let f = postgres_fixture().await;
    let slow = f.import("slow.psd", b"v1").await;
    let held = f.import("held.psd", b"v1").await;
    let mine = f.alice.check_out(held.id, for_seconds(600)).await.unwrap();
    // The slow lease holds the write turn long enough for the next two to
    // queue together. A check-out is closed the first time only: a
    // sequence is not rolled back with the attempt that drew from it.
    f.sql(
        "CREATE SEQUENCE closings;
         CREATE FUNCTION slow_lease() RETURNS trigger LANGUAGE plpgsql AS
             $$ BEGIN PERFORM pg_sleep(1); RETURN NEW; END $$;
         CREATE TRIGGER slow_lease BEFORE INSERT ON leases FOR EACH ROW
             WHEN (NEW.note = 'slow') EXECUTE FUNCTION slow_lease();
         CREATE FUNCTION closed_once() RETURNS trigger LANGUAGE plpgsql AS
             $$ BEGIN
                 IF nextval('closings') > 1 THEN RAISE EXCEPTION 'refused by the test'; END IF;
                 RETURN NEW;
             END $$;
         CREATE TRIGGER closed_once BEFORE UPDATE ON checkouts FOR EACH ROW
             WHEN (NEW.state = 'closed') EXECUTE FUNCTION closed_once()",
    );
    let admin = f.admin.clone();
    let slow_request = CheckoutRequest {
        ttl_seconds: None,
        note: Some("slow".into()),
    };
    let holding = tokio::spawn(async move { admin.check_out(slow.id, slow_request).await });
    let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'";
    while f.sql(sleeping) != ["1"] {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cancel = tokio::spawn({
        let alice = f.alice.clone();
        async move { alice.cancel(mine.id).await }
    });
    // Queued after the cancel, while the write turn is still taken.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let extended = f.alice.extend(mine.id, Some(7200)).await;
    holding.await.unwrap().unwrap();
    let cancel = cancel.await.unwrap();
    // Both ran in one group, twice: the cancel closed the check-out once.
    assert_eq!(f.sql("SELECT last_value FROM closings"), ["2"]);
    assert!(cancel.is_err(), "{cancel:?}");
    let extended = extended.unwrap_or_else(|e| panic!("refused for a cancel that never was: {e}"));
    assert_eq!(extended.state, CheckoutState::Open);
    assert!(extended.expires_at > mine.expires_at);
    let lease = f.artifact(held.id).await.lease.unwrap();
    assert_eq!(lease.checkout_id, Some(mine.id));
    assert_eq!(lease.expires_at, extended.expires_at);
    assert_dense(f.alice.as_ref()).await;
}

//! Rules 13–15: agents' edits.

use std::time::Duration;

use leasedesk::agent::run_edit;
use leasedesk::model::*;
use leasedesk::Error;

use crate::harness::*;

/// The agent begins an edit of a new `a.png` (at `v1`), its lease for
/// `ttl_seconds` (`None`: the default).
async fn an_edit_of_a_new_file(f: &Fixture, ttl_seconds: Option<u64>) -> (Artifact, Edit) {
    let a = f.import("a.png", b"v1").await;
    let edit = f.agent.begin_edit(a.id, ttl_seconds).await.unwrap();
    (a, edit)
}

/// The agent commits its work (`agent's`) in edit `edit`.
async fn agents_work(f: &Fixture, edit: EditId) -> leasedesk::Result<CheckinResult> {
    f.agent.commit_edit(edit, bytes(b"agent's")).await
}

async fn rule13_an_edit_takes_a_45_second_lease_unique_per_call(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, None).await;
    assert_eq!(edit.holder, format!("edit:{}", edit.id));
    assert_eq!(
        edit.expires_at,
        start_time() + chrono::TimeDelta::seconds(45)
    );
    assert_eq!(
        (edit.base_version, edit.base_digest.clone()),
        (1, digest(b"v1"))
    );
    let lease = f.artifact(a.id).await.lease.unwrap();
    assert_eq!(
        (lease.kind, lease.holder),
        (LeaseKind::Edit, edit.holder.clone())
    );

    f.agent.release_edit(edit.id).await.unwrap();
    let again = f.agent.begin_edit(a.id, None).await.unwrap();
    assert_ne!(again.id, edit.id, "each call is a new holder");
}

async fn rule13_the_edit_lease_is_released_on_success(f: Fixture) {
    let a = f.import("a.png", b"v1").await;
    let result = run_edit(f.agent.clone(), a.id, Duration::from_secs(5), |_| async {
        Ok(bytes(b"resized"))
    })
    .await
    .unwrap();
    assert_eq!(
        result,
        CheckinResult::Committed {
            version: 2,
            digest: digest(b"resized")
        }
    );
    let after = f.artifact(a.id).await;
    assert_eq!((after.head.version, after.lease), (2, None));
    assert_eq!(after.head.author, participant("agent:resizer"));
}

async fn rule13_the_edit_lease_is_released_on_error(f: Fixture) {
    let a = f.import("a.png", b"v1").await;
    let result = run_edit(f.agent.clone(), a.id, Duration::from_secs(5), |_| async {
        Err(Error::Invalid("the resizer failed".into()))
    })
    .await;
    assert_eq!(result, Err(Error::Invalid("the resizer failed".into())));
    let after = f.artifact(a.id).await;
    assert_eq!((after.head.version, after.lease), (1, None));
    assert_eq!(
        f.kinds_after(0).await.last().map(String::as_str),
        Some("lease.released")
    );
}

async fn rule13_the_edit_lease_is_released_on_panic(f: Fixture) {
    let a = f.import("a.png", b"v1").await;
    let agent = f.agent.clone();
    let outcome = tokio::spawn(async move {
        run_edit(agent, a.id, Duration::from_secs(5), |_| async {
            panic!("the resizer crashed");
        })
        .await
    })
    .await;
    assert!(
        outcome.unwrap_err().is_panic(),
        "the panic goes on to the caller"
    );
    let after = f.artifact(a.id).await;
    assert_eq!((after.head.version, after.lease), (1, None));
}

async fn rule13_the_edit_lease_is_released_on_timeout(f: Fixture) {
    let a = f.import("a.png", b"v1").await;
    let result = run_edit(
        f.agent.clone(),
        a.id,
        Duration::from_millis(100),
        |_| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(bytes(b"too late"))
        },
    )
    .await;
    assert!(
        matches!(result, Err(Error::DeadlineExceeded(_))),
        "{result:?}"
    );
    let after = f.artifact(a.id).await;
    assert_eq!((after.head.version, after.lease), (1, None));
}

async fn rule14_an_edit_commit_is_refused_when_the_head_moved(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, Some(1)).await;
    f.advance(Duration::from_secs(2));
    // The edit's lease lapsed; alice takes the file and commits.
    f.check_out_and_in(a.id, b"v2").await;

    let refused = agents_work(&f, edit.id).await;
    let Err(Error::Stale { head }) = refused else {
        panic!("expected Stale, got {refused:?}");
    };
    assert_eq!((head.version, head.digest), (2, digest(b"v2")));
    assert_eq!(
        f.artifact(a.id).await.head.version,
        2,
        "nothing was committed"
    );
    assert!(
        all_proposals(f.agent.as_ref()).await.is_empty(),
        "an edit never queues a proposal"
    );
}

async fn rule14_an_edit_commit_after_its_lease_was_broken_and_the_head_moved_is_stale(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, None).await;
    f.admin.break_lease(a.id, "urgent fix").await.unwrap();
    check_out_and_in_as(f.bob.as_ref(), a.id, b"v2").await;
    let refused = agents_work(&f, edit.id).await;
    assert!(
        matches!(&refused, Err(Error::Stale { head }) if head.version == 2),
        "{refused:?}"
    );
    assert_eq!(f.artifact(a.id).await.head.digest, digest(b"v2"));
}

async fn rule14_a_retried_stale_commit_is_stale_again(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, Some(1)).await;
    f.advance(Duration::from_secs(2));
    check_out_and_in_as(f.bob.as_ref(), a.id, b"v2").await;
    for attempt in ["first", "retry"] {
        let refused = agents_work(&f, edit.id).await;
        assert!(
            matches!(refused, Err(Error::Stale { .. })),
            "{attempt}: {refused:?}"
        );
    }
}

async fn rule14_a_broken_edit_cannot_commit_even_if_the_head_did_not_move(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, None).await;
    f.admin.break_lease(a.id, "urgent fix").await.unwrap();
    let refused = agents_work(&f, edit.id).await;
    assert!(
        matches!(refused, Err(Error::CheckoutClosed(_))),
        "{refused:?}"
    );
    assert_eq!(f.artifact(a.id).await.head.version, 1);
}

async fn rule13_an_edit_commit_never_renews_its_lease(f: Fixture) {
    let (_, edit) = an_edit_of_a_new_file(&f, None).await;
    let seq = f.last_seq().await;
    f.agent.commit_edit(edit.id, bytes(b"v2")).await.unwrap();
    assert_eq!(
        f.kinds_after(seq).await,
        ["version.committed", "lease.released"]
    );
}

async fn rule13_the_edit_lease_is_released_when_the_call_is_dropped(f: Fixture) {
    let a = f.import("a.png", b"v1").await;
    let call = run_edit(f.agent.clone(), a.id, Duration::from_secs(30), |_| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(bytes(b"never"))
    });
    // The caller gives up (an outer timeout, a client that went away).
    assert!(tokio::time::timeout(Duration::from_millis(100), call)
        .await
        .is_err());
    let mut released = false;
    for _ in 0..500 {
        if f.artifact(a.id).await.lease.is_none() {
            released = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(released, "the dropped call released its lease");
}

async fn rule14_an_edit_whose_lease_lapsed_commits_if_nobody_moved_the_head(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, None).await;
    f.advance(Duration::from_secs(60));
    let result = agents_work(&f, edit.id).await.unwrap();
    assert_eq!(
        result,
        CheckinResult::Committed {
            version: 2,
            digest: digest(b"agent's")
        }
    );
    assert_eq!(f.artifact(a.id).await.lease, None);
    // Retrying the commit returns the same result and commits nothing more.
    assert_eq!(agents_work(&f, edit.id).await.unwrap(), result);
    assert_eq!(f.agent.versions(a.id).await.unwrap().len(), 2);
}

async fn rule14_a_lapsed_edit_is_refused_while_someone_else_holds_the_file(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, None).await;
    f.advance(Duration::from_secs(60));
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let refused = agents_work(&f, edit.id).await;
    assert!(
        matches!(&refused, Err(Error::ArtifactBusy { lease: Some(l), .. }) if l.holder == c.holder),
        "{refused:?}"
    );
    assert_eq!(
        f.artifact(a.id).await.head.version,
        1,
        "alice's check-out is not overwritten"
    );
}

async fn rule15_a_busy_agent_gets_artifact_busy_with_the_lease_and_queues_nothing(f: Fixture) {
    let a = f.import("a.png", b"v1").await;
    let c = f
        .alice
        .check_out(a.id, with_note("colour pass"))
        .await
        .unwrap();
    let refused = f.agent.begin_edit(a.id, None).await.unwrap_err();
    let Error::ArtifactBusy {
        lease: Some(lease), ..
    } = &refused
    else {
        panic!("expected ArtifactBusy with the lease, got {refused:?}");
    };
    assert_eq!(lease.holder, c.holder);
    assert_eq!(lease.note.as_deref(), Some("colour pass"));
    assert!(all_proposals(f.agent.as_ref()).await.is_empty());
    let via_helper = run_edit(f.agent.clone(), a.id, Duration::from_secs(5), |_| async {
        Ok(bytes(b"x"))
    })
    .await;
    assert!(
        matches!(via_helper, Err(Error::ArtifactBusy { .. })),
        "{via_helper:?}"
    );
}

async fn only_the_agent_that_began_an_edit_commits_or_releases_it(f: Fixture) {
    let (a, edit) = an_edit_of_a_new_file(&f, None).await;
    let commit = f.bob.commit_edit(edit.id, bytes(b"bob's bytes")).await;
    assert!(matches!(commit, Err(Error::Forbidden(_))), "{commit:?}");
    let hex = digest(b"bob's bytes").hex().to_owned();
    assert!(
        !f.stored_blobs().contains(&hex),
        "a refused commit stores nothing"
    );
    let release = f.bob.release_edit(edit.id).await;
    assert!(matches!(release, Err(Error::Forbidden(_))), "{release:?}");
    assert_eq!(f.artifact(a.id).await.lease.unwrap().holder, edit.holder);
    f.agent.release_edit(edit.id).await.unwrap();
    f.agent
        .release_edit(edit.id)
        .await
        .expect("release is idempotent");
    assert_eq!(f.artifact(a.id).await.lease, None);
}

crate::contract!(
    rule13_an_edit_takes_a_45_second_lease_unique_per_call,
    rule13_the_edit_lease_is_released_on_success,
    rule13_the_edit_lease_is_released_on_error,
    rule13_the_edit_lease_is_released_on_panic,
    rule13_the_edit_lease_is_released_on_timeout,
    rule14_an_edit_commit_is_refused_when_the_head_moved,
    rule14_an_edit_commit_after_its_lease_was_broken_and_the_head_moved_is_stale,
    rule14_a_retried_stale_commit_is_stale_again,
    rule14_a_broken_edit_cannot_commit_even_if_the_head_did_not_move,
    rule13_an_edit_commit_never_renews_its_lease,
    rule13_the_edit_lease_is_released_when_the_call_is_dropped,
    rule14_an_edit_whose_lease_lapsed_commits_if_nobody_moved_the_head,
    rule14_a_lapsed_edit_is_refused_while_someone_else_holds_the_file,
    rule15_a_busy_agent_gets_artifact_busy_with_the_lease_and_queues_nothing,
    only_the_agent_that_began_an_edit_commits_or_releases_it,
);

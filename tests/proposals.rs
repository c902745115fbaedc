//! Rule 16 and admin breaks: proposals are accepted, rebuilt or rejected, never lost.

use leasedesk::model::*;
use leasedesk::Error;

use crate::harness::*;

async fn rule16_an_open_proposal_is_accepted_while_the_head_is_its_test_digest(f: Fixture) {
    let (a, proposal) = f.stale_proposal("a.psd", b"alice's").await;
    let accepted = f.alice.accept_proposal(proposal.id).await.unwrap();
    assert_eq!(accepted.state, ProposalState::Accepted);
    let head = f.artifact(a.id).await.head;
    assert_eq!(
        (head.version, head.digest, head.author),
        (3, digest(b"alice's"), participant("user:alice"))
    );
    assert_eq!(read_content(f.bob.as_ref(), a.id, None).await, b"alice's");
    let kinds = f.kinds_after(0).await;
    assert_eq!(
        kinds[kinds.len() - 4..],
        [
            "lease.acquired",
            "version.committed",
            "proposal.accepted",
            "lease.released"
        ],
        "accept commits under a short lease of its own"
    );
    assert_eq!(f.artifact(a.id).await.lease, None);

    // A retry (its answer was lost) returns the accepted proposal and commits nothing more.
    f.assert_retry_changes_nothing(f.alice.accept_proposal(proposal.id), &accepted, "a retry")
        .await;
    let rejected_after = f.alice.reject_proposal(proposal.id).await;
    assert!(
        matches!(rejected_after, Err(Error::Invalid(_))),
        "an accepted proposal is not rejected: {rejected_after:?}"
    );
}

async fn rule16_accept_is_refused_once_the_head_moved_and_a_rebuilt_proposal_is_accepted(
    f: Fixture,
) {
    let (a, stale) = f.stale_proposal("a.psd", b"alice's").await;
    check_out_and_in_as(f.bob.as_ref(), a.id, b"v3").await;

    let refused = f.alice.accept_proposal(stale.id).await;
    let Err(Error::ProposalStale { head }) = refused else {
        panic!("expected ProposalStale, got {refused:?}");
    };
    assert_eq!(head.version, 3);
    assert_eq!(
        f.artifact(a.id).await.head.digest,
        digest(b"v3"),
        "bob's version is not overwritten"
    );

    let rebuilt = f.alice.rebuild_proposal(stale.id).await.unwrap();
    assert_ne!(rebuilt.id, stale.id);
    assert_eq!(
        f.alice.rebuild_proposal(stale.id).await.unwrap(),
        rebuilt,
        "a retried rebuild returns the same new proposal"
    );
    assert_eq!(
        (rebuilt.base_version, rebuilt.test_digest.clone()),
        (3, digest(b"v3"))
    );
    assert_eq!(rebuilt.provenance, stale.provenance, "provenance is kept");
    assert_eq!(
        (rebuilt.digest.clone(), rebuilt.author.clone()),
        (stale.digest.clone(), stale.author.clone())
    );

    let all = proposals_of(&*f.alice, a.id, None).await;
    let old = all.iter().find(|p| p.id == stale.id).unwrap();
    assert_eq!(
        old.state,
        ProposalState::Superseded,
        "nothing is deleted: the old one is superseded"
    );

    f.alice.accept_proposal(rebuilt.id).await.unwrap();
    assert_eq!(f.artifact(a.id).await.head.digest, digest(b"alice's"));
    let superseded_accept = f.alice.accept_proposal(stale.id).await;
    assert!(
        matches!(superseded_accept, Err(Error::Invalid(_))),
        "{superseded_accept:?}"
    );
}

async fn rule16_a_rejected_proposal_stays_in_history(f: Fixture) {
    let (a, proposal) = f.stale_proposal("a.psd", b"alice's").await;
    let rejected = f.admin.reject_proposal(proposal.id).await.unwrap();
    assert_eq!(rejected.state, ProposalState::Rejected);
    let open = proposals_of(&*f.alice, a.id, Some(ProposalState::Open)).await;
    assert!(open.is_empty());
    let all = proposals_of(&*f.alice, a.id, None).await;
    assert_eq!(all.len(), 1, "the rejected proposal is still listed");
    assert_eq!(f.artifact(a.id).await.head.version, 2);
}

async fn rule16_only_the_author_or_an_admin_decides_a_proposal(f: Fixture) {
    let (a, proposal) = f.stale_proposal("a.psd", b"alice's").await;
    for refused in [
        f.bob.accept_proposal(proposal.id).await,
        f.bob.reject_proposal(proposal.id).await,
        f.bob.rebuild_proposal(proposal.id).await,
    ] {
        assert!(matches!(refused, Err(Error::Forbidden(_))), "{refused:?}");
    }
    f.admin
        .accept_proposal(proposal.id)
        .await
        .expect("an admin may accept");
    assert_eq!(f.artifact(a.id).await.head.version, 3);
}

async fn rule16_accept_is_refused_while_someone_holds_the_file(f: Fixture) {
    let (a, proposal) = f.stale_proposal("a.psd", b"alice's").await;
    let c = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    let refused = f.alice.accept_proposal(proposal.id).await;
    assert!(
        matches!(&refused, Err(Error::ArtifactBusy { lease: Some(l), .. }) if l.holder == c.holder),
        "{refused:?}"
    );
    assert_eq!(f.artifact(a.id).await.head.version, 2);
}

async fn an_admin_break_frees_the_file_and_the_holders_later_checkin_becomes_a_proposal(
    f: Fixture,
) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();

    let refused = f.bob.break_lease(a.id, "I need it").await;
    assert_forbidden(&refused, "only admins break");
    let no_reason = f.admin.break_lease(a.id, "  ").await;
    assert!(matches!(no_reason, Err(Error::Invalid(_))), "{no_reason:?}");
    assert!(f.artifact(a.id).await.lease.is_some());

    let freed = f
        .admin
        .break_lease(a.id, "alice is on holiday")
        .await
        .unwrap();
    assert_eq!(freed.lease, None);
    let broken = f.last_event("lease.broken").await;
    assert_eq!(
        (broken.holder.as_deref(), broken.data["reason"].as_str()),
        (Some(c.holder.as_str()), Some("alice is on holiday"))
    );
    let record = f.alice.checkout(c.id).await.unwrap();
    let b = record.broken.expect("the check-out says it was broken");
    assert_eq!(
        (b.by, b.reason.as_str()),
        (participant("user:admin"), "alice is on holiday")
    );

    let extend = f.alice.extend(c.id, None).await;
    assert!(
        matches!(extend, Err(Error::CheckoutClosed(_))),
        "a broken check-out is not extended: {extend:?}"
    );
    let done = f.alice.check_in(c.id, bytes(b"alice's")).await.unwrap();
    assert!(
        matches!(done.result, Some(CheckinResult::Proposal { .. })),
        "{:?}",
        done.result
    );
    assert_eq!(
        f.artifact(a.id).await.head.version,
        1,
        "nothing was committed over the break"
    );
}

crate::contract!(
    rule16_an_open_proposal_is_accepted_while_the_head_is_its_test_digest,
    rule16_accept_is_refused_once_the_head_moved_and_a_rebuilt_proposal_is_accepted,
    rule16_a_rejected_proposal_stays_in_history,
    rule16_only_the_author_or_an_admin_decides_a_proposal,
    rule16_accept_is_refused_while_someone_holds_the_file,
    an_admin_break_frees_the_file_and_the_holders_later_checkin_becomes_a_proposal,
);

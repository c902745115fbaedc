//! Changes of several files (API.md "Changes of several files"): check-outs
//! taken all or none, files staged and then checked in as one change that
//! commits every file or keeps every changed file as a proposal of the
//! change, proposals decided together, retries, and staged bytes removed
//! once nothing can commit them.

use std::time::Duration;

use leasedesk::model::*;
use leasedesk::Error;

use crate::harness::*;

/// Files a, b and c at version 1, imported by alice.
async fn three_files(f: &Fixture) -> Vec<Artifact> {
    let mut files = Vec::new();
    for p in ["layout/a.indd", "layout/links/b.psd", "layout/links/c.png"] {
        files.push(f.import(p, format!("{p} v1").as_bytes()).await);
    }
    files
}

fn ids(files: &[Artifact]) -> Vec<ArtifactId> {
    files.iter().map(|a| a.id).collect()
}

fn together(artifact_ids: Vec<ArtifactId>, ttl_seconds: Option<u64>) -> CheckoutsRequest {
    CheckoutsRequest {
        artifact_ids,
        ttl_seconds,
        note: Some("logo fix".into()),
    }
}

/// `who` checks `files` out together (for `ttl_seconds`, if given).
async fn take(
    who: &dyn leasedesk::Backend,
    files: &[Artifact],
    ttl_seconds: Option<u64>,
) -> Vec<Checkout> {
    who.check_out_many(together(ids(files), ttl_seconds))
        .await
        .unwrap()
}

/// Stages `data(n, checkout)` for each check-out as `who`, then checks them
/// in as one change described by `message`.
async fn stage_and_commit(
    who: &dyn leasedesk::Backend,
    checkouts: &[Checkout],
    data: impl Fn(usize, &Checkout) -> String,
    message: &str,
) -> Change {
    for (n, checkout) in checkouts.iter().enumerate() {
        let bytes_of = data(n, checkout);
        who.stage(checkout.id, bytes(bytes_of.as_bytes()))
            .await
            .unwrap();
    }
    who.commit_change(change_of(checkouts, message))
        .await
        .unwrap()
}

fn change_of(checkouts: &[Checkout], message: &str) -> ChangeRequest {
    ChangeRequest {
        checkouts: checkouts.iter().map(|c| c.id).collect(),
        message: Some(message.into()),
    }
}

async fn three_files_are_checked_out_together_and_in_as_one_change(f: Fixture) {
    let files = three_files(&f).await;
    let taken = take(f.alice.as_ref(), &files, None).await;
    let taken_ids: Vec<ArtifactId> = taken.iter().map(|c| c.artifact_id).collect();
    assert_eq!(taken_ids, ids(&files), "in the order asked");
    for (checkout, file) in taken.iter().zip(&files) {
        let lease = f.artifact(file.id).await.lease.expect("held");
        assert_eq!(lease.checkout_id, Some(checkout.id));
        assert_eq!(lease.note.as_deref(), Some("logo fix"));
    }
    let staged = f.alice.stage(taken[0].id, bytes(b"a v2")).await.unwrap();
    assert_eq!(
        staged,
        StagedFile {
            digest: digest(b"a v2"),
            size: 4
        }
    );
    // Staging again replaces; b keeps its bytes (unchanged).
    stage_each(
        f.alice.as_ref(),
        &[
            (taken[0].id, b"a v2, better"),
            (taken[1].id, b"layout/links/b.psd v1"),
            (taken[2].id, b"c v2"),
        ],
    )
    .await;
    assert_eq!(
        f.artifact(files[0].id).await.head.version,
        1,
        "staging commits nothing"
    );

    let change = f
        .alice
        .commit_change(change_of(&taken, "new logo"))
        .await
        .unwrap();
    assert_eq!(change.outcome, ChangeOutcome::Committed);
    assert_eq!(change.message.as_deref(), Some("new logo"));
    assert_eq!(change.author, participant("user:alice"));
    let results: Vec<&CheckinResult> = change.files.iter().map(|f| &f.result).collect();
    assert_eq!(
        results,
        [
            &CheckinResult::Committed {
                version: 2,
                digest: digest(b"a v2, better")
            },
            &CheckinResult::Unchanged {
                version: 1,
                digest: digest(b"layout/links/b.psd v1")
            },
            &CheckinResult::Committed {
                version: 2,
                digest: digest(b"c v2")
            },
        ]
    );
    for (file, checkout) in change.files.iter().zip(&taken) {
        assert_eq!(
            (file.checkout_id, &file.path),
            (checkout.id, &checkout.path)
        );
        let closed = f.alice.checkout(checkout.id).await.unwrap();
        assert_eq!(closed.state, CheckoutState::Closed);
        assert_eq!(closed.change_id, Some(change.id));
        assert_eq!(f.artifact(file.artifact_id).await.lease, None, "released");
    }
    for a in [&files[0], &files[2]] {
        let head = f.artifact(a.id).await.head;
        assert_eq!(
            (head.change_id, head.message.as_deref()),
            (Some(change.id), Some("new logo"))
        );
    }
    assert_eq!(
        f.artifact(files[1].id).await.head.change_id,
        None,
        "b did not change"
    );
    assert_eq!(
        f.bob.change(change.id).await.unwrap(),
        change,
        "anyone may read it"
    );
    let event = f.last_event("change.committed").await;
    assert_eq!(event.data["change_id"], change.id.to_string());
    assert_eq!(event.data["files"].as_array().map(Vec::len), Some(3));
    assert_eq!(event.participant, Some(participant("user:alice")));
    let committed = f.events_of("version.committed").await;
    assert_eq!(
        committed.last().unwrap().data["change_id"],
        change.id.to_string()
    );
    let missing = f.alice.change(ChangeId::new()).await;
    assert!(matches!(missing, Err(Error::NotFound(_))), "{missing:?}");
}

async fn a_checkout_of_several_files_is_all_or_none_and_names_every_busy_file(f: Fixture) {
    let files = three_files(&f).await;
    for busy in [&files[1], &files[2]] {
        f.bob
            .check_out(busy.id, with_note("retouching"))
            .await
            .unwrap();
    }
    let events = f.last_seq().await;
    let refused = f.alice.check_out_many(together(ids(&files), None)).await;
    let Err(Error::SomeBusy(busy)) = refused else {
        panic!("expected every busy file named, got {refused:?}");
    };
    let named: Vec<(&RepoPath, &Participant)> = busy
        .iter()
        .map(|b| (&b.path, &b.lease.participant))
        .collect();
    assert_eq!(
        named,
        [
            (&files[1].path, &participant("user:bob")),
            (&files[2].path, &participant("user:bob"))
        ]
    );
    assert_eq!(busy[0].lease.note.as_deref(), Some("retouching"));
    assert_eq!(
        f.artifact(files[0].id).await.lease,
        None,
        "the free file was not taken"
    );
    assert!(f.alice.checkouts(true).await.unwrap().is_empty());
    assert_eq!(f.last_seq().await, events, "nothing was recorded");

    for (request, what) in [
        (together(vec![], None), "no file"),
        (
            together(vec![files[0].id, files[0].id], None),
            "a file twice",
        ),
        (together(vec![files[0].id], Some(0)), "a ttl out of range"),
        (
            together((0..1001).map(|_| ArtifactId::new()).collect(), None),
            "over 1000 files",
        ),
    ] {
        let refused = f.alice.check_out_many(request).await;
        assert!(
            matches!(refused, Err(Error::Invalid(_))),
            "{what}: {refused:?}"
        );
    }
    let unknown = f
        .alice
        .check_out_many(together(vec![files[0].id, ArtifactId::new()], None))
        .await;
    assert!(matches!(unknown, Err(Error::NotFound(_))), "{unknown:?}");
    assert_eq!(
        f.artifact(files[0].id).await.lease,
        None,
        "nothing was taken"
    );
}

/// Alice's check-outs of `files` lapse, and bob commits a new version of
/// the second file meanwhile: her change of them is stale.
async fn stale_change(f: &Fixture, files: &[Artifact]) -> (Vec<Checkout>, Change) {
    let taken = take(f.alice.as_ref(), files, Some(60)).await;
    f.advance(Duration::from_secs(61));
    check_out_and_in_as(f.bob.as_ref(), files[1].id, b"b by bob").await;
    let alices = |n, _: &Checkout| format!("alice's {n}");
    let change = stage_and_commit(f.alice.as_ref(), &taken, alices, "alice's take").await;
    (taken, change)
}

fn proposal_in(file: &ChangeFile) -> &Proposal {
    match &file.result {
        CheckinResult::Proposal { proposal } => proposal,
        other => panic!("expected a proposal, got {other:?}"),
    }
}

async fn one_stale_file_keeps_the_whole_change_as_proposals(f: Fixture) {
    let files = three_files(&f).await;
    let (taken, change) = stale_change(&f, &files).await;
    assert_eq!(change.outcome, ChangeOutcome::Proposal);
    for file in &change.files {
        let proposal = proposal_in(file);
        assert_eq!(proposal.change_id, Some(change.id));
        assert_eq!(proposal.message.as_deref(), Some("alice's take"));
        assert_eq!(proposal.state, ProposalState::Open);
    }
    assert_eq!(
        f.artifact(files[0].id).await.head.version,
        1,
        "a, current, did not commit"
    );
    assert_eq!(
        f.artifact(files[1].id).await.head.author,
        participant("user:bob")
    );
    for checkout in &taken {
        assert_eq!(
            f.alice.checkout(checkout.id).await.unwrap().state,
            CheckoutState::Closed
        );
    }
    assert_eq!(
        f.last_event("change.proposed").await.data["change_id"],
        change.id.to_string()
    );

    // Accepting one accepts all: each head is still its proposal's test digest.
    let accepted = f
        .alice
        .accept_proposal(proposal_in(&change.files[1]).id)
        .await
        .unwrap();
    assert_eq!(accepted.state, ProposalState::Accepted);
    for (n, file) in change.files.iter().enumerate() {
        let head = f.artifact(file.artifact_id).await.head;
        assert_eq!(head.digest, digest(format!("alice's {n}").as_bytes()));
        assert_eq!(head.change_id, Some(change.id));
        let proposal = f.alice.proposal(proposal_in(file).id).await.unwrap();
        assert_eq!(proposal.state, ProposalState::Accepted);
    }
}

async fn the_proposals_of_a_change_are_rebuilt_and_rejected_together(f: Fixture) {
    let files = three_files(&f).await;
    let (_, change) = stale_change(&f, &files).await;
    // Someone commits c meanwhile: its proposal is stale, so none is accepted.
    check_out_and_in_as(f.bob.as_ref(), files[2].id, b"c by bob").await;
    let refused = f
        .alice
        .accept_proposal(proposal_in(&change.files[0]).id)
        .await;
    assert!(
        matches!(refused, Err(Error::ProposalStale { .. })),
        "{refused:?}"
    );
    assert_eq!(
        f.artifact(files[0].id).await.head.version,
        1,
        "a was not accepted alone"
    );
    for file in &change.files {
        let proposal = f.alice.proposal(proposal_in(file).id).await.unwrap();
        assert_eq!(proposal.state, ProposalState::Open);
    }

    let rebuilt = f
        .alice
        .rebuild_proposal(proposal_in(&change.files[0]).id)
        .await
        .unwrap();
    assert_eq!(rebuilt.change_id, Some(change.id));
    let open = f
        .alice
        .proposals(ProposalFilter {
            artifact: None,
            state: Some(ProposalState::Open),
        })
        .await
        .unwrap();
    assert_eq!(open.len(), 3, "each file's proposal rebuilt: {open:?}");
    assert!(open.iter().all(|p| p.change_id == Some(change.id)));
    for file in &change.files {
        let old = f.alice.proposal(proposal_in(file).id).await.unwrap();
        assert_eq!(old.state, ProposalState::Superseded);
    }

    let rejected = f.alice.reject_proposal(open[2].id).await.unwrap();
    assert_eq!(rejected.state, ProposalState::Rejected);
    for p in &open {
        assert_eq!(
            f.alice.proposal(p.id).await.unwrap().state,
            ProposalState::Rejected
        );
    }
    assert_eq!(f.events_of("proposal.rejected").await.len(), 3);
}

async fn a_retried_change_returns_the_same_answer(f: Fixture) {
    let files = three_files(&f).await;
    let taken = take(f.alice.as_ref(), &files, None).await;
    let paths = |_, c: &Checkout| c.path.to_string();
    let first = stage_and_commit(f.alice.as_ref(), &taken, paths, "once").await;
    let mut reordered = change_of(&taken, "once");
    reordered.checkouts.reverse();
    assert_eq!(f.alice.commit_change(reordered).await.unwrap(), first);
    assert_eq!(
        f.events_of("change.committed").await.len(),
        1,
        "committed once"
    );
    let part = f.alice.commit_change(change_of(&taken[..2], "part")).await;
    assert!(matches!(part, Err(Error::CheckoutClosed(_))), "{part:?}");
}

async fn a_change_is_refused_before_anything_commits(f: Fixture) {
    let files = three_files(&f).await;
    let mine = take(f.alice.as_ref(), &files[..2], None).await;
    f.alice.stage(mine[0].id, bytes(b"a v2")).await.unwrap();
    let bobs = f
        .bob
        .check_out(files[2].id, checkout_request())
        .await
        .unwrap();
    f.bob.stage(bobs.id, bytes(b"c v2")).await.unwrap();
    let refused = f.alice.stage(bobs.id, bytes(b"alice's c")).await;
    assert!(matches!(refused, Err(Error::Forbidden(_))), "{refused:?}");
    let events = f.last_seq().await;

    let with_bobs = ChangeRequest {
        checkouts: vec![mine[0].id, bobs.id],
        message: None,
    };
    let refused = f.alice.commit_change(with_bobs).await;
    assert_forbidden(&refused, "another's check-out");
    let unstaged = f.alice.commit_change(change_of(&mine, "")).await;
    assert!(matches!(unstaged, Err(Error::NotStaged(_))), "{unstaged:?}");
    let twice = ChangeRequest {
        checkouts: vec![mine[0].id, mine[0].id],
        message: None,
    };
    let refused = f.alice.commit_change(twice).await;
    assert!(
        matches!(refused, Err(Error::Invalid(_))),
        "the same check-out twice: {refused:?}"
    );
    let none = f.alice.commit_change(ChangeRequest::default()).await;
    assert!(matches!(none, Err(Error::Invalid(_))), "{none:?}");
    let long = ChangeRequest {
        checkouts: vec![mine[0].id],
        message: Some("x".repeat(MAX_MESSAGE_BYTES + 1)),
    };
    let refused = f.alice.commit_change(long).await;
    assert!(matches!(refused, Err(Error::Invalid(_))), "{refused:?}");
    f.alice.cancel(mine[1].id).await.unwrap();
    let closed = f.alice.commit_change(change_of(&mine, "")).await;
    assert!(
        matches!(closed, Err(Error::CheckoutClosed(_))),
        "{closed:?}"
    );
    let staging_closed = f.alice.stage(mine[1].id, bytes(b"late")).await;
    assert!(
        matches!(staging_closed, Err(Error::CheckoutClosed(_))),
        "{staging_closed:?}"
    );

    assert_eq!(
        f.kinds_after(events).await,
        ["lease.released", "checkout.closed"],
        "only the cancel"
    );
    assert_eq!(f.artifact(files[0].id).await.head.version, 1);
    assert_eq!(
        f.alice.checkout(mine[0].id).await.unwrap().state,
        CheckoutState::Open
    );
    // What was staged still commits.
    let done = f
        .alice
        .commit_change(change_of(&mine[..1], "a alone"))
        .await
        .unwrap();
    assert_eq!(done.outcome, ChangeOutcome::Committed);
}

async fn a_change_with_two_checkouts_of_one_file_is_refused(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let first = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(Duration::from_secs(61));
    let second = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    for (checkout, data) in [(&first, b"first"), (&second, b"again")] {
        f.alice.stage(checkout.id, bytes(data)).await.unwrap();
    }
    let both = f
        .alice
        .commit_change(change_of(&[first, second.clone()], ""))
        .await;
    assert!(matches!(both, Err(Error::Invalid(_))), "{both:?}");
    assert_eq!(f.artifact(a.id).await.head.version, 1);
    assert!(all_proposals(f.alice.as_ref()).await.is_empty());
    let alone = f
        .alice
        .commit_change(change_of(&[second], ""))
        .await
        .unwrap();
    assert_eq!(alone.outcome, ChangeOutcome::Committed);
}

async fn two_changes_sharing_a_file_cannot_both_commit(f: Fixture) {
    let files = three_files(&f).await;
    let alices = take(f.alice.as_ref(), &files[..2], Some(60)).await;
    f.advance(Duration::from_secs(61));
    let bobs = take(f.bob.as_ref(), &files[1..], None).await;
    let theirs = |_, c: &Checkout| format!("{} by {}", c.path, c.actor);
    let bobs_change = stage_and_commit(f.bob.as_ref(), &bobs, theirs, "bob's").await;
    assert_eq!(bobs_change.outcome, ChangeOutcome::Committed);
    let alices_change = stage_and_commit(f.alice.as_ref(), &alices, theirs, "alice's").await;
    assert_eq!(
        alices_change.outcome,
        ChangeOutcome::Proposal,
        "the second is stale"
    );
    assert_eq!(
        f.artifact(files[1].id).await.head.author,
        participant("user:bob")
    );
    assert_eq!(f.artifact(files[0].id).await.head.version, 1);
}

async fn staged_bytes_that_nothing_commits_are_removed(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let checkout = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let hex = |d: &[u8]| digest(d).as_str().trim_start_matches("blake3:").to_owned();
    f.alice
        .stage(checkout.id, bytes(b"first try"))
        .await
        .unwrap();
    assert!(
        blob_files(f.dir.path()).contains(&hex(b"first try")),
        "kept while staged"
    );
    f.store.sweep().unwrap();
    assert!(
        blob_files(f.dir.path()).contains(&hex(b"first try")),
        "a sweep keeps staged bytes"
    );
    f.alice
        .stage(checkout.id, bytes(b"second try"))
        .await
        .unwrap();
    f.store.sweep().unwrap();
    assert!(
        !blob_files(f.dir.path()).contains(&hex(b"first try")),
        "replaced: removed"
    );
    f.alice.cancel(checkout.id).await.unwrap();
    f.store.sweep().unwrap();
    let files = blob_files(f.dir.path());
    assert!(
        !files.contains(&hex(b"second try")),
        "its check-out closed: removed"
    );
    assert_eq!(files, f.named_blobs(), "no blob that no row names");

    // Bytes staged by one check-out and committed by another stay.
    let first = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    f.alice.stage(first.id, bytes(b"shared")).await.unwrap();
    f.alice.check_in(first.id, bytes(b"shared")).await.unwrap();
    f.store.sweep().unwrap();
    assert!(
        blob_files(f.dir.path()).contains(&hex(b"shared")),
        "the version names it"
    );
}

crate::contract!(
    three_files_are_checked_out_together_and_in_as_one_change,
    a_checkout_of_several_files_is_all_or_none_and_names_every_busy_file,
    one_stale_file_keeps_the_whole_change_as_proposals,
    the_proposals_of_a_change_are_rebuilt_and_rejected_together,
    a_retried_change_returns_the_same_answer,
    a_change_is_refused_before_anything_commits,
    two_changes_sharing_a_file_cannot_both_commit,
    a_change_with_two_checkouts_of_one_file_is_refused,
);

mod blob_folder {
    use super::*;

    crate::contract_with_blob_folder!(staged_bytes_that_nothing_commits_are_removed);
}

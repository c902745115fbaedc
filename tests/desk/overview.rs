//! The files view: holders, local states, your check-outs, a lapse, a dropped
//! file, a proposal beside the head, the newest events, a file held elsewhere.

use super::*;

async fn the_overview_shows_holders_local_states_and_your_own_check_outs(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("brand/hero.psd", b"v1").await;
    let b = f.import("brand/logo.ai", b"v1").await;
    alice.check_out(a.id, with_note("sky"), None).await.unwrap();
    f.bob
        .check_out(b.id, with_note("print crop"))
        .await
        .unwrap();

    let overview = alice.overview().await.unwrap();
    assert_eq!(overview.me, participant("user:alice"));
    assert_eq!(overview.changes.total, 2);
    assert_eq!(
        overview.involved.len(),
        1,
        "the one file alice's check-out names"
    );
    let files = rows_listed(&alice).await;
    let row = |id| files.iter().find(|r| r.artifact.id == id).unwrap();
    let (hero, logo) = (row(a.id), row(b.id));
    assert_eq!(hero.local, LocalState::UpToDate);
    assert!(hero.mine.is_some(), "alice's own check-out is on her row");
    assert_eq!(logo.local, LocalState::NotLocal);
    assert!(logo.mine.is_none());
    let lease = logo.artifact.lease.as_ref().expect("bob's lease");
    assert_eq!(lease.participant, participant("user:bob"));
    assert_eq!(lease.note.as_deref(), Some("print crop"));
    assert_eq!(overview.checkouts.len(), 1);
    assert_eq!(overview.checkouts[0].artifact_id, a.id);
}

/// A lapsed check-out stays open (its check-in would be kept as a proposal);
/// checking the file out again opens a second one, and that one, which holds
/// the lease, is what the row shows and acts on, in the list and alone.
async fn after_a_lapse_the_row_shows_the_newest_check_out(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("hero.psd", b"v1").await;
    let lapsed = alice.check_out(a.id, for_seconds(60), None).await.unwrap();
    f.advance(std::time::Duration::from_secs(120));
    let again = alice
        .check_out(a.id, checkout_request(), None)
        .await
        .unwrap();
    assert_ne!(lapsed.checkout.id, again.checkout.id);

    let files = rows_listed(&alice).await;
    let listed = files.iter().find(|r| r.artifact.id == a.id).unwrap();
    assert_eq!(listed.mine.as_ref().unwrap().id, again.checkout.id);
    let alone = alice.row(a.id).await.unwrap();
    assert_eq!(alone.mine.as_ref().unwrap().id, again.checkout.id);
}

async fn a_changed_copy_is_checking_until_hashed_then_modified(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("hero.psd", b"v1").await;
    alice
        .check_out(a.id, checkout_request(), None)
        .await
        .unwrap();
    let local = alice.workspace().local_path(&a.path).unwrap();
    let temp = local.with_extension("tmp~");
    std::fs::write(&temp, b"changed").unwrap();
    std::fs::rename(&temp, &local).unwrap();

    let overview = alice.overview().await.unwrap();
    assert_eq!(
        overview.involved[0].local,
        LocalState::Checking,
        "listing never waits for a hash"
    );
    assert_eq!(rows_listed(&alice).await[0].local, LocalState::Checking);
    assert_eq!(Desk::stale_digests(&overview), vec![a.path.clone()]);
    let row = alice.row(a.id).await.unwrap();
    assert_eq!(row.local, LocalState::Modified);
    let again = rows_listed(&alice).await;
    assert_eq!(
        again[0].local,
        LocalState::Modified,
        "the hash is remembered"
    );
}

async fn a_dropped_file_is_added_under_the_folder_in_view(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let source = f.dir.path().join("hero.psd");
    std::fs::write(&source, b"v1").unwrap();
    let added = alice.add(&source, "brand/").await.unwrap();
    assert_eq!(added.path, path("brand/hero.psd"));
    let top = f.dir.path().join("notes.txt");
    std::fs::write(&top, b"n").unwrap();
    assert_eq!(alice.add(&top, "").await.unwrap().path, path("notes.txt"));
}

/// "Download to compare": the author's own backup where it has the bytes; a
/// reviewer gets a read-only copy beside the head, from either backend.
async fn a_proposal_opens_as_a_file_beside_the_head(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let admin = desk_for(&f, &f.admin, "admin");
    let a = f.import("brand/hero.psd", b"v1").await;
    let mine = alice.check_out(a.id, for_seconds(60), None).await.unwrap();
    let local = alice.workspace().local_path(&a.path).unwrap();
    std::fs::write(&local, b"alice's sky").unwrap();
    f.advance(std::time::Duration::from_secs(120));
    check_out_and_in_as(f.bob.as_ref(), a.id, b"bob's v2").await;
    let closed = alice
        .check_in(mine.checkout.id, None, Watch::default())
        .await
        .unwrap();
    let Some(CheckinResult::Proposal { proposal }) = closed.checkout.result else {
        panic!("a proposal: {:?}", closed.checkout.result);
    };

    let hers = alice.proposal_file(a.id, proposal.id).await.unwrap();
    assert_eq!(
        Some(&hers),
        closed.backup.as_ref(),
        "her own backup, not a copy"
    );
    assert_eq!(std::fs::read(&hers).unwrap(), b"alice's sky");

    // A reviewer gets it from either backend (GET /v1/proposals/{id}/content).
    let copy = admin.proposal_file(a.id, proposal.id).await.unwrap();
    assert_eq!(
        copy,
        admin
            .workspace()
            .local_path(&a.path)
            .unwrap()
            .with_file_name("hero (alice's proposal against v2).psd")
    );
    assert_eq!(std::fs::read(&copy).unwrap(), b"alice's sky");
    assert!(std::fs::metadata(&copy).unwrap().permissions().readonly());
    assert_eq!(
        admin.proposal_file(a.id, proposal.id).await.unwrap(),
        copy,
        "asked again, the same file"
    );
    let unknown = admin.proposal_file(a.id, ProposalId::new()).await;
    assert!(
        matches!(unknown, Err(leasedesk::Error::NotFound(_))),
        "{unknown:?}"
    );
}

/// The ledger's end and its newest events, found without reading it all.
async fn the_newest_events_come_without_reading_the_whole_ledger(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    assert_eq!(alice.last_event_seq().await.unwrap(), 0);
    assert!(alice.recent_events(10).await.unwrap().is_empty());
    for i in 0..37 {
        f.import(&format!("shots/{i}.exr"), b"frame").await;
    }
    let all = f.all_events().await;
    assert!(all.len() >= 37);
    let newest = all.last().unwrap().seq;
    assert_eq!(alice.last_event_seq().await.unwrap(), newest);
    let recent = alice.recent_events(5).await.unwrap();
    let expected: Vec<u64> = all.iter().rev().take(5).map(|e| e.seq).collect();
    assert_eq!(recent.iter().map(|e| e.seq).collect::<Vec<_>>(), expected);
    assert_eq!(
        alice.recent_events(1000).await.unwrap().len(),
        all.len(),
        "asking for more than there are gives them all"
    );
}

/// The activity names the files of its events by path, from the mirror,
/// whether or not the window has their rows: a change's files, and a file
/// added since the mirror was last brought up to date. A file bob may not
/// read is named nowhere: no event of it comes, and no path (issue 36).
async fn the_activity_names_the_files_of_its_events(f: Fixture) {
    let secret = f.import("secret/plan.psd", b"v1").await;
    f.hide("secret/", "user:bob").await;
    let mut files = Vec::new();
    for name in ["a", "b", "c"] {
        files.push(f.import(&format!("art/{name}.png"), b"v1").await);
    }
    let bob = desk_for(&f, &f.bob, "bob");
    bob.overview().await.unwrap();
    // alice checks in a change of the three, and works on the secret file.
    let request = CheckoutsRequest {
        artifact_ids: files.iter().map(|a| a.id).collect(),
        ttl_seconds: None,
        note: None,
    };
    let taken = f.alice.check_out_many(request).await.unwrap();
    for checkout in &taken {
        f.alice.stage(checkout.id, bytes(b"v2")).await.unwrap();
    }
    let change = ChangeRequest {
        checkouts: taken.iter().map(|c| c.id).collect(),
        message: None,
    };
    f.alice.commit_change(change).await.unwrap();
    f.check_out_and_cancel(secret.id).await;
    files.push(f.import("art/new.png", b"new").await);

    let activity = bob.recent_activity(100).await.unwrap();
    let expected: std::collections::BTreeMap<ArtifactId, RepoPath> =
        files.iter().map(|a| (a.id, a.path.clone())).collect();
    assert_eq!(activity.paths, expected);
    assert!(
        activity
            .events
            .iter()
            .all(|e| e.artifact_id != Some(secret.id)),
        "{:?}",
        activity.events
    );
    let change = activity
        .events
        .iter()
        .find(|e| e.kind == "change.committed")
        .expect("the change");
    assert_eq!(change.data["files"].as_array().unwrap().len(), 3);
    // The window asks for the files of the events it is told of.
    let asked = [files[0].id, secret.id, ArtifactId::new()];
    assert_eq!(
        bob.paths(&asked).await,
        [(files[0].id, files[0].path.clone())].into()
    );
}

/// A file you checked out elsewhere (the CLI) and never had here: "not on this
/// computer", not "missing". Getting it brings the checked-out version here as
/// your copy to edit, and leaves the lease and the ledger alone.
async fn a_file_you_hold_that_never_came_here_is_not_local_and_can_be_got(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("brand/hero.psd", b"v1").await;
    let elsewhere = f.alice.check_out(a.id, for_seconds(75)).await.unwrap();
    let row = alice.row(a.id).await.unwrap();
    assert_eq!(
        row.local,
        LocalState::NotLocal,
        "never here, so not missing"
    );
    assert_eq!(row.mine.as_ref().map(|c| c.id), Some(elsewhere.id));
    assert_eq!(rows_listed(&alice).await[0].local, LocalState::NotLocal);

    let ledger = f.all_events().await.len();
    let lease = f.alice.artifact(a.id).await.unwrap().lease;
    let got = alice.get_copy(elsewhere.id, None).await.unwrap();
    assert_eq!(got.checkout.id, elsewhere.id);
    assert_eq!(got.backup, None);
    let local = alice.workspace().local_path(&a.path).unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"v1");
    assert!(workspace::is_writable(&local), "your copy, to edit");
    assert_eq!(alice.row(a.id).await.unwrap().local, LocalState::UpToDate);
    assert_eq!(f.all_events().await.len(), ledger, "no lease change");
    assert_eq!(f.alice.artifact(a.id).await.unwrap().lease, lease);

    // Here once and gone: that is missing, and it can be got again.
    std::fs::remove_file(&local).unwrap();
    assert_eq!(alice.row(a.id).await.unwrap().local, LocalState::Missing);
    alice.get_copy(elsewhere.id, None).await.unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"v1");
    // Asked again over your changes, it keeps them: they are your edit.
    std::fs::write(&local, b"alice's sky").unwrap();
    alice.get_copy(elsewhere.id, None).await.unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"alice's sky");
    let closed = alice
        .check_in(elsewhere.id, None, Watch::default())
        .await
        .unwrap();
    assert_committed(&closed.checkout.result, 2);
    let ended = alice.get_copy(elsewhere.id, None).await;
    assert!(
        matches!(ended, Err(leasedesk::Error::CheckoutClosed(_))),
        "{ended:?}"
    );

    // Someone else's check-out is not yours to get.
    let b = f.import("brand/logo.ai", b"logo").await;
    let bobs = f.bob.check_out(b.id, checkout_request()).await.unwrap();
    let refused = alice.get_copy(bobs.id, None).await;
    assert!(refused.is_err(), "{refused:?}");
    assert!(!alice.workspace().local_path(&b.path).unwrap().exists());
}

crate::contract!(
    a_file_you_hold_that_never_came_here_is_not_local_and_can_be_got,
    after_a_lapse_the_row_shows_the_newest_check_out,
    the_overview_shows_holders_local_states_and_your_own_check_outs,
    a_changed_copy_is_checking_until_hashed_then_modified,
    a_dropped_file_is_added_under_the_folder_in_view,
    a_proposal_opens_as_a_file_beside_the_head,
    the_newest_events_come_without_reading_the_whole_ledger,
    the_activity_names_the_files_of_its_events,
);

//! `leasedesk migrate`: a data folder with a history copied into PostgreSQL
//! and a blob store, every row and blob as it was.

use std::time::Duration;

use leasedesk::bundled::MigrationStep;
use leasedesk::failpoint::{self, Action, Failpoints};
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Error, Location, Options, Studio};

use crate::harness::*;

/// A data folder with a bit of everything: descriptions, a committed and an
/// open check-out, a stale check-in kept as a proposal (rejected, and one
/// accepted), an agent's edit, a lapse, a broken lease, a rename and a revoked token.
async fn history(f: &Fixture) -> (ArtifactId, String, String) {
    let a = f.import("a.psd", b"a1").await;
    let b = f.import("b.psd", b"b1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    f.alice
        .check_in(c.id, bytes(b"a2").with_message("the sky"))
        .await
        .unwrap();
    // Alice's lease lapses, Bob takes the file and commits: her check-in is a proposal.
    let late = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(Duration::from_secs(120));
    f.store.sweep().unwrap();
    check_out_and_in_as(f.bob.as_ref(), a.id, b"a3").await;
    let proposed = f.alice.check_in(late.id, bytes(b"a-late")).await.unwrap();
    let Some(CheckinResult::Proposal { proposal }) = proposed.result else {
        panic!("a proposal: {:?}", proposed.result)
    };
    f.alice.reject_proposal(proposal.id).await.unwrap();
    leasedesk::agent::run_edit(f.agent.clone(), b.id, Duration::from_secs(30), |_| async {
        Ok(bytes(b"b2"))
    })
    .await
    .unwrap();
    let held = f.bob.check_out(b.id, with_note("proofing")).await.unwrap();
    f.admin.break_lease(b.id, "Bob is away").await.unwrap();
    let _ = held;
    f.admin.rename(b.id, &path("renamed/b.psd")).await.unwrap();
    f.alice
        .check_out(a.id, with_note("still mine"))
        .await
        .unwrap();
    f.bob.ask(a.id, Some("may I?")).await.unwrap();
    // Review: a pinned thread with a mention, an answer, a decision, a request, a read mark.
    let pinned = NewThread {
        version: Some(2),
        pin: Some(Pin {
            x: 0.125,
            y: 0.75,
            w: Some(0.25),
            h: Some(0.125),
        }),
        image: Some(ImageSize {
            width: 640,
            height: 480,
        }),
        body: "@admin the sky".into(),
        ..NewThread::default()
    };
    let thread = f.bob.open_thread(a.id, pinned).await.unwrap();
    f.alice.comment(thread.id, "fixed").await.unwrap();
    let decided = NewReview {
        version: Some(2),
        decision: ReviewDecision::Approved,
        ..NewReview::default()
    };
    f.bob.review(a.id, decided).await.unwrap();
    let asked = NewReviewRequest {
        version: Some(3),
        reviewers: vec![participant("user:admin")],
        ..NewReviewRequest::default()
    };
    f.alice.request_review(a.id, asked).await.unwrap();
    let first = f.admin.inbox(InboxQuery::default()).await.unwrap().items[0].seq;
    f.admin.mark_inbox_read(first).await.unwrap();
    let kept_token = f.store.new_token(&participant("user:alice")).unwrap();
    let revoked_token = f.store.new_token(&participant("user:bob")).unwrap();
    f.store.revoke_tokens(&participant("user:bob")).unwrap();
    (a.id, kept_token, revoked_token)
}

fn team_location(dir: &std::path::Path, database: &str) -> Location {
    Location {
        data: dir.to_owned(),
        database: Some(database.to_owned()),
        blobs: None,
    }
}

/// A team's store on a new PostgreSQL database, its data folder in the temp
/// folder answered beside it, on the fixture's clock.
async fn new_team(f: &Fixture) -> (tempfile::TempDir, Bundled) {
    let dir = tempfile::tempdir().unwrap();
    let location = team_location(dir.path(), &postgres_database());
    (dir, open_team(f, location, Failpoints::default()).await)
}

/// The team's store, on the fixture's clock (a lease live there is live here).
async fn open_team(f: &Fixture, location: Location, failpoints: Failpoints) -> Bundled {
    let clock = f.clock.clone();
    tokio::task::spawn_blocking(move || {
        Bundled::open_at(
            &location,
            Options {
                failpoints,
                clock,
                ..Options::default()
            },
        )
    })
    .await
    .unwrap()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_folder_moves_with_every_row_and_blob() {
    let f = fixture();
    let (a, token, revoked) = history(&f).await;
    let waiting = f
        .store
        .as_owner()
        .invite(InviteRequest {
            name: "dana".into(),
            ..InviteRequest::default()
        })
        .await
        .unwrap();
    // Git's side: a path held with no file, and an LFS object.
    let hold = f
        .store
        .acting_as(participant("user:bob"))
        .git_lock(&path("art/plan.psd"))
        .await
        .unwrap();
    let object = b"an LFS object's bytes";
    let oid: String = ring::digest::digest(&ring::digest::SHA256, object)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    f.store
        .acting_as(participant("user:alice"))
        .lfs_upload("art", &oid, object.len() as u64, &object[..])
        .await
        .unwrap();
    let (_dir, team) = new_team(&f).await;
    let mut copied = 0;
    let counts = f
        .store
        .migrate_into(&team, |step| {
            if let MigrationStep::BlobCopied(..) = step {
                copied += 1
            }
        })
        .await
        .unwrap();
    let named = f.named_blobs();
    assert_eq!(copied, named.len(), "every named blob copied");
    let count = |table: &str| counts.iter().find(|(t, _)| *t == table).unwrap().1;
    assert_eq!(
        count("events") as usize,
        all_events(f.alice.as_ref()).await.len()
    );
    assert_eq!(count("participants"), 4);
    assert_eq!(count("requests"), 1);
    assert_eq!(
        (
            count("review_threads"),
            count("review_comments"),
            count("reviews")
        ),
        (1, 2, 1)
    );

    // The same ledger, users, artifacts, versions (and their bytes) and proposals.
    let before = f.store.acting_as(participant("user:alice"));
    let after = team.acting_as(participant("user:alice"));
    assert_eq!(all_events(&after).await, all_events(&before).await);
    assert_eq!(team.accounts().unwrap(), f.store.accounts().unwrap());
    assert_eq!(
        after.requests(false).await.unwrap(),
        before.requests(false).await.unwrap()
    );
    assert_eq!(
        after.artifacts().await.unwrap(),
        before.artifacts().await.unwrap()
    );
    let reviewed = all_events(&before)
        .await
        .iter()
        .find_map(|e| (e.kind == "thread.opened").then_some(e.artifact_id))
        .flatten()
        .unwrap();
    let every_thread = ThreadQuery::default();
    assert_eq!(
        after.threads(reviewed, every_thread).await.unwrap(),
        before.threads(reviewed, every_thread).await.unwrap()
    );
    for target in [ReviewTarget::Version(2), ReviewTarget::Version(3)] {
        assert_eq!(
            after.reviews(reviewed, target).await.unwrap(),
            before.reviews(reviewed, target).await.unwrap()
        );
    }
    let admin_before = f.store.acting_as(participant("user:admin"));
    let admin_after = team.acting_as(participant("user:admin"));
    let inbox = admin_before.inbox(InboxQuery::default()).await.unwrap();
    assert_eq!((inbox.items.len(), inbox.unread), (2, 1));
    assert_eq!(
        admin_after.inbox(InboxQuery::default()).await.unwrap(),
        inbox
    );
    // New items are numbered after the copied ones.
    let thread = after.threads(reviewed, every_thread).await.unwrap()[0].id;
    team.acting_as(participant("user:bob"))
        .comment(thread, "@admin on the team")
        .await
        .unwrap();
    let grown = admin_after.inbox(InboxQuery::default()).await.unwrap();
    assert_eq!(grown.items.len(), 3);
    assert!(grown.items[2].seq > inbox.items[1].seq);
    for artifact in before.artifacts().await.unwrap() {
        let versions = before.versions(artifact.id).await.unwrap();
        assert_eq!(after.versions(artifact.id).await.unwrap(), versions);
        for v in versions {
            let bytes = read_content(&after, artifact.id, Some(v.version)).await;
            assert_eq!(
                digest(&bytes),
                v.digest,
                "version {} arrives whole",
                v.version
            );
        }
    }
    let all = ProposalFilter {
        artifact: None,
        state: None,
    };
    assert_eq!(
        after.proposals(all.clone()).await.unwrap(),
        before.proposals(all).await.unwrap()
    );
    assert_eq!(
        after.checkouts(false).await.unwrap(),
        before.checkouts(false).await.unwrap()
    );
    // The hold and the object moved.
    let query = GitLockQuery {
        folder: "art".into(),
        limit: 10,
        ..Default::default()
    };
    let locks = team
        .acting_as(participant("user:alice"))
        .git_locks(query)
        .await
        .unwrap();
    assert_eq!(locks.locks, [hold]);
    let (_, mut reader) = team
        .acting_as(participant("user:alice"))
        .lfs_download("art", &oid)
        .await
        .unwrap();
    let mut moved = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut moved)
        .await
        .unwrap();
    assert_eq!(moved, object);
    // Alice's open check-out still holds the file.
    assert!(after.artifact(a).await.unwrap().lease.is_some());
    // Tokens moved as hashes: a live one works, a revoked one does not.
    assert_eq!(
        team.authenticate(&token).await.unwrap().as_str(),
        "user:alice"
    );
    assert!(matches!(
        team.authenticate(&revoked).await,
        Err(Error::Unauthorized(_))
    ));
    // An invite waiting moved with its id and maker, and its code works there.
    let invites = team.as_owner().invites().await.unwrap();
    assert_eq!(invites, f.store.as_owner().invites().await.unwrap());
    assert_eq!(invites.len(), 1);
    let redeemed = team
        .redeem_invite(&waiting.code, "dana's laptop", None)
        .await
        .unwrap();
    assert_eq!(redeemed.participant.as_str(), "user:dana");
    // The team's store goes on from there, numbering events after the copied ones.
    let last = all_events(&after).await.last().unwrap().seq;
    after.import(&path("new.psd"), bytes(b"n")).await.unwrap();
    let seqs: Vec<u64> = all_events(&after).await.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert!(seqs.len() as u64 > last);

    // A second migration into a database that has rows is refused.
    let again = f.store.migrate_into(&team, |_| {}).await;
    assert!(
        matches!(&again, Err(Error::Exists(m)) if m.contains("not empty")),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_migration_leaves_no_rows_and_runs_again() {
    let f = fixture();
    history(&f).await;
    let database = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let location = team_location(dir.path(), &database);
    // Cut off with every row written but not committed.
    let failing = open_team(
        &f,
        location.clone(),
        Failpoints::new([(failpoint::at::MIGRATE_ROWS, Action::Error)]),
    )
    .await;
    assert!(f.store.migrate_into(&failing, |_| {}).await.is_err());
    let nothing = failing.acting_as(participant("user:alice"));
    assert!(
        nothing.artifacts().await.unwrap().is_empty(),
        "no row was left"
    );
    assert!(all_events(&nothing).await.is_empty());
    drop(failing);

    // Run again (a blob folder's open sweeps the blobs no row names, so
    // they are copied again; an object store keeps them: see tests/objects.rs).
    let team = open_team(&f, location, Failpoints::default()).await;
    let mut arrived = 0;
    f.store
        .migrate_into(&team, |step| match step {
            MigrationStep::BlobKept(..) | MigrationStep::BlobCopied(..) => arrived += 1,
        })
        .await
        .unwrap();
    assert_eq!(arrived, f.named_blobs().len());
    let after = team.acting_as(participant("user:alice"));
    assert_eq!(all_events(&after).await, all_events(f.alice.as_ref()).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_blob_stops_the_migration_naming_it() {
    let f = fixture();
    let a = f.import("a.psd", b"a1").await;
    let hex = a
        .head
        .digest
        .as_str()
        .trim_start_matches("blake3:")
        .to_owned();
    let blob = f.dir.path().join("blobs").join(&hex[..2]).join(&hex);
    std::fs::set_permissions(&blob, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::write(&blob, b"rot").unwrap();
    let (_dir, team) = new_team(&f).await;
    let refused = f.store.migrate_into(&team, |_| {}).await;
    assert!(
        matches!(&refused, Err(Error::Invalid(m)) if m.contains(&hex) && m.contains("damaged")),
        "{refused:?}"
    );
    let after = team.acting_as(participant("user:alice"));
    assert!(after.artifacts().await.unwrap().is_empty());
}

/// The command itself, into PostgreSQL and an S3 bucket: the team's servers
/// then serve every version from the bucket, and a second run is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leasedesk_migrate_moves_a_data_folder_into_postgres_and_s3() {
    let f = fixture();
    history(&f).await;
    let before = f.store.acting_as(participant("user:alice"));
    let bucket = s3();
    let database = postgres_database();
    let leasedesk = |args: &[&str]| {
        let mut command = crate::harness::leasedesk();
        bucket.apply(&mut command).args(args);
        command.output().unwrap()
    };
    let data = f.dir.path().to_str().unwrap().to_owned();
    let blobs = bucket.url("studio");
    let migrate = [
        "--data",
        &data,
        "migrate",
        "--to-database",
        &database,
        "--to-blobs",
        &blobs,
    ];
    let out = leasedesk(&migrate);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    let events = all_events(&before).await.len();
    assert!(said.contains(&format!("{events} events")), "{said}");
    let stored: Vec<String> = bucket
        .keys()
        .into_iter()
        .filter(|k| k.starts_with("studio/blobs/"))
        .collect();
    assert_eq!(stored.len(), f.named_blobs().len(), "{stored:?}");

    let scratch = tempfile::tempdir().unwrap();
    let team = open_team(
        &f,
        Location {
            data: scratch.path().to_owned(),
            database: Some(database.clone()),
            blobs: Some(blobs.clone()),
        },
        Failpoints::default(),
    )
    .await;
    let after = team.acting_as(participant("user:alice"));
    assert_eq!(all_events(&after).await, all_events(&before).await);
    assert_eq!(team.accounts().unwrap(), f.store.accounts().unwrap());
    for artifact in before.artifacts().await.unwrap() {
        for v in before.versions(artifact.id).await.unwrap() {
            let bytes = read_content(&after, artifact.id, Some(v.version)).await;
            assert_eq!(digest(&bytes), v.digest);
        }
    }
    drop(team);
    let again = leasedesk(&migrate);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("not empty"),
        "{again:?}"
    );
}

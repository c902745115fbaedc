//! Git LFS locks are leases (`docs/API.md`, "Git LFS"), on every
//! backend: a lock taken on Git's side is a check-out every client sees,
//! and a check-out is a lock to Git; locking again, lapsing, an admin's
//! break, a path with no file and folder permissions. Git's side is the
//! store's own (`Bundled::git_lock`, what the `/lfs` routes call); the
//! lease side is each backend's. tests/lfs.rs drives the routes with the
//! real git-lfs client.

use std::time::Duration;

use leasedesk::model::*;
use leasedesk::{Bundled, Error};

use crate::harness::*;

/// Git's side for `who`.
fn git(f: &Fixture, who: &str) -> Bundled {
    f.store.acting_as(participant(who))
}

/// The locks under `art/` that `who` sees.
async fn locks(f: &Fixture, who: &str) -> Vec<GitLock> {
    let query = GitLockQuery {
        folder: "art".into(),
        limit: 100,
        ..Default::default()
    };
    git(f, who).git_locks(query).await.unwrap().locks
}

async fn hero(f: &Fixture) -> Artifact {
    f.alice
        .import(&path("art/hero.psd"), bytes(b"8BPS"))
        .await
        .unwrap()
}

fn holder(result: Result<impl std::fmt::Debug, Error>) -> Participant {
    match result {
        Err(Error::ArtifactBusy {
            lease: Some(lease), ..
        }) => lease.participant,
        other => panic!("not busy: {other:?}"),
    }
}

fn refusal(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(Error::Forbidden(why)) => why,
        other => panic!("not forbidden: {other:?}"),
    }
}

async fn a_git_lock_is_a_check_out_and_a_check_out_a_git_lock(f: Fixture) {
    let hero = hero(&f).await;
    let lock = git(&f, "user:bob").git_lock(&hero.path).await.unwrap();
    // Every client sees bob's check-out, noted as Git's, for a week.
    let lease = f.alice.artifact(hero.id).await.unwrap().lease.unwrap();
    assert_eq!(lease.participant, participant("user:bob"));
    assert_eq!(lease.note.as_deref(), Some(GIT_LOCK_NOTE));
    assert_eq!(lease.checkout_id, Some(CheckoutId(lock.id)));
    assert_eq!(
        lease.expires_at - lease.acquired_at,
        chrono::Duration::hours(168)
    );
    let bobs: Vec<_> = f.bob.checkouts(true).await.unwrap();
    assert_eq!(bobs.len(), 1);
    assert_eq!(bobs[0].id, CheckoutId(lock.id));
    let refused = f.alice.check_out(hero.id, checkout_request()).await;
    assert_eq!(holder(refused), participant("user:bob"));
    // Cancelled from the app: Git lists nothing.
    f.bob.cancel(CheckoutId(lock.id)).await.unwrap();
    assert!(locks(&f, "user:alice").await.is_empty());

    // The reverse: alice's check-out is a lock to Git; Git's is refused.
    let checkout = f.alice.check_out(hero.id, for_seconds(3600)).await.unwrap();
    let listed = locks(&f, "user:bob").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, checkout.id.0);
    assert_eq!(listed[0].participant, participant("user:alice"));
    assert!(!listed[0].no_file);
    let refused = git(&f, "user:bob").git_lock(&hero.path).await;
    assert_eq!(holder(refused), participant("user:alice"));
}

async fn locking_again_takes_the_lease_again(f: Fixture) {
    let hero = hero(&f).await;
    let first = git(&f, "user:bob").git_lock(&hero.path).await.unwrap();
    f.clock.advance(Duration::from_secs(3600));
    let again = git(&f, "user:bob").git_lock(&hero.path).await.unwrap();
    assert_eq!(again.id, first.id, "the same lock");
    assert_eq!(
        again.expires_at - first.expires_at,
        chrono::Duration::hours(1)
    );
    let lease = f.alice.artifact(hero.id).await.unwrap().lease.unwrap();
    assert_eq!(lease.expires_at, again.expires_at);
    assert_eq!(f.bob.checkouts(true).await.unwrap().len(), 1);
}

async fn a_git_lock_lapses_like_any_lease(f: Fixture) {
    let hero = hero(&f).await;
    let lock = git(&f, "user:bob").git_lock(&hero.path).await.unwrap();
    f.clock.advance(Duration::from_secs(168 * 3600 + 1));
    assert!(
        locks(&f, "user:alice").await.is_empty(),
        "lapsed, it is gone"
    );
    f.alice
        .check_out(hero.id, checkout_request())
        .await
        .unwrap();
    // Bob's late check-in is a proposal, not a version.
    let late = f
        .bob
        .check_in(CheckoutId(lock.id), bytes(b"bob's late work"));
    proposal_of(late.await.unwrap());
}

async fn forcing_an_unlock_is_an_admins_break(f: Fixture) {
    let hero = hero(&f).await;
    let lock = git(&f, "user:bob").git_lock(&hero.path).await.unwrap();
    let plain = refusal(
        git(&f, "user:alice")
            .git_unlock("art", lock.id, false)
            .await,
    );
    assert!(plain.contains("user:bob"), "{plain}");
    let forced = refusal(git(&f, "user:alice").git_unlock("art", lock.id, true).await);
    assert!(forced.contains("only an admin"), "{forced}");
    assert_eq!(locks(&f, "user:alice").await.len(), 1, "still bob's");

    git(&f, "user:admin")
        .git_unlock("art", lock.id, true)
        .await
        .unwrap();
    assert!(locks(&f, "user:alice").await.is_empty());
    assert!(f.alice.artifact(hero.id).await.unwrap().lease.is_none());
    // A broken lease's check-in is a proposal.
    let late = f
        .bob
        .check_in(CheckoutId(lock.id), bytes(b"bob's broken work"));
    proposal_of(late.await.unwrap());
}

async fn a_path_with_no_file_is_held_all_the_same(f: Fixture) {
    let new = path("art/new.psd");
    let held = git(&f, "user:bob").git_lock(&new).await.unwrap();
    assert!(held.no_file);
    let listed = locks(&f, "user:alice").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, held.id);
    // Someone else's import there is busy, naming bob.
    let refused = f.alice.import(&new, bytes(b"alice's")).await;
    assert_eq!(holder(refused), participant("user:bob"));
    // Bob's import makes the hold his check-out of the file, same id.
    let made = f.bob.import(&new, bytes(b"bob's")).await.unwrap();
    let lease = f.alice.artifact(made.id).await.unwrap().lease.unwrap();
    assert_eq!(lease.checkout_id, Some(CheckoutId(held.id)));
    assert_eq!(lease.expires_at, held.expires_at);
    let listed = locks(&f, "user:alice").await;
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].no_file, "a file now");
    // Lapsed, a hold is no hold.
    let other = path("art/other.psd");
    git(&f, "user:bob").git_lock(&other).await.unwrap();
    f.clock.advance(Duration::from_secs(168 * 3600 + 1));
    f.alice.import(&other, bytes(b"alice's")).await.unwrap();
}

async fn folder_permissions_hold_for_git_locks(f: Fixture) {
    let hero = hero(&f).await;
    let lock = git(&f, "user:bob").git_lock(&hero.path).await.unwrap();
    let rule = |level: &str| vec![Rule::parse("art/", "user:alice", level).unwrap()];
    f.studio("user:admin")
        .put_permission_rules(rule("read"))
        .await
        .unwrap();
    // `read` lists the lock, and may not lock.
    assert_eq!(locks(&f, "user:alice").await[0].id, lock.id);
    let why = refusal(git(&f, "user:alice").git_lock(&path("art/mine.psd")).await);
    assert!(why.contains("art/"), "{why}");

    // `none` hides it, and refuses a lock the same whatever is there.
    f.studio("user:admin")
        .put_permission_rules(rule("none"))
        .await
        .unwrap();
    assert!(locks(&f, "user:alice").await.is_empty());
    let on_a_file = refusal(git(&f, "user:alice").git_lock(&hero.path).await);
    let on_nothing = refusal(
        git(&f, "user:alice")
            .git_lock(&path("art/nothing.psd"))
            .await,
    );
    assert_eq!(on_a_file, on_nothing);
    assert!(on_a_file.contains("art/"), "{on_a_file}");
    let unlock = refusal(git(&f, "user:alice").git_unlock("art", lock.id, true).await);
    assert!(unlock.contains("art/"), "{unlock}");
    assert_eq!(locks(&f, "user:bob").await.len(), 1, "bob's lock stands");
}

crate::contract!(
    a_git_lock_is_a_check_out_and_a_check_out_a_git_lock,
    locking_again_takes_the_lease_again,
    a_git_lock_lapses_like_any_lease,
    forcing_an_unlock_is_an_admins_break,
    a_path_with_no_file_is_held_all_the_same,
    folder_permissions_hold_for_git_locks,
);

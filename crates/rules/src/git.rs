//! Git LFS locks (`docs/API.md`, "Git LFS"): a lock is a check-out with
//! the note "Locked from Git" and the studio's Git lock time, taken again
//! by locking again; a lock on a path with no file yet holds the path (a
//! `HeldPath` row) until its holder imports the file there, which makes it
//! a check-out of that file with the same id. Every live lease under a
//! folder is a lock to Git. Unlocking cancels the check-out; forcing is an
//! admin's break. Folder permissions as everywhere. Never reads the clock:
//! every function takes `now`.

use super::access::{Caller, DecidingRule};
use super::checkouts::{cancel, check_out, extend, record_open, OpenedCheckout};
use super::collisions::refuse_collisions;
use super::leases::{acquire_via, after, break_lease, checkout_lease, live_lease, Via};
use super::{is_admin, load_artifact, Refusable};
use crate::error::{Error, Result};
use crate::failpoint::Failpoints;
use crate::model::*;
use crate::store::rows::Under;
use crate::store::{HeldPath, LeaseAt, Tx};

/// What a Git lock's events say they came through.
const GIT: Via = Some("git");

/// The reason an admin's forced unlock gives, as a break's.
const FORCED: &str = "unlocked from Git with --force";

/// The refusal of a folder's rule to a lock or unlock there: it names the
/// folder, the same whatever is at the path.
fn refused_by_folder(decision: &DecidingRule, what: &str) -> Error {
    let folder = decision.folder.as_deref().unwrap_or("this store");
    match decision.level {
        Level::Read => Error::Forbidden(format!("you can view {folder}, not {what} files in it")),
        _ => Error::Forbidden(format!("you may not {what} files in {folder}")),
    }
}

/// The lease a path with no file is held under (for a busy refusal).
fn held_lease(held: &HeldPath) -> Lease {
    checkout_lease(
        held.id,
        &held.participant,
        held.note.clone(),
        held.acquired_at,
        held.expires_at,
    )
}

/// A hold as the held list gives it: the path and the lease it is held under.
pub(super) fn hold_of(held: &HeldPath) -> PathHold {
    PathHold {
        path: held.path.clone(),
        lease: held_lease(held),
    }
}

fn lock_of_held(held: HeldPath) -> GitLock {
    let lease = held_lease(&held);
    GitLock {
        no_file: true,
        ..lock_of_lease(held.path, lease)
    }
}

/// The lock of a live lease: the check-out's id, or the edit's.
fn lock_of_lease(path: RepoPath, lease: Lease) -> GitLock {
    let id = match lease.checkout_id {
        Some(id) => id.0,
        None => lease
            .holder
            .strip_prefix("edit:")
            .and_then(|id| id.parse().ok())
            .unwrap_or_default(),
    };
    GitLock {
        id,
        path,
        participant: lease.participant,
        note: lease.note,
        locked_at: lease.acquired_at,
        expires_at: lease.expires_at,
        no_file: false,
    }
}

fn lock_of_checkout(checkout: Checkout) -> GitLock {
    let lease = checkout_lease(
        checkout.id,
        &checkout.actor,
        checkout.note,
        checkout.created_at,
        checkout.expires_at,
    );
    lock_of_lease(checkout.path, lease)
}

/// Locks `path` for `actor` for `ttl` seconds: a check-out of the file
/// there, the same check-out taken again if the actor holds it already, or
/// a hold on the path if no file is there.
pub fn lock(
    tx: &dyn Tx,
    actor: &Participant,
    device: Option<&DeviceRef>,
    path: &RepoPath,
    ttl: u64,
    now: Timestamp,
    failpoints: &Failpoints,
) -> Refusable<GitLock> {
    let caller = Caller::of(tx, actor)?;
    let decision = caller.decide(path);
    if decision.level != Level::Write {
        return Err(refused_by_folder(&decision, "lock"));
    }
    if let Some(id) = tx.artifact_id_by_path(path)? {
        let mut artifact = load_artifact(tx, id)?;
        if let Some(lease) = live_lease(tx, &mut artifact, now)? {
            if let (Some(checkout), true) = (lease.checkout_id, lease.participant == *actor) {
                let extended = extend(tx, actor, checkout, Some(ttl), now, GIT)?;
                return Ok(extended.map(lock_of_checkout));
            }
        }
        let request = CheckoutRequest {
            ttl_seconds: Some(ttl),
            note: Some(GIT_LOCK_NOTE.into()),
        };
        let taken = check_out(tx, actor, device, id, &request, now, failpoints, GIT)?;
        return Ok(taken.map(lock_of_checkout));
    }
    refuse_collisions(tx, &caller, path, None)?;
    let key = path.collision_key();
    let id = match tx.held_path(&key)? {
        Some(held) if held.expires_at > now && held.participant != *actor => {
            return Ok(Err(Error::ArtifactBusy {
                path: held.path.to_string(),
                lease: Some(Box::new(held_lease(&held))),
            }));
        }
        Some(held) if held.expires_at > now => held.id,
        _ => CheckoutId::new(),
    };
    let acquired_at = match tx.held_path_by_id(id)? {
        Some(held) if held.expires_at > now => held.acquired_at,
        _ => now,
    };
    let held = HeldPath {
        id,
        path: path.clone(),
        participant: actor.clone(),
        note: Some(GIT_LOCK_NOTE.into()),
        acquired_at,
        expires_at: after(now, ttl),
        device: device.cloned(),
    };
    tx.put_held_path(&held)?;
    Ok(Ok(lock_of_held(held)))
}

/// The live hold on `path` with no file there, forgetting a lapsed one.
fn live_hold(tx: &dyn Tx, path: &RepoPath, now: Timestamp) -> Result<Option<HeldPath>> {
    let key = path.collision_key();
    match tx.held_path(&key)? {
        Some(held) if held.expires_at > now => Ok(Some(held)),
        Some(_) => {
            tx.delete_held_path(&key)?;
            Ok(None)
        }
        None => Ok(None),
    }
}

/// Before an import to `path`: refuses it while someone else holds the
/// path (409 `artifact_busy`, naming them). Only reads, so the import's
/// precheck refuses before a byte is read; a lapsed hold is left for a
/// write to forget.
pub(super) fn refuse_held(
    tx: &dyn Tx,
    actor: &Participant,
    path: &RepoPath,
    now: Timestamp,
) -> Result<()> {
    match tx.held_path(&path.collision_key())? {
        Some(held) if held.expires_at > now && held.participant != *actor => {
            Err(Error::ArtifactBusy {
                path: held.path.to_string(),
                lease: Some(Box::new(held_lease(&held))),
            })
        }
        _ => Ok(()),
    }
}

/// After an import of `artifact` by `actor`: the actor's hold on its path
/// becomes an open check-out of it, with the hold's id and expiry.
pub(super) fn adopt_hold(
    tx: &dyn Tx,
    actor: &Participant,
    artifact: &mut Artifact,
    now: Timestamp,
) -> Result<()> {
    let Some(held) = live_hold(tx, &artifact.path, now)? else {
        return Ok(());
    };
    if held.participant != *actor {
        return Ok(());
    }
    tx.delete_held_path(&artifact.path.collision_key())?;
    let wanted = checkout_lease(held.id, actor, held.note.clone(), now, held.expires_at);
    let lease = acquire_via(tx, artifact, wanted, now, GIT)??;
    let opened = OpenedCheckout {
        id: held.id,
        note: held.note,
        created_at: held.acquired_at,
        device: held.device,
    };
    record_open(tx, actor, artifact, &lease, opened, now, GIT).map(drop)
}

/// The live locks under `query.folder` the actor may see, by path, a page.
pub fn locks(
    tx: &dyn Tx,
    actor: &Participant,
    query: &GitLockQuery,
    now: Timestamp,
) -> Result<GitLockPage> {
    let caller = Caller::of(tx, actor)?;
    let folder = format!("{}/", query.folder);
    let seen = |path: &RepoPath| caller.level(path) != Level::None;
    if query.path.is_some() || query.id.is_some() {
        let found = match (&query.path, query.id) {
            (Some(path), _) => lock_at(tx, path, now)?,
            (None, Some(id)) => lock_of_id(tx, id, now)?,
            (None, None) => None,
        };
        let locks = found
            .filter(|lock| lock.path.as_str().starts_with(&folder) && seen(&lock.path))
            .filter(|lock| query.id.is_none_or(|id| lock.id == id))
            .filter(|lock| query.path.as_ref().is_none_or(|p| lock.path == *p))
            .into_iter()
            .collect();
        return Ok(GitLockPage { locks, next: None });
    }
    let limit = query.limit.clamp(1, MAX_GIT_LOCKS_PAGE) as usize;
    let mut after = query.after.clone().unwrap_or_default();
    let mut locks: Vec<GitLock> = Vec::new();
    // Hidden locks are skipped, never counted: the page fills from beyond them.
    loop {
        let batch = (limit + 1) as u32;
        let under = Under::new(&folder, &after, batch, now);
        let leases = tx.leases_under(&under)?;
        let holds = tx.held_paths_under(&under)?;
        let exhausted = leases.len() < batch as usize && holds.len() < batch as usize;
        let mut merged: Vec<GitLock> = leases
            .into_iter()
            .map(|LeaseAt { path, lease, .. }| lock_of_lease(path, lease))
            .chain(holds.into_iter().map(lock_of_held))
            .collect();
        merged.sort_by(|a, b| a.path.as_str().cmp(b.path.as_str()));
        merged.truncate(batch as usize);
        let Some(last) = merged.last() else {
            break;
        };
        after = last.path.to_string();
        locks.extend(merged.into_iter().filter(|l| seen(&l.path)));
        if locks.len() > limit || exhausted {
            break;
        }
    }
    let next = if locks.len() > limit {
        locks.truncate(limit);
        locks.last().map(|l| l.path.to_string())
    } else {
        None
    };
    Ok(GitLockPage { locks, next })
}

/// The live lock at `path`, seen or not.
fn lock_at(tx: &dyn Tx, path: &RepoPath, now: Timestamp) -> Result<Option<GitLock>> {
    if let Some(id) = tx.artifact_id_by_path(path)? {
        let artifact = load_artifact(tx, id)?;
        return Ok(artifact
            .lease
            .filter(|l| l.is_live(now))
            .map(|lease| lock_of_lease(artifact.path, lease)));
    }
    Ok(tx
        .held_path(&path.collision_key())?
        .filter(|h| h.expires_at > now)
        .map(lock_of_held))
}

/// The live lock of id `id`: a check-out's, an edit's or a hold's.
fn lock_of_id(tx: &dyn Tx, id: uuid::Uuid, now: Timestamp) -> Result<Option<GitLock>> {
    let artifact_id = match (tx.checkout(CheckoutId(id))?, tx.edit(EditId(id))?) {
        (Some(row), _) => Some(row.checkout.artifact_id),
        (None, Some(edit)) => Some(edit.edit.artifact_id),
        (None, None) => None,
    };
    if let Some(artifact_id) = artifact_id {
        let artifact = load_artifact(tx, artifact_id)?;
        return Ok(artifact
            .lease
            .filter(|l| l.is_live(now))
            .map(|lease| lock_of_lease(artifact.path, lease))
            .filter(|lock| lock.id == id));
    }
    Ok(tx
        .held_path_by_id(CheckoutId(id))?
        .filter(|h| h.expires_at > now)
        .map(lock_of_held))
}

/// Unlocks lock `id` under `folder`: the actor's own is cancelled (or its
/// hold forgotten); someone else's only with `force`, by an admin, as a
/// break.
pub fn unlock(
    tx: &dyn Tx,
    actor: &Participant,
    folder: &str,
    id: uuid::Uuid,
    force: bool,
    now: Timestamp,
) -> Result<GitLock> {
    let unknown = || Error::NotFound(format!("no lock {id} in {folder}"));
    let lock = lock_of_id(tx, id, now)?
        .filter(|lock| lock.path.as_str().starts_with(&format!("{folder}/")))
        .ok_or_else(unknown)?;
    let caller = Caller::of(tx, actor)?;
    let decision = caller.decide(&lock.path);
    if decision.level == Level::None {
        return Err(refused_by_folder(&decision, "unlock"));
    }
    if lock.participant != *actor {
        if !force {
            return Err(Error::Forbidden(format!(
                "{} is locked by {}: only they may unlock it, or an admin with --force",
                lock.path, lock.participant
            )));
        }
        if !is_admin(tx, actor)? {
            return Err(Error::Forbidden(format!(
                "only an admin may force an unlock, and {actor} is not one: {} is locked by {}",
                lock.path, lock.participant
            )));
        }
        if lock.no_file {
            tx.delete_held_path(&lock.path.collision_key())?;
        } else {
            let artifact_id = artifact_of(tx, id)?.ok_or_else(unknown)?;
            break_lease(tx, actor, artifact_id, FORCED, now, GIT)?;
        }
        return Ok(lock);
    }
    if lock.no_file {
        tx.delete_held_path(&lock.path.collision_key())?;
    } else if tx.checkout(CheckoutId(id))?.is_some() {
        cancel(tx, actor, CheckoutId(id), now, GIT)?;
    } else {
        super::edits::release_edit(tx, actor, EditId(id), now)?;
    }
    Ok(lock)
}

fn artifact_of(tx: &dyn Tx, id: uuid::Uuid) -> Result<Option<ArtifactId>> {
    Ok(match (tx.checkout(CheckoutId(id))?, tx.edit(EditId(id))?) {
        (Some(row), _) => Some(row.checkout.artifact_id),
        (None, Some(edit)) => Some(edit.edit.artifact_id),
        (None, None) => None,
    })
}

/// Whether `actor` may move Git LFS objects of `folder` (a top-level
/// folder, without its `/`): an upload needs `write` on the folder itself,
/// a download `read`; refused, 403 naming the folder.
pub fn lfs_object_access(
    tx: &dyn Tx,
    actor: &Participant,
    folder: &str,
    upload: bool,
) -> Result<()> {
    let caller = Caller::of(tx, actor)?;
    let level = caller.level_in(&format!("{folder}/"));
    let allowed = match upload {
        true => level == Level::Write,
        false => level != Level::None,
    };
    if allowed {
        return Ok(());
    }
    Err(match (upload, level) {
        (true, Level::Read) => Error::Forbidden(format!(
            "you can view {folder}/, not upload Git LFS objects to it"
        )),
        _ => Error::Forbidden(format!(
            "you may not {} Git LFS objects of {folder}/",
            if upload { "upload" } else { "download" }
        )),
    })
}

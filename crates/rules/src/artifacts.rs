//! Artifacts: an import, a version read, a rename, and the path rules that
//! keep every artifact placeable on a computer's folder beside the others.
//! Never reads the clock: every function takes `now`.

use serde_json::json;

use super::access::Caller;
use super::collisions::refuse_collisions;
use super::leases::live_lease;
use super::{busy, event, load_artifact, require_admin, Blob};
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::Tx;

/// Version `version` of an artifact, or its head when `None`.
pub fn version_head(
    tx: &dyn Tx,
    actor: &Participant,
    id: ArtifactId,
    version: Option<u64>,
) -> Result<Head> {
    let artifact = super::readable(tx, actor, id)?;
    match version {
        None => Ok(artifact.head),
        Some(n) => tx
            .version(id, n)?
            .ok_or_else(|| Error::NotFound(format!("{} has no version {n}", artifact.path))),
    }
}

pub fn import(
    tx: &dyn Tx,
    actor: &Participant,
    path: &RepoPath,
    blob: &Blob,
    now: Timestamp,
) -> Result<Artifact> {
    import_precheck(tx, actor, path, now)?;
    let id = ArtifactId::new();
    let head = Head {
        version: 1,
        digest: blob.digest.clone(),
        size: blob.size,
        author: actor.clone(),
        committed_at: now,
        message: blob.message.clone(),
        change_id: None,
    };
    tx.insert_artifact(id, path, &head)?;
    event(
        tx,
        "version.committed",
        id,
        actor,
        None,
        now,
        json!({ "version": 1, "digest": head.digest, "size": head.size, "path": path, "message": head.message }),
    )?;
    let mut artifact = load_artifact(tx, id)?;
    super::git::adopt_hold(tx, actor, &mut artifact, now)?;
    Ok(artifact)
}

/// The artifact at `path` (or at a path of the same key: see
/// `Tx::artifact_id_by_path`) as the actor sees it, or `not_found`.
///
/// The folder's rule is asked first: a path the actor may not see takes the
/// way of a path where nothing is, with no row looked up, so that neither
/// the answer nor its time tells whether a file is there. A path of the same
/// key lies in folders of the same keys, so the rule that hides one hides
/// the other.
pub fn artifact_at(tx: &dyn Tx, actor: &Participant, path: &RepoPath) -> Result<Artifact> {
    let unknown = || Error::NotFound(format!("no artifact at {path}"));
    let caller = Caller::of(tx, actor)?;
    if caller.level(path) == Level::None {
        return Err(unknown());
    }
    let id = tx.artifact_id_by_path(path)?.ok_or_else(unknown)?;
    caller.see(load_artifact(tx, id)?).map_err(|_| unknown())
}

/// Refuses an import to a path the actor may not write to, or that is taken
/// (before its bytes are read, too). The folder's rule is asked first, so a
/// file the actor cannot see is never named: see [`refuse_collisions`].
pub fn import_precheck(
    tx: &dyn Tx,
    actor: &Participant,
    path: &RepoPath,
    now: Timestamp,
) -> Result<()> {
    let caller = Caller::of(tx, actor)?;
    caller.require_write_new(path)?;
    if let Some(id) = tx.artifact_id_by_path(path)? {
        let taken = load_artifact(tx, id)?;
        if taken.path == *path && caller.sees(&taken) {
            return Err(Error::Exists(format!(
                "{path} already exists (version {}): check it out to change it",
                taken.head.version
            )));
        }
    }
    refuse_collisions(tx, &caller, path, None)?;
    // Before a byte is read: a path someone holds with no file yet is theirs.
    super::git::refuse_held(tx, actor, path, now)
}

/// An admin gives an artifact a new path (to fix one that cannot be placed
/// on a computer, say). Refused while someone holds the file, whose copy
/// lives at the old path; a case variant of its own path is allowed.
pub fn rename(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    to: &RepoPath,
    now: Timestamp,
) -> Result<Artifact> {
    require_admin(tx, actor, "rename a file")?;
    let mut artifact = load_artifact(tx, artifact_id)?;
    if let Some(lease) = live_lease(tx, &mut artifact, now)? {
        return Err(busy(&artifact, lease));
    }
    if artifact.path == *to {
        return Ok(artifact);
    }
    if let Some(taken) = tx.artifact_id_by_path(to)?.filter(|id| *id != artifact_id) {
        if load_artifact(tx, taken)?.path == *to {
            return Err(Error::Exists(format!(
                "{to} already exists: choose another name"
            )));
        }
    }
    refuse_collisions(tx, &Caller::of(tx, actor)?, to, Some(artifact_id))?;
    let from = std::mem::replace(&mut artifact.path, to.clone());
    tx.rename_artifact(artifact_id, to)?;
    event(
        tx,
        "artifact.renamed",
        artifact_id,
        actor,
        None,
        now,
        json!({ "from": from, "to": to }),
    )?;
    Ok(artifact)
}

/// An artifact as a reader sees it: a lapsed lease is not shown.
pub fn visible(mut artifact: Artifact, now: Timestamp) -> Artifact {
    artifact.lease = artifact.lease.filter(|l| l.is_live(now));
    artifact
}

//! An agent's edit: a lease of seconds, committed only while the head is
//! still its base, or released. Never reads the clock: every function takes `now`.

use super::access::Caller;
use super::leases::{acquire, after, edit_lease, release};
use super::{commit_unless_unchanged, load_artifact, writable, Blob, Refusable};
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{EditRow, EditState, Tx};

pub fn begin_edit(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    ttl_seconds: Option<u64>,
    now: Timestamp,
) -> Refusable<Edit> {
    let ttl = lease_seconds(ttl_seconds, DEFAULT_EDIT_TTL_SECONDS)?;
    let mut artifact = writable(tx, actor, artifact_id)?;
    let id = EditId::new();
    let wanted = edit_lease(Lease::edit_holder(id), actor, now, after(now, ttl));
    let lease = match acquire(tx, &mut artifact, wanted, now)? {
        Ok(lease) => lease,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let edit = Edit {
        id,
        artifact_id,
        holder: lease.holder,
        participant: actor.clone(),
        base_version: artifact.head.version,
        base_digest: artifact.head.digest.clone(),
        expires_at: lease.expires_at,
    };
    tx.put_edit(
        &EditRow {
            edit: edit.clone(),
            state: EditState::Open,
            commit_digest: None,
            result: None,
        },
        now,
    )?;
    Ok(Ok(edit))
}

/// An edit its participant acts on, needing `need` on its file; an edit of
/// a file the actor can no longer see is not there for it.
fn own_edit(tx: &dyn Tx, actor: &Participant, id: EditId, need: Level) -> Result<EditRow> {
    let unknown = || Error::NotFound(format!("no edit {id}"));
    let row = tx.edit(id)?.ok_or_else(unknown)?;
    let path = load_artifact(tx, row.edit.artifact_id)?.path;
    let caller = Caller::of(tx, actor)?;
    if caller.level(&path) == Level::None {
        return Err(unknown());
    }
    if row.edit.participant != *actor {
        return Err(Error::Forbidden(format!(
            "only {}, who began edit {id}, may commit or release it",
            row.edit.participant
        )));
    }
    if need == Level::Write {
        caller.require_write(&path, unknown)?;
    }
    Ok(row)
}

/// Commits an edit if the head is still its base, whatever became of its lease
/// (rule 14), then releases the lease. A lapsed edit takes the lease again only
/// if nobody else holds the file. A retry gets the same answer.
pub fn commit_edit(
    tx: &dyn Tx,
    actor: &Participant,
    id: EditId,
    blob: &Blob,
    now: Timestamp,
) -> Refusable<CheckinResult> {
    let mut row = own_edit(tx, actor, id, Level::Write)?;
    if row.state == EditState::Committed {
        return match (&row.commit_digest, row.result.clone()) {
            (Some(first), Some(stored)) if *first == blob.digest => {
                Ok(Ok(tx.resolve_result(stored)?))
            }
            _ => Err(Error::CheckoutClosed(format!(
                "edit {id} has already committed other bytes: begin a new edit"
            ))),
        };
    }
    let mut artifact = load_artifact(tx, row.edit.artifact_id)?;
    let holder = row.edit.holder.clone();
    if artifact.head.version != row.edit.base_version
        || artifact.head.digest != row.edit.base_digest
    {
        if row.state == EditState::Open {
            release(tx, &mut artifact, &holder, now)?;
            row.state = EditState::Released;
            tx.put_edit(&row, now)?;
        }
        return Ok(Err(Error::Stale {
            head: Box::new(artifact.head),
        }));
    }
    if row.state == EditState::Released {
        return Err(Error::CheckoutClosed(format!(
            "edit {id} has ended (released, or broken by an admin): begin a new edit"
        )));
    }
    // An edit's lease is never renewed: a live one is used as it is.
    let holds_live_lease = artifact
        .lease
        .as_ref()
        .is_some_and(|l| l.holder == holder && l.is_live(now));
    if !holds_live_lease {
        let wanted = edit_lease(holder.clone(), actor, now, after(now, 1));
        if let Err(refusal) = acquire(tx, &mut artifact, wanted, now)? {
            row.state = EditState::Released;
            tx.put_edit(&row, now)?;
            return Ok(Err(refusal));
        }
    }
    let result = commit_unless_unchanged(tx, &mut artifact, blob, actor, now)?;
    release(tx, &mut artifact, &holder, now)?;
    row.state = EditState::Committed;
    row.commit_digest = Some(blob.digest.clone());
    row.result = Some(result.clone());
    tx.put_edit(&row, now)?;
    Ok(Ok(tx.resolve_result(result)?))
}

/// The edit and its artifact's head before an upload: to refuse a stranger or
/// an unknown edit early, and to know whether the upload's bytes will need
/// storing (only for an open edit whose base is still the head).
pub fn edit_precheck(tx: &dyn Tx, actor: &Participant, id: EditId) -> Result<(EditRow, Head)> {
    let row = own_edit(tx, actor, id, Level::Write)?;
    let head = load_artifact(tx, row.edit.artifact_id)?.head;
    Ok((row, head))
}

/// Ends an edit without committing. Idempotent.
pub fn release_edit(tx: &dyn Tx, actor: &Participant, id: EditId, now: Timestamp) -> Result<()> {
    let mut row = own_edit(tx, actor, id, Level::Read)?;
    if row.state != EditState::Open {
        return Ok(());
    }
    let mut artifact = load_artifact(tx, row.edit.artifact_id)?;
    release(tx, &mut artifact, &row.edit.holder, now)?;
    row.state = EditState::Released;
    tx.put_edit(&row, now)
}

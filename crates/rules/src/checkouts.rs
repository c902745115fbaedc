//! A person's check-out: opened under a lease of hours, extended, checked in
//! (committed, unchanged, or kept as a proposal when stale) or cancelled.
//! Never reads the clock: every function takes `now`.
//!
//! A check-out remembers the artifact's lease epoch (the count of leases
//! taken). If the epoch moved while it held no lease, someone else took the
//! file meanwhile: it cannot take its lease again, and its check-in becomes
//! a proposal.

use serde_json::json;

use super::access::Caller;
use super::leases::{acquire, acquire_via, after, checkout_lease, release_via, with_via, Via};
use super::{
    commit_unless_unchanged, end_requests, event, load_artifact, propose, writable, Blob, Refusable,
};
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::*;
use crate::store::{CheckoutRow, StoredResult, Tx};

/// The device `id` (a token's id) of `actor`, as a check-out made through
/// it records it: none for a caller without a token (the bundled store), or
/// for a token no longer there.
pub fn device_of(tx: &dyn Tx, actor: &Participant, id: Option<&str>) -> Result<Option<DeviceRef>> {
    let Some(id) = id.filter(|id| !id.is_empty()) else {
        return Ok(None);
    };
    Ok(tx
        .devices(actor)?
        .into_iter()
        .find(|d| d.id == id)
        .map(|d| DeviceRef {
            id: d.id,
            name: d.name,
        }))
}

/// Checks a file out for `actor`, on `device` (see [`device_of`]), its
/// events saying `via`.
#[allow(clippy::too_many_arguments)]
pub fn check_out(
    tx: &dyn Tx,
    actor: &Participant,
    device: Option<&DeviceRef>,
    artifact_id: ArtifactId,
    request: &CheckoutRequest,
    now: Timestamp,
    failpoints: &Failpoints,
    via: Via,
) -> Refusable<Checkout> {
    let ttl = lease_seconds(request.ttl_seconds, DEFAULT_CHECKOUT_TTL_SECONDS)?;
    let note = checked_note(request.note.as_deref())?;
    let mut artifact = writable(tx, actor, artifact_id)?;
    let id = CheckoutId::new();
    let wanted = checkout_lease(id, actor, note.clone(), now, after(now, ttl));
    let lease = match acquire_via(tx, &mut artifact, wanted, now, via)? {
        Ok(lease) => lease,
        Err(refusal) => return Ok(Err(refusal)),
    };
    // Taken in the same transaction as the record: a failure to record rolls the lease back too.
    failpoints.hit(failpoint::at::CHECKOUT_RECORD)?;
    let opened = OpenedCheckout {
        id,
        note,
        created_at: now,
        device: device.cloned(),
    };
    let checkout = record_open(tx, actor, &artifact, &lease, opened, now, via)?;
    Ok(Ok(checkout))
}

/// What a check-out being opened brings beyond its artifact and lease.
pub(super) struct OpenedCheckout {
    pub id: CheckoutId,
    pub note: Option<String>,
    pub created_at: Timestamp,
    pub device: Option<DeviceRef>,
}

/// Records the check-out `opened` of `artifact` under `lease` (just taken
/// in this transaction): its row and its `checkout.opened` event.
pub(super) fn record_open(
    tx: &dyn Tx,
    actor: &Participant,
    artifact: &Artifact,
    lease: &Lease,
    opened: OpenedCheckout,
    now: Timestamp,
    via: Via,
) -> Result<Checkout> {
    let checkout = Checkout {
        id: opened.id,
        artifact_id: artifact.id,
        path: artifact.path.clone(),
        version: artifact.head.version,
        digest: artifact.head.digest.clone(),
        actor: actor.clone(),
        holder: lease.holder.clone(),
        note: opened.note,
        created_at: opened.created_at,
        expires_at: lease.expires_at,
        state: CheckoutState::Open,
        result: None,
        broken: None,
        change_id: None,
        device: opened.device,
    };
    tx.put_checkout(
        &CheckoutRow {
            checkout: checkout.clone(),
            checkin_digest: None,
            lease_epoch: tx.lease_epoch(artifact.id)?,
            staged: None,
        },
        None,
        None,
    )?;
    event(
        tx,
        "checkout.opened",
        artifact.id,
        actor,
        Some(&lease.holder),
        now,
        with_via(
            json!({ "checkout_id": opened.id, "version": checkout.version, "note": checkout.note }),
            via,
        ),
    )?;
    Ok(checkout)
}

fn checked_note(note: Option<&str>) -> Result<Option<String>> {
    match note.map(str::trim) {
        None | Some("") => Ok(None),
        Some(note) if note.len() > MAX_NOTE_BYTES => Err(Error::Invalid(format!(
            "the note is longer than {MAX_NOTE_BYTES} bytes"
        ))),
        Some(note) if note.chars().any(|c| c.is_control() && c != '\n') => Err(Error::Invalid(
            "the note contains a control character".into(),
        )),
        Some(note) => Ok(Some(note.to_owned())),
    }
}

/// Loads a check-out its actor acts on, needing `need` on its file (`read`
/// to see or cancel it, `write` to change the file); anyone else is
/// refused, and a check-out of a file the actor can no longer see is not
/// there for it.
pub(super) fn own_checkout(
    tx: &dyn Tx,
    actor: &Participant,
    id: CheckoutId,
    action: &str,
    need: Level,
) -> Result<CheckoutRow> {
    let unknown = || Error::NotFound(format!("no check-out {id}"));
    let row = tx.checkout(id)?.ok_or_else(unknown)?;
    let caller = Caller::of(tx, actor)?;
    if caller.level(&row.checkout.path) == Level::None {
        return Err(unknown());
    }
    if row.checkout.actor != *actor {
        return Err(Error::Forbidden(format!(
            "only {}, who checked out {}, may {action} it",
            row.checkout.actor, row.checkout.path
        )));
    }
    if need == Level::Write {
        caller.require_write(&row.checkout.path, unknown)?;
    }
    Ok(row)
}

pub fn checkout(tx: &dyn Tx, actor: &Participant, id: CheckoutId) -> Result<Checkout> {
    Ok(own_checkout(tx, actor, id, "see", Level::Read)?.checkout)
}

/// Extends a check-out, its event saying `via`.
pub fn extend(
    tx: &dyn Tx,
    actor: &Participant,
    id: CheckoutId,
    ttl_seconds: Option<u64>,
    now: Timestamp,
    via: Via,
) -> Refusable<Checkout> {
    let ttl = lease_seconds(ttl_seconds, DEFAULT_CHECKOUT_TTL_SECONDS)?;
    let mut row = own_checkout(tx, actor, id, "extend", Level::Write)?;
    let path = &row.checkout.path;
    if row.checkout.state == CheckoutState::Closed {
        return Err(Error::CheckoutClosed(format!(
            "your check-out of {path} is closed and cannot be extended: check the file out again"
        )));
    }
    if let Some(broken) = &row.checkout.broken {
        return Err(Error::CheckoutClosed(format!(
            "{} broke your lease on {path} ({}): check your file in to keep it as a proposal",
            broken.by, broken.reason
        )));
    }
    let mut artifact = load_artifact(tx, row.checkout.artifact_id)?;
    let someone_else_holds = artifact.lease.as_ref().is_some_and(|l| l.is_live(now));
    if !lease_still_ours(tx, &artifact, &row)? && !someone_else_holds {
        return Err(Error::CheckoutClosed(format!(
            "your lease on {path} lapsed and someone else took the file meanwhile: \
             check your file in to keep it as a proposal, or check the file out again"
        )));
    }
    let wanted = checkout_lease(id, actor, row.checkout.note.clone(), now, after(now, ttl));
    let lease = match acquire_via(tx, &mut artifact, wanted, now, via)? {
        Ok(lease) => lease,
        Err(refusal) => return Ok(Err(refusal)),
    };
    row.checkout.expires_at = lease.expires_at;
    row.lease_epoch = tx.lease_epoch(artifact.id)?;
    tx.put_checkout(&row, None, None)?;
    Ok(Ok(row.checkout))
}

/// Whether the check-out's lease is still its own to take again: it holds the
/// lease row (live or lapsed), or nobody took the file since its lease ended.
fn lease_still_ours(tx: &dyn Tx, artifact: &Artifact, row: &CheckoutRow) -> Result<bool> {
    Ok(match &artifact.lease {
        Some(lease) => lease.holder == row.checkout.holder,
        None => tx.lease_epoch(artifact.id)? == row.lease_epoch,
    })
}

/// Checks in `blob` under check-out `id`: unchanged, committed, or kept as a
/// proposal when stale. Closes the check-out and releases its lease.
pub fn check_in(
    tx: &dyn Tx,
    actor: &Participant,
    id: CheckoutId,
    blob: &Blob,
    now: Timestamp,
) -> Result<Checkout> {
    let mut row = own_checkout(tx, actor, id, "check in", Level::Write)?;
    if row.checkout.state == CheckoutState::Closed {
        // A retry of the same check-in returns the first one's result.
        return match &row.checkin_digest {
            Some(first) if *first == blob.digest => Ok(row.checkout),
            _ => Err(Error::CheckoutClosed(format!(
                "your check-out of {} is closed; this file differs from the one checked in: check the file out again",
                row.checkout.path
            ))),
        };
    }
    let mut artifact = load_artifact(tx, row.checkout.artifact_id)?;
    let current = still_current(tx, actor, &row, &mut artifact, now)?;
    let result = if blob.digest == artifact.head.digest || current {
        commit_unless_unchanged(tx, &mut artifact, blob, actor, now)?
    } else {
        let provenance = Provenance {
            version: row.checkout.version,
            digest: row.checkout.digest.clone(),
        };
        let proposal = propose(tx, &artifact, blob, actor, provenance, Some(id), now)?;
        StoredResult::Proposal {
            proposal_id: proposal.id,
        }
    };
    row.checkin_digest = Some(blob.digest.clone());
    close(tx, &mut row, &mut artifact, actor, Some(&result), now, None)?;
    row.checkout.result = Some(tx.resolve_result(result)?);
    Ok(row.checkout)
}

/// Whether a check-in under `row` would commit: it holds its lease (taken
/// again, for a minute at least, if nobody took the file meanwhile) and the
/// head is still the version it checked out. Stale (a proposal) once anyone
/// else took the file, or an admin broke the lease.
pub(super) fn still_current(
    tx: &dyn Tx,
    actor: &Participant,
    row: &CheckoutRow,
    artifact: &mut Artifact,
    now: Timestamp,
) -> Result<bool> {
    let holds_lease = match &row.checkout.broken {
        Some(_) => false,
        None if !lease_still_ours(tx, artifact, row)? => false,
        None => {
            let id = row.checkout.id;
            let expires_at = row.checkout.expires_at.max(after(now, 60));
            let wanted = checkout_lease(id, actor, row.checkout.note.clone(), now, expires_at);
            acquire(tx, artifact, wanted, now)?.is_ok()
        }
    };
    Ok(holds_lease && artifact.head.version == row.checkout.version)
}

/// The check-out and its artifact's head digest before an upload: to refuse
/// early, and to know whether the upload's bytes will need storing.
pub fn checkin_precheck(
    tx: &dyn Tx,
    actor: &Participant,
    id: CheckoutId,
) -> Result<(CheckoutRow, Digest)> {
    let row = own_checkout(tx, actor, id, "check in", Level::Write)?;
    let head = load_artifact(tx, row.checkout.artifact_id)?.head;
    Ok((row, head.digest))
}

/// Cancels a check-out, its events saying `via`.
pub fn cancel(
    tx: &dyn Tx,
    actor: &Participant,
    id: CheckoutId,
    now: Timestamp,
    via: Via,
) -> Result<Checkout> {
    let mut row = own_checkout(tx, actor, id, "cancel", Level::Read)?;
    if row.checkout.state == CheckoutState::Closed {
        return Ok(row.checkout);
    }
    let mut artifact = load_artifact(tx, row.checkout.artifact_id)?;
    close(tx, &mut row, &mut artifact, actor, None, now, via)?;
    Ok(row.checkout)
}

/// Closes a check-out with its `result` (none for a cancel): its lease
/// released, its requests ended, bytes still staged for it dropped, its row
/// closed, and `checkout.closed` recorded, its events saying `via`.
#[allow(clippy::too_many_arguments)]
pub(super) fn close(
    tx: &dyn Tx,
    row: &mut CheckoutRow,
    artifact: &mut Artifact,
    actor: &Participant,
    result: Option<&StoredResult>,
    now: Timestamp,
    via: Via,
) -> Result<()> {
    let holder = row.checkout.holder.clone();
    release_via(tx, artifact, &holder, now, via)?;
    end_requests(tx, row.checkout.id, now)?;
    if let Some(staged) = row.staged.take() {
        tx.drop_blob(&staged.digest)?;
    }
    row.checkout.state = CheckoutState::Closed;
    tx.put_checkout(row, result, Some(now))?;
    event(
        tx,
        "checkout.closed",
        artifact.id,
        actor,
        Some(&holder),
        now,
        with_via(
            json!({ "checkout_id": row.checkout.id, "result": result }),
            via,
        ),
    )
}

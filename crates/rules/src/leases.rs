//! An artifact's lease: taken, renewed or refused (recording
//! `lease.contended`), released, broken by an admin, and its lapse recorded
//! exactly once (by whoever finds it first, or the sweep). Never reads the
//! clock: every function takes `now`.

use serde_json::json;
use uuid::Uuid;

use super::{busy, end_requests, event, load_artifact, require_admin, Refusable};
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{EditState, NewEvent, Tx};

/// Namespace of the stable ids of `lease.contended` events.
const CONTENDED_NAMESPACE: Uuid = Uuid::from_u128(0x6c65_6173_6564_6573_6b2d_636f_6e74_656e);

/// Where a lease change came from, when its events say so: `Some("git")`
/// for one made through the Git LFS API.
pub type Via = Option<&'static str>;

/// An event's `data`, with `via` added when there is one.
pub(super) fn with_via(mut data: serde_json::Value, via: Via) -> serde_json::Value {
    if let (Some(via), Some(fields)) = (via, data.as_object_mut()) {
        fields.insert("via".into(), via.into());
    }
    data
}

/// Records the lapse of a lease that expired unrecorded: `lease.expired`, once.
fn record_lapse(tx: &dyn Tx, artifact_id: ArtifactId, lease: &Lease, now: Timestamp) -> Result<()> {
    tx.delete_lease(artifact_id)?;
    if let Some(checkout) = lease.checkout_id {
        end_requests(tx, checkout, now)?;
    }
    event(
        tx,
        "lease.expired",
        artifact_id,
        &lease.participant,
        Some(&lease.holder),
        now,
        json!({ "expired_at": lease.expires_at, "checkout_id": lease.checkout_id }),
    )
}

/// The artifact's live lease, recording its lapse first if it lapsed.
pub(super) fn live_lease(
    tx: &dyn Tx,
    artifact: &mut Artifact,
    now: Timestamp,
) -> Result<Option<Lease>> {
    if let Some(lease) = artifact.lease.take() {
        if lease.is_live(now) {
            artifact.lease = Some(lease);
        } else {
            record_lapse(tx, artifact.id, &lease, now)?;
        }
    }
    Ok(artifact.lease.clone())
}

pub(super) fn after(now: Timestamp, seconds: u64) -> Timestamp {
    now + chrono::TimeDelta::seconds(seconds as i64)
}

/// The lease a check-out asks for.
pub(super) fn checkout_lease(
    id: CheckoutId,
    actor: &Participant,
    note: Option<String>,
    now: Timestamp,
    expires_at: Timestamp,
) -> Lease {
    Lease {
        holder: Lease::checkout_holder(id, actor),
        participant: actor.clone(),
        kind: LeaseKind::Checkout,
        checkout_id: Some(id),
        note,
        acquired_at: now,
        expires_at,
    }
}

/// The lease an agent's edit (or an accept, like one) asks for.
pub(super) fn edit_lease(
    holder: String,
    actor: &Participant,
    now: Timestamp,
    expires_at: Timestamp,
) -> Lease {
    Lease {
        holder,
        participant: actor.clone(),
        kind: LeaseKind::Edit,
        checkout_id: None,
        note: None,
        acquired_at: now,
        expires_at,
    }
}

/// Takes the artifact's lease for `wanted.holder`: renews it if that holder has it
/// live, takes it if nobody does, and otherwise refuses with the live lease,
/// recording `lease.contended` once per holder lease and contender.
pub(super) fn acquire(
    tx: &dyn Tx,
    artifact: &mut Artifact,
    wanted: Lease,
    now: Timestamp,
) -> Refusable<Lease> {
    acquire_via(tx, artifact, wanted, now, None)
}

/// [`acquire`], its events saying `via` (`"git"`: through the Git LFS API).
pub(super) fn acquire_via(
    tx: &dyn Tx,
    artifact: &mut Artifact,
    wanted: Lease,
    now: Timestamp,
    via: Via,
) -> Refusable<Lease> {
    match live_lease(tx, artifact, now)? {
        Some(current) if current.holder == wanted.holder => {
            let renewed = Lease {
                acquired_at: current.acquired_at,
                ..wanted
            };
            tx.put_lease(artifact.id, &renewed)?;
            event(
                tx,
                "lease.renewed",
                artifact.id,
                &renewed.participant,
                Some(&renewed.holder),
                now,
                with_via(json!({ "expires_at": renewed.expires_at }), via),
            )?;
            artifact.lease = Some(renewed.clone());
            Ok(Ok(renewed))
        }
        Some(current) => {
            let stable = format!(
                "{}|{}|{}",
                current.holder,
                current.acquired_at.timestamp_millis(),
                wanted.participant
            );
            tx.insert_event(NewEvent {
                id: Uuid::new_v5(&CONTENDED_NAMESPACE, stable.as_bytes()),
                kind: "lease.contended",
                artifact_id: Some(artifact.id),
                participant: Some(&wanted.participant),
                holder: Some(&current.holder),
                at: now,
                data: json!({ "holder_participant": current.participant }),
            })?;
            Ok(Err(busy(artifact, current)))
        }
        None => {
            let taken = Lease {
                acquired_at: now,
                ..wanted
            };
            tx.next_lease_epoch(artifact.id)?;
            tx.put_lease(artifact.id, &taken)?;
            event(
                tx,
                "lease.acquired",
                artifact.id,
                &taken.participant,
                Some(&taken.holder),
                now,
                with_via(
                    json!({ "kind": taken.kind, "expires_at": taken.expires_at, "checkout_id": taken.checkout_id }),
                    via,
                ),
            )?;
            artifact.lease = Some(taken.clone());
            Ok(Ok(taken))
        }
    }
}

/// Releases the lease if `holder` has it. Idempotent: otherwise nothing happens.
pub(super) fn release(
    tx: &dyn Tx,
    artifact: &mut Artifact,
    holder: &str,
    now: Timestamp,
) -> Result<()> {
    release_via(tx, artifact, holder, now, None)
}

/// [`release`], its event saying `via`.
pub(super) fn release_via(
    tx: &dyn Tx,
    artifact: &mut Artifact,
    holder: &str,
    now: Timestamp,
    via: Via,
) -> Result<()> {
    let Some(lease) = artifact.lease.take_if(|l| l.holder == holder) else {
        return Ok(());
    };
    if !lease.is_live(now) {
        return record_lapse(tx, artifact.id, &lease, now);
    }
    tx.delete_lease(artifact.id)?;
    event(
        tx,
        "lease.released",
        artifact.id,
        &lease.participant,
        Some(&lease.holder),
        now,
        with_via(json!({}), via),
    )
}

/// An admin ends someone's lease. A broken check-out's later check-in becomes a
/// proposal; a broken edit can no longer commit. Its event says `via`.
pub fn break_lease(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    reason: &str,
    now: Timestamp,
    via: Via,
) -> Result<Artifact> {
    require_admin(tx, actor, "break a lease")?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Error::Invalid(
            "say why you break the lease: its holder is told".into(),
        ));
    }
    let mut artifact = load_artifact(tx, artifact_id)?;
    let Some(lease) = live_lease(tx, &mut artifact, now)? else {
        return Ok(artifact);
    };
    tx.delete_lease(artifact_id)?;
    artifact.lease = None;
    event(
        tx,
        "lease.broken",
        artifact_id,
        actor,
        Some(&lease.holder),
        now,
        with_via(
            json!({ "reason": reason, "holder_participant": lease.participant, "checkout_id": lease.checkout_id }),
            via,
        ),
    )?;
    if let Some(checkout_id) = lease.checkout_id {
        end_requests(tx, checkout_id, now)?;
        if let Some(mut row) = tx.checkout(checkout_id)? {
            row.checkout.broken = Some(Broken {
                by: actor.clone(),
                reason: reason.to_owned(),
                at: now,
            });
            tx.put_checkout(&row, None, None)?;
        }
    }
    if let Some(edit_id) = lease
        .holder
        .strip_prefix("edit:")
        .and_then(|id| id.parse().ok())
    {
        if let Some(mut row) = tx.edit(edit_id)? {
            row.state = EditState::Released;
            tx.put_edit(&row, now)?;
        }
    }
    Ok(artifact)
}

/// Records every lapsed lease's `lease.expired`. Returns how many.
pub fn sweep(tx: &dyn Tx, now: Timestamp) -> Result<usize> {
    let lapsed = tx.lapsed_leases(now)?;
    for (artifact_id, lease) in &lapsed {
        record_lapse(tx, *artifact_id, lease, now)?;
    }
    Ok(lapsed.len())
}

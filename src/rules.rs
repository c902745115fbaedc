//! The lease rules of `shared/DESIGN.md`, as functions over one store
//! transaction. Each takes `now` from its caller and reads no clock.
//!
//! A refusal that must still record something (a `lease.contended` event, a
//! released lease) returns `Ok(Err(refusal))`, so the transaction commits and
//! the caller then reports the refusal.

use serde_json::json;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::*;
use crate::store::{CheckoutRow, EditRow, EditState, NewEvent, StoredResult, Tx};

/// Namespace of the stable ids of `lease.contended` events.
const CONTENDED_NAMESPACE: Uuid = Uuid::from_u128(0x6c65_6173_6564_6573_6b2d_636f_6e74_656e);

/// A refusal that commits what was recorded before it.
pub type Refusable<T> = Result<Result<T>>;

/// Bytes already hashed and stored as a blob.
#[derive(Clone, Debug)]
pub struct Blob {
    pub digest: Digest,
    pub size: u64,
    /// The description given with the upload (checked: see `check_message`).
    pub message: Option<String>,
}

fn event(
    tx: &Tx,
    kind: &str,
    artifact_id: ArtifactId,
    participant: &Participant,
    holder: Option<&str>,
    now: Timestamp,
    data: serde_json::Value,
) -> Result<()> {
    tx.insert_event(NewEvent {
        id: Uuid::new_v4(),
        kind,
        artifact_id: Some(artifact_id),
        participant: Some(participant),
        holder,
        at: now,
        data,
    })?;
    Ok(())
}

fn load_artifact(tx: &Tx, id: ArtifactId) -> Result<Artifact> {
    tx.artifact(id)?
        .ok_or_else(|| Error::NotFound(format!("no artifact {id}")))
}

fn busy(artifact: &Artifact, lease: Lease) -> Error {
    Error::ArtifactBusy {
        path: artifact.path.to_string(),
        lease: Some(Box::new(lease)),
    }
}

fn is_admin(tx: &Tx, participant: &Participant) -> Result<bool> {
    Ok(tx.account(participant)?.is_some_and(|a| a.admin))
}

/// Records the lapse of a lease that expired unrecorded: `lease.expired`, once.
fn record_lapse(tx: &Tx, artifact_id: ArtifactId, lease: &Lease, now: Timestamp) -> Result<()> {
    tx.delete_lease(artifact_id)?;
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
fn live_lease(tx: &Tx, artifact: &mut Artifact, now: Timestamp) -> Result<Option<Lease>> {
    if let Some(lease) = artifact.lease.take() {
        if lease.is_live(now) {
            artifact.lease = Some(lease);
        } else {
            record_lapse(tx, artifact.id, &lease, now)?;
        }
    }
    Ok(artifact.lease.clone())
}

fn after(now: Timestamp, seconds: u64) -> Timestamp {
    now + chrono::TimeDelta::seconds(seconds as i64)
}

/// The lease a check-out asks for.
fn checkout_lease(
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
fn edit_lease(holder: String, actor: &Participant, now: Timestamp, expires_at: Timestamp) -> Lease {
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
fn acquire(tx: &Tx, artifact: &mut Artifact, wanted: Lease, now: Timestamp) -> Refusable<Lease> {
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
                json!({ "expires_at": renewed.expires_at }),
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
                json!({ "kind": taken.kind, "expires_at": taken.expires_at, "checkout_id": taken.checkout_id }),
            )?;
            artifact.lease = Some(taken.clone());
            Ok(Ok(taken))
        }
    }
}

/// Releases the lease if `holder` has it. Idempotent: otherwise nothing happens.
fn release(tx: &Tx, artifact: &mut Artifact, holder: &str, now: Timestamp) -> Result<()> {
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
        json!({}),
    )
}

fn commit_version(
    tx: &Tx,
    artifact: &mut Artifact,
    blob: &Blob,
    author: &Participant,
    now: Timestamp,
) -> Result<Head> {
    let head = Head {
        version: artifact.head.version + 1,
        digest: blob.digest.clone(),
        size: blob.size,
        author: author.clone(),
        committed_at: now,
        message: blob.message.clone(),
    };
    tx.commit_version(artifact.id, &head, artifact.head.version)?;
    event(
        tx,
        "version.committed",
        artifact.id,
        author,
        None,
        now,
        json!({ "version": head.version, "digest": head.digest, "size": head.size, "base_version": artifact.head.version, "message": head.message }),
    )?;
    artifact.head = head.clone();
    Ok(head)
}

/// Keeps a stale change as a proposal against the current head.
fn propose(
    tx: &Tx,
    artifact: &Artifact,
    blob: &Blob,
    author: &Participant,
    provenance: Provenance,
    checkout_id: Option<CheckoutId>,
    now: Timestamp,
) -> Result<Proposal> {
    let proposal = Proposal {
        id: ProposalId::new(),
        artifact_id: artifact.id,
        base_version: artifact.head.version,
        test_digest: artifact.head.digest.clone(),
        provenance,
        digest: blob.digest.clone(),
        size: blob.size,
        author: author.clone(),
        checkout_id,
        state: ProposalState::Open,
        created_at: now,
        message: blob.message.clone(),
    };
    tx.insert_proposal(&proposal)?;
    event(
        tx,
        "proposal.created",
        artifact.id,
        author,
        None,
        now,
        json!({ "proposal_id": proposal.id, "base_version": proposal.base_version, "provenance": proposal.provenance, "digest": proposal.digest, "message": proposal.message }),
    )?;
    Ok(proposal)
}

// ----- artifacts

/// Version `version` of an artifact, or its head when `None`.
pub fn version_head(tx: &Tx, id: ArtifactId, version: Option<u64>) -> Result<Head> {
    let artifact = tx
        .artifact(id)?
        .ok_or_else(|| Error::NotFound(format!("no artifact {id}")))?;
    match version {
        None => Ok(artifact.head),
        Some(n) => tx
            .version(id, n)?
            .ok_or_else(|| Error::NotFound(format!("{} has no version {n}", artifact.path))),
    }
}

pub fn import(
    tx: &Tx,
    actor: &Participant,
    path: &RepoPath,
    blob: &Blob,
    now: Timestamp,
) -> Result<Artifact> {
    import_precheck(tx, path)?;
    let id = ArtifactId::new();
    let head = Head {
        version: 1,
        digest: blob.digest.clone(),
        size: blob.size,
        author: actor.clone(),
        committed_at: now,
        message: blob.message.clone(),
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
    load_artifact(tx, id)
}

/// Refuses an import to a path that is taken (before its bytes are read, too).
pub fn import_precheck(tx: &Tx, path: &RepoPath) -> Result<()> {
    if let Some(id) = tx.artifact_id_by_path(path)? {
        let taken = load_artifact(tx, id)?;
        if taken.path == *path {
            return Err(Error::Exists(format!(
                "{path} already exists (version {}): check it out to change it",
                taken.head.version
            )));
        }
    }
    refuse_collisions(tx, path, None)
}

/// Refuses a path that a computer's folder could not hold beside the store's
/// other artifacts (`other_than`, being renamed, does not count): one that
/// differs from another only in case or Unicode normalization, one that lies
/// under another artifact's path, and one that is a folder of artifacts.
fn refuse_collisions(tx: &Tx, path: &RepoPath, other_than: Option<ArtifactId>) -> Result<()> {
    let others = |found: Vec<(ArtifactId, RepoPath)>| {
        found
            .into_iter()
            .find(|(id, _)| Some(*id) != other_than)
            .map(|(_, taken)| taken)
    };
    if let Some(taken) = others(tx.artifacts_with_key(&path.collision_key())?) {
        return Err(Error::Exists(format!(
            "{path} would be the same file as {taken} on Windows and macOS, which do not tell \
             case or accents written two ways apart: choose another name"
        )));
    }
    for folder in path.folder_keys() {
        if let Some(taken) = others(tx.artifacts_with_key(&folder)?) {
            return Err(Error::Exists(format!(
                "{path} would lie under {taken}, which is a file, not a folder: choose another place"
            )));
        }
    }
    if let Some(taken) = others(tx.artifacts_under_key(&path.collision_key(), 2)?) {
        return Err(Error::Exists(format!(
            "{path} is a folder of other files ({taken}), so no file can have that name"
        )));
    }
    Ok(())
}

/// An admin gives an artifact a new path (to fix one that cannot be placed
/// on a computer, say). Refused while someone holds the file, whose copy
/// lives at the old path; a case variant of its own path is allowed.
pub fn rename(
    tx: &Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    to: &RepoPath,
    now: Timestamp,
) -> Result<Artifact> {
    if !is_admin(tx, actor)? {
        return Err(Error::Forbidden(format!(
            "only an admin may rename a file, and {actor} is not one"
        )));
    }
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
    refuse_collisions(tx, to, Some(artifact_id))?;
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

// ----- check-outs

pub fn check_out(
    tx: &Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    request: &CheckoutRequest,
    now: Timestamp,
    failpoints: &Failpoints,
) -> Refusable<Checkout> {
    let ttl = lease_seconds(request.ttl_seconds, DEFAULT_CHECKOUT_TTL_SECONDS)?;
    let note = checked_note(request.note.as_deref())?;
    let mut artifact = load_artifact(tx, artifact_id)?;
    let id = CheckoutId::new();
    let wanted = checkout_lease(id, actor, note.clone(), now, after(now, ttl));
    let lease = match acquire(tx, &mut artifact, wanted, now)? {
        Ok(lease) => lease,
        Err(refusal) => return Ok(Err(refusal)),
    };
    // Taken in the same transaction as the record: a failure to record rolls the lease back too.
    failpoints.hit(failpoint::at::CHECKOUT_RECORD)?;
    let checkout = Checkout {
        id,
        artifact_id,
        path: artifact.path.clone(),
        version: artifact.head.version,
        digest: artifact.head.digest.clone(),
        actor: actor.clone(),
        holder: lease.holder.clone(),
        note,
        created_at: now,
        expires_at: lease.expires_at,
        state: CheckoutState::Open,
        result: None,
        broken: None,
    };
    tx.put_checkout(
        &CheckoutRow {
            checkout: checkout.clone(),
            checkin_digest: None,
            lease_epoch: tx.lease_epoch(artifact_id)?,
        },
        None,
        None,
    )?;
    event(
        tx,
        "checkout.opened",
        artifact_id,
        actor,
        Some(&lease.holder),
        now,
        json!({ "checkout_id": id, "version": checkout.version, "note": checkout.note }),
    )?;
    Ok(Ok(checkout))
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

/// Loads a check-out its actor acts on; anyone else is refused.
fn own_checkout(tx: &Tx, actor: &Participant, id: CheckoutId, action: &str) -> Result<CheckoutRow> {
    let row = tx
        .checkout(id)?
        .ok_or_else(|| Error::NotFound(format!("no check-out {id}")))?;
    if row.checkout.actor != *actor {
        return Err(Error::Forbidden(format!(
            "only {}, who checked out {}, may {action} it",
            row.checkout.actor, row.checkout.path
        )));
    }
    Ok(row)
}

pub fn checkout(tx: &Tx, actor: &Participant, id: CheckoutId) -> Result<Checkout> {
    Ok(own_checkout(tx, actor, id, "see")?.checkout)
}

pub fn extend(
    tx: &Tx,
    actor: &Participant,
    id: CheckoutId,
    ttl_seconds: Option<u64>,
    now: Timestamp,
) -> Refusable<Checkout> {
    let ttl = lease_seconds(ttl_seconds, DEFAULT_CHECKOUT_TTL_SECONDS)?;
    let mut row = own_checkout(tx, actor, id, "extend")?;
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
    let lease = match acquire(tx, &mut artifact, wanted, now)? {
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
fn lease_still_ours(tx: &Tx, artifact: &Artifact, row: &CheckoutRow) -> Result<bool> {
    Ok(match &artifact.lease {
        Some(lease) => lease.holder == row.checkout.holder,
        None => tx.lease_epoch(artifact.id)? == row.lease_epoch,
    })
}

/// Checks in `blob` under check-out `id`: unchanged, committed, or kept as a
/// proposal when stale. Closes the check-out and releases its lease.
pub fn check_in(
    tx: &Tx,
    actor: &Participant,
    id: CheckoutId,
    blob: &Blob,
    now: Timestamp,
) -> Result<Checkout> {
    let mut row = own_checkout(tx, actor, id, "check in")?;
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
    let holder = row.checkout.holder.clone();
    // Stale (a proposal) once anyone else took the file, or an admin broke the lease.
    let holds_lease = match &row.checkout.broken {
        Some(_) => false,
        None if !lease_still_ours(tx, &artifact, &row)? => false,
        None => {
            let expires_at = row.checkout.expires_at.max(after(now, 60));
            let wanted = checkout_lease(id, actor, row.checkout.note.clone(), now, expires_at);
            acquire(tx, &mut artifact, wanted, now)?.is_ok()
        }
    };
    let result = if blob.digest == artifact.head.digest {
        StoredResult::Unchanged {
            version: artifact.head.version,
            digest: blob.digest.clone(),
        }
    } else if holds_lease && artifact.head.version == row.checkout.version {
        let head = commit_version(tx, &mut artifact, blob, actor, now)?;
        StoredResult::Committed {
            version: head.version,
            digest: head.digest,
        }
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
    release(tx, &mut artifact, &holder, now)?;
    row.checkout.state = CheckoutState::Closed;
    row.checkin_digest = Some(blob.digest.clone());
    tx.put_checkout(&row, Some(&result), Some(now))?;
    event(
        tx,
        "checkout.closed",
        artifact.id,
        actor,
        Some(&holder),
        now,
        json!({ "checkout_id": id, "result": result }),
    )?;
    row.checkout.result = Some(tx.resolve_result(result)?);
    Ok(row.checkout)
}

/// The check-out and its artifact's head digest before an upload: to refuse
/// early, and to know whether the upload's bytes will need storing.
pub fn checkin_precheck(
    tx: &Tx,
    actor: &Participant,
    id: CheckoutId,
) -> Result<(CheckoutRow, Digest)> {
    let row = own_checkout(tx, actor, id, "check in")?;
    let head = load_artifact(tx, row.checkout.artifact_id)?.head;
    Ok((row, head.digest))
}

pub fn cancel(tx: &Tx, actor: &Participant, id: CheckoutId, now: Timestamp) -> Result<Checkout> {
    let mut row = own_checkout(tx, actor, id, "cancel")?;
    if row.checkout.state == CheckoutState::Closed {
        return Ok(row.checkout);
    }
    let mut artifact = load_artifact(tx, row.checkout.artifact_id)?;
    let holder = row.checkout.holder.clone();
    release(tx, &mut artifact, &holder, now)?;
    row.checkout.state = CheckoutState::Closed;
    tx.put_checkout(&row, None, Some(now))?;
    event(
        tx,
        "checkout.closed",
        artifact.id,
        actor,
        Some(&holder),
        now,
        json!({ "checkout_id": id, "result": null }),
    )?;
    Ok(row.checkout)
}

// ----- agent edits

pub fn begin_edit(
    tx: &Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    ttl_seconds: Option<u64>,
    now: Timestamp,
) -> Refusable<Edit> {
    let ttl = lease_seconds(ttl_seconds, DEFAULT_EDIT_TTL_SECONDS)?;
    let mut artifact = load_artifact(tx, artifact_id)?;
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

fn own_edit(tx: &Tx, actor: &Participant, id: EditId) -> Result<EditRow> {
    let row = tx
        .edit(id)?
        .ok_or_else(|| Error::NotFound(format!("no edit {id}")))?;
    if row.edit.participant != *actor {
        return Err(Error::Forbidden(format!(
            "only {}, who began edit {id}, may commit or release it",
            row.edit.participant
        )));
    }
    Ok(row)
}

/// Commits an edit if the head is still its base, whatever became of its lease
/// (rule 14), then releases the lease. A lapsed edit takes the lease again only
/// if nobody else holds the file. A retry gets the same answer.
pub fn commit_edit(
    tx: &Tx,
    actor: &Participant,
    id: EditId,
    blob: &Blob,
    now: Timestamp,
) -> Refusable<CheckinResult> {
    let mut row = own_edit(tx, actor, id)?;
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
    let result = if blob.digest == artifact.head.digest {
        StoredResult::Unchanged {
            version: artifact.head.version,
            digest: blob.digest.clone(),
        }
    } else {
        let head = commit_version(tx, &mut artifact, blob, actor, now)?;
        StoredResult::Committed {
            version: head.version,
            digest: head.digest,
        }
    };
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
pub fn edit_precheck(tx: &Tx, actor: &Participant, id: EditId) -> Result<(EditRow, Head)> {
    let row = own_edit(tx, actor, id)?;
    let head = load_artifact(tx, row.edit.artifact_id)?.head;
    Ok((row, head))
}

/// Ends an edit without committing. Idempotent.
pub fn release_edit(tx: &Tx, actor: &Participant, id: EditId, now: Timestamp) -> Result<()> {
    let mut row = own_edit(tx, actor, id)?;
    if row.state != EditState::Open {
        return Ok(());
    }
    let mut artifact = load_artifact(tx, row.edit.artifact_id)?;
    release(tx, &mut artifact, &row.edit.holder, now)?;
    row.state = EditState::Released;
    tx.put_edit(&row, now)
}

// ----- proposals

/// A proposal `actor` may decide (its author or an admin): still open, or
/// already in the state the decision leads to (a retry).
enum Decidable {
    Open(Proposal),
    AlreadyDone(Proposal),
}

fn decidable_proposal(
    tx: &Tx,
    actor: &Participant,
    id: ProposalId,
    action: &str,
    done: ProposalState,
) -> Result<Decidable> {
    let proposal = tx
        .proposal(id)?
        .ok_or_else(|| Error::NotFound(format!("no proposal {id}")))?;
    if proposal.author != *actor && !is_admin(tx, actor)? {
        return Err(Error::Forbidden(format!(
            "only {}, who made proposal {id}, or an admin may {action} it",
            proposal.author
        )));
    }
    match proposal.state {
        ProposalState::Open => Ok(Decidable::Open(proposal)),
        state if state == done => Ok(Decidable::AlreadyDone(proposal)),
        state => Err(Error::Invalid(format!(
            "proposal {id} is {}, not open: only an open proposal can be {action}ed",
            format!("{state:?}").to_lowercase()
        ))),
    }
}

/// Commits an open proposal as the new head, if the head is still what it was
/// made against, under a short lease of its own (refused while anyone holds the file).
pub fn accept_proposal(
    tx: &Tx,
    actor: &Participant,
    id: ProposalId,
    now: Timestamp,
) -> Refusable<Proposal> {
    let mut proposal = match decidable_proposal(tx, actor, id, "accept", ProposalState::Accepted)? {
        Decidable::AlreadyDone(proposal) => return Ok(Ok(proposal)),
        Decidable::Open(proposal) => proposal,
    };
    let mut artifact = load_artifact(tx, proposal.artifact_id)?;
    if artifact.head.digest != proposal.test_digest {
        return Ok(Err(Error::ProposalStale {
            head: Box::new(artifact.head),
        }));
    }
    let holder = Lease::edit_holder(EditId::new());
    let wanted = edit_lease(
        holder.clone(),
        actor,
        now,
        after(now, DEFAULT_EDIT_TTL_SECONDS),
    );
    if let Err(refusal) = acquire(tx, &mut artifact, wanted, now)? {
        return Ok(Err(refusal));
    }
    let blob = Blob {
        digest: proposal.digest.clone(),
        size: proposal.size,
        message: proposal.message.clone(),
    };
    let head = commit_version(tx, &mut artifact, &blob, &proposal.author, now)?;
    tx.decide_proposal(id, ProposalState::Accepted, actor, now, None)?;
    event(
        tx,
        "proposal.accepted",
        artifact.id,
        actor,
        None,
        now,
        json!({ "proposal_id": id, "version": head.version }),
    )?;
    release(tx, &mut artifact, &holder, now)?;
    proposal.state = ProposalState::Accepted;
    Ok(Ok(proposal))
}

/// Makes a new proposal of the same bytes against the current head; the old one
/// is superseded. A retry returns the same new proposal.
pub fn rebuild_proposal(
    tx: &Tx,
    actor: &Participant,
    id: ProposalId,
    now: Timestamp,
) -> Result<Proposal> {
    let old = match decidable_proposal(tx, actor, id, "rebuild", ProposalState::Superseded)? {
        Decidable::AlreadyDone(_) => {
            return tx
                .successor(id)?
                .and_then(|next| tx.proposal(next).transpose())
                .transpose()?
                .ok_or_else(|| {
                    Error::Internal(format!("superseded proposal {id} has no successor"))
                });
        }
        Decidable::Open(proposal) => proposal,
    };
    let artifact = load_artifact(tx, old.artifact_id)?;
    let blob = Blob {
        digest: old.digest.clone(),
        size: old.size,
        message: old.message.clone(),
    };
    let new = propose(
        tx,
        &artifact,
        &blob,
        &old.author,
        old.provenance.clone(),
        old.checkout_id,
        now,
    )?;
    tx.decide_proposal(id, ProposalState::Superseded, actor, now, Some(new.id))?;
    Ok(new)
}

pub fn reject_proposal(
    tx: &Tx,
    actor: &Participant,
    id: ProposalId,
    now: Timestamp,
) -> Result<Proposal> {
    let mut proposal = match decidable_proposal(tx, actor, id, "reject", ProposalState::Rejected)? {
        Decidable::AlreadyDone(proposal) => return Ok(proposal),
        Decidable::Open(proposal) => proposal,
    };
    tx.decide_proposal(id, ProposalState::Rejected, actor, now, None)?;
    event(
        tx,
        "proposal.rejected",
        proposal.artifact_id,
        actor,
        None,
        now,
        json!({ "proposal_id": id }),
    )?;
    proposal.state = ProposalState::Rejected;
    Ok(proposal)
}

// ----- administration

/// An admin ends someone's lease. A broken check-out's later check-in becomes a
/// proposal; a broken edit can no longer commit.
pub fn break_lease(
    tx: &Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    reason: &str,
    now: Timestamp,
) -> Result<Artifact> {
    if !is_admin(tx, actor)? {
        return Err(Error::Forbidden(format!(
            "only an admin may break a lease, and {actor} is not one"
        )));
    }
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
        json!({ "reason": reason, "holder_participant": lease.participant, "checkout_id": lease.checkout_id }),
    )?;
    if let Some(checkout_id) = lease.checkout_id {
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
pub fn sweep(tx: &Tx, now: Timestamp) -> Result<usize> {
    let lapsed = tx.lapsed_leases(now)?;
    for (artifact_id, lease) in &lapsed {
        record_lapse(tx, *artifact_id, lease, now)?;
    }
    Ok(lapsed.len())
}

//! The lease rules of `docs/DESIGN.md`, as functions over one store
//! transaction. Each takes `now` from its caller and reads no clock. A lease
//! change and its event are written in the same transaction.
//!
//! A refusal that must still record something (a `lease.contended` event, a
//! released lease) returns `Ok(Err(refusal))`, so the transaction commits and
//! the caller then reports the refusal.
//!
//! Split by what changes together: [`leases`] (taking, releasing, breaking
//! and lapsing a lease), [`artifacts`], [`checkouts`], [`edits`],
//! [`proposals`] and [`requests`]; here what several of them share. Never reads the clock nor
//! knows SQL: only `now` and [`Tx`].

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_model::{error, failpoint, model};
use leasedesk_store as store;

use serde_json::json;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{NewEvent, StoredResult, Tx};
use access::Caller;

pub mod access;
mod artifacts;
mod changes;
mod checkouts;
mod collisions;
mod edits;
mod git;
mod leases;
mod listing;
mod proposals;
mod requests;
pub mod review;
pub mod studio;

pub use artifacts::{artifact_at, import, import_precheck, rename, version_head, visible};
pub use changes::{change, check_out_many, commit_change, stage};
pub use checkouts::{cancel, check_in, check_out, checkin_precheck, checkout, device_of, extend};
pub use edits::{begin_edit, commit_edit, edit_precheck, release_edit};
pub use git::{lfs_object_access, lock, locks, unlock};
pub use leases::{break_lease, sweep, Via};
pub use listing::{artifact_page, folders};
pub use proposals::{accept_proposal, proposal, proposals, rebuild_proposal, reject_proposal};
pub use requests::{ask, reply, requests, withdraw};

/// A refusal that commits what was recorded before it.
pub type Refusable<T> = Result<Result<T>>;

/// Bytes already hashed and stored as a blob, with what they come with.
#[derive(Clone, Debug)]
pub struct Blob {
    pub digest: Digest,
    pub size: u64,
    /// The description given with the upload (checked: see `check_message`).
    pub message: Option<String>,
    /// The change they are part of, if any.
    pub change: Option<ChangeId>,
}

impl Blob {
    /// A proposal's bytes, with its description.
    fn of(proposal: &Proposal) -> Self {
        Blob {
            digest: proposal.digest.clone(),
            size: proposal.size,
            message: proposal.message.clone(),
            change: proposal.change_id,
        }
    }
}

fn event(
    tx: &dyn Tx,
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

fn load_artifact(tx: &dyn Tx, id: ArtifactId) -> Result<Artifact> {
    tx.artifact(id)?.ok_or_else(|| no_artifact(id))
}

/// The refusal for an artifact id that never was, and for one the caller
/// may not see: the same words.
fn no_artifact(id: ArtifactId) -> Error {
    Error::NotFound(format!("no artifact {id}"))
}

/// An artifact the actor can see, with what it may do to it.
pub fn readable(tx: &dyn Tx, actor: &Participant, id: ArtifactId) -> Result<Artifact> {
    Caller::of(tx, actor)?.see(load_artifact(tx, id)?)
}

/// An artifact the actor may change (`forbidden` if it may only read it).
fn writable(tx: &dyn Tx, actor: &Participant, id: ArtifactId) -> Result<Artifact> {
    let artifact = load_artifact(tx, id)?;
    Caller::of(tx, actor)?.require_write(&artifact.path, || no_artifact(id))?;
    Ok(artifact)
}

fn busy(artifact: &Artifact, lease: Lease) -> Error {
    Error::ArtifactBusy {
        path: artifact.path.to_string(),
        lease: Some(Box::new(lease)),
    }
}

pub(crate) fn is_admin(tx: &dyn Tx, participant: &Participant) -> Result<bool> {
    Ok(tx.account(participant)?.is_some_and(|a| a.admin))
}

/// Refuses anyone but an admin to `what` (e.g. "rename a file").
fn require_admin(tx: &dyn Tx, actor: &Participant, what: &str) -> Result<()> {
    if !is_admin(tx, actor)? {
        return Err(Error::Forbidden(format!(
            "only an admin may {what}, and {actor} is not one"
        )));
    }
    Ok(())
}

fn commit_version(
    tx: &dyn Tx,
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
        change_id: blob.change,
    };
    tx.commit_version(artifact.id, &head, artifact.head.version)?;
    event(
        tx,
        "version.committed",
        artifact.id,
        author,
        None,
        now,
        json!({ "version": head.version, "digest": head.digest, "size": head.size, "base_version": artifact.head.version, "message": head.message, "change_id": head.change_id }),
    )?;
    artifact.head = head.clone();
    Ok(head)
}

/// Bytes the head already has are `Unchanged`; any others become the next
/// version.
fn commit_unless_unchanged(
    tx: &dyn Tx,
    artifact: &mut Artifact,
    blob: &Blob,
    author: &Participant,
    now: Timestamp,
) -> Result<StoredResult> {
    if blob.digest == artifact.head.digest {
        return Ok(StoredResult::Unchanged {
            version: artifact.head.version,
            digest: blob.digest.clone(),
        });
    }
    let head = commit_version(tx, artifact, blob, author, now)?;
    Ok(StoredResult::Committed {
        version: head.version,
        digest: head.digest,
    })
}

/// Keeps a stale change as a proposal against the current head.
fn propose(
    tx: &dyn Tx,
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
        change_id: blob.change,
    };
    tx.insert_proposal(&proposal)?;
    event(
        tx,
        "proposal.created",
        artifact.id,
        author,
        None,
        now,
        json!({ "proposal_id": proposal.id, "base_version": proposal.base_version, "provenance": proposal.provenance, "digest": proposal.digest, "message": proposal.message, "change_id": proposal.change_id }),
    )?;
    Ok(proposal)
}

/// Ends every request that still stands on check-out `checkout`: called
/// in the transaction that closes it (checked in, cancelled, lapsed, broken).
fn end_requests(tx: &dyn Tx, checkout: CheckoutId, now: Timestamp) -> Result<()> {
    for mut row in tx.checkout_requests(checkout)? {
        if !row.request.state.is_live() {
            continue;
        }
        row.request.state = RequestState::Ended;
        row.request.ended_at = Some(now);
        tx.put_request(&row)?;
        let holder = row.request.to.clone();
        request_event(tx, "request.ended", &row.request, &holder, now)?;
    }
    Ok(())
}

/// A request's event: the message is read from the request, not copied.
fn request_event(
    tx: &dyn Tx,
    kind: &str,
    request: &Request,
    actor: &Participant,
    now: Timestamp,
) -> Result<()> {
    event(
        tx,
        kind,
        request.artifact_id,
        actor,
        None,
        now,
        json!({ "request_id": request.id }),
    )
}

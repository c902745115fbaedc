//! Proposals: a stale change kept beside the head, accepted (under a short
//! lease of its own), rebuilt against the current head, or rejected, by its
//! author or an admin. Never reads the clock: every function takes `now`.

use serde_json::json;

use super::leases::{acquire, after, edit_lease, release};
use super::{commit_version, event, is_admin, load_artifact, propose, Blob, Refusable};
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{Decision, Tx};

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
    let blob = Blob::of(&proposal);
    let head = commit_version(tx, &mut artifact, &blob, &proposal.author, now)?;
    tx.decide_proposal(id, &Decision::new(ProposalState::Accepted, actor, now))?;
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
    let blob = Blob::of(&old);
    let new = propose(
        tx,
        &artifact,
        &blob,
        &old.author,
        old.provenance.clone(),
        old.checkout_id,
        now,
    )?;
    let decision = Decision::new(ProposalState::Superseded, actor, now);
    tx.decide_proposal(id, &decision.superseded_by(new.id))?;
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
    tx.decide_proposal(id, &Decision::new(ProposalState::Rejected, actor, now))?;
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

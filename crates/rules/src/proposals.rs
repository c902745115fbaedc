//! Proposals: a stale change kept beside the head, accepted (under a short
//! lease of its own), rebuilt against the current head, or rejected, by its
//! author or an admin. Never reads the clock: every function takes `now`.

use serde_json::json;

use super::access::Caller;
use super::leases::{acquire, after, edit_lease, live_lease, release};
use super::{busy, commit_version, event, is_admin, load_artifact, propose, Blob, Refusable};
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{DecisionRow, Tx};

/// A proposal `actor` may decide (its author or an admin): still open, or
/// already in the state the decision leads to (a retry).
enum Decidable {
    Open(Proposal),
    AlreadyDone(Proposal),
}

fn decidable_proposal(
    tx: &dyn Tx,
    actor: &Participant,
    id: ProposalId,
    action: &str,
    done: ProposalState,
) -> Result<Decidable> {
    let unknown = || Error::NotFound(format!("no proposal {id}"));
    let proposal = tx.proposal(id)?.ok_or_else(unknown)?;
    let path = load_artifact(tx, proposal.artifact_id)?.path;
    let caller = Caller::of(tx, actor)?;
    if caller.level(&path) == Level::None {
        return Err(unknown());
    }
    if proposal.author != *actor && !is_admin(tx, actor)? {
        return Err(Error::Forbidden(format!(
            "only {}, who made proposal {id}, or an admin may {action} it",
            proposal.author
        )));
    }
    caller.require_write(&path, unknown)?;
    match proposal.state {
        ProposalState::Open => Ok(Decidable::Open(proposal)),
        state if state == done => Ok(Decidable::AlreadyDone(proposal)),
        state => Err(Error::Invalid(format!(
            "proposal {id} is {}, not open: only an open proposal can be {action}ed",
            format!("{state:?}").to_lowercase()
        ))),
    }
}

/// A proposal of a file the caller can see.
pub fn proposal(tx: &dyn Tx, actor: &Participant, id: ProposalId) -> Result<Proposal> {
    let unknown = || Error::NotFound(format!("no proposal {id}"));
    let proposal = tx.proposal(id)?.ok_or_else(unknown)?;
    let path = load_artifact(tx, proposal.artifact_id)?.path;
    if Caller::of(tx, actor)?.level(&path) == Level::None {
        return Err(unknown());
    }
    Ok(proposal)
}

/// The proposals of files the caller can see.
pub fn proposals(
    tx: &dyn Tx,
    actor: &Participant,
    filter: &ProposalFilter,
) -> Result<Vec<Proposal>> {
    let caller = Caller::of(tx, actor)?;
    let mut all = tx.proposals(filter)?;
    if !caller.unlimited() {
        let mut paths = std::collections::HashMap::new();
        let mut seen = Vec::with_capacity(all.len());
        for proposal in all {
            let level = match paths.get(&proposal.artifact_id) {
                Some(level) => *level,
                None => {
                    let level = caller.level(&load_artifact(tx, proposal.artifact_id)?.path);
                    paths.insert(proposal.artifact_id, level);
                    level
                }
            };
            if level != Level::None {
                seen.push(proposal);
            }
        }
        all = seen;
    }
    Ok(all)
}

/// The open proposals decided with `proposal`: those of its change, or it
/// alone. Deciding them acts on each one's file, so `actor` must be allowed
/// to change every one; a file it cannot see is refused without a word of
/// it (its path, holder or head).
fn decided_together(
    tx: &dyn Tx,
    actor: &Participant,
    proposal: &Proposal,
) -> Result<Vec<Proposal>> {
    let Some(change) = proposal.change_id else {
        return Ok(vec![proposal.clone()]);
    };
    let mut group: Vec<Proposal> = tx
        .change_proposals(change)?
        .into_iter()
        .filter(|p| p.state == ProposalState::Open)
        .collect();
    if !group.iter().any(|p| p.id == proposal.id) {
        group.push(proposal.clone());
    }
    let caller = Caller::of(tx, actor)?;
    for member in &group {
        let path = load_artifact(tx, member.artifact_id)?.path;
        caller.require_write(&path, || {
            Error::Forbidden(format!(
                "proposal {} is decided together with the other files of its change, \
                 and you may not change every one of them: ask an admin",
                proposal.id
            ))
        })?;
    }
    Ok(group)
}

/// Commits an open proposal as the new head, if the head is still what it was
/// made against, under a short lease of its own (refused while anyone holds
/// the file); a change's proposals all together, or none of them.
pub fn accept_proposal(
    tx: &dyn Tx,
    actor: &Participant,
    id: ProposalId,
    now: Timestamp,
) -> Refusable<Proposal> {
    let proposal = match decidable_proposal(tx, actor, id, "accept", ProposalState::Accepted)? {
        Decidable::AlreadyDone(proposal) => return Ok(Ok(proposal)),
        Decidable::Open(proposal) => proposal,
    };
    let group = decided_together(tx, actor, &proposal)?;
    // Every file checked before any is written: all or none.
    let mut artifacts = Vec::with_capacity(group.len());
    for member in &group {
        let mut artifact = load_artifact(tx, member.artifact_id)?;
        if artifact.head.digest != member.test_digest {
            return Ok(Err(Error::ProposalStale {
                head: Box::new(artifact.head),
            }));
        }
        if let Some(lease) = live_lease(tx, &mut artifact, now)? {
            return Ok(Err(busy(&artifact, lease)));
        }
        artifacts.push(artifact);
    }
    for (member, mut artifact) in group.iter().zip(artifacts) {
        let holder = Lease::edit_holder(EditId::new());
        let wanted = edit_lease(
            holder.clone(),
            actor,
            now,
            after(now, DEFAULT_EDIT_TTL_SECONDS),
        );
        // Nobody holds it (checked above, in this transaction).
        acquire(tx, &mut artifact, wanted, now)??;
        let head = commit_version(tx, &mut artifact, &Blob::of(member), &member.author, now)?;
        tx.decide_proposal(
            member.id,
            &DecisionRow::new(ProposalState::Accepted, actor, now),
        )?;
        // What was said about the proposal is now said about its version.
        tx.follow_proposal(member.id, ReviewTarget::Version(head.version))?;
        event(
            tx,
            "proposal.accepted",
            artifact.id,
            actor,
            None,
            now,
            json!({ "proposal_id": member.id, "version": head.version }),
        )?;
        release(tx, &mut artifact, &holder, now)?;
    }
    Ok(Ok(Proposal {
        state: ProposalState::Accepted,
        ..proposal
    }))
}

/// Makes a new proposal of the same bytes against the current head; the old one
/// is superseded (a change's proposals all together). A retry returns the
/// same new proposal.
pub fn rebuild_proposal(
    tx: &dyn Tx,
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
    let mut rebuilt = None;
    for member in decided_together(tx, actor, &old)? {
        let artifact = load_artifact(tx, member.artifact_id)?;
        let new = propose(
            tx,
            &artifact,
            &Blob::of(&member),
            &member.author,
            member.provenance.clone(),
            member.checkout_id,
            now,
        )?;
        let decision = DecisionRow::new(ProposalState::Superseded, actor, now);
        tx.decide_proposal(member.id, &decision.superseded_by(new.id))?;
        tx.follow_proposal(member.id, ReviewTarget::Proposal(new.id))?;
        if member.id == id {
            rebuilt = Some(new);
        }
    }
    rebuilt.ok_or_else(|| Error::Internal(format!("proposal {id} was not rebuilt")))
}

/// Rejects a proposal (a change's proposals all together).
pub fn reject_proposal(
    tx: &dyn Tx,
    actor: &Participant,
    id: ProposalId,
    now: Timestamp,
) -> Result<Proposal> {
    let proposal = match decidable_proposal(tx, actor, id, "reject", ProposalState::Rejected)? {
        Decidable::AlreadyDone(proposal) => return Ok(proposal),
        Decidable::Open(proposal) => proposal,
    };
    for member in decided_together(tx, actor, &proposal)? {
        tx.decide_proposal(
            member.id,
            &DecisionRow::new(ProposalState::Rejected, actor, now),
        )?;
        event(
            tx,
            "proposal.rejected",
            member.artifact_id,
            actor,
            None,
            now,
            json!({ "proposal_id": member.id }),
        )?;
    }
    Ok(Proposal {
        state: ProposalState::Rejected,
        ..proposal
    })
}

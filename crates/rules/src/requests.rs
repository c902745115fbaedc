//! Asking the holder (API.md "Asking the holder"): a request to the actor of
//! the check-out that holds a file, the holder's replies and the asker's
//! withdrawal. A request ends with its check-out, in the transaction that
//! closes it (`end_requests`, shared with the lease rules). Never releases
//! a lease: only the holder's own check-in or cancel does. Never reads the
//! clock: every function takes `now`.

use super::access::Caller;
use super::leases::live_lease;
use super::{readable, request_event};
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{RequestRow, Tx};

/// Asks whoever holds `artifact_id` under a check-out to release it. Asking
/// again while one's request on that check-out stands replaces its message
/// (`false`: not new). The holder is told (`request.opened`) at most once
/// in [`REQUEST_QUIET_SECONDS`] per asker and check-out.
pub fn ask(
    tx: &dyn Tx,
    actor: &Participant,
    artifact_id: ArtifactId,
    message: Option<&str>,
    now: Timestamp,
) -> Result<(Request, bool)> {
    let message = check_request_message(message)?;
    let mut artifact = readable(tx, actor, artifact_id)?;
    let path = artifact.path.clone();
    let lease = match live_lease(tx, &mut artifact, now)? {
        Some(lease) if lease.kind == LeaseKind::Edit => {
            return Err(Error::NotHeld(format!(
                "{path} is held by {}'s edit, which ends within minutes by itself: \
                 there is no check-out to ask about",
                lease.participant
            )))
        }
        Some(lease) => lease,
        None => return Err(Error::NotHeld(format!("nobody holds {path}: check it out"))),
    };
    let Some(checkout_id) = lease.checkout_id else {
        return Err(Error::Internal(format!(
            "{path}'s check-out lease names no check-out"
        )));
    };
    if lease.participant == *actor {
        return Err(Error::Invalid(format!("you hold {path} yourself")));
    }
    let mine: Vec<RequestRow> = tx
        .checkout_requests(checkout_id)?
        .into_iter()
        .filter(|row| row.request.from == *actor)
        .collect();
    let last_told = mine.iter().map(|row| row.notified_at).max();
    let tell =
        last_told.is_none_or(|at| now - at >= chrono::TimeDelta::seconds(REQUEST_QUIET_SECONDS));
    let standing = mine.into_iter().find(|row| row.request.state.is_live());
    let is_new = standing.is_none();
    let mut row = standing.unwrap_or_else(|| RequestRow {
        request: Request {
            id: RequestId::new(),
            artifact_id,
            path: artifact.path.clone(),
            from: actor.clone(),
            to: lease.participant.clone(),
            checkout_id,
            message: None,
            state: RequestState::Open,
            reply: None,
            created_at: now,
            replied_at: None,
            ended_at: None,
        },
        notified_at: last_told.unwrap_or(now),
    });
    row.request.message = message;
    if tell {
        row.notified_at = now;
    }
    tx.put_request(&row)?;
    if tell {
        request_event(tx, "request.opened", &row.request, actor, now)?;
    }
    Ok((row.request, is_new))
}

/// The holder answers a request that still stands; they may answer again.
pub fn reply(
    tx: &dyn Tx,
    actor: &Participant,
    id: RequestId,
    message: &str,
    now: Timestamp,
) -> Result<Request> {
    let Some(message) = check_request_message(Some(message))? else {
        return Err(Error::Invalid(
            "say what you answer: the reply is empty".into(),
        ));
    };
    let mut row = known_request(tx, actor, id)?;
    let request = &row.request;
    if request.to != *actor {
        return Err(Error::Forbidden(format!(
            "only {}, who holds {}, may reply to this request",
            request.to, request.path
        )));
    }
    if !request.state.is_live() {
        return Err(Error::Invalid(format!(
            "{}'s request for {} has {}: there is nothing to reply to",
            request.from,
            request.path,
            match request.state {
                RequestState::Withdrawn => "been withdrawn",
                _ => "ended with your check-out",
            }
        )));
    }
    row.request.state = RequestState::Replied;
    row.request.reply = Some(message);
    row.request.replied_at = Some(now);
    tx.put_request(&row)?;
    request_event(tx, "request.replied", &row.request, actor, now)?;
    Ok(row.request)
}

/// The asker takes a request back; a request already over stays as it is.
pub fn withdraw(
    tx: &dyn Tx,
    actor: &Participant,
    id: RequestId,
    now: Timestamp,
) -> Result<Request> {
    let mut row = known_request(tx, actor, id)?;
    if row.request.from != *actor {
        return Err(Error::Forbidden(format!(
            "only {}, who asked, may withdraw this request",
            row.request.from
        )));
    }
    if !row.request.state.is_live() {
        return Ok(row.request);
    }
    row.request.state = RequestState::Withdrawn;
    row.request.ended_at = Some(now);
    tx.put_request(&row)?;
    request_event(tx, "request.withdrawn", &row.request, actor, now)?;
    Ok(row.request)
}

/// A request about a file the actor can see.
fn known_request(tx: &dyn Tx, actor: &Participant, id: RequestId) -> Result<RequestRow> {
    let unknown = || Error::NotFound(format!("no request {id}"));
    let row = tx.request(id)?.ok_or_else(unknown)?;
    if Caller::of(tx, actor)?.level(&row.request.path) == Level::None {
        return Err(unknown());
    }
    Ok(row)
}

/// The requests to and from the actor about files it can see.
pub fn requests(tx: &dyn Tx, actor: &Participant, live_only: bool) -> Result<Vec<Request>> {
    let caller = Caller::of(tx, actor)?;
    let mut requests = tx.requests_of(actor, live_only)?;
    requests.retain(|r| caller.level(&r.path) != Level::None);
    Ok(requests)
}

//! Changes of several files: check-outs taken together (all or none), bytes
//! staged for each, then one change that commits every changed file, or, if
//! any file is stale, keeps every changed file as a proposal of the change.
//! Never reads the clock: every function takes `now`.

use serde_json::json;
use uuid::Uuid;

use super::access::Caller;
use super::checkouts::{check_out, close, own_checkout, still_current};
use super::{commit_unless_unchanged, load_artifact, propose, writable, Blob, Refusable};
use crate::error::{Error, Result};
use crate::failpoint::{self, Failpoints};
use crate::model::*;
use crate::store::{ChangeRow, CheckoutRow, NewEvent, StoredResult, Tx};

/// Checks out every artifact of `request`, or none: if anyone else holds
/// any of them, the refusal names each such file.
pub fn check_out_many(
    tx: &dyn Tx,
    actor: &Participant,
    device: Option<&DeviceRef>,
    request: &CheckoutsRequest,
    now: Timestamp,
    failpoints: &Failpoints,
) -> Refusable<Vec<Checkout>> {
    check_distinct(&request.artifact_ids, "files")?;
    let mut busy = Vec::new();
    for &id in &request.artifact_ids {
        // A file the actor may not change refuses the whole set, before
        // anything is said about who holds which.
        let artifact = writable(tx, actor, id)?;
        if let Some(lease) = artifact.lease.filter(|l| l.is_live(now)) {
            busy.push(BusyFile {
                artifact_id: id,
                path: artifact.path,
                lease,
            });
        }
    }
    if !busy.is_empty() {
        return Ok(Err(Error::SomeBusy(busy)));
    }
    let single = CheckoutRequest {
        ttl_seconds: request.ttl_seconds,
        note: request.note.clone(),
    };
    request
        .artifact_ids
        .iter()
        // Nobody holds any of them: a refusal now rolls every one back.
        .map(|&id| check_out(tx, actor, device, id, &single, now, failpoints, None)?)
        .collect::<Result<_>>()
        .map(Ok)
}

/// Keeps `blob` as the bytes of check-out `id`'s next change, replacing
/// any staged before.
pub fn stage(tx: &dyn Tx, actor: &Participant, id: CheckoutId, blob: &Blob) -> Result<StagedFile> {
    let mut row = own_checkout(tx, actor, id, "stage a file for", Level::Write)?;
    if row.checkout.state == CheckoutState::Closed {
        return Err(Error::CheckoutClosed(format!(
            "your check-out of {} is closed: check the file out again",
            row.checkout.path
        )));
    }
    let staged = StagedFile {
        digest: blob.digest.clone(),
        size: blob.size,
    };
    if let Some(before) = row.staged.replace(staged.clone()) {
        if before.digest != staged.digest {
            tx.drop_blob(&before.digest)?;
        }
    }
    tx.put_checkout(&row, None, None)?;
    Ok(staged)
}

/// Checks in the staged bytes of every check-out of `request` as one change.
pub fn commit_change(
    tx: &dyn Tx,
    actor: &Participant,
    request: &ChangeRequest,
    now: Timestamp,
    failpoints: &Failpoints,
) -> Result<Change> {
    check_distinct(&request.checkouts, "check-outs")?;
    let message = check_message(request.message.clone())?;
    let rows = request
        .checkouts
        .iter()
        .map(|&id| own_checkout(tx, actor, id, "check in", Level::Write))
        .collect::<Result<Vec<_>>>()?;
    if let Some(done) = retried(tx, actor, &rows, &request.checkouts)? {
        return Ok(done);
    }
    let mut artifacts = std::collections::HashSet::with_capacity(rows.len());
    for row in &rows {
        let path = &row.checkout.path;
        if !artifacts.insert(row.checkout.artifact_id) {
            return Err(Error::Invalid(format!(
                "{path} is in the change twice (two check-outs of it): leave one out"
            )));
        }
        if row.checkout.state == CheckoutState::Closed {
            return Err(Error::CheckoutClosed(format!(
                "your check-out of {path} is closed: leave it out of the change, or check the file out again"
            )));
        }
        if row.staged.is_none() {
            return Err(Error::NotStaged(format!(
                "nothing is staged for {path}: stage its file before checking in the change"
            )));
        }
    }
    let mut files = Vec::with_capacity(rows.len());
    for row in rows {
        let mut artifact = load_artifact(tx, row.checkout.artifact_id)?;
        let current = still_current(tx, actor, &row, &mut artifact, now)?;
        files.push((row, artifact, current));
    }
    // One stale file makes every changed file a proposal.
    let stale = files
        .iter()
        .any(|(row, artifact, current)| !current && staged(row).digest != artifact.head.digest);
    let id = ChangeId::new();
    let mut done = Vec::with_capacity(files.len());
    // The event names each file by id only: each file's own events say more.
    let mut recorded = Vec::with_capacity(files.len());
    for (i, (mut row, mut artifact, _)) in files.into_iter().enumerate() {
        if i == 1 {
            failpoints.hit(failpoint::at::CHANGE_BETWEEN_FILES)?;
        }
        let bytes = row
            .staged
            .take()
            .expect("every check-out was checked to be staged");
        let blob = Blob {
            digest: bytes.digest,
            size: bytes.size,
            message: message.clone(),
            change: Some(id),
        };
        let result = if stale && blob.digest != artifact.head.digest {
            let provenance = Provenance {
                version: row.checkout.version,
                digest: row.checkout.digest.clone(),
            };
            let checkout = Some(row.checkout.id);
            let proposal = propose(tx, &artifact, &blob, actor, provenance, checkout, now)?;
            StoredResult::Proposal {
                proposal_id: proposal.id,
            }
        } else {
            commit_unless_unchanged(tx, &mut artifact, &blob, actor, now)?
        };
        row.checkin_digest = Some(blob.digest.clone());
        row.checkout.change_id = Some(id);
        close(tx, &mut row, &mut artifact, actor, Some(&result), now, None)?;
        recorded.push(
            json!({ "artifact_id": artifact.id, "checkout_id": row.checkout.id, "result": result }),
        );
        done.push(ChangeFile {
            artifact_id: artifact.id,
            path: artifact.path,
            checkout_id: row.checkout.id,
            result: tx.resolve_result(result)?,
        });
    }
    let change = Change {
        id,
        message,
        author: actor.clone(),
        created_at: now,
        outcome: match stale {
            true => ChangeOutcome::Proposal,
            false => ChangeOutcome::Committed,
        },
        files: done,
    };
    tx.insert_change(&ChangeRow {
        id,
        author: change.author.clone(),
        message: change.message.clone(),
        created_at: now,
        outcome: change.outcome,
        checkouts: request.checkouts.clone(),
    })?;
    let kind = match change.outcome {
        ChangeOutcome::Committed => "change.committed",
        ChangeOutcome::Proposal => "change.proposed",
    };
    tx.insert_event(NewEvent {
        id: Uuid::new_v4(),
        kind,
        artifact_id: None,
        participant: Some(actor),
        holder: None,
        at: now,
        data: json!({ "change_id": id, "files": recorded }),
    })?;
    Ok(change)
}

fn staged(row: &CheckoutRow) -> &StagedFile {
    row.staged
        .as_ref()
        .expect("every check-out was checked to be staged")
}

/// The change these check-outs already made, if every one of them is
/// closed by one change of exactly these check-outs (a retry).
fn retried(
    tx: &dyn Tx,
    actor: &Participant,
    rows: &[CheckoutRow],
    asked: &[CheckoutId],
) -> Result<Option<Change>> {
    let Some(id) = rows[0].checkout.change_id else {
        return Ok(None);
    };
    if rows.iter().any(|r| r.checkout.change_id != Some(id)) {
        return Ok(None);
    }
    let made = change(tx, actor, id)?;
    let mut theirs: Vec<CheckoutId> = made.files.iter().map(|f| f.checkout_id).collect();
    let mut ours = asked.to_vec();
    theirs.sort();
    ours.sort();
    Ok((theirs == ours).then_some(made))
}

/// A change, its files in the order its check-outs were given: those the
/// caller can see. A change of none of them is not there for it.
pub fn change(tx: &dyn Tx, caller: &Participant, id: ChangeId) -> Result<Change> {
    let unknown = || Error::NotFound(format!("no change {id}"));
    let row = tx.change(id)?.ok_or_else(unknown)?;
    let caller = Caller::of(tx, caller)?;
    let mut files = Vec::with_capacity(row.checkouts.len());
    for checkout in &row.checkouts {
        let closed = tx
            .checkout(*checkout)?
            .ok_or_else(|| {
                Error::Internal(format!("check-out {checkout} of change {id} is missing"))
            })?
            .checkout;
        if caller.level(&closed.path) == Level::None {
            continue;
        }
        let result = closed.result.ok_or_else(|| {
            Error::Internal(format!("check-out {checkout} of change {id} has no result"))
        })?;
        files.push(ChangeFile {
            artifact_id: closed.artifact_id,
            path: closed.path,
            checkout_id: closed.id,
            result,
        });
    }
    if files.is_empty() {
        return Err(unknown());
    }
    Ok(Change {
        id,
        message: row.message,
        author: row.author,
        created_at: row.created_at,
        outcome: row.outcome,
        files,
    })
}

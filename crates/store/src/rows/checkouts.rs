//! Check-outs and edits, the proposals and changes their check-ins make,
//! and requests to a holder: their columns, and the statements both stores
//! run.

use super::field::{by_key, count_field, int, text, text_opt, to_json};
use super::{
    change_outcome, change_outcome_str, checkout_state, checkout_state_str, count, edit_state,
    edit_state_str, json, millis, parsed, parsed_opt, proposal_state, proposal_state_str,
    request_state, request_state_str, signed, stored_path, time, time_at, Field, Row, Statement,
};
use crate::error::Result;
use crate::model::*;
use crate::{ChangeRow, CheckoutRow, DecisionRow, EditRow, RequestRow, StoredResult};

pub const CHECKOUT_COLUMNS: &str = "c.id, c.artifact_id, a.path, c.version, c.digest, c.actor, c.note, \
     c.created_at, c.expires_at, c.state, c.checkin_digest, c.result, c.broken_by, c.broken_reason, c.broken_at, \
     c.lease_epoch, c.staged_digest, c.staged_size, c.change_id, c.device_id, c.device_name";

/// A check-out row ([`CHECKOUT_COLUMNS`]) and its stored result, which the
/// store resolves (a proposal in its current state).
pub fn checkout(row: &(impl Row + ?Sized)) -> Result<(CheckoutRow, Option<StoredResult>)> {
    let id: CheckoutId = parsed(row, 0)?;
    let actor: Participant = parsed(row, 5)?;
    let state = row.text(9)?;
    let broken = match row.text_opt(12)? {
        None => None,
        Some(_) => Some(Broken {
            by: parsed(row, 12)?,
            reason: row.text(13)?,
            at: time_at(row, 14)?,
        }),
    };
    let checkout = CheckoutRow {
        checkout: Checkout {
            id,
            artifact_id: parsed(row, 1)?,
            path: stored_path(row, 2)?,
            version: count(row, 3)?,
            digest: parsed(row, 4)?,
            holder: Lease::checkout_holder(id, &actor),
            actor,
            note: row.text_opt(6)?,
            created_at: time_at(row, 7)?,
            expires_at: time_at(row, 8)?,
            state: checkout_state(&state),
            result: None,
            broken,
            change_id: parsed_opt(row, 18)?,
            device: match row.text_opt(19)? {
                None => None,
                Some(id) => Some(DeviceRef {
                    id,
                    name: row.text_opt(20)?.unwrap_or_default(),
                }),
            },
        },
        checkin_digest: parsed_opt(row, 10)?,
        lease_epoch: count(row, 15)?,
        staged: match row.text_opt(16)? {
            None => None,
            Some(_) => Some(StagedFile {
                digest: parsed(row, 16)?,
                size: count(row, 17)?,
            }),
        },
    };
    Ok((checkout, json(row, 11)?))
}

/// The check-outs with their artifacts, for the artifact's current path.
const CHECKOUTS_JOINED: &str = "checkouts c JOIN artifacts a ON a.id = c.artifact_id";

pub fn select_checkout(p: char, id: CheckoutId) -> Statement {
    by_key(
        format!("SELECT {CHECKOUT_COLUMNS} FROM {CHECKOUTS_JOINED} WHERE c.id = {p}1"),
        id,
    )
}

/// A participant's check-outs, newest first; only open ones if `open_only`.
pub fn select_checkouts_of(p: char, actor: &Participant, open_only: bool) -> Statement {
    Statement::new(
        format!(
            "SELECT {CHECKOUT_COLUMNS} FROM {CHECKOUTS_JOINED}
             WHERE c.actor = {p}1 AND (NOT {p}2 OR c.state = 'open') ORDER BY c.created_at DESC, c.id"
        ),
        vec![text(actor), Field::Bool(open_only)],
    )
}

/// id, artifact_id, version, digest, actor, note, created_at, expires_at,
/// state, closed_at, checkin_digest, result, broken_by, broken_reason,
/// broken_at, lease_epoch, staged_digest, staged_size, change_id, device_id,
/// device_name
fn checkout_fields(
    row: &CheckoutRow,
    result: Option<&StoredResult>,
    closed_at: Option<Timestamp>,
) -> Result<Vec<Field>> {
    let c = &row.checkout;
    let broken = c.broken.as_ref();
    Ok(vec![
        text(c.id),
        text(c.artifact_id),
        count_field(c.version)?,
        text(&c.digest),
        text(&c.actor),
        text_opt(c.note.as_ref()),
        int(millis(c.created_at)),
        int(millis(c.expires_at)),
        text(checkout_state_str(c.state)),
        Field::Int(closed_at.map(millis)),
        text_opt(row.checkin_digest.as_ref()),
        Field::Text(result.map(to_json)),
        text_opt(broken.map(|b| &b.by)),
        text_opt(broken.map(|b| &b.reason)),
        Field::Int(broken.map(|b| millis(b.at))),
        count_field(row.lease_epoch)?,
        text_opt(row.staged.as_ref().map(|s| &s.digest)),
        Field::Int(row.staged.as_ref().map(|s| signed(s.size)).transpose()?),
        text_opt(c.change_id),
        text_opt(c.device.as_ref().map(|d| &d.id)),
        text_opt(c.device.as_ref().map(|d| &d.name)),
    ])
}

/// Writes a whole check-out record, new or changed.
pub fn put_checkout(
    p: char,
    row: &CheckoutRow,
    result: Option<&StoredResult>,
    closed_at: Option<Timestamp>,
) -> Result<Statement> {
    Ok(Statement::new(
        format!(
            "INSERT INTO checkouts (id, artifact_id, version, digest, actor, note, created_at, expires_at,
                 state, closed_at, checkin_digest, result, broken_by, broken_reason, broken_at, lease_epoch,
                 staged_digest, staged_size, change_id, device_id, device_name)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9, {p}10, {p}11, {p}12, {p}13, {p}14,
                 {p}15, {p}16, {p}17, {p}18, {p}19, {p}20, {p}21)
             ON CONFLICT (id) DO UPDATE SET expires_at = {p}8, state = {p}9, closed_at = {p}10,
                 checkin_digest = {p}11, result = {p}12, broken_by = {p}13, broken_reason = {p}14, broken_at = {p}15,
                 lease_epoch = {p}16, staged_digest = {p}17, staged_size = {p}18, change_id = {p}19"
        ),
        checkout_fields(row, result, closed_at)?,
    ))
}

pub const EDIT_COLUMNS: &str = "id, artifact_id, participant, base_version, base_digest, \
     expires_at, state, commit_digest, result";

pub fn edit(row: &(impl Row + ?Sized)) -> Result<EditRow> {
    let id: EditId = parsed(row, 0)?;
    let state = row.text(6)?;
    Ok(EditRow {
        edit: Edit {
            id,
            artifact_id: parsed(row, 1)?,
            holder: Lease::edit_holder(id),
            participant: parsed(row, 2)?,
            base_version: count(row, 3)?,
            base_digest: parsed(row, 4)?,
            expires_at: time_at(row, 5)?,
        },
        state: edit_state(&state),
        commit_digest: parsed_opt(row, 7)?,
        result: json(row, 8)?,
    })
}

pub fn select_edit(p: char, id: EditId) -> Statement {
    by_key(
        format!("SELECT {EDIT_COLUMNS} FROM edits WHERE id = {p}1"),
        id,
    )
}

/// id, artifact_id, participant, base_version, base_digest, created_at,
/// expires_at, state, commit_digest, result
fn edit_fields(row: &EditRow, now: Timestamp) -> Result<Vec<Field>> {
    let e = &row.edit;
    Ok(vec![
        text(e.id),
        text(e.artifact_id),
        text(&e.participant),
        count_field(e.base_version)?,
        text(&e.base_digest),
        int(millis(now)),
        int(millis(e.expires_at)),
        text(edit_state_str(row.state)),
        text_opt(row.commit_digest.as_ref()),
        Field::Text(row.result.as_ref().map(to_json)),
    ])
}

/// Writes an edit, new or changed (`now` is a new one's time).
pub fn put_edit(p: char, row: &EditRow, now: Timestamp) -> Result<Statement> {
    Ok(Statement::new(
        format!(
            "INSERT INTO edits (id, artifact_id, participant, base_version, base_digest, created_at, expires_at,
                 state, commit_digest, result)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9, {p}10)
             ON CONFLICT (id) DO UPDATE SET state = {p}8, commit_digest = {p}9, result = {p}10"
        ),
        edit_fields(row, now)?,
    ))
}

pub const PROPOSAL_COLUMNS: &str =
    "id, artifact_id, base_version, test_digest, provenance_version, \
     provenance_digest, digest, size, author, checkout_id, state, created_at, message, change_id";

pub fn proposal(row: &(impl Row + ?Sized)) -> Result<Proposal> {
    let state = row.text(10)?;
    Ok(Proposal {
        id: parsed(row, 0)?,
        artifact_id: parsed(row, 1)?,
        base_version: count(row, 2)?,
        test_digest: parsed(row, 3)?,
        provenance: Provenance {
            version: count(row, 4)?,
            digest: parsed(row, 5)?,
        },
        digest: parsed(row, 6)?,
        size: count(row, 7)?,
        author: parsed(row, 8)?,
        checkout_id: parsed_opt(row, 9)?,
        state: proposal_state(&state),
        created_at: time_at(row, 11)?,
        message: row.text_opt(12)?,
        change_id: parsed_opt(row, 13)?,
    })
}

pub fn select_proposal(p: char, id: ProposalId) -> Statement {
    by_key(
        format!("SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE id = {p}1"),
        id,
    )
}

/// The proposals `filter` asks for, oldest first.
pub fn select_proposals(p: char, filter: &ProposalFilter) -> Statement {
    Statement::new(
        format!(
            "SELECT {PROPOSAL_COLUMNS} FROM proposals
             WHERE (CAST({p}1 AS TEXT) IS NULL OR artifact_id = {p}1)
               AND (CAST({p}2 AS TEXT) IS NULL OR state = {p}2)
             ORDER BY created_at, id"
        ),
        vec![
            text_opt(filter.artifact),
            text_opt(filter.state.map(proposal_state_str)),
        ],
    )
}

/// The proposal that replaced a superseded one.
pub fn select_successor(p: char, id: ProposalId) -> Statement {
    by_key(
        format!("SELECT superseded_by FROM proposals WHERE id = {p}1"),
        id,
    )
}

/// [`PROPOSAL_COLUMNS`]
fn proposal_fields(p: &Proposal) -> Result<Vec<Field>> {
    Ok(vec![
        text(p.id),
        text(p.artifact_id),
        count_field(p.base_version)?,
        text(&p.test_digest),
        count_field(p.provenance.version)?,
        text(&p.provenance.digest),
        text(&p.digest),
        count_field(p.size)?,
        text(&p.author),
        text_opt(p.checkout_id),
        text(proposal_state_str(p.state)),
        int(millis(p.created_at)),
        text_opt(p.message.as_ref()),
        text_opt(p.change_id),
    ])
}

pub fn insert_proposal(p: char, proposal: &Proposal) -> Result<Statement> {
    Ok(Statement::new(
        format!(
            "INSERT INTO proposals ({PROPOSAL_COLUMNS})
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9, {p}10, {p}11, {p}12, {p}13, {p}14)"
        ),
        proposal_fields(proposal)?,
    ))
}

/// id, state, decided_by, decided_at, superseded_by
fn decision_fields(id: ProposalId, d: &DecisionRow) -> Vec<Field> {
    vec![
        text(id),
        text(proposal_state_str(d.state)),
        text(d.by),
        int(millis(d.at)),
        text_opt(d.superseded_by),
    ]
}

/// Moves a proposal out of `open`, if it is open still.
pub fn decide_proposal(p: char, id: ProposalId, decision: &DecisionRow) -> Statement {
    Statement::new(
        format!(
            "UPDATE proposals SET state = {p}2, decided_by = {p}3, decided_at = {p}4, superseded_by = {p}5
             WHERE id = {p}1 AND state = 'open'"
        ),
        decision_fields(id, decision),
    )
}

pub const CHANGE_COLUMNS: &str = "id, author, message, created_at, outcome, checkouts";

pub fn change(row: &(impl Row + ?Sized)) -> Result<ChangeRow> {
    Ok(ChangeRow {
        id: parsed(row, 0)?,
        author: parsed(row, 1)?,
        message: row.text_opt(2)?,
        created_at: time_at(row, 3)?,
        outcome: change_outcome(&row.text(4)?),
        checkouts: json(row, 5)?.unwrap_or_default(),
    })
}

/// [`CHANGE_COLUMNS`]
fn change_fields(c: &ChangeRow) -> Vec<Field> {
    vec![
        text(c.id),
        text(&c.author),
        text_opt(c.message.as_ref()),
        int(millis(c.created_at)),
        text(change_outcome_str(c.outcome)),
        text(to_json(&c.checkouts)),
    ]
}

pub fn insert_change(p: char, change: &ChangeRow) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO changes ({CHANGE_COLUMNS}) VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6)"
        ),
        change_fields(change),
    )
}

pub fn select_change(p: char, id: ChangeId) -> Statement {
    by_key(
        format!("SELECT {CHANGE_COLUMNS} FROM changes WHERE id = {p}1"),
        id,
    )
}

/// The proposals kept for one change, in every state.
pub fn select_change_proposals(p: char, id: ChangeId) -> Statement {
    by_key(format!("SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE change_id = {p}1 ORDER BY created_at, id"), id)
}

/// A request's columns, its artifact's path among them: from [`REQUESTS_JOINED`].
pub const REQUEST_COLUMNS: &str =
    "r.id, r.artifact_id, a.path, r.from_participant, r.to_participant, r.checkout_id, \
     r.message, r.state, r.reply, r.created_at, r.replied_at, r.ended_at, r.notified_at";

/// Requests with their artifact's row, for its current path.
pub const REQUESTS_JOINED: &str = "requests r JOIN artifacts a ON a.id = r.artifact_id";

pub fn request(row: &(impl Row + ?Sized)) -> Result<RequestRow> {
    let optional_time = |i| row.int_opt(i)?.map(time).transpose();
    Ok(RequestRow {
        request: Request {
            id: parsed(row, 0)?,
            artifact_id: parsed(row, 1)?,
            path: stored_path(row, 2)?,
            from: parsed(row, 3)?,
            to: parsed(row, 4)?,
            checkout_id: parsed(row, 5)?,
            message: row.text_opt(6)?,
            state: request_state(&row.text(7)?),
            reply: row.text_opt(8)?,
            created_at: time_at(row, 9)?,
            replied_at: optional_time(10)?,
            ended_at: optional_time(11)?,
        },
        notified_at: time_at(row, 12)?,
    })
}

pub fn select_request(p: char, id: RequestId) -> Statement {
    by_key(
        format!("SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED} WHERE r.id = {p}1"),
        id,
    )
}

/// The requests on one check-out, oldest first, in every state.
pub fn select_checkout_requests(p: char, checkout: CheckoutId) -> Statement {
    by_key(
        format!(
            "SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED} WHERE r.checkout_id = {p}1
             ORDER BY r.created_at, r.id"
        ),
        checkout,
    )
}

/// The requests to or from `participant`, newest first; only those that
/// still stand if `live_only`.
pub fn select_requests_of(p: char, participant: &Participant, live_only: bool) -> Statement {
    Statement::new(
        format!(
            "SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED}
             WHERE (r.to_participant = {p}1 OR r.from_participant = {p}1)
               AND (NOT {p}2 OR r.state IN ('open', 'replied'))
             ORDER BY r.created_at DESC, r.id"
        ),
        vec![text(participant), Field::Bool(live_only)],
    )
}

/// The columns [`request_fields`] gives, in its order.
const REQUEST_FIELDS: &str = "id, artifact_id, checkout_id, from_participant, \
     to_participant, message, state, reply, created_at, replied_at, ended_at, notified_at";

/// What writing a known request changes (its ids, people and time of
/// asking never change).
const REQUEST_UPDATE: &str = "message = excluded.message, state = excluded.state, \
     reply = excluded.reply, replied_at = excluded.replied_at, ended_at = excluded.ended_at, \
     notified_at = excluded.notified_at";

/// [`REQUEST_FIELDS`]
fn request_fields(row: &RequestRow) -> Vec<Field> {
    let r = &row.request;
    vec![
        text(r.id),
        text(r.artifact_id),
        text(r.checkout_id),
        text(&r.from),
        text(&r.to),
        text_opt(r.message.as_ref()),
        text(request_state_str(r.state)),
        text_opt(r.reply.as_ref()),
        int(millis(r.created_at)),
        Field::Int(r.replied_at.map(millis)),
        Field::Int(r.ended_at.map(millis)),
        int(millis(row.notified_at)),
    ]
}

/// Writes a request, new or changed.
pub fn put_request(p: char, row: &RequestRow) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO requests ({REQUEST_FIELDS})
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9, {p}10, {p}11, {p}12)
             ON CONFLICT (id) DO UPDATE SET {REQUEST_UPDATE}"
        ),
        request_fields(row),
    )
}

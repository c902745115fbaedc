//! A studio's rows: accounts, devices (tokens), invites, the permissions
//! document and failed redeems; their columns, and the statements both
//! stores run.

use super::field::{by_key, int, text, text_opt};
use super::{millis, parsed, parsed_opt, time, time_at, Field, Row, Statement};
use crate::error::{Error, Result};
use crate::model::*;
use crate::{InviteRow, LiveToken, TokenRow};

pub const ACCOUNT_COLUMNS: &str = "participant, admin, created_at";

pub fn account(row: &(impl Row + ?Sized)) -> Result<Account> {
    Ok(Account {
        participant: parsed(row, 0)?,
        admin: row.flag(1)?,
        created_at: time_at(row, 2)?,
    })
}

/// participant, admin, created_at
fn account_fields(a: &Account) -> Vec<Field> {
    vec![
        text(&a.participant),
        Field::Bool(a.admin),
        int(millis(a.created_at)),
    ]
}

pub fn select_account(p: char, participant: &Participant) -> Statement {
    by_key(
        format!("SELECT {ACCOUNT_COLUMNS} FROM participants WHERE participant = {p}1"),
        participant,
    )
}

pub fn select_accounts() -> Statement {
    Statement::new(
        format!("SELECT {ACCOUNT_COLUMNS} FROM participants ORDER BY participant"),
        Vec::new(),
    )
}

/// Writes nothing when the participant exists (see [`crate::inserted_once`]).
pub fn insert_account(p: char, account: &Account) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO participants (participant, admin, created_at) VALUES ({p}1, {p}2, {p}3)
             ON CONFLICT DO NOTHING"
        ),
        account_fields(account),
    )
}

pub const DEVICE_COLUMNS: &str = "id, device, created_at, last_used_at";

/// A device: a live token's row, read by [`DEVICE_COLUMNS`]. A token made
/// before devices had names is the device "cli".
pub fn device(row: &(impl Row + ?Sized)) -> Result<Device> {
    Ok(Device {
        id: row.text(0)?,
        name: row.text_opt(1)?.unwrap_or_else(|| "cli".to_owned()),
        created_at: time_at(row, 2)?,
        last_used_at: row.int_opt(3)?.map(time).transpose()?,
    })
}

/// A live token's participant, hash and last use.
pub fn live_token(row: &(impl Row + ?Sized)) -> Result<LiveToken> {
    Ok(LiveToken {
        participant: parsed(row, 0)?,
        hash: row.text(1)?,
        last_used_at: row.int_opt(2)?.map(time).transpose()?,
    })
}

/// id, participant, hash, created_at, device
fn token_fields(t: &TokenRow) -> Vec<Field> {
    vec![
        text(t.id),
        text(t.participant),
        text(t.hash),
        int(millis(t.created_at)),
        text(t.device),
    ]
}

pub fn insert_token(p: char, token: &TokenRow) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO tokens (id, participant, hash, created_at, device) \
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5)"
        ),
        token_fields(token),
    )
}

/// A token that is not revoked, as [`live_token`] reads it.
pub fn select_live_token(p: char, id: &str) -> Statement {
    by_key(
        format!(
            "SELECT participant, hash, last_used_at FROM tokens \
             WHERE id = {p}1 AND revoked_at IS NULL"
        ),
        id,
    )
}

pub fn touch_token(p: char, id: &str, at: Timestamp) -> Statement {
    Statement::new(
        format!("UPDATE tokens SET last_used_at = {p}2 WHERE id = {p}1"),
        vec![text(id), int(millis(at))],
    )
}

pub fn revoke_tokens(p: char, participant: &Participant, now: Timestamp) -> Statement {
    Statement::new(
        format!(
            "UPDATE tokens SET revoked_at = {p}2 WHERE participant = {p}1 AND revoked_at IS NULL"
        ),
        vec![text(participant), int(millis(now))],
    )
}

pub fn revoke_device(p: char, participant: &Participant, id: &str, now: Timestamp) -> Statement {
    Statement::new(
        format!(
            "UPDATE tokens SET revoked_at = {p}3 \
             WHERE participant = {p}1 AND id = {p}2 AND revoked_at IS NULL"
        ),
        vec![text(participant), text(id), int(millis(now))],
    )
}

/// A participant's live devices, oldest first.
pub fn select_devices(p: char, participant: &Participant) -> Statement {
    by_key(
        format!(
            "SELECT {DEVICE_COLUMNS} FROM tokens WHERE participant = {p}1 AND revoked_at IS NULL
             ORDER BY created_at, id"
        ),
        participant,
    )
}

pub const INVITE_COLUMNS: &str = "hash, participant, admin, created_at, expires_at, id, made_by";

pub fn invite(row: &(impl Row + ?Sized)) -> Result<InviteRow> {
    Ok(InviteRow {
        hash: row.text(0)?,
        participant: parsed(row, 1)?,
        admin: row.flag(2)?,
        created_at: time_at(row, 3)?,
        expires_at: time_at(row, 4)?,
        id: parsed(row, 5)?,
        made_by: parsed_opt(row, 6)?,
    })
}

/// hash, participant, admin, created_at, expires_at, id, made_by
fn invite_fields(i: &InviteRow) -> Vec<Field> {
    vec![
        text(&i.hash),
        text(&i.participant),
        Field::Bool(i.admin),
        int(millis(i.created_at)),
        int(millis(i.expires_at)),
        text(i.id),
        text_opt(i.made_by.as_ref()),
    ]
}

pub fn insert_invite(p: char, invite: &InviteRow) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO invites (hash, participant, admin, created_at, expires_at, id, made_by)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7)"
        ),
        invite_fields(invite),
    )
}

/// Uses the invite whose code hashes to `hash` if it is unused and not
/// lapsed at `now`, answering it. On PostgreSQL the row lock makes a second
/// redeemer wait, then find it used.
pub fn take_invite(p: char, hash: &str, now: Timestamp) -> Statement {
    Statement::new(
        format!(
            "UPDATE invites SET used_at = {p}2 WHERE hash = {p}1 AND used_at IS NULL AND expires_at > {p}2
             RETURNING {INVITE_COLUMNS}"
        ),
        vec![text(hash), int(millis(now))],
    )
}

/// The invites neither used nor lapsed at `now`, oldest first.
pub fn select_open_invites(p: char, now: Timestamp) -> Statement {
    Statement::new(
        format!(
            "SELECT {INVITE_COLUMNS} FROM invites WHERE used_at IS NULL AND expires_at > {p}1
             ORDER BY created_at, id"
        ),
        vec![int(millis(now))],
    )
}

/// Removes an invite neither used nor lapsed at `now`. On PostgreSQL it
/// locks the row as a redeem does: a code revoked while redeemed is either
/// used (and not revoked) or revoked (and not redeemed).
pub fn delete_invite(p: char, id: InviteId, now: Timestamp) -> Statement {
    Statement::new(
        format!("DELETE FROM invites WHERE id = {p}1 AND used_at IS NULL AND expires_at > {p}2"),
        vec![text(id), int(millis(now))],
    )
}

/// The permissions document as stored.
pub fn permissions(stamp: String, document: &str) -> Result<(String, Permissions)> {
    let document = serde_json::from_str(document)
        .map_err(|e| Error::Internal(format!("the stored permissions do not read: {e}")))?;
    Ok((stamp, document))
}

pub fn permissions_text(document: &Permissions) -> Result<String> {
    serde_json::to_string(document).map_err(|e| Error::Internal(format!("permissions: {e}")))
}

/// The permissions document's stamp.
pub fn select_permissions_stamp() -> Statement {
    Statement::new(
        "SELECT stamp FROM permissions WHERE id = 1".into(),
        Vec::new(),
    )
}

/// The permissions document and its stamp, as [`permissions`] reads them.
pub fn select_permissions() -> Statement {
    Statement::new(
        "SELECT stamp, document FROM permissions WHERE id = 1".into(),
        Vec::new(),
    )
}

pub fn put_permissions(p: char, stamp: &str, document: &Permissions) -> Result<Statement> {
    Ok(Statement::new(
        format!(
            "INSERT INTO permissions (id, stamp, document) VALUES (1, {p}1, {p}2)
             ON CONFLICT (id) DO UPDATE SET stamp = {p}1, document = {p}2"
        ),
        vec![text(stamp), text(permissions_text(document)?)],
    ))
}

/// The failed redeems from `address` in its window, if it began after
/// `after` (see [`count_failed_redeem`] for one that began after `now`).
pub fn select_failed_redeems(p: char, address: &str, after: Timestamp) -> Statement {
    Statement::new(
        format!(
            "SELECT failed FROM failed_redeems \
             WHERE address = {p}1 AND since > {p}2"
        ),
        vec![text(address), int(millis(after))],
    )
}

/// Counts one failed redeem from `address`, in its window (begun after
/// `after`) or in a new one beginning at `now`, answering the window's
/// count. Both assignments read the row as it was. A window that began
/// after `now` is running too: on PostgreSQL a transaction's `now` is read
/// when it begins, so a redeem that began first may count after one that
/// began later, and must not start the count again. On PostgreSQL the upsert locks the address's row: a
/// second redeemer from there waits for this one's commit, then counts
/// after it.
pub fn count_failed_redeem(p: char, address: &str, after: Timestamp, now: Timestamp) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO failed_redeems AS f (address, since, failed) VALUES ({p}1, {p}3, 1)
             ON CONFLICT (address) DO UPDATE SET
                 failed = CASE WHEN f.since > {p}2 THEN f.failed + 1 ELSE 1 END,
                 since = CASE WHEN f.since > {p}2 THEN f.since ELSE {p}3 END
             RETURNING failed"
        ),
        vec![text(address), int(millis(after)), int(millis(now))],
    )
}

pub fn uncount_failed_redeem(p: char, address: &str) -> Statement {
    by_key(
        format!(
            "UPDATE failed_redeems SET failed = failed - 1 WHERE address = {p}1 AND failed > 0"
        ),
        address,
    )
}

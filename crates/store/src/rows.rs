//! The row mapping both stores share: a row of SQLite or of PostgreSQL, read
//! by column index through [`Row`], into the domain's types; the column
//! lists and stored spellings that reads and writes agree on; and a column's
//! value in transit between the stores ([`Field`], for `migrate`).
//! Never runs a query: each store chooses its SQL and hands its rows here.

#[cfg(feature = "postgres")]
use bytes::BytesMut;
use chrono::DateTime;
use serde::{Deserialize, Serialize};
#[cfg(feature = "postgres")]
use tokio_postgres::types::{IsNull, ToSql as PgToSql, Type};

use super::{
    ChangeRow, CheckoutRow, Decision, EditRow, EditState, EventRows, HeldPath, InviteRow, LeaseAt,
    LiveToken, RequestRow, StoredResult, TokenRow,
};
use crate::error::{Error, Result};
use crate::model::*;

/// How each state is stored, both ways from one table: a read gives the
/// variant written so, and anything else stored as `else` says.
macro_rules! spellings {
    ($($vis:vis $ty:ident: $to:ident, $from:ident {
        $($variant:ident => $text:literal),+
    } else $other:ident;)+) => {$(
        $vis fn $to(value: $ty) -> &'static str {
            match value {
                $($ty::$variant => $text),+
            }
        }

        fn $from(text: &str) -> $ty {
            match text {
                $($text => $ty::$variant,)+
                _ => $ty::$other,
            }
        }
    )+};
}

spellings! {
    LeaseKind: lease_kind_str, lease_kind {
        Checkout => "checkout", Edit => "edit"
    } else Checkout;
    CheckoutState: checkout_state_str, checkout_state {
        Open => "open", Closed => "closed"
    } else Closed;
    EditState: edit_state_str, edit_state {
        Open => "open", Committed => "committed", Released => "released"
    } else Released;
    pub ProposalState: proposal_state_str, proposal_state {
        Open => "open", Accepted => "accepted", Rejected => "rejected", Superseded => "superseded"
    } else Superseded;
    RequestState: request_state_str, request_state {
        Open => "open", Replied => "replied", Withdrawn => "withdrawn", Ended => "ended"
    } else Ended;
    ChangeOutcome: change_outcome_str, change_outcome {
        Committed => "committed", Proposal => "proposal"
    } else Proposal;
}

/// A row of either store, read by column index.
pub trait Row {
    fn int(&self, i: usize) -> Result<i64>;
    fn int_opt(&self, i: usize) -> Result<Option<i64>>;
    fn text(&self, i: usize) -> Result<String>;
    fn text_opt(&self, i: usize) -> Result<Option<String>>;
    fn flag(&self, i: usize) -> Result<bool>;
}

/// Each getter is the driver's own typed read of column `i`; the drivers
/// differ only in its name.
macro_rules! row_getters {
    ($get:ident) => {
        fn int(&self, i: usize) -> Result<i64> {
            Ok(self.$get(i)?)
        }
        fn int_opt(&self, i: usize) -> Result<Option<i64>> {
            Ok(self.$get(i)?)
        }
        fn text(&self, i: usize) -> Result<String> {
            Ok(self.$get(i)?)
        }
        fn text_opt(&self, i: usize) -> Result<Option<String>> {
            Ok(self.$get(i)?)
        }
        fn flag(&self, i: usize) -> Result<bool> {
            Ok(self.$get(i)?)
        }
    };
}

impl Row for rusqlite::Row<'_> {
    row_getters!(get);
}

#[cfg(feature = "postgres")]
impl Row for tokio_postgres::Row {
    row_getters!(try_get);
}

pub fn millis(t: Timestamp) -> i64 {
    t.timestamp_millis()
}

pub fn time(ms: i64) -> Result<Timestamp> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| Error::Internal(format!("a stored time is out of range: {ms}")))
}

pub fn unsigned(n: i64) -> Result<u64> {
    u64::try_from(n).map_err(|_| Error::Internal(format!("a stored count is negative: {n}")))
}

/// A stored count or version, as a `u64`.
pub fn count(row: &(impl Row + ?Sized), i: usize) -> Result<u64> {
    unsigned(row.int(i)?)
}

/// A stored time.
pub fn time_at(row: &(impl Row + ?Sized), i: usize) -> Result<Timestamp> {
    time(row.int(i)?)
}

/// A stored text column parsed into a domain type.
pub fn parsed<T: std::str::FromStr>(row: &(impl Row + ?Sized), i: usize) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    let text = row.text(i)?;
    text.parse()
        .map_err(|e| Error::Internal(format!("a stored value cannot be read ({text:?}): {e}")))
}

pub fn parsed_opt<T: std::str::FromStr>(row: &(impl Row + ?Sized), i: usize) -> Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    match row.text_opt(i)? {
        None => Ok(None),
        Some(_) => parsed(row, i).map(Some),
    }
}

/// A stored path, as older versions' rules allowed it (it may be one that
/// cannot be placed on a computer: it must stay readable).
pub fn stored_path(row: &(impl Row + ?Sized), i: usize) -> Result<RepoPath> {
    let text = row.text(i)?;
    RepoPath::stored(&text)
        .map_err(|e| Error::Internal(format!("a stored path cannot be read ({text:?}): {e}")))
}

pub fn json<T: for<'de> Deserialize<'de>>(
    row: &(impl Row + ?Sized),
    i: usize,
) -> Result<Option<T>> {
    match row.text_opt(i)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Internal(format!("a stored result cannot be read: {e}"))),
    }
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("stored values serialize")
}

/// An artifact's id and path.
pub fn id_and_path(row: &(impl Row + ?Sized)) -> Result<(ArtifactId, RepoPath)> {
    Ok((parsed(row, 0)?, stored_path(row, 1)?))
}

pub const ACCOUNT_COLUMNS: &str = "participant, admin, created_at";

pub fn account(row: &(impl Row + ?Sized)) -> Result<Account> {
    Ok(Account {
        participant: parsed(row, 0)?,
        admin: row.flag(1)?,
        created_at: time_at(row, 2)?,
    })
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
pub fn invite_fields(i: &InviteRow) -> Vec<Field> {
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

/// The permissions document as stored.
pub fn permissions(stamp: String, document: &str) -> Result<(String, Permissions)> {
    let document = serde_json::from_str(document)
        .map_err(|e| Error::Internal(format!("the stored permissions do not read: {e}")))?;
    Ok((stamp, document))
}

pub fn permissions_text(document: &Permissions) -> Result<String> {
    serde_json::to_string(document).map_err(|e| Error::Internal(format!("permissions: {e}")))
}

pub const HEAD_COLUMNS: &str =
    "v.version, v.digest, v.size, v.author, v.committed_at, v.message, v.change_id";

/// How many columns [`HEAD_COLUMNS`] has.
const HEAD_WIDTH: usize = 7;

/// A head whose [`HEAD_COLUMNS`] begin at column `i`.
pub fn head(row: &(impl Row + ?Sized), i: usize) -> Result<Head> {
    Ok(Head {
        version: count(row, i)?,
        digest: parsed(row, i + 1)?,
        size: count(row, i + 2)?,
        author: parsed(row, i + 3)?,
        committed_at: time_at(row, i + 4)?,
        message: row.text_opt(i + 5)?,
        change_id: parsed_opt(row, i + 6)?,
    })
}

/// A version ([`HEAD_COLUMNS`], then its base version).
pub fn version(row: &(impl Row + ?Sized)) -> Result<(Head, Option<u64>)> {
    let base = row.int_opt(HEAD_WIDTH)?;
    Ok((head(row, 0)?, base.map(unsigned).transpose()?))
}

pub const LEASE_COLUMNS: &str =
    "l.holder, l.participant, l.kind, l.checkout_id, l.note, l.acquired_at, l.expires_at";

/// A lease whose [`LEASE_COLUMNS`] begin at column `i`; none if its holder is NULL.
pub fn lease(row: &(impl Row + ?Sized), i: usize) -> Result<Option<Lease>> {
    let Some(holder) = row.text_opt(i)? else {
        return Ok(None);
    };
    Ok(Some(Lease {
        holder,
        participant: parsed(row, i + 1)?,
        kind: lease_kind(&row.text(i + 2)?),
        checkout_id: parsed_opt(row, i + 3)?,
        note: row.text_opt(i + 4)?,
        acquired_at: time_at(row, i + 5)?,
        expires_at: time_at(row, i + 6)?,
    }))
}

/// A lapsed lease: its artifact's id, then [`LEASE_COLUMNS`].
pub fn lapsed_lease(row: &(impl Row + ?Sized)) -> Result<(ArtifactId, Lease)> {
    let lease =
        lease(row, 1)?.ok_or_else(|| Error::Internal("a lease row without a holder".into()))?;
    Ok((parsed(row, 0)?, lease))
}

/// The column of [`artifact_select`] that holds the artifact's lease epoch.
pub const LEASE_EPOCH_COLUMN: usize = 2 + HEAD_WIDTH + 7;

/// An artifact with its head and lease row ([`artifact`] reads them), then
/// (column [`LEASE_EPOCH_COLUMN`]) its lease epoch; `rest` is SQL after the joins.
pub fn artifact_select(rest: &str) -> String {
    artifact_select_from("artifacts a", rest)
}

/// [`artifact_select`] with `from` naming the artifacts `a` (a join that
/// finds them, say).
pub fn artifact_select_from(from: &str, rest: &str) -> String {
    format!(
        "SELECT a.id, a.path, {HEAD_COLUMNS}, {LEASE_COLUMNS}, a.lease_epoch
         FROM {from}
         JOIN versions v ON v.artifact_id = a.id AND v.version = a.head_version
         LEFT JOIN leases l ON l.artifact_id = a.id
         {rest}"
    )
}

pub fn artifact(row: &(impl Row + ?Sized)) -> Result<Artifact> {
    Ok(Artifact {
        id: parsed(row, 0)?,
        path: stored_path(row, 1)?,
        head: head(row, 2)?,
        lease: lease(row, 2 + HEAD_WIDTH)?,
        // The caller's, which the rules set.
        access: Access::Write,
    })
}

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

/// Whether a row names a blob (`p` spells the parameter: `$` or `?`): a
/// version, a proposal (of any state: rows are never deleted), or bytes
/// staged for a check-out's next change.
pub fn names_blob_sql(p: char) -> String {
    format!(
        "SELECT EXISTS (SELECT 1 FROM versions WHERE digest = {p}1)
             OR EXISTS (SELECT 1 FROM proposals WHERE digest = {p}1)
             OR EXISTS (SELECT 1 FROM checkouts WHERE staged_digest = {p}1)
             OR EXISTS (SELECT 1 FROM lfs_objects WHERE digest = {p}1)"
    )
}

/// Every digest [`names_blob_sql`] would find.
pub const BLOB_DIGESTS: &str = "SELECT digest FROM versions UNION SELECT digest FROM proposals
     UNION SELECT staged_digest FROM checkouts WHERE staged_digest IS NOT NULL
     UNION SELECT digest FROM lfs_objects";

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
pub fn change_fields(c: &ChangeRow) -> Vec<Field> {
    vec![
        text(c.id),
        text(&c.author),
        text_opt(c.message.as_ref()),
        int(millis(c.created_at)),
        text(change_outcome_str(c.outcome)),
        text(to_json(&c.checkouts)),
    ]
}

pub const EVENT_COLUMNS: &str = "seq, id, type, artifact_id, participant, holder, at, data";

pub fn event(row: &(impl Row + ?Sized)) -> Result<Event> {
    let data = row.text(7)?;
    Ok(Event {
        seq: count(row, 0)?,
        id: parsed(row, 1)?,
        kind: row.text(2)?,
        artifact_id: parsed_opt(row, 3)?,
        participant: parsed_opt(row, 4)?,
        holder: row.text_opt(5)?,
        at: time_at(row, 6)?,
        data: serde_json::from_str(&data).unwrap_or(serde_json::Value::Null),
    })
}

/// The SQL of one [`EventRows`] page; `p` spells a numbered parameter (`$`
/// or `?`): 1 the bound, 2 the limit, 3 the artifact.
pub fn events_sql(p: char, page: &EventRows) -> String {
    let (cmp, order) = match page.older {
        false => (">", ""),
        true => ("<", " DESC"),
    };
    let artifact = match page.artifact.is_some() {
        true => format!("artifact_id = {p}3 AND "),
        false => String::new(),
    };
    format!(
        "SELECT {EVENT_COLUMNS} FROM events
         WHERE {artifact}seq {cmp} {p}1 ORDER BY seq{order} LIMIT {p}2"
    )
}

/// A column's type, as both schemas have it.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Int,
    Text,
    Bool,
}

/// One column's value: as a write binds it, or in transit from one store to
/// the other (`migrate`).
#[derive(Clone, Debug)]
pub enum Field {
    Int(Option<i64>),
    Text(Option<String>),
    Bool(bool),
}

impl rusqlite::ToSql for Field {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Field::Int(n) => rusqlite::ToSql::to_sql(n),
            Field::Text(t) => rusqlite::ToSql::to_sql(t),
            Field::Bool(b) => rusqlite::ToSql::to_sql(b),
        }
    }
}

/// What binding a value for PostgreSQL gives.
#[cfg(feature = "postgres")]
type PgBound = std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>>;

#[cfg(feature = "postgres")]
impl PgToSql for Field {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> PgBound {
        match self {
            Field::Int(n) => n.to_sql(ty, out),
            Field::Text(t) => t.to_sql(ty, out),
            Field::Bool(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <i64 as PgToSql>::accepts(ty)
            || <String as PgToSql>::accepts(ty)
            || <bool as PgToSql>::accepts(ty)
    }

    /// Checked against the variant's own type, not any of the three.
    fn to_sql_checked(&self, ty: &Type, out: &mut BytesMut) -> PgBound {
        match self {
            Field::Int(n) => n.to_sql_checked(ty, out),
            Field::Text(t) => t.to_sql_checked(ty, out),
            Field::Bool(b) => b.to_sql_checked(ty, out),
        }
    }
}

/// A number for an INTEGER or BIGINT column; ours never pass 2^63 - 1.
pub fn signed(n: u64) -> Result<i64> {
    i64::try_from(n).map_err(|_| Error::Invalid(format!("{n} is out of range")))
}

fn int(n: i64) -> Field {
    Field::Int(Some(n))
}

fn count_field(n: u64) -> Result<Field> {
    Ok(int(signed(n)?))
}

fn text(t: impl ToString) -> Field {
    Field::Text(Some(t.to_string()))
}

fn text_opt(t: Option<impl ToString>) -> Field {
    Field::Text(t.map(|t| t.to_string()))
}

// What each write stores, in the order of its statement's columns.

/// participant, admin, created_at
pub fn account_fields(a: &Account) -> Vec<Field> {
    vec![
        text(&a.participant),
        Field::Bool(a.admin),
        int(millis(a.created_at)),
    ]
}

/// id, participant, hash, created_at
pub fn token_fields(t: &TokenRow) -> Vec<Field> {
    vec![
        text(t.id),
        text(t.participant),
        text(t.hash),
        int(millis(t.created_at)),
        text(t.device),
    ]
}

/// artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at
pub fn lease_fields(artifact_id: ArtifactId, lease: &Lease) -> Vec<Field> {
    vec![
        text(artifact_id),
        text(&lease.holder),
        text(&lease.participant),
        text(lease_kind_str(lease.kind)),
        text_opt(lease.checkout_id),
        text_opt(lease.note.as_ref()),
        int(millis(lease.acquired_at)),
        int(millis(lease.expires_at)),
    ]
}

/// id, artifact_id, version, digest, actor, note, created_at, expires_at,
/// state, closed_at, checkin_digest, result, broken_by, broken_reason,
/// broken_at, lease_epoch, staged_digest, staged_size, change_id, device_id,
/// device_name
pub fn checkout_fields(
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

/// id, artifact_id, participant, base_version, base_digest, created_at,
/// expires_at, state, commit_digest, result
pub fn edit_fields(row: &EditRow, now: Timestamp) -> Result<Vec<Field>> {
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

/// [`PROPOSAL_COLUMNS`]
pub fn proposal_fields(p: &Proposal) -> Result<Vec<Field>> {
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

/// id, state, decided_by, decided_at, superseded_by
pub fn decision_fields(id: ProposalId, d: &Decision) -> Vec<Field> {
    vec![
        text(id),
        text(proposal_state_str(d.state)),
        text(d.by),
        int(millis(d.at)),
        text_opt(d.superseded_by),
    ]
}

/// The columns [`request_fields`] gives, in its order.
pub const REQUEST_FIELDS: &str = "id, artifact_id, checkout_id, from_participant, \
     to_participant, message, state, reply, created_at, replied_at, ended_at, notified_at";

/// What writing a known request changes (its ids, people and time of
/// asking never change).
pub const REQUEST_UPDATE: &str = "message = excluded.message, state = excluded.state, \
     reply = excluded.reply, replied_at = excluded.replied_at, ended_at = excluded.ended_at, \
     notified_at = excluded.notified_at";

/// [`REQUEST_FIELDS`]
pub fn request_fields(row: &RequestRow) -> Vec<Field> {
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

/// artifact_id, version, digest, size, author, committed_at, base_version,
/// message, change_id
pub fn version_fields(id: ArtifactId, head: &Head, base: Option<u64>) -> Result<Vec<Field>> {
    Ok(vec![
        text(id),
        count_field(head.version)?,
        text(&head.digest),
        count_field(head.size)?,
        text(&head.author),
        int(millis(head.committed_at)),
        Field::Int(base.map(signed).transpose()?),
        text_opt(head.message.as_ref()),
        text_opt(head.change_id),
    ])
}

/// The columns of a held path ([`held_path`] reads them).
pub const HELD_PATH_COLUMNS: &str =
    "h.id, h.path, h.participant, h.note, h.acquired_at, h.expires_at, h.device_id, h.device_name";

pub fn held_path(row: &(impl Row + ?Sized)) -> Result<HeldPath> {
    Ok(HeldPath {
        id: parsed(row, 0)?,
        path: stored_path(row, 1)?,
        participant: parsed(row, 2)?,
        note: row.text_opt(3)?,
        acquired_at: time_at(row, 4)?,
        expires_at: time_at(row, 5)?,
        device: match row.text_opt(6)? {
            Some(id) => Some(DeviceRef {
                id,
                name: row.text_opt(7)?.unwrap_or_default(),
            }),
            None => None,
        },
    })
}

/// path_key, path, id, participant, note, acquired_at, expires_at,
/// device_id, device_name
pub fn held_path_fields(held: &HeldPath) -> Vec<Field> {
    vec![
        text(held.path.collision_key()),
        text(&held.path),
        text(held.id),
        text(&held.participant),
        text_opt(held.note.as_ref()),
        int(millis(held.acquired_at)),
        int(millis(held.expires_at)),
        text_opt(held.device.as_ref().map(|d| &d.id)),
        text_opt(held.device.as_ref().map(|d| &d.name)),
    ]
}

/// The upsert of a held path: `$1`.. as [`held_path_fields`].
pub const PUT_HELD_PATH: &str = "INSERT INTO held_paths
     (path_key, path, id, participant, note, acquired_at, expires_at, device_id, device_name)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (path_key) DO UPDATE SET path = $2, id = $3, participant = $4, note = $5,
         acquired_at = $6, expires_at = $7, device_id = $8, device_name = $9";

/// A live lease with its file: the artifact's id, its path, then [`LEASE_COLUMNS`].
pub fn lease_at(row: &(impl Row + ?Sized)) -> Result<LeaseAt> {
    Ok(LeaseAt {
        artifact_id: parsed(row, 0)?,
        path: stored_path(row, 1)?,
        lease: lease(row, 2)?
            .ok_or_else(|| Error::Internal("a lease row without a holder".into()))?,
    })
}

/// The first text past every path under `folder` (ending in `/`): the
/// folder with its `/` turned into the next byte, `0`.
pub fn folder_end(folder: &str) -> String {
    match folder.strip_suffix('/') {
        Some(stem) => format!("{stem}0"),
        None => format!("{folder}\u{10ffff}"),
    }
}

/// The columns of a Git LFS object ([`lfs_object`] reads them).
pub const LFS_OBJECT_COLUMNS: &str = "oid, size, digest";

pub fn lfs_object(row: &(impl Row + ?Sized)) -> Result<LfsObject> {
    Ok(LfsObject {
        oid: row.text(0)?,
        size: unsigned(row.int(1)?)?,
        digest: parsed(row, 2)?,
    })
}

/// The insert of a Git LFS object: folder, oid, size, digest, created_at.
pub const PUT_LFS_OBJECT: &str = "INSERT INTO lfs_objects (folder, oid, size, digest, created_at)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (folder, oid) DO NOTHING";

pub fn lfs_object_fields(folder: &str, object: &LfsObject, now: Timestamp) -> Result<Vec<Field>> {
    Ok(vec![
        text(folder),
        text(&object.oid),
        Field::Int(Some(signed(object.size)?)),
        text(&object.digest),
        int(millis(now)),
    ])
}

/// Keeps a secret unless one of its name is kept: `$1` name, `$2` value.
pub const PUT_SECRET: &str =
    "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";

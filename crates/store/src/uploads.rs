//! Resumable uploads' rows (`bundled::transfers`): what each was begun for,
//! how far it has come, and the parts its bytes are in. Part of every
//! [`Tx`](super::Tx).

use crate::error::Result;
use crate::model::*;
use crate::rows::{
    by_key, count, int, millis, parsed, text, text_opt, time, Field, Row, Statement,
};
use crate::transaction::{fetch_all, fetch_first, fetch_one, Sql};

/// One upload as its row keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UploadRow {
    pub id: UploadId,
    pub owner: Participant,
    /// The begin's `Idempotency-Key`, if it sent one.
    pub client_key: Option<String>,
    pub target: UploadFor,
    pub size: u64,
    pub digest: Digest,
    /// The runs of chunks to send, `[first, end)`.
    pub send: Vec<(u64, u64)>,
    /// The bytes to send, and how many of them the upload's parts hold.
    pub length: u64,
    pub reached: u64,
    /// The number of the request that may add parts now.
    pub writer: u64,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    pub used_at: Option<Timestamp>,
}

/// The uploads a sweep removes (lapsed, or used a while ago), and the
/// unused others with their targets, to look at.
pub type UploadsToLookOver = (Vec<UploadId>, Vec<(UploadId, UploadFor)>);

/// Resumable uploads' rows. Part of every [`Tx`](crate::Tx).
pub trait UploadRows: Sql {
    /// Serializes the begins of `owner` until the transaction ends (so a
    /// count of their uploads and the insert after it are one step).
    fn lock_uploads_of(&self, owner: &Participant) -> Result<()>;

    fn insert_upload(&self, row: &UploadRow) -> Result<()> {
        self.run(&insert_upload(self.p(), row))?;
        Ok(())
    }

    fn upload(&self, id: UploadId) -> Result<Option<UploadRow>> {
        fetch_first(self, select_upload(self.p(), id), |r| upload_row(r))
    }

    /// The upload `owner` began with the `Idempotency-Key` `key`.
    fn upload_by_key(&self, owner: &Participant, key: &str) -> Result<Option<UploadRow>> {
        let found = select_upload_by_key(self.p(), owner, key);
        fetch_first(self, found, |r| upload_row(r))
    }

    /// How many uploads of `owner` are unused and not lapsed at `now`.
    fn open_uploads_of(&self, owner: &Participant, now: Timestamp) -> Result<u64> {
        let open = count_open_uploads(self.p(), owner, now);
        fetch_one(self, open, |r| count(r, 0))
    }

    /// Gives the upload's turn to a new request: its writer number, one
    /// more than before; `None` if the upload is gone.
    fn next_upload_writer(&self, id: UploadId) -> Result<Option<UploadRow>>;

    /// Counts the part holding bytes `from..to` if `writer` still has the
    /// turn and the upload is at `from`; `false` (nothing written) if not.
    fn add_upload_piece(&self, id: UploadId, writer: u64, from: u64, to: u64) -> Result<bool>;

    /// Takes the upload back to `to` (a chunk that was not its id began
    /// there) if `writer` still has the turn: the parts from there on no
    /// longer count. Whether it did.
    fn cut_upload(&self, id: UploadId, writer: u64, to: u64) -> Result<bool> {
        let p = self.p();
        let cut = self.run(&cut_upload(p, id, writer, to))?;
        if cut == 1 {
            self.run(&cut_upload_pieces(p, id, to))?;
        }
        Ok(cut == 1)
    }

    /// The parts' byte ranges, in order.
    fn upload_pieces(&self, id: UploadId) -> Result<Vec<(u64, u64)>> {
        let pieces = select_upload_pieces(self.p(), id);
        fetch_all(self, pieces, |r| Ok((count(r, 0)?, count(r, 1)?)))
    }

    /// Notes the upload used at `at` (the first use counts).
    fn mark_upload_used(&self, id: UploadId, at: Timestamp) -> Result<()> {
        self.run(&mark_upload_used(self.p(), id, at))?;
        Ok(())
    }

    /// Removes the upload's row and its parts' rows; whether it was there.
    fn delete_upload(&self, id: UploadId) -> Result<bool> {
        let p = self.p();
        self.run(&delete_upload_pieces(p, id))?;
        Ok(self.run(&delete_upload(p, id))? == 1)
    }

    /// The uploads lapsed at `now` or used before `used_before`, and the
    /// targets of the unused others (whose check-out or edit may have closed).
    fn uploads_to_look_over(
        &self,
        now: Timestamp,
        used_before: Timestamp,
    ) -> Result<UploadsToLookOver> {
        let p = self.p();
        let over = fetch_all(self, select_uploads_over(p, now, used_before), |r| {
            parsed(r, 0)
        })?;
        let open = fetch_all(self, select_open_uploads(p, now), |r| {
            upload_row(r).map(|u| (u.id, u.target))
        })?;
        Ok((over, open))
    }

    /// Whether an upload `id` has a row (its parts may go when not).
    fn upload_exists(&self, id: UploadId) -> Result<bool> {
        Ok(self.upload(id)?.is_some())
    }
}

/// The columns [`upload_row`] reads, in its order.
pub const UPLOAD_COLUMNS: &str = "id, owner, client_key, target, size, digest, send, \
     length, reached, writer, created_at, expires_at, used_at";

/// An `uploads` row read as [`UPLOAD_COLUMNS`] lists it.
pub fn upload_row(row: &(impl Row + ?Sized)) -> Result<UploadRow> {
    let json = |i: usize| -> Result<String> { row.text(i) };
    let bad = |what: &str, e: serde_json::Error| {
        crate::error::Error::Internal(format!("an upload's stored {what}: {e}"))
    };
    Ok(UploadRow {
        id: parsed(row, 0)?,
        owner: parsed(row, 1)?,
        client_key: row.text_opt(2)?,
        target: serde_json::from_str(&json(3)?).map_err(|e| bad("target", e))?,
        size: count(row, 4)?,
        digest: parsed(row, 5)?,
        send: serde_json::from_str(&json(6)?).map_err(|e| bad("runs", e))?,
        length: count(row, 7)?,
        reached: count(row, 8)?,
        writer: count(row, 9)?,
        created_at: time(row.int(10)?)?,
        expires_at: time(row.int(11)?)?,
        used_at: row.int_opt(12)?.map(time).transpose()?,
    })
}

/// The target and runs as their columns keep them.
fn upload_json(row: &UploadRow) -> (String, String) {
    (
        serde_json::to_string(&row.target).expect("a target serializes"),
        serde_json::to_string(&row.send).expect("runs serialize"),
    )
}

pub fn insert_upload(p: char, row: &UploadRow) -> Statement {
    let (target, send) = upload_json(row);
    Statement::new(
        format!(
            "INSERT INTO uploads ({UPLOAD_COLUMNS}) \
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9, {p}10, {p}11, {p}12, {p}13)"
        ),
        vec![
            text(row.id),
            text(&row.owner),
            text_opt(row.client_key.as_ref()),
            text(target),
            int(row.size as i64),
            text(&row.digest),
            text(send),
            int(row.length as i64),
            int(row.reached as i64),
            int(row.writer as i64),
            int(millis(row.created_at)),
            int(millis(row.expires_at)),
            Field::Int(row.used_at.map(millis)),
        ],
    )
}

pub fn select_upload(p: char, id: UploadId) -> Statement {
    by_key(
        format!("SELECT {UPLOAD_COLUMNS} FROM uploads WHERE id = {p}1"),
        id,
    )
}

pub fn select_upload_by_key(p: char, owner: &Participant, key: &str) -> Statement {
    Statement::new(
        format!("SELECT {UPLOAD_COLUMNS} FROM uploads WHERE owner = {p}1 AND client_key = {p}2"),
        vec![text(owner), text(key)],
    )
}

pub fn count_open_uploads(p: char, owner: &Participant, now: Timestamp) -> Statement {
    Statement::new(
        format!(
            "SELECT COUNT(*) FROM uploads WHERE owner = {p}1 AND used_at IS NULL AND expires_at > {p}2"
        ),
        vec![text(owner), int(millis(now))],
    )
}

/// Moves the upload from `from` to `to` if `writer` still has the turn and
/// it is at `from`: one row changed, or none.
pub fn reach_upload(p: char, id: UploadId, writer: u64, from: u64, to: u64) -> Statement {
    Statement::new(
        format!(
            "UPDATE uploads SET reached = {p}4 WHERE id = {p}1 AND writer = {p}2 AND reached = {p}3"
        ),
        vec![
            text(id),
            int(writer as i64),
            int(from as i64),
            int(to as i64),
        ],
    )
}

fn cut_upload(p: char, id: UploadId, writer: u64, to: u64) -> Statement {
    Statement::new(
        format!(
            "UPDATE uploads SET reached = {p}3 WHERE id = {p}1 AND writer = {p}2 AND reached >= {p}3"
        ),
        vec![text(id), int(writer as i64), int(to as i64)],
    )
}

fn cut_upload_pieces(p: char, id: UploadId, to: u64) -> Statement {
    Statement::new(
        format!("DELETE FROM upload_pieces WHERE upload_id = {p}1 AND start >= {p}2"),
        vec![text(id), int(to as i64)],
    )
}

fn select_upload_pieces(p: char, id: UploadId) -> Statement {
    by_key(
        format!("SELECT start, stop FROM upload_pieces WHERE upload_id = {p}1 ORDER BY start"),
        id,
    )
}

fn mark_upload_used(p: char, id: UploadId, at: Timestamp) -> Statement {
    Statement::new(
        format!("UPDATE uploads SET used_at = {p}2 WHERE id = {p}1 AND used_at IS NULL"),
        vec![text(id), int(millis(at))],
    )
}

fn delete_upload_pieces(p: char, id: UploadId) -> Statement {
    by_key(
        format!("DELETE FROM upload_pieces WHERE upload_id = {p}1"),
        id,
    )
}

fn delete_upload(p: char, id: UploadId) -> Statement {
    by_key(format!("DELETE FROM uploads WHERE id = {p}1"), id)
}

fn select_uploads_over(p: char, now: Timestamp, used_before: Timestamp) -> Statement {
    Statement::new(
        format!("SELECT id FROM uploads WHERE expires_at <= {p}1 OR used_at <= {p}2"),
        vec![int(millis(now)), int(millis(used_before))],
    )
}

fn select_open_uploads(p: char, now: Timestamp) -> Statement {
    Statement::new(
        format!("SELECT {UPLOAD_COLUMNS} FROM uploads WHERE used_at IS NULL AND expires_at > {p}1"),
        vec![int(millis(now))],
    )
}

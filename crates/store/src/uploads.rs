//! Resumable uploads' rows (`bundled::transfers`): what each was begun for,
//! how far it has come, and the parts its bytes are in. Part of every
//! [`Tx`](super::Tx).

use crate::error::Result;
use crate::model::*;

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

pub trait UploadRows {
    /// Serializes the begins of `owner` until the transaction ends (so a
    /// count of their uploads and the insert after it are one step).
    fn lock_uploads_of(&self, owner: &Participant) -> Result<()>;

    fn insert_upload(&self, row: &UploadRow) -> Result<()>;

    fn upload(&self, id: UploadId) -> Result<Option<UploadRow>>;

    /// The upload `owner` began with the `Idempotency-Key` `key`.
    fn upload_by_key(&self, owner: &Participant, key: &str) -> Result<Option<UploadRow>>;

    /// How many uploads of `owner` are unused and not lapsed at `now`.
    fn open_uploads_of(&self, owner: &Participant, now: Timestamp) -> Result<u64>;

    /// Gives the upload's turn to a new request: its writer number, one
    /// more than before; `None` if the upload is gone.
    fn next_upload_writer(&self, id: UploadId) -> Result<Option<UploadRow>>;

    /// Counts the part holding bytes `from..to` if `writer` still has the
    /// turn and the upload is at `from`; `false` (nothing written) if not.
    fn add_upload_piece(&self, id: UploadId, writer: u64, from: u64, to: u64) -> Result<bool>;

    /// Takes the upload back to `to` (a chunk that was not its id began
    /// there) if `writer` still has the turn: the parts from there on no
    /// longer count. Whether it did.
    fn cut_upload(&self, id: UploadId, writer: u64, to: u64) -> Result<bool>;

    /// The parts' byte ranges, in order.
    fn upload_pieces(&self, id: UploadId) -> Result<Vec<(u64, u64)>>;

    /// Notes the upload used at `at` (the first use counts).
    fn mark_upload_used(&self, id: UploadId, at: Timestamp) -> Result<()>;

    /// Removes the upload's row and its parts' rows; whether it was there.
    fn delete_upload(&self, id: UploadId) -> Result<bool>;

    /// The uploads lapsed at `now` or used before `used_before`, and the
    /// targets of the unused others (whose check-out or edit may have closed).
    fn uploads_to_look_over(
        &self,
        now: Timestamp,
        used_before: Timestamp,
    ) -> Result<UploadsToLookOver>;

    /// Whether an upload `id` has a row (its parts may go when not).
    fn upload_exists(&self, id: UploadId) -> Result<bool>;
}

/// The columns [`upload_row`] reads, in its order.
pub const UPLOAD_COLUMNS: &str = "id, owner, client_key, target, size, digest, send, \
     length, reached, writer, created_at, expires_at, used_at";

/// An `uploads` row read as [`UPLOAD_COLUMNS`] lists it.
pub fn upload_row(row: &(impl super::rows::Row + ?Sized)) -> Result<UploadRow> {
    use super::rows::{count, parsed, time};
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
pub fn upload_json(row: &UploadRow) -> (String, String) {
    (
        serde_json::to_string(&row.target).expect("a target serializes"),
        serde_json::to_string(&row.send).expect("runs serialize"),
    )
}

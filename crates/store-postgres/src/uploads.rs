//! Resumable uploads' rows on PostgreSQL (see `store::uploads`). Several
//! servers begin uploads at once: a begin's count and insert run under an
//! advisory lock of the owner's, and a part counts only where the row still
//! says so (one `UPDATE … WHERE`), so two servers never both move an upload.

use tokio_postgres::types::ToSql;

use super::tx::PgTx;
use crate::error::Result;
use crate::model::*;
use leasedesk_store::rows::{self, millis};
use leasedesk_store::uploads::{
    upload_json, upload_row, UploadRow, UploadRows, UploadsToLookOver, UPLOAD_COLUMNS,
};

/// The advisory locks of uploads' owners are in a space of their own.
const UPLOADS_LOCK_SPACE: i32 = 0x5550;

impl UploadRows for PgTx<'_> {
    fn lock_uploads_of(&self, owner: &Participant) -> Result<()> {
        self.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            &[&UPLOADS_LOCK_SPACE, &owner.as_str()],
        )?;
        Ok(())
    }

    fn insert_upload(&self, row: &UploadRow) -> Result<()> {
        let (target, send) = upload_json(row);
        let (id, size, length, reached, writer) = (
            row.id.to_string(),
            row.size as i64,
            row.length as i64,
            row.reached as i64,
            row.writer as i64,
        );
        let (created, expires, used) = (
            millis(row.created_at),
            millis(row.expires_at),
            row.used_at.map(millis),
        );
        let params: [&(dyn ToSql + Sync); 13] = [
            &id,
            &row.owner.as_str(),
            &row.client_key,
            &target,
            &size,
            &row.digest.as_str(),
            &send,
            &length,
            &reached,
            &writer,
            &created,
            &expires,
            &used,
        ];
        self.execute(
            &format!(
                "INSERT INTO uploads ({UPLOAD_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
            ),
            &params,
        )?;
        Ok(())
    }

    fn upload(&self, id: UploadId) -> Result<Option<UploadRow>> {
        self.query_opt(
            &format!("SELECT {UPLOAD_COLUMNS} FROM uploads WHERE id = $1"),
            &[&id.to_string()],
        )?
        .map(|r| upload_row(&r))
        .transpose()
    }

    fn upload_by_key(&self, owner: &Participant, key: &str) -> Result<Option<UploadRow>> {
        self.query_opt(
            &format!("SELECT {UPLOAD_COLUMNS} FROM uploads WHERE owner = $1 AND client_key = $2"),
            &[&owner.as_str(), &key],
        )?
        .map(|r| upload_row(&r))
        .transpose()
    }

    fn open_uploads_of(&self, owner: &Participant, now: Timestamp) -> Result<u64> {
        let row = self.query_one(
            "SELECT COUNT(*) FROM uploads WHERE owner = $1 AND used_at IS NULL AND expires_at > $2",
            &[&owner.as_str(), &millis(now)],
        )?;
        rows::count(&row, 0)
    }

    fn next_upload_writer(&self, id: UploadId) -> Result<Option<UploadRow>> {
        self.query_opt(
            &format!(
                "UPDATE uploads SET writer = writer + 1 WHERE id = $1 RETURNING {UPLOAD_COLUMNS}"
            ),
            &[&id.to_string()],
        )?
        .map(|r| upload_row(&r))
        .transpose()
    }

    fn add_upload_piece(&self, id: UploadId, writer: u64, from: u64, to: u64) -> Result<bool> {
        let (id, writer, from, to) = (id.to_string(), writer as i64, from as i64, to as i64);
        let moved = self.execute(
            "UPDATE uploads SET reached = $4 WHERE id = $1 AND writer = $2 AND reached = $3",
            &[&id, &writer, &from, &to],
        )?;
        if moved == 1 {
            self.execute(
                "INSERT INTO upload_pieces (upload_id, start, stop) VALUES ($1, $2, $3) \
                 ON CONFLICT (upload_id, start) DO UPDATE SET stop = $3",
                &[&id, &from, &to],
            )?;
        }
        Ok(moved == 1)
    }

    fn cut_upload(&self, id: UploadId, writer: u64, to: u64) -> Result<bool> {
        let (id, writer, to) = (id.to_string(), writer as i64, to as i64);
        let cut = self.execute(
            "UPDATE uploads SET reached = $3 WHERE id = $1 AND writer = $2 AND reached >= $3",
            &[&id, &writer, &to],
        )?;
        if cut == 1 {
            self.execute(
                "DELETE FROM upload_pieces WHERE upload_id = $1 AND start >= $2",
                &[&id, &to],
            )?;
        }
        Ok(cut == 1)
    }

    fn upload_pieces(&self, id: UploadId) -> Result<Vec<(u64, u64)>> {
        self.query(
            "SELECT start, stop FROM upload_pieces WHERE upload_id = $1 ORDER BY start",
            &[&id.to_string()],
        )?
        .iter()
        .map(|r| Ok((rows::count(r, 0)?, rows::count(r, 1)?)))
        .collect()
    }

    fn mark_upload_used(&self, id: UploadId, at: Timestamp) -> Result<()> {
        self.execute(
            "UPDATE uploads SET used_at = $2 WHERE id = $1 AND used_at IS NULL",
            &[&id.to_string(), &millis(at)],
        )?;
        Ok(())
    }

    fn delete_upload(&self, id: UploadId) -> Result<bool> {
        let id = id.to_string();
        self.execute("DELETE FROM upload_pieces WHERE upload_id = $1", &[&id])?;
        Ok(self.execute("DELETE FROM uploads WHERE id = $1", &[&id])? == 1)
    }

    fn uploads_to_look_over(
        &self,
        now: Timestamp,
        used_before: Timestamp,
    ) -> Result<UploadsToLookOver> {
        let over = self
            .query(
                "SELECT id FROM uploads WHERE expires_at <= $1 OR used_at <= $2",
                &[&millis(now), &millis(used_before)],
            )?
            .iter()
            .map(|r| rows::parsed(r, 0))
            .collect::<Result<_>>()?;
        let open = self
            .query(
                &format!(
                    "SELECT {UPLOAD_COLUMNS} FROM uploads WHERE used_at IS NULL AND expires_at > $1"
                ),
                &[&millis(now)],
            )?
            .iter()
            .map(|r| upload_row(r).map(|u| (u.id, u.target)))
            .collect::<Result<_>>()?;
        Ok((over, open))
    }

    fn upload_exists(&self, id: UploadId) -> Result<bool> {
        Ok(self.upload(id)?.is_some())
    }
}

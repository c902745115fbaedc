//! Resumable uploads' rows on SQLite (see `store::uploads`). One writer at a
//! time, so a begin's count and insert need no lock of their own.

use rusqlite::params;

use super::transaction::SqliteTx;
use crate::error::Result;
use crate::model::*;
use leasedesk_store::rows::{self, millis};
use leasedesk_store::uploads::{
    upload_json, upload_row, UploadRow, UploadRows, UploadsToLookOver, UPLOAD_COLUMNS,
};

impl UploadRows for SqliteTx<'_> {
    fn lock_uploads_of(&self, _owner: &Participant) -> Result<()> {
        Ok(())
    }

    fn insert_upload(&self, row: &UploadRow) -> Result<()> {
        let (target, send) = upload_json(row);
        self.tx.execute(
            &format!(
                "INSERT INTO uploads ({UPLOAD_COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
            ),
            params![
                row.id.to_string(),
                row.owner.as_str(),
                row.client_key,
                target,
                row.size as i64,
                row.digest.as_str(),
                send,
                row.length as i64,
                row.reached as i64,
                row.writer as i64,
                millis(row.created_at),
                millis(row.expires_at),
                row.used_at.map(millis),
            ],
        )?;
        Ok(())
    }

    fn upload(&self, id: UploadId) -> Result<Option<UploadRow>> {
        self.first(
            &format!("SELECT {UPLOAD_COLUMNS} FROM uploads WHERE id = ?1"),
            [id.to_string()],
            |r| upload_row(r),
        )
    }

    fn upload_by_key(&self, owner: &Participant, key: &str) -> Result<Option<UploadRow>> {
        self.first(
            &format!("SELECT {UPLOAD_COLUMNS} FROM uploads WHERE owner = ?1 AND client_key = ?2"),
            [owner.as_str(), key],
            |r| upload_row(r),
        )
    }

    fn open_uploads_of(&self, owner: &Participant, now: Timestamp) -> Result<u64> {
        let n: i64 = self.tx.query_row(
            "SELECT COUNT(*) FROM uploads WHERE owner = ?1 AND used_at IS NULL AND expires_at > ?2",
            params![owner.as_str(), millis(now)],
            |r| r.get(0),
        )?;
        rows::unsigned(n)
    }

    fn next_upload_writer(&self, id: UploadId) -> Result<Option<UploadRow>> {
        self.tx.execute(
            "UPDATE uploads SET writer = writer + 1 WHERE id = ?1",
            [id.to_string()],
        )?;
        self.upload(id)
    }

    fn add_upload_piece(&self, id: UploadId, writer: u64, from: u64, to: u64) -> Result<bool> {
        let moved = self.tx.execute(
            "UPDATE uploads SET reached = ?4 WHERE id = ?1 AND writer = ?2 AND reached = ?3",
            params![id.to_string(), writer as i64, from as i64, to as i64],
        )?;
        if moved == 1 {
            self.tx.execute(
                "INSERT OR REPLACE INTO upload_pieces (upload_id, start, stop) VALUES (?1, ?2, ?3)",
                params![id.to_string(), from as i64, to as i64],
            )?;
        }
        Ok(moved == 1)
    }

    fn cut_upload(&self, id: UploadId, writer: u64, to: u64) -> Result<bool> {
        let cut = self.tx.execute(
            "UPDATE uploads SET reached = ?3 WHERE id = ?1 AND writer = ?2 AND reached >= ?3",
            params![id.to_string(), writer as i64, to as i64],
        )?;
        if cut == 1 {
            self.tx.execute(
                "DELETE FROM upload_pieces WHERE upload_id = ?1 AND start >= ?2",
                params![id.to_string(), to as i64],
            )?;
        }
        Ok(cut == 1)
    }

    fn upload_pieces(&self, id: UploadId) -> Result<Vec<(u64, u64)>> {
        self.all(
            "SELECT start, stop FROM upload_pieces WHERE upload_id = ?1 ORDER BY start",
            [id.to_string()],
            |r| Ok((rows::count(r, 0)?, rows::count(r, 1)?)),
        )
    }

    fn mark_upload_used(&self, id: UploadId, at: Timestamp) -> Result<()> {
        self.tx.execute(
            "UPDATE uploads SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL",
            params![id.to_string(), millis(at)],
        )?;
        Ok(())
    }

    fn delete_upload(&self, id: UploadId) -> Result<bool> {
        self.tx.execute(
            "DELETE FROM upload_pieces WHERE upload_id = ?1",
            [id.to_string()],
        )?;
        Ok(self
            .tx
            .execute("DELETE FROM uploads WHERE id = ?1", [id.to_string()])?
            == 1)
    }

    fn uploads_to_look_over(
        &self,
        now: Timestamp,
        used_before: Timestamp,
    ) -> Result<UploadsToLookOver> {
        let over = self.all(
            "SELECT id FROM uploads WHERE expires_at <= ?1 OR used_at <= ?2",
            params![millis(now), millis(used_before)],
            |r| rows::parsed(r, 0),
        )?;
        let open = self.all(
            &format!(
                "SELECT {UPLOAD_COLUMNS} FROM uploads WHERE used_at IS NULL AND expires_at > ?1"
            ),
            [millis(now)],
            |r| upload_row(r).map(|u| (u.id, u.target)),
        )?;
        Ok((over, open))
    }

    fn upload_exists(&self, id: UploadId) -> Result<bool> {
        Ok(self.upload(id)?.is_some())
    }
}

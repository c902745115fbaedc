//! A studio's rows on SQLite: devices (tokens), invites and the permissions
//! document. Rows map through the shared `store::rows`.

use rusqlite::{params, params_from_iter, OptionalExtension};

use super::transaction::SqliteTx;
use crate::error::Result;
use crate::model::*;
use leasedesk_store::rows::{self, millis, DEVICE_COLUMNS, INVITE_COLUMNS};
use leasedesk_store::{InviteRow, LiveToken, StudioRows, TokenRow};

impl StudioRows for SqliteTx<'_> {
    fn insert_token(&self, token: &TokenRow) -> Result<()> {
        self.tx.execute(
            "INSERT INTO tokens (id, participant, hash, created_at, device) VALUES (?1, ?2, ?3, ?4, ?5)",
            params_from_iter(rows::token_fields(token)),
        )?;
        Ok(())
    }

    fn live_token(&self, id: &str) -> Result<Option<LiveToken>> {
        self.first(
            "SELECT participant, hash, last_used_at FROM tokens WHERE id = ?1 AND revoked_at IS NULL",
            [id],
            |r| rows::live_token(r),
        )
    }

    fn touch_token(&self, id: &str, at: Timestamp) -> Result<()> {
        self.tx.execute(
            "UPDATE tokens SET last_used_at = ?2 WHERE id = ?1",
            params![id, millis(at)],
        )?;
        Ok(())
    }

    fn revoke_tokens(&self, participant: &Participant, now: Timestamp) -> Result<usize> {
        Ok(self.tx.execute(
            "UPDATE tokens SET revoked_at = ?2 WHERE participant = ?1 AND revoked_at IS NULL",
            params![participant.as_str(), millis(now)],
        )?)
    }

    fn revoke_device(&self, participant: &Participant, id: &str, now: Timestamp) -> Result<bool> {
        let revoked = self.tx.execute(
            "UPDATE tokens SET revoked_at = ?3 WHERE participant = ?1 AND id = ?2 AND revoked_at IS NULL",
            params![participant.as_str(), id, millis(now)],
        )?;
        Ok(revoked > 0)
    }

    fn devices(&self, participant: &Participant) -> Result<Vec<Device>> {
        let sql = format!(
            "SELECT {DEVICE_COLUMNS} FROM tokens WHERE participant = ?1 AND revoked_at IS NULL
             ORDER BY created_at, id"
        );
        self.all(&sql, [participant.as_str()], |r| rows::device(r))
    }

    fn insert_invite(&self, invite: &InviteRow) -> Result<()> {
        self.tx.execute(
            "INSERT INTO invites (hash, participant, admin, created_at, expires_at, id, made_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params_from_iter(rows::invite_fields(invite)),
        )?;
        Ok(())
    }

    fn take_invite(&self, hash: &str, now: Timestamp) -> Result<Option<InviteRow>> {
        let sql = format!(
            "UPDATE invites SET used_at = ?2 WHERE hash = ?1 AND used_at IS NULL AND expires_at > ?2
             RETURNING {INVITE_COLUMNS}"
        );
        self.first(&sql, params![hash, millis(now)], |r| rows::invite(r))
    }

    fn open_invites(&self, now: Timestamp) -> Result<Vec<InviteRow>> {
        let sql = format!(
            "SELECT {INVITE_COLUMNS} FROM invites WHERE used_at IS NULL AND expires_at > ?1
             ORDER BY created_at, id"
        );
        self.all(&sql, [millis(now)], |r| rows::invite(r))
    }

    fn delete_invite(&self, id: InviteId, now: Timestamp) -> Result<bool> {
        let deleted = self.tx.execute(
            "DELETE FROM invites WHERE id = ?1 AND used_at IS NULL AND expires_at > ?2",
            params![id.to_string(), millis(now)],
        )?;
        Ok(deleted > 0)
    }

    fn permissions_stamp(&self) -> Result<Option<String>> {
        Ok(self
            .tx
            .prepare_cached("SELECT stamp FROM permissions WHERE id = 1")?
            .query_row([], |r| r.get(0))
            .optional()?)
    }

    fn permissions(&self) -> Result<Option<(String, Permissions)>> {
        self.first(
            "SELECT stamp, document FROM permissions WHERE id = 1",
            [],
            |r| rows::permissions(rows::Row::text(r, 0)?, &rows::Row::text(r, 1)?),
        )
    }

    fn put_permissions(&self, stamp: &str, document: &Permissions) -> Result<()> {
        self.tx.execute(
            "INSERT INTO permissions (id, stamp, document) VALUES (1, ?1, ?2)
             ON CONFLICT (id) DO UPDATE SET stamp = ?1, document = ?2",
            params![stamp, rows::permissions_text(document)?],
        )?;
        Ok(())
    }

    fn failed_redeems(&self, address: &str, over_before: Timestamp, now: Timestamp) -> Result<u64> {
        let failed = self.first(
            "SELECT failed FROM failed_redeems WHERE address = ?1 AND since > ?2 AND since <= ?3",
            params![address, millis(over_before), millis(now)],
            |r| rows::count(r, 0),
        )?;
        Ok(failed.unwrap_or(0))
    }

    fn count_failed_redeem(
        &self,
        address: &str,
        over_before: Timestamp,
        now: Timestamp,
    ) -> Result<u64> {
        // Both assignments read the row as it was.
        let failed = self.first(
            "INSERT INTO failed_redeems (address, since, failed) VALUES (?1, ?3, 1)
             ON CONFLICT (address) DO UPDATE SET
                 failed = CASE WHEN since > ?2 AND since <= ?3 THEN failed + 1 ELSE 1 END,
                 since = CASE WHEN since > ?2 AND since <= ?3 THEN since ELSE ?3 END
             RETURNING failed",
            params![address, millis(over_before), millis(now)],
            |r| rows::count(r, 0),
        )?;
        Ok(failed.unwrap_or(0))
    }

    fn uncount_failed_redeem(&self, address: &str) -> Result<()> {
        self.tx.execute(
            "UPDATE failed_redeems SET failed = failed - 1 WHERE address = ?1 AND failed > 0",
            [address],
        )?;
        Ok(())
    }

    fn forget_failed_redeems(&self, over_before: Timestamp, limit: u32) -> Result<u64> {
        let forgotten = self.tx.execute(
            "DELETE FROM failed_redeems WHERE address IN (
                 SELECT address FROM failed_redeems WHERE since <= ?1 ORDER BY since LIMIT ?2)",
            params![millis(over_before), limit],
        )?;
        Ok(forgotten as u64)
    }
}

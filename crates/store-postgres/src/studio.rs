//! A studio's rows on PostgreSQL: devices (tokens), invites and the
//! permissions document. None of them locks an artifact. Rows map through
//! the shared `store::rows`.

use tokio_postgres::types::ToSql;

use super::tx::PgTx;
use crate::error::Result;
use crate::model::*;
use leasedesk_store::rows::{self, millis, DEVICE_COLUMNS, INVITE_COLUMNS};
use leasedesk_store::{InviteRow, LiveToken, StudioRows, TokenRow};

impl StudioRows for PgTx<'_> {
    fn insert_token(&self, token: &TokenRow) -> Result<()> {
        let fields = rows::token_fields(token);
        let params: Vec<&(dyn ToSql + Sync)> = fields.iter().map(|f| f as _).collect();
        self.execute(
            "INSERT INTO tokens (id, participant, hash, created_at, device) VALUES ($1, $2, $3, $4, $5)",
            &params,
        )?;
        Ok(())
    }

    fn live_token(&self, id: &str) -> Result<Option<LiveToken>> {
        self.query_opt(
            "SELECT participant, hash, last_used_at FROM tokens WHERE id = $1 AND revoked_at IS NULL",
            &[&id],
        )?
        .map(|r| rows::live_token(&r))
        .transpose()
    }

    fn touch_token(&self, id: &str, at: Timestamp) -> Result<()> {
        self.execute(
            "UPDATE tokens SET last_used_at = $2 WHERE id = $1",
            &[&id, &millis(at)],
        )?;
        Ok(())
    }

    fn revoke_tokens(&self, participant: &Participant, now: Timestamp) -> Result<usize> {
        Ok(self.execute(
            "UPDATE tokens SET revoked_at = $2 WHERE participant = $1 AND revoked_at IS NULL",
            &[&participant.as_str(), &millis(now)],
        )? as usize)
    }

    fn revoke_device(&self, participant: &Participant, id: &str, now: Timestamp) -> Result<bool> {
        let revoked = self.execute(
            "UPDATE tokens SET revoked_at = $3 WHERE participant = $1 AND id = $2 AND revoked_at IS NULL",
            &[&participant.as_str(), &id, &millis(now)],
        )?;
        Ok(revoked > 0)
    }

    fn devices(&self, participant: &Participant) -> Result<Vec<Device>> {
        let sql = format!(
            "SELECT {DEVICE_COLUMNS} FROM tokens WHERE participant = $1 AND revoked_at IS NULL
             ORDER BY created_at, id"
        );
        self.query(&sql, &[&participant.as_str()])?
            .iter()
            .map(rows::device)
            .collect()
    }

    fn insert_invite(&self, invite: &InviteRow) -> Result<()> {
        let fields = rows::invite_fields(invite);
        let params: Vec<&(dyn ToSql + Sync)> = fields.iter().map(|f| f as _).collect();
        self.execute(
            "INSERT INTO invites (hash, participant, admin, created_at, expires_at, id, made_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &params,
        )?;
        Ok(())
    }

    fn take_invite(&self, hash: &str, now: Timestamp) -> Result<Option<InviteRow>> {
        // The row lock makes a second redeemer wait, then find it used.
        let sql = format!(
            "UPDATE invites SET used_at = $2 WHERE hash = $1 AND used_at IS NULL AND expires_at > $2
             RETURNING {INVITE_COLUMNS}"
        );
        self.query_opt(&sql, &[&hash, &millis(now)])?
            .map(|r| rows::invite(&r))
            .transpose()
    }

    fn open_invites(&self, now: Timestamp) -> Result<Vec<InviteRow>> {
        let sql = format!(
            "SELECT {INVITE_COLUMNS} FROM invites WHERE used_at IS NULL AND expires_at > $1
             ORDER BY created_at, id"
        );
        self.query(&sql, &[&millis(now)])?
            .iter()
            .map(rows::invite)
            .collect()
    }

    fn delete_invite(&self, id: InviteId, now: Timestamp) -> Result<bool> {
        // Locks the row as a redeem does: a code revoked while redeemed is
        // either used (and not revoked) or revoked (and not redeemed).
        let deleted = self.execute(
            "DELETE FROM invites WHERE id = $1 AND used_at IS NULL AND expires_at > $2",
            &[&id.to_string(), &millis(now)],
        )?;
        Ok(deleted > 0)
    }

    fn permissions_stamp(&self) -> Result<Option<String>> {
        self.query_opt("SELECT stamp FROM permissions WHERE id = 1", &[])?
            .map(|r| Ok(r.try_get(0)?))
            .transpose()
    }

    fn permissions(&self) -> Result<Option<(String, Permissions)>> {
        self.query_opt("SELECT stamp, document FROM permissions WHERE id = 1", &[])?
            .map(|r| rows::permissions(r.try_get(0)?, r.try_get(1)?))
            .transpose()
    }

    fn put_permissions(&self, stamp: &str, document: &Permissions) -> Result<()> {
        self.execute(
            "INSERT INTO permissions (id, stamp, document) VALUES (1, $1, $2)
             ON CONFLICT (id) DO UPDATE SET stamp = $1, document = $2",
            &[&stamp, &rows::permissions_text(document)?],
        )?;
        Ok(())
    }

    fn failed_redeems(&self, address: &str, over_before: Timestamp, now: Timestamp) -> Result<u64> {
        self.query_opt(
            "SELECT failed FROM failed_redeems WHERE address = $1 AND since > $2 AND since <= $3",
            &[&address, &millis(over_before), &millis(now)],
        )?
        .map_or(Ok(0), |r| rows::count(&r, 0))
    }

    fn count_failed_redeem(
        &self,
        address: &str,
        over_before: Timestamp,
        now: Timestamp,
    ) -> Result<u64> {
        // The upsert locks the address's row (a second redeemer from there
        // waits for this one's commit, then counts after it); both
        // assignments read the row as it was.
        self.query_opt(
            "INSERT INTO failed_redeems AS f (address, since, failed) VALUES ($1, $3, 1)
             ON CONFLICT (address) DO UPDATE SET
                 failed = CASE WHEN f.since > $2 AND f.since <= $3 THEN f.failed + 1 ELSE 1 END,
                 since = CASE WHEN f.since > $2 AND f.since <= $3 THEN f.since ELSE $3 END
             RETURNING failed",
            &[&address, &millis(over_before), &millis(now)],
        )?
        .map_or(Ok(0), |r| rows::count(&r, 0))
    }

    fn uncount_failed_redeem(&self, address: &str) -> Result<()> {
        self.execute(
            "UPDATE failed_redeems SET failed = failed - 1 WHERE address = $1 AND failed > 0",
            &[&address],
        )?;
        Ok(())
    }

    fn forget_failed_redeems(&self, over_before: Timestamp, limit: u32) -> Result<u64> {
        // Rows another server's redeem holds are left for a later write:
        // pruning never waits.
        self.execute(
            "DELETE FROM failed_redeems WHERE address IN (
                 SELECT address FROM failed_redeems WHERE since <= $1
                 ORDER BY since LIMIT $2 FOR UPDATE SKIP LOCKED)",
            &[&millis(over_before), &i64::from(limit)],
        )
    }
}

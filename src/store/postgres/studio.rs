//! A studio's rows on PostgreSQL: devices (tokens), invites and the
//! permissions document. None of them locks an artifact. Rows map through
//! the shared `store::rows`.

use tokio_postgres::types::ToSql;

use super::tx::PgTx;
use crate::error::Result;
use crate::model::*;
use crate::store::rows::{self, millis, DEVICE_COLUMNS, INVITE_COLUMNS};
use crate::store::{InviteRow, LiveToken, StudioRows, TokenRow};

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
}

//! A studio's rows: devices (tokens), invites, the permissions document
//! and failed redeems.

use super::{fetch_all, fetch_first, Sql};
use crate::error::Result;
use crate::model::*;
use crate::rows;
use crate::{InviteRow, LiveToken, TokenRow};

/// A studio's rows: devices (tokens), invites, and the permissions document
/// (`rules::access`). Part of every [`Tx`](super::Tx).
pub trait StudioRows: Sql {
    fn insert_token(&self, token: &TokenRow) -> Result<()> {
        self.run(&rows::insert_token(self.p(), token))?;
        Ok(())
    }

    /// A token that is not revoked.
    fn live_token(&self, id: &str) -> Result<Option<LiveToken>> {
        fetch_first(self, rows::select_live_token(self.p(), id), |r| {
            rows::live_token(r)
        })
    }

    /// Notes a token's use, to the minute.
    fn touch_token(&self, id: &str, at: Timestamp) -> Result<()> {
        self.run(&rows::touch_token(self.p(), id, at))?;
        Ok(())
    }

    /// Revokes every live token of a participant; returns how many.
    fn revoke_tokens(&self, participant: &Participant, now: Timestamp) -> Result<usize> {
        let revoked = self.run(&rows::revoke_tokens(self.p(), participant, now))?;
        Ok(revoked as usize)
    }

    /// Revokes one live token of a participant; whether there was one.
    fn revoke_device(&self, participant: &Participant, id: &str, now: Timestamp) -> Result<bool> {
        let revoked = self.run(&rows::revoke_device(self.p(), participant, id, now))?;
        Ok(revoked > 0)
    }

    /// A participant's live devices, oldest first.
    fn devices(&self, participant: &Participant) -> Result<Vec<Device>> {
        fetch_all(self, rows::select_devices(self.p(), participant), |r| {
            rows::device(r)
        })
    }

    fn insert_invite(&self, invite: &InviteRow) -> Result<()> {
        self.run(&rows::insert_invite(self.p(), invite))?;
        Ok(())
    }

    /// Marks the invite whose code hashes to `hash` used, if it is unused
    /// and not lapsed at `now`, and returns it; one caller at most ever
    /// gets it.
    fn take_invite(&self, hash: &str, now: Timestamp) -> Result<Option<InviteRow>> {
        fetch_first(self, rows::take_invite(self.p(), hash, now), |r| {
            rows::invite(r)
        })
    }

    /// The invites neither used nor lapsed at `now`, oldest first.
    fn open_invites(&self, now: Timestamp) -> Result<Vec<InviteRow>> {
        fetch_all(self, rows::select_open_invites(self.p(), now), |r| {
            rows::invite(r)
        })
    }

    /// Removes the invite `id` if it is neither used nor lapsed at `now`:
    /// its code is then unknown. Whether there was one.
    fn delete_invite(&self, id: InviteId, now: Timestamp) -> Result<bool> {
        let deleted = self.run(&rows::delete_invite(self.p(), id, now))?;
        Ok(deleted > 0)
    }

    /// The permissions document's stamp; `None` if there never was one.
    fn permissions_stamp(&self) -> Result<Option<String>> {
        fetch_first(self, rows::select_permissions_stamp(), |r| r.text(0))
    }

    /// The permissions document with its own stamp.
    fn permissions(&self) -> Result<Option<(String, Permissions)>> {
        fetch_first(self, rows::select_permissions(), |r| {
            rows::permissions(r.text(0)?, &r.text(1)?)
        })
    }

    /// Replaces the permissions document, under a new stamp.
    fn put_permissions(&self, stamp: &str, document: &Permissions) -> Result<()> {
        self.run(&rows::put_permissions(self.p(), stamp, document)?)?;
        Ok(())
    }

    /// How many invite redeems failed from `address` in its window, if
    /// that window is running: it began after `over_before`. Else 0.
    fn failed_redeems(&self, address: &str, over_before: Timestamp) -> Result<u64> {
        let failed = rows::select_failed_redeems(self.p(), address, over_before);
        Ok(fetch_first(self, failed, |r| rows::count(r, 0))?.unwrap_or(0))
    }

    /// Counts one failed redeem from `address` in its window, or in a new
    /// window beginning at `now` if its own is not running (see
    /// [`StudioRows::failed_redeems`]); answers the window's count with this
    /// one. On PostgreSQL the address's row stays locked until commit, so
    /// redeems from one address count one after the other on every server.
    fn count_failed_redeem(
        &self,
        address: &str,
        over_before: Timestamp,
        now: Timestamp,
    ) -> Result<u64> {
        let counted = rows::count_failed_redeem(self.p(), address, over_before, now);
        Ok(fetch_first(self, counted, |r| rows::count(r, 0))?.unwrap_or(0))
    }

    /// Takes back one redeem that this transaction counted from `address`.
    fn uncount_failed_redeem(&self, address: &str) -> Result<()> {
        self.run(&rows::uncount_failed_redeem(self.p(), address))?;
        Ok(())
    }

    /// Forgets at most `limit` addresses whose window began at or before
    /// `over_before`, oldest first (on PostgreSQL, skipping those another
    /// write holds); answers how many.
    fn forget_failed_redeems(&self, over_before: Timestamp, limit: u32) -> Result<u64>;
}

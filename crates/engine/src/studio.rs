//! A studio's people and folders over the store: invites and devices,
//! groups and permissions (`rules::studio` decides). A guessed invite code
//! costs a guesser its minute, and the store no write once that minute's
//! tries are used: past [`REDEEMS_PER_MINUTE`] failures from one address,
//! redeems from there are refused after one read. The failures are counted
//! in the store, so the processes of a data folder and the servers of a
//! database keep one count, which a restart keeps too; the minute is the
//! store's time. A redeem counts its try in its own transaction before it
//! asks for the invite (on PostgreSQL holding the address's row until it
//! commits), and takes it back there if the code worked, so redeems sent
//! at once, to any of the servers, cannot pass the limit together.

use std::net::IpAddr;

use async_trait::async_trait;
use chrono::TimeDelta;

use super::accounts::insert_token;
use super::{in_place, Bundled};
use crate::backend::Studio;
use crate::error::{Error, Result};
use crate::model::*;
use crate::rules::studio as rules;
use crate::store::{Durability, InviteRow, Tx};
use crate::token;

/// Failed redeems a minute from one address before the rest are refused.
pub const REDEEMS_PER_MINUTE: u32 = 10;

/// How long an address's count runs from its first failure: its minute.
const REDEEM_WINDOW: TimeDelta = TimeDelta::seconds(60);

/// Addresses whose minute is over that each counted redeem forgets, at
/// most: more than the one row it may add, so the table shrinks back to
/// the addresses of the last minute after a guesser of many addresses,
/// and no redeem does much.
const FORGOTTEN_PER_REDEEM: u32 = 16;

/// An address as counted: an IPv4 peer seen as IPv6 (`::ffff:a.b.c.d`, on
/// a dual-stack socket) is counted as its IPv4 address.
fn address_key(from: IpAddr) -> String {
    from.to_canonical().to_string()
}

fn too_many() -> Error {
    Error::TooMany(format!(
        "more than {REDEEMS_PER_MINUTE} invites that did not work were tried from here this minute: wait a minute"
    ))
}

/// Counts a try of `from` in the minute running at `now`, in the redeem's
/// own transaction; refuses (rolling it back) once that minute's tries are
/// used. Forgets a few addresses whose minute is over first.
fn take_try(tx: &dyn Tx, from: &str, now: Timestamp) -> Result<()> {
    let over_before = now - REDEEM_WINDOW;
    tx.forget_failed_redeems(over_before, FORGOTTEN_PER_REDEEM)?;
    if tx.count_failed_redeem(from, over_before, now)? > u64::from(REDEEMS_PER_MINUTE) {
        return Err(too_many());
    }
    Ok(())
}

impl Bundled {
    /// The same store, acting as its owner: the CLI on the data folder or
    /// the database, who may do what admins do.
    pub fn as_owner(&self) -> Self {
        Self {
            owner: true,
            ..self.clone()
        }
    }

    fn acting(&self) -> rules::Acting<'_> {
        match self.owner {
            true => rules::Acting::Owner,
            false => rules::Acting::As(&self.participant),
        }
    }

    /// Runs `f` in one write transaction, acting as this caller.
    fn studio_write<T: Send + 'static>(
        &self,
        f: impl FnMut(&dyn crate::store::Tx, rules::Acting, Timestamp) -> Result<T> + Send + 'static,
    ) -> impl std::future::Future<Output = Result<T>> + Send {
        let this = self.clone();
        let mut f = f;
        in_place(move || {
            let clock = this.shared.options.clock.clone();
            let written = this.shared.store.write(Durability::Normal, |tx| {
                let now = tx.now(&clock)?;
                f(tx, this.acting(), now)
            });
            // A permissions change is an event: the streams tell it at once.
            this.shared.changed.notify_waiters();
            written
        })
    }

    /// Runs `f` on one read transaction, acting as this caller.
    async fn studio_read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn crate::store::Tx, rules::Acting) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let this = self.clone();
        in_place(move || this.shared.store.read(|tx| f(tx, this.acting()))).await
    }

    /// Redeems an invite for the device `device`, from the address `from`
    /// (counted against its failures). Needs no token.
    pub async fn redeem_invite(
        &self,
        code: &str,
        device: &str,
        from: Option<IpAddr>,
    ) -> Result<Redeemed> {
        let from = from.map(address_key);
        if let Some(from) = &from {
            self.refuse_if_tries_used(from).await?;
        }
        let device = device_name(device)?;
        let hash = token::invite_hash(code);
        let new = token::generate()?;
        let (id, secret) = (new.id.clone(), new.token.clone());
        let name = device.clone();
        let (invite, now) = self
            .studio_write(move |tx, _, now| {
                if let Some(from) = &from {
                    take_try(tx, from, now)?;
                }
                let invite = match rules::redeem(tx, &hash, now) {
                    Ok(invite) => invite,
                    // Committed, so the try stays counted (the failed
                    // redeem itself wrote nothing).
                    Err(e @ Error::InviteInvalid(_)) => return Ok(Err(e)),
                    Err(e) => return Err(e),
                };
                insert_token(tx, &new, &invite.participant, now, &name)?;
                if let Some(from) = &from {
                    tx.uncount_failed_redeem(from)?;
                }
                Ok(Ok((invite, now)))
            })
            .await??;
        Ok(Redeemed {
            participant: invite.participant,
            device: Device {
                id,
                name: device,
                created_at: now,
                last_used_at: None,
            },
            token: secret,
        })
    }

    /// Refuses a redeem from `from` whose minute's tries are used, after
    /// one read and before any write.
    async fn refuse_if_tries_used(&self, from: &str) -> Result<()> {
        let (this, from) = (self.clone(), from.to_owned());
        let failed = in_place(move || {
            let clock = &this.shared.options.clock;
            this.shared.store.read(|tx| {
                let now = tx.now(clock)?;
                tx.failed_redeems(&from, now - REDEEM_WINDOW)
            })
        })
        .await?;
        match failed >= u64::from(REDEEMS_PER_MINUTE) {
            true => Err(too_many()),
            false => Ok(()),
        }
    }
}

#[async_trait]
impl Studio for Bundled {
    /// An invite for someone (admins only); the code is shown only now.
    async fn invite(&self, request: InviteRequest) -> Result<Invite> {
        let code = token::generate_invite_code()?;
        let hash = token::invite_hash(&code);
        let row = self
            .studio_write(move |tx, acting, now| {
                rules::invite(tx, acting, &request, hash.clone(), now)
            })
            .await?;
        Ok(shown(code, row))
    }

    /// An invite for another device of the caller's.
    async fn invite_myself(&self, expires_seconds: Option<u64>) -> Result<Invite> {
        let code = token::generate_invite_code()?;
        let hash = token::invite_hash(&code);
        let me = self.participant.clone();
        let row = self
            .studio_write(move |tx, _, now| {
                rules::invite_myself(tx, &me, expires_seconds, hash.clone(), now)
            })
            .await?;
        Ok(shown(code, row))
    }

    /// The invites neither used nor lapsed (admins only).
    async fn invites(&self) -> Result<Vec<OpenInvite>> {
        let this = self.clone();
        let rows = in_place(move || {
            let clock = &this.shared.options.clock;
            this.shared
                .store
                .read(|tx| rules::open_invites(tx, this.acting(), tx.now(clock)?))
        })
        .await?;
        Ok(rows.into_iter().map(listed).collect())
    }

    /// Revokes an open invite (admins only).
    async fn revoke_invite(&self, id: InviteId) -> Result<()> {
        self.studio_write(move |tx, acting, now| rules::revoke_invite(tx, acting, id, now))
            .await
    }

    /// The caller's devices, and the one it calls from.
    async fn my_devices(&self) -> Result<MyDevices> {
        let current = self.device.clone().unwrap_or_default();
        self.read(move |tx, me, _| {
            Ok(MyDevices {
                devices: tx.devices(me)?,
                current,
            })
        })
        .await
    }

    /// Revokes a device of the caller (this one too: it is then signed out).
    async fn revoke_my_device(&self, id: &str) -> Result<()> {
        let owner = self.participant.clone();
        self.revoke_device(&owner, id).await
    }

    /// Revokes a device: the caller's own, or anyone's by an admin. Its
    /// token stops working here at once, and on every server within a second.
    async fn revoke_device(&self, owner: &Participant, id: &str) -> Result<()> {
        let (owner, revoked) = (owner.clone(), id.to_owned());
        self.studio_write(move |tx, acting, now| {
            rules::revoke_device(tx, acting, &owner, &revoked, now)
        })
        .await?;
        self.shared
            .known_tokens
            .lock()
            .expect("token cache")
            .retain(|_, (_, token_id, _)| token_id != id);
        // The event streams here look at their tokens again now, so the
        // device's ends at once rather than within their second.
        self.shared.changed.notify_waiters();
        Ok(())
    }

    /// Every participant and its devices (admins only).
    async fn members(&self) -> Result<Vec<Member>> {
        self.studio_read(|tx, acting| rules::members(tx, acting))
            .await
    }

    async fn groups(&self) -> Result<Vec<Group>> {
        self.studio_read(|tx, acting| Ok(rules::permissions(tx, acting, "list the groups")?.groups))
            .await
    }

    async fn put_group(&self, group: Group) -> Result<Group> {
        self.studio_write(move |tx, acting, now| rules::put_group(tx, acting, group.clone(), now))
            .await
    }

    async fn delete_group(&self, name: &GroupName) -> Result<()> {
        let name = name.clone();
        self.studio_write(move |tx, acting, now| rules::delete_group(tx, acting, &name, now))
            .await
    }

    async fn permission_rules(&self) -> Result<Vec<Rule>> {
        self.studio_read(|tx, acting| {
            Ok(rules::permissions(tx, acting, "read the permissions")?.rules)
        })
        .await
    }

    async fn put_permission_rules(&self, rules: Vec<Rule>) -> Result<Vec<Rule>> {
        self.studio_write(move |tx, acting, now| rules::put_rules(tx, acting, rules.clone(), now))
            .await
    }
}

fn shown(code: String, row: InviteRow) -> Invite {
    Invite {
        code,
        participant: row.participant,
        expires_at: row.expires_at,
    }
}

fn listed(row: InviteRow) -> OpenInvite {
    OpenInvite {
        id: row.id,
        participant: row.participant,
        admin: row.admin,
        made_by: row.made_by,
        created_at: row.created_at,
        expires_at: row.expires_at,
    }
}

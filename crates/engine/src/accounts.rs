//! Accounts and their bearer tokens: made (shown once), revoked, and checked,
//! a token found good trusted for a second by its hash. Never keeps a token
//! in clear.

use std::time::Duration;

use super::Bundled;
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{Durability, TokenRow, Tx};
use crate::token;

/// Tokens found good lately, by hash: whose, the token's (device's) id, and when.
pub(super) type KnownTokens =
    std::collections::HashMap<String, (Participant, String, std::time::Instant)>;

/// How long a token found good is trusted before the store is asked again.
const TOKEN_RECHECK: Duration = Duration::from_secs(1);

impl Bundled {
    /// Registers a participant (admins may break leases and decide any
    /// proposal) and gives it its first token, which is shown only now.
    pub fn add_account(&self, participant: &Participant, admin: bool) -> Result<(Account, String)> {
        if admin && participant.kind() == ParticipantKind::Agent {
            return Err(Error::Invalid(format!(
                "{participant} is an agent: only users can be admins"
            )));
        }
        let account = Account {
            participant: participant.clone(),
            admin,
            created_at: self.clock().now(),
        };
        let new = token::generate()?;
        self.shared.store.write(Durability::Normal, |tx| {
            tx.insert_account(&account)?;
            insert_token(tx, &new, participant, account.created_at, CLI_DEVICE)
        })?;
        Ok((account, new.token))
    }

    /// Another token for a known participant.
    pub fn new_token(&self, participant: &Participant) -> Result<String> {
        let new = token::generate()?;
        let now = self.clock().now();
        self.shared.store.write(Durability::Normal, |tx| {
            if tx.account(participant)?.is_none() {
                return Err(Error::NotFound(format!("no participant {participant}")));
            }
            insert_token(tx, &new, participant, now, CLI_DEVICE)
        })?;
        Ok(new.token)
    }

    /// Revokes every token of a participant; returns how many. (A server in
    /// another process trusts a token it checked for up to a second more.)
    pub fn revoke_tokens(&self, participant: &Participant) -> Result<usize> {
        self.shared
            .known_tokens
            .lock()
            .expect("token cache")
            .retain(|_, (p, _, _)| p != participant);
        let now = self.clock().now();
        self.shared.store.write(Durability::Normal, |tx| {
            if tx.account(participant)?.is_none() {
                return Err(Error::NotFound(format!("no participant {participant}")));
            }
            tx.revoke_tokens(participant, now)
        })
    }

    /// The participant a bearer token names, or `Unauthorized`. A token found
    /// good is remembered for a second (by its hash), so a busy server reads
    /// the store once a second per token, not once a request; a revocation
    /// takes effect within that second.
    pub async fn authenticate(&self, bearer: &str) -> Result<Participant> {
        let hash = token::hash(bearer);
        if let Some((participant, _, checked)) = self
            .shared
            .known_tokens
            .lock()
            .expect("token cache")
            .get(&hash)
        {
            if checked.elapsed() < TOKEN_RECHECK {
                return Ok(participant.clone());
            }
        }
        self.recheck(bearer).await
    }

    /// Like `authenticate`, but asks the store whatever the cache says: for
    /// what must end as soon as a token is revoked (an event stream).
    pub async fn recheck(&self, bearer: &str) -> Result<Participant> {
        let refused = || Error::Unauthorized("the token is missing, unknown or revoked".into());
        let id = token::id_of(bearer).ok_or_else(refused)?.to_owned();
        let hash = token::hash(bearer);
        let now = std::time::Instant::now();
        let looked_up = id.clone();
        let found = self.read(move |tx, _, _| tx.live_token(&looked_up)).await?;
        let live = {
            let mut known = self.shared.known_tokens.lock().expect("token cache");
            match found {
                Some(live) if token::matches(bearer, &live.hash) => {
                    known.retain(|_, (_, _, checked)| now.duration_since(*checked) < TOKEN_RECHECK);
                    known.insert(hash, (live.participant.clone(), id.clone(), now));
                    live
                }
                _ => {
                    known.remove(&hash);
                    return Err(refused());
                }
            }
        };
        self.note_use(&id, live.last_used_at).await;
        Ok(live.participant)
    }

    /// Keeps a device's last use to the minute: one write a minute at most.
    async fn note_use(&self, id: &str, last: Option<Timestamp>) {
        let minute = to_the_minute(self.clock().now());
        if last.is_some_and(|last| last >= minute) {
            return;
        }
        let (store, id) = (self.shared.clone(), id.to_owned());
        let noted = super::in_place(move || {
            store
                .store
                .write(Durability::Normal, |tx| tx.touch_token(&id, minute))
        })
        .await;
        if let Err(e) = noted {
            tracing::warn!("a device's last use was not kept: {e}");
        }
    }

    pub fn accounts(&self) -> Result<Vec<Account>> {
        self.shared.store.read(|tx| tx.accounts())
    }
}

/// The device a token made by `user add` or `user token` is filed under.
pub(super) const CLI_DEVICE: &str = "cli";

/// Keeps `new`'s hash, never the token, as the device `device`.
pub(super) fn insert_token(
    tx: &dyn Tx,
    new: &token::NewToken,
    participant: &Participant,
    at: Timestamp,
    device: &str,
) -> Result<()> {
    tx.insert_token(&TokenRow {
        id: &new.id,
        participant,
        hash: &token::hash(&new.token),
        created_at: at,
        device,
    })
}

/// `at`, its seconds and milliseconds dropped.
pub(super) fn to_the_minute(at: Timestamp) -> Timestamp {
    let seconds = at.timestamp().div_euclid(60) * 60;
    chrono::DateTime::from_timestamp(seconds, 0).unwrap_or(at)
}

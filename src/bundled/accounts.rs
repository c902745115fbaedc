//! Accounts and their bearer tokens: made (shown once), revoked, and checked,
//! a token found good trusted for a second by its hash. Never keeps a token
//! in clear.

use std::time::Duration;

use super::Bundled;
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{Durability, TokenRow, Tx};
use crate::token;

pub(super) type KnownTokens = std::collections::HashMap<String, (Participant, std::time::Instant)>;

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
            insert_token(tx, &new, participant, account.created_at)
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
            insert_token(tx, &new, participant, now)
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
            .retain(|_, (p, _)| p != participant);
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
        if let Some((participant, checked)) = self
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
        let found = self.read(move |tx, _, _| tx.live_token(&id)).await?;
        let mut known = self.shared.known_tokens.lock().expect("token cache");
        match found {
            Some((participant, stored)) if token::matches(bearer, &stored) => {
                known.retain(|_, (_, checked)| now.duration_since(*checked) < TOKEN_RECHECK);
                known.insert(hash, (participant.clone(), now));
                Ok(participant)
            }
            _ => {
                known.remove(&hash);
                Err(refused())
            }
        }
    }

    pub fn accounts(&self) -> Result<Vec<Account>> {
        self.shared.store.read(|tx| tx.accounts())
    }
}

/// Keeps `new`'s hash, never the token.
fn insert_token(
    tx: &Tx,
    new: &token::NewToken,
    participant: &Participant,
    at: Timestamp,
) -> Result<()> {
    tx.insert_token(&TokenRow {
        id: &new.id,
        participant,
        hash: &token::hash(&new.token),
        created_at: at,
    })
}

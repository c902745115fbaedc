//! A studio's people and folders, as rules over one transaction: invites and
//! the devices they make, groups, and the permissions document. Tokens and
//! codes are made by the caller and handed in; only their hashes are kept.

use uuid::Uuid;

use super::access::check_permissions;
use super::require_admin;

/// Who acts on the studio: a participant, or the store's owner (the CLI on
/// the data folder or the database itself: whoever holds the store may do
/// what admins do).
#[derive(Clone, Copy)]
pub enum Acting<'a> {
    Owner,
    As(&'a Participant),
}

impl Acting<'_> {
    fn require_admin(self, tx: &dyn Tx, what: &str) -> Result<()> {
        match self {
            Acting::Owner => Ok(()),
            Acting::As(actor) => require_admin(tx, actor, what),
        }
    }
}
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{InviteRow, NewEvent, Tx};

/// An invite for `request.name` (a new participant, or a device more for
/// one), kept by its code's hash. Admins only.
pub fn invite(
    tx: &dyn Tx,
    actor: Acting,
    request: &InviteRequest,
    code_hash: String,
    now: Timestamp,
) -> Result<InviteRow> {
    actor.require_admin(tx, "invite someone")?;
    let participant = invited(request)?;
    if request.admin && request.agent {
        return Err(Error::Invalid(format!(
            "{participant} is an agent: only users can be admins"
        )));
    }
    if let Some(account) = tx.account(&participant)? {
        if account.admin != request.admin {
            return Err(Error::Invalid(format!(
                "{participant} is already a participant{}: invite them with the same flags to add a device",
                if account.admin { ", an admin" } else { ", not an admin" }
            )));
        }
    }
    let made_by = match actor {
        Acting::As(admin) => Some(admin.clone()),
        Acting::Owner => None,
    };
    keep_invite(
        tx,
        (participant, request.admin),
        made_by,
        request.expires_seconds,
        code_hash,
        now,
    )
}

/// An invite for another device of the caller.
pub fn invite_myself(
    tx: &dyn Tx,
    actor: &Participant,
    expires_seconds: Option<u64>,
    code_hash: String,
    now: Timestamp,
) -> Result<InviteRow> {
    let admin = match tx.account(actor)? {
        Some(account) => account.admin,
        None => {
            return Err(Error::Forbidden(format!(
                "{actor} is not a participant of this server"
            )))
        }
    };
    keep_invite(
        tx,
        (actor.clone(), admin),
        Some(actor.clone()),
        expires_seconds,
        code_hash,
        now,
    )
}

/// Keeps an invite for a participant (with the admin flag it gets), made by `made_by`.
fn keep_invite(
    tx: &dyn Tx,
    (participant, admin): (Participant, bool),
    made_by: Option<Participant>,
    expires_seconds: Option<u64>,
    hash: String,
    now: Timestamp,
) -> Result<InviteRow> {
    let seconds = invite_seconds(expires_seconds)?;
    let row = InviteRow {
        id: InviteId::new(),
        hash,
        participant,
        admin,
        created_at: now,
        expires_at: now + chrono::Duration::seconds(seconds as i64),
        made_by,
    };
    tx.insert_invite(&row)?;
    Ok(row)
}

/// The participant an invite names: `alice` is `user:alice` (or
/// `agent:alice` with `agent`); a full `user:`/`agent:` name must agree.
fn invited(request: &InviteRequest) -> Result<Participant> {
    let name = request.name.trim();
    let participant: Participant = if name.contains(':') {
        name.parse()?
    } else if request.agent {
        Participant::agent(name)?
    } else {
        Participant::user(name)?
    };
    if (participant.kind() == ParticipantKind::Agent) != request.agent && name.contains(':') {
        return Err(Error::Invalid(format!(
            "{participant} and \"agent\": {} disagree",
            request.agent
        )));
    }
    Ok(participant)
}

/// Uses the invite whose code hashes to `code_hash`: its participant (made
/// now if new) gains the device, whose token the caller made. An unknown,
/// used or lapsed code gets one answer, `invite_invalid`.
pub fn redeem(tx: &dyn Tx, code_hash: &str, now: Timestamp) -> Result<InviteRow> {
    let invite = tx.take_invite(code_hash, now)?.ok_or_else(|| {
        Error::InviteInvalid("this invite is unknown, used or lapsed: ask for a new one".into())
    })?;
    if tx.account(&invite.participant)?.is_none() {
        tx.insert_account(&Account {
            participant: invite.participant.clone(),
            admin: invite.admin,
            created_at: now,
        })?;
    }
    Ok(invite)
}

/// The invites neither used nor lapsed at `now`, oldest first (their codes
/// are not kept, so never shown). Admins only.
pub fn open_invites(tx: &dyn Tx, actor: Acting, now: Timestamp) -> Result<Vec<InviteRow>> {
    actor.require_admin(tx, "list the invites")?;
    tx.open_invites(now)
}

/// Revokes an invite neither used nor lapsed: its code then gets what an
/// unknown one gets (`invite_invalid`). Admins only.
pub fn revoke_invite(tx: &dyn Tx, actor: Acting, id: InviteId, now: Timestamp) -> Result<()> {
    actor.require_admin(tx, "revoke an invite")?;
    if !tx.delete_invite(id, now)? {
        return Err(Error::NotFound(format!(
            "no open invite {id}: it was used, lapsed or revoked"
        )));
    }
    Ok(())
}

/// Every participant with its devices. Admins only.
pub fn members(tx: &dyn Tx, actor: Acting) -> Result<Vec<Member>> {
    actor.require_admin(tx, "list the participants")?;
    tx.accounts()?
        .into_iter()
        .map(|account| {
            Ok(Member {
                agent: account.participant.kind() == ParticipantKind::Agent,
                devices: tx.devices(&account.participant)?,
                participant: account.participant,
                admin: account.admin,
            })
        })
        .collect()
}

/// Revokes a device of `owner`: the caller's own, or anyone's by an admin.
pub fn revoke_device(
    tx: &dyn Tx,
    actor: Acting,
    owner: &Participant,
    id: &str,
    now: Timestamp,
) -> Result<()> {
    if !matches!(actor, Acting::As(me) if me == owner) {
        actor.require_admin(tx, "revoke another participant's device")?;
    }
    if !tx.revoke_device(owner, id, now)? {
        return Err(Error::NotFound(format!("{owner} has no device {id}")));
    }
    Ok(())
}

/// The permissions document; admins only.
pub fn permissions(tx: &dyn Tx, actor: Acting, what: &str) -> Result<Permissions> {
    actor.require_admin(tx, what)?;
    Ok(tx
        .permissions()?
        .map(|(_, document)| document)
        .unwrap_or_default())
}

/// Checks and stores a new permissions document under a new stamp, with a
/// `permissions.changed` event for everyone: what a client lists may have
/// changed in ways no event of a file tells it (a file hidden from it says
/// nothing), so it lists again. The event says nothing of the rules.
fn put_permissions(
    tx: &dyn Tx,
    actor: Acting,
    document: &Permissions,
    now: Timestamp,
) -> Result<()> {
    check_permissions(tx, document)?;
    tx.put_permissions(&Uuid::new_v4().to_string(), document)?;
    tx.insert_event(NewEvent {
        id: Uuid::new_v4(),
        kind: "permissions.changed",
        artifact_id: None,
        participant: match actor {
            Acting::As(participant) => Some(participant),
            Acting::Owner => None,
        },
        holder: None,
        at: now,
        data: serde_json::json!({}),
    })
}

/// Makes or replaces a group. Admins only; its members must be participants.
pub fn put_group(tx: &dyn Tx, actor: Acting, group: Group, now: Timestamp) -> Result<Group> {
    let mut document = permissions(tx, actor, "change a group")?;
    for member in &group.members {
        if tx.account(member)?.is_none() {
            return Err(Error::Invalid(format!(
                "{member} is not a participant: invite them first"
            )));
        }
    }
    let mut group = group;
    group.members.sort();
    group.members.dedup();
    document.groups.retain(|g| g.name != group.name);
    document.groups.push(group.clone());
    document.groups.sort_by(|a, b| a.name.cmp(&b.name));
    put_permissions(tx, actor, &document, now)?;
    Ok(group)
}

/// Removes a group that no rule names. Admins only.
pub fn delete_group(tx: &dyn Tx, actor: Acting, name: &GroupName, now: Timestamp) -> Result<()> {
    let mut document = permissions(tx, actor, "remove a group")?;
    let naming: Vec<&str> = document
        .rules
        .iter()
        .filter(|r| r.who == Who::Group(name.clone()))
        .map(|r| r.folder.as_str())
        .collect();
    if !naming.is_empty() {
        return Err(Error::Invalid(format!(
            "rules on {naming:?} name group {name}: change them before removing it"
        )));
    }
    let before = document.groups.len();
    document.groups.retain(|g| &g.name != name);
    if document.groups.len() == before {
        return Err(Error::NotFound(format!("no group {name}")));
    }
    put_permissions(tx, actor, &document, now)
}

/// Replaces every rule. Admins only.
pub fn put_rules(
    tx: &dyn Tx,
    actor: Acting,
    rules: Vec<Rule>,
    now: Timestamp,
) -> Result<Vec<Rule>> {
    let mut document = permissions(tx, actor, "change the permissions")?;
    document.rules = rules;
    put_permissions(tx, actor, &document, now)?;
    Ok(document.rules)
}

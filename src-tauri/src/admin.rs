//! The Studio view, for admins: people and their devices (revocable), an
//! invite made with the link to send, groups, and the folder permissions as
//! a table, with a preview of what one person would see under the rules
//! being edited. Thin: the server decides who may do this (403 for anyone
//! but an admin), and `rules::access` what a rule means.

use leasedesk_backend::{Backend, Studio};
use leasedesk_client::Remote;
use leasedesk_desk::join_link;
use leasedesk_model::model::*;
use leasedesk_rules::access::preview_levels;
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::error::{Code, UiError, UiResult};
use crate::session::Source;
use crate::studio::InviteLink;
use crate::AppState;

/// Everything the Studio view shows.
#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct StudioView {
    members: Vec<Member>,
    groups: Vec<Group>,
    rules: Vec<Rule>,
    /// The invites not yet used nor lapsed, revocable.
    invites: Vec<OpenInvite>,
    /// The id of the device this app calls from, marked "(this device)".
    this_device: String,
}

/// The open session's server, as an admin's client. The bundled store has
/// no studio: one person works there.
async fn server(state: &AppState) -> UiResult<Remote> {
    match state.session.read().await.as_ref().map(|s| &s.source) {
        Some(Source::Remote(remote)) => Ok(remote.clone()),
        _ => Err(UiError::new(
            Code::NoServer,
            "The Studio is a team server's: this computer works on its own store.",
        )),
    }
}

/// The studio as it is; `forbidden` for anyone but an admin (the window
/// then shows no Studio tab).
#[tauri::command]
pub async fn studio(state: State<'_, AppState>) -> UiResult<StudioView> {
    let remote = server(&state).await?;
    // Five questions at once: the tab waits for the slowest, not the sum.
    let (members, groups, rules, invites, devices) = tokio::try_join!(
        remote.members(),
        remote.groups(),
        remote.permission_rules(),
        remote.invites(),
        remote.my_devices(),
    )?;
    Ok(StudioView {
        members,
        groups,
        rules,
        invites,
        this_device: devices.current,
    })
}

/// Revokes an invite not yet used: its code works no more.
#[tauri::command]
pub async fn studio_revoke_invite(state: State<'_, AppState>, id: InviteId) -> UiResult<()> {
    Ok(server(&state).await?.revoke_invite(id).await?)
}

/// Most folders the rules' Folder picker offers.
const MOST_FOLDERS: usize = 5_000;

/// Every folder of the studio, by path, for the rules' Folder picker: from
/// this app's mirror (an admin's lists everything), a level at a time.
#[tauri::command]
pub async fn studio_folders(state: State<'_, AppState>) -> UiResult<Vec<String>> {
    state
        .on_desk(async |desk| {
            let mut found = Vec::new();
            let mut next = std::collections::VecDeque::from([String::new()]);
            while let Some(folder) = next.pop_front() {
                for child in desk.folder_tree(&folder)?.folders {
                    if found.len() == MOST_FOLDERS {
                        break;
                    }
                    next.push_back(child.path.clone());
                    found.push(child.path);
                }
            }
            found.sort();
            Ok(found)
        })
        .await
}

/// Who an invite is for, as the dialog asks.
#[derive(Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum Role {
    User,
    Admin,
    Agent,
}

/// Invites someone (or a device more for a participant): the code and the
/// link to send.
#[tauri::command]
pub async fn studio_invite(
    state: State<'_, AppState>,
    name: String,
    role: Role,
    expires_seconds: u64,
) -> UiResult<InviteLink> {
    let remote = server(&state).await?;
    let invite = remote
        .invite(InviteRequest {
            name,
            admin: matches!(role, Role::Admin),
            agent: matches!(role, Role::Agent),
            expires_seconds: Some(expires_seconds),
        })
        .await?;
    Ok(InviteLink::new(
        join_link(&remote.server(), &invite.code),
        invite,
    ))
}

#[tauri::command]
pub async fn studio_revoke_device(
    state: State<'_, AppState>,
    participant: Participant,
    id: String,
) -> UiResult<()> {
    Ok(server(&state)
        .await?
        .revoke_device(&participant, &id)
        .await?)
}

#[tauri::command]
pub async fn studio_put_group(
    state: State<'_, AppState>,
    name: String,
    members: Vec<String>,
) -> UiResult<Group> {
    let group = Group {
        name: name.trim().parse().map_err(leasedesk_model::Error::from)?,
        members: members
            .iter()
            .map(|m| m.trim().parse())
            .collect::<Result<_, Invalid>>()
            .map_err(leasedesk_model::Error::from)?,
    };
    Ok(server(&state).await?.put_group(group).await?)
}

#[tauri::command]
pub async fn studio_delete_group(state: State<'_, AppState>, name: String) -> UiResult<()> {
    let name: GroupName = name.parse().map_err(leasedesk_model::Error::from)?;
    Ok(server(&state).await?.delete_group(&name).await?)
}

/// A rule as the table edits it: three words, checked here and by the server.
#[derive(Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct RuleRow {
    folder: String,
    who: String,
    level: String,
}

fn parsed(rows: &[RuleRow]) -> UiResult<Vec<Rule>> {
    rows.iter()
        .map(|r| Rule::parse(r.folder.trim(), r.who.trim(), r.level.trim()))
        .collect::<Result<_, Invalid>>()
        .map_err(|e| leasedesk_model::Error::from(e).into())
}

/// Replaces every rule with the table's.
#[tauri::command]
pub async fn studio_put_rules(
    state: State<'_, AppState>,
    rules: Vec<RuleRow>,
) -> UiResult<Vec<Rule>> {
    let rules = parsed(&rules)?;
    Ok(server(&state).await?.put_permission_rules(rules).await?)
}

/// One file as a chosen person would find it under the rules being edited.
#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct SeenFile {
    path: RepoPath,
    level: Level,
}

/// What `participant` would see under `rules` (not yet saved) and the
/// groups as they are: each file of the store with its level. An admin
/// sees everything whatever the rules say.
#[tauri::command]
pub async fn studio_preview(
    state: State<'_, AppState>,
    participant: Participant,
    rules: Vec<RuleRow>,
) -> UiResult<Vec<SeenFile>> {
    let rules = parsed(&rules)?;
    let remote = server(&state).await?;
    let members = remote.members().await?;
    let admin = members
        .iter()
        .any(|m| m.participant == participant && m.admin);
    let permissions = Permissions {
        rules,
        groups: remote.groups().await?,
    };
    let paths: Vec<RepoPath> = remote
        .artifacts()
        .await?
        .into_iter()
        .map(|a| a.path)
        .collect();
    let levels = preview_levels(&permissions, &participant, admin, &paths);
    Ok(paths
        .into_iter()
        .zip(levels)
        .map(|(path, level)| SeenFile { path, level })
        .collect())
}

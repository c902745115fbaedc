//! A studio's admin commands: `user invite | invites | revoke-invite |
//! devices | revoke-device`, `group`, `allow` and `permissions`. On a
//! server they need an admin's token; on a data folder or database
//! (`--data`, `--database`) they act as its owner, who may do what admins
//! do, unless `--as` names someone.

use leasedesk::model::*;
use leasedesk::{Error, Studio};

use super::args::{GroupCommand, UserCommand};
use super::{lines_of, local_time, Output, Target};

/// `leasedesk://join?server=URL&code=CODE`, when the server's public URL is
/// known: the server the CLI speaks to, or `LEASEDESK_PUBLIC_URL`.
fn join_link(target: &Target, code: &str) -> Option<String> {
    let server = match target {
        Target::Server(remote) => Some(remote.server()),
        Target::Local(_) => std::env::var("LEASEDESK_PUBLIC_URL")
            .ok()
            .filter(|url| !url.trim().is_empty()),
    }?;
    Some(leasedesk::desk::join_link(&server, code))
}

/// What `user invite` says: the link to send, which names the server and
/// works alone; only when no URL is known, the code, which Join can take
/// only with the server's address beside it.
fn invite_words(invite: &Invite, link: Option<&str>) -> String {
    let head = format!(
        "an invite for {} until {}, working once (shown only now)",
        invite.participant,
        local_time(invite.expires_at)
    );
    match link {
        Some(link) => format!("{head}: send this link\n{link}"),
        None => format!(
            "{head}: its code\n{}\nJoin needs the server's address with it: give --server URL (or set LEASEDESK_PUBLIC_URL) to print the link to send instead",
            invite.code
        ),
    }
}

/// `user invite | devices | revoke-device | invites | revoke-invite`.
pub(super) async fn user(
    target: &Target,
    as_given: bool,
    command: UserCommand,
    out: &Output,
) -> Result<(), Error> {
    let studio = target.studio(as_given);
    match command {
        UserCommand::Invite {
            name,
            agent,
            admin,
            expires,
        } => {
            let invite = studio
                .invite(InviteRequest {
                    name,
                    admin,
                    agent,
                    expires_seconds: expires,
                })
                .await?;
            let link = join_link(target, &invite.code);
            out.print(
                &serde_json::json!({ "invite": invite, "link": link }),
                || invite_words(&invite, link.as_deref()),
            );
        }
        UserCommand::Invites => {
            let invites = studio.invites().await?;
            out.print(&serde_json::json!({ "invites": invites }), || {
                if invites.is_empty() {
                    return "no invite is waiting to be used".to_owned();
                }
                lines_of(&invites, |i| {
                    let made = i
                        .made_by
                        .as_ref()
                        .map_or(String::new(), |by| format!(", made by {by}"));
                    format!(
                        "{}  {}{}  until {}{made}",
                        i.id,
                        i.participant,
                        if i.admin { " (admin)" } else { "" },
                        local_time(i.expires_at)
                    )
                })
            });
        }
        UserCommand::RevokeInvite { id } => {
            let id: InviteId = id.trim().parse()?;
            studio.revoke_invite(id).await?;
            out.print(&serde_json::json!({ "revoked": id }), || {
                format!("revoked invite {id}: its code works no more")
            });
        }
        UserCommand::Devices { name } => {
            let mut members = studio.members().await?;
            if let Some(name) = name {
                let participant = super::admin::named(&name)?;
                members.retain(|m| m.participant == participant);
                if members.is_empty() {
                    return Err(Error::NotFound(format!("no participant {participant}")));
                }
            }
            out.print(&members, || {
                let mut lines = Vec::new();
                for member in &members {
                    lines.push(format!(
                        "{}{}",
                        member.participant,
                        if member.admin { "  admin" } else { "" }
                    ));
                    for device in &member.devices {
                        let used = device.last_used_at.map_or("never used".to_owned(), |at| {
                            format!("last used {}", local_time(at))
                        });
                        lines.push(format!("  {}  {}  {used}", device.id, device.name));
                    }
                }
                lines.join("\n")
            });
        }
        UserCommand::RevokeDevice { name, id } => {
            let participant = super::admin::named(&name)?;
            studio.revoke_device(&participant, &id).await?;
            out.print(
                &serde_json::json!({ "participant": participant, "revoked": id }),
                || format!("revoked device {id} of {participant}"),
            );
        }
        _ => unreachable!("the data folder's own commands are `admin::user`'s"),
    }
    Ok(())
}

/// `group set | rm | list`.
pub(super) async fn group(
    studio: &dyn Studio,
    command: GroupCommand,
    out: &Output,
) -> Result<(), Error> {
    match command {
        GroupCommand::Set { name, members } => {
            let group = Group {
                name: name.parse()?,
                members: members
                    .iter()
                    .map(|m| super::admin::named(m))
                    .collect::<Result<_, _>>()?,
            };
            let group = studio.put_group(group).await?;
            out.print(&group, || group_line(&group));
        }
        GroupCommand::Rm { name } => {
            let name: GroupName = name.parse()?;
            studio.delete_group(&name).await?;
            out.print(&serde_json::json!({ "removed": name }), || {
                format!("removed group {name}")
            });
        }
        GroupCommand::List => {
            let groups = studio.groups().await?;
            out.print(&groups, || lines_of(&groups, group_line));
        }
    }
    Ok(())
}

fn group_line(group: &Group) -> String {
    let members: Vec<&str> = group.members.iter().map(|m| m.as_str()).collect();
    format!("{}: {}", group.name, members.join(" "))
}

/// `allow WHO LEVEL FOLDER`: WHO's rule in FOLDER, replaced or added.
pub(super) async fn allow(
    studio: &dyn Studio,
    who: &str,
    level: &str,
    folder: &str,
    out: &Output,
) -> Result<(), Error> {
    // `alice` is user:alice, as elsewhere in the CLI.
    let who = match who {
        "everyone" => who.to_owned(),
        w if w.contains(':') => w.to_owned(),
        w => format!("user:{w}"),
    };
    let rule = Rule::parse(folder, &who, level)?;
    let mut rules = studio.permission_rules().await?;
    rules.retain(|r| !(folder_key(&r.folder) == folder_key(&rule.folder) && r.who == rule.who));
    rules.push(rule.clone());
    let rules = studio.put_permission_rules(rules).await?;
    out.print(&Rules { rules }, || {
        format!(
            "{} may {} in {}",
            rule.who,
            level_words(rule.level),
            folder_words(&rule.folder)
        )
    });
    Ok(())
}

/// `permissions`: every rule, by folder.
pub(super) async fn permissions(studio: &dyn Studio, out: &Output) -> Result<(), Error> {
    let mut rules = studio.permission_rules().await?;
    rules.sort_by(|a, b| a.folder.cmp(&b.folder));
    out.print(
        &Rules {
            rules: rules.clone(),
        },
        || {
            lines_of(&rules, |r| {
                format!(
                    "{}  {}  {}",
                    folder_words(&r.folder),
                    r.who,
                    r.level.as_str()
                )
            })
        },
    );
    Ok(())
}

fn level_words(level: Level) -> &'static str {
    match level {
        Level::None => "not see the files",
        Level::Read => "view, not change, the files",
        Level::Write => "view and change the files",
    }
}

fn folder_words(folder: &str) -> &str {
    if folder.is_empty() {
        "every folder"
    } else {
        folder
    }
}

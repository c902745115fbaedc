//! The data folder's owner's commands: participants and their tokens (`user`),
//! `migrate` into a studio's store, `rename` (admins), and `status`. Tokens are
//! shown once, when made, and never read back: the store keeps them hashed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use leasedesk::bundled::{self, Bundled, Options};
use leasedesk::model::*;
use leasedesk::{Backend, Error};

use super::args::UserCommand;
use super::{default_data_dir, lines_of, Output, Target};

/// `user add | token | revoke | list`, on a data folder only.
pub(super) fn user(target: &Target, command: UserCommand, out: &Output) -> Result<(), Error> {
    match command {
        UserCommand::Add { name, agent, admin } => {
            let participant = if agent {
                Participant::agent(&name)?
            } else {
                Participant::user(&name)?
            };
            let (account, token) = target.local("user add")?.add_account(&participant, admin)?;
            // The token comes alone on the last line, and only now: it is kept hashed.
            out.print(
                &serde_json::json!({ "account": account, "token": token }),
                || {
                    let admin = if admin { " (admin)" } else { "" };
                    format!(
                        "added {}{admin}; its token (shown once):\n{token}",
                        account.participant
                    )
                },
            );
        }
        UserCommand::Token { name } => {
            let participant = named(&name)?;
            let token = target.local("user token")?.new_token(&participant)?;
            out.print(
                &serde_json::json!({ "participant": participant, "token": token }),
                || format!("a new token for {participant} (shown once):\n{token}"),
            );
        }
        UserCommand::Revoke { name } => {
            let participant = named(&name)?;
            let revoked = target.local("user revoke")?.revoke_tokens(&participant)?;
            out.print(
                &serde_json::json!({ "participant": participant, "revoked": revoked }),
                || format!("revoked {revoked} token(s) of {participant}"),
            );
        }
        UserCommand::List => {
            let accounts = target.local("user list")?.accounts()?;
            out.print(&accounts, || {
                lines_of(&accounts, |a| {
                    format!("{}{}", a.participant, if a.admin { "  admin" } else { "" })
                })
            });
        }
        _ => unreachable!("the studio's commands are `studio::user`'s"),
    }
    Ok(())
}

/// `alice` means user:alice; `agent:resizer` and `user:alice` are taken as they are.
pub(super) fn named(name: &str) -> Result<Participant, Error> {
    if name.contains(':') {
        Ok(name.parse::<Participant>()?)
    } else {
        Ok(Participant::user(name)?)
    }
}

/// `status`: where commands go (the server that answers, the database, or the
/// data folder) and who you are there.
pub(super) async fn status(
    target: &Target,
    data: Option<PathBuf>,
    database: Option<&str>,
    out: &Output,
) -> Result<(), Error> {
    let me = target.backend().me().await?;
    let (key, place) = match (target, database) {
        (Target::Server(remote), _) => ("server", remote.server()),
        (Target::Local(_), Some(url)) => (
            "database",
            leasedesk::store::postgres::public_name(url).unwrap_or_default(),
        ),
        (Target::Local(_), None) => {
            let data = data.unwrap_or_else(default_data_dir);
            ("data", data.display().to_string())
        }
    };
    out.print(
        &serde_json::json!({ key: place, "participant": me }),
        || match key {
            "data" => format!("data folder {place} as {me}"),
            _ => format!("{key} {place} as {me}"),
        },
    );
    Ok(())
}

/// `rename` (admins): a file given a new path that meets the path rules.
pub(super) async fn rename(
    store: &dyn Backend,
    old: &RepoPath,
    new: &RepoPath,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(old).await?;
    let renamed = store.rename(artifact.id, new).await?;
    out.print(&renamed, || {
        format!("{} is now {}", artifact.path, renamed.path)
    });
    Ok(())
}

/// `migrate`: every row of this data folder copied into an empty PostgreSQL
/// database, its blobs into `to_blobs`; progress on stderr.
pub(super) async fn migrate(
    source: &Bundled,
    to_database: &str,
    to_blobs: &str,
    out: &Output,
) -> Result<(), Error> {
    let scratch = std::env::temp_dir().join(format!("leasedesk-migrate-{}", std::process::id()));
    let studio = Bundled::open_at(
        &bundled::Location {
            data: scratch.clone(),
            database: Some(to_database.to_owned()),
            blobs: Some(to_blobs.to_owned()),
        },
        Options::default(),
    )?;
    let copied = source
        .migrate_into(&studio, |step| {
            let (verb, n, total) = match step {
                bundled::MigrationStep::BlobCopied(n, total) => ("copied", n, total),
                bundled::MigrationStep::BlobKept(n, total) => ("already had", n, total),
            };
            eprintln!("{verb} blob {n} of {total}");
        })
        .await;
    drop(studio);
    let _ = std::fs::remove_dir_all(&scratch);
    let counts = copied?;
    out.print(
        &serde_json::json!(counts
            .iter()
            .map(|(t, n)| (t.to_string(), *n))
            .collect::<BTreeMap<_, _>>()),
        || {
            let rows: Vec<String> = counts.iter().map(|(t, n)| format!("{n} {t}")).collect();
            format!("copied into {to_database}: {}", rows.join(", "))
        },
    );
    Ok(())
}

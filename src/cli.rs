//! The CLI for admins, scripts and agents. Human output by default, `--json` for
//! scripts. A refused command exits non-zero and says why on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{Local, TimeDelta};
use clap::{Parser, Subcommand};
use serde::Serialize;

use leasedesk::bundled::{self, Bundled, Options};
use leasedesk::failpoint::Failpoints;
use leasedesk::model::*;
use leasedesk::{Backend, Error, Remote, Upload};

/// How `serve` writes its log lines.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum LogFormat {
    Text,
    Json,
}

/// Exit code of a refusal because someone else holds the file (EX_TEMPFAIL):
/// an agent plans again or retries later.
const EXIT_BUSY: u8 = 75;

#[derive(Parser, Debug)]
#[command(
    name = "leasedesk",
    version,
    about = "One writer at a time for files that cannot be merged"
)]
pub struct Args {
    /// Data folder of the bundled backend (database and blobs); created if missing.
    #[arg(long, global = true, env = "LEASEDESK_DATA", value_name = "DIR")]
    data: Option<PathBuf>,

    /// Keep rows in this PostgreSQL database (postgres://USER@HOST:PORT/DB)
    /// instead of the data folder's SQLite file. TLS is used when the
    /// database offers it (its certificate checked against the system's
    /// roots and LEASEDESK_CA_CERT); add ?sslmode=require to insist on it,
    /// or ?sslmode=disable to never try.
    #[arg(long, global = true, env = "LEASEDESK_DATABASE", value_name = "URL")]
    database: Option<String>,

    /// Keep blobs here (s3://BUCKET/PREFIX or file:///PATH) instead of under --data.
    #[arg(long, global = true, env = "LEASEDESK_BLOBS", value_name = "URL")]
    blobs: Option<String>,

    /// Act as this participant (user:NAME or agent:NAME); default user:<OS login>.
    #[arg(
        long = "as",
        global = true,
        value_name = "PARTICIPANT",
        conflicts_with = "server"
    )]
    as_participant: Option<Participant>,

    /// Use a team's server instead of a data folder; the token comes from
    /// LEASEDESK_TOKEN (never from an argument, which others can see).
    /// Several URLs, separated by commas: when one does not answer, the next.
    #[arg(
        long,
        global = true,
        env = "LEASEDESK_SERVER",
        value_name = "URL",
        conflicts_with = "data"
    )]
    server: Option<String>,

    /// Print JSON for scripts instead of sentences.
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Manage participants.
    #[command(subcommand)]
    User(UserCommand),
    /// Show where commands go (the server that answers, or the data folder)
    /// and who you are there.
    Status,
    /// Store a new file at REPO_PATH as version 1.
    Import {
        repo_path: RepoPath,
        file: PathBuf,
        /// What this version is (shown in the history).
        #[arg(short, long)]
        message: Option<String>,
    },
    /// (admin) Give a file a new path, e.g. one stored before the path rules
    /// that cannot be placed on a computer (`CON`, `a:b`, `trail.`).
    Rename {
        #[arg(value_parser = stored_path)]
        old: RepoPath,
        new: RepoPath,
    },
    /// List files with their head version and holder.
    Ls,
    /// Show who holds a file, with their note and the time left.
    Who {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
    },
    /// Show a file's versions, newest first.
    Versions {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
    },
    /// Show a file's history, newest first: versions with their
    /// descriptions, check-outs and how each ended, proposals.
    History {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        /// Only events before this sequence number (to page back).
        #[arg(long)]
        before: Option<u64>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Download a version of a file (the head unless --version), checked
    /// against its digest, to FILE (default: its name, here); never over an
    /// existing file.
    Get {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        #[arg(long)]
        version: Option<u64>,
        #[arg(short, long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Take a file's lease to edit it.
    Checkout {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        /// Shown to whoever is refused the file meanwhile.
        #[arg(long)]
        note: Option<String>,
        /// Lease length: 90s, 30m, 8h, 2d (default 8h).
        #[arg(long, value_parser = parse_ttl)]
        ttl: Option<u64>,
    },
    /// Take your lease again for longer.
    Extend {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        #[arg(long, value_parser = parse_ttl)]
        ttl: Option<u64>,
    },
    /// Upload FILE as your check-in of REPO_PATH and end the check-out.
    Checkin {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        file: PathBuf,
        /// What this version is (shown in the history).
        #[arg(short, long)]
        message: Option<String>,
    },
    /// End your check-out without checking anything in.
    Cancel {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
    },
    /// List proposals (open ones unless --all).
    Proposals {
        #[arg(long)]
        all: bool,
    },
    /// Commit an open proposal as the new head.
    Accept { proposal: ProposalId },
    /// Make a stale proposal again against the current head.
    Rebuild { proposal: ProposalId },
    /// Close a proposal without committing it.
    Reject { proposal: ProposalId },
    /// End someone's lease (admins only); their later check-in becomes a proposal.
    Break {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        #[arg(long)]
        reason: String,
    },
    /// Copy this data folder (every user, version, check-out, proposal and
    /// event) into a team's store: an empty PostgreSQL database and a blob store.
    Migrate {
        /// The PostgreSQL database to fill (postgres://USER@HOST:PORT/DB); it must be empty.
        #[arg(long, value_name = "URL")]
        to_database: String,
        /// Where the blobs go: s3://BUCKET/PREFIX or file:///PATH.
        #[arg(long, value_name = "URL")]
        to_blobs: String,
    },
    /// Serve the HTTP API on ADDR (e.g. 127.0.0.1:7070; port 0 picks a free one).
    Serve {
        #[arg(long, default_value = "127.0.0.1:7070")]
        listen: std::net::SocketAddr,
        /// Largest upload accepted: a number of bytes, or 500M, 2G, 64G.
        #[arg(long, default_value = "64G", value_parser = parse_size)]
        max_upload: u64,
        /// Most connections at once; past it a client is answered 503
        /// (default: half the open-file limit, at most 16384).
        #[arg(long)]
        max_connections: Option<usize>,
        /// Longest wait for a request's headers, from its first byte (or
        /// from the connection's start).
        #[arg(long, default_value = "10s", value_parser = parse_ttl)]
        header_timeout: u64,
        /// Longest wait for the next request on a kept-alive connection.
        #[arg(long, default_value = "60s", value_parser = parse_ttl)]
        idle_timeout: u64,
        /// Longest wait for the next byte of an upload, or for a client to
        /// take the next byte of its answer; then the connection is dropped.
        #[arg(long, default_value = "60s", value_parser = parse_ttl)]
        stall_timeout: u64,
        /// How long requests in flight (uploads) may go on after SIGTERM.
        #[arg(long, default_value = "30s", value_parser = parse_ttl)]
        shutdown_grace: u64,
        /// Serve Prometheus metrics (GET /metrics) on this address, apart
        /// from the API's (port 0 picks a free one).
        #[arg(long, value_name = "ADDR")]
        metrics_listen: Option<std::net::SocketAddr>,
        /// How log lines on stderr look: `text` for people, `json` (one
        /// object a line) for a log collector.
        #[arg(long, value_enum, default_value_t = LogFormat::Text)]
        log_format: LogFormat,
        /// Serve HTTPS with this PEM certificate (chain); SIGHUP reads it
        /// and the key again.
        #[arg(long, requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The PEM private key of --tls-cert.
        #[arg(long, requires = "tls_cert")]
        tls_key: Option<PathBuf>,
        /// Allow plain HTTP on an address other than loopback (tokens then
        /// cross the network in clear).
        #[arg(long, conflicts_with = "tls_cert")]
        insecure_http: bool,
    },
    /// Print a local file's digest, as a check-in would compute it.
    Digest { file: PathBuf },
    /// Print the event ledger.
    Events {
        /// Only events after this sequence number.
        #[arg(long, default_value_t = 0)]
        after: u64,
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// Keep printing new events as they are written.
        #[arg(long)]
        follow: bool,
    },
    /// For agents: take a short edit lease, run COMMAND on a copy of the head
    /// ({} in its arguments stands for the copy's path), commit the result if
    /// it succeeds, and always release the lease. A busy file exits with 75.
    Edit {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        /// Seconds the command may run.
        #[arg(long, default_value_t = 30)]
        deadline: u64,
        /// What the committed version is (shown in the history).
        #[arg(short, long)]
        message: Option<String>,
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
enum UserCommand {
    /// Add a participant: user:NAME, or agent:NAME with --agent.
    Add {
        name: String,
        #[arg(long)]
        agent: bool,
        #[arg(long)]
        admin: bool,
    },
    /// List participants.
    List,
    /// Make another token for a participant (NAME, or agent:NAME).
    Token { name: String },
    /// Revoke every token of a participant (NAME, or agent:NAME).
    Revoke { name: String },
}

/// A path to look up, as stored: it may be one stored before the path rules
/// (the strict parser is for paths being made: import, a rename's target).
fn stored_path(text: &str) -> Result<RepoPath, Error> {
    RepoPath::stored(text)
}

/// `alice` means user:alice; `agent:resizer` and `user:alice` are taken as they are.
fn named(name: &str) -> Result<Participant, Error> {
    if name.contains(':') {
        name.parse()
    } else {
        Participant::user(name)
    }
}

/// A size: bytes, or a number with K, M, G or T (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let units = [
        ("", 1),
        ("K", 1 << 10),
        ("M", 1 << 20),
        ("G", 1 << 30),
        ("T", 1 << 40),
    ];
    parse_scaled(text, &units, "a size like 500M or 64G")
}

/// A duration in seconds: a number with s, m, h or d (seconds by default).
fn parse_ttl(text: &str) -> Result<u64, String> {
    let units = [("", 1), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)];
    parse_scaled(text, &units, "a duration like 90s, 30m, 8h or 2d")
}

/// A whole number followed by one of `units`, scaled by it.
fn parse_scaled(text: &str, units: &[(&str, u64)], what: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not {what}"))?;
    let (_, scale) = units
        .iter()
        .find(|(name, _)| *name == unit)
        .ok_or_else(|| {
            let names: Vec<&str> = units
                .iter()
                .map(|(n, _)| *n)
                .filter(|n| !n.is_empty())
                .collect();
            format!("unknown unit {unit:?}: use {}", names.join(", "))
        })?;
    Ok(number.saturating_mul(*scale))
}

pub async fn run(args: Args) -> ExitCode {
    let json = args.json;
    match execute(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if json {
                eprintln!("{}", error.to_body());
            } else {
                eprintln!("leasedesk: {error}");
            }
            match error {
                Error::ArtifactBusy { .. } => ExitCode::from(EXIT_BUSY),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

/// Crash tests stop a real process at a named point. Only debug builds (what
/// `cargo test` runs) read the variable, so a stray one cannot touch a release.
fn test_failpoints() -> Result<Failpoints, Error> {
    if cfg!(debug_assertions) {
        Failpoints::parse(&std::env::var("LEASEDESK_FAILPOINTS").unwrap_or_default())
    } else {
        Ok(Failpoints::default())
    }
}

fn default_data_dir() -> PathBuf {
    use leasedesk::places;
    places::cli_data(places::System::THIS, &places::process_env)
}

async fn execute(args: Args) -> Result<(), Error> {
    let mut options = Options {
        failpoints: test_failpoints()?,
        ..Options::default()
    };
    if let Command::Serve { max_upload, .. } = &args.command {
        options.max_upload = *max_upload;
    }
    let out = Output { json: args.json };
    if let Command::Digest { file } = &args.command {
        // Needs no store: do not create a data folder for it. A one-shot
        // command may map the file (see `digest_file_mapped`).
        let (digest, bytes) = leasedesk::blobs::digest_file_mapped(file)?;
        out.print(
            &serde_json::json!({ "digest": digest, "size": bytes }),
            || format!("{digest}  {}", file.display()),
        );
        return Ok(());
    }
    let target = match &args.server {
        Some(url) => {
            let token = std::env::var("LEASEDESK_TOKEN").map_err(|_| {
                Error::Unauthorized("set LEASEDESK_TOKEN to your token to use --server".into())
            })?;
            let remote = Remote::new(url, token.trim())?;
            remote.on_move(|from, to| {
                eprintln!("leasedesk: server {from} did not answer; using {to}")
            });
            Target::Server(remote)
        }
        None => {
            let data = args.data.clone().unwrap_or_else(default_data_dir);
            let location = bundled::Location {
                data,
                database: args.database.clone(),
                blobs: args.blobs.clone(),
            };
            let store = Bundled::open_at(&location, options)?;
            Target::Local(
                store.acting_as(args.as_participant.clone().unwrap_or_else(bundled::os_user)),
            )
        }
    };
    let store = target.backend();
    let now = chrono::Utc::now();

    match args.command {
        Command::User(UserCommand::Add { name, agent, admin }) => {
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
        Command::User(UserCommand::Token { name }) => {
            let participant = named(&name)?;
            let token = target.local("user token")?.new_token(&participant)?;
            out.print(
                &serde_json::json!({ "participant": participant, "token": token }),
                || format!("a new token for {participant} (shown once):\n{token}"),
            );
        }
        Command::User(UserCommand::Revoke { name }) => {
            let participant = named(&name)?;
            let revoked = target.local("user revoke")?.revoke_tokens(&participant)?;
            out.print(
                &serde_json::json!({ "participant": participant, "revoked": revoked }),
                || format!("revoked {revoked} token(s) of {participant}"),
            );
        }
        Command::User(UserCommand::List) => {
            let accounts = target.local("user list")?.accounts()?;
            out.print(&accounts, || {
                accounts
                    .iter()
                    .map(|a| format!("{}{}", a.participant, if a.admin { "  admin" } else { "" }))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Command::Import {
            repo_path,
            file,
            message,
        } => {
            let artifact = store
                .import(&repo_path, described(Upload::file(file), message))
                .await?;
            out.print(&artifact, || {
                format!(
                    "imported {} as version 1 ({})",
                    artifact.path,
                    size(artifact.head.size)
                )
            });
        }
        Command::Status => {
            let me = store.me().await?;
            let (key, place) = match (&target, &args.database) {
                (Target::Server(remote), _) => ("server", remote.server()),
                (Target::Local(_), Some(url)) => (
                    "database",
                    leasedesk::store::postgres::public_name(url).unwrap_or_default(),
                ),
                (Target::Local(_), None) => {
                    let data = args.data.clone().unwrap_or_else(default_data_dir);
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
        }
        Command::Ls => {
            let artifacts = store.artifacts().await?;
            out.print(&artifacts, || {
                let rows: Vec<String> = artifacts
                    .iter()
                    .map(|a| {
                        let holder = a.lease.as_ref().map_or_else(
                            || "free".to_owned(),
                            |l| {
                                format!(
                                    "{} ({} left)",
                                    l.participant,
                                    time_left(l.expires_at - now)
                                )
                            },
                        );
                        format!("{}  v{}  {}", a.path, a.head.version, holder)
                    })
                    .collect();
                if rows.is_empty() {
                    "no files yet: leasedesk import REPO_PATH FILE".into()
                } else {
                    rows.join("\n")
                }
            });
        }
        Command::Who { repo_path } => {
            let artifact = store.artifact_by_path(&repo_path).await?;
            out.print(&artifact.lease, || match &artifact.lease {
                None => format!(
                    "{} is free (version {} by {})",
                    artifact.path, artifact.head.version, artifact.head.author
                ),
                Some(lease) => {
                    let what = if lease.kind == LeaseKind::Edit {
                        "being edited"
                    } else {
                        "checked out"
                    };
                    let mut line = format!(
                        "{} is {what} by {} until {} ({} left)",
                        artifact.path,
                        lease.participant,
                        local_time(lease.expires_at),
                        time_left(lease.expires_at - now)
                    );
                    if let Some(note) = &lease.note {
                        line.push_str(&format!("\nnote: {note}"));
                    }
                    line
                }
            });
        }
        Command::History {
            repo_path,
            before,
            limit,
        } => {
            let artifact = store.artifact_by_path(&repo_path).await?;
            let page = store
                .query_events(EventQuery {
                    artifact: Some(artifact.id),
                    before: Some(before.unwrap_or(u64::MAX)),
                    limit,
                    ..EventQuery::default()
                })
                .await?;
            out.print(&page, || {
                let mut lines: Vec<String> = page
                    .events
                    .iter()
                    .filter_map(|e| {
                        let what = history_line(e)?;
                        Some(format!("{:>6}  {}  {what}", e.seq, local_time(e.at)))
                    })
                    .collect();
                if page.events.len() == limit as usize {
                    lines.push(format!(
                        "older: leasedesk history {repo_path} --before {}",
                        page.next
                    ));
                }
                lines.join("\n")
            });
        }
        Command::Get {
            repo_path,
            version,
            output,
        } => {
            let artifact = store.artifact_by_path(&repo_path).await?;
            let dest = match output {
                Some(path) => path,
                None => leasedesk::workspace::join_under(
                    &std::env::current_dir()?,
                    artifact.path.file_name(),
                )?,
            };
            if dest.exists() {
                return Err(Error::Exists(format!(
                    "{} exists: name another file with -o (nothing was written)",
                    dest.display()
                )));
            }
            let head =
                leasedesk::backend::download(store, artifact.id, version, &dest, None).await?;
            out.print(&head, || {
                format!(
                    "saved version {} of {} to {} ({})",
                    head.version,
                    artifact.path,
                    dest.display(),
                    size(head.size)
                )
            });
        }
        Command::Versions { repo_path } => {
            let artifact = store.artifact_by_path(&repo_path).await?;
            let versions = store.versions(artifact.id).await?;
            out.print(&versions, || {
                versions
                    .iter()
                    .map(|h| {
                        format!(
                            "v{}  {}  {}  {}  {}",
                            h.version,
                            local_time(h.committed_at),
                            h.author,
                            size(h.size),
                            h.digest
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Command::Checkout {
            repo_path,
            note,
            ttl,
        } => {
            let artifact = store.artifact_by_path(&repo_path).await?;
            let checkout = store
                .check_out(
                    artifact.id,
                    CheckoutRequest {
                        ttl_seconds: ttl,
                        note,
                    },
                )
                .await?;
            out.print(&checkout, || {
                format!(
                    "checked out {} at version {} until {} ({})",
                    checkout.path,
                    checkout.version,
                    local_time(checkout.expires_at),
                    time_left(checkout.expires_at - now)
                )
            });
        }
        Command::Extend { repo_path, ttl } => {
            let open = my_open_checkout(store, &repo_path).await?;
            let checkout = store.extend(open.id, ttl).await?;
            out.print(&checkout, || {
                format!(
                    "extended {} until {}",
                    checkout.path,
                    local_time(checkout.expires_at)
                )
            });
        }
        Command::Checkin {
            repo_path,
            file,
            message,
        } => {
            let checkout = match my_open_checkout(store, &repo_path).await {
                Ok(open) => {
                    store
                        .check_in(open.id, described(Upload::file(&file), message))
                        .await?
                }
                Err(no_open) => retry_checkin(store, &repo_path, &file, message)
                    .await?
                    .ok_or(no_open)?,
            };
            out.print(&checkout, || match &checkout.result {
                Some(CheckinResult::Committed { version, .. }) => {
                    format!("checked in {} as version {version}", checkout.path)
                }
                Some(CheckinResult::Unchanged { version, .. }) => {
                    format!("{} is unchanged: version {version} stays the head", checkout.path)
                }
                Some(CheckinResult::Proposal { proposal }) => format!(
                    "{} changed since your check-out (version {} is the head now): your file is kept as proposal {}",
                    checkout.path, proposal.base_version, proposal.id
                ),
                None => format!("checked in {}", checkout.path),
            });
        }
        Command::Cancel { repo_path } => {
            let open = my_open_checkout(store, &repo_path).await?;
            let checkout = store.cancel(open.id).await?;
            out.print(&checkout, || {
                format!("cancelled your check-out of {}", checkout.path)
            });
        }
        Command::Proposals { all } => {
            let filter = ProposalFilter {
                state: (!all).then_some(ProposalState::Open),
                ..ProposalFilter::default()
            };
            let proposals = store.proposals(filter).await?;
            let paths = artifact_paths(store).await?;
            out.print(&proposals, || {
                if proposals.is_empty() {
                    return "no proposals".into();
                }
                proposals
                    .iter()
                    .map(|p| {
                        format!(
                            "{}  {}  {:?}  by {}  against v{} (made from v{})",
                            p.id,
                            paths.get(&p.artifact_id).map_or("?", |p| p.as_str()),
                            p.state,
                            p.author,
                            p.base_version,
                            p.provenance.version
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Command::Accept { proposal } => {
            let proposal = store.accept_proposal(proposal).await?;
            out.print(&proposal, || format!("accepted proposal {}", proposal.id));
        }
        Command::Rebuild { proposal } => {
            let proposal = store.rebuild_proposal(proposal).await?;
            out.print(&proposal, || {
                format!(
                    "rebuilt as proposal {} against version {}",
                    proposal.id, proposal.base_version
                )
            });
        }
        Command::Reject { proposal } => {
            let proposal = store.reject_proposal(proposal).await?;
            out.print(&proposal, || format!("rejected proposal {}", proposal.id));
        }
        Command::Rename { old, new } => {
            let artifact = store.artifact_by_path(&old).await?;
            let renamed = store.rename(artifact.id, &new).await?;
            out.print(&renamed, || {
                format!("{} is now {}", artifact.path, renamed.path)
            });
        }
        Command::Break { repo_path, reason } => {
            let artifact = store.artifact_by_path(&repo_path).await?;
            let artifact = store.break_lease(artifact.id, &reason).await?;
            out.print(&artifact, || format!("{} is free", artifact.path));
        }
        Command::Digest { .. } => unreachable!("handled before the store opens"),
        Command::Migrate {
            to_database,
            to_blobs,
        } => {
            let source = target.local("migrate")?;
            let scratch =
                std::env::temp_dir().join(format!("leasedesk-migrate-{}", std::process::id()));
            let team = Bundled::open_at(
                &bundled::Location {
                    data: scratch.clone(),
                    database: Some(to_database.clone()),
                    blobs: Some(to_blobs.clone()),
                },
                Options::default(),
            )?;
            let copied = source
                .migrate_into(&team, |step| {
                    let (verb, n, total) = match step {
                        bundled::MigrationStep::BlobCopied(n, total) => ("copied", n, total),
                        bundled::MigrationStep::BlobKept(n, total) => ("already had", n, total),
                    };
                    eprintln!("{verb} blob {n} of {total}");
                })
                .await;
            drop(team);
            let _ = std::fs::remove_dir_all(&scratch);
            let counts = copied?;
            out.print(
                &serde_json::json!(counts
                    .iter()
                    .map(|(t, n)| (t.to_string(), *n))
                    .collect::<std::collections::BTreeMap<_, _>>()),
                || {
                    let rows: Vec<String> =
                        counts.iter().map(|(t, n)| format!("{n} {t}")).collect();
                    format!("copied into {to_database}: {}", rows.join(", "))
                },
            );
        }
        Command::Serve {
            listen,
            max_upload: _,
            max_connections,
            header_timeout,
            idle_timeout,
            stall_timeout,
            shutdown_grace,
            metrics_listen,
            log_format,
            tls_cert,
            tls_key,
            insecure_http,
        } => {
            let tls = match (&tls_cert, &tls_key) {
                (Some(cert), Some(key)) => {
                    Some(leasedesk::server::tls::ServerTls::load(cert, key)?)
                }
                _ => None,
            };
            if tls.is_none() && !listen.ip().is_loopback() && !insecure_http {
                return Err(Error::Invalid(format!(
                    "refusing to serve plain HTTP on {listen}, which is not a loopback address: \
                     tokens would cross the network in clear. Give --tls-cert and --tls-key, \
                     or --insecure-http to serve plain HTTP all the same"
                )));
            }
            let seconds = std::time::Duration::from_secs;
            let limits = leasedesk::server::Limits {
                header_timeout: seconds(header_timeout),
                idle_timeout: seconds(idle_timeout),
                stall_timeout: seconds(stall_timeout),
                ..Default::default()
            };
            let open_files = raise_open_file_limit();
            let config = leasedesk::server::ServeConfig {
                limits,
                max_connections: max_connections
                    .unwrap_or((open_files.saturating_sub(64) / 2).clamp(16, 16384) as usize),
                shutdown_grace: seconds(shutdown_grace),
                metrics: None,
                tls,
            };
            serve(
                target.local("serve")?.clone(),
                listen,
                metrics_listen,
                config,
                log_format,
            )
            .await?
        }
        Command::Events {
            after,
            limit,
            follow,
        } => {
            if follow {
                return follow_events(&target, after, &out).await;
            }
            let page = store.events(after, limit).await?;
            out.print(&page, || {
                page.events
                    .iter()
                    .map(event_line)
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Command::Edit {
            repo_path,
            deadline,
            message,
            command,
        } => {
            let artifact = store.artifact_by_path(&repo_path).await?;
            let result = edit(
                target.shared(),
                &artifact,
                std::time::Duration::from_secs(deadline),
                message,
                command,
            )
            .await?;
            out.print(&result, || match &result {
                CheckinResult::Committed { version, .. } => {
                    format!("committed {} as version {version}", artifact.path)
                }
                CheckinResult::Unchanged { .. } => {
                    format!("{} is unchanged: nothing was committed", artifact.path)
                }
                CheckinResult::Proposal { proposal } => format!("kept as proposal {}", proposal.id),
            });
        }
    }
    Ok(())
}

/// One event of a file's history in words; `None` for the lease changes a
/// check-out or an edit already tells.
fn history_line(e: &Event) -> Option<String> {
    let who = e.participant.as_ref().map_or("someone", |p| p.as_str());
    let data = &e.data;
    let text = |key: &str| data[key].as_str().map(str::to_owned);
    let described = |line: String| match text("message") {
        Some(message) => format!("{line}: {message}"),
        None => line,
    };
    Some(match e.kind.as_str() {
        "version.committed" => described(format!(
            "version {} by {who} ({})",
            data["version"],
            size(data["size"].as_u64().unwrap_or(0))
        )),
        "checkout.opened" => match text("note") {
            Some(note) => format!("{who} checked out version {} ({note})", data["version"]),
            None => format!("{who} checked out version {}", data["version"]),
        },
        "checkout.closed" => match data["result"]["outcome"].as_str() {
            Some("committed") => format!("{who} checked in version {}", data["result"]["version"]),
            Some("unchanged") => format!("{who} checked in with no change"),
            Some("proposal") => format!(
                "{who} checked in late: kept as proposal {}",
                data["result"]["proposal_id"].as_str().unwrap_or("?")
            ),
            _ => format!("{who} cancelled their check-out"),
        },
        "lease.expired" => match data["checkout_id"].as_str() {
            Some(_) => format!("{who}'s check-out lapsed"),
            None => format!("{who}'s edit lapsed"),
        },
        "lease.broken" => format!(
            "{who} broke {}'s lease: {}",
            data["holder_participant"].as_str().unwrap_or("someone"),
            text("reason").unwrap_or_default()
        ),
        "proposal.created" => described(format!(
            "{who} proposed a change against version {} (proposal {})",
            data["base_version"],
            data["proposal_id"].as_str().unwrap_or("?")
        )),
        "proposal.accepted" => format!(
            "{who} accepted proposal {} as version {}",
            data["proposal_id"].as_str().unwrap_or("?"),
            data["version"]
        ),
        "proposal.rejected" => format!(
            "{who} rejected proposal {}",
            data["proposal_id"].as_str().unwrap_or("?")
        ),
        "artifact.renamed" => format!(
            "{who} renamed it from {} to {}",
            text("from").unwrap_or_default(),
            text("to").unwrap_or_default()
        ),
        "lease.acquired" | "lease.released" | "lease.renewed" => return None,
        other => format!("{other} by {who}"),
    })
}

fn event_line(e: &Event) -> String {
    format!(
        "{:>6}  {}  {:<18} {}  {}",
        e.seq,
        local_time(e.at),
        e.kind,
        e.participant.as_ref().map_or("", |p| p.as_str()),
        e.holder.as_deref().unwrap_or("")
    )
}

/// Prints events as they are written: from the server's event stream, or by
/// watching the data folder.
async fn follow_events(target: &Target, after: u64, out: &Output) -> Result<(), Error> {
    let print = |event: &Event| {
        if out.json {
            say(&serde_json::to_string(event).expect("an event serializes"));
        } else {
            say(&event_line(event));
        }
    };
    match target {
        Target::Server(remote) => {
            // Through outages of the server or its database: opened again
            // after the last event printed, so each is printed once.
            let mut after = after;
            let mut backoff = Backoff::default();
            loop {
                let why = match remote.follow_events(after).await {
                    Ok(stream) => {
                        futures_util::pin_mut!(stream);
                        loop {
                            match futures_util::StreamExt::next(&mut stream).await {
                                Some(Ok(event)) => {
                                    print(&event);
                                    after = event.seq;
                                    backoff.reset();
                                }
                                Some(Err(e)) => break e,
                                None => {
                                    break Error::Unavailable(
                                        "the server ended the event stream".into(),
                                    )
                                }
                            }
                        }
                    }
                    Err(e) => e,
                };
                match why {
                    Error::Unavailable(why) => {
                        let wait = backoff.next();
                        eprintln!("leasedesk: {why}; reconnecting…");
                        tokio::time::sleep(wait).await;
                    }
                    other => return Err(other),
                }
            }
        }
        Target::Local(store) => {
            // Nobody else may have this folder open: record lapses as they come.
            let _sweeper = store.spawn_sweeper(leasedesk::bundled::SWEEP_EVERY);
            let mut after = after;
            loop {
                let changed = store.changed();
                let page = store.events(after, 500).await?;
                page.events.iter().for_each(print);
                after = page.next;
                if page.events.is_empty() {
                    // Other processes write too: look again at least every half second.
                    let _ =
                        tokio::time::timeout(std::time::Duration::from_millis(500), changed).await;
                }
            }
        }
    }
}

/// Waits between tries to reach a server: doubling from a quarter of a
/// second up to 5 s, as the app's offline probe does.
#[derive(Default)]
struct Backoff(u32);

impl Backoff {
    fn next(&mut self) -> std::time::Duration {
        let wait = std::time::Duration::from_millis(250 << self.0.min(5));
        self.0 += 1;
        wait.min(std::time::Duration::from_secs(5))
    }

    fn reset(&mut self) {
        self.0 = 0;
    }
}

/// Runs an agent's command on a copy of the head under an edit lease, and
/// commits the copy if the command succeeds.
async fn edit(
    backend: std::sync::Arc<dyn Backend>,
    artifact: &Artifact,
    deadline: std::time::Duration,
    message: Option<String>,
    command: Vec<String>,
) -> Result<CheckinResult, Error> {
    let work_dir = std::env::temp_dir().join(format!("leasedesk-edit-{}", EditId::new()));
    // Refused before any lease for a name that cannot be a file here.
    let file = leasedesk::workspace::join_under(&work_dir, artifact.path.file_name())?;
    std::fs::create_dir_all(&work_dir)?;
    let work = {
        let (backend, file) = (backend.clone(), file.clone());
        move |edit: Edit| async move {
            let mut content = backend
                .content(edit.artifact_id, Some(edit.base_version))
                .await?;
            let mut copy = tokio::fs::File::create(&file).await?;
            tokio::io::copy(&mut content.reader, &mut copy).await?;
            drop(copy);
            let path = file.to_string_lossy().into_owned();
            let (program, args) = command.split_first().expect("clap requires a command");
            let mut args: Vec<String> = args.iter().map(|a| a.replace("{}", &path)).collect();
            if !command.iter().any(|a| a.contains("{}")) {
                args.push(path);
            }
            let mut run = tokio::process::Command::new(program);
            run.args(&args)
                // The agent's command gets the caller's environment, but not
                // the means to act as the caller on the server.
                .env_remove("LEASEDESK_TOKEN")
                .env_remove("LEASEDESK_SERVER")
                .kill_on_drop(true);
            // Its own process group (on Windows, a job), so a deadline stops
            // what it started too.
            #[cfg(unix)]
            run.process_group(0);
            let mut child = run
                .spawn()
                .map_err(|e| Error::Invalid(format!("cannot run {program}: {e}")))?;
            // A deadline drops this future: then the command and all it started stop.
            let _group = KillTreeOnDrop::of(&child);
            let status = child.wait().await?;
            if !status.success() {
                return Err(Error::Invalid(format!(
                    "{program} failed ({status}): nothing was committed"
                )));
            }
            Ok(described(Upload::file(&file), message))
        }
    };
    let result = leasedesk::agent::run_edit(backend, artifact.id, deadline, work).await;
    let _ = std::fs::remove_dir_all(&work_dir);
    result
}

/// An upload with its description, if one was given.
fn described(upload: Upload, message: Option<String>) -> Upload {
    match message {
        Some(message) => upload.with_message(message),
        None => upload,
    }
}

/// Kills a command and all it started when dropped (a command stopped at its
/// deadline takes what it started with it, which would otherwise hold our
/// output open): its process group, or on Windows the job it was put in.
struct KillTreeOnDrop {
    #[cfg(unix)]
    group: Option<u32>,
    #[cfg(windows)]
    job: Option<Job>,
}

/// A Windows job's handle.
#[cfg(windows)]
struct Job(windows_sys::Win32::Foundation::HANDLE);

// SAFETY: a kernel handle may be used and closed from any thread.
#[cfg(windows)]
unsafe impl Send for Job {}

impl KillTreeOnDrop {
    #[cfg(unix)]
    fn of(child: &tokio::process::Child) -> Self {
        Self { group: child.id() }
    }

    /// A job that kills its processes when its handle closes; what the command
    /// starts joins it too. Without one (an old Windows, a refusal), only the
    /// command itself is stopped.
    #[cfg(windows)]
    fn of(child: &tokio::process::Child) -> Self {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::JobObjects::{
            AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
            SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        };
        let Some(process) = child.raw_handle() else {
            return Self { job: None };
        };
        // SAFETY: the job handle is ours until closed; `limits` outlives the
        // call that reads it; `process` is the live child's handle.
        unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if job.is_null() {
                return Self { job: None };
            }
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            let set = SetInformationJobObject(
                job,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of_val(&limits) as u32,
            );
            if set == 0 || AssignProcessToJobObject(job, process as _) == 0 {
                CloseHandle(job);
                return Self { job: None };
            }
            Self {
                job: Some(Job(job)),
            }
        }
    }
}

impl Drop for KillTreeOnDrop {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(group) = self.group {
            // SAFETY: kill only reads its arguments. The group is the command's own
            // (process_group(0)); after the command exits it is empty or gone.
            unsafe { libc::kill(-(group as i32), libc::SIGKILL) };
        }
        #[cfg(windows)]
        if let Some(job) = self.job.take() {
            // SAFETY: the handle is ours and closed once; closing it kills the job.
            unsafe { windows_sys::Win32::Foundation::CloseHandle(job.0) };
        }
    }
}

/// Where the commands go: a data folder here, or a team's server.
enum Target {
    Local(Bundled),
    Server(Remote),
}

impl Target {
    fn backend(&self) -> &dyn Backend {
        match self {
            Target::Local(store) => store,
            Target::Server(remote) => remote,
        }
    }

    fn shared(&self) -> std::sync::Arc<dyn Backend> {
        match self {
            Target::Local(store) => std::sync::Arc::new(store.clone()),
            Target::Server(remote) => std::sync::Arc::new(remote.clone()),
        }
    }

    /// The data folder, for what only its owner may do.
    fn local(&self, command: &str) -> Result<&Bundled, Error> {
        match self {
            Target::Local(store) => Ok(store),
            Target::Server(_) => Err(Error::Invalid(format!(
                "{command} works on a data folder (--data), on the server's machine"
            ))),
        }
    }
}

/// Serves until SIGINT or SIGTERM (see `server::run_with` for what then).
/// Logs go to stderr through a writer that never blocks the server: when
/// nobody reads them, lines are dropped and counted.
async fn serve(
    store: Bundled,
    listen: std::net::SocketAddr,
    metrics_listen: Option<std::net::SocketAddr>,
    mut config: leasedesk::server::ServeConfig,
    log_format: LogFormat,
) -> Result<(), Error> {
    let (writer, _flush_on_exit) = tracing_appender::non_blocking(std::io::stderr());
    let dropped = writer.error_counter();
    let filter = tracing_subscriber::EnvFilter::try_from_env("LEASEDESK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let log = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match log_format {
        LogFormat::Text => log
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        // One object a line: level, target, and the event's fields (its
        // message among them) under "fields".
        LogFormat::Json => log.json().init(),
    }
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| Error::Invalid(format!("cannot listen on {listen}: {e}")))?;
    let address = listener.local_addr()?;
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let metrics_listener = match metrics_listen {
        Some(at) => Some(
            tokio::net::TcpListener::bind(at)
                .await
                .map_err(|e| Error::Invalid(format!("cannot listen for metrics on {at}: {e}")))?,
        ),
        None => None,
    };
    let metrics_address = metrics_listener
        .as_ref()
        .map(|listener| listener.local_addr())
        .transpose()?;
    // Tests and scripts read this line to find the port (and the next, with
    // --metrics-listen, the metrics'). Whether anyone reads them, or stdout
    // is closed later, the server goes on serving.
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let mut lines = format!("listening on {scheme}://{address}\n");
        if let Some(at) = metrics_address {
            lines.push_str(&format!("metrics on http://{at}/metrics\n"));
        }
        let _ = stdout
            .write_all(lines.as_bytes())
            .and_then(|()| stdout.flush());
    }
    let (stop_metrics, metrics_stopped) = tokio::sync::oneshot::channel::<()>();
    let metrics_server = metrics_listener.map(|listener| {
        let metrics = leasedesk::metrics::Metrics::new(store.batch_sizes());
        config.metrics = Some(metrics.clone());
        if let Some(at) = metrics_address {
            tracing::info!("serving metrics on http://{at}/metrics");
        }
        tokio::spawn(leasedesk::server::run_metrics(
            listener,
            store.clone(),
            metrics,
            config.limits.clone(),
            async {
                let _ = metrics_stopped.await;
            },
        ))
    });
    tracing::info!(
        max_connections = config.max_connections,
        "serving on {scheme}://{address}"
    );
    if config.tls.is_none() && !address.ip().is_loopback() {
        tracing::warn!(
            "serving plain HTTP on {address} (--insecure-http): tokens and files cross the network in clear"
        );
    }
    let reload = config
        .tls
        .clone()
        .map(|tls| tokio::spawn(reload_on_hangup(tls)));
    let count_dropped = tokio::spawn(async move {
        let mut told = 0;
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
            let now = dropped.dropped_lines();
            if now > told {
                tracing::warn!(
                    dropped = now - told,
                    "log lines were dropped: nobody reads the server's output"
                );
                told = now;
            }
        }
    });
    let shutdown = async {
        terminated().await;
        tracing::info!("shutting down: ending event streams, finishing uploads in flight");
    };
    leasedesk::server::run_with(listener, store, config, shutdown).await?;
    let _ = stop_metrics.send(());
    if let Some(metrics_server) = metrics_server {
        let _ = metrics_server.await;
    }
    count_dropped.abort();
    if let Some(reload) = reload {
        reload.abort();
    }
    Ok(())
}

/// On each SIGHUP, reads the certificate and key again (a renewal needs no
/// restart); a bad file is logged and the old certificate kept.
async fn reload_on_hangup(tls: std::sync::Arc<leasedesk::server::tls::ServerTls>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = match signal(SignalKind::hangup()) {
            Ok(hangups) => hangups,
            Err(e) => {
                tracing::warn!(error = %e, "SIGHUP cannot be caught: the certificate will not reload");
                return;
            }
        };
        while hangups.recv().await.is_some() {
            match tls.reload() {
                Ok(()) => tracing::info!("SIGHUP: reloaded the TLS certificate and key"),
                Err(e) => tracing::error!(
                    error = %e,
                    "SIGHUP: the TLS certificate was not reloaded; still serving the previous one"
                ),
            }
        }
    }
    #[cfg(not(unix))]
    {
        // No SIGHUP here: a new certificate needs a restart.
        let _ = tls;
    }
}

/// Resolves when the process is asked to stop: Ctrl+C, SIGTERM, or on
/// Windows the console's other stop events.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    // Ctrl+C or Ctrl+Break in its console (how a script stops a process
    // group on Windows), the console closed, or the session ending.
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
        let (Ok(mut c), Ok(mut brk), Ok(mut close), Ok(mut shutdown)) =
            (ctrl_c(), ctrl_break(), ctrl_close(), ctrl_shutdown())
        else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = c.recv() => {}
            _ = brk.recv() => {}
            _ = close.recv() => {}
            _ = shutdown.recv() => {}
        }
    }
}

/// Raises this process's open-file soft limit to its hard limit (each
/// connection needs a descriptor, an upload a second), and returns the limit
/// now in force.
#[cfg(unix)]
fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write `limit`.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        let soft = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
            // macOS refuses an unlimited soft limit: OPEN_MAX is its ceiling.
            limit.rlim_cur = limit.rlim_max.min(10240);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                limit.rlim_cur = soft;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is narrower on 32-bit targets
    let limit = limit.rlim_cur as u64;
    limit
}

/// Windows has no such per-process limit on sockets.
#[cfg(not(unix))]
fn raise_open_file_limit() -> u64 {
    16384
}

/// The caller's newest open check-out of `path`.
async fn my_open_checkout(store: &dyn Backend, path: &RepoPath) -> Result<Checkout, Error> {
    store
        .checkouts(true)
        .await?
        .into_iter()
        .find(|c| c.path == *path)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "you have no open check-out of {path}: leasedesk checkout {path}"
            ))
        })
}

/// Checks in again a file already checked in (a retry after a lost answer):
/// the newest closed check-out answers with its first result if this is the
/// file it took, and is refused otherwise.
async fn retry_checkin(
    store: &dyn Backend,
    path: &RepoPath,
    file: &std::path::Path,
    message: Option<String>,
) -> Result<Option<Checkout>, Error> {
    let newest = store
        .checkouts(false)
        .await?
        .into_iter()
        .find(|c| c.path == *path);
    match newest {
        Some(closed) if closed.result.is_some() => {
            match store
                .check_in(closed.id, described(Upload::file(file), message))
                .await
            {
                Err(Error::CheckoutClosed(_)) => Ok(None),
                answer => answer.map(Some),
            }
        }
        _ => Ok(None),
    }
}

async fn artifact_paths(
    store: &dyn Backend,
) -> Result<std::collections::HashMap<ArtifactId, RepoPath>, Error> {
    Ok(store
        .artifacts()
        .await?
        .into_iter()
        .map(|a| (a.id, a.path))
        .collect())
}

struct Output {
    json: bool,
}

impl Output {
    fn print<T: Serialize>(&self, value: &T, human: impl FnOnce() -> String) {
        if self.json {
            say(&serde_json::to_string_pretty(value).expect("output serializes"));
        } else {
            say(&human());
        }
    }
}

/// Prints a line of the command's output. A closed stdout (`leasedesk ls |
/// head -1`) ends the command at once, quietly and with success, as other
/// Unix tools end: whoever read the output has all they wanted.
fn say(line: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("leasedesk: cannot write the output: {e}");
            std::process::exit(1);
        }
    }
}

fn local_time(t: Timestamp) -> String {
    t.with_timezone(&Local).format("%Y-%m-%d %H:%M").to_string()
}

fn time_left(left: TimeDelta) -> String {
    let minutes = left.num_minutes();
    match minutes {
        m if m < 1 => format!("{} s", left.num_seconds().max(0)),
        m if m < 60 => format!("{m} min"),
        m => format!("{} h {:02} min", m / 60, m % 60),
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1 << 10 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b if b < 1 << 30 => format!("{:.1} MiB", b as f64 / 1048576.0),
        b => format!("{:.2} GiB", b as f64 / 1073741824.0),
    }
}

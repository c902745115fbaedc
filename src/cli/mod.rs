//! The CLI for admins, scripts and agents. Human output by default, `--json` for
//! scripts. A refused command exits non-zero and says why on stderr.
//!
//! This module opens where commands go (`Target`), dispatches each command to
//! its family's module and prints through `Output`; it holds no command's own
//! logic, and no other module picks the exit code.

mod admin;
mod args;
mod changes;
mod edit;
mod events;
mod files;
mod lease;
mod proposals;
mod requests;
mod review;
mod serve;
mod studio;

use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{Local, TimeDelta};
use serde::Serialize;

use leasedesk::backend::TransferNote;
use leasedesk::bundled::{self, Bundled, Options};
use leasedesk::failpoint::Failpoints;
use leasedesk::model::*;
use leasedesk::{Backend, Error, Remote, Studio, Upload};

pub use args::Args;
use args::{Command, UserCommand};
use proposals::{decide, Decision};

/// Exit code of a refusal because someone else holds the file (EX_TEMPFAIL):
/// an agent plans again or retries later.
const EXIT_BUSY: u8 = 75;

pub async fn run(args: Args) -> ExitCode {
    let json = args.json;
    match execute(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if json {
                eprintln!("{}", error.to_body());
            } else {
                eprintln!("leasedesk: {error}");
                let held: Vec<&str> = match &error {
                    Error::ArtifactBusy {
                        path,
                        lease: Some(_),
                    } => vec![path],
                    Error::SomeBusy(busy) => busy.iter().map(|b| b.path.as_str()).collect(),
                    _ => vec![],
                };
                for path in held {
                    eprintln!("leasedesk: to ask the holder to release it: leasedesk ask {path}");
                }
            }
            match error {
                Error::ArtifactBusy { .. } | Error::SomeBusy(_) => ExitCode::from(EXIT_BUSY),
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
    if let Command::Serve(serve) = &args.command {
        options.max_upload = serve.max_upload;
        options.git_lock_hours = serve.git_lock_hours;
    }
    let out = Output { json: args.json };
    if let Command::Digest { file } = &args.command {
        // Needs no store: do not create a data folder for it.
        return files::digest(file, &out);
    }
    if let Command::LfsUrl { folder } = &args.command {
        // Needs no store nor token: the URL alone.
        return files::lfs_url(args.server.as_deref(), folder, &out);
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
    let as_given = args.as_participant.is_some();
    let now = chrono::Utc::now();

    match args.command {
        Command::User(
            command @ (UserCommand::Invite { .. }
            | UserCommand::Devices { .. }
            | UserCommand::RevokeDevice { .. }
            | UserCommand::Invites
            | UserCommand::RevokeInvite { .. }),
        ) => studio::user(&target, as_given, command, &out).await,
        Command::User(command) => admin::user(&target, command, &out),
        Command::Group(command) => studio::group(&*target.studio(as_given), command, &out).await,
        Command::Allow { who, level, folder } => {
            let studio = target.studio(as_given);
            studio::allow(&*studio, &who, &level, &folder, &out).await
        }
        Command::Permissions => studio::permissions(&*target.studio(as_given), &out).await,
        Command::Status => admin::status(&target, args.data, args.database.as_deref(), &out).await,
        Command::Import {
            repo_path,
            file,
            message,
        } => {
            let upload = described(Upload::file(file), message);
            files::import(store, &repo_path, upload, &out).await
        }
        Command::Ls {
            folder,
            search,
            held,
        } => {
            let query = ArtifactQuery {
                prefix: folder,
                text: search,
                held,
                ..ArtifactQuery::page(files::LS_PAGE)
            };
            files::ls(store, query, now, &out).await
        }
        Command::Folders { folder } => {
            files::folders(store, folder.as_deref().unwrap_or(""), &out).await
        }
        Command::Who { repo_path } => files::who(store, &repo_path, now, &out).await,
        Command::History {
            repo_path,
            before,
            limit,
        } => files::history(store, &repo_path, before, limit, &out).await,
        Command::Get {
            repo_path,
            version,
            output,
        } => files::get(store, &repo_path, version, output, &out).await,
        Command::Versions { repo_path } => files::versions(store, &repo_path, &out).await,
        Command::Checkout {
            repo_paths,
            note,
            ttl,
        } => match &repo_paths[..] {
            [repo_path] => {
                let request = CheckoutRequest {
                    ttl_seconds: ttl,
                    note,
                };
                lease::checkout(store, repo_path, request, now, &out).await
            }
            several => changes::checkout_many(store, several, ttl, note, now, &out).await,
        },
        Command::Extend { repo_path, ttl } => lease::extend(store, &repo_path, ttl, &out).await,
        Command::Checkin { files, message } => match args::checkin_files(&files)? {
            single if single.len() == 1 && !files[0].contains('=') => {
                let (repo_path, file) = single.into_iter().next().expect("one file");
                lease::checkin(store, &repo_path, file, message, &out).await
            }
            several => changes::checkin_change(store, several, message, &out).await,
        },
        Command::Change { change } => changes::show(store, change, &out).await,
        Command::Cancel { repo_path } => lease::cancel(store, &repo_path, &out).await,
        Command::Break { repo_path, reason } => {
            lease::break_lease(store, &repo_path, &reason, &out).await
        }
        Command::Proposals { all } => proposals::list(store, all, &out).await,
        Command::Accept { proposal } => decide(store, proposal, Decision::Accept, &out).await,
        Command::Rebuild { proposal } => decide(store, proposal, Decision::Rebuild, &out).await,
        Command::Reject { proposal } => decide(store, proposal, Decision::Reject, &out).await,
        Command::Ask { repo_path, message } => {
            requests::ask(store, &repo_path, message.as_deref(), &out).await
        }
        Command::Requests { all } => requests::list(store, all, &out).await,
        Command::Reply { request, message } => {
            requests::reply(store, request, &message, &out).await
        }
        Command::Withdraw { request } => requests::withdraw(store, request, &out).await,
        Command::Comment {
            repo_path,
            version,
            proposal,
            at,
            thread,
            message,
        } => match thread {
            Some(number) => review::answer(store, &repo_path, number, &message, &out).await,
            None => {
                let work = review::Work { version, proposal };
                review::open(store, &repo_path, work, at, message, &out).await
            }
        },
        Command::Threads {
            repo_path,
            version,
            proposal,
            open,
        } => {
            let work = review::Work { version, proposal };
            review::threads(store, &repo_path, work, open, &out).await
        }
        Command::Resolve {
            repo_path,
            number,
            reopen,
        } => review::resolve(store, &repo_path, number, !reopen, &out).await,
        Command::Review {
            repo_path,
            version,
            proposal,
            approve,
            changes: _,
            request,
            message,
        } => {
            let work = review::Work { version, proposal };
            // clap lets exactly one of --approve, --changes, --request through.
            match (request.is_empty(), approve) {
                (false, _) => review::request(store, &repo_path, work, request, &out).await,
                (true, true) => {
                    let approved = ReviewDecision::Approved;
                    review::decide(store, &repo_path, work, approved, message, &out).await
                }
                (true, false) => {
                    let changes = ReviewDecision::ChangesRequested;
                    review::decide(store, &repo_path, work, changes, message, &out).await
                }
            }
        }
        Command::Reviews {
            repo_path,
            version,
            proposal,
        } => {
            let work = review::Work { version, proposal };
            review::reviews(store, &repo_path, work, &out).await
        }
        Command::Inbox {
            unread,
            read,
            limit,
        } => review::inbox(store, unread, read, limit, &out).await,
        Command::Rename { old, new } => admin::rename(store, &old, &new, &out).await,
        Command::Digest { .. } | Command::LfsUrl { .. } => {
            unreachable!("handled before the store opens")
        }
        Command::Migrate {
            to_database,
            to_blobs,
        } => admin::migrate(target.local("migrate")?, &to_database, &to_blobs, &out).await,
        Command::Serve(flags) => serve::run(&target, flags).await,
        Command::Events {
            after,
            limit,
            follow,
        } => events::events(&target, after, limit, follow, &out).await,
        Command::Edit {
            repo_path,
            deadline,
            message,
            command,
        } => edit::run(&target, &repo_path, deadline, message, command, &out).await,
    }
}

/// An upload with its description, if one was given, telling on stderr
/// (stdout stays the answer) what it sends over a link and when it
/// reconnects.
fn described(upload: Upload, message: Option<String>) -> Upload {
    let upload = upload.with_notes(tell_on_stderr);
    match message {
        Some(message) => upload.with_message(message),
        None => upload,
    }
}

fn tell_on_stderr(note: TransferNote) {
    match note {
        TransferNote::Sending { bytes, size } if bytes < size => eprintln!(
            "sending {} of {} (the rest is already on the server)",
            self::size(bytes),
            self::size(size)
        ),
        TransferNote::Sending { .. } => {}
        TransferNote::Reconnecting { after, reason } => {
            eprintln!("reconnecting in {:.1} s… ({reason})", after.as_secs_f64())
        }
        TransferNote::Resumed { from } => {
            eprintln!("going on from {} sent", self::size(from))
        }
    }
}

/// Where the commands go: a data folder here, or a studio's server.
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

    /// Who the studio's commands act as: the server's admin, the store's
    /// owner, or on a data folder whoever `--as` names (`as_given`).
    fn studio(&self, as_given: bool) -> Box<dyn Studio> {
        match self {
            Target::Server(remote) => Box::new(remote.clone()),
            Target::Local(store) if as_given => Box::new(store.clone()),
            Target::Local(store) => Box::new(store.as_owner()),
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

/// One line for each of `items`, as a human reads a list.
fn lines_of<T>(items: impl IntoIterator<Item = T>, line: impl FnMut(T) -> String) -> String {
    items.into_iter().map(line).collect::<Vec<_>>().join("\n")
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

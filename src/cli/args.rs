//! The command line's shape: every command and flag (clap), and the parsers of
//! its values (sizes, durations, stored paths). It never opens a store or runs
//! a command: `cli` dispatches what it parsed.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use leasedesk::model::*;
use leasedesk::Error;

/// How `serve` writes its log lines.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LogFormat {
    Text,
    Json,
}

#[derive(Parser, Debug)]
#[command(
    name = "leasedesk",
    version,
    about = "One writer at a time for files that cannot be merged"
)]
pub struct Args {
    /// Data folder of the bundled backend (database and blobs); created if missing.
    #[arg(long, global = true, env = "LEASEDESK_DATA", value_name = "DIR")]
    pub(super) data: Option<PathBuf>,

    /// Keep rows in this PostgreSQL database (postgres://USER@HOST:PORT/DB)
    /// instead of the data folder's SQLite file. TLS is used when the
    /// database offers it (its certificate checked against the system's
    /// roots and LEASEDESK_CA_CERT); add ?sslmode=require to insist on it,
    /// or ?sslmode=disable to never try.
    #[arg(long, global = true, env = "LEASEDESK_DATABASE", value_name = "URL")]
    pub(super) database: Option<String>,

    /// Keep blobs here (s3://BUCKET/PREFIX or file:///PATH) instead of under --data.
    #[arg(long, global = true, env = "LEASEDESK_BLOBS", value_name = "URL")]
    pub(super) blobs: Option<String>,

    /// Act as this participant (user:NAME or agent:NAME); default user:<OS login>.
    #[arg(
        long = "as",
        global = true,
        value_name = "PARTICIPANT",
        conflicts_with = "server"
    )]
    pub(super) as_participant: Option<Participant>,

    /// Use a studio's server instead of a data folder; the token comes from
    /// LEASEDESK_TOKEN (never from an argument, which others can see).
    /// Several URLs, separated by commas: when one does not answer, the next.
    #[arg(
        long,
        global = true,
        env = "LEASEDESK_SERVER",
        value_name = "URL",
        conflicts_with = "data"
    )]
    pub(super) server: Option<String>,

    /// Print JSON for scripts instead of sentences.
    #[arg(long, global = true)]
    pub(super) json: bool,

    #[command(subcommand)]
    pub(super) command: Command,
}

impl Args {
    /// Whether this run is `leasedesk serve`.
    pub fn serves(&self) -> bool {
        matches!(self.command, Command::Serve(_))
    }
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// Manage participants, their invites and devices.
    #[command(subcommand)]
    User(UserCommand),
    /// (admin) Manage groups, which folder permissions can name.
    #[command(subcommand)]
    Group(GroupCommand),
    /// (admin) Let WHO (everyone, group:NAME, NAME, agent:NAME) have LEVEL
    /// (none, read, write) in FOLDER (brand/, or "" for every file),
    /// replacing their rule there.
    Allow {
        who: String,
        level: String,
        folder: String,
    },
    /// (admin) List the folder permissions.
    Permissions,
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
    /// List files with their head version and holder, page by page as the
    /// server sends them.
    Ls {
        /// Only the files under this folder (brand/ or brand).
        #[arg(value_parser = folder)]
        folder: Option<String>,
        /// Only the files whose path contains TEXT, ignoring case.
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
        /// Only the files someone holds now, and the paths someone holds
        /// with no file yet (locked from Git before the file was added).
        #[arg(long)]
        held: bool,
    },
    /// List the folders in FOLDER (default: the top), with how many files
    /// each holds and how many of those are held.
    Folders {
        #[arg(value_parser = folder)]
        folder: Option<String>,
    },
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
    /// Take a file's lease to edit it; of several files, every one or none.
    Checkout {
        #[arg(value_parser = stored_path, required = true, num_args = 1..)]
        repo_paths: Vec<RepoPath>,
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
    /// Upload FILE as your check-in of REPO_PATH and end the check-out;
    /// several files as REPO_PATH=FILE..., checked in as one change.
    Checkin {
        /// REPO_PATH FILE, or REPO_PATH=FILE for each file of a change.
        #[arg(required = true, num_args = 1..)]
        files: Vec<String>,
        /// What this version (or change) is (shown in the history).
        #[arg(short, long)]
        message: Option<String>,
    },
    /// Show a change of several files: each file and what became of it.
    Change { change: ChangeId },
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
    /// Ask whoever holds a file to release it; nothing is released by itself.
    Ask {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        /// Why you ask (shown to the holder).
        #[arg(short, long)]
        message: Option<String>,
    },
    /// Requests to you and from you that still stand (every one with --all).
    Requests {
        #[arg(long)]
        all: bool,
    },
    /// Answer a request for a file you hold.
    Reply {
        request: RequestId,
        #[arg(short, long)]
        message: String,
    },
    /// Take back a request of yours.
    Withdraw { request: RequestId },
    /// Open a review thread on a version of a file (the head unless
    /// --version) or on a proposal, pinned with --at if you like; or, with
    /// --thread, answer in one. `@name` tells someone who may read the file.
    Comment {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        /// The version to comment on (default: the head).
        #[arg(long, conflicts_with_all = ["proposal", "thread"])]
        version: Option<u64>,
        /// The proposal to comment on.
        #[arg(long, value_name = "ID", conflicts_with = "thread")]
        proposal: Option<ProposalId>,
        /// Where in the picture: a point X,Y or a box X,Y,W,H, as fractions
        /// 0..1 of its width and height from its top left.
        #[arg(long, value_name = "X,Y[,W,H]", value_parser = parse_pin, conflicts_with = "thread")]
        at: Option<Pin>,
        /// Answer in the file's thread NUMBER (see `threads`) instead.
        #[arg(long, value_name = "NUMBER")]
        thread: Option<u64>,
        /// What you say (1 to 10,000 characters).
        #[arg(short, long)]
        message: String,
    },
    /// Show a file's review threads by number, with their pins and comments.
    Threads {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        /// Only the threads on this version.
        #[arg(long, conflicts_with = "proposal")]
        version: Option<u64>,
        /// Only the threads on this proposal.
        #[arg(long, value_name = "ID")]
        proposal: Option<ProposalId>,
        /// Only the open threads.
        #[arg(long)]
        open: bool,
    },
    /// Resolve a file's thread NUMBER, or reopen it with --reopen.
    Resolve {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        number: u64,
        #[arg(long)]
        reopen: bool,
    },
    /// Approve a version of a file (the head unless --version) or a
    /// proposal, or request changes; or ask reviewers with --request.
    #[command(group = clap::ArgGroup::new("act").required(true).args(["approve", "changes", "request"]))]
    Review {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        /// The version to review (default: the head).
        #[arg(long, conflicts_with = "proposal")]
        version: Option<u64>,
        /// The proposal to review.
        #[arg(long, value_name = "ID")]
        proposal: Option<ProposalId>,
        #[arg(long)]
        approve: bool,
        /// Request changes.
        #[arg(long)]
        changes: bool,
        /// Ask these participants to review (bob, agent:checker, ...).
        #[arg(long, value_name = "WHO,...", value_delimiter = ',', value_parser = participant)]
        request: Vec<Participant>,
        /// Why (shown with your decision).
        #[arg(short, long, conflicts_with = "request")]
        message: Option<String>,
    },
    /// Show the decisions on a version of a file (the head unless
    /// --version) or on a proposal, its review state and who is awaited.
    Reviews {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        #[arg(long, conflicts_with = "proposal")]
        version: Option<u64>,
        #[arg(long, value_name = "ID")]
        proposal: Option<ProposalId>,
    },
    /// Show what needs you, newest first: mentions, review requests, and
    /// threads, comments and decisions on your work.
    Inbox {
        /// Only what you have not marked read.
        #[arg(long)]
        unread: bool,
        /// Then mark read everything up to the newest item shown (`unread`
        /// in the JSON is then the count after marking).
        #[arg(long)]
        read: bool,
        /// Show at most N items (1 to 200).
        #[arg(long, default_value_t = leasedesk::model::DEFAULT_INBOX_PAGE,
              value_parser = clap::value_parser!(u32).range(1..=leasedesk::model::MAX_INBOX_PAGE as i64))]
        limit: u32,
    },
    /// End someone's lease (admins only); their later check-in becomes a proposal.
    Break {
        #[arg(value_parser = stored_path)]
        repo_path: RepoPath,
        #[arg(long)]
        reason: String,
    },
    /// Copy this data folder (every user, version, check-out, proposal and
    /// event) into a studio's store: an empty PostgreSQL database and a blob store.
    Migrate {
        /// The PostgreSQL database to fill (postgres://USER@HOST:PORT/DB); it must be empty.
        #[arg(long, value_name = "URL")]
        to_database: String,
        /// Where the blobs go: s3://BUCKET/PREFIX or file:///PATH.
        #[arg(long, value_name = "URL")]
        to_blobs: String,
    },
    /// Serve the HTTP API on ADDR (e.g. 127.0.0.1:7070; port 0 picks a free one).
    Serve(ServeArgs),
    /// Print a local file's digest, as a check-in would compute it.
    Digest { file: PathBuf },
    /// Print the `lfs.url` of top-level folder FOLDER for a Git
    /// repository's `.lfsconfig`: the server's URL (`--server`, or
    /// LEASEDESK_PUBLIC_URL) and /lfs/FOLDER.
    LfsUrl { folder: String },
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

// `serve`'s flags (no doc comment here: the variant's is its help).
#[derive(clap::Args, Debug)]
pub(super) struct ServeArgs {
    #[arg(long, default_value = "127.0.0.1:7070")]
    pub(super) listen: std::net::SocketAddr,
    /// Largest upload accepted: a number of bytes, or 500M, 2G, 64G.
    #[arg(long, default_value = "64G", value_parser = parse_size)]
    pub(super) max_upload: u64,
    /// How long a lock taken through Git LFS (`git lfs lock`) holds its
    /// file, in hours: 1 to 168 (a week).
    #[arg(long, default_value_t = leasedesk::model::DEFAULT_GIT_LOCK_HOURS,
          value_parser = clap::value_parser!(u64).range(1..=168))]
    pub(super) git_lock_hours: u64,
    /// Most connections at once; past it a client is answered 503
    /// (default: half the open-file limit, at most 16384).
    #[arg(long)]
    pub(super) max_connections: Option<usize>,
    /// Longest wait for a request's headers, from its first byte (or
    /// from the connection's start).
    #[arg(long, default_value = "10s", value_parser = parse_ttl)]
    pub(super) header_timeout: u64,
    /// Longest wait for the next request on a kept-alive connection.
    #[arg(long, default_value = "60s", value_parser = parse_ttl)]
    pub(super) idle_timeout: u64,
    /// Longest wait for the next byte of an upload, or for a client to
    /// take the next byte of its answer; then the connection is dropped.
    #[arg(long, default_value = "60s", value_parser = parse_ttl)]
    pub(super) stall_timeout: u64,
    /// How long requests in flight (uploads) may go on after SIGTERM.
    #[arg(long, default_value = "30s", value_parser = parse_ttl)]
    pub(super) shutdown_grace: u64,
    /// Serve Prometheus metrics (GET /metrics) on this address, apart
    /// from the API's (port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub(super) metrics_listen: Option<std::net::SocketAddr>,
    /// How log lines on stderr look: `text` for people, `json` (one
    /// object a line) for a log collector.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub(super) log_format: LogFormat,
    /// Serve HTTPS with this PEM certificate (chain); SIGHUP reads it
    /// and the key again.
    #[arg(long, requires = "tls_key")]
    pub(super) tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub(super) tls_key: Option<PathBuf>,
    /// Allow plain HTTP on an address other than loopback (tokens then
    /// cross the network in clear).
    #[arg(long, conflicts_with = "tls_cert")]
    pub(super) insecure_http: bool,
}

#[derive(Subcommand, Debug)]
pub(super) enum UserCommand {
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
    /// (admin) Make a one-time invite for NAME (someone new, or a device
    /// more for a participant); prints the link to send when the server's
    /// URL is known (`--server`, or LEASEDESK_PUBLIC_URL), else its code.
    Invite {
        name: String,
        #[arg(long, conflicts_with = "admin")]
        agent: bool,
        #[arg(long)]
        admin: bool,
        /// When the code lapses: 30m, 8h, 7d (default 7d, at most 30d).
        #[arg(long, value_parser = parse_ttl)]
        expires: Option<u64>,
    },
    /// (admin) List participants with their devices and when each was last
    /// used; of one participant (NAME) if given.
    Devices { name: Option<String> },
    /// (admin) Revoke one device of a participant: its token stops working.
    RevokeDevice { name: String, id: String },
    /// (admin) List the invites not yet used nor lapsed (never their codes).
    Invites,
    /// (admin) Revoke an invite not yet used (its id, from `user invites`):
    /// its code stops working.
    RevokeInvite { id: String },
}

#[derive(Subcommand, Debug)]
pub(super) enum GroupCommand {
    /// (admin) Make or replace group NAME with these members (NAME, or agent:NAME).
    Set { name: String, members: Vec<String> },
    /// (admin) Remove group NAME (no rule may name it).
    Rm { name: String },
    /// (admin) List the groups.
    List,
}

/// A path to look up, as stored: it may be one stored before the path rules
/// (the strict parser is for paths being made: import, a rename's target).
/// `checkin`'s files: `PATH FILE` (one file, as before), or `PATH=FILE` each.
pub(super) fn checkin_files(args: &[String]) -> Result<Vec<(RepoPath, PathBuf)>, Error> {
    if let [path, file] = args {
        if !path.contains('=') {
            return Ok(vec![(stored_path(path)?, PathBuf::from(file))]);
        }
    }
    args.iter()
        .map(|arg| match arg.split_once('=') {
            Some((path, file)) if !file.is_empty() => Ok((stored_path(path)?, PathBuf::from(file))),
            _ => Err(Error::Invalid(format!(
                "{arg:?} is not PATH=FILE: name each file of a change as its path, '=', and the file to check in"
            ))),
        })
        .collect()
}

pub(super) fn stored_path(text: &str) -> Result<RepoPath, Error> {
    RepoPath::stored(text).map_err(Error::from)
}

/// `--at`: a point `X,Y` or a box `X,Y,W,H`, each a fraction 0..1 of the
/// picture, within it.
fn parse_pin(text: &str) -> Result<Pin, String> {
    let numbers = text
        .split(',')
        .map(|n| n.trim().parse::<f64>())
        .collect::<Result<Vec<f64>, _>>()
        .map_err(|_| format!("{text:?} is not X,Y or X,Y,W,H (numbers such as 0.25,0.5)"))?;
    let pin = match numbers[..] {
        [x, y] => Pin {
            x,
            y,
            w: None,
            h: None,
        },
        [x, y, w, h] => Pin {
            x,
            y,
            w: Some(w),
            h: Some(h),
        },
        _ => {
            return Err(format!(
                "{text:?} is not X,Y (a point) or X,Y,W,H (a box): give 2 or 4 numbers"
            ))
        }
    };
    pin.check().map_err(|e| e.to_string())?;
    Ok(pin)
}

/// A participant to ask: `bob` means user:bob.
fn participant(text: &str) -> Result<Participant, String> {
    super::admin::named(text.trim()).map_err(|e| e.to_string())
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

/// A folder as the API names it (`brand/`), given with or without its
/// final `/`.
fn folder(s: &str) -> Result<String, String> {
    let folder = match s.is_empty() || s.ends_with('/') {
        true => s.to_owned(),
        false => format!("{s}/"),
    };
    check_folder(&folder).map_err(|e| e.to_string())?;
    Ok(folder)
}

//! The commands about files and their content: import, ls, who, versions,
//! history, get, digest. None of them takes, changes or ends a lease.

use std::path::{Path, PathBuf};

use leasedesk::model::*;
use leasedesk::{Backend, Error, Upload};

use super::{lines_of, local_time, say, size, time_left, Output};

/// `import`: a new file at `path`, as version 1, from `upload` (made by
/// `described`).
pub(super) async fn import(
    store: &dyn Backend,
    path: &RepoPath,
    upload: Upload,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.import(path, upload).await?;
    out.print(&artifact, || {
        format!(
            "imported {} as version 1 ({})",
            artifact.path,
            size(artifact.head.size)
        )
    });
    Ok(())
}

/// How many files `ls` asks for at a time.
pub(super) const LS_PAGE: u32 = 1000;

/// `ls`: the files `query` finds with their heads and holders, printed a
/// page at a time as they come (with `--json`, one array, an item a line);
/// with `--held`, the paths held with no file yet among them ("no version
/// yet"; a `{"path", "lease"}` item).
pub(super) async fn ls(
    store: &dyn Backend,
    mut query: ArtifactQuery,
    now: Timestamp,
    out: &Output,
) -> Result<(), Error> {
    let mut listed = 0u64;
    if out.json {
        say("[");
    }
    loop {
        let page = store.artifact_page(query.clone()).await?;
        // The files and the paths held with no file, by path (a stable
        // sort of the two sorted lists).
        let mut items: Vec<(&str, String, String)> = page
            .artifacts
            .iter()
            .map(|a| {
                let holder = a
                    .lease
                    .as_ref()
                    .map_or_else(|| "free".to_owned(), |l| holder(l, now));
                let line = format!("{}  v{}  {}", a.path, a.head.version, holder);
                (a.path.as_str(), line, json_item(a))
            })
            .chain(page.holds.iter().map(|h| {
                let line = format!("{}  no version yet  {}", h.path, holder(&h.lease, now));
                (h.path.as_str(), line, json_item(h))
            }))
            .collect();
        items.sort_by(|a, b| a.0.cmp(b.0));
        for (_, line, item) in items {
            if out.json {
                say(&format!("{}{item}", if listed > 0 { "," } else { "" }));
            } else {
                say(&line);
            }
            listed += 1;
        }
        match page.next {
            Some(next) => query.after = Some(next),
            None => break,
        }
    }
    if out.json {
        say("]");
    } else if listed == 0 {
        let everything = query.prefix.is_none() && query.text.is_none() && !query.held;
        say(match everything {
            true => "no files yet: leasedesk import REPO_PATH FILE",
            false => "no files found",
        });
    }
    Ok(())
}

/// Who holds a file (or a path with no file) and for how long:
/// "user:alice (2 h 05 min left)", "user:sam (locked from Git, 167 h 59
/// min left)".
fn holder(lease: &Lease, now: Timestamp) -> String {
    let left = time_left(lease.expires_at - now);
    match (lease.kind, lease.note.as_deref()) {
        (LeaseKind::Checkout, Some(GIT_LOCK_NOTE)) => {
            format!("{} (locked from Git, {left} left)", lease.participant)
        }
        _ => format!("{} ({left} left)", lease.participant),
    }
}

/// An item of `ls --json`'s array: an artifact, or a path held with no
/// file (`{"path", "lease"}`).
fn json_item(item: &impl serde::Serialize) -> String {
    serde_json::to_string(item).expect("a listed item serializes")
}

/// `folders`: the folders in `folder`, with their files and how many are held.
pub(super) async fn folders(store: &dyn Backend, folder: &str, out: &Output) -> Result<(), Error> {
    let list = store.folders(folder).await?;
    out.print(&list, || {
        let mut rows: Vec<String> = list
            .folders
            .iter()
            .map(|f| {
                let files = plural(f.files, "file");
                match f.held {
                    0 => format!("{}  {files}", f.path),
                    held => format!("{}  {files}, {held} held", f.path),
                }
            })
            .collect();
        if list.files > 0 || rows.is_empty() {
            let here = if folder.is_empty() {
                "at the top"
            } else {
                "directly in it"
            };
            rows.push(format!("{} {here}", plural(list.files, "file")));
        }
        rows.join("\n")
    });
    Ok(())
}

fn plural(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// `who`: the file's lease, or whose version it is when it is free.
pub(super) async fn who(
    store: &dyn Backend,
    path: &RepoPath,
    now: Timestamp,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
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
    Ok(())
}

/// `history`: a page of the file's events in words, newest first.
pub(super) async fn history(
    store: &dyn Backend,
    path: &RepoPath,
    before: Option<u64>,
    limit: u32,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
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
                "older: leasedesk history {path} --before {}",
                page.next
            ));
        }
        lines.join("\n")
    });
    Ok(())
}

/// `get`: a version downloaded to `output` (or its name, here), never over an
/// existing file.
pub(super) async fn get(
    store: &dyn Backend,
    path: &RepoPath,
    version: Option<u64>,
    output: Option<PathBuf>,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let dest = match output {
        Some(path) => path,
        None => {
            leasedesk::workspace::join_under(&std::env::current_dir()?, artifact.path.file_name())?
        }
    };
    if dest.exists() {
        return Err(Error::Exists(format!(
            "{} exists: name another file with -o (nothing was written)",
            dest.display()
        )));
    }
    let head = leasedesk::backend::download(store, artifact.id, version, &dest, None).await?;
    out.print(&head, || {
        format!(
            "saved version {} of {} to {} ({})",
            head.version,
            artifact.path,
            dest.display(),
            size(head.size)
        )
    });
    Ok(())
}

/// `versions`: the file's versions, newest first.
pub(super) async fn versions(
    store: &dyn Backend,
    path: &RepoPath,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let versions = store.versions(artifact.id).await?;
    out.print(&versions, || {
        lines_of(&versions, |h| {
            format!(
                "v{}  {}  {}  {}  {}",
                h.version,
                local_time(h.committed_at),
                h.author,
                size(h.size),
                h.digest
            )
        })
    });
    Ok(())
}

/// `digest`: a local file's digest. Needs no store, so the caller opens none
/// (no data folder is made for it). A one-shot command may map the file (see
/// `digest_file_mapped`).
pub(super) fn digest(file: &Path, out: &Output) -> Result<(), Error> {
    let (digest, bytes) = leasedesk::blobs::digest_file_mapped(file)?;
    out.print(
        &serde_json::json!({ "digest": digest, "size": bytes }),
        || format!("{digest}  {}", file.display()),
    );
    Ok(())
}

/// `lfs-url FOLDER`: the server's URL (the first of `--server`'s, or
/// LEASEDESK_PUBLIC_URL) and `/lfs/FOLDER`, for `.lfsconfig`.
pub(super) fn lfs_url(server: Option<&str>, folder: &str, out: &Output) -> Result<(), Error> {
    let folder = folder.trim_matches('/');
    if folder.contains('/') || format!("{folder}/x").parse::<RepoPath>().is_err() {
        return Err(Error::Invalid(format!(
            "{folder:?} is not a top-level folder: Git LFS locks and keeps files per top-level folder"
        )));
    }
    let server = server
        .and_then(|list| list.split(',').next())
        .map(str::to_owned)
        .or_else(|| std::env::var("LEASEDESK_PUBLIC_URL").ok())
        .map(|url| url.trim().trim_end_matches('/').to_owned())
        .filter(|url| !url.is_empty())
        .ok_or_else(|| {
            Error::Invalid("say which server: give --server URL or set LEASEDESK_PUBLIC_URL".into())
        })?;
    let encoded: String = folder
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect();
    let url = format!("{server}/lfs/{encoded}");
    out.print(&serde_json::json!({ "lfs_url": url }), || url.clone());
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

//! Several files at once: `checkout` of several paths (all or none), and
//! `checkin PATH=FILE...`, which stages each file and then checks them in
//! as one change; `change ID` shows one. A killed `checkin` leaves the
//! check-outs open and nothing committed: running it again finishes it.

use std::path::PathBuf;

use leasedesk::model::*;
use leasedesk::{Backend, Error, Upload};

use super::lease::my_open_checkout;
use super::{described, local_time, time_left, Output};

/// `checkout A B C`: every file's lease, or none.
pub(super) async fn checkout_many(
    store: &dyn Backend,
    paths: &[RepoPath],
    ttl_seconds: Option<u64>,
    note: Option<String>,
    now: Timestamp,
    out: &Output,
) -> Result<(), Error> {
    let mut artifact_ids = Vec::with_capacity(paths.len());
    for path in paths {
        artifact_ids.push(store.artifact_by_path(path).await?.id);
    }
    let request = CheckoutsRequest {
        artifact_ids,
        ttl_seconds,
        note,
    };
    let checkouts = store.check_out_many(request).await?;
    out.print(&checkouts, || {
        let until = checkouts.first().map(|c| c.expires_at).unwrap_or(now);
        let mut lines = vec![format!(
            "checked out {} files until {} ({})",
            checkouts.len(),
            local_time(until),
            time_left(until - now)
        )];
        lines.extend(
            checkouts
                .iter()
                .map(|c| format!("  {} at version {}", c.path, c.version)),
        );
        lines.join("\n")
    });
    Ok(())
}

/// `checkin A=FILE B=FILE -m TEXT`: each file staged for its open
/// check-out, then all checked in as one change.
pub(super) async fn checkin_change(
    store: &dyn Backend,
    files: Vec<(RepoPath, PathBuf)>,
    message: Option<String>,
    out: &Output,
) -> Result<(), Error> {
    let mine = store.checkouts(false).await?;
    let mut checkouts = Vec::with_capacity(files.len());
    let mut to_stage = Vec::new();
    for (path, file) in files {
        // An open check-out of the path; else one a change already closed (a retry).
        let newest = mine.iter().find(|c| c.path == path);
        match newest {
            Some(open) if open.state == CheckoutState::Open => {
                checkouts.push(open.id);
                to_stage.push((open.id, path, file));
            }
            Some(closed) if closed.change_id.is_some() => checkouts.push(closed.id),
            _ => {
                return Err(my_open_checkout(store, &path)
                    .await
                    .err()
                    .unwrap_or_else(|| {
                        Error::NotFound(format!("you have no open check-out of {path}"))
                    }))
            }
        }
    }
    let count = to_stage.len();
    for (n, (id, path, file)) in to_stage.into_iter().enumerate() {
        store
            .stage(id, described(Upload::file(&file), None))
            .await?;
        eprintln!("leasedesk: staged {} of {count}: {path}", n + 1);
    }
    let change = store
        .commit_change(ChangeRequest { checkouts, message })
        .await?;
    out.print(&change, || describe(&change));
    Ok(())
}

/// `change ID`.
pub(super) async fn show(store: &dyn Backend, id: ChangeId, out: &Output) -> Result<(), Error> {
    let change = store.change(id).await?;
    out.print(&change, || describe(&change));
    Ok(())
}

/// A change as lines: what it did, then each file.
fn describe(change: &Change) -> String {
    let n = change.files.len();
    let mut lines = vec![match change.outcome {
        ChangeOutcome::Committed => format!("checked in a change of {n} files ({})", change.id),
        ChangeOutcome::Proposal => format!(
            "some files changed since your check-out: the change of {n} files is kept as proposals ({})",
            change.id
        ),
    }];
    for file in &change.files {
        lines.push(match &file.result {
            CheckinResult::Committed { version, .. } => {
                format!("  {}: version {version}", file.path)
            }
            CheckinResult::Unchanged { version, .. } => {
                format!("  {}: unchanged (version {version})", file.path)
            }
            CheckinResult::Proposal { proposal } => {
                format!("  {}: proposal {}", file.path, proposal.id)
            }
        });
    }
    lines.join("\n")
}

//! The lease commands of a person's check-out: checkout, extend, checkin,
//! cancel, and an admin's break. They act only on the caller's own open
//! check-out of a path (break excepted), never on one found by other means.

use std::path::PathBuf;

use leasedesk::model::*;
use leasedesk::{Backend, Error, Upload};

use super::{described, local_time, time_left, Output};

/// `checkout`: the file's lease, for `request.ttl_seconds` (or the default).
pub(super) async fn checkout(
    store: &dyn Backend,
    path: &RepoPath,
    request: CheckoutRequest,
    now: Timestamp,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let checkout = store.check_out(artifact.id, request).await?;
    out.print(&checkout, || {
        format!(
            "checked out {} at version {} until {} ({})",
            checkout.path,
            checkout.version,
            local_time(checkout.expires_at),
            time_left(checkout.expires_at - now)
        )
    });
    Ok(())
}

/// `extend`: your lease taken again for longer.
pub(super) async fn extend(
    store: &dyn Backend,
    path: &RepoPath,
    ttl: Option<u64>,
    out: &Output,
) -> Result<(), Error> {
    let open = my_open_checkout(store, path).await?;
    let checkout = store.extend(open.id, ttl).await?;
    out.print(&checkout, || {
        format!(
            "extended {} until {}",
            checkout.path,
            local_time(checkout.expires_at)
        )
    });
    Ok(())
}

/// `checkin`: `file` as your check-in; a retry after a lost answer gets the
/// first answer again.
pub(super) async fn checkin(
    store: &dyn Backend,
    path: &RepoPath,
    file: PathBuf,
    message: Option<String>,
    out: &Output,
) -> Result<(), Error> {
    let checkout = match my_open_checkout(store, path).await {
        Ok(open) => {
            store
                .check_in(open.id, described(Upload::file(&file), message))
                .await?
        }
        Err(no_open) => retry_checkin(store, path, &file, message)
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
    Ok(())
}

/// `cancel`: your check-out ended with nothing checked in.
pub(super) async fn cancel(
    store: &dyn Backend,
    path: &RepoPath,
    out: &Output,
) -> Result<(), Error> {
    let open = my_open_checkout(store, path).await?;
    let checkout = store.cancel(open.id).await?;
    out.print(&checkout, || {
        format!("cancelled your check-out of {}", checkout.path)
    });
    Ok(())
}

/// `break` (admins only): someone's lease ended; their later check-in becomes
/// a proposal.
pub(super) async fn break_lease(
    store: &dyn Backend,
    path: &RepoPath,
    reason: &str,
    out: &Output,
) -> Result<(), Error> {
    let id = store.artifact_by_path(path).await?.id;
    let artifact = store.break_lease(id, reason).await?;
    out.print(&artifact, || format!("{} is free", artifact.path));
    Ok(())
}

/// The caller's newest open check-out of `path`.
pub(super) async fn my_open_checkout(
    store: &dyn Backend,
    path: &RepoPath,
) -> Result<Checkout, Error> {
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

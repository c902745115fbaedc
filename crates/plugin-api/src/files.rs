//! A local file as a plugin sees it (`FileState`), and the operations on
//! it: the desk's own, so the rules, the workspace's read-only copies and
//! the check-in's outcome are exactly the window's.

use std::path::{Path, PathBuf};

use leasedesk_backend::Watch;
use leasedesk_desk::workspace::LocalState;
use leasedesk_desk::{Desk, FileRow};
use leasedesk_model::model::{CheckinResult, CheckoutRequest, RepoPath, Timestamp};
use leasedesk_model::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::Acted;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Not a file of the workspace.
    Outside,
    Free,
    /// Checked out by you.
    Yours,
    /// Checked out by someone else.
    Held,
}

/// `docs/API.md`'s FileState.
#[derive(Clone, Debug, Serialize)]
pub struct FileState {
    pub path: PathBuf,
    pub repo_path: Option<RepoPath>,
    pub state: State,
    pub version: Option<u64>,
    /// Who holds it: you (your name) or someone else.
    pub holder: Option<String>,
    pub note: Option<String>,
    pub expires_at: Option<Timestamp>,
    /// The copy here has changes not checked in.
    pub modified: bool,
    pub read_only: bool,
    /// A check-in's outcome.
    pub result: Option<CheckinResult>,
}

impl FileState {
    fn outside(path: PathBuf) -> Self {
        let read_only = is_read_only(&path);
        Self {
            path,
            repo_path: None,
            state: State::Outside,
            version: None,
            holder: None,
            note: None,
            expires_at: None,
            modified: false,
            read_only,
            result: None,
        }
    }

    fn of_row(row: &FileRow, path: PathBuf, me: &str) -> Self {
        let lease = row.artifact.lease.as_ref();
        let (state, holder, note, expires_at) = match (&row.mine, lease) {
            (Some(mine), _) => (
                State::Yours,
                Some(me.to_owned()),
                mine.note.clone(),
                Some(mine.expires_at),
            ),
            (None, Some(lease)) => (
                State::Held,
                Some(lease.participant.name().to_owned()),
                lease.note.clone(),
                Some(lease.expires_at),
            ),
            (None, None) => (State::Free, None, None, None),
        };
        let read_only = is_read_only(&path);
        Self {
            path,
            repo_path: Some(row.artifact.path.clone()),
            state,
            version: Some(row.artifact.head.version),
            holder,
            note,
            expires_at,
            modified: row.local == LocalState::Modified,
            read_only,
            result: None,
        }
    }
}

fn is_read_only(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly())
}

/// The file at `local` (a full path) as it is now.
pub async fn state_at(desk: &Desk, local: &Path) -> Result<FileState> {
    match desk.workspace().repo_path(local) {
        Some(repo_path) => state_of(desk, &repo_path).await,
        None => Ok(FileState::outside(local.to_owned())),
    }
}

/// The workspace's file `repo_path` as it is now; one the studio does not
/// have (a file not added) is outside, as a file in another folder is.
pub async fn state_of(desk: &Desk, repo_path: &RepoPath) -> Result<FileState> {
    let local = desk.workspace().local_path(repo_path)?;
    let row = match desk.row_at(repo_path).await {
        Ok(row) => row,
        Err(Error::NotFound(_)) => return Ok(FileState::outside(local)),
        Err(e) => return Err(e),
    };
    let me = desk.me().await?;
    Ok(FileState::of_row(&row, local, me.name()))
}

#[derive(Deserialize)]
pub struct CheckOut {
    pub path: String,
    pub note: Option<String>,
    pub hours: Option<f64>,
}

#[derive(Deserialize)]
pub struct CheckIn {
    pub path: String,
    pub description: Option<String>,
}

#[derive(Deserialize)]
pub struct OnPath {
    pub path: String,
}

#[derive(Deserialize)]
pub struct Ask {
    pub path: String,
    pub message: Option<String>,
}

#[derive(Deserialize)]
pub struct Get {
    pub repo_path: String,
}

/// The row of a workspace file a plugin acts on, refused plainly when the
/// path is not one.
async fn row_for(desk: &Desk, path: &str) -> Result<(FileRow, PathBuf)> {
    let local = crate::guard::local_path(path)?;
    let not_ours = || {
        Error::NotFound(format!(
            "{} is not a file of your Leasedesk workspace ({})",
            local.display(),
            desk.workspace().root().display()
        ))
    };
    let repo_path = desk.workspace().repo_path(&local).ok_or_else(not_ours)?;
    match desk.row_at(&repo_path).await {
        Ok(row) => Ok((row, local)),
        Err(Error::NotFound(_)) => Err(not_ours()),
        Err(e) => Err(e),
    }
}

fn yours(row: &FileRow) -> Result<leasedesk_model::model::CheckoutId> {
    row.mine.as_ref().map(|c| c.id).ok_or_else(|| {
        Error::NotHeld(format!(
            "you have not checked out {}",
            row.artifact.path.file_name()
        ))
    })
}

/// Longest lease a plugin may ask for; the backend's own limit still holds.
const MAX_HOURS: f64 = 24.0 * 366.0;

pub async fn check_out(desk: Desk, asked: CheckOut) -> Result<(FileState, Acted)> {
    let ttl_seconds = match asked.hours {
        None => None,
        Some(hours) if hours.is_finite() && hours > 0.0 && hours <= MAX_HOURS => {
            Some((hours * 3600.0).round().max(1.0) as u64)
        }
        Some(_) => {
            return Err(Error::Invalid(
                "hours must be a number above 0 and at most a year".into(),
            ))
        }
    };
    let (row, _) = row_for(&desk, &asked.path).await?;
    let request = CheckoutRequest {
        ttl_seconds,
        note: asked.note.filter(|n| !n.trim().is_empty()),
    };
    let done = desk.check_out(row.artifact.id, request, None).await?;
    let state = state_of(&desk, &row.artifact.path).await?;
    Ok((state, Acted::CheckedOut(done)))
}

pub async fn check_in(desk: Desk, asked: CheckIn) -> Result<(FileState, Acted)> {
    let (row, _) = row_for(&desk, &asked.path).await?;
    let checkout = yours(&row)?;
    // No description: the one the window would have prefilled.
    let message = match asked.description.filter(|d| !d.trim().is_empty()) {
        Some(description) => Some(description),
        None => desk.checkin_draft(checkout).await.ok(),
    };
    let closed = desk.check_in(checkout, message, Watch::default()).await?;
    let mut state = state_of(&desk, &row.artifact.path).await?;
    state.result = closed.checkout.result.clone();
    Ok((state, Acted::CheckedIn(closed)))
}

pub async fn extend(desk: Desk, asked: OnPath) -> Result<(FileState, Acted)> {
    let (row, _) = row_for(&desk, &asked.path).await?;
    let extended = desk.extend(yours(&row)?, None).await?;
    let state = state_of(&desk, &row.artifact.path).await?;
    Ok((state, Acted::Extended(extended)))
}

pub async fn cancel(desk: Desk, asked: OnPath) -> Result<(FileState, Acted)> {
    let (row, _) = row_for(&desk, &asked.path).await?;
    let closed = desk.cancel(yours(&row)?).await?;
    let state = state_of(&desk, &row.artifact.path).await?;
    Ok((state, Acted::Cancelled(closed)))
}

pub async fn ask(desk: Desk, asked: Ask) -> Result<(FileState, Acted)> {
    let (row, _) = row_for(&desk, &asked.path).await?;
    desk.ask(row.artifact.id, asked.message.as_deref()).await?;
    let state = state_of(&desk, &row.artifact.path).await?;
    Ok((state, Acted::Asked(row.artifact.id)))
}

pub async fn get(desk: Desk, asked: Get) -> Result<(FileState, Acted)> {
    let repo_path: RepoPath = asked.repo_path.parse()?;
    let artifact = desk.backend().artifact_by_path(&repo_path).await?;
    desk.update(artifact.id).await?;
    let state = state_of(&desk, &repo_path).await?;
    Ok((state, Acted::Got(repo_path)))
}

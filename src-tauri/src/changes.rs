//! The window's commands for several files at once: checked out together
//! (every one or none), checked in as one change with one progress for the
//! set (cancellable until the commit begins), and a change read back for
//! the history and the proposals.

use std::sync::atomic::Ordering;

use leasedesk_backend::Cancel;
use leasedesk_desk::workspace::{CheckedOut, Closed};
use leasedesk_desk::Desk;
use leasedesk_model::model::*;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

use crate::commands::{desk_commands, progress, told, Moved};
use crate::error::{Code, UiError, UiResult};
use crate::{tray_refresh, AppState};
use leasedesk_backend::Watch;

/// A change checked in: what the server made of it, and what each file's
/// copy became here (a backup where a proposal's head took its place).
#[derive(Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ChangeDone {
    pub change: Change,
    pub closed: Vec<Closed>,
}

#[tauri::command]
pub async fn check_out_files(
    app: AppHandle,
    state: State<'_, AppState>,
    artifacts: Vec<ArtifactId>,
    note: Option<String>,
    ttl_seconds: Option<u64>,
) -> UiResult<Vec<CheckedOut>> {
    let request = CheckoutsRequest {
        artifact_ids: artifacts.clone(),
        ttl_seconds,
        note: note.filter(|n| !n.trim().is_empty()),
    };
    let checked_out = async |desk: &Desk| {
        let done = desk.check_out_many(request).await?;
        for artifact in &artifacts {
            state.waiting().remove(artifact);
        }
        Ok(done)
    };
    state.changing_leases(&app, checked_out).await
}

/// Checks in the copies of `checkouts` as one change described by
/// `message`. `upload` names it for `cancel_upload`, which stops it until
/// the commit begins.
#[tauri::command]
pub async fn check_in_files(
    app: AppHandle,
    state: State<'_, AppState>,
    checkouts: Vec<CheckoutId>,
    message: Option<String>,
    upload: String,
    on_progress: Channel<Moved>,
) -> UiResult<ChangeDone> {
    let desk = state.desk().await?;
    let mut open = Vec::with_capacity(checkouts.len());
    for id in &checkouts {
        open.push(desk.backend().checkout(*id).await.map_err(told(&desk))?);
    }
    // One bar for the set: measured against the copies that go up.
    let total = open
        .iter()
        .filter_map(|c| desk.workspace().local_path(&c.path).ok())
        .filter_map(|local| std::fs::metadata(local).ok())
        .map(|m| m.len())
        .sum();
    let cancel = Cancel::default();
    state.uploads().insert(upload.clone(), cancel.clone());
    let outcome = desk
        .check_in_change(
            &open,
            message,
            Watch {
                progress: Some(progress(on_progress, Some(total))),
                notes: None,
                cancel: Some(cancel.clone()),
            },
        )
        .await
        .map(|(change, closed)| ChangeDone { change, closed })
        .map_err(|e| match cancel.load(Ordering::Relaxed) {
            true => UiError::new(
                Code::Cancelled,
                "The check-in was cancelled: nothing was saved and every file is still checked out.",
            ),
            false => told(&desk)(e),
        });
    state.uploads().remove(&upload);
    tray_refresh(&app).await;
    outcome
}

desk_commands! {
    fn change(id: ChangeId) -> Change = on_desk(|desk| desk.backend().change(id).await);
}

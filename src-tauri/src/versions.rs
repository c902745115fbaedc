//! A file's past as the window shows it: its history page by page, a
//! version as a read-only copy or put back into your copy, a proposal beside
//! the head, and the check-in description a restore prefills. Thin: each
//! command is the desk's call.

use std::path::PathBuf;

use leasedesk_desk::{Desk, HistoryPage, Restored};
use leasedesk_model::model::*;
use tauri::{AppHandle, State};

use crate::error::UiResult;
use crate::AppState;

/// A proposal's file beside the head's, to open both; its path, for the
/// window to name it and offer to show it in the file manager.
#[tauri::command]
pub async fn compare_proposal(
    state: State<'_, AppState>,
    artifact: ArtifactId,
    proposal: ProposalId,
) -> UiResult<PathBuf> {
    state
        .on_desk(async |desk| desk.proposal_file(artifact, proposal).await)
        .await
}

/// A file's history, newest first: `limit` (default 100) of its events
/// before `before` (the newest when none); ask again with `next_before`.
#[tauri::command]
pub async fn history(
    state: State<'_, AppState>,
    artifact: ArtifactId,
    before: Option<u64>,
    limit: Option<u32>,
) -> UiResult<HistoryPage> {
    let limit = limit.unwrap_or(100);
    state
        .on_desk(async |desk| desk.history(artifact, before, limit).await)
        .await
}

/// Version `version` as a read-only copy beside the file (`hero (v3).psd`);
/// its path, for the window to show or reveal (`reveal`).
#[tauri::command]
pub async fn open_copy(
    state: State<'_, AppState>,
    artifact: ArtifactId,
    version: u64,
) -> UiResult<PathBuf> {
    state
        .on_desk(async |desk| desk.open_copy(artifact, version).await)
        .await
}

/// Puts version `version` into your copy of a file you hold; your changes go
/// to a backup beside it, and the next check-in is prefilled "Restored version N".
#[tauri::command]
pub async fn restore_version(
    app: AppHandle,
    state: State<'_, AppState>,
    artifact: ArtifactId,
    version: u64,
) -> UiResult<Restored> {
    let restored = async |desk: &Desk| desk.restore(artifact, version).await;
    state.changing_leases(&app, restored).await
}

/// The check-in description to prefill: a restore's, else the check-out's note.
#[tauri::command]
pub async fn checkin_draft(state: State<'_, AppState>, checkout: CheckoutId) -> UiResult<String> {
    Ok(state.desk().await?.checkin_draft(checkout).await?)
}

//! The window's commands for its list, a screen at a time: a folder's files
//! by place and the folder tree, from the mirror; a search and the files
//! others hold, from the server (offline, the mirror).

use leasedesk_desk::workspace::ListOrder;
use leasedesk_desk::{FolderRows, FoundRows, ListChanges};
use leasedesk_model::model::{FolderCount, FolderList};
use tauri::State;

use crate::error::UiResult;
use crate::AppState;

/// The files under `folder` (at any depth) from place `offset`, `limit` of
/// them, in `order` (by path when not given).
#[tauri::command]
pub async fn folder_rows(
    state: State<'_, AppState>,
    folder: String,
    offset: u64,
    limit: u32,
    order: Option<ListOrder>,
) -> UiResult<FolderRows> {
    let order = order.unwrap_or_default();
    state
        .on_desk(async |desk| desk.folder_rows_in(&folder, order, offset, limit).await)
        .await
}

/// The folders directly under `folder`, with counts and held counts.
#[tauri::command]
pub async fn folders(state: State<'_, AppState>, folder: String) -> UiResult<FolderList> {
    state.on_desk(async |desk| desk.folder_tree(&folder)).await
}

/// Files whose path contains `text`, across the studio, after `after`.
#[tauri::command]
pub async fn search_files(
    state: State<'_, AppState>,
    text: String,
    after: Option<String>,
    limit: u32,
) -> UiResult<FoundRows> {
    state
        .on_desk(async |desk| desk.search_rows(&text, after, limit).await)
        .await
}

/// The files someone else holds, after `after`.
#[tauri::command]
pub async fn held_by_others(
    state: State<'_, AppState>,
    after: Option<String>,
    limit: u32,
) -> UiResult<FoundRows> {
    state
        .on_desk(async |desk| desk.held_by_others(after, limit).await)
        .await
}

/// Brings the list up to date by the events since, and says what changed
/// in it since the window last asked.
#[tauri::command]
pub async fn list_changes(state: State<'_, AppState>) -> UiResult<ListChanges> {
    state.on_desk(async |desk| desk.list_changes().await).await
}

/// The counts of these folders (those a change named).
#[tauri::command]
pub async fn folder_counts(
    state: State<'_, AppState>,
    folders: Vec<String>,
) -> UiResult<Vec<FolderCount>> {
    state
        .on_desk(async |desk| desk.folder_counts(&folders))
        .await
}

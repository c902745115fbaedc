//! A file's past as the window shows it: its history page by page, a
//! version as a read-only copy or put back into your copy, a proposal beside
//! the head, and the check-in description a restore prefills. Thin: each
//! command is the desk's call.

use std::path::PathBuf;

use leasedesk_desk::{HistoryPage, Restored};
use leasedesk_model::model::*;
use tauri::State;

use crate::commands::desk_commands;
use crate::error::UiResult;
use crate::AppState;

desk_commands! {
    /// A proposal's file beside the head's, to open both; its path, for the
    /// window to name it and offer to show it in the file manager.
    fn compare_proposal(artifact: ArtifactId, proposal: ProposalId) -> PathBuf =
        on_desk(|desk| desk.proposal_file(artifact, proposal).await);

    /// A file's history, newest first: `limit` (default 100) of its events
    /// before `before` (the newest when none); ask again with `next_before`.
    fn history(artifact: ArtifactId, before: Option<u64>, limit: Option<u32>) -> HistoryPage =
        on_desk(|desk| desk.history(artifact, before, limit.unwrap_or(100)).await);

    /// Version `version` as a read-only copy beside the file (`hero (v3).psd`);
    /// its path, for the window to show or reveal (`reveal`).
    fn open_copy(artifact: ArtifactId, version: u64) -> PathBuf =
        on_desk(|desk| desk.open_copy(artifact, version).await);

    /// Puts version `version` into your copy of a file you hold; your changes go
    /// to a backup beside it, and the next check-in is prefilled "Restored version N".
    fn restore_version(artifact: ArtifactId, version: u64) -> Restored =
        changing_leases(|desk| desk.restore(artifact, version).await);
}

/// The check-in description to prefill: a restore's, else the check-out's note.
#[tauri::command]
pub async fn checkin_draft(state: State<'_, AppState>, checkout: CheckoutId) -> UiResult<String> {
    Ok(state.desk().await?.checkin_draft(checkout).await?)
}

//! The window's commands for its list, a screen at a time: a folder's files
//! by place and the folder tree, from the mirror; a search and the files
//! others hold, from the server (offline, the mirror).

use leasedesk_desk::workspace::ListOrder;
use leasedesk_desk::{FolderRows, FoundRows};
use leasedesk_model::model::{FolderCount, FolderList};

use crate::commands::desk_commands;

desk_commands! {
    /// The files under `folder` (at any depth) from place `offset`, `limit` of
    /// them, in `order` (by path when not given).
    fn folder_rows(folder: String, offset: u64, limit: u32, order: Option<ListOrder>) -> FolderRows =
        on_desk(|desk| {
            let order = order.unwrap_or_default();
            desk.folder_rows_in(&folder, order, offset, limit).await
        });

    /// The folders directly under `folder`, with counts and held counts.
    fn folders(folder: String) -> FolderList = on_desk(|desk| desk.folder_tree(&folder));

    /// Files whose path contains `text`, across the studio, after `after`.
    fn search_files(text: String, after: Option<String>, limit: u32) -> FoundRows =
        on_desk(|desk| desk.search_rows(&text, after, limit).await);

    /// The files someone else holds, after `after`.
    fn held_by_others(after: Option<String>, limit: u32) -> FoundRows =
        on_desk(|desk| desk.held_by_others(after, limit).await);

    /// The counts of these folders (those a change named).
    fn folder_counts(folders: Vec<String>) -> Vec<FolderCount> =
        on_desk(|desk| desk.folder_counts(&folders));
}

//! The inbox, in the shell: the window's commands (a page, the unread
//! count, read marks), and what the event follower does when it hears of
//! review ([`look`]): the new items to the window, the counts to the window
//! and the tray at once, and a desktop notification for a mention or a
//! request to review, whose click opens the file at its thread. Asks the
//! server only when an event may have brought news; never touches a lease.

use leasedesk_desk::{Desk, InboxAlert};
use leasedesk_model::model::*;
use tauri::{AppHandle, State};

use crate::asking::{ask_window, Intent};
use crate::commands::desk_commands;
use crate::error::UiResult;
use crate::shell_events;
use crate::{desktop_notification, tray_refresh, AppState};

desk_commands! {
    /// A page of your inbox, newest first: `limit` (default 50) items before
    /// `before` (the newest when none); ask again with its `next`.
    fn inbox(before: Option<u64>, limit: Option<u32>) -> InboxPage =
        on_desk(|desk| desk.inbox(before, limit.unwrap_or(DEFAULT_INBOX_PAGE)).await);

    /// Your unread items (as last heard, without asking again when known).
    fn inbox_unread() -> u64 = on_desk(|desk| desk.inbox_unread().await);
}

/// Marks your items up to `up_to` read; the unread count, which the tray
/// shows at once.
#[tauri::command]
pub async fn mark_inbox_read(
    app: AppHandle,
    state: State<'_, AppState>,
    up_to: u64,
) -> UiResult<u64> {
    let unread = state
        .on_desk(async |desk| desk.mark_inbox_read(up_to).await)
        .await?;
    tray_refresh(&app).await;
    Ok(unread)
}

/// Looks for new items (the first look only finds where the inbox is) and
/// tells them: the window gets them with the unread count, the tray its
/// count, and each that calls for you a desktop notification.
pub async fn look(app: &AppHandle, desk: &Desk) {
    let before = desk.inbox_unread_known();
    let news = match desk.inbox_news().await {
        Ok(news) => news,
        Err(e) => return tracing::debug!("the inbox was not read: {e}"),
    };
    if !news.items.is_empty() || before != Some(news.unread) {
        shell_events::tell(app, shell_events::InboxArrived, &news);
        tray_refresh(app).await;
    }
    for alert in leasedesk_desk::alerts(&news.items) {
        notify_of(app, &alert);
    }
}

/// A desktop notification that opens, when clicked, the file at its
/// thread (or the inbox, for many at once). The window shows its own
/// notice from the items it is sent.
fn notify_of(app: &AppHandle, alert: &InboxAlert) {
    let intent = match alert {
        InboxAlert::One(item) => match item.thread_id {
            Some(thread) => Intent::ShowThread {
                artifact: item.artifact_id,
                thread,
                seq: item.seq,
            },
            None => Intent::ShowFile {
                artifact: item.artifact_id,
            },
        },
        InboxAlert::Many(_) => Intent::ShowInbox,
    };
    let app2 = app.clone();
    // "default" is the notification's own click, on the desktops that have one.
    desktop_notification(
        app,
        &alert.title(),
        &alert.body(),
        &[("default", "Open")],
        move |action| {
            if action == "default" {
                ask_window(&app2, intent.clone());
            }
        },
    );
}

//! The local API for editor plugins (`leasedesk_plugin_api`), as the app
//! runs it: started with the app, given each session's desk, and followed
//! by what the app does after its own clicks (the window reads again, the
//! tray, a notification), so a check-out from Blender shows at once.

use std::sync::Arc;

use leasedesk_plugin_api::{Acted, PluginApi};
use tauri::{AppHandle, Manager};

use crate::{checkin_notice, notify, shell_events, tray_refresh, AppState};

/// Starts the API on the app's runtime; the app runs on without it (and
/// says so in its log) if loopback cannot be had.
pub fn start(app: &AppHandle, data: &std::path::Path) -> Option<PluginApi> {
    let told = app.clone();
    let on_acted = Arc::new(move |acted: Acted| {
        let app = told.clone();
        tauri::async_runtime::spawn(async move { after(&app, acted).await });
    });
    match tauri::async_runtime::block_on(PluginApi::start(data, on_acted)) {
        Ok(api) => Some(api),
        Err(e) => {
            tracing::warn!("no local API for editor plugins: {e}");
            None
        }
    }
}

/// What follows a plugin's act: what follows the same click in the app.
async fn after(app: &AppHandle, acted: Acted) {
    shell_events::tell(app, shell_events::StoreChanged, &());
    tray_refresh(app).await;
    let until = |at: chrono::DateTime<chrono::Utc>| {
        at.with_timezone(&chrono::Local).format("%H:%M").to_string()
    };
    match acted {
        Acted::CheckedOut(done) => notify(
            app,
            &format!("{} is yours", done.checkout.path.file_name()),
            &format!("Checked out until {}.", until(done.checkout.expires_at)),
        ),
        Acted::CheckedIn(closed) => {
            let (title, body) = checkin_notice(&closed);
            notify(app, &title, &body);
        }
        Acted::Extended(checkout) => notify(
            app,
            &format!("{} extended", checkout.path.file_name()),
            &format!("Your lease now ends at {}.", until(checkout.expires_at)),
        ),
        Acted::Cancelled(closed) => notify(
            app,
            &format!("{}: check-out cancelled", closed.checkout.path.file_name()),
            "Nothing was checked in; the file is free for others.",
        ),
        // As the window's Ask does: you are told when it is free.
        Acted::Asked(artifact) => {
            app.state::<AppState>().waiting().insert(artifact);
        }
        Acted::Got(_) => {}
    }
}

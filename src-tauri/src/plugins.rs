//! The local API for editor plugins (`leasedesk_plugin_api`), as the app
//! runs it: started with the app, given each session's desk, and followed
//! by what the app does after its own clicks (the window reads again, the
//! tray, a notification), so a check-out from Blender shows at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use leasedesk_plugin_api::{Acted, PluginApi};
use tauri::{AppHandle, Manager, State};

use crate::error::{Code, UiError, UiResult};
use crate::{checkin_notice, notify, shell_events, tray_refresh, AppState};

/// Starts the API on the app's runtime; the app runs on without it (and
/// says so in its log) if loopback cannot be had.
pub fn start(app: &AppHandle, data: &Path) -> Option<PluginApi> {
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
    // The file's row at once (the window's full reload waits for a lull),
    // then everything else the act touched.
    if let (Some(artifact), Ok(desk)) = (acted_on(&acted), app.state::<AppState>().desk().await) {
        if let Ok(row) = desk.row(artifact).await {
            shell_events::tell(app, shell_events::RowChanged, &row);
        }
    }
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

/// The file a plugin's act changed the lease of, if it did.
fn acted_on(acted: &Acted) -> Option<leasedesk_model::model::ArtifactId> {
    match acted {
        Acted::CheckedOut(done) => Some(done.checkout.artifact_id),
        Acted::CheckedIn(closed) | Acted::Cancelled(closed) => Some(closed.checkout.artifact_id),
        Acted::Extended(checkout) => Some(checkout.artifact_id),
        Acted::Asked(_) | Acted::Got(_) => None,
    }
}

/// Where Blender is on this computer, if it is: Settings then offers the add-on.
#[tauri::command]
pub async fn blender_found() -> Option<PathBuf> {
    tauri::async_runtime::spawn_blocking(leasedesk_plugin_api::blender::find_blender)
        .await
        .ok()
        .flatten()
}

/// Installs and enables the Blender add-on in the user's Blender (which
/// takes Blender a few seconds to start and save its preferences).
#[tauri::command]
pub async fn install_blender_add_on(state: State<'_, AppState>) -> UiResult<()> {
    let blender = blender_found()
        .await
        .ok_or_else(|| UiError::new(Code::NotFound, "Blender was not found on this computer."))?;
    let scratch = state.dirs.cache.clone();
    let installed = tauri::async_runtime::spawn_blocking(move || {
        std::fs::create_dir_all(&scratch)?;
        leasedesk_plugin_api::blender::install(&blender, &scratch)
    })
    .await;
    match installed {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(UiError::new(Code::Settings, e.to_string())),
        Err(e) => Err(UiError::new(Code::Settings, e.to_string())),
    }
}

/// A start of the app given a file's path (an editor's "Open in
/// Leasedesk"): the window shows that file's detail, once a session is open.
pub fn show_file_among(app: &AppHandle, args: &[String]) {
    let Some(path) = args
        .iter()
        .skip(1)
        .map(Path::new)
        .find(|p| p.is_absolute() && p.is_file())
        .map(Path::to_owned)
    else {
        return;
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let Ok(desk) = app.state::<AppState>().desk().await else {
            return;
        };
        let Some(repo_path) = desk.workspace().repo_path(&path) else {
            return notify(
                &app,
                "Not in your workspace",
                "Leasedesk shows only the files of your Leasedesk folder.",
            );
        };
        if let Ok(artifact) = desk.backend().artifact_by_path(&repo_path).await {
            let intent = crate::asking::Intent::ShowFile {
                artifact: artifact.id,
            };
            crate::asking::ask_window(&app, intent);
        }
    });
}

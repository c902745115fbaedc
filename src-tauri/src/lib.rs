//! Leasedesk's desktop shell: the tray, the window's commands, notifications
//! and the keychain. Everything it does goes through the core's `Desk`; only
//! this crate depends on Tauri, and only `keychain` knows the keychain.
//!
//! # Layout
//!
//! - [`commands`]: the window's commands, thin calls into the core.
//! - [`ipc`]: the commands, typed for both sides (the window's side
//!   generated from it); [`shell_events`]: what the window is told.
//! - [`asking`]: requests to a holder told (window and desktop) and answered.
//! - [`inbox`]: your inbox of review: its commands, and news of it told.
//! - [`review`]: threads, comments and decisions on versions and proposals.
//! - [`session`]: the open backend (bundled or remote) and workspace.
//! - [`live`]: watcher, event follower and reminders; they never touch a lease.
//! - [`preview`]: the `preview:` URI scheme the window's pictures load from.
//! - [`tray`]: the tray menu and tooltip as functions of your check-outs.
//! - [`plugins`]: the local API editor plugins call, run as the app's own.
//! - [`settings`], [`keychain`], [`error`].

pub mod admin;
pub mod asking;
pub mod changes;
pub mod commands;
pub mod error;
pub mod inbox;
pub mod ipc;
pub mod keychain;
pub mod listing;
pub mod live;
pub mod plugins;
pub mod preview;
pub mod review;
pub mod session;
pub mod settings;
pub mod shell_events;
pub mod studio;
pub mod tray;
pub mod versions;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use leasedesk_desk::workspace::Closed;
use leasedesk_desk::Desk;
use leasedesk_model::model::{ArtifactId, CheckinResult, CheckoutId};
use serde::Serialize;
use tauri::{AppHandle, Manager, WindowEvent};
use tauri_plugin_deep_link::DeepLinkExt;
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_notification::NotificationExt;

use error::{Code, UiError, UiResult};
use session::Session;
use settings::{Dirs, Settings};

pub struct AppState {
    dirs: Dirs,
    settings: Mutex<Settings>,
    session: tokio::sync::RwLock<Option<Session>>,
    session_error: Mutex<Option<UiError>>,
    /// Files whose "free" the user asked to hear about.
    waiting: Mutex<HashSet<ArtifactId>>,
    /// Uploads in flight, by the window's name for them, for its cancel button.
    uploads: Mutex<HashMap<String, leasedesk_backend::Cancel>>,
    /// A token kept for this run only, when no keychain took it: (server, token).
    run_token: Mutex<Option<(String, String)>>,
    /// What a click outside the window asked of it, until it takes it.
    intent: Mutex<Option<asking::Intent>>,
    /// The invite link the app was started with, until the window takes it.
    join_link: Mutex<Option<String>>,
    /// The local API for editor plugins, while the app runs.
    plugins: Mutex<Option<Arc<leasedesk_plugin_api::PluginApi>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl AppState {
    fn settings(&self) -> MutexGuard<'_, Settings> {
        lock(&self.settings)
    }
    fn session_error(&self) -> MutexGuard<'_, Option<UiError>> {
        lock(&self.session_error)
    }
    fn waiting(&self) -> MutexGuard<'_, HashSet<ArtifactId>> {
        lock(&self.waiting)
    }
    fn uploads(&self) -> MutexGuard<'_, HashMap<String, leasedesk_backend::Cancel>> {
        lock(&self.uploads)
    }
    fn run_token(&self) -> MutexGuard<'_, Option<(String, String)>> {
        lock(&self.run_token)
    }
    fn intent(&self) -> MutexGuard<'_, Option<asking::Intent>> {
        lock(&self.intent)
    }
    fn join_link(&self) -> MutexGuard<'_, Option<String>> {
        lock(&self.join_link)
    }
    /// The local API for plugins, while the app runs (`None` once it ends).
    fn plugins(&self) -> Option<Arc<leasedesk_plugin_api::PluginApi>> {
        lock(&self.plugins).clone()
    }

    /// The server the open session uses (none for the bundled store).
    async fn server_in_use(&self) -> Option<String> {
        self.session.read().await.as_ref()?.server_in_use()
    }

    /// The open session's desk, or why there is none.
    async fn desk(&self) -> UiResult<Desk> {
        if let Some(session) = self.session.read().await.as_ref() {
            return Ok(session.desk.clone());
        }
        Err(self
            .session_error()
            .clone()
            .unwrap_or_else(|| UiError::new(Code::NoBackend, "No store is open: check Settings.")))
    }
}

/// Where the app keeps its files. `LEASEDESK_APP_HOME` puts everything (and
/// the default workspace) under one folder: for tests and the demo.
fn dirs(app: &AppHandle) -> tauri::Result<(Dirs, Option<PathBuf>)> {
    if let Some(home) = std::env::var_os("LEASEDESK_APP_HOME").map(PathBuf::from) {
        let dirs = Dirs {
            config: home.join("config"),
            data: home.join("data"),
            cache: home.join("cache"),
        };
        return Ok((dirs, Some(home.join("Leasedesk"))));
    }
    // %APPDATA%\Leasedesk and %LOCALAPPDATA%\Leasedesk (the CLI's store too).
    #[cfg(windows)]
    if let Some(windows) =
        leasedesk_files::places::windows_dirs(&leasedesk_files::places::process_env)
    {
        let dirs = Dirs {
            config: windows.config,
            data: windows.data,
            cache: windows.cache,
        };
        return Ok((dirs, None));
    }
    let dirs = Dirs {
        config: app.path().app_config_dir()?,
        data: app.path().app_data_dir()?,
        cache: app.path().app_cache_dir()?,
    };
    Ok((dirs, None))
}

/// Opens (or reopens) the backend the settings name, and starts its
/// background work; a failure is kept for the window to explain.
pub async fn open_session(app: &AppHandle) {
    open_session_then(app, || {}).await;
    shell_events::tell(app, shell_events::StoreChanged, &());
    tray_refresh(app).await;
}

/// Opens the session, calling `locked` once it is taken for the opening:
/// whatever asks for the desk from then on waits for this one. Tells no
/// one: at the start, the window's first calls read it.
async fn open_session_then(app: &AppHandle, locked: impl FnOnce()) {
    let state = app.state::<AppState>();
    let mut slot = state.session.write().await;
    locked();
    *slot = None; // the old session's background work stops here
    let settings = state.settings().clone();
    let token = match settings.backend {
        settings::BackendChoice::Bundled => None,
        settings::BackendChoice::Remote => {
            let url = settings.server_url.trim();
            let remembered = state
                .run_token()
                .as_ref()
                .filter(|(u, _)| u == url)
                .map(|(_, t)| t.clone());
            remembered.or_else(|| keychain::read(url).ok().flatten())
        }
    };
    let opened = session::open(&settings, &state.dirs, token.as_deref());
    if let Some(plugins) = state.plugins() {
        plugins.set_desk(match &opened {
            Ok(session) => Ok(session.desk.clone()),
            Err(e) => Err(e.message().to_owned()),
        });
    }
    match opened {
        Ok(mut session) => {
            live::start(app, &mut session);
            *slot = Some(session);
            *state.session_error() = None;
        }
        Err(e) => *state.session_error() = Some(e),
    }
}

/// A notice in the window: its words, and what its button acts on: the
/// check-out that Extend extends, or the file that Check out takes.
#[derive(Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Notice {
    title: String,
    body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    extend: Option<CheckoutId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    check_out: Option<ArtifactId>,
}

impl Notice {
    fn new(title: &str, body: &str) -> Self {
        Self {
            title: title.to_owned(),
            body: body.to_owned(),
            extend: None,
            check_out: None,
        }
    }
}

/// A desktop notification, also shown in the window (which works where no
/// notification daemon runs).
pub fn notify(app: &AppHandle, title: &str, body: &str) {
    let _ = app.notification().builder().title(title).body(body).show();
    shell_events::tell(app, shell_events::Noticed, &Notice::new(title, body));
}

/// A file you waited for is free: told on the desktop, and in the window
/// with a Check out button (which checks it out when, and only when, clicked).
pub fn notify_free(app: &AppHandle, title: &str, artifact: ArtifactId) {
    let body = "Check it out in Leasedesk while it is.";
    let _ = app.notification().builder().title(title).body(body).show();
    let notice = Notice {
        check_out: Some(artifact),
        ..Notice::new(title, body)
    };
    shell_events::tell(app, shell_events::Noticed, &notice);
}

/// A notification for a lease about to end, with an Extend button that
/// extends it when, and only when, the user clicks it.
pub fn notify_with_extend(app: &AppHandle, title: &str, body: &str, checkout: CheckoutId) {
    let notice = Notice {
        extend: Some(checkout),
        ..Notice::new(title, body)
    };
    shell_events::tell(app, shell_events::Noticed, &notice);
    let app2 = app.clone();
    desktop_notification(app, title, body, &[("extend", "Extend")], move |action| {
        if action == "extend" {
            let (app, extend) = (app2.clone(), tray::Action::Extend(checkout));
            tauri::async_runtime::spawn(async move { on_user_action(&app, extend).await });
        }
    });
}

/// A desktop notification with buttons (`actions`: id and label), which
/// stays until dismissed: the buttons are the point. A click comes back to
/// `on_action` with the button's id. On Linux it goes straight to the
/// desktop's notification service through notify-rust (the crate under the
/// notification plugin), so no action types need registering; elsewhere it
/// is a plain notification, the window's notice carrying the buttons.
pub fn desktop_notification(
    app: &AppHandle,
    title: &str,
    body: &str,
    actions: &[(&str, &str)],
    on_action: impl Fn(&str) + Send + 'static,
) {
    #[cfg(target_os = "linux")]
    {
        let _ = app;
        let mut notification = notify_rust::Notification::new();
        notification
            .appname("Leasedesk")
            .summary(title)
            .body(body)
            .timeout(notify_rust::Timeout::Never);
        for (id, label) in actions {
            notification.action(id, label);
        }
        match notification.show() {
            // Blocks until the notification is acted on or closed.
            Ok(handle) => {
                tauri::async_runtime::spawn_blocking(move || {
                    handle.wait_for_action(|action| on_action(action))
                });
            }
            Err(e) => tracing::debug!("no desktop notification: {e}"),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (actions, on_action);
        let _ = app.notification().builder().title(title).body(body).show();
    }
}

/// An error's message as a sentence: capital first, full stop last.
fn sentence(message: &str) -> String {
    let mut chars = message.trim().chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    let mut said: String = first.to_uppercase().chain(chars).collect();
    if !said.ends_with(['.', '!', '?']) {
        said.push('.');
    }
    said
}

/// A check-in's outcome as a notification's title and body.
pub fn checkin_notice(closed: &Closed) -> (String, String) {
    let name = closed.checkout.path.file_name();
    match &closed.checkout.result {
        Some(CheckinResult::Committed { version, .. }) => {
            (format!("{name} checked in"), format!("Committed as version {version}."))
        }
        Some(CheckinResult::Unchanged { .. }) | None => {
            (format!("{name} checked in"), "Nothing had changed.".to_owned())
        }
        Some(CheckinResult::Proposal { .. }) => (
            format!("{name} became a proposal"),
            "Someone else saved a version while your lease was gone. Your file is kept beside the head; open Leasedesk to decide.".to_owned(),
        ),
    }
}

/// Shows `path` in the file manager: a blocking D-Bus round trip, so on a
/// thread of its own, off the window's and the async threads.
pub async fn reveal_in_folder(path: PathBuf) -> Result<(), String> {
    match tokio::task::spawn_blocking(move || tauri_plugin_opener::reveal_item_in_dir(path)).await {
        Ok(shown) => shown.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Redraws the tray's menu and tooltip from your check-outs, the requests
/// waiting for your answer and your unread inbox items (as last heard: the
/// tray asks no more of the server for them).
pub async fn tray_refresh(app: &AppHandle) {
    let (checkouts, elsewhere, waiting) = match app.state::<AppState>().desk().await {
        // Offline, the check-outs last seen: their leases still run out.
        Ok(desk) => {
            let (checkouts, requests, me) =
                tokio::join!(desk.my_checkouts(), desk.requests(), desk.me());
            let requests = match (requests, me) {
                (Ok(requests), Ok(me)) => leasedesk_desk::waiting_for_answer(&requests, &me),
                _ => 0,
            };
            let waiting = tray::Waiting {
                requests,
                unread: desk.inbox_unread_known().unwrap_or_default(),
            };
            let checkouts = checkouts.unwrap_or_default();
            // Those that cannot be checked in here offer no Check in.
            let elsewhere = desk.held_elsewhere(&checkouts).await.unwrap_or_default();
            (checkouts, elsewhere, waiting)
        }
        Err(_) => (Vec::new(), Default::default(), tray::Waiting::default()),
    };
    let now = chrono::Utc::now();
    // The tray's handle holds an `Rc`: even finding it clones that, so it is
    // touched on the main thread only (from a worker it corrupted the heap,
    // and the app aborted).
    let handle = app.clone();
    let _ = app.run_on_main_thread(move || {
        let Some(tray) = handle.tray_by_id("main") else {
            return;
        };
        if let Ok(menu) = tray::menu(
            &handle,
            &tray::entries(&checkouts, &elsewhere, waiting, now),
        ) {
            let _ = tray.set_menu(Some(menu));
        }
        let _ = tray.set_tooltip(Some(tray::tooltip(&checkouts, waiting, now)));
    });
}

/// Shows the window, building it again if it was closed: a closed window is
/// dropped with its web view, so the app idles in the tray without WebKit's
/// web process (a third of its memory). A window built here shows once its
/// page has loaded (`show_once_loaded`).
pub(crate) fn show_main(app: &AppHandle) {
    let Some(window) = app.get_webview_window("main") else {
        let Some(config) = app.config().app.windows.first() else {
            return;
        };
        match tauri::WebviewWindowBuilder::from_config(app, config).and_then(|b| b.build()) {
            Ok(_) => show_once_loaded(app),
            Err(e) => tracing::warn!("the window could not open: {e}"),
        }
        return;
    };
    let _ = window.show();
    let _ = window.unminimize();
    let _ = window.set_focus();
}

fn build_tray(app: &AppHandle) -> tauri::Result<()> {
    let icon = tauri::image::Image::from_bytes(include_bytes!("../../icons/tray.png"))?;
    let menu = tray::menu(
        app,
        &tray::entries(
            &[],
            &Default::default(),
            tray::Waiting::default(),
            chrono::Utc::now(),
        ),
    )?;
    tauri::tray::TrayIconBuilder::with_id("main")
        .icon(icon)
        .tooltip("Leasedesk")
        .menu(&menu)
        .on_menu_event(|app, event| {
            if let Some(action) = tray::action(event.id().as_ref()) {
                let app = app.clone();
                tauri::async_runtime::spawn(async move { on_user_action(&app, action).await });
            }
        })
        .build(app)?;
    Ok(())
}

async fn on_user_action(app: &AppHandle, action: tray::Action) {
    let state = app.state::<AppState>();
    let desk = match state.desk().await {
        Ok(desk) => desk,
        Err(_) => return show_main(app),
    };
    let outcome: Result<(), leasedesk_model::Error> = async {
        match action {
            tray::Action::Open => show_main(app),
            tray::Action::ShowRequests => asking::ask_window(app, asking::Intent::ShowRequests),
            tray::Action::ShowInbox => asking::ask_window(app, asking::Intent::ShowInbox),
            tray::Action::Quit => app.exit(0),
            tray::Action::Extend(id) => {
                let checkout = desk.extend(id, None).await?;
                let until = checkout
                    .expires_at
                    .with_timezone(&chrono::Local)
                    .format("%H:%M");
                notify(
                    app,
                    &format!("{} extended", checkout.path.file_name()),
                    &format!("Your lease now ends at {until}."),
                );
            }
            tray::Action::CheckIn(id) => {
                // The description the window would have prefilled; offline,
                // none, so the refusal below is the check-in's own.
                let message = desk.checkin_draft(id).await.ok();
                let (title, body) = checkin_notice(
                    &desk
                        .check_in(id, message, leasedesk_backend::Watch::default())
                        .await?,
                );
                notify(app, &title, &body);
            }
            tray::Action::GetCopy(id) => {
                let got = desk.get_copy(id, None).await?;
                notify(
                    app,
                    &format!("{} is here to edit", got.checkout.path.file_name()),
                    "The version you checked out is on this computer now; check it in from here when you are done.",
                );
            }
            tray::Action::Reveal(id) => {
                let checkout = desk.backend().checkout(id).await?;
                let local = desk.workspace().local_path(&checkout.path)?;
                let _ = reveal_in_folder(local).await;
            }
            tray::Action::CheckOutFile => {
                let (desk, app2) = (desk.clone(), app.clone());
                app.dialog()
                    .file()
                    .set_title("Check out a file")
                    .set_directory(desk.workspace().root())
                    .pick_file(move |picked| {
                        let Some(path) = picked.and_then(|p| p.into_path().ok()) else {
                            return;
                        };
                        tauri::async_runtime::spawn(async move {
                            check_out_picked(&app2, &desk, path).await
                        });
                    });
            }
        }
        Ok(())
    }
    .await;
    if let Err(e) = outcome {
        notify(
            app,
            "Leasedesk could not do that",
            &sentence(&e.to_string()),
        );
    }
    shell_events::tell(app, shell_events::StoreChanged, &());
    tray_refresh(app).await;
}

async fn check_out_picked(app: &AppHandle, desk: &Desk, path: PathBuf) {
    let Some(repo_path) = desk.workspace().repo_path(&path) else {
        return notify(
            app,
            "Not in your workspace",
            "Pick a file inside your Leasedesk folder, or add it first.",
        );
    };
    let outcome = async {
        let artifact = desk.backend().artifact_by_path(&repo_path).await?;
        desk.check_out(artifact.id, Default::default(), None).await
    }
    .await;
    match outcome {
        Ok(done) => notify(
            app,
            &format!("{} is yours", repo_path.file_name()),
            &format!(
                "Checked out until {}.",
                done.checkout
                    .expires_at
                    .with_timezone(&chrono::Local)
                    .format("%H:%M")
            ),
        ),
        Err(leasedesk_model::Error::ArtifactBusy {
            lease: Some(lease), ..
        }) => notify(
            app,
            &format!("{} is busy", repo_path.file_name()),
            &format!(
                "{} has it until {}.",
                lease.participant.name(),
                lease
                    .expires_at
                    .with_timezone(&chrono::Local)
                    .format("%H:%M")
            ),
        ),
        Err(e) => notify(app, "Leasedesk could not check it out", &e.to_string()),
    }
    shell_events::tell(app, shell_events::StoreChanged, &());
    tray_refresh(app).await;
}

/// Whether the main window built last has been shown (`show_first_time`).
static MAIN_SHOWN: AtomicBool = AtomicBool::new(false);

/// How long a window built hidden waits for its page before it shows all
/// the same (a load that never reports its end, as WebKit on macOS after
/// a failed one).
const SHOW_AT_LATEST: Duration = Duration::from_secs(3);

/// The window is built hidden and shown once its page has loaded. Shown
/// at once, GTK draws it before WebKit's web process has started, and the
/// draw waits up to WebKit's 500 ms for a web process that cannot answer
/// yet (the main thread it needs is the one waiting): a launch in three
/// took half a second longer so.
fn show_when_loaded(webview: &tauri::Webview, load: &tauri::webview::PageLoadPayload<'_>) {
    if load.event() == tauri::webview::PageLoadEvent::Finished && webview.label() == "main" {
        show_first_time(webview.app_handle());
    }
}

/// A main window was just built, hidden: it shows once its page has
/// loaded (`show_when_loaded`), or at [`SHOW_AT_LATEST`].
fn show_once_loaded(app: &AppHandle) {
    MAIN_SHOWN.store(false, Ordering::SeqCst);
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SHOW_AT_LATEST).await;
        show_first_time(&app);
    });
}

/// Shows the main window the first time only: one hidden later (closed
/// while an upload goes on) stays hidden through a reload of its page.
fn show_first_time(app: &AppHandle) {
    if MAIN_SHOWN.swap(true, Ordering::SeqCst) {
        return;
    }
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.set_focus();
    }
}

pub fn run() {
    tauri::Builder::default()
        // A second start (an invite link opened meanwhile, say) shows this
        // window, shows the file it was given, and hands its link to the
        // deep-link plugin (below).
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            show_main(app);
            plugins::show_file_among(app, &args);
            app.deep_link().handle_cli_arguments(args.into_iter());
        }))
        // leasedesk:// links: the start's argument on Windows and Linux, an
        // Apple event on macOS.
        .plugin(tauri_plugin_deep_link::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_opener::init())
        .register_asynchronous_uri_scheme_protocol("preview", |ctx, request, responder| {
            let app = ctx.app_handle().clone();
            let path = request.uri().path().to_owned();
            tauri::async_runtime::spawn(async move {
                let answer = match app.state::<AppState>().desk().await {
                    Ok(desk) => preview::answer(&desk, &path).await,
                    Err(e) => preview::unavailable(&e),
                };
                responder.respond(answer);
            });
        })
        .setup(|app| {
            let handle = app.handle().clone();
            let (dirs, workspace) = dirs(&handle)?;
            let mut settings = Settings::load(&dirs.settings_file());
            let plugins = plugins::start(&handle, &dirs.data);
            if let (Some(workspace), false) = (workspace, dirs.settings_file().exists()) {
                settings.workspace = workspace;
            }
            app.manage(AppState {
                dirs,
                settings: Mutex::new(settings),
                session: Default::default(),
                session_error: Default::default(),
                waiting: Default::default(),
                uploads: Default::default(),
                run_token: Default::default(),
                intent: Default::default(),
                join_link: Mutex::new(studio::join_link_among(
                    &app.deep_link().get_current()?.unwrap_or_default(),
                )),
                plugins: Mutex::new(plugins.map(Arc::new)),
            });
            let opened = handle.clone();
            app.deep_link()
                .on_open_url(move |event| studio::received(&opened, &event.urls()));
            // No tray host (a bare X server): the window still serves.
            if let Err(e) = build_tray(&handle) {
                tracing::warn!("no tray: {e}");
            }
            // The window loads while the store opens (the keychain, the
            // mirror): its first calls wait for the session, whose lock is
            // taken before setup goes on.
            let (locked, taken) = std::sync::mpsc::sync_channel(1);
            let opening = handle.clone();
            tauri::async_runtime::spawn(async move {
                open_session_then(&opening, move || {
                    let _ = locked.send(());
                })
                .await;
                tray_refresh(&opening).await;
            });
            let _ = taken.recv();
            show_once_loaded(&handle);
            plugins::show_file_among(&handle, &std::env::args().collect::<Vec<_>>());
            Ok(())
        })
        .on_page_load(show_when_loaded)
        .on_window_event(|window, event| {
            // An upload in flight reports to the window, so the window only
            // hides until it ends; otherwise it closes and frees its web view.
            if let WindowEvent::CloseRequested { api, .. } = event {
                let app = window.app_handle();
                if app.tray_by_id("main").is_some() && !app.state::<AppState>().uploads().is_empty()
                {
                    let _ = window.hide();
                    api.prevent_close();
                }
            }
        })
        .invoke_handler(ipc::handler())
        .build(tauri::generate_context!())
        .expect("Leasedesk could not start")
        .run(|app, event| match event {
            // Closing the window keeps the app in the tray; Quit ends it.
            tauri::RunEvent::ExitRequested {
                code: None, api, ..
            } if app.tray_by_id("main").is_some() => api.prevent_exit(),
            // Plugins find no app once it is gone: the discovery file goes.
            tauri::RunEvent::Exit => drop(lock(&app.state::<AppState>().plugins).take()),
            _ => {}
        });
}

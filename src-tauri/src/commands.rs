//! The window's commands: each a few lines that call the core (`Desk`) and
//! hand back its answer or a `{code, message, ...}` error.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use leasedesk_backend::{Cancel, TransferNote, Watch};
use leasedesk_desk::workspace::{CheckedOut, Closed};
use leasedesk_desk::{Activity, Decision, Desk, FileRow, Overview};
use leasedesk_model::model::*;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

use crate::error::{Code, UiError, UiResult};
use crate::settings::{BackendChoice, Settings};
use crate::{checkin_notice, keychain, notify, tray_refresh, AppState};

/// Progress reports go at most this often, so a fast upload does not flood the window.
const PROGRESS_EVERY_BYTES: u64 = 1 << 20;

/// How far a transfer is: bytes moved of `total` (when known here). Over a
/// link only what the server lacks travels: then `total` is that, `size`
/// the whole file's, and `reconnecting` says the link broke and is being
/// waited out.
#[derive(Clone, Default, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Moved {
    #[ts(type = "number")]
    sent: u64,
    #[ts(type = "number | null")]
    total: Option<u64>,
    #[ts(type = "number | null")]
    size: Option<u64>,
    reconnecting: bool,
}

pub(crate) fn progress(channel: Channel<Moved>, total: Option<u64>) -> leasedesk_backend::Progress {
    watch(channel, total, None).progress.expect("a progress")
}

/// What a transfer tells the window through `channel`: its bytes (at most
/// every [`PROGRESS_EVERY_BYTES`]), what it will send, and when it
/// reconnects; `cancel` stops it.
pub(crate) fn watch(channel: Channel<Moved>, total: Option<u64>, cancel: Option<Cancel>) -> Watch {
    let told = std::sync::Arc::new(std::sync::Mutex::new(Moved {
        total,
        ..Moved::default()
    }));
    let tell = {
        let channel = channel.clone();
        move |moved: &Moved| {
            let _ = channel.send(moved.clone());
        }
    };
    let progress = {
        let (told, tell) = (told.clone(), tell.clone());
        std::sync::Arc::new(move |sent: u64| {
            let mut moved = told.lock().unwrap_or_else(|p| p.into_inner());
            if sent < moved.sent || sent - moved.sent >= PROGRESS_EVERY_BYTES || moved.reconnecting
            {
                moved.sent = sent;
                moved.reconnecting = false;
                tell(&moved);
            }
        }) as leasedesk_backend::Progress
    };
    let notes = std::sync::Arc::new(move |note: TransferNote| {
        let mut moved = told.lock().unwrap_or_else(|p| p.into_inner());
        match note {
            TransferNote::Sending { bytes, size } => {
                moved.total = Some(bytes);
                moved.size = Some(size);
            }
            TransferNote::Reconnecting { .. } => moved.reconnecting = true,
            TransferNote::Resumed { from } => {
                moved.sent = from;
                moved.reconnecting = false;
            }
        }
        tell(&moved);
    }) as leasedesk_backend::Notes;
    Watch {
        progress: Some(progress),
        notes: Some(notes),
        cancel,
    }
}

/// The desk's error as the window gets it: offline (and since when) when
/// the desk found no server.
pub(crate) fn told(desk: &Desk) -> impl Fn(leasedesk_model::Error) -> UiError + '_ {
    |error| UiError::from_desk(error, desk.connection())
}

/// Commands that are one call of the desk, each written as that call:
/// `fn name(args) -> Answer = on_desk(|desk| call);` makes the
/// `#[tauri::command]` that takes the app's state and `args` and answers
/// the call's answer, its error as the window gets it ([`told`]). With
/// `changing_leases` in place of `on_desk`, the tray lists the leases again
/// once the call is done.
macro_rules! desk_commands {
    () => {};
    (
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $answer:ty =
            on_desk(|$desk:ident| $call:expr);
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[tauri::command]
        pub async fn $name(
            state: tauri::State<'_, $crate::AppState>,
            $($arg: $ty),*
        ) -> $crate::error::UiResult<$answer> {
            state.on_desk(async |$desk: &leasedesk_desk::Desk| $call).await
        }
        $crate::commands::desk_commands!($($rest)*);
    };
    (
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $answer:ty =
            changing_leases(|$desk:ident| $call:expr);
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[tauri::command]
        pub async fn $name(
            app: tauri::AppHandle,
            state: tauri::State<'_, $crate::AppState>,
            $($arg: $ty),*
        ) -> $crate::error::UiResult<$answer> {
            state.changing_leases(&app, async |$desk: &leasedesk_desk::Desk| $call).await
        }
        $crate::commands::desk_commands!($($rest)*);
    };
}
pub(crate) use desk_commands;

/// The view, with the server it came from (offline: the view kept).
#[tauri::command]
pub async fn overview(state: State<'_, AppState>) -> UiResult<Overview> {
    let mut overview = state.on_desk(async |desk| desk.overview().await).await?;
    overview.server = state.server_in_use().await;
    Ok(overview)
}

desk_commands! {
    fn refresh_row(artifact: ArtifactId) -> FileRow = on_desk(|desk| desk.row(artifact).await);

    fn extend(checkout: CheckoutId, ttl_seconds: Option<u64>) -> Checkout =
        changing_leases(|desk| desk.extend(checkout, ttl_seconds).await);

    fn cancel_checkout(checkout: CheckoutId) -> Closed =
        changing_leases(|desk| desk.cancel(checkout).await);

    fn update_file(artifact: ArtifactId) -> Option<PathBuf> =
        on_desk(|desk| desk.update(artifact).await);

    fn decide(proposal: ProposalId, decision: Decision) -> Proposal =
        on_desk(|desk| desk.decide(proposal, decision).await);
}

#[tauri::command]
pub async fn check_out(
    app: AppHandle,
    state: State<'_, AppState>,
    artifact: ArtifactId,
    note: Option<String>,
    ttl_seconds: Option<u64>,
    on_progress: Channel<Moved>,
) -> UiResult<CheckedOut> {
    let request = CheckoutRequest {
        ttl_seconds,
        note: note.filter(|n| !n.trim().is_empty()),
    };
    let progress = Some(progress(on_progress, None));
    let checked_out = async |desk: &Desk| {
        let done = desk.check_out(artifact, request, progress).await?;
        state.waiting().remove(&artifact);
        Ok(done)
    };
    state.changing_leases(&app, checked_out).await
}

/// Uploads the local copy with `message` as the version's description (none
/// when null or blank). `upload` names this upload for `cancel_upload`.
#[tauri::command]
pub async fn check_in(
    app: AppHandle,
    state: State<'_, AppState>,
    checkout: CheckoutId,
    message: Option<String>,
    upload: String,
    on_progress: Channel<Moved>,
) -> UiResult<Closed> {
    let desk = state.desk().await?;
    // The bar measures against the local copy, which is what goes up.
    let total = match desk.backend().checkout(checkout).await {
        Ok(open) => desk
            .workspace()
            .local_path(&open.path)
            .ok()
            .and_then(|local| std::fs::metadata(local).ok()),
        Err(_) => None,
    }
    .map(|m| m.len());
    // Cancelling stops the upload before its next chunk; once every byte is
    // read it has no effect, so the outcome shown is always what happened.
    let cancel = Cancel::default();
    state.uploads().insert(upload.clone(), cancel.clone());
    let outcome = desk
        .check_in(
            checkout,
            message,
            watch(on_progress, total, Some(cancel.clone())),
        )
        .await
        .map_err(|e| {
            if cancel.load(Ordering::Relaxed) {
                UiError::new(
                    Code::Cancelled,
                    "The check-in was cancelled: nothing was stored and your check-out is still open.",
                )
            } else {
                told(&desk)(e)
            }
        });
    state.uploads().remove(&upload);
    tray_refresh(&app).await;
    // The window was closed while this went up: tell the desktop, and let
    // the window go now.
    if let Some(window) = app
        .get_webview_window("main")
        .filter(|w| !w.is_visible().unwrap_or(true))
    {
        match &outcome {
            Ok(done) => {
                let (title, body) = checkin_notice(done);
                notify(&app, &title, &body);
            }
            Err(e) => notify(&app, "The check-in did not go through", e.message()),
        }
        let _ = window.close();
    }
    outcome
}

#[tauri::command]
pub fn cancel_upload(state: State<'_, AppState>, upload: String) {
    if let Some(cancel) = state.uploads().get(&upload) {
        cancel.store(true, Ordering::Relaxed);
    }
}

/// Your copy to edit of a file you hold that is not here (checked out
/// elsewhere, or its copy gone); the lease is not touched.
#[tauri::command]
pub async fn get_copy(
    app: AppHandle,
    state: State<'_, AppState>,
    checkout: CheckoutId,
    on_progress: Channel<Moved>,
) -> UiResult<CheckedOut> {
    let progress = Some(progress(on_progress, None));
    let got = state
        .on_desk(async |desk| desk.get_copy(checkout, progress).await)
        .await;
    // Here now: the tray offers Check in for it.
    tray_refresh(&app).await;
    got
}

#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Added {
    source: PathBuf,
    artifact: Option<Artifact>,
    error: Option<UiError>,
}

/// Adds each file (a button's pick or a drop) under `folder`; one answer each.
#[tauri::command]
pub async fn add_files(
    state: State<'_, AppState>,
    paths: Vec<PathBuf>,
    folder: String,
) -> UiResult<Vec<Added>> {
    let desk = state.desk().await?;
    let mut added = Vec::new();
    for source in paths {
        let outcome = desk.add(&source, &folder).await;
        let (artifact, error) = match outcome {
            Ok(artifact) => (Some(artifact), None),
            Err(e) => (None, Some(told(&desk)(e))),
        };
        added.push(Added {
            source,
            artifact,
            error,
        });
    }
    Ok(added)
}

#[tauri::command]
pub async fn events(state: State<'_, AppState>, after: u64, limit: u32) -> UiResult<EventPage> {
    Ok(state.desk().await?.backend().events(after, limit).await?)
}

/// Newest events first, at most `limit`, with the paths of the files they
/// name: the activity feed's first page.
#[tauri::command]
pub async fn recent_events(state: State<'_, AppState>, limit: u32) -> UiResult<Activity> {
    Ok(state.desk().await?.recent_activity(limit).await?)
}

/// The path of each of these files that you may read, from the mirror: what
/// the activity feed names the files of the events it is told of.
#[tauri::command]
pub async fn file_paths(
    state: State<'_, AppState>,
    ids: Vec<ArtifactId>,
) -> UiResult<BTreeMap<ArtifactId, RepoPath>> {
    Ok(state.desk().await?.paths(&ids).await)
}

#[tauri::command]
pub fn notify_when_free(state: State<'_, AppState>, artifact: ArtifactId, on: bool) {
    let mut waiting = state.waiting();
    if on {
        waiting.insert(artifact);
    } else {
        waiting.remove(&artifact);
    }
}

/// Asks the holder of `artifact` to release it, with `message`; you are
/// then told when it is free, as "Notify me when it's free" does.
#[tauri::command]
pub async fn ask_holder(
    state: State<'_, AppState>,
    artifact: ArtifactId,
    message: Option<String>,
) -> UiResult<Request> {
    let asked = async |desk: &Desk| desk.ask(artifact, message.as_deref()).await;
    let request = state.on_desk(asked).await?;
    state.waiting().insert(artifact);
    Ok(request)
}

desk_commands! {
    /// The requests to and from you that still stand, newest first.
    fn requests() -> Vec<Request> = on_desk(|desk| desk.requests().await);

    /// The holder's short answer to `request`; the tray counts it answered.
    fn reply_request(request: RequestId, message: String) -> Request =
        changing_leases(|desk| desk.reply(request, &message).await);

    fn withdraw_request(request: RequestId) -> Request =
        on_desk(|desk| desk.withdraw(request).await);
}

/// What a click outside the window asked of it (`asking::Intent`), once.
#[tauri::command]
pub fn take_intent(state: State<'_, AppState>) -> Option<crate::asking::Intent> {
    state.intent().take()
}

#[tauri::command]
pub async fn reveal(path: PathBuf) -> UiResult<()> {
    crate::reveal_in_folder(path.clone()).await.map_err(|e| {
        // The window says it in words, with the path; the cause goes to the log.
        eprintln!("leasedesk-app: revealing {}: {e}", path.display());
        UiError::new(
            Code::Reveal,
            format!("{} could not be shown: {e}", path.display()),
        )
        .with("path", path.display().to_string())
    })
}

/// A server's certificate as Settings show it before the user trusts it.
#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct CertificateView {
    /// The server looked at: the first https one of the settings.
    server: String,
    /// SHA-256 of the certificate (lower-case hex).
    sha256: String,
    subject: String,
    /// Whether the app accepts it as things are (the system's roots, the CA
    /// file, or the pin).
    trusted: bool,
    /// A certificate is pinned and this is not it.
    changed: bool,
}

/// Looks at the certificate of the settings' first https server, without
/// sending it anything: `None` for plain HTTP or the bundled store.
#[tauri::command]
pub async fn server_certificate(state: State<'_, AppState>) -> UiResult<Option<CertificateView>> {
    let settings = state.settings().clone();
    let https = settings
        .server_url
        .split(',')
        .map(str::trim)
        .find(|url| url.starts_with("https://"));
    let Some(server) = https.filter(|_| settings.backend == BackendChoice::Remote) else {
        return Ok(None);
    };
    Ok(Some(CertificateView::of(server, &settings).await?))
}

impl CertificateView {
    /// The certificate `server` shows, as `settings` would trust it.
    pub(crate) async fn of(server: &str, settings: &Settings) -> UiResult<Self> {
        let seen =
            leasedesk_client::server_certificate(server, &crate::session::trust_of(settings))
                .await?;
        let changed = settings
            .pinned_sha256
            .as_deref()
            .is_some_and(|pin| !pin.eq_ignore_ascii_case(&seen.sha256));
        Ok(CertificateView {
            server: server.to_owned(),
            sha256: seen.sha256,
            subject: seen.subject,
            trusted: seen.trusted,
            changed,
        })
    }
}

/// Trusts the certificate whose fingerprint the user was shown: its SHA-256
/// is pinned in the settings file (any other certificate is then refused),
/// and the session opens again with it.
#[tauri::command]
pub async fn trust_certificate(
    app: AppHandle,
    state: State<'_, AppState>,
    sha256: String,
) -> UiResult<SettingsView> {
    let mut settings = state.settings().clone();
    settings.pinned_sha256 = Some(checked_pin(&sha256)?);
    state.save_and_open(&app, settings).await?;
    let refused = state.refusal().await;
    Ok(state.settings_view(refused).await)
}

/// A fingerprint the user chose to trust, as the settings keep it.
pub(crate) fn checked_pin(sha256: &str) -> UiResult<String> {
    let pin = sha256.trim().to_ascii_lowercase();
    if pin.len() != 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(UiError::new(
            Code::Invalid,
            format!("{sha256:?} is not a SHA-256 fingerprint (64 hexadecimal digits)"),
        ));
    }
    Ok(pin)
}

#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct SettingsView {
    settings: Settings,
    /// No settings were ever saved: the window opens on the first run's choice.
    first_run: bool,
    has_token: bool,
    /// Set when the keychain could not be used (the token then lasts this run).
    pub(crate) keychain_note: Option<String>,
    /// Why no backend is open, if none is.
    session_error: Option<UiError>,
}

/// The settings, and why the server refuses the session if it does (a
/// certificate not trusted, or changed; a token): the dialog is where those
/// are fixed, so opening it asks the server once.
#[tauri::command]
pub async fn settings(state: State<'_, AppState>) -> UiResult<SettingsView> {
    let remote = state.settings().backend == BackendChoice::Remote;
    let refused = if remote { state.refusal().await } else { None };
    Ok(state.settings_view(refused).await)
}

/// Saves the settings (a new token goes to the keychain, never to the file)
/// and reopens the backend. Local files are never touched by a switch.
#[tauri::command]
pub async fn save_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    settings: Settings,
    token: Option<String>,
) -> UiResult<SettingsView> {
    let mut settings = settings;
    if settings.backend == BackendChoice::Remote {
        check_address(&settings.server_url)?;
    }
    settings.pinned_sha256 = state.settings().pin_kept_for(&settings);
    let url = settings.server_url.trim().to_owned();
    let typed = token.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    if let Some(token) = &typed {
        *state.run_token() = Some((url.clone(), token.clone()));
    }
    state.save_and_open(&app, settings).await?;
    // Settings just typed are tried at once, so a wrong address or token
    // shows in the dialog rather than later in the list.
    let refused = state.refusal().await;
    // A token the server refused is forgotten: the keychain's stays.
    let mut note = None;
    if let Some(token) = typed {
        if matches!(refused, Some(leasedesk_model::Error::Unauthorized(_))) {
            *state.run_token() = None;
            crate::open_session(&app).await;
        } else {
            note = keychain::store(&url, &token).err();
        }
    }
    let mut view = state.settings_view(refused).await;
    view.keychain_note = view.keychain_note.or(note);
    Ok(view)
}

/// Refuses an empty server address before anything is saved, and one that
/// is not a list of http(s) addresses.
fn check_address(servers: &str) -> UiResult<()> {
    if servers.split(',').all(|s| s.trim().is_empty()) {
        return Err(UiError::new(
            Code::Invalid,
            "Enter your studio's server address, such as https://leasedesk.example:7443.",
        ));
    }
    Ok(leasedesk_client::check_servers(servers.trim())?)
}

/// Who a server says a token is: what "Test connection" shows.
#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Connected {
    /// The server that answered.
    server: String,
    me: Participant,
}

/// Tries the address and token typed in Settings, saving nothing: the
/// server that answered and who it says the token is, or why it refused.
/// With no token typed, the one kept for that address is used.
#[tauri::command]
pub async fn test_connection(
    state: State<'_, AppState>,
    settings: Settings,
    token: Option<String>,
) -> UiResult<Connected> {
    check_address(&settings.server_url)?;
    let url = settings.server_url.trim().to_owned();
    let typed = token.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    let remembered = state
        .run_token()
        .as_ref()
        .filter(|(u, _)| *u == url)
        .map(|(_, t)| t.clone());
    let token = match typed.or(remembered) {
        Some(token) => token,
        None => keychain::read(&url)
            .map_err(|why| UiError::new(Code::Keychain, why))?
            .ok_or_else(|| {
                UiError::new(
                    Code::NoToken,
                    "No token for this server yet: paste the one your admin gave you.",
                )
            })?,
    };
    let mut tried = settings;
    tried.pinned_sha256 = state.settings().pin_kept_for(&tried);
    let remote =
        leasedesk_client::Remote::with_trust(&url, &token, crate::session::trust_of(&tried))?;
    let me = leasedesk_backend::Backend::me(&remote).await?;
    Ok(Connected {
        server: remote.server(),
        me,
    })
}

impl AppState {
    /// `act` on the open desk; its error as the window gets it (`told`).
    pub(crate) async fn on_desk<T>(
        &self,
        act: impl AsyncFnOnce(&Desk) -> leasedesk_model::Result<T>,
    ) -> UiResult<T> {
        let desk = self.desk().await?;
        act(&desk).await.map_err(told(&desk))
    }

    /// As `on_desk`, for an act that changes your leases: once it is done,
    /// the tray lists them again.
    pub(crate) async fn changing_leases<T>(
        &self,
        app: &AppHandle,
        act: impl AsyncFnOnce(&Desk) -> leasedesk_model::Result<T>,
    ) -> UiResult<T> {
        let done = self.on_desk(act).await?;
        tray_refresh(app).await;
        Ok(done)
    }

    /// Saves `settings` in the settings file and opens the session on them.
    pub(crate) async fn save_and_open(&self, app: &AppHandle, settings: Settings) -> UiResult<()> {
        settings.save(&self.dirs.settings_file()).map_err(|e| {
            UiError::new(
                Code::Settings,
                format!("The settings could not be saved: {e}"),
            )
        })?;
        *self.settings() = settings;
        crate::open_session(app).await;
        Ok(())
    }

    /// Why the server refuses the open session, if it does (a certificate
    /// not trusted or changed, a token): asked once, for the dialog to show.
    async fn refusal(&self) -> Option<leasedesk_model::Error> {
        self.desk().await.ok()?.backend().me().await.err()
    }

    /// The settings as the dialog shows them; `refused`, when given, is why
    /// the session is refused.
    pub(crate) async fn settings_view(
        &self,
        refused: Option<leasedesk_model::Error>,
    ) -> SettingsView {
        let settings = self.settings().clone();
        let url = settings.server_url.trim();
        let in_memory = self.run_token().as_ref().is_some_and(|(u, _)| u == url);
        let (stored, keychain_note) = if url.is_empty() {
            (false, None)
        } else {
            match keychain::read(url) {
                Ok(token) => (token.is_some(), None),
                Err(why) => (false, Some(why)),
            }
        };
        let session_error = match refused {
            Some(e) => Some(e.into()),
            None => self.session_error().clone(),
        };
        SettingsView {
            first_run: !self.dirs.settings_file().exists(),
            has_token: stored || in_memory,
            keychain_note,
            session_error,
            settings,
        }
    }
}

//! Joining a studio and this person's devices, as the window asks: an
//! invite read (link or code) and shown with its server and certificate,
//! redeemed for this computer with the token kept in the keychain; this
//! device and the others listed, signed out or revoked; a code made to add
//! another computer. Thin: the rules are the server's, the words the UI's.

use leasedesk_backend::Studio;
use leasedesk_client::Remote;
use leasedesk_desk::{computer_name, join_link, read_invitation};
use leasedesk_model::model::{Invite, MyDevices};
use serde::Serialize;
use tauri::{AppHandle, Manager, State, Url};

use crate::commands::{checked_pin, CertificateView, SettingsView};
use crate::error::{Code, UiError, UiResult};
use crate::session::{trust_of, Source};
use crate::settings::BackendChoice;
use crate::shell_events;
use crate::{keychain, AppState};

/// An invite as the join dialog shows it before anything is sent.
#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct JoinView {
    server: String,
    code: String,
    /// This computer's name: the device's, unless the user types another.
    device: String,
    /// The server's certificate, for an https server: the user trusts a
    /// self-signed one by its fingerprint before joining.
    certificate: Option<CertificateView>,
}

/// Reads a pasted (or opened) invite: its server and, for https, the
/// certificate it shows. A link names its server; a code alone is for the
/// server typed beside it (`server`), else the one the settings name.
#[tauri::command]
pub async fn read_invite(
    state: State<'_, AppState>,
    text: String,
    server: Option<String>,
) -> UiResult<JoinView> {
    let invitation = read_invitation(&text)?;
    let typed = server
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    if let Some(typed) = &typed {
        leasedesk_client::check_servers(typed)?;
    }
    let settings = state.settings().clone();
    let named = (settings.backend == BackendChoice::Remote)
        .then(|| {
            settings
                .server_url
                .split(',')
                .next()
                .unwrap_or("")
                .trim()
                .to_owned()
        })
        .filter(|s| !s.is_empty());
    let server = invitation.server.or(typed).or(named).ok_or_else(|| {
        UiError::new(
            Code::Invalid,
            "This code does not say which server it is for: type the server's address too, or paste the whole invite link.",
        )
    })?;
    let certificate = match server.starts_with("https://") {
        true => Some(CertificateView::of(&server, &fresh_settings(&state, &server)).await?),
        false => None,
    };
    Ok(JoinView {
        server,
        code: invitation.code,
        device: computer_name(),
        certificate,
    })
}

/// The settings this computer will have on `server`: a pin is kept only
/// for the server it was given for.
fn fresh_settings(state: &AppState, server: &str) -> crate::settings::Settings {
    let mut settings = state.settings().clone();
    settings.backend = BackendChoice::Remote;
    if settings.server_url.trim() != server.trim() {
        settings.pinned_sha256 = None;
    }
    settings.server_url = server.trim().to_owned();
    settings
}

/// Joins: redeems the code for this device, keeps its token in the
/// keychain (this run's memory if there is none), saves the settings on
/// that server and opens the session there.
#[tauri::command]
pub async fn join_studio(
    app: AppHandle,
    state: State<'_, AppState>,
    server: String,
    code: String,
    device: String,
    sha256: Option<String>,
) -> UiResult<SettingsView> {
    let mut settings = fresh_settings(&state, &server);
    if let Some(sha256) = sha256 {
        settings.pinned_sha256 = Some(checked_pin(&sha256)?);
    }
    leasedesk_client::check_servers(&settings.server_url)?;
    let redeemed =
        Remote::redeem(&settings.server_url, trust_of(&settings), &code, &device).await?;
    let url = settings.server_url.clone();
    *state.run_token() = Some((url.clone(), redeemed.token.clone()));
    let note = keychain::store(&url, &redeemed.token).err();
    state.save_and_open(&app, settings).await?;
    let mut view = state.settings_view(None).await;
    view.keychain_note = view.keychain_note.or(note);
    Ok(view)
}

/// The open session's server, for calls about this person's devices.
async fn remote(state: &AppState) -> UiResult<Remote> {
    match state.session.read().await.as_ref().map(|s| &s.source) {
        Some(Source::Remote(remote)) => Ok(remote.clone()),
        Some(Source::Bundled(_)) => Err(UiError::new(
            Code::NoServer,
            "Devices belong to a studio's server: this computer works on its own store.",
        )),
        None => {
            Err(state.desk().await.err().unwrap_or_else(|| {
                UiError::new(Code::NoBackend, "No store is open: check Settings.")
            }))
        }
    }
}

#[tauri::command]
pub async fn my_devices(state: State<'_, AppState>) -> UiResult<MyDevices> {
    Ok(remote(&state).await?.my_devices().await?)
}

/// Revokes one of your devices. This one: signed out, its token forgotten
/// here too, and the window back on Settings' choice of a store.
#[tauri::command]
pub async fn revoke_my_device(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
) -> UiResult<Option<MyDevices>> {
    let remote = remote(&state).await?;
    let current = remote.my_devices().await?.current;
    remote.revoke_my_device(&id).await?;
    if id != current {
        return Ok(Some(remote.my_devices().await?));
    }
    let url = state.settings().server_url.trim().to_owned();
    *state.run_token() = None;
    let _ = keychain::forget(&url);
    crate::open_session(&app).await;
    Ok(None)
}

/// A one-time invite code and its link: for another computer of yours, or someone new.
#[derive(Serialize, ts_rs::TS)]
#[ts(export)]
pub struct InviteLink {
    invite: Invite,
    link: String,
}

impl InviteLink {
    pub(crate) fn new(link: String, invite: Invite) -> Self {
        Self { invite, link }
    }
}

#[tauri::command]
pub async fn add_computer(state: State<'_, AppState>) -> UiResult<InviteLink> {
    let remote = remote(&state).await?;
    let invite = remote.invite_myself(None).await?;
    Ok(InviteLink::new(
        join_link(&remote.server(), &invite.code),
        invite,
    ))
}

/// The invite link among the links the app was opened with (from the
/// deep-link plugin: a start's argument, a second start's, or macOS's
/// Apple event); any other leasedesk:// link is not ours to follow.
pub fn join_link_among(urls: &[Url]) -> Option<String> {
    urls.iter()
        .find(|url| url.scheme() == "leasedesk" && url.host_str() == Some("join"))
        .map(Url::to_string)
}

/// A link opened while the app runs: kept for the window, which is shown
/// and told to take it (so a window that is loading meanwhile takes it at
/// its start instead, and never twice).
pub fn received(app: &AppHandle, urls: &[Url]) {
    let Some(link) = join_link_among(urls) else {
        return;
    };
    *app.state::<AppState>().join_link() = Some(link);
    crate::show_main(app);
    shell_events::tell(app, shell_events::JoinLinkLeft, &());
}

/// The link the app was started with, once.
#[tauri::command]
pub fn take_join_link(state: State<'_, AppState>) -> Option<String> {
    state.join_link().take()
}

#[cfg(test)]
mod tests {
    use super::join_link_among;

    #[test]
    fn the_join_link_is_found_among_the_links_opened() {
        let urls = |list: &[&str]| list.iter().map(|s| s.parse().unwrap()).collect::<Vec<_>>();
        let link = "leasedesk://join?server=https%3A%2F%2Fa&code=7KQ2-ABCD-EFGH-JKMN";
        assert_eq!(join_link_among(&urls(&[link])).as_deref(), Some(link));
        assert_eq!(
            join_link_among(&urls(&["leasedesk://settings", link])).as_deref(),
            Some(link)
        );
        assert_eq!(join_link_among(&urls(&["leasedesk://open?path=a"])), None);
        assert_eq!(join_link_among(&urls(&["https://join/?code=1"])), None);
        assert_eq!(join_link_among(&[]), None);
    }
}

//! The open backend and workspace: bundled or remote as the settings say.
//! Switching closes one session and opens another; local files stay.

use std::sync::Arc;

use leasedesk::clock::Clock;
use leasedesk::desk::Desk;
use leasedesk::model::Participant;
use leasedesk::workspace::watch::Watcher;
use leasedesk::workspace::Workspace;
use leasedesk::{Backend, Bundled, Remote};

use crate::error::{UiError, UiResult};
use crate::settings::{BackendChoice, Dirs, Settings};

/// Where events come from: the bundled store wakes us after each write; a
/// server streams them (SSE).
#[derive(Clone)]
pub enum Source {
    Bundled(Bundled),
    Remote(Remote),
}

pub struct Session {
    pub desk: Desk,
    pub source: Source,
    /// Background work of this session, stopped when it closes.
    pub tasks: Vec<tauri::async_runtime::JoinHandle<()>>,
    pub watcher: Option<Watcher>,
}

impl Drop for Session {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Opens the backend and workspace the settings name. `token`: the remote
/// token (from the keychain, or this run's memory).
pub fn open(settings: &Settings, dirs: &Dirs, token: Option<&str>) -> UiResult<Session> {
    let (backend, source): (Arc<dyn Backend>, Source) = match settings.backend {
        BackendChoice::Bundled => {
            let me: Participant = format!("user:{}", settings.display_name).parse().map_err(
                |e: leasedesk::Error| {
                    UiError::new("invalid", format!("The display name cannot be used: {e}"))
                },
            )?;
            let store = Bundled::open(&dirs.bundled_store())?.acting_as(me);
            (Arc::new(store.clone()), Source::Bundled(store))
        }
        BackendChoice::Remote => {
            let url = settings.server_url.trim();
            if url.is_empty() {
                return Err(UiError::new(
                    "no_server",
                    "No server is set: open Settings and enter your team's server address.",
                ));
            }
            let Some(token) = token else {
                return Err(UiError::new(
                    "no_token",
                    "No token for this server: open Settings and paste the token your admin gave you.",
                ));
            };
            let remote = Remote::new(url, token)?;
            (Arc::new(remote.clone()), Source::Remote(remote))
        }
    };
    let workspace = Workspace::open(
        &settings.workspace,
        &dirs.workspace_state(),
        Clock::system(),
    )?;
    Ok(Session {
        desk: Desk::new(backend, workspace, Clock::system()),
        source,
        tasks: Vec::new(),
        watcher: None,
    })
}

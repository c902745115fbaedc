//! The desktop app's local API for editor plugins (`docs/API.md`, "Inside
//! the editor"): HTTP on `127.0.0.1`, a secret new at each start written
//! with the port to `plugin-api.json` for the user alone, and the app's own
//! operations on the open desk. A plugin never sees a token.
//!
//! It never reaches past loopback, never answers a web page (any `Origin`,
//! or a `Host` that is not loopback) and never decides a rule: the desk and
//! its backend do. What the app does after a plugin's act (the window, the
//! tray, notifications) is the host's, told through [`Acted`].
//!
//! - [`discovery`]: the file plugins find the app by, and its secret.
//! - [`blender`]: the Blender add-on as the app installs it.
//! - `guard`: who may call (host, origin, secret) and what a body may be.
//! - `files`: `FileState`, a local path's state, and the operations.
//! - `events`: the `state` events plugins follow.

pub mod blender;
pub mod discovery;
mod events;
mod files;
mod guard;
mod serve;

use std::path::Path;
use std::sync::Arc;

use leasedesk_desk::workspace::{CheckedOut, Closed};
use leasedesk_desk::Desk;
use leasedesk_model::model::{ArtifactId, Checkout, RepoPath};

pub use files::{FileState, State};

/// What a plugin did, for the app to tell the window, the tray and the
/// user as it does after its own clicks.
#[derive(Debug)]
pub enum Acted {
    CheckedOut(CheckedOut),
    CheckedIn(Closed),
    Extended(Checkout),
    Cancelled(Closed),
    /// The holder of this file was asked for it.
    Asked(ArtifactId),
    /// A copy of this file was placed (or brought up to date).
    Got(RepoPath),
}

/// The app's side of the API: what a plugin's act is followed by.
pub type OnActed = Arc<dyn Fn(Acted) + Send + Sync>;

/// The local API while the app runs: its server, its discovery file (removed
/// when this is dropped) and the desk it acts on.
pub struct PluginApi {
    shared: Arc<serve::Shared>,
    discovery: discovery::Written,
    server: tokio::task::JoinHandle<()>,
}

impl PluginApi {
    /// Listens on a port of loopback's choosing and writes the discovery
    /// file into `data_dir`. Runs on the current Tokio runtime.
    pub async fn start(data_dir: &Path, on_acted: OnActed) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        let secret = discovery::new_secret()?;
        let shared = Arc::new(serve::Shared::new(port, &secret, on_acted));
        let discovery = discovery::write(data_dir, port, &secret)?;
        let server = tokio::spawn(serve::accept(listener, shared.clone()));
        Ok(Self {
            shared,
            discovery,
            server,
        })
    }

    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// Where the discovery file is.
    pub fn discovery_file(&self) -> &Path {
        self.discovery.path()
    }

    /// The desk the API acts on from now on; `None` (with why) while no
    /// session is open, when every operation is refused with that reason.
    pub fn set_desk(&self, desk: Result<Desk, String>) {
        self.shared.set_desk(desk);
    }

    /// These files' states may have changed: plugins following `/events`
    /// are told each one's state now. Looks nothing up when none follows.
    pub async fn tell(&self, desk: &Desk, paths: impl IntoIterator<Item = RepoPath>) {
        self.shared.events.tell(desk, paths).await;
    }

    /// As [`PluginApi::tell`], for files known by id (the ledger's events).
    pub async fn tell_artifacts(&self, desk: &Desk, ids: &[ArtifactId]) {
        if self.shared.events.followed() && !ids.is_empty() {
            let paths = desk.paths(ids).await;
            self.tell(desk, paths.into_values()).await;
        }
    }
}

impl Drop for PluginApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

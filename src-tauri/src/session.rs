//! The open backend and workspace: bundled or remote as the settings say.
//! Switching closes one session and opens another; local files stay.

use std::sync::Arc;

use leasedesk_backend::Backend;
use leasedesk_client::Remote;
use leasedesk_client::Trust;
use leasedesk_desk::workspace::watch::Watcher;
use leasedesk_desk::workspace::Workspace;
use leasedesk_desk::{Desk, PreviewCache, DEFAULT_PREVIEW_CACHE_BYTES};
use leasedesk_engine::Bundled;
use leasedesk_engine::{Sweeper, SWEEP_EVERY};
use leasedesk_model::clock::Clock;
use leasedesk_model::model::Participant;

use crate::error::{Code, UiError, UiResult};
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
    /// Records the bundled store's lapses while the session keeps it open
    /// (a server sweeps its own); stops with the session.
    pub sweeper: Option<Sweeper>,
}

impl Session {
    /// The server a remote session uses now (the one that last answered).
    pub fn server_in_use(&self) -> Option<String> {
        match &self.source {
            Source::Remote(remote) => Some(remote.server()),
            Source::Bundled(_) => None,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Which certificates a remote session accepts: the system's roots and
/// `LEASEDESK_CA_CERT`, or only the one the user trusted in Settings.
pub fn trust_of(settings: &Settings) -> Trust {
    Trust {
        pinned_sha256: settings.pinned_sha256.clone(),
        ..Trust::from_env()
    }
}

/// Opens the backend and workspace the settings name. `token`: the remote
/// token (from the keychain, or this run's memory).
pub fn open(settings: &Settings, dirs: &Dirs, token: Option<&str>) -> UiResult<Session> {
    // What the desk's mirror of the studio's list is of: a data folder, or
    // the servers set (one studio, whichever of them answers).
    let (backend, source, sweeper, origin): (Arc<dyn Backend>, Source, _, String) = match settings
        .backend
    {
        BackendChoice::Bundled => {
            let me: Participant = format!("user:{}", settings.display_name).parse().map_err(
                |e: leasedesk_model::model::Invalid| {
                    UiError::new(
                        Code::Invalid,
                        format!("The display name cannot be used: {e}"),
                    )
                },
            )?;
            let store = Bundled::open(&dirs.bundled_store())?.acting_as(me);
            let sweeper = store.spawn_sweeper(SWEEP_EVERY);
            (
                Arc::new(store.clone()),
                Source::Bundled(store),
                Some(sweeper),
                format!("data folder {}", dirs.bundled_store().display()),
            )
        }
        BackendChoice::Remote => {
            let servers = settings.server_url.trim();
            if servers.is_empty() {
                return Err(UiError::new(
                    Code::NoServer,
                    "No server is set: open Settings and enter your studio's server address.",
                ));
            }
            let Some(token) = token else {
                return Err(UiError::new(
                    Code::NoToken,
                    "No token for this server: open Settings and paste the token your admin gave you.",
                ));
            };
            // Several servers, separated by commas: the client checks each
            // and moves to the next when one does not answer.
            let trust = trust_of(settings);
            let remote = Remote::with_trust(servers, token, trust)?;
            let origin = format!("servers {servers}");
            (
                Arc::new(remote.clone()),
                Source::Remote(remote),
                None,
                origin,
            )
        }
    };
    let workspace = Workspace::open(
        &settings.workspace,
        &dirs.workspace_state(),
        Clock::system(),
    )?;
    Ok(Session {
        desk: Desk::new(backend, workspace, Clock::system())
            .with_preview_cache(PreviewCache::new(
                dirs.previews(),
                DEFAULT_PREVIEW_CACHE_BYTES,
            ))
            .with_origin(origin)
            // This computer's device: its token's id, which check-outs made here carry.
            .with_device(
                token
                    .and_then(leasedesk_engine::token::id_of)
                    .map(str::to_owned),
            ),
        source,
        tasks: Vec::new(),
        watcher: None,
        sweeper,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use leasedesk_backend::Upload;
    use leasedesk_model::model::{CheckoutRequest, Event, RepoPath};

    use super::*;

    async fn lapses(backend: &dyn Backend) -> usize {
        let events: Vec<Event> = backend.events(0, 1000).await.unwrap().events;
        events.iter().filter(|e| e.kind == "lease.expired").count()
    }

    /// The app left open on a short lease made elsewhere (the CLI, another
    /// process on the same data folder): its lapse is recorded with no other
    /// write, so the Activity tab shows it. Closed, the session sweeps no more.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bundled_session_records_a_lapse_nobody_touches_until_it_closes() {
        let home = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            config: home.path().join("config"),
            data: home.path().join("data"),
            cache: home.path().join("cache"),
        };
        let settings = Settings {
            backend: BackendChoice::Bundled,
            server_url: String::new(),
            pinned_sha256: None,
            workspace: home.path().join("Leasedesk"),
            display_name: "alice".into(),
        };
        let session = open(&settings, &dirs, None).unwrap();
        let cli = Bundled::open(&dirs.bundled_store())
            .unwrap()
            .acting_as("user:alice".parse().unwrap());
        let path: RepoPath = "hero.psd".parse().unwrap();
        let source = home.path().join("hero.psd");
        std::fs::write(&source, b"v1").unwrap();
        let artifact = cli.import(&path, Upload::file(&source)).await.unwrap();
        let short = CheckoutRequest {
            ttl_seconds: Some(1),
            note: None,
        };
        cli.check_out(artifact.id, short.clone()).await.unwrap();

        let started = Instant::now();
        while lapses(session.desk.backend().as_ref()).await == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(6),
                "no lease.expired recorded while the app was open"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        drop(session);
        cli.check_out(artifact.id, short).await.unwrap();
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert_eq!(
            lapses(&cli).await,
            1,
            "a closed session's sweeper is gone with it"
        );
    }
}

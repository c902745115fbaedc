//! The `state` events of `GET /events`: a file's state each time it may
//! have changed, to every plugin following. A follower too slow to read
//! loses the oldest (it reads the file's state again when it needs it);
//! nothing waits for it.

use futures_util::Stream;
use leasedesk_desk::Desk;
use leasedesk_model::model::RepoPath;
use tokio::sync::broadcast;

use crate::files::{state_of, FileState};

/// How many states wait for a slow follower before the oldest are dropped.
const BACKLOG: usize = 256;

/// The most plugins following at once (each holds a connection).
pub const MAX_FOLLOWERS: usize = 32;

pub struct Events {
    sender: broadcast::Sender<FileState>,
}

impl Events {
    pub fn new() -> Self {
        Self {
            sender: broadcast::channel(BACKLOG).0,
        }
    }

    pub fn followed(&self) -> bool {
        self.sender.receiver_count() > 0
    }

    pub fn send(&self, state: FileState) {
        let _ = self.sender.send(state);
    }

    /// Each of `paths`' state now, to every follower.
    pub async fn tell(&self, desk: &Desk, paths: impl IntoIterator<Item = RepoPath>) {
        if !self.followed() {
            return;
        }
        let mut paths: Vec<RepoPath> = paths.into_iter().collect();
        paths.sort();
        paths.dedup();
        for path in paths {
            match state_of(desk, &path).await {
                Ok(state) => self.send(state),
                Err(e) => tracing::debug!("no state for plugins of {path}: {e}"),
            }
        }
    }

    /// A new follower's stream of `text/event-stream` chunks, or `None`
    /// when [`MAX_FOLLOWERS`] already follow.
    pub fn follow(&self) -> Option<impl Stream<Item = bytes::Bytes> + Send + 'static> {
        if self.sender.receiver_count() >= MAX_FOLLOWERS {
            return None;
        }
        let receiver = self.sender.subscribe();
        let hello =
            futures_util::stream::once(async { bytes::Bytes::from_static(b": following\n\n") });
        let states = futures_util::stream::unfold(receiver, |mut receiver| async move {
            loop {
                let next = tokio::time::timeout(KEEP_ALIVE, receiver.recv()).await;
                let chunk = match next {
                    // A comment now and then, so a dead link is found.
                    Err(_) => bytes::Bytes::from_static(b": still here\n\n"),
                    Ok(Ok(state)) => event(&state),
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
                    Ok(Err(broadcast::error::RecvError::Closed)) => return None,
                };
                return Some((chunk, receiver));
            }
        });
        Some(futures_util::StreamExt::chain(hello, states))
    }
}

/// How long a follower may hear nothing before a comment is sent.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

fn event(state: &FileState) -> bytes::Bytes {
    let data = serde_json::to_string(state).unwrap_or_default();
    format!("event: state\ndata: {data}\n\n").into()
}

//! What the desktop app shows and does, without the desktop: the file list
//! with each file's holder and local state (`overview`), each action the user
//! can take on a lease (`leases`), proposals and versions beside the head
//! (`beside`), previews (`previews`), the ledger (`events`, `history`),
//! reminders, requests to a holder (`requests`), review (`review`) and
//! your inbox of it (`inbox`), and joining a studio from an invite
//! (`join`), through the `workspace` of local copies and one backend.
//!
//! Nothing here acts on its own: every lease change starts with a call from
//! the user's click; a request never releases anything. Never knows Tauri.

pub mod workspace;

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_backend as backend;
use leasedesk_blobs as blobs;
use leasedesk_client as remote;
use leasedesk_files::local_file;
use leasedesk_model::{clock, error, model};

mod beside;
mod elsewhere;
mod events;
mod history;
mod inbox;
mod join;
mod leases;
mod listing;
mod mirror;
mod offline;
mod overview;
mod previews;
mod reminders;
mod requests;
mod review;

pub use beside::Decision;
pub use elsewhere::{copy_here, held_elsewhere};
pub use events::Activity;
pub use history::{CheckoutEnd, CheckoutEntry, HistoryEntry, HistoryPage};
pub use inbox::{
    alerts, calls_for_you, inbox_title, may_reach_inbox, InboxAlert, InboxNews, MOST_ALERTS,
};
pub use join::{computer_name, join_link, read_invitation, Invitation};
pub use leasedesk_blobs::previews::{
    PreviewCache, DEFAULT_BOUND_BYTES as DEFAULT_PREVIEW_CACHE_BYTES,
};
pub use leases::Restored;
pub use listing::{FolderRows, FoundRows, MOST_ROWS};
pub use mirror::{FillProgress, ListChanges, Synced, MIRROR_PAGE};
pub use offline::{is_unreachable, reconnect_delay, Action, Connection};
pub use overview::{FileRow, Overview};
pub use reminders::{due_reminders, time_left, Reminder};
pub use requests::{concerns, is_request_event, news, waiting_for_answer, RequestNews, Told};
pub use review::{is_review_event, REVIEW_EVENTS};

use std::sync::Arc;

use crate::backend::Backend;
use crate::clock::Clock;
use crate::error::Result;
use crate::model::*;
use crate::workspace::Workspace;

#[derive(Clone)]
pub struct Desk {
    backend: Arc<dyn Backend>,
    workspace: Workspace,
    clock: Clock,
    previews: PreviewCache,
    digests: Arc<std::sync::Mutex<previews::KnownDigests>>,
    link: Arc<offline::Link>,
    /// The server or data folder this desk works on: what its mirror is of.
    origin: String,
    /// One mirror sync at a time (a fill is not made twice at once).
    mirror_turn: Arc<tokio::sync::Mutex<()>>,
    /// Where the window's pages of a folder began (see `listing`).
    places: Arc<std::sync::Mutex<listing::Places>>,
    /// Who this desk works as, once the server said (see [`Desk::me`]).
    me: Arc<std::sync::OnceLock<Participant>>,
    /// What changed in the mirror since the window last asked.
    changed: Arc<std::sync::Mutex<mirror::Changed>>,
    /// The last event the stream told of (see [`Desk::heard_of`]).
    heard: Arc<std::sync::atomic::AtomicU64>,
    /// This computer's device on a server: its token's id (`elsewhere`).
    device: Option<String>,
    /// Where the inbox was last looked at, and its unread count (`inbox`).
    inbox: Arc<inbox::Looked>,
}

impl Desk {
    /// A desk whose previews are cached beside the workspace's index (see
    /// [`Desk::with_preview_cache`] for the app's cache folder).
    pub fn new(backend: Arc<dyn Backend>, workspace: Workspace, clock: Clock) -> Self {
        let previews = PreviewCache::new(
            workspace.state_dir().join("previews"),
            DEFAULT_PREVIEW_CACHE_BYTES,
        );
        Self {
            backend,
            workspace,
            clock,
            previews,
            digests: Default::default(),
            link: Default::default(),
            origin: String::new(),
            mirror_turn: Default::default(),
            places: Default::default(),
            me: Default::default(),
            changed: Default::default(),
            heard: Default::default(),
            device: None,
            inbox: Default::default(),
        }
    }

    /// Names the server or data folder this desk works on, which its
    /// mirror of the studio's list is of.
    pub fn with_origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = origin.into();
        self
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Keeps previews in `cache` instead.
    pub fn with_preview_cache(mut self, cache: PreviewCache) -> Self {
        self.previews = cache;
        self
    }

    pub fn preview_cache(&self) -> &PreviewCache {
        &self.previews
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Whether the server answered the desk's last request.
    pub fn connection(&self) -> Connection {
        *self.link.connection.borrow()
    }

    /// Told each time the connection changes (offline, or back).
    pub fn connection_changes(&self) -> tokio::sync::watch::Receiver<Connection> {
        self.link.connection.subscribe()
    }

    /// Who you are: asked of the server once, then kept (a desk works as
    /// one participant: another token is another desk), so an event in the
    /// studio costs no question of it.
    pub async fn me(&self) -> Result<Participant> {
        if let Some(me) = self.me.get() {
            return Ok(me.clone());
        }
        let me = self.backend.me().await?;
        Ok(self.me.get_or_init(|| me).clone())
    }

    /// Asks the server who you are, only to learn whether it answers: the
    /// one request made to reconnect. Any answer, even a refusal, is a server.
    pub async fn probe(&self) -> Connection {
        match self.backend.me().await {
            Err(e) if is_unreachable(&e) => self.link.went_offline(self.clock.now()),
            _ => self.link.came_online(),
        }
        self.connection()
    }

    /// Notes a server that did not answer, and gives `action`'s refusal for it.
    fn refused_offline<T>(&self, action: Action, outcome: Result<T>) -> Result<T> {
        outcome.map_err(|e| {
            if is_unreachable(&e) {
                self.link.went_offline(self.clock.now());
                action.refused()
            } else {
                e
            }
        })
    }

    /// What the server `fetched`; if it did not answer, noted, and `part`
    /// of the view last seen (the server's error when none was).
    fn or_as_seen<T>(
        &self,
        fetched: Result<T>,
        part: impl FnOnce(&offline::Seen) -> T,
    ) -> Result<T> {
        match fetched {
            Err(e) if is_unreachable(&e) => {
                self.link.went_offline(self.clock.now());
                self.link.seen().as_ref().map(part).ok_or(e)
            }
            fetched => fetched,
        }
    }

    /// A file as the mirror has it and your check-outs as last seen, for
    /// when no server answers.
    fn seen_row_parts(&self, artifact: ArtifactId) -> Option<(Artifact, Vec<Checkout>)> {
        let checkouts = self.link.seen().as_ref()?.checkouts.clone();
        let found = self.workspace.mirror().mirror_artifacts(&[artifact]).ok()?;
        Some((found.into_iter().next()?, checkouts))
    }
}

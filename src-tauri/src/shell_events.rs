//! What the shell tells the window (Tauri's events, not the ledger's):
//! each event by its name there, with the type of its payload, and
//! [`tell`], the one way one is sent. `ipc` writes them into the window's
//! `Shell.ts` beside the commands, so the window listens by these names
//! and payloads or fails its build.
//!
//! It never decides when to tell: its callers do.

use leasedesk_desk::{FileRow, FillProgress, InboxNews, ListChanges};
use leasedesk_model::model::{Event, Request};
use serde::Serialize;
use tauri::{AppHandle, Emitter};
use ts_rs::TS;

use crate::Notice;

/// An event the shell tells the window, by its name there.
pub trait ShellEvent {
    const NAME: &'static str;
    type Payload: Serialize + TS + 'static;
}

/// Sends the window `event` with its payload: the only `emit` of the
/// shell (a test in `ipc` refuses another).
pub fn tell<E: ShellEvent>(app: &AppHandle, _event: E, payload: &E::Payload) {
    if let Err(e) = app.emit(E::NAME, payload) {
        tracing::debug!("the window was not told {}: {e}", E::NAME);
    }
}

/// Is shown each event there is ([`each`]).
pub trait EventVisitor {
    fn visit<E: ShellEvent>(&mut self);
}

macro_rules! events {
    ($( $(#[doc = $doc:literal])* $event:ident = $name:literal : $payload:ty ; )*) => {
        $(
            $(#[doc = $doc])*
            pub struct $event;

            impl ShellEvent for $event {
                const NAME: &'static str = $name;
                type Payload = $payload;
            }
        )*

        /// Shows `visitor` every event, in this table's order.
        pub fn each(visitor: &mut impl EventVisitor) {
            $( visitor.visit::<$event>(); )*
        }
    };
}

events! {
    /// The store, the session or your check-outs changed: the window
    /// reads what it shows again.
    StoreChanged = "store-changed": ();
    /// Others' work changed the list only: what changed in it, which the
    /// window reads again where it shows it.
    ListChanged = "list-changed": ListChanges;
    /// A file's row as it is now (its local copy changed).
    RowChanged = "row": FileRow;
    /// Events of the ledger, oldest first, as they come.
    NewEvents = "activity": Vec<Event>;
    /// How far the first reading of the list is.
    MirrorProgress = "mirror-progress": FillProgress;
    /// A notice for the window (the desktop's notification, if any, says it too).
    Noticed = "notice": Notice;
    /// A request to you for a file you hold.
    AskedOfYou = "asked": Asked;
    /// A click outside the window left it something to do: `take_intent`.
    IntentLeft = "intent": ();
    /// An invite link was opened: `take_join_link`.
    JoinLinkLeft = "join-link": ();
    /// New inbox items (oldest first) and the unread count.
    InboxArrived = "inbox": InboxNews;
}

/// What the window gets with a request to you: the notice's words and the
/// request its buttons act on.
#[derive(Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Asked {
    pub title: String,
    pub body: String,
    pub request: Request,
}

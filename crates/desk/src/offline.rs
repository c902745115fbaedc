//! The desk without its server: the last view it fetched, shown with when
//! that was, and each click refused with its own reason. Nothing here sends
//! anything by itself: reconnecting only asks the server who you are
//! (`Desk::probe`), and a refused click is sent again only when pressed again.

use std::time::Duration;

use serde::Serialize;

use crate::error::Error;
use crate::model::*;

/// Whether the server answers, as the desk last found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Connection {
    Online,
    /// No server answered; `since` is when the view kept was fetched (or when
    /// the first request failed, if there was none).
    Offline {
        since: Timestamp,
    },
}

impl Connection {
    pub fn offline_since(self) -> Option<Timestamp> {
        match self {
            Connection::Online => None,
            Connection::Offline { since } => Some(since),
        }
    }
}

/// A click that needs the server. Offline, each is refused with what it did
/// not do and what stays as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    CheckOut,
    Extend,
    CheckIn,
    CancelCheckout,
    Decide,
    GetCopy,
    Update,
    Add,
    Restore,
    /// Asking a holder to release a file.
    Ask,
    /// Replying to a request, or taking one back.
    Reply,
    /// A comment, a thread resolved or reopened, a review decision.
    Comment,
    /// A read only the server can answer (history, a version's copy, a proposal's file).
    Read,
}

impl Action {
    /// The refusal for this click when no server answers.
    pub fn refused(self) -> Error {
        let why = match self {
            Action::CheckOut => {
                "so the file was not checked out: only the server gives a lease. Nothing changed here; check it out again once the server is back"
            }
            Action::Extend => {
                "so your lease was not extended: it ends when it was going to. Press Extend again once the server is back"
            }
            Action::CheckIn => {
                "so your check-in was not sent: your file stays checked out and writable here, and nothing goes up until you press Check in again once the server is back"
            }
            Action::CancelCheckout => {
                "so your check-out was not cancelled: your file and your lease are as they were"
            }
            Action::Decide => {
                "so the proposal was not decided: decide again once the server is back"
            }
            Action::GetCopy => {
                "so your copy could not be brought here: its bytes are on the server. Your lease is as it was"
            }
            Action::Update => {
                "so the newest version could not be brought here: your copy is as it was"
            }
            Action::Add => "so the file was not added: it is where it was",
            Action::Restore => "so nothing was restored: your copy is as it was",
            Action::Ask => "so your request was not sent: ask again once the server is back",
            Action::Reply => {
                "so your answer was not sent: the request is as it was. Send it again once the server is back"
            }
            Action::Comment => {
                "so your comment or decision was not sent: send it again once the server is back"
            }
            Action::Read => "and this needs it: try again once the server is back",
        };
        Error::Unavailable(format!("the server cannot be reached, {why}"))
    }
}

/// Whether an error means the server did not answer (or answered that it
/// cannot serve): the desk then shows what it kept and marks it offline.
pub fn is_unreachable(error: &Error) -> bool {
    matches!(error, Error::Unavailable(_))
}

/// The wait before reconnection attempt `attempt` (0 first): doubling from
/// half a second, never past five, so the mark goes within seconds of the
/// server's return without a dead server being asked many times a second.
pub fn reconnect_delay(attempt: u32) -> Duration {
    const FIRST: Duration = Duration::from_millis(500);
    const MOST: Duration = Duration::from_secs(5);
    FIRST
        .checked_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX))
        .map_or(MOST, |wait| wait.min(MOST))
}

/// The last answers the server gave, kept to show while it gives none.
#[derive(Clone, Debug)]
pub(super) struct Seen {
    pub me: Participant,
    pub checkouts: Vec<Checkout>,
    pub proposals: Vec<Proposal>,
    /// The requests to and from you that still stand.
    pub requests: Vec<Request>,
    pub fetched_at: Timestamp,
}

/// The connection as last found, told to whoever watches it, and the view kept.
pub(super) struct Link {
    pub connection: tokio::sync::watch::Sender<Connection>,
    pub seen: std::sync::Mutex<Option<Seen>>,
}

impl Default for Link {
    fn default() -> Self {
        Self {
            connection: tokio::sync::watch::Sender::new(Connection::Online),
            seen: Default::default(),
        }
    }
}

impl Link {
    pub fn seen(&self) -> std::sync::MutexGuard<'_, Option<Seen>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks the server silent, from when the view kept was fetched; a mark
    /// already set keeps its time.
    pub fn went_offline(&self, now: Timestamp) {
        let since = self.seen().as_ref().map_or(now, |seen| seen.fetched_at);
        self.connection.send_if_modified(|connection| {
            let was_online = *connection == Connection::Online;
            if was_online {
                *connection = Connection::Offline { since };
            }
            was_online
        });
    }

    pub fn came_online(&self) {
        self.connection.send_if_modified(|connection| {
            let was_offline = *connection != Connection::Online;
            *connection = Connection::Online;
            was_offline
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnecting_waits_a_few_seconds_at_most() {
        let waits: Vec<u128> = (0..8).map(|n| reconnect_delay(n).as_millis()).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 5000, 5000, 5000, 5000]);
        assert_eq!(reconnect_delay(u32::MAX), Duration::from_secs(5));
    }

    #[test]
    fn each_refused_click_says_what_it_did_not_do() {
        let message = |action: Action| match action.refused() {
            Error::Unavailable(message) => message,
            other => panic!("{action:?} refused as {other:?}"),
        };
        let check_in = message(Action::CheckIn);
        assert!(check_in.contains("not sent"), "{check_in}");
        assert!(check_in.contains("writable"), "{check_in}");
        assert!(check_in.contains("press Check in again"), "{check_in}");
        assert!(message(Action::CheckOut).contains("not checked out"));
        assert!(message(Action::Extend).contains("not extended"));
        assert!(message(Action::CancelCheckout).contains("not cancelled"));
        let all = [
            Action::CheckOut,
            Action::Extend,
            Action::CheckIn,
            Action::CancelCheckout,
            Action::Decide,
            Action::GetCopy,
            Action::Update,
            Action::Add,
            Action::Restore,
            Action::Ask,
            Action::Reply,
            Action::Read,
        ];
        let distinct: std::collections::HashSet<String> = all.into_iter().map(message).collect();
        assert_eq!(distinct.len(), all.len(), "one reason per click");
        assert!(distinct
            .iter()
            .all(|m| m.starts_with("the server cannot be reached")));
    }

    #[test]
    fn the_offline_mark_keeps_the_time_the_view_was_fetched() {
        let link = Link::default();
        let fetched = chrono::DateTime::parse_from_rfc3339("2026-12-01T14:02:00Z")
            .unwrap()
            .to_utc();
        let later = fetched + chrono::TimeDelta::minutes(3);
        // Never online with a view: the first failure's time.
        link.went_offline(later);
        assert_eq!(link.connection.borrow().offline_since(), Some(later));
        link.came_online();
        assert_eq!(*link.connection.borrow(), Connection::Online);

        *link.seen() = Some(Seen {
            me: "user:alice".parse().unwrap(),
            checkouts: Vec::new(),
            proposals: Vec::new(),
            requests: Vec::new(),
            fetched_at: fetched,
        });
        let mut watcher = link.connection.subscribe();
        link.went_offline(later);
        assert!(watcher.has_changed().unwrap(), "going offline is told");
        watcher.mark_unchanged();
        link.went_offline(later + chrono::TimeDelta::minutes(1));
        assert!(!watcher.has_changed().unwrap(), "offline again is no news");
        assert_eq!(link.connection.borrow().offline_since(), Some(fetched));
        link.came_online();
        assert!(watcher.has_changed().unwrap(), "coming back is told");
    }
}

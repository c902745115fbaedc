//! Notices: a commit that wrote events wakes the other servers' followers
//! with a `NOTIFY` (at most one a window from each server), and this
//! server's listener wakes its own followers on theirs. Never carries data:
//! a notice only says "read the ledger again".

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{wait, PgStore};

/// The channel on which commits that wrote events wake every server's followers.
const CHANNEL: &str = "leasedesk_events";
/// At most one notice on [`CHANNEL`] from a server in this time: commits
/// within it are announced together at its end.
const ANNOUNCE_WINDOW: Duration = Duration::from_millis(25);

impl PgStore {
    /// Sends the notice a command's last commits may still be owed, as the store closes.
    pub(super) fn announce_what_is_owed(&self) {
        if self.announcements.owed.load(Ordering::Acquire) {
            let sql = &self.announcements.sql;
            if let Err(e) = self
                .connection()
                .and_then(|c| Ok(wait(c.batch_execute(sql))?))
            {
                tracing::warn!("could not announce the last changes on {}: {e}", self.name);
            }
        }
    }
}

/// The notices of this store's commits. Each notice wakes every server's
/// listener, and PostgreSQL signals each listening backend: one a commit
/// cost a fifth of PostgreSQL's lease rate (measured with pgbench, two
/// listeners). So a commit carries its `NOTIFY` only when none went out in
/// the last [`ANNOUNCE_WINDOW`]; otherwise, once committed, it is owed one,
/// which [`announce`] sends at the window's end for all such commits.
pub(super) struct Announcements {
    /// `NOTIFY leasedesk_events, 'ORIGIN'`.
    pub(super) sql: String,
    /// This store's notices carry it, and its own listener skips them: its
    /// own followers are woken in-process.
    pub(super) origin: String,
    /// When the last notice went out (or was carried by a commit).
    last: std::sync::Mutex<Option<Instant>>,
    /// A commit went unannounced.
    owed: AtomicBool,
    wake: tokio::sync::Notify,
}

impl Announcements {
    pub(super) fn new() -> Self {
        let origin = uuid::Uuid::new_v4().to_string();
        Self {
            sql: format!("NOTIFY {CHANNEL}, '{origin}'"),
            origin,
            last: Default::default(),
            owed: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
        }
    }

    /// Takes the notice's turn if the window since the last one is over;
    /// else answers when it will be.
    fn take_turn(&self) -> std::result::Result<(), Instant> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match *last {
            Some(at) if now < at + ANNOUNCE_WINDOW => Err(at + ANNOUNCE_WINDOW),
            _ => {
                *last = Some(now);
                Ok(())
            }
        }
    }

    /// Whether a commit about to be sent carries the notice itself.
    pub(super) fn carry(&self) -> bool {
        self.take_turn().is_ok()
    }

    /// After a commit that did not carry its notice (only once committed: a
    /// notice sent before would wake followers to read too early).
    pub(super) fn owe(&self) {
        self.owed.store(true, Ordering::Release);
        self.wake.notify_one();
    }
}

/// Sends the notices owed (see [`Announcements`]) on a connection of its own.
pub(super) async fn announce(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    announcements: Arc<Announcements>,
    name: String,
) {
    let mut client: Option<tokio_postgres::Client> = None;
    loop {
        announcements.wake.notified().await;
        while let Err(turn) = announcements.take_turn() {
            tokio::time::sleep_until(turn.into()).await;
        }
        if !announcements.owed.swap(false, Ordering::AcqRel) {
            continue;
        }
        let sent = match &client {
            Some(c) if !c.is_closed() => c.batch_execute(&announcements.sql).await,
            _ => match config.connect(tls.clone()).await {
                Ok((c, connection)) => {
                    tokio::spawn(connection);
                    client.insert(c).batch_execute(&announcements.sql).await
                }
                Err(e) => Err(e),
            },
        };
        if let Err(e) = sent {
            tracing::warn!("cannot announce changes on {name}: {e}");
            client = None;
            tokio::time::sleep(Duration::from_secs(1)).await;
            announcements.owe();
        }
    }
}

/// Wakes `changed` on every notice of new events from another store (any
/// server's but this one's), listening on a connection of its own, made
/// again (after a pause) when it is lost. Each (re)connection wakes too: a
/// follower then reads what it may have missed.
pub(super) async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    changed: Arc<tokio::sync::Notify>,
    origin: String,
    name: String,
) {
    loop {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                let subscribe = format!("LISTEN {CHANNEL}");
                let listening = client.batch_execute(&subscribe);
                tokio::pin!(listening);
                let mut subscribed = false;
                loop {
                    tokio::select! {
                        done = &mut listening, if !subscribed => {
                            if let Err(e) = done {
                                tracing::warn!("cannot listen for changes on {name}: {e}");
                                break;
                            }
                            subscribed = true;
                            changed.notify_waiters();
                        }
                        message = messages.next() => match message {
                            Some(Ok(tokio_postgres::AsyncMessage::Notification(notice))) => {
                                if notice.payload() != origin {
                                    changed.notify_waiters()
                                }
                            }
                            Some(Ok(_)) => {}
                            Some(Err(e)) => {
                                tracing::warn!("lost the change notices of {name}: {e}");
                                break;
                            }
                            None => break,
                        }
                    }
                }
            }
            Err(e) => tracing::warn!("cannot listen for changes on {name}: {e}"),
        }
        changed.notify_waiters();
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

//! A transfer's dealings with a link that may break: a bounded backoff
//! after each drop, told to the caller, and giving up only after a long
//! stretch in which nothing moved.

use std::time::{Duration, Instant};

use crate::backend::{Notes, TransferNote};
use crate::error::{Error, Result};

/// The first wait after a drop, doubled at each drop up to [`MOST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(250);
const MOST_WAIT: Duration = Duration::from_secs(10);
/// A transfer gives up once nothing moved for this long.
const GIVE_UP_AFTER: Duration = Duration::from_secs(600);

/// A transfer's dealings with a link that may break: how long to wait next,
/// since when nothing moved, and whom to tell.
pub(super) struct Link {
    notes: Option<Notes>,
    wait: Duration,
    quiet_since: Instant,
}

impl Link {
    pub(super) fn new(notes: Option<Notes>) -> Self {
        Self {
            notes,
            wait: FIRST_WAIT,
            quiet_since: Instant::now(),
        }
    }

    pub(super) fn note(&self, note: TransferNote) {
        if let Some(notes) = &self.notes {
            notes(note);
        }
    }

    /// Bytes moved: the next drop waits little again.
    pub(super) fn moved(&mut self) {
        self.wait = FIRST_WAIT;
        self.quiet_since = Instant::now();
    }

    /// After a broken link: waits (telling so), or gives up if nothing
    /// moved for too long.
    pub(super) async fn pause(&mut self, broke: &Error) -> Result<()> {
        if self.quiet_since.elapsed() >= GIVE_UP_AFTER {
            return Err(Error::Unavailable(format!(
                "nothing moved for {} minutes ({broke}): try again later",
                GIVE_UP_AFTER.as_secs() / 60
            )));
        }
        self.note(TransferNote::Reconnecting {
            after: self.wait,
            reason: broke.to_string(),
        });
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(MOST_WAIT);
        Ok(())
    }

    /// Runs `f` until it answers, waiting out broken links.
    pub(super) async fn retry<T, F: std::future::Future<Output = Result<T>>>(
        &mut self,
        f: impl Fn() -> F,
    ) -> Result<T> {
        loop {
            match f().await {
                Err(e) if broken(&e) => self.pause(&e).await?,
                done => return done,
            }
        }
    }
}

/// Whether an error is the link's (worth waiting out), not an answer.
pub(super) fn broken(e: &Error) -> bool {
    matches!(e, Error::Unavailable(_))
}

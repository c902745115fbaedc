//! The backend's one clock. Rules take `now` as an argument; only the edges read
//! this, so tests set the time instead of waiting for it.

use std::sync::{Arc, Mutex};

use chrono::{DurationRound, TimeDelta, Utc};

use crate::model::Timestamp;

#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// `None`: the system clock. `Some`: a clock that moves only when told to.
    manual: Option<Arc<Mutex<Timestamp>>>,
}

impl Clock {
    pub fn system() -> Self {
        Self { manual: None }
    }

    /// A clock stopped at `start` (truncated to the millisecond).
    pub fn manual(start: Timestamp) -> Self {
        Self {
            manual: Some(Arc::new(Mutex::new(to_millis(start)))),
        }
    }

    /// A clock only tests move: stores then use it rather than their own.
    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }

    pub fn now(&self) -> Timestamp {
        match &self.manual {
            None => to_millis(Utc::now()),
            Some(time) => *time.lock().expect("clock lock"),
        }
    }

    /// Moves a manual clock forward. Panics on the system clock: only tests move time.
    pub fn advance(&self, by: std::time::Duration) {
        let time = self
            .manual
            .as_ref()
            .expect("only a manual clock can be moved");
        let mut time = time.lock().expect("clock lock");
        *time += TimeDelta::from_std(by).expect("duration in range");
        *time = to_millis(*time);
    }
}

/// The store keeps milliseconds; so does every time the backend hands out.
pub fn to_millis(t: Timestamp) -> Timestamp {
    t.duration_trunc(TimeDelta::milliseconds(1)).unwrap_or(t)
}

//! What a connection's guard and its service share: requests in flight, when
//! the connection went idle, and the refusal a stand-in request answers. It
//! never reads or writes the socket.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::Refusal;

/// What the guard and the connection's service share.
pub struct ConnState {
    inner: Mutex<Shared>,
}

pub(super) struct Shared {
    /// Requests handed to hyper and not yet answered in full.
    pub(super) in_flight: usize,
    /// When the last answer ended (or the connection began).
    pub(super) idle_since: Instant,
    /// Requests the service has been given so far.
    pub(super) served: u64,
    /// The number of the request that stands in for a refused head.
    pub(super) refusal: Option<(u64, Refusal)>,
}

impl ConnState {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Shared {
                in_flight: 0,
                idle_since: Instant::now(),
                served: 0,
                refusal: None,
            }),
        })
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Called by the service for each request, in order: the refusal this
    /// request stands in for, if it is the stand-in.
    pub fn next_request(&self) -> Option<Refusal> {
        let mut shared = self.lock();
        let number = shared.served;
        shared.served += 1;
        match &shared.refusal {
            Some((at, _)) if *at == number => shared.refusal.take().map(|(_, r)| r),
            _ => None,
        }
    }

    /// Called for each request not read through a guard (HTTP/2's streams).
    pub fn began(&self) {
        self.lock().in_flight += 1;
    }

    /// How long no request has been in flight; `None` while one is.
    pub fn idle_for(&self) -> Option<Duration> {
        let shared = self.lock();
        (shared.in_flight == 0).then(|| shared.idle_since.elapsed())
    }

    /// Called when an answer has been written in full (or dropped).
    pub fn answered(&self) {
        let mut shared = self.lock();
        shared.in_flight = shared.in_flight.saturating_sub(1);
        shared.idle_since = Instant::now();
    }
}

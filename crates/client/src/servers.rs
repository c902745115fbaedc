//! The servers a client may use and the one it uses now: the list as given,
//! sending a request round them when a connection fails (as far as the
//! request may be sent again), and moving to the one that answered (for every
//! clone of the client). An answer, even a refusal, never moves it. Never
//! reads an answer's body beyond handing a refusal to `errors`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::RequestBuilder;

use super::errors::error_from;
use super::Remote;
use crate::error::{Error, Result};
use crate::trust;

/// How often an idempotent request goes round the servers when the
/// connection fails (a pause between rounds, none between servers).
const ATTEMPTS: usize = 3;

/// How far a request may be sent again when its connection fails.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Resend {
    /// Repeating it does nothing more (a read, a check-in of a file, a
    /// release): round the servers, up to [`ATTEMPTS`] times.
    Safe,
    /// A change: to the next server only while no connection was made,
    /// since then nothing was sent.
    IfUnsent,
    /// A body that can be sent once (a stream): one try.
    Never,
}

/// Called with (the server that did not answer, the one used now).
type OnMove = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The servers a client may use, in the order given, and the one it uses now:
/// shared by every clone, so one request's move holds for all later ones.
pub(super) struct Servers {
    pub(super) urls: Vec<String>,
    pub(super) current: AtomicUsize,
    pub(super) on_move: Mutex<Option<OnMove>>,
}

/// Checks a list of server addresses as a client reads them, connecting to
/// nothing: what Settings refuses before it saves.
pub fn check_servers(list: &str) -> Result<()> {
    Servers::parse(list).map(|_| ())
}

impl Servers {
    /// URLs separated by commas, each `http(s)://host[:port]`.
    pub(super) fn parse(list: &str) -> Result<Self> {
        let mut urls = Vec::new();
        for given in list.split(',').map(str::trim) {
            if given.is_empty() {
                return Err(Error::Invalid(format!(
                    "the server list {list:?} has an empty entry: give URLs separated by commas"
                )));
            }
            let wrong = |why: &str| {
                Error::Invalid(format!(
                    "server {given:?} is not http(s)://host[:port]: {why}"
                ))
            };
            let url = reqwest::Url::parse(given).map_err(|e| wrong(&e.to_string()))?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(wrong("the scheme must be http or https"));
            }
            if url.host_str().is_none_or(str::is_empty) {
                return Err(wrong("it names no host"));
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Err(wrong(
                    "a URL carries no user or password (the token is LEASEDESK_TOKEN)",
                ));
            }
            if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
                return Err(wrong("it has a path, query or fragment"));
            }
            urls.push(given.trim_end_matches('/').to_owned());
        }
        Ok(Self {
            urls,
            current: AtomicUsize::new(0),
            on_move: Mutex::new(None),
        })
    }

    /// `index` answered a request begun on `start`: use it from now on, and
    /// say so once (when several requests move together, one says it).
    fn answered(&self, start: usize, index: usize) {
        if index == start
            || self
                .current
                .compare_exchange(start, index, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return;
        }
        let on_move = self
            .on_move
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(on_move) = on_move {
            on_move(&self.urls[start], &self.urls[index]);
        }
    }
}

impl Remote {
    /// Sends a request built for a server's URL. When the connection fails
    /// it goes to the next server (wrapping round), as far as `resend`
    /// allows. An answer, even a refusal, is never taken elsewhere.
    pub(super) async fn send(
        &self,
        resend: Resend,
        build: impl Fn(&str) -> Result<RequestBuilder>,
    ) -> Result<reqwest::Response> {
        let urls = &self.servers.urls;
        let start = self.servers.current.load(Ordering::Acquire);
        let tries = match resend {
            Resend::Safe => ATTEMPTS * urls.len(),
            Resend::IfUnsent => urls.len(),
            Resend::Never => 1,
        };
        let mut failures = Vec::new();
        for attempt in 0..tries {
            if attempt > 0 && attempt % urls.len() == 0 {
                let round = attempt / urls.len();
                tokio::time::sleep(Duration::from_millis(100 << round)).await;
            }
            let index = (start + attempt) % urls.len();
            let url = &urls[index];
            let sent = build(url)?.send().await;
            // A refused certificate stays refused, on whichever server.
            if let Some(refusal) = sent.as_ref().err().and_then(|e| trust::refusal_of(e, url)) {
                return Err(refusal);
            }
            match sent {
                Ok(response) => {
                    self.servers.answered(start, index);
                    return if response.status().is_success() {
                        Ok(response)
                    } else {
                        Err(error_from(response).await)
                    };
                }
                // No connection was made, so nothing was sent.
                Err(e) if e.is_connect() => failures.push((url, causes(e))),
                Err(e) if resend == Resend::Safe && is_connection_failure(&e) => {
                    failures.push((url, causes(e)))
                }
                Err(e) if is_connection_failure(&e) => {
                    return Err(Error::Unavailable(format!(
                        "the connection to {url} broke before its answer, so this change may or \
                         may not have been made: look before trying again ({})",
                        causes(e)
                    )))
                }
                Err(e) => {
                    return Err(Error::Unavailable(format!(
                        "the server at {url} cannot be reached: {}",
                        causes(e)
                    )))
                }
            }
        }
        Err(Error::Unavailable(match failures.as_slice() {
            [(url, cause)] => format!("the server at {url} cannot be reached: {cause}"),
            _ => {
                let each: Vec<String> = failures
                    .iter()
                    .map(|(url, cause)| format!("{url}: {cause}"))
                    .collect();
                format!("no server answered ({})", each.join("; "))
            }
        }))
    }
}

/// A failure of the connection itself (not an answer): the next server may do.
fn is_connection_failure(e: &reqwest::Error) -> bool {
    e.is_connect() || e.is_timeout() || e.is_request()
}

/// A transport error with what caused it ("connection refused"), which
/// reqwest's own message leaves to its sources.
fn causes(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

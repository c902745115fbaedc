//! The remote backend: the same [`Backend`] over HTTP to a `leasedesk serve`.
//! Server error codes come back as the same [`Error`] variants the bundled
//! backend returns. Uploads and downloads stream; idempotent requests (reads,
//! check-in of a file, release) are retried when the connection fails, on the
//! next of the client's servers; the one that answers is used from then on.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncRead;

use async_trait::async_trait;
use futures_util::{StreamExt, TryStreamExt};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;
use tokio_util::io::{ReaderStream, StreamReader};

use crate::backend::{Backend, Cancel, Content, Progress, Upload, UploadSource};
use crate::error::{Error, Result};
use crate::model::*;
use crate::trust;
use crate::wire::{DIGEST_HEADER, MESSAGE_HEADER};

pub use crate::trust::{fingerprint, server_certificate, ServerCertificate, Trust};

/// How often an idempotent request goes round the servers when the
/// connection fails (a pause between rounds, none between servers).
const ATTEMPTS: usize = 3;

/// The server sends a keep-alive comment every 15 s: an event stream silent
/// for three of them is taken as broken (a server gone without closing it).
const STREAM_SILENCE: Duration = Duration::from_secs(45);

#[derive(Clone)]
pub struct Remote {
    http: reqwest::Client,
    servers: Arc<Servers>,
    token: String,
}

/// How far a request may be sent again when its connection fails.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resend {
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
struct Servers {
    urls: Vec<String>,
    current: AtomicUsize,
    on_move: Mutex<Option<OnMove>>,
}

/// Checks a list of server addresses as a client reads them, connecting to
/// nothing: what Settings refuses before it saves.
pub fn check_servers(list: &str) -> Result<()> {
    Servers::parse(list).map(|_| ())
}

impl Servers {
    /// URLs separated by commas, each `http(s)://host[:port]`.
    fn parse(list: &str) -> Result<Self> {
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
    /// A client of the server at `base_url` (`http://host:port`), with a token,
    /// trusting what [`Trust::from_env`] says.
    pub fn new(base_url: &str, token: &str) -> Result<Self> {
        Self::with_trust(base_url, token, Trust::from_env())
    }

    /// A client of the servers in `servers` (URLs separated by commas, tried
    /// in order), with a token, trusting `trust` (see `remote/trust.rs`): a
    /// CA file that cannot be read is `Invalid`; a refused certificate is
    /// `CertificateUntrusted`, or `CertificateChanged` under a pin.
    pub fn with_trust(servers: &str, token: &str, trust: Trust) -> Result<Self> {
        let servers = Arc::new(Servers::parse(servers)?);
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(trust::client_config(&trust)?)
            .connect_timeout(Duration::from_secs(10))
            // Below the server's 60 s idle timeout, so a pooled connection is
            // not reused just as the server closes it.
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| Error::Internal(format!("HTTP client: {e}")))?;
        Ok(Self {
            http,
            servers,
            token: token.to_owned(),
        })
    }

    /// The server this client uses now: the first of its list until one
    /// does not answer, then the one that answered instead.
    pub fn server(&self) -> String {
        self.servers.urls[self.servers.current.load(Ordering::Acquire)].clone()
    }

    /// Calls `f(from, to)` whenever this client (or a clone) moves from a
    /// server that did not answer to one that did.
    pub fn on_move(&self, f: impl Fn(&str, &str) + Send + Sync + 'static) {
        *self
            .servers
            .on_move
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(f));
    }

    fn request(&self, base: &str, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, format!("{base}{path}"))
            .bearer_auth(&self.token)
    }

    /// Sends a request built for a server's URL. When the connection fails
    /// it goes to the next server (wrapping round), as far as `resend`
    /// allows. An answer, even a refusal, is never taken elsewhere.
    async fn send(
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

    async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<T> {
        let resend = if method == Method::GET || method == Method::DELETE {
            Resend::Safe
        } else {
            Resend::IfUnsent
        };
        let response = self
            .send(resend, |base| {
                let request = self.request(base, method.clone(), path);
                Ok(match &body {
                    Some(body) => request.json(body),
                    None => request,
                })
            })
            .await?;
        response
            .json()
            .await
            .map_err(|e| Error::Internal(format!("the server's answer could not be read: {e}")))
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        self.json(Method::GET, path, None).await
    }

    async fn post<T: DeserializeOwned>(&self, path: &str, body: serde_json::Value) -> Result<T> {
        self.json(Method::POST, path, Some(body)).await
    }

    /// Posts an upload as the raw body. A file is read again for a retry; a
    /// stream can be sent once.
    async fn post_upload<T: DeserializeOwned>(&self, path: &str, upload: Upload) -> Result<T> {
        let digest = upload.digest.clone();
        // Checked here too, so an over-long one fails before a byte is sent.
        let message = check_message(upload.message.clone())?.map(|m| encoded(&m));
        let progress = upload.progress.clone();
        let cancel = upload.cancel.clone();
        let with_digest = |mut request: RequestBuilder| {
            if let Some(d) = &digest {
                request = request.header(DIGEST_HEADER, d.as_str());
            }
            if let Some(m) = &message {
                request = request.header(MESSAGE_HEADER, m);
            }
            request
        };
        let response = match upload.source {
            UploadSource::File(file) => {
                self.send(Resend::Safe, |base| {
                    // A cancelled upload is not tried again.
                    crate::backend::check_cancel(cancel.as_deref())?;
                    let opened = crate::local_file::open_to_read(&file)?;
                    let size = opened.metadata()?.len();
                    let file = tokio::fs::File::from_std(opened);
                    let stream = counted(
                        ReaderStream::with_capacity(file, 1 << 20),
                        progress.clone(),
                        cancel.clone(),
                    );
                    Ok(with_digest(self.request(base, Method::POST, path))
                        .header(reqwest::header::CONTENT_LENGTH, size)
                        .body(reqwest::Body::wrap_stream(stream)))
                })
                .await?
            }
            UploadSource::Stream(reader) => {
                let stream = counted(
                    ReaderStream::with_capacity(reader, 1 << 20),
                    progress,
                    cancel,
                );
                let body = std::sync::Mutex::new(Some(reqwest::Body::wrap_stream(stream)));
                // Its body is gone with the first try, whatever became of it.
                self.send(Resend::Never, |base| {
                    let body = body
                        .lock()
                        .expect("upload body")
                        .take()
                        .expect("a stream is sent once");
                    Ok(with_digest(self.request(base, Method::POST, path)).body(body))
                })
                .await?
            }
        };
        response
            .json()
            .await
            .map_err(|e| Error::Internal(format!("the server's answer could not be read: {e}")))
    }
}

/// The bytes of an event stream as they come.
type EventBytes =
    Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<axum::body::Bytes>> + Send>>;

/// Where a follower is: the stream it reads, the bytes of a message not yet
/// whole, and the last event it gave (where a new stream starts).
struct Follow {
    remote: Remote,
    after: u64,
    bytes: Option<EventBytes>,
    buffer: Vec<u8>,
    /// Whether an event came since the stream was last opened: a stream that
    /// keeps ending with none is opened again only after a pause.
    progressed: bool,
    ended: bool,
}

/// Takes the next whole Server-Sent Events message off the front of
/// `buffer` and answers its data ("" for a keep-alive comment), or `None`
/// until a whole message is there. A message ends at a blank line; bytes are
/// kept until then, since a chunk may end inside a character.
pub fn next_message_data(buffer: &mut Vec<u8>) -> Option<String> {
    let end = buffer.windows(2).position(|w| w == b"\n\n")?;
    let message: Vec<u8> = buffer.drain(..end + 2).collect();
    Some(
        String::from_utf8_lossy(&message)
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim_start)
            .collect(),
    )
}

impl Remote {
    /// The events after `after`, then each new one as a server writes it
    /// (Server-Sent Events). When a stream breaks or ends, it is opened again
    /// after the last event given, moving on to the next server if this one
    /// does not answer, so no event is lost or given twice. It ends with an
    /// error when no server answers, or one refuses (a revoked token).
    pub async fn follow_events(
        &self,
        after: u64,
    ) -> Result<impl futures_util::Stream<Item = Result<Event>> + use<>> {
        let follow = Follow {
            remote: self.clone(),
            after,
            bytes: Some(self.event_stream(after).await?),
            buffer: Vec::new(),
            progressed: true,
            ended: false,
        };
        Ok(futures_util::stream::unfold(follow, |mut f| async move {
            loop {
                if f.ended {
                    return None;
                }
                if let Some(data) = next_message_data(&mut f.buffer) {
                    if data.is_empty() {
                        continue; // a keep-alive comment
                    }
                    let event: Result<Event> = serde_json::from_str(&data)
                        .map_err(|e| Error::Internal(format!("an event could not be read: {e}")));
                    if let Ok(event) = &event {
                        f.after = event.seq;
                        f.progressed = true;
                    }
                    return Some((event, f));
                }
                let next = match &mut f.bytes {
                    Some(bytes) => tokio::time::timeout(STREAM_SILENCE, bytes.next()).await,
                    None => Ok(None),
                };
                if let Ok(Some(Ok(chunk))) = next {
                    f.buffer.extend_from_slice(&chunk);
                    continue;
                }
                // Broken, silent or ended: a half-read message comes again
                // on the new stream, which starts after the last event given.
                f.bytes = None;
                f.buffer.clear();
                if !f.progressed {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                f.progressed = false;
                match f.remote.event_stream(f.after).await {
                    Ok(bytes) => f.bytes = Some(bytes),
                    Err(e) => {
                        f.ended = true;
                        return Some((Err(e), f));
                    }
                }
            }
        }))
    }

    async fn event_stream(&self, after: u64) -> Result<EventBytes> {
        let path = format!("/v1/events/stream?after={after}");
        let response = self
            .send(Resend::Safe, |base| {
                Ok(self.request(base, Method::GET, &path))
            })
            .await?;
        Ok(Box::pin(response.bytes_stream()))
    }
}

/// The body stream of an upload: tells `progress` as chunks go, and fails
/// before the next chunk once `cancel` is set, so the server stores nothing.
fn counted<R: tokio::io::AsyncRead>(
    stream: ReaderStream<R>,
    progress: Option<Progress>,
    cancel: Option<Cancel>,
) -> impl futures_util::Stream<Item = std::io::Result<axum::body::Bytes>> {
    let mut sent = 0u64;
    stream.map(move |chunk| {
        crate::backend::check_cancel(cancel.as_deref()).map_err(std::io::Error::other)?;
        let chunk = chunk?;
        sent += chunk.len() as u64;
        if let Some(progress) = &progress {
            progress(sent);
        }
        Ok(chunk)
    })
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

/// The API's error body, back into the error the bundled backend returns.
async fn error_from(response: reqwest::Response) -> Error {
    #[derive(Deserialize)]
    struct Body {
        error: String,
        message: String,
        path: Option<String>,
        lease: Option<Lease>,
        head: Option<Head>,
        expected: Option<Digest>,
        actual: Option<Digest>,
        limit: Option<u64>,
    }
    let status = response.status();
    let body: Body = match response.json().await {
        Ok(body) => body,
        Err(_) => {
            return match status {
                StatusCode::UNAUTHORIZED => {
                    Error::Unauthorized("the server refused the token".into())
                }
                status => Error::Internal(format!(
                    "the server answered {status} without an error body"
                )),
            }
        }
    };
    let message = body.message;
    match (body.error.as_str(), body.head, body.expected, body.actual) {
        ("artifact_busy", ..) => Error::ArtifactBusy {
            path: body.path.unwrap_or_default(),
            lease: body.lease.map(Box::new),
        },
        ("stale", Some(head), ..) => Error::Stale {
            head: Box::new(head),
        },
        ("proposal_stale", Some(head), ..) => Error::ProposalStale {
            head: Box::new(head),
        },
        ("digest_mismatch", _, Some(expected), Some(actual)) => {
            Error::DigestMismatch { expected, actual }
        }
        ("too_large", ..) => Error::TooLarge {
            limit: body.limit.unwrap_or(0),
        },
        ("forbidden", ..) => Error::Forbidden(message),
        ("checkout_closed", ..) => Error::CheckoutClosed(message),
        ("exists", ..) => Error::Exists(message),
        ("not_found", ..) => Error::NotFound(message),
        ("no_preview", ..) => Error::NoPreview(message),
        ("invalid", ..) => Error::Invalid(message),
        ("bad_request", ..) => Error::BadRequest(message),
        ("unauthorized", ..) => Error::Unauthorized(message),
        ("deadline_exceeded", ..) => Error::DeadlineExceeded(message),
        ("storage_full", ..) => Error::StorageFull(message),
        ("unavailable", ..) => Error::Unavailable(message),
        (code, ..) => Error::Internal(format!("the server failed ({code}): {message}")),
    }
}

/// A query-string value, percent-encoded.
fn encoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[async_trait]
impl Backend for Remote {
    async fn me(&self) -> Result<Participant> {
        #[derive(Deserialize)]
        struct Me {
            participant: Participant,
        }
        Ok(self.get::<Me>("/v1/me").await?.participant)
    }

    async fn import(&self, path: &RepoPath, upload: Upload) -> Result<Artifact> {
        self.post_upload(
            &format!("/v1/artifacts?path={}", encoded(path.as_str())),
            upload,
        )
        .await
    }

    async fn artifacts(&self) -> Result<Vec<Artifact>> {
        Ok(self.get::<ArtifactList>("/v1/artifacts").await?.artifacts)
    }

    async fn artifact(&self, id: ArtifactId) -> Result<Artifact> {
        self.get(&format!("/v1/artifacts/{id}")).await
    }

    async fn artifact_by_path(&self, path: &RepoPath) -> Result<Artifact> {
        let found: ArtifactList = self
            .get(&format!("/v1/artifacts?path={}", encoded(path.as_str())))
            .await?;
        found
            .artifacts
            .into_iter()
            .next()
            .ok_or_else(|| Error::NotFound(format!("no artifact at {path}")))
    }

    async fn versions(&self, id: ArtifactId) -> Result<Vec<Head>> {
        Ok(self
            .get::<VersionList>(&format!("/v1/artifacts/{id}/versions"))
            .await?
            .versions)
    }

    async fn content(&self, id: ArtifactId, version: Option<u64>) -> Result<Content> {
        let versions = self.versions(id).await?;
        let head = match version {
            None => versions.into_iter().next(),
            Some(n) => versions.into_iter().find(|h| h.version == n),
        }
        .ok_or_else(|| {
            Error::NotFound(format!(
                "artifact {id} has no version {}",
                version.unwrap_or(0)
            ))
        })?;
        let path = format!("/v1/artifacts/{id}/content?version={}", head.version);
        let response = self
            .send(Resend::Safe, |base| {
                Ok(self.request(base, Method::GET, &path))
            })
            .await?;
        let stream = response.bytes_stream().map_err(std::io::Error::other);
        Ok(Content {
            head,
            reader: Box::pin(StreamReader::new(stream)),
        })
    }

    async fn check_out(&self, id: ArtifactId, request: CheckoutRequest) -> Result<Checkout> {
        self.post(&format!("/v1/artifacts/{id}/checkouts"), json!(request))
            .await
    }

    async fn checkout(&self, id: CheckoutId) -> Result<Checkout> {
        self.get(&format!("/v1/checkouts/{id}")).await
    }

    async fn checkouts(&self, open_only: bool) -> Result<Vec<Checkout>> {
        let path = if open_only {
            "/v1/checkouts?state=open"
        } else {
            "/v1/checkouts"
        };
        Ok(self.get::<CheckoutList>(path).await?.checkouts)
    }

    async fn extend(&self, id: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout> {
        let body = match ttl_seconds {
            Some(ttl) => json!({ "ttl_seconds": ttl }),
            None => json!({}),
        };
        self.post(&format!("/v1/checkouts/{id}/extend"), body).await
    }

    async fn check_in(&self, id: CheckoutId, upload: Upload) -> Result<Checkout> {
        self.post_upload(&format!("/v1/checkouts/{id}/checkin"), upload)
            .await
    }

    async fn cancel(&self, id: CheckoutId) -> Result<Checkout> {
        self.post(&format!("/v1/checkouts/{id}/cancel"), json!({}))
            .await
    }

    async fn begin_edit(&self, id: ArtifactId, ttl_seconds: Option<u64>) -> Result<Edit> {
        let body = match ttl_seconds {
            Some(ttl) => json!({ "ttl_seconds": ttl }),
            None => json!({}),
        };
        self.post(&format!("/v1/artifacts/{id}/edits"), body).await
    }

    async fn commit_edit(&self, id: EditId, upload: Upload) -> Result<CheckinResult> {
        self.post_upload(&format!("/v1/edits/{id}/commit"), upload)
            .await
    }

    async fn release_edit(&self, id: EditId) -> Result<()> {
        let path = format!("/v1/edits/{id}");
        self.send(Resend::Safe, |base| {
            Ok(self.request(base, Method::DELETE, &path))
        })
        .await?;
        Ok(())
    }

    async fn proposals(&self, filter: ProposalFilter) -> Result<Vec<Proposal>> {
        let mut query = Vec::new();
        if let Some(artifact) = filter.artifact {
            query.push(format!("artifact={artifact}"));
        }
        if let Some(state) = filter.state {
            let state = serde_json::to_value(state).expect("a state serializes");
            query.push(format!("state={}", state.as_str().unwrap_or_default()));
        }
        let path = format!("/v1/proposals?{}", query.join("&"));
        Ok(self.get::<ProposalList>(&path).await?.proposals)
    }

    async fn proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.get(&format!("/v1/proposals/{id}")).await
    }

    async fn proposal_content(
        &self,
        id: ProposalId,
    ) -> Result<(Proposal, Pin<Box<dyn AsyncRead + Send>>)> {
        let proposal = self.proposal(id).await?;
        let path = format!("/v1/proposals/{id}/content");
        let response = self
            .send(Resend::Safe, |base| {
                Ok(self.request(base, Method::GET, &path))
            })
            .await?;
        let stream = response.bytes_stream().map_err(std::io::Error::other);
        Ok((proposal, Box::pin(StreamReader::new(stream))))
    }

    async fn preview(&self, of: PreviewOf, size: u32) -> Result<Vec<u8>> {
        let path = match of {
            PreviewOf::Version {
                artifact,
                version: Some(n),
            } => format!("/v1/artifacts/{artifact}/preview?version={n}&size={size}"),
            PreviewOf::Version {
                artifact,
                version: None,
            } => format!("/v1/artifacts/{artifact}/preview?size={size}"),
            PreviewOf::Proposal(id) => format!("/v1/proposals/{id}/preview?size={size}"),
        };
        let response = self
            .send(Resend::Safe, |base| {
                Ok(self.request(base, Method::GET, &path))
            })
            .await?;
        let bytes = response.bytes().await.map_err(|e| {
            Error::Unavailable(format!(
                "the preview could not be read from {}: {e}",
                self.server()
            ))
        })?;
        Ok(bytes.to_vec())
    }

    async fn accept_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.post(&format!("/v1/proposals/{id}/accept"), json!({}))
            .await
    }

    async fn rebuild_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.post(&format!("/v1/proposals/{id}/rebuild"), json!({}))
            .await
    }

    async fn reject_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.post(&format!("/v1/proposals/{id}/reject"), json!({}))
            .await
    }

    async fn break_lease(&self, id: ArtifactId, reason: &str) -> Result<Artifact> {
        self.post(
            &format!("/v1/artifacts/{id}/break"),
            json!({ "reason": reason }),
        )
        .await
    }

    async fn rename(&self, id: ArtifactId, to: &RepoPath) -> Result<Artifact> {
        self.post(&format!("/v1/artifacts/{id}/rename"), json!({ "path": to }))
            .await
    }

    async fn query_events(&self, query: EventQuery) -> Result<EventPage> {
        let mut path = format!("/v1/events?limit={}", query.limit);
        if let Some(after) = query.after {
            path.push_str(&format!("&after={after}"));
        }
        if let Some(before) = query.before {
            // Every seq is below 2^63, the largest number the API takes.
            let before = before.min(i64::MAX as u64);
            path.push_str(&format!("&before={before}"));
        }
        if let Some(artifact) = query.artifact {
            path.push_str(&format!("&artifact={artifact}"));
        }
        self.get(&path).await
    }
}

//! `leasedesk serve`: the HTTP API of `shared/API.md` over a bundled backend.
//! Every handler authenticates the caller, acts through [`Backend`] as them,
//! and maps [`Error`] to the API's status and code. Bodies stream both ways.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, MatchedPath, Path, Query, Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Extension, Json, Router};
use futures_util::{Stream, StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tokio_util::io::{ReaderStream, StreamReader};
use tower::ServiceExt;
use utoipa::{OpenApi, ToSchema};

use crate::backend::{Backend, Upload};
use crate::bundled::Bundled;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::model::*;

mod conn;
pub mod tls;

pub use conn::Limits;
use conn::{ConnState, Guarded, Refusal};

/// The header a client may send with an upload's digest.
pub const DIGEST_HEADER: &str = "leasedesk-digest";
/// An upload's description, percent-encoded UTF-8.
pub const MESSAGE_HEADER: &str = "leasedesk-message";

/// Largest JSON request body: requests are small objects.
const MAX_JSON_BYTES: usize = 64 << 10;

/// How `run_with` serves: per-connection limits, how many connections at
/// once, and how long uploads in flight may go on after shutdown begins.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub limits: Limits,
    pub max_connections: usize,
    pub shutdown_grace: Duration,
    /// Counts requests into these when set (served by [`run_metrics`]).
    pub metrics: Option<Metrics>,
    /// HTTPS with this certificate, or plain HTTP.
    pub tls: Option<Arc<tls::ServerTls>>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            max_connections: 1024,
            shutdown_grace: Duration::from_secs(30),
            metrics: None,
            tls: None,
        }
    }
}

/// Serves `store` on `listener` with the default limits until `shutdown`
/// resolves (see `run_with`).
pub async fn run(
    listener: TcpListener,
    store: Bundled,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    run_with(listener, store, ServeConfig::default(), shutdown).await
}

/// Serves `store` on `listener` until `shutdown` resolves. Then it stops
/// accepting, ends event streams at once, closes idle and half-sent
/// connections, lets requests in flight (uploads) finish for
/// `shutdown_grace`, drops the rest (an upload cut off stores nothing) and
/// returns. Also sweeps lapsed leases while it serves.
pub async fn run_with(
    listener: TcpListener,
    store: Bundled,
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let sweeper = store.spawn_sweeper(Duration::from_secs(1));
    let (close, closing) = watch::channel(false);
    let router = app_with(store, Closing(closing.clone()), config.metrics.clone());
    let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let acceptors = config
        .tls
        .as_ref()
        .map(|tls| (tls.acceptor(true), tls.acceptor(false)));
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => {
                    let _ = socket.set_nodelay(true);
                    match slots.clone().try_acquire_owned() {
                        Ok(slot) => {
                            let (router, limits, closing) =
                                (router.clone(), config.limits.clone(), Closing(closing.clone()));
                            let acceptor = acceptors.as_ref().map(|(both, _)| both.clone());
                            connections.spawn(async move {
                                match acceptor {
                                    None => serve_connection(socket, router, limits, closing).await,
                                    Some(acceptor) => {
                                        serve_tls(acceptor, socket, router, limits, closing).await
                                    }
                                }
                                drop(slot);
                            });
                        }
                        Err(_) => {
                            if let Some(metrics) = &config.metrics {
                                metrics.connection_refused();
                            }
                            let cap = config.max_connections;
                            let acceptor = acceptors.as_ref().map(|(_, http1)| http1.clone());
                            connections.spawn(async move {
                                match acceptor {
                                    None => refuse_connection(socket, cap).await,
                                    Some(acceptor) => {
                                        // A short handshake, so the refusal is readable.
                                        let handshake = tokio::time::timeout(
                                            Duration::from_secs(1),
                                            acceptor.accept(socket),
                                        );
                                        if let Ok(Ok(socket)) = handshake.await {
                                            refuse_connection(socket, cap).await;
                                        }
                                    }
                                }
                            });
                        }
                    }
                }
                Err(e) => {
                    // Out of file descriptors, most likely: wait for some to close
                    // rather than spin.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let _ = close.send(true);
    let finished = tokio::time::timeout(config.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if finished.is_err() {
        tracing::warn!(
            connections = connections.len(),
            "requests still running after the shutdown grace were dropped"
        );
        connections.shutdown().await;
    }
    sweeper.abort();
    Ok(())
}

/// Whether the server is shutting down, for the answers that would go on
/// forever (event streams).
#[derive(Clone)]
struct Closing(watch::Receiver<bool>);

impl Closing {
    async fn wait(mut self) {
        if self.0.wait_for(|closing| *closing).await.is_err() {
            // No sender: this router is never shut down (a test's `app`).
            std::future::pending::<()>().await;
        }
    }
}

/// One HTTPS connection: the handshake within the header timeout (a client
/// that sends nothing holds its slot no longer than one that sends half a
/// head), then HTTP/2 or HTTP/1.1 as ALPN agreed.
async fn serve_tls(
    acceptor: tokio_rustls::TlsAcceptor,
    socket: tokio::net::TcpStream,
    router: Router,
    limits: Limits,
    closing: Closing,
) {
    let stream = match tokio::time::timeout(limits.header_timeout, acceptor.accept(socket)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!("TLS handshake not done within the header timeout");
            return;
        }
    };
    if stream.get_ref().1.alpn_protocol() == Some(tls::H2) {
        serve_h2(stream, router, limits, closing).await;
    } else {
        serve_connection(stream, router, limits, closing).await;
    }
}

/// One HTTP/2 connection. hyper's HTTP/2 server answers malformed frames
/// with protocol errors (not HTTP answers of its own), so no guard reads the
/// bytes; the settings bound what one client may ask for, a body that
/// stalls fails, the connection closes once idle for the idle timeout, and
/// it is dropped when a client stops taking an answer for the stall timeout.
async fn serve_h2<S>(stream: S, router: Router, limits: Limits, closing: Closing)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let state = ConnState::new();
    let io = hyper_util::rt::TokioIo::new(stream);
    let stall = limits.stall_timeout;
    let answers = Answers::default();
    let service = {
        let (state, answers) = (state.clone(), answers.clone());
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let (router, state, answers) = (router.clone(), state.clone(), answers.clone());
            let request = request.map(|body| Body::new(Stalling::new(body, stall)));
            async move {
                let begun = Begun::new(&state);
                let response = answer(router, state, request).await;
                begun.handed_on();
                Ok::<_, Infallible>(response.map(|body| Body::new(Paced::new(body, &answers))))
            }
        })
    };
    let connection = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .timer(hyper_util::rt::TokioTimer::new())
        .max_concurrent_streams(H2_MAX_STREAMS)
        .max_header_list_size(limits.max_head_bytes as u32)
        .max_send_buf_size(1 << 20)
        // A peer that stops answering pings is gone: its streams end.
        .keep_alive_interval(Some(Duration::from_secs(20)))
        .keep_alive_timeout(limits.stall_timeout.min(Duration::from_secs(20)))
        .serve_connection(io, service);
    tokio::pin!(connection);
    // Whether the connection is idle (`true`) or a client stopped taking
    // an answer (`false`), looked at each second.
    let watchdog = async {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if state
                .idle_for()
                .is_some_and(|idle| idle >= limits.idle_timeout)
            {
                break true;
            }
            if answers.longest_wait().is_some_and(|wait| wait >= stall) {
                break false;
            }
        }
    };
    let served = tokio::select! {
        served = connection.as_mut() => served,
        () = closing.wait() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
        idle = watchdog => if idle {
            connection.as_mut().graceful_shutdown();
            // The close takes a ping's round trip; a peer that never answers,
            // or a stream whose headers never end, gets a header timeout.
            match tokio::time::timeout(limits.header_timeout, connection.as_mut()).await {
                Ok(served) => served,
                Err(_) => Ok(()),
            }
        } else {
            tracing::debug!("an HTTP/2 client stopped taking its answer: connection dropped");
            Ok(())
        }
    };
    if let Err(e) = served {
        tracing::debug!(error = %e, "HTTP/2 connection ended");
    }
}

/// An HTTP/2 request counted in flight until its answer is made, so one
/// whose stream is reset before then does not keep the connection from
/// ever being idle.
struct Begun(Option<Arc<ConnState>>);

impl Begun {
    fn new(state: &Arc<ConnState>) -> Self {
        state.began();
        Self(Some(state.clone()))
    }

    /// The answer's body tells its end from now on.
    fn handed_on(mut self) {
        self.0 = None;
    }
}

impl Drop for Begun {
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            state.answered();
        }
    }
}

/// An HTTP/2 request body that fails once no frame has come for the stall
/// timeout (HTTP/1's guard does this for its bodies), so a client that
/// stops mid-upload does not hold its stream for ever.
struct Stalling {
    body: hyper::body::Incoming,
    stall: Duration,
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The wait is timed from the handler's first read, not the request's start.
    read_yet: bool,
}

impl Stalling {
    fn new(body: hyper::body::Incoming, stall: Duration) -> Self {
        Self {
            body,
            stall,
            timer: Box::pin(tokio::time::sleep(stall)),
            read_yet: false,
        }
    }
}

impl http_body::Body for Stalling {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        use std::task::Poll;
        if !self.read_yet {
            self.read_yet = true;
            let first = tokio::time::Instant::now() + self.stall;
            self.timer.as_mut().reset(first);
        }
        match std::pin::Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + self.stall;
                self.timer.as_mut().reset(next);
                Poll::Ready(frame.map(|f| f.map_err(std::io::Error::other)))
            }
            Poll::Pending => match self.timer.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no byte of the body for {} s", self.stall.as_secs()),
                )))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The answers of one HTTP/2 connection: for each, since when it has handed
/// hyper a piece and not been asked for the next (hyper asks once the
/// client's flow-control window takes the piece).
#[derive(Clone, Default)]
struct Answers(Arc<std::sync::Mutex<Vec<std::sync::Weak<Handed>>>>);

type Handed = std::sync::Mutex<Option<tokio::time::Instant>>;

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Answers {
    fn track(&self) -> Arc<Handed> {
        let handed = Arc::new(Handed::default());
        lock(&self.0).push(Arc::downgrade(&handed));
        handed
    }

    /// The longest wait of an answer for its client (answers done are forgotten).
    fn longest_wait(&self) -> Option<Duration> {
        let mut answers = lock(&self.0);
        answers.retain(|handed| handed.strong_count() > 0);
        answers
            .iter()
            .filter_map(|handed| {
                let handed = handed.upgrade()?;
                let since = *lock(&handed);
                since
            })
            .map(|since| since.elapsed())
            .max()
    }
}

/// Largest piece of an HTTP/2 answer handed to hyper at once: a client that
/// takes less than this within the stall timeout is dropped (HTTP/1's guard
/// drops one that takes no byte).
const H2_PIECE: usize = 16 << 10;

/// An HTTP/2 answer handed over in pieces, each timed until hyper asks for
/// the next.
struct Paced {
    body: Body,
    piece: Bytes,
    handed: Arc<Handed>,
}

impl Paced {
    fn new(body: Body, answers: &Answers) -> Self {
        Self {
            body,
            piece: Bytes::new(),
            handed: answers.track(),
        }
    }
}

impl http_body::Body for Paced {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        use std::task::{ready, Poll};
        *lock(&self.handed) = None;
        if self.piece.is_empty() {
            match ready!(std::pin::Pin::new(&mut self.body).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => self.piece = data,
                    Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
                },
                other => return Poll::Ready(other),
            }
        }
        let size = self.piece.len().min(H2_PIECE);
        let piece = self.piece.split_to(size);
        *lock(&self.handed) = Some(tokio::time::Instant::now());
        Poll::Ready(Some(Ok(http_body::Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.piece.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        let inner = self.body.size_hint();
        let held = self.piece.len() as u64;
        let mut hint = http_body::SizeHint::new();
        hint.set_lower(inner.lower() + held);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + held);
        }
        hint
    }
}

/// Streams one HTTP/2 client may have open at once.
const H2_MAX_STREAMS: u32 = 64;

/// One connection: HTTP/1.1 through the guard, until the client leaves, a
/// limit drops it, or shutdown (which lets a request in flight finish).
async fn serve_connection<S>(socket: S, router: Router, limits: Limits, closing: Closing)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let state = ConnState::new();
    let io = hyper_util::rt::TokioIo::new(Guarded::new(socket, limits, state.clone()));
    let service =
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let (router, state) = (router.clone(), state.clone());
            async move { Ok::<_, Infallible>(answer(router, state, request.map(Body::new)).await) }
        });
    // A client may close its sending side once its request is sent: it
    // still gets its answer.
    let connection = hyper::server::conn::http1::Builder::new()
        .half_close(true)
        .serve_connection(io, service);
    tokio::pin!(connection);
    let served = tokio::select! {
        served = connection.as_mut() => served,
        () = closing.wait() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = served {
        tracing::debug!(error = %e, "connection ended");
    }
}

/// The router's answer to one request (or the guard's refusal it stands in
/// for), whose end the guard is told of, so it times the idle wait after it.
async fn answer(router: Router, state: Arc<ConnState>, request: hyper::Request<Body>) -> Response {
    let response = match state.next_request() {
        Some(refusal) => refusal_response(&refusal),
        None => match router.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
    };
    response.map(|body| Body::new(Answered { body, state }))
}

/// A response body that tells the connection's guard when it is done.
struct Answered {
    body: Body,
    state: Arc<ConnState>,
}

impl Drop for Answered {
    fn drop(&mut self) {
        self.state.answered();
    }
}

impl http_body::Body for Answered {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

fn error_response(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn refusal_response(refusal: &Refusal) -> Response {
    let body = json!({ "error": refusal.code, "message": refusal.message });
    let mut response = error_response(refusal.status, &body);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Past the connection cap: a 503 in the API's JSON, and the socket closed.
async fn refuse_connection<S: tokio::io::AsyncWrite + Unpin>(mut socket: S, cap: usize) {
    use tokio::io::AsyncWriteExt;
    let body = json!({
        "error": "unavailable",
        "message": format!("the server is serving its limit of {cap} connections: try again shortly"),
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncache-control: no-store\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tracing::warn!(cap, "connection refused: at the connection cap");
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        socket.write_all(answer.as_bytes()).await?;
        socket.shutdown().await
    })
    .await;
}

/// The API's routes over `store`, for a router that is never shut down.
pub fn app(store: Bundled) -> Router {
    let (close, closing) = watch::channel(false);
    drop(close);
    app_with(store, Closing(closing), None)
}

/// The API's routes over `store`; event streams end when `closing` says so.
/// Requests are counted into `metrics` when given.
fn app_with(store: Bundled, closing: Closing, metrics: Option<Metrics>) -> Router {
    let routes = Router::new()
        .route("/v1/health", get(health))
        .route("/v1/openapi.json", get(openapi_json))
        .route("/v1/me", get(me))
        .route("/v1/artifacts", get(artifacts).post(import))
        .route("/v1/artifacts/{id}", get(artifact))
        .route("/v1/artifacts/{id}/versions", get(versions))
        .route("/v1/artifacts/{id}/content", get(content))
        .route("/v1/artifacts/{id}/preview", get(artifact_preview))
        .route("/v1/artifacts/{id}/checkouts", post(check_out))
        .route("/v1/artifacts/{id}/edits", post(begin_edit))
        .route("/v1/artifacts/{id}/break", post(break_lease))
        .route("/v1/artifacts/{id}/rename", post(rename))
        .route("/v1/checkouts", get(checkouts))
        .route("/v1/checkouts/{id}", get(checkout))
        .route("/v1/checkouts/{id}/extend", post(extend))
        .route("/v1/checkouts/{id}/checkin", post(check_in))
        .route("/v1/checkouts/{id}/cancel", post(cancel))
        .route("/v1/edits/{id}/commit", post(commit_edit))
        .route("/v1/edits/{id}", delete(release_edit))
        .route("/v1/proposals", get(proposals))
        .route("/v1/proposals/{id}", get(proposal))
        .route("/v1/proposals/{id}/content", get(proposal_content))
        .route("/v1/proposals/{id}/preview", get(proposal_preview))
        .route("/v1/proposals/{id}/accept", post(accept))
        .route("/v1/proposals/{id}/rebuild", post(rebuild))
        .route("/v1/proposals/{id}/reject", post(reject))
        .route("/v1/events", get(events))
        .route("/v1/events/stream", get(event_stream))
        .fallback(|| async { ApiError(Error::NotFound("no such endpoint".into())) })
        .method_not_allowed_fallback(|request: Request| async move {
            ApiError(Error::BadRequest(format!(
                "{} {} is not an endpoint of the API",
                request.method(),
                request.uri().path()
            )))
        })
        .layer(middleware::from_fn(no_store_and_log));
    let routes = match metrics {
        Some(metrics) => routes.layer(middleware::from_fn_with_state(metrics, count_request)),
        None => routes,
    };
    routes.layer(Extension(closing)).with_state(store)
}

/// The routes whose request body is an upload, for the in-flight gauge.
const UPLOAD_ROUTES: [&str; 3] = [
    "/v1/artifacts",
    "/v1/checkouts/{id}/checkin",
    "/v1/edits/{id}/commit",
];

/// Counts each request by its route's template (the raw path would make a
/// series per id), and an upload as in flight while it is handled.
async fn count_request(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |matched| matched.as_str())
        .to_owned();
    let method = request.method().clone();
    let _in_flight = (method == axum::http::Method::POST
        && UPLOAD_ROUTES.contains(&route.as_str()))
    .then(|| metrics.upload_started());
    let started = Instant::now();
    let response = next.run(request).await;
    metrics.observe_request(
        method.as_str(),
        &route,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

/// Serves Prometheus's scrape (`GET /metrics`) on `listener`, apart from the
/// API, until `shutdown`; through the same guard as the API's connections,
/// at most 64 at once. The store's read for it is bounded in time.
pub async fn run_metrics(
    listener: TcpListener,
    store: Bundled,
    metrics: Metrics,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (close, closing) = watch::channel(false);
    let router = Router::new()
        .route("/metrics", get(scrape))
        .fallback(|| async {
            ApiError(Error::NotFound(
                "this address serves only GET /metrics".into(),
            ))
        })
        .layer(Extension(metrics))
        .with_state(store);
    let slots = Arc::new(Semaphore::new(64));
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => match slots.clone().try_acquire_owned() {
                    Ok(slot) => {
                        let (router, limits, closing) =
                            (router.clone(), limits.clone(), Closing(closing.clone()));
                        connections.spawn(async move {
                            serve_connection(socket, router, limits, closing).await;
                            drop(slot);
                        });
                    }
                    Err(_) => drop(socket),
                },
                Err(e) => {
                    tracing::warn!(error = %e, "could not accept a metrics connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    let _ = close.send(true);
    connections.shutdown().await;
    Ok(())
}

async fn scrape(State(store): State<Bundled>, Extension(metrics): Extension<Metrics>) -> Response {
    let live = store.live_lease_count().await;
    if let Err(reason) = &live {
        tracing::warn!(%reason, "the metrics scrape could not count live leases");
    }
    let mut response = metrics.render(live).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Every response carries `Cache-Control: no-store`; every request is logged
/// by method, path, status and time (never a header: tokens stay out of logs).
async fn no_store_and_log(request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let started = Instant::now();
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    tracing::info!(%method, %path, status = response.status().as_u16(), ms = started.elapsed().as_secs_f64() * 1e3, "request");
    response
}

/// An error as the API answers it: status, and `{"error", "message", ...}`.
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

pub fn status_of(error: &Error) -> StatusCode {
    match error {
        Error::ArtifactBusy { .. } | Error::CheckoutClosed(_) | Error::Stale { .. } => {
            StatusCode::CONFLICT
        }
        Error::ProposalStale { .. } | Error::Exists(_) => StatusCode::CONFLICT,
        Error::Forbidden(_) => StatusCode::FORBIDDEN,
        Error::NotFound(_) | Error::NoPreview(_) => StatusCode::NOT_FOUND,
        Error::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        Error::BadRequest(_) | Error::DigestMismatch { .. } => StatusCode::BAD_REQUEST,
        Error::Unauthorized(_) => StatusCode::UNAUTHORIZED,
        Error::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        Error::DeadlineExceeded(_) => StatusCode::GATEWAY_TIMEOUT,
        Error::StorageFull(_) => StatusCode::INSUFFICIENT_STORAGE,
        Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        // A client's own refusals of a server: never answered by one.
        Error::CertificateChanged { .. } | Error::CertificateUntrusted(_) => {
            StatusCode::BAD_GATEWAY
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = status_of(&self.0);
        let body = match &self.0 {
            // The details (paths, SQLite's words) go to the log, not the caller.
            Error::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                json!({ "error": "internal", "message": "the server failed; the request changed nothing or completed, and can be retried" })
            }
            e => e.to_body(),
        };
        (status, Json(body)).into_response()
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// The authenticated caller: the store, acting as the token's participant.
struct Caller(Bundled);

impl FromRequestParts<Bundled> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, store: &Bundled) -> Result<Self, ApiError> {
        let participant = store.authenticate(bearer_of(&parts.headers)?).await?;
        Ok(Caller(store.acting_as(participant)))
    }
}

/// The token of `Authorization: Bearer <token>`.
fn bearer_of(headers: &HeaderMap) -> Result<&str, Error> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .ok_or_else(|| Error::Unauthorized("send Authorization: Bearer <token>".into()))
}

/// A path id, refused as `bad_request` when it is not a UUID.
fn id<T: std::str::FromStr<Err = Error>>(text: &str) -> ApiResult<T> {
    text.parse()
        .map_err(|_| ApiError(Error::BadRequest(format!("{text:?} is not a UUID"))))
}

/// The `{id}` segment of a path, as text; one that is not UTF-8 once
/// percent-decoded is `bad_request` in our JSON (axum's own answer is text).
struct RawId(String);

impl<S: Send + Sync> FromRequestParts<S> for RawId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(raw)) => Ok(RawId(raw)),
            Err(e) => Err(ApiError(Error::BadRequest(format!(
                "the id in the path is not valid: {}",
                e.body_text()
            )))),
        }
    }
}

/// Why a request body could not be read, for the caller: the body's own
/// error and its causes (a malformed chunk, a stall, a client that left).
fn body_error(e: axum::Error) -> Error {
    let mut reason = e.to_string();
    let mut cause = std::error::Error::source(&e);
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !reason.contains(&text) {
            reason.push_str(": ");
            reason.push_str(&text);
        }
        cause = inner.source();
    }
    Error::BadRequest(format!(
        "the request body could not be read ({reason}): nothing was stored"
    ))
}

/// A JSON object body (empty means `{}`), read up to `MAX_JSON_BYTES` (past
/// it: `too_large`); malformed JSON, a JSON value that is not an object, or
/// unknown fields are `bad_request`.
async fn json_body<T: DeserializeOwned + Default>(body: Body) -> ApiResult<T> {
    let mut bytes = Vec::new();
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(body_error)?;
        if bytes.len() + chunk.len() > MAX_JSON_BYTES {
            return Err(ApiError(Error::TooLarge {
                limit: MAX_JSON_BYTES as u64,
            }));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(json_object(&bytes)?)
}

/// A JSON object (empty means `{}`); anything else is `bad_request`.
pub fn json_object<T: DeserializeOwned + Default>(bytes: &[u8]) -> Result<T, Error> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => return Ok(T::default()),
        Some(b'{') => {}
        // serde would take `[60, "note"]` for a struct's fields in order.
        Some(_) => {
            return Err(Error::BadRequest(
                "the JSON body must be an object, {...}".into(),
            ))
        }
    }
    serde_json::from_slice(bytes)
        .map_err(|e| Error::BadRequest(format!("the JSON body is not valid: {e}")))
}

/// The guard's parsers of untrusted bytes, for the fuzz targets in `fuzz/`.
#[doc(hidden)]
pub mod parsers {
    pub use super::conn::{accepts_head, chunk_size_of};
}

/// The query string; a malformed one is `bad_request`.
fn query<T: DeserializeOwned>(uri: &axum::http::Uri) -> ApiResult<T> {
    Query::try_from_uri(uri)
        .map(|Query(q)| q)
        .map_err(|e| ApiError(Error::BadRequest(format!("bad query: {}", e.body_text()))))
}

/// A sequence number or version from a query or header: SQLite keeps them as
/// signed 64-bit integers, so one past 2^63 - 1 is `bad_request`.
fn in_range(name: &str, value: Option<u64>) -> ApiResult<Option<u64>> {
    match value {
        Some(v) if v > i64::MAX as u64 => Err(ApiError(Error::BadRequest(format!(
            "{name} must be at most {}",
            i64::MAX
        )))),
        v => Ok(v),
    }
}

/// The request body as a streamed upload, with the digest header if sent. A
/// body that fails to arrive (cut off, malformed, stalled) is the client's
/// error, not ours.
fn upload(headers: &HeaderMap, body: Body) -> ApiResult<Upload> {
    let reader = StreamReader::new(
        body.into_data_stream()
            .map_err(|e| std::io::Error::other(body_error(e))),
    );
    let mut upload = Upload::stream(reader);
    upload.message = check_message(message_header(headers)?)?;
    match headers.get(DIGEST_HEADER) {
        None => Ok(upload),
        Some(value) => {
            let digest = value
                .to_str()
                .ok()
                .and_then(|v| v.parse::<Digest>().ok())
                .ok_or_else(|| {
                    Error::BadRequest(format!("{DIGEST_HEADER} must be blake3:<64 hex>"))
                })?;
            Ok(upload.with_digest(digest))
        }
    }
}

/// The upload's description from `Leasedesk-Message`: percent-encoded UTF-8.
/// A value that is not (a `%` without two hex digits, bytes that are not
/// UTF-8 once decoded, raw non-ASCII) is 422, before a byte is stored.
fn message_header(headers: &HeaderMap) -> ApiResult<Option<String>> {
    let Some(value) = headers.get(MESSAGE_HEADER) else {
        return Ok(None);
    };
    let refused = |why: &str| {
        ApiError(Error::Invalid(format!(
            "{MESSAGE_HEADER} must be percent-encoded UTF-8 ({why}): nothing was stored"
        )))
    };
    let raw = value.as_bytes();
    let mut decoded = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'%' => {
                let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
                match (hex(raw.get(i + 1)), hex(raw.get(i + 2))) {
                    (Some(high), Some(low)) => decoded.push((high * 16 + low) as u8),
                    _ => return Err(refused("a % not followed by two hex digits")),
                }
                i += 3;
            }
            b @ 0x20..=0x7e => {
                decoded.push(b);
                i += 1;
            }
            _ => return Err(refused("a byte that is not printable ASCII")),
        }
        if decoded.len() > MAX_MESSAGE_BYTES {
            return Err(ApiError(Error::Invalid(format!(
                "the description is over the limit of {MAX_MESSAGE_BYTES} bytes: nothing was stored"
            ))));
        }
    }
    String::from_utf8(decoded)
        .map(Some)
        .map_err(|_| refused("the decoded bytes are not UTF-8"))
}

/// A list answered as `{"<key>": [...], ...}`, serialized as the client reads
/// it, about 64 KiB at a time, rather than into one buffer as large as the
/// whole answer. `rest` is the fields after the list, as JSON text (`,"next":7`).
struct JsonList<T> {
    key: &'static str,
    items: Vec<T>,
    rest: String,
}

impl<T> JsonList<T> {
    fn new(key: &'static str, items: Vec<T>) -> Self {
        Self {
            key,
            items,
            rest: String::new(),
        }
    }
}

impl<T: Serialize + Send + 'static> IntoResponse for JsonList<T> {
    fn into_response(self) -> Response {
        const CHUNK: usize = 64 << 10;
        let opening = format!("{{\"{}\":[", self.key).into_bytes();
        let closing = format!("]{}}}", self.rest).into_bytes();
        let items = self.items.into_iter().enumerate();
        let chunks = futures_util::stream::unfold(
            (Some(opening), items, Some(closing)),
            |(mut opening, mut items, mut closing)| async move {
                let mut chunk = opening.take().unwrap_or_default();
                for (i, item) in items.by_ref() {
                    if i > 0 {
                        chunk.push(b',');
                    }
                    if let Err(e) = serde_json::to_writer(&mut chunk, &item) {
                        tracing::error!(error = %e, "a list item could not be serialized");
                        return Some((Err(std::io::Error::other(e)), (None, items, None)));
                    }
                    if chunk.len() >= CHUNK {
                        return Some((Ok(chunk), (None, items, closing)));
                    }
                }
                chunk.extend(closing.take()?);
                Some((Ok(chunk), (None, items, None)))
            },
        );
        (
            [(header::CONTENT_TYPE, "application/json")],
            Body::from_stream(chunks),
        )
            .into_response()
    }
}

#[utoipa::path(get, path = "/v1/health", responses(
    (status = 200, description = "The server is up", body = Object),
    (status = 503, description = "The database or the blob store cannot be reached: `{\"status\":\"unavailable\",\"reason\"}`", body = Object),
))]
async fn health(State(store): State<Bundled>) -> Response {
    match store.health().await {
        Ok(()) => Json(json!({ "status": "ok" })).into_response(),
        Err(reason) => {
            tracing::warn!(%reason, "health check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "reason": reason })),
            )
                .into_response()
        }
    }
}

#[utoipa::path(get, path = "/v1/me", responses((status = 200, description = "The participant the token names", body = Object), (status = 401, body = ErrorBody)))]
async fn me(Caller(me): Caller) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(json!({ "participant": me.me().await? })))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: Option<String>,
}

/// Refuses a `path` query value that is not UTF-8 once percent-decoded
/// (`%FF`): axum's decoding would turn it into U+FFFD and store that.
fn refuse_non_utf8_path(uri: &axum::http::Uri) -> ApiResult<()> {
    fn decoded(text: &str) -> Vec<u8> {
        let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
        let (bytes, mut out, mut i) = (text.as_bytes(), Vec::new(), 0);
        while i < bytes.len() {
            match (bytes[i], hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
                (b'%', Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                    continue;
                }
                (b'+', ..) => out.push(b' '),
                (b, ..) => out.push(b),
            }
            i += 1;
        }
        out
    }
    for pair in uri.query().unwrap_or("").split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if decoded(key) == b"path" && std::str::from_utf8(&decoded(value)).is_err() {
            return Err(ApiError(Error::Invalid(
                "the path is not valid UTF-8 once percent-decoded: a file's name must be text \
                 that every computer reads alike"
                    .into(),
            )));
        }
    }
    Ok(())
}

#[utoipa::path(get, path = "/v1/artifacts", params(("path" = Option<String>, Query, description = "Only the artifact at this path")), responses((status = 200, description = "Every artifact, with head and live lease", body = ArtifactList), (status = 401, body = ErrorBody)))]
async fn artifacts(Caller(me): Caller, request: Request) -> ApiResult<JsonList<Artifact>> {
    refuse_non_utf8_path(request.uri())?;
    let q: PathQuery = query(request.uri())?;
    let artifacts = match q.path {
        // An addition to API.md: the artifact at one path, for clients that
        // know paths (as stored: an old path that cannot be placed is found too).
        Some(path) => vec![me.artifact_by_path(&RepoPath::stored(&path)?).await?],
        None => me.artifacts().await?,
    };
    Ok(JsonList::new("artifacts", artifacts))
}

#[utoipa::path(post, path = "/v1/artifacts", params(("path" = String, Query, description = "Where the file goes")), request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 201, body = Artifact), (status = 409, description = "exists", body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn import(
    Caller(me): Caller,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<(StatusCode, Json<Artifact>)> {
    refuse_non_utf8_path(request.uri())?;
    let q: PathQuery = query(request.uri())?;
    let path: RepoPath = q
        .path
        .ok_or_else(|| Error::Invalid("say where the file goes: ?path=folder/file.psd".into()))?
        .parse()?;
    let upload = upload(&headers, request.into_body())?;
    Ok((StatusCode::CREATED, Json(me.import(&path, upload).await?)))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}", params(("id" = Uuid, Path)), responses((status = 200, body = Artifact), (status = 404, body = ErrorBody)))]
async fn artifact(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<Json<Artifact>> {
    Ok(Json(me.artifact(id(&raw)?).await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/versions", params(("id" = Uuid, Path)), responses((status = 200, description = "Versions, newest first", body = VersionList), (status = 404, body = ErrorBody)))]
async fn versions(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<JsonList<Head>> {
    Ok(JsonList::new("versions", me.versions(id(&raw)?).await?))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct VersionQuery {
    version: Option<u64>,
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/content", params(("id" = Uuid, Path), ("version" = Option<u64>, Query)), responses((status = 200, description = "The bytes, with ETag: the digest", content_type = "application/octet-stream", body = Vec<u8>), (status = 404, body = ErrorBody)))]
async fn content(Caller(me): Caller, RawId(raw): RawId, request: Request) -> ApiResult<Response> {
    let q: VersionQuery = query(request.uri())?;
    let version = in_range("version", q.version)?;
    let content = me.content(id(&raw)?, version).await?;
    Ok(bytes_response(
        content.head.size,
        &content.head.digest,
        content.reader,
    ))
}

/// Streams bytes of a known digest and size (a version's or a proposal's).
fn bytes_response(
    size: u64,
    digest: &Digest,
    reader: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
) -> Response {
    let headers = [
        (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
        (header::CONTENT_LENGTH, size.to_string()),
        (header::ETAG, format!("\"{digest}\"")),
    ];
    (
        headers,
        Body::from_stream(ReaderStream::with_capacity(reader, 1 << 20)),
    )
        .into_response()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PreviewQuery {
    version: Option<u64>,
    size: Option<u64>,
}

/// A preview's size: 16 to 4096, 512 when not given.
fn preview_size(size: Option<u64>) -> ApiResult<u32> {
    let size = size.unwrap_or(crate::preview::DEFAULT_SIZE.into());
    let size = u32::try_from(size).unwrap_or(u32::MAX);
    crate::previews::check_size(size)?;
    Ok(size)
}

/// A preview as PNG. One of a fixed version or a proposal never changes;
/// the head's does, so the client asks again each time.
fn png_response(png: Vec<u8>, immutable: bool) -> Response {
    let cache = if immutable {
        "private, max-age=31536000, immutable"
    } else {
        "private, no-cache"
    };
    let approximate = crate::preview::is_approximate(&png);
    let mut response = (
        [
            (header::CONTENT_TYPE, "image/png"),
            (header::CACHE_CONTROL, cache),
        ],
        png,
    )
        .into_response();
    if approximate {
        response.headers_mut().insert(
            crate::preview::APPROXIMATE_HEADER,
            header::HeaderValue::from_static("approximate"),
        );
    }
    response
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/preview", params(("id" = Uuid, Path), ("version" = Option<u64>, Query, description = "The head when not given"), ("size" = Option<u32>, Query, description = "16 to 4096, default 512")), responses((status = 200, description = "The image fitted into size×size", content_type = "image/png", body = Vec<u8>, headers(("Leasedesk-Preview" = String, description = "`approximate` when the preview leaves out what the document shows (a Photoshop document's adjustment layers or effects, composited from its layers)"))), (status = 404, description = "not_found or no_preview", body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn artifact_preview(
    Caller(me): Caller,
    RawId(raw): RawId,
    request: Request,
) -> ApiResult<Response> {
    let q: PreviewQuery = query(request.uri())?;
    let version = in_range("version", q.version)?;
    let size = preview_size(q.size)?;
    let of = PreviewOf::Version {
        artifact: id(&raw)?,
        version,
    };
    Ok(png_response(me.preview(of, size).await?, version.is_some()))
}

#[utoipa::path(get, path = "/v1/proposals/{id}/preview", params(("id" = Uuid, Path), ("size" = Option<u32>, Query, description = "16 to 4096, default 512")), responses((status = 200, description = "The image fitted into size×size", content_type = "image/png", body = Vec<u8>, headers(("Leasedesk-Preview" = String, description = "`approximate` when the preview leaves out what the document shows (a Photoshop document's adjustment layers or effects, composited from its layers)"))), (status = 404, description = "not_found or no_preview", body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn proposal_preview(
    Caller(me): Caller,
    RawId(raw): RawId,
    request: Request,
) -> ApiResult<Response> {
    #[derive(Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct SizeQuery {
        size: Option<u64>,
    }
    let q: SizeQuery = query(request.uri())?;
    let size = preview_size(q.size)?;
    let of = PreviewOf::Proposal(id(&raw)?);
    Ok(png_response(me.preview(of, size).await?, true))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/checkouts", params(("id" = Uuid, Path)), request_body = CheckoutRequest, responses((status = 201, body = Checkout), (status = 409, description = "artifact_busy, with the lease", body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn check_out(
    Caller(me): Caller,
    RawId(raw): RawId,
    body: Body,
) -> ApiResult<(StatusCode, Json<Checkout>)> {
    let request: CheckoutRequest = json_body(body).await?;
    Ok((
        StatusCode::CREATED,
        Json(me.check_out(id(&raw)?, request).await?),
    ))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TtlBody {
    pub ttl_seconds: Option<u64>,
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakBody {
    pub reason: String,
}

/// The body of every refusal (for the OpenAPI document).
#[derive(serde::Serialize, ToSchema)]
struct ErrorBody {
    error: String,
    message: String,
    /// With artifact_busy: the live lease, or null if it ended meanwhile.
    lease: Option<Lease>,
    /// With stale and proposal_stale: the head now.
    head: Option<Head>,
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Leasedesk", description = "Leases for files that cannot be merged (shared/API.md)."),
    paths(
        health, me, artifacts, import, artifact, versions, content, check_out, checkouts, checkout,
        extend, check_in, cancel, begin_edit, commit_edit, release_edit, proposals, accept, rebuild,
        reject, break_lease, rename, events, event_stream, artifact_preview, proposal,
        proposal_content, proposal_preview
    ),
    components(schemas(ErrorBody, TtlBody, BreakBody, RenameBody, CheckoutRequest, Artifact, Head, Lease, Checkout, CheckinResult, Proposal, Edit, Event, EventPage)),
    modifiers(&BearerAuth)
)]
struct ApiDoc;

/// Every endpoint but health wants `Authorization: Bearer <token>`.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{
            HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
        };
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        api.security = Some(vec![SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// The OpenAPI document, generated from the handlers and the model types.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// Like every endpoint but health, for a caller with a token.
async fn openapi_json(_: Caller) -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}

#[utoipa::path(get, path = "/v1/checkouts", params(("state" = Option<CheckoutState>, Query)), responses((status = 200, description = "The caller's own check-outs", body = CheckoutList)))]
async fn checkouts(Caller(me): Caller, request: Request) -> ApiResult<JsonList<Checkout>> {
    #[derive(Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct StateQuery {
        state: Option<CheckoutState>,
    }
    let q: StateQuery = query(request.uri())?;
    let open_only = q.state == Some(CheckoutState::Open);
    let mut checkouts = me.checkouts(open_only).await?;
    if q.state == Some(CheckoutState::Closed) {
        checkouts.retain(|c| c.state == CheckoutState::Closed);
    }
    Ok(JsonList::new("checkouts", checkouts))
}

#[utoipa::path(get, path = "/v1/checkouts/{id}", params(("id" = Uuid, Path)), responses((status = 200, body = Checkout), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn checkout(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<Json<Checkout>> {
    Ok(Json(me.checkout(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/extend", params(("id" = Uuid, Path)), request_body = TtlBody, responses((status = 200, body = Checkout), (status = 403, body = ErrorBody), (status = 409, description = "checkout_closed or artifact_busy", body = ErrorBody)))]
async fn extend(Caller(me): Caller, RawId(raw): RawId, body: Body) -> ApiResult<Json<Checkout>> {
    let request: TtlBody = json_body(body).await?;
    Ok(Json(me.extend(id(&raw)?, request.ttl_seconds).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/checkin", params(("id" = Uuid, Path)), request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = Checkout), (status = 400, description = "digest_mismatch", body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, description = "checkout_closed", body = ErrorBody)))]
async fn check_in(
    Caller(me): Caller,
    RawId(raw): RawId,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<Checkout>> {
    let checkout = id(&raw)?;
    Ok(Json(me.check_in(checkout, upload(&headers, body)?).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/cancel", params(("id" = Uuid, Path)), responses((status = 200, body = Checkout), (status = 403, body = ErrorBody)))]
async fn cancel(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<Json<Checkout>> {
    Ok(Json(me.cancel(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/edits", params(("id" = Uuid, Path)), request_body = TtlBody, responses((status = 201, body = Edit), (status = 409, description = "artifact_busy", body = ErrorBody)))]
async fn begin_edit(
    Caller(me): Caller,
    RawId(raw): RawId,
    body: Body,
) -> ApiResult<(StatusCode, Json<Edit>)> {
    let request: TtlBody = json_body(body).await?;
    Ok((
        StatusCode::CREATED,
        Json(me.begin_edit(id(&raw)?, request.ttl_seconds).await?),
    ))
}

#[utoipa::path(post, path = "/v1/edits/{id}/commit", params(("id" = Uuid, Path)), request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = CheckinResult), (status = 409, description = "stale, with the head", body = ErrorBody)))]
async fn commit_edit(
    Caller(me): Caller,
    RawId(raw): RawId,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<CheckinResult>> {
    let edit = id(&raw)?;
    Ok(Json(me.commit_edit(edit, upload(&headers, body)?).await?))
}

#[utoipa::path(delete, path = "/v1/edits/{id}", params(("id" = Uuid, Path)), responses((status = 204, description = "Released (idempotent)"), (status = 403, body = ErrorBody)))]
async fn release_edit(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<StatusCode> {
    me.release_edit(id(&raw)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/v1/proposals", params(("artifact" = Option<Uuid>, Query), ("state" = Option<ProposalState>, Query)), responses((status = 200, body = ProposalList)))]
async fn proposals(Caller(me): Caller, request: Request) -> ApiResult<JsonList<Proposal>> {
    #[derive(Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct ProposalQuery {
        artifact: Option<String>,
        state: Option<ProposalState>,
    }
    let q: ProposalQuery = query(request.uri())?;
    let filter = ProposalFilter {
        artifact: q.artifact.as_deref().map(id).transpose()?,
        state: q.state,
    };
    Ok(JsonList::new("proposals", me.proposals(filter).await?))
}

#[utoipa::path(get, path = "/v1/proposals/{id}", params(("id" = Uuid, Path)), responses((status = 200, body = Proposal), (status = 404, body = ErrorBody)))]
async fn proposal(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.proposal(id(&raw)?).await?))
}

#[utoipa::path(get, path = "/v1/proposals/{id}/content", params(("id" = Uuid, Path)), responses((status = 200, description = "The proposal's bytes, with ETag: the digest", content_type = "application/octet-stream", body = Vec<u8>), (status = 404, body = ErrorBody)))]
async fn proposal_content(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<Response> {
    let (proposal, reader) = me.proposal_content(id(&raw)?).await?;
    Ok(bytes_response(proposal.size, &proposal.digest, reader))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/accept", params(("id" = Uuid, Path)), responses((status = 200, body = Proposal), (status = 409, description = "proposal_stale or artifact_busy", body = ErrorBody)))]
async fn accept(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.accept_proposal(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/rebuild", params(("id" = Uuid, Path)), responses((status = 201, body = Proposal)))]
async fn rebuild(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<(StatusCode, Json<Proposal>)> {
    Ok((
        StatusCode::CREATED,
        Json(me.rebuild_proposal(id(&raw)?).await?),
    ))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/reject", params(("id" = Uuid, Path)), responses((status = 200, body = Proposal)))]
async fn reject(Caller(me): Caller, RawId(raw): RawId) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.reject_proposal(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/break", params(("id" = Uuid, Path)), request_body = BreakBody, responses((status = 200, body = Artifact), (status = 403, body = ErrorBody)))]
async fn break_lease(
    Caller(me): Caller,
    RawId(raw): RawId,
    body: Body,
) -> ApiResult<Json<Artifact>> {
    let request: BreakBody = json_body(body).await?;
    Ok(Json(me.break_lease(id(&raw)?, &request.reason).await?))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameBody {
    /// The new path, under the rules of every new path.
    pub path: String,
}

/// An addition to API.md: an admin moves an artifact to a new path (to fix
/// one stored before the path rules). Writes `artifact.renamed` {from, to}.
#[utoipa::path(post, path = "/v1/artifacts/{id}/rename", params(("id" = Uuid, Path)), request_body = RenameBody, responses((status = 200, body = Artifact), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, description = "exists, or artifact_busy with the lease", body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn rename(Caller(me): Caller, RawId(raw): RawId, body: Body) -> ApiResult<Json<Artifact>> {
    let request: RenameBody = json_body(body).await?;
    let artifact = id(&raw)?;
    Ok(Json(me.rename(artifact, &request.path.parse()?).await?))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    after: Option<u64>,
    before: Option<u64>,
    limit: Option<u64>,
    artifact: Option<String>,
}

#[utoipa::path(get, path = "/v1/events", params(("after" = Option<u64>, Query), ("before" = Option<u64>, Query, description = "Events with a lower seq, newest first; not with after"), ("artifact" = Option<Uuid>, Query, description = "That artifact's events only"), ("limit" = Option<u64>, Query, description = "At most 1000")), responses((status = 200, body = EventPage), (status = 422, body = ErrorBody)))]
async fn events(Caller(me): Caller, request: Request) -> ApiResult<JsonList<Event>> {
    let q: EventsQuery = query(request.uri())?;
    let limit = in_range("limit", q.limit)?
        .unwrap_or(100)
        .min(MAX_EVENTS_PAGE.into());
    let page = me
        .query_events(EventQuery {
            artifact: q.artifact.as_deref().map(id).transpose()?,
            after: in_range("after", q.after)?,
            before: in_range("before", q.before)?,
            limit: limit as u32,
        })
        .await?;
    let mut list = JsonList::new("events", page.events);
    list.rest = format!(",\"next\":{}", page.next);
    Ok(list)
}

/// Server-Sent Events: every event after `after` (or the `Last-Event-ID` a
/// reconnecting client sends), then each new one as it is written (by this
/// server at once; by another process within a second). The stream looks at
/// its token again, uncached, before it sends what it read and at least once
/// a second, so it ends within a second of a revocation and sends nothing
/// written after it; and it ends at once when the server shuts down.
#[utoipa::path(get, path = "/v1/events/stream", params(("after" = Option<u64>, Query)), responses((status = 200, description = "Server-Sent Events, one Event per message", content_type = "text/event-stream")))]
async fn event_stream(
    Caller(me): Caller,
    Extension(closing): Extension<Closing>,
    request: Request,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let q: EventsQuery = query(request.uri())?;
    let last_event_id = match request.headers().get("last-event-id") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| Error::BadRequest("Last-Event-ID must be an event's seq".into()))?,
        ),
    };
    let after = in_range("Last-Event-ID", last_event_id)?
        .or(in_range("after", q.after)?)
        .unwrap_or(0);
    let bearer = bearer_of(request.headers())?.to_owned();
    let start: (Bundled, u64, Vec<Event>) = (me, after, Vec::new());
    let events = futures_util::stream::unfold(start, move |(me, mut after, mut pending)| {
        let bearer = bearer.clone();
        async move {
            loop {
                if let Some(event) = pending.pop() {
                    let sse = SseEvent::default()
                        .id(event.seq.to_string())
                        .event(&event.kind)
                        .json_data(&event)
                        .unwrap_or_default();
                    return Some((Ok(sse), (me, after, pending)));
                }
                let changed = me.changed();
                let page = me.events(after, 500).await;
                match me.recheck(&bearer).await {
                    Ok(_) => {}
                    Err(Error::Unauthorized(_)) => return None, // revoked: the stream ends
                    Err(_) => {
                        // The store is away: the stream waits for it, sending
                        // its keep-alives, and reads on from `after` once back.
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                }
                match page {
                    Ok(page) if !page.events.is_empty() => {
                        after = page.next;
                        pending = page.events;
                        pending.reverse();
                    }
                    Ok(_) => {
                        let _ = tokio::time::timeout(Duration::from_secs(1), changed).await;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                }
            }
        }
    });
    Ok(Sse::new(events.take_until(closing.wait())).keep_alive(KeepAlive::default()))
}

//! The server: connections accepted on loopback (a bounded number, each
//! with a limit on the time its headers take), every request admitted by
//! `guard` first, then routed to `files` or `events`.

use std::convert::Infallible;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use leasedesk_desk::Desk;
use leasedesk_model::Error;
use serde::de::DeserializeOwned;

use crate::events::Events;
use crate::files::{self, FileState};
use crate::{guard, Acted, OnActed};

/// The most connections open at once; more wait in the listener's queue.
const MAX_CONNECTIONS: usize = 64;

/// How long a client may take to send a request's headers.
const HEADER_TIME: Duration = Duration::from_secs(5);

type Body = BoxBody<Bytes, Infallible>;

pub struct Shared {
    pub port: u16,
    secret: String,
    desk: RwLock<Result<Desk, String>>,
    pub events: Events,
    on_acted: OnActed,
}

impl Shared {
    pub fn new(port: u16, secret: &str, on_acted: OnActed) -> Self {
        Self {
            port,
            secret: secret.to_owned(),
            desk: RwLock::new(Err("Leasedesk is starting".into())),
            events: Events::new(),
            on_acted,
        }
    }

    pub fn set_desk(&self, desk: Result<Desk, String>) {
        *self.desk.write().unwrap_or_else(|p| p.into_inner()) = desk;
    }

    fn desk(&self) -> Result<Desk, Error> {
        match &*self.desk.read().unwrap_or_else(|p| p.into_inner()) {
            Ok(desk) => Ok(desk.clone()),
            Err(why) => Err(Error::Unavailable(format!(
                "Leasedesk has no store open ({why}): check its Settings"
            ))),
        }
    }
}

pub async fn accept(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = connections.clone().acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file handles, say: wait rather than spin.
                tracing::warn!("the plugin API could not accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(answer(&shared, request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIME)
                .max_buf_size(guard::MAX_BODY)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                tracing::debug!("a plugin's connection ended: {e}");
            }
            drop(permit);
        });
    }
}

async fn answer(shared: &Shared, request: Request<Incoming>) -> Response<Body> {
    if let Err(refused) = guard::admit(request.headers(), shared.port, &shared.secret) {
        return refusal(&refused);
    }
    match routed(shared, request).await {
        Ok(response) => response,
        Err(e) => refusal(&e),
    }
}

async fn routed(shared: &Shared, request: Request<Incoming>) -> Result<Response<Body>, Error> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    match (method, path.as_str()) {
        (Method::GET, "/files") => {
            let asked = guard::query_param(query.as_deref(), "path")?
                .ok_or_else(|| Error::BadRequest("give ?path= the file's full path".into()))?;
            let local = guard::local_path(&asked)?;
            let desk = shared.desk()?;
            Ok(json(&files::state_at(&desk, &local).await?))
        }
        (Method::GET, "/events") => {
            let stream = shared.events.follow().ok_or_else(|| {
                Error::TooMany("too many plugins follow the events already".into())
            })?;
            let body = StreamBody::new(stream.map(|chunk| Ok(Frame::data(chunk))));
            let mut response = Response::new(BodyExt::boxed(body));
            let headers = response.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            Ok(response)
        }
        (Method::POST, "/files/checkout") => act(shared, request, files::check_out).await,
        (Method::POST, "/files/checkin") => act(shared, request, files::check_in).await,
        (Method::POST, "/files/extend") => act(shared, request, files::extend).await,
        (Method::POST, "/files/cancel") => act(shared, request, files::cancel).await,
        (Method::POST, "/files/ask") => act(shared, request, files::ask).await,
        (Method::POST, "/files/get") => act(shared, request, files::get).await,
        (method, "/files" | "/events") => Ok(method_not_allowed(&method, &path, "GET")),
        (method, known) if known.starts_with("/files/") && OPERATIONS.contains(&known) => {
            Ok(method_not_allowed(&method, &path, "POST"))
        }
        _ => Err(Error::NotFound(format!(
            "no {path} here: see docs/PLUGINS.md"
        ))),
    }
}

/// Runs an operation on the JSON body, tells the app and the followers of
/// `/events`, and answers with the file's state.
async fn act<T: DeserializeOwned, F>(
    shared: &Shared,
    request: Request<Incoming>,
    operation: impl FnOnce(Desk, T) -> F,
) -> Result<Response<Body>, Error>
where
    F: std::future::Future<Output = leasedesk_model::Result<(FileState, Acted)>>,
{
    let body = guard::body(request.into_body()).await?;
    let asked: T = guard::json(&body)?;
    let desk = shared.desk()?;
    let (state, acted) = operation(desk, asked).await?;
    (shared.on_acted)(acted);
    shared.events.send(state.clone());
    Ok(json(&state))
}

/// The operations' paths, all `POST`.
const OPERATIONS: [&str; 6] = [
    "/files/checkout",
    "/files/checkin",
    "/files/extend",
    "/files/cancel",
    "/files/ask",
    "/files/get",
];

fn method_not_allowed(method: &Method, path: &str, allowed: &'static str) -> Response<Body> {
    let body = serde_json::json!({
        "error": leasedesk_model::error::Code::MethodNotAllowed,
        "message": format!("{path} does not take {method}, only {allowed}"),
    });
    let mut response = with_status(
        StatusCode::METHOD_NOT_ALLOWED,
        serde_json::to_vec(&body).unwrap_or_default(),
    );
    response
        .headers_mut()
        .insert(hyper::header::ALLOW, HeaderValue::from_static(allowed));
    response
}

fn json(value: &impl serde::Serialize) -> Response<Body> {
    with_status(
        StatusCode::OK,
        serde_json::to_vec(value).unwrap_or_default(),
    )
}

fn refusal(error: &Error) -> Response<Body> {
    let body = match error {
        // The details (paths, the store's words) go to the log, not the plugin.
        Error::Internal(detail) => {
            tracing::error!(%detail, "the plugin API failed");
            serde_json::json!({ "error": "internal", "message": "Leasedesk failed; nothing was changed, or it completed: look again" })
        }
        e => e.to_body(),
    };
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    with_status(status, serde_json::to_vec(&body).unwrap_or_default())
}

fn with_status(status: StatusCode, bytes: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(bytes)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

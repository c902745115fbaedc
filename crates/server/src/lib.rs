//! `leasedesk serve`: the HTTP API of `docs/API.md` over a bundled engine;
//! `app` (the router) and `run_with` (serving it) are the surface. Transport
//! (`accept`, `conn`, `h2`, `answer`, `tls`) is kept apart from `routes`, the
//! error mapping (`errors`) and the document (`openapi`); `metrics` is what
//! Prometheus reads.
//!
//! Nothing here holds a lease rule; nothing but the CLI depends on it.

pub mod metrics;

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_backend as backend;
use leasedesk_blobs::previews;
use leasedesk_engine as bundled;
use leasedesk_engine::token;
use leasedesk_model::{error, model, wire};
use leasedesk_preview as preview;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware;
use axum::routing::get;
use axum::{Extension, Router};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::bundled::Bundled;
use crate::error::Error;
use crate::metrics::Metrics;

mod accept;
mod answer;
mod conn;
mod errors;
mod h2;
mod linger;
mod observe;
mod openapi;
mod request;
mod routes;
pub mod tls;

pub use conn::Limits;
pub use errors::{status_of, ApiError};
pub use openapi::openapi;
pub use request::json_object;
pub use routes::artifacts::{BreakBody, RenameBody};
pub use routes::checkouts::TtlBody;

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
    accept::serve(listener, router, closing, close, config, shutdown).await;
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

/// The API's routes over `store`, for a router that is never shut down.
pub fn app(store: Bundled) -> Router {
    let (close, closing) = watch::channel(false);
    drop(close);
    app_with(store, Closing(closing), None)
}

/// The API's routes over `store`; event streams end when `closing` says so.
/// Requests are counted into `metrics` when given.
fn app_with(store: Bundled, closing: Closing, metrics: Option<Metrics>) -> Router {
    let routes = routes::api()
        .route("/v1/openapi.json", get(openapi::openapi_json))
        .fallback(|| async { ApiError(Error::NotFound("no such endpoint".into())) })
        .method_not_allowed_fallback(|request: Request| async move {
            errors::method_not_allowed(request.method(), request.uri().path())
        })
        .layer(middleware::from_fn(observe::no_store_and_log));
    let routes = match metrics {
        Some(metrics) => routes.layer(middleware::from_fn_with_state(
            metrics,
            observe::count_request,
        )),
        None => routes,
    };
    routes.layer(Extension(closing)).with_state(store)
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
    let router = observe::scrape_router(store, metrics);
    accept::serve_metrics(listener, router, limits, shutdown).await;
    Ok(())
}

/// The guard's parsers of untrusted bytes, for the fuzz targets in `fuzz/`.
#[doc(hidden)]
pub mod parsers {
    pub use super::conn::{accepts_head, chunk_size_of};
}

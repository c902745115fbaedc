//! What the server tells its operators: every request logged (never a
//! header) and answered `no-store`, requests counted by route template, and
//! the scrape's router. It never changes an answer's status or body.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header::{self, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};

use super::errors::ApiError;
use crate::bundled::Bundled;
use crate::error::Error;
use crate::metrics::Metrics;

/// The routes whose request body is an upload, for the in-flight gauge.
const UPLOAD_ROUTES: [&str; 4] = [
    "/v1/artifacts",
    "/v1/checkouts/{id}/checkin",
    "/v1/checkouts/{id}/stage",
    "/v1/edits/{id}/commit",
];

/// Counts each request by its route's template (the raw path would make a
/// series per id), and an upload as in flight while it is handled.
pub(crate) async fn count_request(
    State(metrics): State<Metrics>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |matched| matched.as_str())
        .to_owned();
    let method = request.method().clone();
    let uploading = (method == axum::http::Method::POST && UPLOAD_ROUTES.contains(&route.as_str()))
        || (method == axum::http::Method::PATCH && route == "/v1/uploads/{id}");
    let _in_flight = uploading.then(|| metrics.upload_started());
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

/// The metrics address's one route, `GET /metrics`.
pub(crate) fn scrape_router(store: Bundled, metrics: Metrics) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .fallback(|| async {
            ApiError(Error::NotFound(
                "this address serves only GET /metrics".into(),
            ))
        })
        .layer(Extension(metrics))
        .with_state(store)
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
pub(crate) async fn no_store_and_log(request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let started = Instant::now();
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    tracing::info!(%method, %path, status = response.status().as_u16(), ms = started.elapsed().as_secs_f64() * 1e3, "request");
    response
}

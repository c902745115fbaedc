//! The hand-over between a connection (HTTP/1 through the guard, or HTTP/2)
//! and the router: each request's answer, or the guard's refusal it stands in
//! for, with the end of the answer told to the connection's state. It never
//! reads sockets and never decides a route.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::header::{self, HeaderValue};
use axum::response::Response;
use axum::Router;
use serde_json::json;
use tower::ServiceExt;

use super::conn::{ConnState, Refusal};
use super::errors::error_response;
use super::h2::Pace;

/// The router's answer to one request (or the guard's refusal it stands in
/// for), whose end the guard is told of, so it times the idle wait after it;
/// handed over in pieces when `pace` is given (HTTP/2).
pub(crate) async fn answer(
    router: Router,
    state: Arc<ConnState>,
    request: hyper::Request<Body>,
    pace: Option<Pace>,
) -> Response {
    let response = match state.next_request() {
        Some(refusal) => refusal_response(&refusal),
        None => match router.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
    };
    response.map(|body| Body::new(Answered { body, state, pace }))
}

/// A response body that tells the connection's guard when it is done.
struct Answered {
    body: Body,
    state: Arc<ConnState>,
    pace: Option<Pace>,
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
        let this = &mut *self;
        match &mut this.pace {
            Some(pace) => pace.poll_piece(&mut this.body, cx),
            None => std::pin::Pin::new(&mut this.body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pace.as_ref().is_none_or(Pace::is_empty) && self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        let inner = self.body.size_hint();
        match &self.pace {
            Some(pace) => pace.size_hint(inner),
            None => inner,
        }
    }
}

fn refusal_response(refusal: &Refusal) -> Response {
    let body = json!({ "error": refusal.code, "message": refusal.message });
    let mut response = error_response(refusal.status, &body);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

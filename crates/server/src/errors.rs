//! The API's errors on the wire: [`Error`] to its status and its JSON body
//! `{"error", "message", ...}`, and the body's schema for the OpenAPI
//! document. It never decides whether something is an error: the rules do.

use axum::http::header::{self, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use utoipa::ToSchema;

use crate::error::{Code, Error};
use crate::model::{Head, Lease};

/// An error as the API answers it: status, and `{"error", "message", ...}`.
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

impl From<crate::model::Invalid> for ApiError {
    fn from(invalid: crate::model::Invalid) -> Self {
        Self(invalid.into())
    }
}

/// The HTTP status of `error`: one table, [`Error::status`], for the server
/// and the app's local API.
pub fn status_of(error: &Error) -> StatusCode {
    StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = status_of(&self.0);
        let body = match &self.0 {
            Error::Internal(detail) => {
                json!({ "error": Code::Internal, "message": logged_internal(detail) })
            }
            e => e.to_body(),
        };
        (status, Json(body)).into_response()
    }
}

/// Logs an internal error's details and gives what the caller is told
/// instead: the details (paths, SQLite's words) go to the log, not the caller.
pub(crate) fn logged_internal(detail: &str) -> &'static str {
    tracing::error!(%detail, "internal error");
    "the server failed; the request changed nothing or completed, and can be retried"
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

pub(crate) fn error_response(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The body of every refusal (for the OpenAPI document).
#[derive(serde::Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    /// The error's code: one of those a server sends.
    #[schema(schema_with = server_codes)]
    error: Code,
    message: String,
    /// With artifact_busy: the live lease, or null if it ended meanwhile.
    lease: Option<Lease>,
    /// With stale and proposal_stale: the head now.
    head: Option<Head>,
    /// With artifact_busy: the artifact's path.
    path: Option<String>,
    /// With digest_mismatch: the digest sent and the digest of the bytes.
    expected: Option<String>,
    actual: Option<String>,
    /// With too_large: the limit passed, in bytes.
    limit: Option<u64>,
}

/// The codes a server sends ([`Code::sent_by_server`]), as the document
/// lists them: never the client's or the app's own.
fn server_codes() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let sent = Code::ALL.iter().filter(|code| code.sent_by_server());
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(sent.map(|code| code.as_str())))
        .build()
}

/// A method that a known path does not have: 405 `method_not_allowed` in our
/// JSON (the router adds `Allow`, the methods the path has).
pub(crate) fn method_not_allowed(method: &Method, path: &str) -> Response {
    let body = json!({
        "error": Code::MethodNotAllowed,
        "message": format!("{path} does not take {method}: see Allow for the methods it takes"),
    });
    error_response(StatusCode::METHOD_NOT_ALLOWED, &body)
}

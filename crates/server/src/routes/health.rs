//! Health (the one route without a token) and `me`. The health check never
//! waits on the store or the blobs for more than their own bound.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::super::errors::ApiResult;
use super::super::request::Caller;
use crate::backend::Backend;
use crate::bundled::Bundled;

#[utoipa::path(get, path = "/v1/health", responses((status = 200, description = "The server is up", body = Object), (status = 503, description = "The database or the blob store cannot be reached: `{\"status\":\"unavailable\",\"reason\"}`", body = Object)))]
pub(crate) async fn health(State(store): State<Bundled>) -> Response {
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

#[utoipa::path(get, path = "/v1/me", responses((status = 200, description = "The participant the token names", body = Object)))]
pub(crate) async fn me(Caller(me): Caller) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(json!({ "participant": me.me().await? })))
}

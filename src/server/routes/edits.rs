//! Edits: an agent's short lease, begun, committed or released. Never a
//! lease rule: those are in `rules`.

use axum::body::Body;
use axum::http::header::HeaderMap;
use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};

use super::super::errors::ApiResult;
use super::super::request::{id, json_body, upload, Caller, RawId};
use super::checkouts::TtlBody;
use crate::backend::Backend;
use crate::bundled::Bundled;
use crate::model::*;

pub(in crate::server) fn routes() -> Router<Bundled> {
    Router::new()
        .route("/v1/artifacts/{id}/edits", post(begin_edit))
        .route("/v1/edits/{id}/commit", post(commit_edit))
        .route("/v1/edits/{id}", delete(release_edit))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/edits", request_body = TtlBody, responses((status = 201, body = Edit)))]
pub(in crate::server) async fn begin_edit(
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

#[utoipa::path(post, path = "/v1/edits/{id}/commit", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = CheckinResult)))]
pub(in crate::server) async fn commit_edit(
    Caller(me): Caller,
    RawId(raw): RawId,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<CheckinResult>> {
    let edit = id(&raw)?;
    Ok(Json(me.commit_edit(edit, upload(&headers, body)?).await?))
}

#[utoipa::path(delete, path = "/v1/edits/{id}", responses((status = 204, description = "Released (idempotent)")))]
pub(in crate::server) async fn release_edit(
    Caller(me): Caller,
    RawId(raw): RawId,
) -> ApiResult<StatusCode> {
    me.release_edit(id(&raw)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

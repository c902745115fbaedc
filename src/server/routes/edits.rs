//! Edits: an agent's short lease, begun, committed or released. Never a
//! lease rule: those are in `rules`.

use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};

use super::super::errors::ApiResult;
use super::super::request::{Caller, Id, JsonBody, UploadBody};
use super::checkouts::TtlBody;
use super::{created, Created};
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
    Id(artifact): Id<ArtifactId>,
    JsonBody(request): JsonBody<TtlBody>,
) -> ApiResult<Created<Edit>> {
    Ok(created(me.begin_edit(artifact, request.ttl_seconds).await?))
}

#[utoipa::path(post, path = "/v1/edits/{id}/commit", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = CheckinResult)))]
pub(in crate::server) async fn commit_edit(
    Caller(me): Caller,
    Id(edit): Id<EditId>,
    UploadBody(upload): UploadBody,
) -> ApiResult<Json<CheckinResult>> {
    Ok(Json(me.commit_edit(edit, upload).await?))
}

#[utoipa::path(delete, path = "/v1/edits/{id}", responses((status = 204, description = "Released (idempotent)")))]
pub(in crate::server) async fn release_edit(
    Caller(me): Caller,
    Id(edit): Id<EditId>,
) -> ApiResult<StatusCode> {
    me.release_edit(edit).await?;
    Ok(StatusCode::NO_CONTENT)
}

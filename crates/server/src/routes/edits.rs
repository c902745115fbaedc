//! Edits: an agent's short lease, begun, committed or released. Never a
//! lease rule: those are in `rules`.

use axum::http::StatusCode;
use axum::Json;

use super::super::errors::ApiResult;
use super::super::request::{JsonBody, On, UploadBody};
use super::checkouts::TtlBody;
use super::uploads::with_upload;
use super::{created, Created};
use crate::backend::Backend;
use crate::model::*;

#[utoipa::path(post, path = "/v1/artifacts/{id}/edits", request_body = TtlBody, responses((status = 201, body = Edit)))]
pub(crate) async fn begin_edit(
    On(me, artifact): On<ArtifactId>,
    JsonBody(request): JsonBody<TtlBody>,
) -> ApiResult<Created<Edit>> {
    Ok(created(me.begin_edit(artifact, request.ttl_seconds).await?))
}

#[utoipa::path(post, path = "/v1/edits/{id}/commit", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = CheckinResult)))]
pub(crate) async fn commit_edit(
    On(me, edit): On<EditId>,
    UploadBody(incoming): UploadBody,
) -> ApiResult<Json<CheckinResult>> {
    let target = UploadFor::Edit(edit);
    let done = with_upload(&me, incoming, target, async |u| {
        me.commit_edit(edit, u).await
    });
    Ok(Json(done.await?))
}

#[utoipa::path(delete, path = "/v1/edits/{id}", responses((status = 204, description = "Released (idempotent)")))]
pub(crate) async fn release_edit(On(me, edit): On<EditId>) -> ApiResult<StatusCode> {
    me.release_edit(edit).await?;
    Ok(StatusCode::NO_CONTENT)
}

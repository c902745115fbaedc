//! Changes of several files: check-outs taken together, bytes staged for
//! each, and the change that checks them in as one. Never a rule: those are
//! in `rules`.

use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::super::errors::ApiResult;
use super::super::request::{Caller, JsonBody, On, UploadBody};
use super::uploads::with_upload;
use super::{created, Created};
use crate::backend::Backend;
use crate::model::*;

/// The answer of `POST /v1/checkouts`: the check-outs in the order asked.
#[derive(Serialize, ToSchema)]
pub struct CheckoutsTaken {
    pub checkouts: Vec<Checkout>,
}

#[utoipa::path(post, path = "/v1/checkouts", request_body = CheckoutsRequest, responses((status = 201, body = CheckoutsTaken)))]
pub(crate) async fn check_out_many(
    Caller(me): Caller,
    JsonBody(request): JsonBody<CheckoutsRequest>,
) -> ApiResult<Created<CheckoutsTaken>> {
    let checkouts = me.check_out_many(request).await?;
    Ok(created(CheckoutsTaken { checkouts }))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/stage", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = StagedFile)))]
pub(crate) async fn stage(
    On(me, checkout): On<CheckoutId>,
    UploadBody(incoming): UploadBody,
) -> ApiResult<Json<StagedFile>> {
    let target = UploadFor::Checkout(checkout);
    let done = with_upload(&me, incoming, target, async |u| me.stage(checkout, u).await);
    Ok(Json(done.await?))
}

#[utoipa::path(post, path = "/v1/changes", request_body = ChangeRequest, responses((status = 200, body = Change)))]
pub(crate) async fn commit_change(
    Caller(me): Caller,
    JsonBody(request): JsonBody<ChangeRequest>,
) -> ApiResult<Json<Change>> {
    Ok(Json(me.commit_change(request).await?))
}

#[utoipa::path(get, path = "/v1/changes/{id}", responses((status = 200, body = Change)))]
pub(crate) async fn change(On(me, change): On<ChangeId>) -> ApiResult<Json<Change>> {
    Ok(Json(me.change(change).await?))
}

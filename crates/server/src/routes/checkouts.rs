//! Check-outs: a person's lease on an artifact, from check-out through
//! extend to check-in or cancel. Never a lease rule: those are in `rules`.

use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::errors::ApiResult;
use super::super::request::{Caller, JsonBody, On, Params, UploadBody};
use super::uploads::with_upload;
use super::{created, Created, JsonList};
use crate::backend::Backend;
use crate::model::*;

#[utoipa::path(post, path = "/v1/artifacts/{id}/checkouts", request_body = CheckoutRequest, responses((status = 201, body = Checkout)))]
pub(crate) async fn check_out(
    On(me, artifact): On<ArtifactId>,
    JsonBody(request): JsonBody<CheckoutRequest>,
) -> ApiResult<Created<Checkout>> {
    Ok(created(me.check_out(artifact, request).await?))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TtlBody {
    pub ttl_seconds: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateQuery {
    state: Option<CheckoutState>,
}

#[utoipa::path(get, path = "/v1/checkouts", responses((status = 200, description = "The caller's own check-outs", body = CheckoutList)))]
pub(crate) async fn checkouts(
    Caller(me): Caller,
    Params(q): Params<StateQuery>,
) -> ApiResult<JsonList<Checkout>> {
    let open_only = q.state == Some(CheckoutState::Open);
    let mut checkouts = me.checkouts(open_only).await?;
    if q.state == Some(CheckoutState::Closed) {
        checkouts.retain(|c| c.state == CheckoutState::Closed);
    }
    Ok(JsonList::new("checkouts", checkouts))
}

#[utoipa::path(get, path = "/v1/checkouts/{id}", responses((status = 200, body = Checkout)))]
pub(crate) async fn checkout(On(me, checkout): On<CheckoutId>) -> ApiResult<Json<Checkout>> {
    Ok(Json(me.checkout(checkout).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/extend", request_body = TtlBody, responses((status = 200, body = Checkout)))]
pub(crate) async fn extend(
    On(me, checkout): On<CheckoutId>,
    JsonBody(request): JsonBody<TtlBody>,
) -> ApiResult<Json<Checkout>> {
    Ok(Json(me.extend(checkout, request.ttl_seconds).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/checkin", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = Checkout)))]
pub(crate) async fn check_in(
    On(me, checkout): On<CheckoutId>,
    UploadBody(incoming): UploadBody,
) -> ApiResult<Json<Checkout>> {
    let target = UploadFor::Checkout(checkout);
    let done = with_upload(&me, incoming, target, async |u| {
        me.check_in(checkout, u).await
    });
    Ok(Json(done.await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/cancel", responses((status = 200, body = Checkout)))]
pub(crate) async fn cancel(On(me, checkout): On<CheckoutId>) -> ApiResult<Json<Checkout>> {
    Ok(Json(me.cancel(checkout).await?))
}

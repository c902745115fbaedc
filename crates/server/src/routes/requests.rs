//! Requests: asking the holder of a file to release it, the holder's
//! replies and the asker's withdrawal. Never a rule: those are in `rules`.

use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::errors::ApiResult;
use super::super::request::{Caller, JsonBody, On, Params};
use super::JsonList;
use crate::backend::Backend;
use crate::model::*;

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AskBody {
    /// Why you ask, shown to the holder: at most 1000 characters.
    pub message: Option<String>,
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyBody {
    /// The answer, shown to the asker: 1 to 1000 characters.
    pub message: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestsQuery {
    state: Option<RequestState>,
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/requests", request_body = AskBody, responses((status = 201, body = Request), (status = 200, description = "The caller's request on that check-out, which still stood: its message replaced", body = Request)))]
pub(crate) async fn ask(
    On(me, artifact): On<ArtifactId>,
    JsonBody(body): JsonBody<AskBody>,
) -> ApiResult<(StatusCode, Json<Request>)> {
    let (request, is_new) = me.ask(artifact, body.message.as_deref()).await?;
    let status = match is_new {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    Ok((status, Json(request)))
}

#[utoipa::path(get, path = "/v1/requests", responses((status = 200, description = "The requests to the caller and those from the caller, newest first", body = RequestList)))]
pub(crate) async fn requests(
    Caller(me): Caller,
    Params(q): Params<RequestsQuery>,
) -> ApiResult<JsonList<Request>> {
    // `open` is every request that still stands: a replied one too.
    let live_only = q.state.is_some_and(RequestState::is_live);
    let mut requests = me.requests(live_only).await?;
    if let Some(state) = q.state.filter(|s| *s != RequestState::Open) {
        requests.retain(|r| r.state == state);
    }
    Ok(JsonList::new("requests", requests))
}

#[utoipa::path(post, path = "/v1/requests/{id}/reply", request_body = ReplyBody, responses((status = 200, body = Request)))]
pub(crate) async fn reply(
    On(me, request): On<RequestId>,
    JsonBody(body): JsonBody<ReplyBody>,
) -> ApiResult<Json<Request>> {
    Ok(Json(me.reply(request, &body.message).await?))
}

#[utoipa::path(post, path = "/v1/requests/{id}/withdraw", responses((status = 200, body = Request)))]
pub(crate) async fn withdraw(On(me, request): On<RequestId>) -> ApiResult<Json<Request>> {
    Ok(Json(me.withdraw(request).await?))
}

//! Review: threads and comments, resolving, decisions, review requests and
//! the inbox. Never a rule: those are in `rules::review`.

use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::errors::{ApiError, ApiResult};
use super::super::request::{in_range, Caller, JsonBody, On, Params};
use super::{created, Created};
use crate::backend::Backend;
use crate::error::Error;
use crate::model::*;

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentBody {
    /// 1 to 10,000 characters; `@name` of a participant who may read the file mentions them.
    pub body: String,
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadBody {
    /// Every item up to this seq is read.
    pub up_to: Option<u64>,
}

#[derive(serde::Serialize, Deserialize, ToSchema)]
pub struct Unread {
    pub unread: u64,
}

/// `?version=N&proposal=ID`, and for threads `&state=open`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetQuery {
    version: Option<u64>,
    proposal: Option<ProposalId>,
    state: Option<ThreadState>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct InboxParams {
    after: Option<u64>,
    before: Option<u64>,
    limit: Option<u64>,
    unread: Option<bool>,
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/threads", request_body = NewThread, responses((status = 201, body = Thread)))]
pub(crate) async fn open_thread(
    On(me, artifact): On<ArtifactId>,
    JsonBody(body): JsonBody<NewThread>,
) -> ApiResult<Created<Thread>> {
    Ok(created(me.open_thread(artifact, body).await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/threads", responses((status = 200, description = "The file's threads by number, each with its comments", body = ThreadList)))]
pub(crate) async fn threads(
    On(me, artifact): On<ArtifactId>,
    Params(q): Params<TargetQuery>,
) -> ApiResult<Json<ThreadList>> {
    if q.version == Some(0) {
        return Err(ApiError(Error::Invalid("versions count from 1".into())));
    }
    let query = ThreadQuery {
        version: in_range("version", q.version)?,
        proposal: q.proposal,
        state: q.state,
    };
    Ok(Json(ThreadList {
        threads: me.threads(artifact, query).await?,
    }))
}

#[utoipa::path(post, path = "/v1/threads/{id}/comments", request_body = CommentBody, responses((status = 201, body = Comment)))]
pub(crate) async fn comment(
    On(me, thread): On<ThreadId>,
    JsonBody(body): JsonBody<CommentBody>,
) -> ApiResult<Created<Comment>> {
    Ok(created(me.comment(thread, &body.body).await?))
}

#[utoipa::path(post, path = "/v1/threads/{id}/resolve", responses((status = 200, body = Thread)))]
pub(crate) async fn resolve(On(me, thread): On<ThreadId>) -> ApiResult<Json<Thread>> {
    Ok(Json(me.resolve_thread(thread, true).await?))
}

#[utoipa::path(post, path = "/v1/threads/{id}/reopen", responses((status = 200, body = Thread)))]
pub(crate) async fn reopen(On(me, thread): On<ThreadId>) -> ApiResult<Json<Thread>> {
    Ok(Json(me.resolve_thread(thread, false).await?))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/reviews", request_body = NewReview, responses((status = 201, body = Review)))]
pub(crate) async fn review(
    On(me, artifact): On<ArtifactId>,
    JsonBody(body): JsonBody<NewReview>,
) -> ApiResult<Created<Review>> {
    Ok(created(me.review(artifact, body).await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/reviews", responses((status = 200, description = "The decisions, oldest first, and the review state", body = ReviewList)))]
pub(crate) async fn reviews(
    On(me, artifact): On<ArtifactId>,
    Params(q): Params<TargetQuery>,
) -> ApiResult<Json<ReviewList>> {
    if q.state.is_some() {
        return Err(ApiError(Error::BadRequest(
            "reviews have no state parameter: name a version or a proposal".into(),
        )));
    }
    let target = ReviewTarget::from_parts(in_range("version", q.version)?, q.proposal)
        .map_err(Error::from)?;
    Ok(Json(me.reviews(artifact, target).await?))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/review-requests", request_body = NewReviewRequest, responses((status = 201, body = Requested)))]
pub(crate) async fn request_review(
    On(me, artifact): On<ArtifactId>,
    JsonBody(body): JsonBody<NewReviewRequest>,
) -> ApiResult<Created<Requested>> {
    Ok(created(me.request_review(artifact, body).await?))
}

#[utoipa::path(get, path = "/v1/inbox", responses((status = 200, body = InboxPage)))]
pub(crate) async fn inbox(
    Caller(me): Caller,
    Params(q): Params<InboxParams>,
) -> ApiResult<Json<InboxPage>> {
    if q.after.is_some() && q.before.is_some() {
        return Err(ApiError(Error::Invalid(
            "page after a seq or before one, not both".into(),
        )));
    }
    let limit = in_range("limit", q.limit)?.map(|n| n.clamp(1, MAX_INBOX_PAGE.into()) as u32);
    let query = InboxQuery {
        after: in_range("after", q.after)?,
        before: in_range("before", q.before)?,
        limit,
        unread: q.unread.unwrap_or(false),
    };
    Ok(Json(me.inbox(query).await?))
}

#[utoipa::path(post, path = "/v1/inbox/read", request_body = ReadBody, responses((status = 200, body = Unread)))]
pub(crate) async fn read_inbox(
    Caller(me): Caller,
    JsonBody(body): JsonBody<ReadBody>,
) -> ApiResult<(StatusCode, Json<Unread>)> {
    let Some(up_to) = in_range("up_to", body.up_to)? else {
        return Err(ApiError(Error::BadRequest(
            "say up_to: the seq up to which items are read".into(),
        )));
    };
    let unread = me.mark_inbox_read(up_to).await?;
    Ok((StatusCode::OK, Json(Unread { unread })))
}

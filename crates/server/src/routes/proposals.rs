//! Proposals: check-ins that could not commit, listed, read, accepted,
//! rebuilt or rejected. Never a lease rule: those are in `rules`.

use axum::response::Response;
use axum::Json;
use serde::Deserialize;

use super::super::errors::ApiResult;
use super::super::request::{id, Caller, On, Params};
use super::{bytes_response, created, Created, JsonList};
use crate::backend::Backend;
use crate::model::*;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProposalQuery {
    artifact: Option<String>,
    state: Option<ProposalState>,
}

#[utoipa::path(get, path = "/v1/proposals", responses((status = 200, body = ProposalList)))]
pub(crate) async fn proposals(
    Caller(me): Caller,
    Params(q): Params<ProposalQuery>,
) -> ApiResult<JsonList<Proposal>> {
    let filter = ProposalFilter {
        artifact: q.artifact.as_deref().map(id).transpose()?,
        state: q.state,
    };
    Ok(JsonList::new("proposals", me.proposals(filter).await?))
}

#[utoipa::path(get, path = "/v1/proposals/{id}", responses((status = 200, body = Proposal)))]
pub(crate) async fn proposal(On(me, proposal): On<ProposalId>) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.proposal(proposal).await?))
}

#[utoipa::path(get, path = "/v1/proposals/{id}/content", responses((status = 200, description = "The proposal's bytes, with ETag: the digest", content_type = "application/octet-stream", body = Vec<u8>)))]
pub(crate) async fn proposal_content(On(me, proposal): On<ProposalId>) -> ApiResult<Response> {
    let (proposal, reader) = me.proposal_content(proposal).await?;
    Ok(bytes_response(proposal.size, &proposal.digest, reader))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/accept", responses((status = 200, body = Proposal)))]
pub(crate) async fn accept(On(me, proposal): On<ProposalId>) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.accept_proposal(proposal).await?))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/rebuild", responses((status = 201, body = Proposal)))]
pub(crate) async fn rebuild(On(me, proposal): On<ProposalId>) -> ApiResult<Created<Proposal>> {
    Ok(created(me.rebuild_proposal(proposal).await?))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/reject", responses((status = 200, body = Proposal)))]
pub(crate) async fn reject(On(me, proposal): On<ProposalId>) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.reject_proposal(proposal).await?))
}

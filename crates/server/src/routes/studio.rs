//! A studio's people and folders: invites and their redeeming (the one
//! operation without a token), devices, participants, groups and folder
//! permissions. Never a rule: those are in `rules::studio` and
//! `rules::access`. A malformed rule or name is 422, as the rules say, not
//! 400: the bodies are read as text and checked here.

use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::accept::PeerAddress;
use super::super::errors::{ApiError, ApiResult};
use super::super::request::{Caller, JsonBody, On, Segments};
use super::{Created, JsonList};
use crate::backend::Studio;
use crate::bundled::Bundled;
use crate::error::Error;
use crate::model::*;

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MyInviteBody {
    /// Seconds until the code lapses: 60 to 30 days (default 7 days).
    pub expires_seconds: Option<u64>,
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RedeemBody {
    /// The invite's code, as given (case, spaces and dashes do not matter).
    pub code: String,
    /// This device's name, shown in the lists of devices: 1 to 64 characters.
    pub device: String,
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupBody {
    /// `user:NAME` or `agent:NAME`, each a participant.
    pub members: Vec<String>,
}

/// A rule as sent: checked by the rules' own words (422), not by the JSON's.
#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleBody {
    pub folder: String,
    pub who: String,
    pub level: String,
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RulesBody {
    pub rules: Vec<RuleBody>,
}

#[utoipa::path(post, path = "/v1/invites", request_body = InviteRequest, responses((status = 201, body = Invite)))]
pub(crate) async fn invite(
    Caller(me): Caller,
    JsonBody(body): JsonBody<InviteRequest>,
) -> ApiResult<Created<Invite>> {
    Ok((StatusCode::CREATED, Json(me.invite(body).await?)))
}

#[utoipa::path(get, path = "/v1/invites", responses((status = 200, body = InviteList)))]
pub(crate) async fn invites(Caller(me): Caller) -> ApiResult<JsonList<OpenInvite>> {
    Ok(JsonList::new("invites", me.invites().await?))
}

#[utoipa::path(delete, path = "/v1/invites/{id}", responses((status = 204, description = "The invite's code works no more")))]
pub(crate) async fn revoke_invite(On(me, id): On<InviteId>) -> ApiResult<StatusCode> {
    me.revoke_invite(id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/v1/me/invites", request_body = MyInviteBody, responses((status = 201, body = Invite)))]
pub(crate) async fn invite_myself(
    Caller(me): Caller,
    JsonBody(body): JsonBody<MyInviteBody>,
) -> ApiResult<Created<Invite>> {
    Ok((
        StatusCode::CREATED,
        Json(me.invite_myself(body.expires_seconds).await?),
    ))
}

#[utoipa::path(post, path = "/v1/invites/redeem", request_body = RedeemBody, responses((status = 201, body = Redeemed)))]
pub(crate) async fn redeem(
    axum::extract::State(store): axum::extract::State<Bundled>,
    peer: Option<Extension<Option<PeerAddress>>>,
    JsonBody(body): JsonBody<RedeemBody>,
) -> ApiResult<Created<Redeemed>> {
    let from = peer.and_then(|Extension(peer)| peer).map(|p| p.0);
    let redeemed = store.redeem_invite(&body.code, &body.device, from).await?;
    Ok((StatusCode::CREATED, Json(redeemed)))
}

#[utoipa::path(get, path = "/v1/me/devices", responses((status = 200, body = MyDevices)))]
pub(crate) async fn my_devices(Caller(me): Caller) -> ApiResult<Json<MyDevices>> {
    Ok(Json(me.my_devices().await?))
}

#[utoipa::path(delete, path = "/v1/me/devices/{id}", responses((status = 204, description = "The device's token stops working")))]
pub(crate) async fn revoke_my_device(
    Caller(me): Caller,
    Segments(id): Segments<String>,
) -> ApiResult<StatusCode> {
    me.revoke_my_device(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/v1/participants", responses((status = 200, body = MemberList)))]
pub(crate) async fn participants(Caller(me): Caller) -> ApiResult<JsonList<Member>> {
    Ok(JsonList::new("participants", me.members().await?))
}

#[utoipa::path(delete, path = "/v1/participants/{participant}/devices/{id}", responses((status = 204, description = "The device's token stops working")))]
pub(crate) async fn revoke_device(
    Caller(me): Caller,
    Segments((participant, id)): Segments<(String, String)>,
) -> ApiResult<StatusCode> {
    let participant: Participant = participant
        .parse()
        .map_err(|e: Invalid| ApiError(Error::BadRequest(e.0)))?;
    me.revoke_device(&participant, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/v1/groups", responses((status = 200, body = GroupList)))]
pub(crate) async fn groups(Caller(me): Caller) -> ApiResult<JsonList<Group>> {
    Ok(JsonList::new("groups", me.groups().await?))
}

#[utoipa::path(put, path = "/v1/groups/{name}", request_body = GroupBody, responses((status = 200, body = Group)))]
pub(crate) async fn put_group(
    Caller(me): Caller,
    Segments(name): Segments<String>,
    JsonBody(body): JsonBody<GroupBody>,
) -> ApiResult<Json<Group>> {
    let group = Group {
        name: name.parse()?,
        members: body
            .members
            .iter()
            .map(|m| m.parse())
            .collect::<Result<_, Invalid>>()?,
    };
    Ok(Json(me.put_group(group).await?))
}

#[utoipa::path(delete, path = "/v1/groups/{name}", responses((status = 204, description = "Removed")))]
pub(crate) async fn delete_group(
    Caller(me): Caller,
    Segments(name): Segments<String>,
) -> ApiResult<StatusCode> {
    me.delete_group(&name.parse()?).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/v1/permissions", responses((status = 200, body = Rules)))]
pub(crate) async fn permissions(Caller(me): Caller) -> ApiResult<Json<Rules>> {
    Ok(Json(Rules {
        rules: me.permission_rules().await?,
    }))
}

#[utoipa::path(put, path = "/v1/permissions", request_body = RulesBody, responses((status = 200, body = Rules)))]
pub(crate) async fn put_permissions(
    Caller(me): Caller,
    JsonBody(body): JsonBody<RulesBody>,
) -> ApiResult<Json<Rules>> {
    let rules = body
        .rules
        .iter()
        .map(|r| Rule::parse(&r.folder, &r.who, &r.level))
        .collect::<Result<_, Invalid>>()?;
    Ok(Json(Rules {
        rules: me.put_permission_rules(rules).await?,
    }))
}

//! Artifacts: list, import, one artifact, its versions and content, an
//! admin's break and rename. Never a lease rule: those are in `rules`.

use axum::extract::Request;
use axum::http::header::HeaderMap;
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::errors::ApiResult;
use super::super::request::{
    in_range, query, refuse_non_utf8_path, upload, Caller, JsonBody, On, Params,
};
use super::{bytes_response, created, Created, JsonList};
use crate::backend::Backend;
use crate::error::Error;
use crate::model::*;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ListParams {
    path: Option<String>,
    limit: Option<u64>,
    after: Option<String>,
    prefix: Option<String>,
    q: Option<String>,
    held: Option<bool>,
}

#[utoipa::path(get, path = "/v1/artifacts", responses((status = 200, description = "The artifacts by path: every one, or a page (with `limit`) under a folder, containing a text, or held; `next` is the page's last path (null on the last page), `seq` the event the list is as of", body = ArtifactPage)))]
pub(in crate::server) async fn artifacts(
    Caller(me): Caller,
    request: Request,
) -> ApiResult<JsonList<Artifact>> {
    refuse_non_utf8_path(request.uri())?;
    let q: ListParams = query(request.uri())?;
    if let Some(path) = q.path {
        if q.limit.is_some()
            || q.after.is_some()
            || q.prefix.is_some()
            || q.q.is_some()
            || q.held.is_some()
        {
            return Err(Error::Invalid(
                "ask for the artifact at a path, or for a list, not both".into(),
            )
            .into());
        }
        // An addition to API.md: the artifact at one path, for clients that
        // know paths (as stored: an old path that cannot be placed is found too).
        let found = me.artifact_by_path(&RepoPath::stored(&path)?).await?;
        return Ok(JsonList::new("artifacts", vec![found]));
    }
    let page = me
        .artifact_page(ArtifactQuery {
            // Out of the page's range, whatever the number: 422 (past
            // 2^63 - 1: 400, as for every number).
            limit: in_range("limit", q.limit)?.map(|l| u32::try_from(l).unwrap_or(u32::MAX)),
            after: q.after,
            prefix: q.prefix,
            text: q.q,
            held: q.held.unwrap_or(false),
        })
        .await?;
    let mut fields = serde_json::Map::new();
    fields.insert("next".into(), page.next.into());
    fields.insert("seq".into(), page.seq.into());
    Ok(JsonList::new("artifacts", page.artifacts).with_fields(fields))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FolderParams {
    prefix: Option<String>,
}

#[utoipa::path(get, path = "/v1/folders", responses((status = 200, description = "The folders directly under `prefix`, each with the files under it the caller may read and how many are held; `files`: those directly in `prefix`", body = FolderList)))]
pub(in crate::server) async fn folders(
    Caller(me): Caller,
    request: Request,
) -> ApiResult<Json<FolderList>> {
    refuse_non_utf8_path(request.uri())?;
    let q: FolderParams = query(request.uri())?;
    Ok(Json(me.folders(q.prefix.as_deref().unwrap_or("")).await?))
}

#[utoipa::path(post, path = "/v1/artifacts", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 201, body = Artifact)))]
pub(in crate::server) async fn import(
    Caller(me): Caller,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<Created<Artifact>> {
    refuse_non_utf8_path(request.uri())?;
    let q: PathQuery = query(request.uri())?;
    let path: RepoPath = q
        .path
        .ok_or_else(|| Error::Invalid("say where the file goes: ?path=folder/file.psd".into()))?
        .parse()?;
    let upload = upload(&headers, request.into_body())?;
    Ok(created(me.import(&path, upload).await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}", responses((status = 200, body = Artifact)))]
pub(in crate::server) async fn artifact(
    On(me, artifact): On<ArtifactId>,
) -> ApiResult<Json<Artifact>> {
    Ok(Json(me.artifact(artifact).await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/versions", responses((status = 200, description = "Versions, newest first", body = VersionList)))]
pub(in crate::server) async fn versions(
    On(me, artifact): On<ArtifactId>,
) -> ApiResult<JsonList<Head>> {
    Ok(JsonList::new("versions", me.versions(artifact).await?))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(in crate::server) struct VersionQuery {
    version: Option<u64>,
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/content", responses((status = 200, description = "The bytes, with ETag: the digest", content_type = "application/octet-stream", body = Vec<u8>)))]
pub(in crate::server) async fn content(
    On(me, artifact): On<ArtifactId>,
    Params(q): Params<VersionQuery>,
) -> ApiResult<Response> {
    let version = in_range("version", q.version)?;
    let content = me.content(artifact, version).await?;
    Ok(bytes_response(
        content.head.size,
        &content.head.digest,
        content.reader,
    ))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakBody {
    pub reason: String,
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/break", request_body = BreakBody, responses((status = 200, body = Artifact)))]
pub(in crate::server) async fn break_lease(
    On(me, artifact): On<ArtifactId>,
    JsonBody(request): JsonBody<BreakBody>,
) -> ApiResult<Json<Artifact>> {
    Ok(Json(me.break_lease(artifact, &request.reason).await?))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameBody {
    /// The new path, under the rules of every new path.
    pub path: String,
}

/// An addition to API.md: an admin moves an artifact to a new path (to fix
/// one stored before the path rules). Writes `artifact.renamed` {from, to}.
#[utoipa::path(post, path = "/v1/artifacts/{id}/rename", request_body = RenameBody, responses((status = 200, body = Artifact)))]
pub(in crate::server) async fn rename(
    On(me, artifact): On<ArtifactId>,
    JsonBody(request): JsonBody<RenameBody>,
) -> ApiResult<Json<Artifact>> {
    Ok(Json(me.rename(artifact, &request.path.parse()?).await?))
}

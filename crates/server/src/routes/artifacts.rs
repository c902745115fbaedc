//! Artifacts: list, import, one artifact, its versions and content, an
//! admin's break and rename. Never a lease rule: those are in `rules`.

use axum::extract::Request;
use axum::http::header::{self, HeaderMap};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::errors::ApiResult;
use super::super::request::{
    in_range, incoming, query, refuse_non_utf8_path, Caller, JsonBody, On, Params,
};
use super::uploads::with_upload;
use super::{bytes_response, created, partial_response, Created, JsonList};
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

#[utoipa::path(get, path = "/v1/artifacts", responses((status = 200, description = "The artifacts by path: every one, or a page (with `limit`) under a folder, containing a text, or held; `next` is the page's last path (null on the last page), `seq` the event the list is as of; with `held`, `holds`: the paths held with no file yet in the page", body = ArtifactPage)))]
pub(crate) async fn artifacts(
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
    let held = q.held.unwrap_or(false);
    let limit = in_range("limit", q.limit)?.map(|l| u32::try_from(l).unwrap_or(u32::MAX));
    let _room = room_for_a_page(limit).await?;
    let page = me
        .artifact_page(ArtifactQuery {
            // Out of the page's range, whatever the number: 422 (past
            // 2^63 - 1: 400, as for every number).
            limit,
            after: q.after,
            prefix: q.prefix,
            text: q.q,
            held,
        })
        .await?;
    let mut fields = serde_json::Map::new();
    fields.insert("next".into(), page.next.into());
    fields.insert("seq".into(), page.seq.into());
    if held {
        // An addition to API.md (docs/API-additions.md): the paths held
        // with no file yet, in the page among the files.
        let holds = serde_json::to_value(&page.holds).expect("holds serialize");
        fields.insert("holds".into(), holds);
    }
    Ok(JsonList::new("artifacts", page.artifacts).with_fields(fields))
}

/// How many artifacts this server's pages may hold in memory at once while
/// they are made (the rows read and the artifacts from them): eight walkers
/// asking for pages of 10,000 at once held 92 MiB on PostgreSQL, 34 MiB
/// with this. A page waits its turn for at most [`PAGE_ROOM_WAIT`], then
/// is 503.
const PAGE_ROOM: u32 = 2 * MAX_PAGE;
const PAGE_ROOM_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Room for a page of `limit` artifacts while it is made: the whole list
/// (no limit) takes all of it. A limit out of range takes none: the page is
/// refused at once.
async fn room_for_a_page(
    limit: Option<u32>,
) -> ApiResult<Option<tokio::sync::SemaphorePermit<'static>>> {
    static ROOM: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(PAGE_ROOM as usize);
    let wanted = match limit {
        None => PAGE_ROOM,
        Some(limit) if (1..=MAX_PAGE).contains(&limit) => limit,
        Some(_) => return Ok(None),
    };
    match tokio::time::timeout(PAGE_ROOM_WAIT, ROOM.acquire_many(wanted)).await {
        Ok(Ok(room)) => Ok(Some(room)),
        _ => Err(Error::Unavailable("the server is making other pages: ask again".into()).into()),
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FolderParams {
    prefix: Option<String>,
}

#[utoipa::path(get, path = "/v1/folders", responses((status = 200, description = "The folders directly under `prefix`, each with the files under it the caller may read and how many are held; `files`: those directly in `prefix`", body = FolderList)))]
pub(crate) async fn folders(Caller(me): Caller, request: Request) -> ApiResult<Json<FolderList>> {
    refuse_non_utf8_path(request.uri())?;
    let q: FolderParams = query(request.uri())?;
    Ok(Json(me.folders(q.prefix.as_deref().unwrap_or("")).await?))
}

#[utoipa::path(post, path = "/v1/artifacts", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 201, body = Artifact)))]
pub(crate) async fn import(
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
    let incoming = incoming(&headers, request.into_body())?;
    let target = UploadFor::Import(path.clone());
    let done = with_upload(&me, incoming, target, async |u| me.import(&path, u).await);
    Ok(created(done.await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}", responses((status = 200, body = Artifact)))]
pub(crate) async fn artifact(On(me, artifact): On<ArtifactId>) -> ApiResult<Json<Artifact>> {
    Ok(Json(me.artifact(artifact).await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/versions", responses((status = 200, description = "Versions, newest first", body = VersionList)))]
pub(crate) async fn versions(On(me, artifact): On<ArtifactId>) -> ApiResult<JsonList<Head>> {
    Ok(JsonList::new("versions", me.versions(artifact).await?))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct VersionQuery {
    version: Option<u64>,
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/content", responses((status = 200, description = "The bytes, with ETag: the digest", content_type = "application/octet-stream", body = Vec<u8>), (status = 206, description = "The bytes of the range asked for, with Content-Range and ETag: the digest", content_type = "application/octet-stream", body = Vec<u8>)))]
pub(crate) async fn content(
    On(me, artifact): On<ArtifactId>,
    Params(q): Params<VersionQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let version = in_range("version", q.version)?;
    if let Some((start, end)) = asked_range(&headers) {
        let if_range = headers.get(header::IF_RANGE).map(|v| v.as_bytes().to_vec());
        match me.content_range(artifact, version, start, end).await {
            Ok(content) if content.head.size > 0 => {
                let etag = format!("\"{}\"", content.head.digest);
                // Bytes of other content are never spliced into a copy: all of it instead.
                if if_range.is_none_or(|tag| tag == etag.as_bytes()) {
                    let end = end.unwrap_or(content.head.size).min(content.head.size);
                    let (size, digest) = (content.head.size, &content.head.digest);
                    return Ok(partial_response(start..end, size, digest, content.reader));
                }
            }
            // Past the end of other bytes than the client began with: all of them.
            Err(Error::RangeNotSatisfiable { .. }) if if_range.is_some() => {}
            Err(e) => return Err(e.into()),
            Ok(_) => {} // empty: 200, with nothing
        }
    }
    let content = me.content(artifact, version).await?;
    Ok(bytes_response(
        content.head.size,
        &content.head.digest,
        content.reader,
    ))
}

/// The one range of `Range: bytes=A-B` or `bytes=A-` (end exclusive). Any
/// other (several ranges, a suffix, another unit, a malformed one) is
/// ignored, as RFC 9110 allows: the whole content is sent.
fn asked_range(headers: &HeaderMap) -> Option<(u64, Option<u64>)> {
    let value = headers.get(header::RANGE)?.to_str().ok()?;
    let (first, last) = value.strip_prefix("bytes=")?.split_once('-')?;
    let start: u64 = first.trim().parse().ok()?;
    match last.trim() {
        "" => Some((start, None)),
        last => {
            let last: u64 = last.parse().ok()?;
            (last >= start).then(|| (start, Some(last.saturating_add(1))))
        }
    }
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakBody {
    pub reason: String,
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/break", request_body = BreakBody, responses((status = 200, body = Artifact)))]
pub(crate) async fn break_lease(
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
pub(crate) async fn rename(
    On(me, artifact): On<ArtifactId>,
    JsonBody(request): JsonBody<RenameBody>,
) -> ApiResult<Json<Artifact>> {
    Ok(Json(me.rename(artifact, &request.path.parse()?).await?))
}

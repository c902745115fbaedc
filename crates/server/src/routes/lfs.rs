//! Git LFS's locking API under `/lfs/{folder}` (`docs/API.md`, "Git
//! LFS"): its own authentication (Basic with the token as the password, or
//! Bearer; a 401 carries `LFS-Authenticate`), its media type and its
//! errors, `{"message"}`. A handler parses and calls `Bundled`'s Git
//! locks: the rules are in `rules::git`.

use axum::extract::{FromRequestParts, Path, Request};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::super::errors::{logged_internal, status_of};
use super::super::request::{json_object, query};
use crate::bundled::Bundled;
use crate::error::Error;
use crate::model::*;

const MEDIA_TYPE: &str = "application/vnd.git-lfs+json";

/// Largest request body: Git LFS's lock requests are small objects.
const MAX_BODY_BYTES: usize = 64 << 10;

/// A refusal as Git LFS reads it: the status and `{"message"}`.
pub(crate) struct LfsError(Error);

impl From<Error> for LfsError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

impl From<Invalid> for LfsError {
    fn from(e: Invalid) -> Self {
        Self(e.into())
    }
}

pub(super) fn answer(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(MEDIA_TYPE));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

impl IntoResponse for LfsError {
    fn into_response(self) -> Response {
        let status = status_of(&self.0);
        let message = match &self.0 {
            Error::Internal(detail) => logged_internal(detail).to_owned(),
            e => e.to_string(),
        };
        let mut response = answer(status, &json!({ "message": message }));
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                "LFS-Authenticate",
                HeaderValue::from_static("Basic realm=\"Leasedesk\""),
            );
        }
        response
    }
}

pub(super) type LfsResult<T> = Result<T, LfsError>;

/// The token of `Authorization: Basic` (any user name, the token as the
/// password) or `Authorization: Bearer`.
pub(super) fn token_of(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    if scheme.eq_ignore_ascii_case("bearer") {
        return Some(rest.trim().to_owned());
    }
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(base64_decode(rest.trim())?).ok()?;
    let (_, password) = decoded.split_once(':')?;
    Some(password.to_owned())
}

/// Standard base64 (with or without padding); `None` if it is not.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for group in text.chunks(4) {
        if group.len() == 1 {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in group.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..group.len()]);
    }
    Some(out)
}

/// The caller, authenticated as Git does, and the folder of the path.
pub(crate) struct GitCaller {
    pub(super) me: Bundled,
    pub(super) folder: String,
}

impl FromRequestParts<Bundled> for GitCaller {
    type Rejection = LfsError;

    async fn from_request_parts(parts: &mut Parts, store: &Bundled) -> Result<Self, LfsError> {
        let unauthorized = || {
            Error::Unauthorized(
                "send your Leasedesk token as the password (Basic) or as a Bearer token".into(),
            )
        };
        let token = token_of(&parts.headers).ok_or_else(unauthorized)?;
        let participant = match store.authenticate(&token).await {
            Ok(participant) => participant,
            Err(Error::Unauthorized(_)) => return Err(unauthorized().into()),
            Err(e) => return Err(e.into()),
        };
        let device = crate::token::id_of(&token).unwrap_or_default();
        let me = store.acting_as(participant).on_device(device);
        let folder = match Path::<Vec<(String, String)>>::from_request_parts(parts, store).await {
            Ok(Path(segments)) => segments
                .into_iter()
                .find(|(name, _)| name == "folder")
                .map(|(_, value)| value)
                .unwrap_or_default(),
            Err(e) => {
                return Err(
                    Error::BadRequest(format!("the path is not valid: {}", e.body_text())).into(),
                )
            }
        };
        // A top-level folder: one segment under the path rules.
        if folder.contains('/') || format!("{folder}/x").parse::<RepoPath>().is_err() {
            return Err(Error::Invalid(format!("{folder:?} is not a top-level folder")).into());
        }
        Ok(GitCaller { me, folder })
    }
}

/// A JSON object body, read up to `MAX_BODY_BYTES`: malformed, it is 400.
async fn body<T: serde::de::DeserializeOwned + Default>(request: Request) -> LfsResult<T> {
    read_body(request, MAX_BODY_BYTES).await
}

/// A JSON object body of at most `limit` bytes (else 413, read no further):
/// malformed, it is 400.
pub(super) async fn read_body<T: serde::de::DeserializeOwned + Default>(
    request: Request,
    limit: usize,
) -> LfsResult<T> {
    let bytes = axum::body::to_bytes(request.into_body(), limit)
        .await
        .map_err(|_| Error::TooLarge {
            limit: limit as u64,
        })?;
    Ok(json_object(&bytes)?)
}

#[derive(Serialize)]
struct Owner {
    name: String,
}

/// Git LFS's `Lock`: the path relative to the folder.
#[derive(Serialize)]
struct LfsLock {
    id: String,
    path: String,
    locked_at: String,
    owner: Owner,
}

/// The participant's name as Leasedesk shows it: `alice`, `agent:resizer`.
fn shown(participant: &Participant) -> String {
    match participant.kind() {
        ParticipantKind::User => participant.name().to_owned(),
        ParticipantKind::Agent => participant.to_string(),
    }
}

fn lfs_lock(folder: &str, lock: &GitLock) -> LfsLock {
    let path = lock.path.as_str();
    LfsLock {
        id: lock.id.to_string(),
        path: path
            .strip_prefix(folder)
            .and_then(|p| p.strip_prefix('/'))
            .unwrap_or(path)
            .to_owned(),
        locked_at: lock
            .locked_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        owner: Owner {
            name: shown(&lock.participant),
        },
    }
}

fn lfs_json(status: StatusCode, body: serde_json::Value) -> Response {
    answer(status, &body)
}

#[derive(Deserialize, Default)]
struct LockBody {
    path: Option<String>,
}

/// POST /lfs/F/locks: a check-out of `F/P` (see `rules::git::lock`).
pub(crate) async fn create_lock(
    GitCaller { me, folder }: GitCaller,
    request: Request,
) -> LfsResult<Response> {
    let asked: LockBody = body(request).await?;
    let relative = asked
        .path
        .ok_or_else(|| Error::Invalid("say which path to lock: {\"path\": ...}".into()))?;
    let path: RepoPath = format!("{folder}/{relative}").parse()?;
    match me.git_lock(&path).await {
        Ok(lock) => Ok(lfs_json(
            StatusCode::CREATED,
            json!({ "lock": lfs_lock(&folder, &lock) }),
        )),
        Err(Error::ArtifactBusy {
            path,
            lease: Some(lease),
        }) => {
            let held = GitLock {
                id: lease
                    .checkout_id
                    .map(|c| c.0)
                    .or_else(|| lease.holder.strip_prefix("edit:")?.parse().ok())
                    .unwrap_or_default(),
                path: RepoPath::stored(&path)?,
                participant: lease.participant.clone(),
                note: lease.note.clone(),
                locked_at: lease.acquired_at,
                expires_at: lease.expires_at,
                no_file: false,
            };
            let mut message = format!(
                "locked by {} until {}",
                shown(&lease.participant),
                lease.expires_at.format("%Y-%m-%d %H:%M UTC")
            );
            if let Some(note) = &lease.note {
                message.push_str(&format!(": {note}"));
            }
            Ok(lfs_json(
                StatusCode::CONFLICT,
                json!({ "lock": lfs_lock(&folder, &held), "message": message }),
            ))
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ListParams {
    path: Option<String>,
    id: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
    refspec: Option<String>,
}

/// `limit`: 1 to 1000, 100 when not given.
fn limit_of(limit: Option<&str>) -> LfsResult<u32> {
    let Some(text) = limit else {
        return Ok(DEFAULT_GIT_LOCKS_PAGE);
    };
    match text.parse::<u32>() {
        Ok(n @ 1..=MAX_GIT_LOCKS_PAGE) => Ok(n),
        _ => Err(Error::Invalid(format!(
            "limit {text:?} is out of range: use 1 to {MAX_GIT_LOCKS_PAGE}"
        ))
        .into()),
    }
}

/// The context of a cursor's check: a cursor is the page's last path and
/// a check of it, so one from nowhere is refused.
const CURSOR_CONTEXT: &str = "leasedesk 2026 git lfs lock cursor";

fn cursor_for(path: &str) -> String {
    let check = blake3::derive_key(CURSOR_CONTEXT, path.as_bytes());
    format!("{}.{}", hex(path.as_bytes()), hex(&check[..8]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn path_of_cursor(cursor: &str) -> LfsResult<String> {
    let refused = || {
        LfsError(Error::BadRequest(format!(
            "{cursor:?} is not a cursor this server gave"
        )))
    };
    let (path, _) = cursor.split_once('.').ok_or_else(refused)?;
    let bytes: Option<Vec<u8>> = (0..path.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(path.get(i..i + 2)?, 16).ok())
        .collect();
    let path = bytes
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(refused)?;
    if cursor_for(&path) != cursor {
        return Err(refused());
    }
    Ok(path)
}

/// A page of the folder's locks: `after` the cursor's path.
async fn page(
    me: &Bundled,
    folder: &str,
    path: Option<&str>,
    id: Option<&str>,
    cursor: Option<&str>,
    limit: u32,
) -> LfsResult<GitLockPage> {
    let path = path
        .map(|p| RepoPath::stored(&format!("{folder}/{p}")))
        .transpose()?;
    let id = id
        .map(|id| {
            id.parse::<uuid::Uuid>()
                .map_err(|_| Error::BadRequest(format!("{id:?} is not a lock id")))
        })
        .transpose()?;
    let after = cursor.map(path_of_cursor).transpose()?;
    if let Some(after) = &after {
        if !after.starts_with(&format!("{folder}/")) {
            return Err(Error::BadRequest("the cursor is of another folder".into()).into());
        }
    }
    Ok(me
        .git_locks(GitLockQuery {
            folder: folder.to_owned(),
            path,
            id,
            after,
            limit,
        })
        .await?)
}

/// GET /lfs/F/locks: every live lease under F the caller may see.
pub(crate) async fn list_locks(
    GitCaller { me, folder }: GitCaller,
    request: Request,
) -> LfsResult<Response> {
    let q: ListParams = query(request.uri()).map_err(|e| LfsError(e.0))?;
    let _ = q.refspec;
    let limit = limit_of(q.limit.as_deref())?;
    let found = page(
        &me,
        &folder,
        q.path.as_deref(),
        q.id.as_deref(),
        q.cursor.as_deref(),
        limit,
    )
    .await?;
    let locks: Vec<LfsLock> = found.locks.iter().map(|l| lfs_lock(&folder, l)).collect();
    let mut body = json!({ "locks": locks });
    if let Some(next) = &found.next {
        body["next_cursor"] = cursor_for(next).into();
    }
    Ok(lfs_json(StatusCode::OK, body))
}

#[derive(Deserialize, Default)]
struct VerifyBody {
    cursor: Option<String>,
    limit: Option<serde_json::Value>,
}

/// POST /lfs/F/locks/verify: the page's locks, the caller's apart.
pub(crate) async fn verify_locks(
    GitCaller { me, folder }: GitCaller,
    request: Request,
) -> LfsResult<Response> {
    let asked: VerifyBody = body(request).await?;
    let limit = match &asked.limit {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        Some(other) => return Err(Error::Invalid(format!("limit {other} is not a number")).into()),
    };
    let limit = limit_of(limit.as_deref())?;
    let found = page(&me, &folder, None, None, asked.cursor.as_deref(), limit).await?;
    let (ours, theirs): (Vec<&GitLock>, Vec<&GitLock>) = found
        .locks
        .iter()
        .partition(|l| l.participant == *me.participant());
    let words = |locks: Vec<&GitLock>| -> Vec<LfsLock> {
        locks.into_iter().map(|l| lfs_lock(&folder, l)).collect()
    };
    let mut body = json!({ "ours": words(ours), "theirs": words(theirs) });
    if let Some(next) = &found.next {
        body["next_cursor"] = cursor_for(next).into();
    }
    Ok(lfs_json(StatusCode::OK, body))
}

#[derive(Deserialize, Default)]
struct UnlockBody {
    #[serde(default)]
    force: bool,
}

/// POST /lfs/F/locks/{id}/unlock: cancels the caller's own; someone
/// else's only with `force`, by an admin.
pub(crate) async fn unlock(
    GitCaller { me, folder }: GitCaller,
    Path((_, id)): Path<(String, String)>,
    request: Request,
) -> LfsResult<Response> {
    let asked: UnlockBody = body(request).await?;
    let id: uuid::Uuid = id
        .parse()
        .map_err(|_| Error::NotFound(format!("no lock {id} in {folder}")))?;
    let lock = me.git_unlock(&folder, id, asked.force).await?;
    Ok(lfs_json(
        StatusCode::OK,
        json!({ "lock": lfs_lock(&folder, &lock) }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64_decode("eDpzZWNyZXQ=").unwrap(), b"x:secret");
        assert_eq!(base64_decode("eDpzZWNyZXQ").unwrap(), b"x:secret");
        assert_eq!(base64_decode("YQ==").unwrap(), b"a");
        assert!(base64_decode("a").is_none());
        assert!(base64_decode("!!!!").is_none());
    }

    #[test]
    fn a_cursor_reads_back_and_one_from_nowhere_does_not() {
        let cursor = cursor_for("art/hero.psd");
        assert_eq!(path_of_cursor(&cursor).ok().unwrap(), "art/hero.psd");
        assert!(path_of_cursor("6172742f.0011223344556677").is_err());
        assert!(path_of_cursor("nowhere").is_err());
    }
}

//! Git LFS's batch API and basic transfers under `/lfs/{folder}/objects`
//! (`docs/API.md`, "Git LFS"): a batch is answered with an action per
//! object the client must move, each carrying a credential of its own (one
//! object, one operation, an hour); the object routes take that credential
//! (or the caller's token, as Git sends it after a 401) and stream the
//! bytes. The rules are `Bundled`'s (`bundled::lfs_objects`).

use axum::body::Body;
use axum::extract::{FromRequestParts, Path, Request};
use axum::http::header::{self, HeaderMap};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures_util::TryStreamExt;
use serde::Deserialize;
use serde_json::json;
use tokio_util::io::{ReaderStream, StreamReader};

use super::super::accept::Scheme;
use super::super::request::body_error;
use super::lfs::{answer, read_body, token_of, GitCaller, LfsResult};
use crate::bundled::{is_oid, Bundled, LfsAction, LFS_ACTION_SECONDS};
use crate::error::Error;
use crate::model::LfsObject;

/// Most objects one batch may name: Git sends 100 at a time.
const MAX_BATCH_OBJECTS: usize = 1000;

/// Largest batch body: `MAX_BATCH_OBJECTS` objects with room to spare.
const MAX_BATCH_BYTES: usize = 256 << 10;

#[derive(Deserialize)]
struct BatchObject {
    oid: String,
    size: u64,
}

#[derive(Deserialize, Default)]
struct BatchBody {
    operation: Option<String>,
    transfers: Option<Vec<String>>,
    #[serde(default)]
    objects: Vec<BatchObject>,
    hash_algo: Option<String>,
}

/// This server's URL of a folder's objects, as the request that asked
/// reached it.
fn objects_url(headers: &HeaderMap, scheme: Scheme, folder: &str) -> LfsResult<String> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<axum::http::uri::Authority>().ok())
        .ok_or_else(|| Error::BadRequest("the request names no valid Host".into()))?;
    Ok(format!("{}://{host}/lfs/{folder}/objects", scheme.0))
}

/// An action on object `oid` of `size` bytes: where, and its credential.
async fn action(
    me: &Bundled,
    objects_url: &str,
    folder: &str,
    oid: &str,
    size: u64,
    action: LfsAction,
) -> LfsResult<serde_json::Value> {
    let credential = me.lfs_credential(action, folder, oid, size).await?;
    let href = match action {
        LfsAction::Verify => format!("{objects_url}/{oid}/verify"),
        _ => format!("{objects_url}/{oid}"),
    };
    Ok(json!({
        "href": href,
        "header": { "Authorization": format!("Bearer {credential}") },
        "expires_in": LFS_ACTION_SECONDS,
    }))
}

/// POST /lfs/F/objects/batch: what the client must upload or may download.
pub(crate) async fn batch(
    GitCaller { me, folder }: GitCaller,
    Extension(scheme): Extension<Scheme>,
    request: Request,
) -> LfsResult<Response> {
    let url = objects_url(request.headers(), scheme, &folder)?;
    let asked: BatchBody = read_body(request, MAX_BATCH_BYTES).await?;
    let upload = match asked.operation.as_deref() {
        Some("upload") => true,
        Some("download") => false,
        other => {
            return Err(
                Error::Invalid(format!("operation {other:?} is not upload or download")).into(),
            )
        }
    };
    if let Some(algo) = asked.hash_algo.as_deref().filter(|a| *a != "sha256") {
        return Err(Error::Invalid(format!("objects here are named by sha256, not {algo}")).into());
    }
    if asked
        .transfers
        .as_ref()
        .is_some_and(|t| !t.iter().any(|t| t == "basic"))
    {
        return Err(
            Error::Invalid("this server moves objects by the basic transfer only".into()).into(),
        );
    }
    if asked.objects.len() > MAX_BATCH_OBJECTS {
        return Err(Error::Invalid(format!(
            "a batch names at most {MAX_BATCH_OBJECTS} objects, not {}",
            asked.objects.len()
        ))
        .into());
    }
    if let Some(bad) = asked.objects.iter().find(|o| !is_oid(&o.oid)) {
        return Err(Error::Invalid(format!(
            "{:?} is not an oid: 64 lower-case hex digits of SHA-256",
            bad.oid
        ))
        .into());
    }
    me.lfs_access(&folder, upload).await?;
    let oids = asked.objects.iter().map(|o| o.oid.clone()).collect();
    let kept = me.lfs_objects(&folder, oids).await?;
    let mut objects = Vec::with_capacity(kept.len());
    for (asked, kept) in asked.objects.iter().zip(kept) {
        let (oid, size) = (&asked.oid, asked.size);
        let mut object = json!({ "oid": oid, "size": size, "authenticated": true });
        match (upload, kept) {
            (true, None) if size > me.lfs_max_size() => {
                object["error"] = json!({
                    "code": 422,
                    "message": format!(
                        "object {oid} is larger than this server takes ({} bytes)",
                        me.lfs_max_size()
                    ),
                });
            }
            (_, Some(kept)) if kept.size != size => {
                object["error"] = json!({
                    "code": 422,
                    "message": format!("object {oid} is {} bytes, not {size}", kept.size),
                });
            }
            (true, Some(_)) => {}
            (true, None) => {
                object["actions"] = json!({
                    "upload": action(&me, &url, &folder, oid, size, LfsAction::Upload).await?,
                    "verify": action(&me, &url, &folder, oid, size, LfsAction::Verify).await?,
                });
            }
            (false, Some(_)) => {
                let download = action(&me, &url, &folder, oid, size, LfsAction::Download).await?;
                object["actions"] = json!({ "download": download });
            }
            (false, None) => {
                object["error"] = json!({
                    "code": 404,
                    "message": format!("no object {oid} in {folder}/"),
                });
            }
        }
        objects.push(object);
    }
    Ok(answer(
        StatusCode::OK,
        &json!({ "transfer": "basic", "objects": objects, "hash_algo": "sha256" }),
    ))
}

/// Who acts on an object: whom the action's credential was given to (and
/// the size it was given for), or the caller of a token.
struct ObjectCaller {
    me: Bundled,
    folder: String,
    oid: String,
    size: Option<u64>,
}

impl ObjectCaller {
    /// The caller of `request`'s `action`, and the request back, for its
    /// headers and body.
    async fn of(
        request: Request,
        store: &Bundled,
        action: LfsAction,
    ) -> LfsResult<(Self, Request)> {
        let (mut parts, body) = request.into_parts();
        let caller = Self::of_parts(&mut parts, store, action).await?;
        Ok((caller, Request::from_parts(parts, body)))
    }

    async fn of_parts(parts: &mut Parts, store: &Bundled, action: LfsAction) -> LfsResult<Self> {
        let Path((folder, oid)) = Path::<(String, String)>::from_request_parts(parts, store)
            .await
            .map_err(|e| Error::BadRequest(format!("the path is not valid: {}", e.body_text())))?;
        if !is_oid(&oid) {
            return Err(Error::Invalid(format!(
                "{oid:?} is not an oid: 64 lower-case hex digits of SHA-256"
            ))
            .into());
        }
        match token_of(&parts.headers) {
            Some(credential) if Bundled::is_lfs_credential(&credential) => {
                let (me, size) = store.lfs_redeem(&credential, action, &folder, &oid).await?;
                Ok(ObjectCaller {
                    me,
                    folder,
                    oid,
                    size: Some(size),
                })
            }
            _ => {
                let GitCaller { me, folder } = GitCaller::from_request_parts(parts, store).await?;
                me.lfs_access(&folder, action.is_upload()).await?;
                Ok(ObjectCaller {
                    me,
                    folder,
                    oid,
                    size: None,
                })
            }
        }
    }
}

/// The size a request's `Content-Length` declares, if it does.
fn declared_length(headers: &HeaderMap) -> LfsResult<Option<u64>> {
    headers
        .get(header::CONTENT_LENGTH)
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| Error::BadRequest("Content-Length is not a number".into()).into())
        })
        .transpose()
}

/// PUT /lfs/F/objects/{oid}: the object's bytes, kept only if they match
/// their oid and size.
pub(crate) async fn upload(
    axum::extract::State(store): axum::extract::State<Bundled>,
    request: Request,
) -> LfsResult<Response> {
    let (caller, request) = ObjectCaller::of(request, &store, LfsAction::Upload).await?;
    let length = declared_length(request.headers())?;
    let size = match (caller.size, length) {
        (Some(granted), Some(length)) if granted != length => {
            return Err(Error::Invalid(format!(
                "object {} is {granted} bytes, but {length} are sent: nothing was kept",
                caller.oid
            ))
            .into())
        }
        (Some(size), _) | (None, Some(size)) => size,
        (None, None) => {
            return Err(Error::BadRequest("say the object's size in Content-Length".into()).into())
        }
    };
    let reader = StreamReader::new(
        request
            .into_body()
            .into_data_stream()
            .map_err(|e| std::io::Error::other(body_error(e))),
    );
    caller
        .me
        .lfs_upload(&caller.folder, &caller.oid, size, reader)
        .await?;
    Ok(answer(StatusCode::OK, &json!({})))
}

#[derive(Deserialize, Default)]
struct VerifyBody {
    oid: Option<String>,
    size: Option<u64>,
}

/// POST /lfs/F/objects/{oid}/verify: 200 if the object is kept whole.
pub(crate) async fn verify(
    axum::extract::State(store): axum::extract::State<Bundled>,
    request: Request,
) -> LfsResult<Response> {
    let (caller, request) = ObjectCaller::of(request, &store, LfsAction::Verify).await?;
    let asked: VerifyBody = read_body(request, 4 << 10).await?;
    if asked.oid.as_deref().is_some_and(|oid| oid != caller.oid) {
        return Err(Error::Invalid("the body names another object than the path".into()).into());
    }
    let kept = caller
        .me
        .lfs_objects(&caller.folder, vec![caller.oid.clone()])
        .await?
        .pop()
        .flatten();
    match kept {
        Some(LfsObject { size, .. }) if asked.size.is_none_or(|s| s == size) => {
            Ok(answer(StatusCode::OK, &json!({})))
        }
        Some(LfsObject { size, .. }) => Err(Error::Invalid(format!(
            "object {} is {size} bytes here, not {}",
            caller.oid,
            asked.size.unwrap_or_default()
        ))
        .into()),
        None => {
            Err(Error::NotFound(format!("no object {} in {}/", caller.oid, caller.folder)).into())
        }
    }
}

/// GET /lfs/F/objects/{oid}: the object's bytes, streamed.
pub(crate) async fn download(
    axum::extract::State(store): axum::extract::State<Bundled>,
    request: Request,
) -> LfsResult<Response> {
    let (caller, _) = ObjectCaller::of(request, &store, LfsAction::Download).await?;
    let (object, reader) = caller.me.lfs_download(&caller.folder, &caller.oid).await?;
    let headers = [
        (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
        (header::CONTENT_LENGTH, object.size.to_string()),
    ];
    Ok((
        headers,
        Body::from_stream(ReaderStream::with_capacity(reader, 1 << 20)),
    )
        .into_response())
}

//! Resumable uploads and chunk lists (`docs/API-transfers.md`): an upload
//! begun with its chunk list, appended to at its offset, and named by the
//! check-in, stage, edit's commit or import that takes its bytes; a
//! version's chunk list; and the bytes any of those requests bring. Never a
//! rule of its own: `bundled::transfers` keeps uploads, `rules` decide.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::TryStreamExt;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::io::{StreamReader, SyncIoBridge};

use super::super::errors::{ApiError, ApiResult};
use super::super::request::{
    body_error, digest_header, in_range, query, refuse_non_utf8_path, Caller, Incoming, On, Params,
};
use super::created;
use crate::backend::Upload;
use crate::bundled::Bundled;
use crate::error::{Error, Result};
use crate::model::*;
use crate::wire::{DIGEST_HEADER, IDEMPOTENCY_KEY, OFFSET_HEADER};

/// The largest window (2^23 bytes) a zstd body may ask for.
const ZSTD_WINDOW_LOG: u32 = 23;

/// How much of a refused body (a chunk list, an append) is read and
/// dropped before the answer (a list of a million chunks is 36 MB), and how
/// slowly it may come: for `DRAIN_GRACE`, then as long as it averages
/// `DRAIN_RATE`. So a client still sending at a fair speed reads the
/// refusal, and one too slow for its list's deadline is not waited for
/// again. Past either, the connection closes.
const DRAINED: u64 = 64 << 20;
const DRAIN_GRACE: Duration = Duration::from_secs(5);
const DRAIN_RATE: f64 = (256 << 10) as f64;

/// Reads the rest of a refused body and drops it, within the bounds above.
async fn drain(body: &mut (impl AsyncRead + Unpin)) {
    let started = tokio::time::Instant::now();
    let mut read = 0u64;
    let mut buf = vec![0u8; 64 << 10];
    while read < DRAINED {
        let deadline = started + DRAIN_GRACE + Duration::from_secs_f64(read as f64 / DRAIN_RATE);
        match tokio::time::timeout_at(deadline, body.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => read += n as u64,
            _ => return,
        }
    }
}

/// Runs `use_it` on a request's bytes: its body, or the finished upload it
/// names, which must have been begun for `target` and is removed once used.
pub(crate) async fn with_upload<T>(
    me: &Bundled,
    incoming: Incoming,
    target: UploadFor,
    use_it: impl AsyncFnOnce(Upload) -> Result<T>,
) -> ApiResult<T> {
    match incoming {
        Incoming::Body(upload) => Ok(use_it(upload).await?),
        Incoming::Resumed { id, message } => {
            let mut upload = me.finished_upload(id, &target).await?;
            upload.message = message;
            let done = use_it(upload).await?;
            me.upload_used(id).await;
            Ok(done)
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct BeginQuery {
    size: Option<u64>,
    checkout: Option<String>,
    edit: Option<String>,
    path: Option<String>,
}

/// An addition to API.md (`docs/API-transfers.md`): begins a resumable
/// upload. The query names its target (exactly one of `checkout`, `edit`,
/// `path`) and the file's `size`, `Leasedesk-Digest` its digest, and the
/// body is its chunk list: per chunk its BLAKE3 (32 bytes) and size (4 bytes,
/// little-endian). The answer says which chunks to send. With no body, the
/// whole file is to be sent, and the answer says how many bytes a list
/// would have been matched against (`known`).
#[utoipa::path(post, path = "/v1/uploads", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 201, body = UploadState)))]
pub(crate) async fn begin_upload(
    Caller(me): Caller,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<(StatusCode, Json<UploadState>)> {
    refuse_non_utf8_path(request.uri())?;
    let q: BeginQuery = query(request.uri())?;
    let size = in_range("size", q.size)?
        .ok_or_else(|| Error::Invalid("say the file's size: ?size=BYTES".into()))?;
    let digest = digest_header(&headers)?.ok_or_else(|| {
        Error::Invalid(format!(
            "say the file's digest: {DIGEST_HEADER}: blake3:<hex>"
        ))
    })?;
    let target = match (q.checkout, q.edit, q.path) {
        (Some(checkout), None, None) => UploadFor::Checkout(super::super::request::id(&checkout)?),
        (None, Some(edit), None) => UploadFor::Edit(super::super::request::id(&edit)?),
        (None, None, Some(path)) => UploadFor::Import(path.parse()?),
        _ => {
            return Err(ApiError(Error::Invalid(
                "say what the upload is for: exactly one of ?checkout=ID, ?edit=ID or ?path=PATH"
                    .into(),
            )))
        }
    };
    let key = match headers.get(IDEMPOTENCY_KEY) {
        Some(key) => Some(
            key.to_str()
                .map_err(|_| Error::Invalid("an Idempotency-Key is visible ASCII".into()))?
                .to_owned(),
        ),
        None => None,
    };
    let mut list = body_reader(request.into_body());
    let begun = me.begin_upload(target, size, digest, key, &mut list).await;
    if begun.is_err() {
        // The rest of a list refused, read and dropped (within bounds), so
        // that the client, still sending, reads the refusal.
        drain(&mut list).await;
    }
    Ok(created(begun?))
}

#[utoipa::path(get, path = "/v1/uploads/{id}", responses((status = 200, body = UploadState)))]
pub(crate) async fn upload_state(On(me, upload): On<UploadId>) -> ApiResult<Json<UploadState>> {
    Ok(Json(me.upload_state(upload).await?))
}

/// Appends to an upload from `Upload-Offset`, which must be its offset
/// (else 409 `wrong_offset` says where it is). The body may be
/// zstd-compressed (`Content-Encoding: zstd`); offsets count the bytes as
/// they are, not as sent.
#[utoipa::path(patch, path = "/v1/uploads/{id}", request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = UploadState)))]
pub(crate) async fn append_upload(
    On(me, upload): On<UploadId>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<UploadState>> {
    let offset = headers
        .get(OFFSET_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let offset = in_range(OFFSET_HEADER, offset)?.ok_or_else(|| {
        Error::BadRequest(format!(
            "say where the bytes go: {OFFSET_HEADER}: the upload's offset"
        ))
    })?;
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
    let mut body = body_reader(body);
    match encoding.as_deref() {
        None | Some("identity") => {
            let appended = me.append_upload(upload, offset, &mut body).await;
            if appended.is_err() {
                // The rest read and dropped (within bounds), so that a client
                // still sending reads the refusal.
                drain(&mut body).await;
            }
            Ok(Json(appended?))
        }
        Some("zstd") => {
            // Nothing is decoded for a stranger's upload or a closed one.
            me.may_append(upload).await?;
            // Decoded on a blocking thread into a pipe the append reads: what
            // decodes before a cut is kept, like any body's bytes. A frame
            // may not ask for a window of more than 8 MiB.
            let (decoded, into) = tokio::io::duplex(1 << 20);
            let decoding = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
                let mut decoder = zstd::stream::read::Decoder::new(SyncIoBridge::new(body))?;
                decoder.window_log_max(ZSTD_WINDOW_LOG)?;
                std::io::copy(&mut decoder, &mut SyncIoBridge::new(into))?;
                Ok(())
            });
            let state = me.append_upload(upload, offset, decoded).await?;
            match decoding.await {
                Ok(Ok(())) => Ok(Json(state)),
                Ok(Err(e)) => Err(ApiError(Error::BadRequest(format!(
                    "the zstd body could not be read past byte {} of the upload: {e}",
                    state.offset
                )))),
                Err(e) => Err(ApiError(Error::Internal(format!("zstd: {e}")))),
            }
        }
        Some(other) => Err(ApiError(Error::BadRequest(format!(
            "Content-Encoding {other} is not one an upload takes: send zstd or none"
        )))),
    }
}

#[utoipa::path(delete, path = "/v1/uploads/{id}", responses((status = 204, description = "Removed")))]
pub(crate) async fn cancel_upload(On(me, upload): On<UploadId>) -> ApiResult<StatusCode> {
    me.cancel_upload(upload).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct VersionQuery {
    version: Option<u64>,
}

/// A version's chunk list (the head's without `version`), in the form a
/// begun upload sends, with its digest in `Leasedesk-Digest` and `ETag`.
#[utoipa::path(get, path = "/v1/artifacts/{id}/chunks", responses((status = 200, description = "Per chunk its BLAKE3 (32 bytes) and size (4 bytes, little-endian)", content_type = "application/vnd.leasedesk.chunks", body = Vec<u8>)))]
pub(crate) async fn version_chunks(
    On(me, artifact): On<ArtifactId>,
    Params(q): Params<VersionQuery>,
) -> ApiResult<Response> {
    let version = in_range("version", q.version)?;
    let list = me.version_chunks(artifact, version).await?;
    let headers = [
        (
            header::CONTENT_TYPE,
            "application/vnd.leasedesk.chunks".to_owned(),
        ),
        (header::ETAG, format!("\"{}\"", list.digest)),
        (
            header::HeaderName::from_static(DIGEST_HEADER),
            list.digest.to_string(),
        ),
    ];
    Ok((headers, list.encode_list()).into_response())
}

/// A request body as a reader; its failures are the client's.
fn body_reader(body: Body) -> impl AsyncRead + Unpin + Send + 'static {
    StreamReader::new(
        body.into_data_stream()
            .map_err(|e| std::io::Error::other(body_error(e))),
    )
}

//! What a handler reads from a request, checked: the caller's token, ids,
//! query strings, JSON bodies, uploads and their headers. Every refusal is an
//! [`Error`] answered in our JSON; nothing here acts on the store.

use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::header::{self, HeaderMap};
use axum::http::request::Parts;
use futures_util::{StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;
use tokio_util::io::StreamReader;

use super::errors::{ApiError, ApiResult};
use crate::backend::Upload;
use crate::bundled::Bundled;
use crate::error::Error;
use crate::model::{check_message, Digest, UploadId, MAX_MESSAGE_BYTES};
use crate::wire::{DIGEST_HEADER, MESSAGE_HEADER, UPLOAD_HEADER};

/// Largest JSON request body: requests are small objects.
const MAX_JSON_BYTES: usize = 64 << 10;

/// The authenticated caller: the store, acting as the token's participant.
pub(crate) struct Caller(pub(crate) Bundled);

impl FromRequestParts<Bundled> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, store: &Bundled) -> Result<Self, ApiError> {
        let bearer = bearer_of(&parts.headers)?;
        let participant = store.authenticate(bearer).await?;
        let device = crate::token::id_of(bearer).unwrap_or_default();
        Ok(Caller(store.acting_as(participant).on_device(device)))
    }
}

/// The token of `Authorization: Bearer <token>`.
pub(crate) fn bearer_of(headers: &HeaderMap) -> Result<&str, Error> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .ok_or_else(|| Error::Unauthorized("send Authorization: Bearer <token>".into()))
}

/// An id from a path or a query, refused as `bad_request` when it is not a UUID.
pub(crate) fn id<T: std::str::FromStr>(text: &str) -> ApiResult<T> {
    text.parse()
        .map_err(|_| ApiError(Error::BadRequest(format!("{text:?} is not a UUID"))))
}

/// The `{id}` segment of a path, parsed: one that is not UTF-8 once
/// percent-decoded (axum's own answer is text) or not a UUID is
/// `bad_request` in our JSON.
pub(crate) struct Id<T>(pub(crate) T);

impl<S: Send + Sync, T: std::str::FromStr + Send> FromRequestParts<S> for Id<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(raw)) => Ok(Id(id(&raw)?)),
            Err(e) => Err(ApiError(Error::BadRequest(format!(
                "the id in the path is not valid: {}",
                e.body_text()
            )))),
        }
    }
}

/// The named segments of a path (a group's name, a participant and a
/// device): one that is not UTF-8 once percent-decoded is `bad_request` in
/// our JSON; what they must be, the handler checks.
pub(crate) struct Segments<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Segments<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(segments)) => Ok(Segments(segments)),
            Err(e) => Err(ApiError(Error::BadRequest(format!(
                "the path is not valid: {}",
                e.body_text()
            )))),
        }
    }
}

/// The caller, and the id in the path of what they ask about. The token is
/// checked first: a caller without one learns nothing of the id (401, not 400).
pub(crate) struct On<T>(pub(crate) Bundled, pub(crate) T);

impl<T: std::str::FromStr + Send> FromRequestParts<Bundled> for On<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, store: &Bundled) -> Result<Self, ApiError> {
        let Caller(me) = Caller::from_request_parts(parts, store).await?;
        let Id(id) = Id::from_request_parts(parts, store).await?;
        Ok(On(me, id))
    }
}

/// Why a request body could not be read, for the caller: the body's own
/// error and its causes (a malformed chunk, a stall, a client that left).
pub(crate) fn body_error(e: axum::Error) -> Error {
    let mut reason = e.to_string();
    let mut cause = std::error::Error::source(&e);
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !reason.contains(&text) {
            reason.push_str(": ");
            reason.push_str(&text);
        }
        cause = inner.source();
    }
    Error::BadRequest(format!(
        "the request body could not be read ({reason}): nothing was stored"
    ))
}

/// A JSON object body (empty means `{}`), read up to `MAX_JSON_BYTES` (past
/// it: `too_large`); malformed JSON, a JSON value that is not an object, or
/// unknown fields are `bad_request`.
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        let mut bytes = Vec::new();
        let mut stream = request.into_body().into_data_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(body_error)?;
            if bytes.len() + chunk.len() > MAX_JSON_BYTES {
                return Err(ApiError(Error::TooLarge {
                    limit: MAX_JSON_BYTES as u64,
                }));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(JsonBody(json_object(&bytes)?))
    }
}

/// A JSON object (empty means `{}`); anything else is `bad_request`.
pub fn json_object<T: DeserializeOwned + Default>(bytes: &[u8]) -> Result<T, Error> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => return Ok(T::default()),
        Some(b'{') => {}
        // serde would take `[60, "note"]` for a struct's fields in order.
        Some(_) => {
            return Err(Error::BadRequest(
                "the JSON body must be an object, {...}".into(),
            ))
        }
    }
    let refused =
        |e: serde_json::Error| Error::BadRequest(format!("the JSON body is not valid: {e}"));
    match serde_json::from_slice(bytes) {
        Ok(object) => Ok(object),
        // `60.0` is the number `60` in JSON (and in the document's JSON
        // Schema), though serde reads it only as a float: read again with
        // each whole number as an integer.
        Err(e) => {
            let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(refused)?;
            if !whole_numbers_as_integers(&mut value) {
                return Err(refused(e));
            }
            serde_json::from_value(value).map_err(refused)
        }
    }
}

/// Rewrites each float of `value` that is a whole number an integer can
/// hold (`60.0`, `6e1`) as that integer; whether any was.
fn whole_numbers_as_integers(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // Within ±2^63, every whole f64 is an i64 or a u64 exactly.
            let whole = f.fract() == 0.0 && f.abs() < 9.223_372_036_854_776e18;
            if whole {
                *value = if f < 0.0 {
                    Value::from(f as i64)
                } else {
                    Value::from(f as u64)
                };
            }
            whole
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |any, v| whole_numbers_as_integers(v) | any),
        Value::Object(fields) => fields
            .values_mut()
            .fold(false, |any, v| whole_numbers_as_integers(v) | any),
        _ => false,
    }
}

/// The query string, parsed into `T`: a malformed one, or a parameter `T`
/// does not know (where it denies them), is `bad_request`.
pub(crate) struct Params<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        query(&parts.uri).map(Params)
    }
}

/// The query string; a malformed one is `bad_request`.
pub(crate) fn query<T: DeserializeOwned>(uri: &axum::http::Uri) -> ApiResult<T> {
    Query::try_from_uri(uri)
        .map(|Query(q)| q)
        .map_err(|e| ApiError(Error::BadRequest(format!("bad query: {}", e.body_text()))))
}

/// A sequence number or version from a query or header: SQLite keeps them as
/// signed 64-bit integers, so one past 2^63 - 1 is `bad_request`.
pub(crate) fn in_range(name: &str, value: Option<u64>) -> ApiResult<Option<u64>> {
    match value {
        Some(v) if v > i64::MAX as u64 => Err(ApiError(Error::BadRequest(format!(
            "{name} must be at most {}",
            i64::MAX
        )))),
        v => Ok(v),
    }
}

/// The bytes a request brings: its body, streamed, or a finished resumable
/// upload that `Leasedesk-Upload` names (its body then empty).
pub(crate) enum Incoming {
    Body(Upload),
    Resumed {
        id: UploadId,
        message: Option<String>,
    },
}

/// The request's bytes (see [`Incoming`]), with the digest header if sent.
/// A body that fails to arrive (cut off, malformed, stalled) is the
/// client's error, not ours.
pub(crate) fn incoming(headers: &HeaderMap, body: Body) -> ApiResult<Incoming> {
    let message = check_message(message_header(headers)?)?;
    if let Some(value) = headers.get(UPLOAD_HEADER) {
        let id = id(value.to_str().unwrap_or_default())?;
        let length = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok());
        if !matches!(length, None | Some("0")) || headers.contains_key(header::TRANSFER_ENCODING) {
            return Err(ApiError(Error::BadRequest(format!(
                "a request that names an upload ({UPLOAD_HEADER}) has no body"
            ))));
        }
        return Ok(Incoming::Resumed { id, message });
    }
    let reader = StreamReader::new(
        body.into_data_stream()
            .map_err(|e| std::io::Error::other(body_error(e))),
    );
    let mut upload = Upload::stream(reader);
    upload.message = message;
    if let Some(digest) = digest_header(headers)? {
        upload = upload.with_digest(digest);
    }
    Ok(Incoming::Body(upload))
}

/// `Leasedesk-Digest`, if sent.
pub(crate) fn digest_header(headers: &HeaderMap) -> ApiResult<Option<Digest>> {
    headers
        .get(DIGEST_HEADER)
        .map(|value| {
            value
                .to_str()
                .ok()
                .and_then(|v| v.parse::<Digest>().ok())
                .ok_or_else(|| {
                    ApiError(Error::BadRequest(format!(
                        "{DIGEST_HEADER} must be blake3:<64 hex>"
                    )))
                })
        })
        .transpose()
}

/// The request's bytes, read as `incoming` reads them.
pub(crate) struct UploadBody(pub(crate) Incoming);

impl<S: Send + Sync> FromRequest<S> for UploadBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        let (parts, body) = request.into_parts();
        incoming(&parts.headers, body).map(UploadBody)
    }
}

/// The upload's description from `Leasedesk-Message`: percent-encoded UTF-8.
/// A value that is not (a `%` without two hex digits, bytes that are not
/// UTF-8 once decoded, raw non-ASCII) is 422, before a byte is stored.
fn message_header(headers: &HeaderMap) -> ApiResult<Option<String>> {
    let Some(value) = headers.get(MESSAGE_HEADER) else {
        return Ok(None);
    };
    let refused = |why: &str| {
        ApiError(Error::Invalid(format!(
            "{MESSAGE_HEADER} must be percent-encoded UTF-8 ({why}): nothing was stored"
        )))
    };
    let raw = value.as_bytes();
    let mut decoded = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'%' => {
                let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
                match (hex(raw.get(i + 1)), hex(raw.get(i + 2))) {
                    (Some(high), Some(low)) => decoded.push((high * 16 + low) as u8),
                    _ => return Err(refused("a % not followed by two hex digits")),
                }
                i += 3;
            }
            b @ 0x20..=0x7e => {
                decoded.push(b);
                i += 1;
            }
            _ => return Err(refused("a byte that is not printable ASCII")),
        }
        if decoded.len() > MAX_MESSAGE_BYTES {
            return Err(ApiError(Error::Invalid(format!(
                "the description is over the limit of {MAX_MESSAGE_BYTES} bytes: nothing was stored"
            ))));
        }
    }
    String::from_utf8(decoded)
        .map(Some)
        .map_err(|_| refused("the decoded bytes are not UTF-8"))
}

/// Refuses a `path` query value that is not UTF-8 once percent-decoded
/// (`%FF`): axum's decoding would turn it into U+FFFD and store that.
pub(crate) fn refuse_non_utf8_path(uri: &axum::http::Uri) -> ApiResult<()> {
    fn decoded(text: &str) -> Vec<u8> {
        let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
        let (bytes, mut out, mut i) = (text.as_bytes(), Vec::new(), 0);
        while i < bytes.len() {
            match (bytes[i], hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
                (b'%', Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                    continue;
                }
                (b'+', ..) => out.push(b' '),
                (b, ..) => out.push(b),
            }
            i += 1;
        }
        out
    }
    for pair in uri.query().unwrap_or("").split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if decoded(key) == b"path" && std::str::from_utf8(&decoded(value)).is_err() {
            return Err(ApiError(Error::Invalid(
                "the path is not valid UTF-8 once percent-decoded: a file's name must be text \
                 that every computer reads alike"
                    .into(),
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Default, Debug)]
    #[serde(deny_unknown_fields)]
    struct Body {
        ttl_seconds: Option<u64>,
        offsets: Option<Vec<i64>>,
    }

    #[test]
    fn a_whole_number_written_as_a_float_is_that_integer() {
        let body: Body = json_object(br#"{"ttl_seconds": 60.0, "offsets": [-2.0, 3]}"#).unwrap();
        assert_eq!(body.ttl_seconds, Some(60));
        assert_eq!(body.offsets, Some(vec![-2, 3]));
        let body: Body = json_object(br#"{"ttl_seconds": 6e1}"#).unwrap();
        assert_eq!(body.ttl_seconds, Some(60), "JSON's 6e1 is 60");
    }

    #[test]
    fn a_number_with_a_fraction_or_out_of_range_stays_refused() {
        for bytes in [
            &br#"{"ttl_seconds": 60.5}"#[..],
            br#"{"ttl_seconds": -1.0}"#,
            br#"{"ttl_seconds": 1e30}"#,
            br#"{"ttl_seconds": 60.0, "colour": "red"}"#,
        ] {
            let refused = json_object::<Body>(bytes).expect_err("refused");
            assert!(
                matches!(refused, Error::BadRequest(_)),
                "{}: {refused:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}

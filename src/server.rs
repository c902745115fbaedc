//! `leasedesk serve`: the HTTP API of `shared/API.md` over a bundled backend.
//! Every handler authenticates the caller, acts through [`Backend`] as them,
//! and maps [`Error`] to the API's status and code. Bodies stream both ways.

use std::convert::Infallible;
use std::future::Future;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{FromRequestParts, Path, Query, Request};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use futures_util::{Stream, TryStreamExt};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::io::{ReaderStream, StreamReader};
use utoipa::{OpenApi, ToSchema};

use crate::backend::{Backend, Upload};
use crate::bundled::Bundled;
use crate::error::Error;
use crate::model::*;

/// The header a client may send with an upload's digest.
pub const DIGEST_HEADER: &str = "leasedesk-digest";

/// Largest JSON request body: requests are small objects.
const MAX_JSON_BYTES: usize = 64 << 10;

/// Serves `store` on `listener` until `shutdown` resolves, then finishes the
/// requests in flight (an upload either completes or stores nothing).
pub async fn run(
    listener: TcpListener,
    store: Bundled,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let sweeper = store.spawn_sweeper(Duration::from_secs(1));
    let served = axum::serve(listener, app(store))
        .with_graceful_shutdown(shutdown)
        .await;
    sweeper.abort();
    served
}

/// The API's routes over `store`.
pub fn app(store: Bundled) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/openapi.json", get(openapi_json))
        .route("/v1/me", get(me))
        .route("/v1/artifacts", get(artifacts).post(import))
        .route("/v1/artifacts/{id}", get(artifact))
        .route("/v1/artifacts/{id}/versions", get(versions))
        .route("/v1/artifacts/{id}/content", get(content))
        .route("/v1/artifacts/{id}/checkouts", post(check_out))
        .route("/v1/artifacts/{id}/edits", post(begin_edit))
        .route("/v1/artifacts/{id}/break", post(break_lease))
        .route("/v1/artifacts/{id}/rename", post(rename))
        .route("/v1/checkouts", get(checkouts))
        .route("/v1/checkouts/{id}", get(checkout))
        .route("/v1/checkouts/{id}/extend", post(extend))
        .route("/v1/checkouts/{id}/checkin", post(check_in))
        .route("/v1/checkouts/{id}/cancel", post(cancel))
        .route("/v1/edits/{id}/commit", post(commit_edit))
        .route("/v1/edits/{id}", delete(release_edit))
        .route("/v1/proposals", get(proposals))
        .route("/v1/proposals/{id}/accept", post(accept))
        .route("/v1/proposals/{id}/rebuild", post(rebuild))
        .route("/v1/proposals/{id}/reject", post(reject))
        .route("/v1/events", get(events))
        .route("/v1/events/stream", get(event_stream))
        .fallback(|| async { ApiError(Error::NotFound("no such endpoint".into())) })
        .method_not_allowed_fallback(|request: Request| async move {
            ApiError(Error::BadRequest(format!(
                "{} {} is not an endpoint of the API",
                request.method(),
                request.uri().path()
            )))
        })
        .layer(middleware::from_fn(no_store_and_log))
        .with_state(store)
}

/// Every response carries `Cache-Control: no-store`; every request is logged
/// by method, path, status and time (never a header: tokens stay out of logs).
async fn no_store_and_log(request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let started = Instant::now();
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    tracing::info!(%method, %path, status = response.status().as_u16(), ms = started.elapsed().as_secs_f64() * 1e3, "request");
    response
}

/// An error as the API answers it: status, and `{"error", "message", ...}`.
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

pub fn status_of(error: &Error) -> StatusCode {
    match error {
        Error::ArtifactBusy { .. } | Error::CheckoutClosed(_) | Error::Stale { .. } => {
            StatusCode::CONFLICT
        }
        Error::ProposalStale { .. } | Error::Exists(_) => StatusCode::CONFLICT,
        Error::Forbidden(_) => StatusCode::FORBIDDEN,
        Error::NotFound(_) => StatusCode::NOT_FOUND,
        Error::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        Error::BadRequest(_) | Error::DigestMismatch { .. } => StatusCode::BAD_REQUEST,
        Error::Unauthorized(_) => StatusCode::UNAUTHORIZED,
        Error::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        Error::DeadlineExceeded(_) => StatusCode::GATEWAY_TIMEOUT,
        Error::StorageFull(_) => StatusCode::INSUFFICIENT_STORAGE,
        Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = status_of(&self.0);
        let body = match &self.0 {
            // The details (paths, SQLite's words) go to the log, not the caller.
            Error::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                json!({ "error": "internal", "message": "the server failed; the request changed nothing or completed, and can be retried" })
            }
            e => e.to_body(),
        };
        (status, Json(body)).into_response()
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// The authenticated caller: the store, acting as the token's participant.
struct Caller(Bundled);

impl FromRequestParts<Bundled> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, store: &Bundled) -> Result<Self, ApiError> {
        let bearer = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token)
            .ok_or_else(|| Error::Unauthorized("send Authorization: Bearer <token>".into()))?;
        let participant = store.authenticate(bearer.trim()).await?;
        Ok(Caller(store.acting_as(participant)))
    }
}

/// A path id, refused as `bad_request` when it is not a UUID.
fn id<T: std::str::FromStr<Err = Error>>(text: &str) -> ApiResult<T> {
    text.parse()
        .map_err(|_| ApiError(Error::BadRequest(format!("{text:?} is not a UUID"))))
}

/// A JSON body (empty means `{}`); malformed JSON or unknown fields are `bad_request`.
async fn json_body<T: DeserializeOwned + Default>(body: Body) -> ApiResult<T> {
    let bytes = axum::body::to_bytes(body, MAX_JSON_BYTES)
        .await
        .map_err(|e| Error::BadRequest(format!("the request body could not be read: {e}")))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        ApiError(Error::BadRequest(format!(
            "the JSON body is not valid: {e}"
        )))
    })
}

/// The query string; a malformed one is `bad_request`.
fn query<T: DeserializeOwned>(uri: &axum::http::Uri) -> ApiResult<T> {
    Query::try_from_uri(uri)
        .map(|Query(q)| q)
        .map_err(|e| ApiError(Error::BadRequest(format!("bad query: {}", e.body_text()))))
}

/// The request body as a streamed upload, with the digest header if sent.
fn upload(headers: &HeaderMap, body: Body) -> ApiResult<Upload> {
    let reader = StreamReader::new(body.into_data_stream().map_err(std::io::Error::other));
    let upload = Upload::stream(reader);
    match headers.get(DIGEST_HEADER) {
        None => Ok(upload),
        Some(value) => {
            let digest = value
                .to_str()
                .ok()
                .and_then(|v| v.parse::<Digest>().ok())
                .ok_or_else(|| {
                    Error::BadRequest(format!("{DIGEST_HEADER} must be blake3:<64 hex>"))
                })?;
            Ok(upload.with_digest(digest))
        }
    }
}

#[utoipa::path(get, path = "/v1/health", responses((status = 200, description = "The server is up", body = Object)))]
async fn health() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

#[utoipa::path(get, path = "/v1/me", responses((status = 200, description = "The participant the token names", body = Object), (status = 401, body = ErrorBody)))]
async fn me(Caller(me): Caller) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(json!({ "participant": me.me().await? })))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: Option<String>,
}

/// Refuses a `path` query value that is not UTF-8 once percent-decoded
/// (`%FF`): axum's decoding would turn it into U+FFFD and store that.
fn refuse_non_utf8_path(uri: &axum::http::Uri) -> ApiResult<()> {
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

#[utoipa::path(get, path = "/v1/artifacts", params(("path" = Option<String>, Query, description = "Only the artifact at this path")), responses((status = 200, description = "Every artifact, with head and live lease", body = ArtifactList), (status = 401, body = ErrorBody)))]
async fn artifacts(Caller(me): Caller, request: Request) -> ApiResult<Json<ArtifactList>> {
    refuse_non_utf8_path(request.uri())?;
    let q: PathQuery = query(request.uri())?;
    let artifacts = match q.path {
        // An addition to API.md: the artifact at one path, for clients that
        // know paths (as stored: an old path that cannot be placed is found too).
        Some(path) => vec![me.artifact_by_path(&RepoPath::stored(&path)?).await?],
        None => me.artifacts().await?,
    };
    Ok(Json(ArtifactList { artifacts }))
}

#[utoipa::path(post, path = "/v1/artifacts", params(("path" = String, Query, description = "Where the file goes")), request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 201, body = Artifact), (status = 409, description = "exists", body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn import(
    Caller(me): Caller,
    headers: HeaderMap,
    request: Request,
) -> ApiResult<(StatusCode, Json<Artifact>)> {
    refuse_non_utf8_path(request.uri())?;
    let q: PathQuery = query(request.uri())?;
    let path: RepoPath = q
        .path
        .ok_or_else(|| Error::Invalid("say where the file goes: ?path=folder/file.psd".into()))?
        .parse()?;
    let upload = upload(&headers, request.into_body())?;
    Ok((StatusCode::CREATED, Json(me.import(&path, upload).await?)))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}", params(("id" = Uuid, Path)), responses((status = 200, body = Artifact), (status = 404, body = ErrorBody)))]
async fn artifact(Caller(me): Caller, Path(raw): Path<String>) -> ApiResult<Json<Artifact>> {
    Ok(Json(me.artifact(id(&raw)?).await?))
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/versions", params(("id" = Uuid, Path)), responses((status = 200, description = "Versions, newest first", body = VersionList), (status = 404, body = ErrorBody)))]
async fn versions(Caller(me): Caller, Path(raw): Path<String>) -> ApiResult<Json<VersionList>> {
    Ok(Json(VersionList {
        versions: me.versions(id(&raw)?).await?,
    }))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct VersionQuery {
    version: Option<u64>,
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/content", params(("id" = Uuid, Path), ("version" = Option<u64>, Query)), responses((status = 200, description = "The bytes, with ETag: the digest", content_type = "application/octet-stream", body = Vec<u8>), (status = 404, body = ErrorBody)))]
async fn content(
    Caller(me): Caller,
    Path(raw): Path<String>,
    request: Request,
) -> ApiResult<Response> {
    let q: VersionQuery = query(request.uri())?;
    let content = me.content(id(&raw)?, q.version).await?;
    let headers = [
        (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
        (header::CONTENT_LENGTH, content.head.size.to_string()),
        (header::ETAG, format!("\"{}\"", content.head.digest)),
    ];
    Ok((
        headers,
        Body::from_stream(ReaderStream::with_capacity(content.reader, 1 << 20)),
    )
        .into_response())
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/checkouts", params(("id" = Uuid, Path)), request_body = CheckoutRequest, responses((status = 201, body = Checkout), (status = 409, description = "artifact_busy, with the lease", body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn check_out(
    Caller(me): Caller,
    Path(raw): Path<String>,
    body: Body,
) -> ApiResult<(StatusCode, Json<Checkout>)> {
    let request: CheckoutRequest = json_body(body).await?;
    Ok((
        StatusCode::CREATED,
        Json(me.check_out(id(&raw)?, request).await?),
    ))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
struct TtlBody {
    ttl_seconds: Option<u64>,
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
struct BreakBody {
    reason: String,
}

/// The body of every refusal (for the OpenAPI document).
#[derive(serde::Serialize, ToSchema)]
struct ErrorBody {
    error: String,
    message: String,
    /// With artifact_busy: the live lease, or null if it ended meanwhile.
    lease: Option<Lease>,
    /// With stale and proposal_stale: the head now.
    head: Option<Head>,
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Leasedesk", description = "Leases for files that cannot be merged (shared/API.md)."),
    paths(
        health, me, artifacts, import, artifact, versions, content, check_out, checkouts, checkout,
        extend, check_in, cancel, begin_edit, commit_edit, release_edit, proposals, accept, rebuild,
        reject, break_lease, rename, events, event_stream
    ),
    components(schemas(ErrorBody, TtlBody, BreakBody, RenameBody, CheckoutRequest, Artifact, Head, Lease, Checkout, CheckinResult, Proposal, Edit, Event, EventPage)),
    modifiers(&BearerAuth)
)]
struct ApiDoc;

/// Every endpoint but health wants `Authorization: Bearer <token>`.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{
            HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
        };
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        api.security = Some(vec![SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// The OpenAPI document, generated from the handlers and the model types.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// Like every endpoint but health, for a caller with a token.
async fn openapi_json(_: Caller) -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}

#[utoipa::path(get, path = "/v1/checkouts", params(("state" = Option<CheckoutState>, Query)), responses((status = 200, description = "The caller's own check-outs", body = CheckoutList)))]
async fn checkouts(Caller(me): Caller, request: Request) -> ApiResult<Json<CheckoutList>> {
    #[derive(Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct StateQuery {
        state: Option<CheckoutState>,
    }
    let q: StateQuery = query(request.uri())?;
    let open_only = q.state == Some(CheckoutState::Open);
    let mut checkouts = me.checkouts(open_only).await?;
    if q.state == Some(CheckoutState::Closed) {
        checkouts.retain(|c| c.state == CheckoutState::Closed);
    }
    Ok(Json(CheckoutList { checkouts }))
}

#[utoipa::path(get, path = "/v1/checkouts/{id}", params(("id" = Uuid, Path)), responses((status = 200, body = Checkout), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn checkout(Caller(me): Caller, Path(raw): Path<String>) -> ApiResult<Json<Checkout>> {
    Ok(Json(me.checkout(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/extend", params(("id" = Uuid, Path)), request_body = TtlBody, responses((status = 200, body = Checkout), (status = 403, body = ErrorBody), (status = 409, description = "checkout_closed or artifact_busy", body = ErrorBody)))]
async fn extend(
    Caller(me): Caller,
    Path(raw): Path<String>,
    body: Body,
) -> ApiResult<Json<Checkout>> {
    let request: TtlBody = json_body(body).await?;
    Ok(Json(me.extend(id(&raw)?, request.ttl_seconds).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/checkin", params(("id" = Uuid, Path)), request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = Checkout), (status = 400, description = "digest_mismatch", body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, description = "checkout_closed", body = ErrorBody)))]
async fn check_in(
    Caller(me): Caller,
    Path(raw): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<Checkout>> {
    let checkout = id(&raw)?;
    Ok(Json(me.check_in(checkout, upload(&headers, body)?).await?))
}

#[utoipa::path(post, path = "/v1/checkouts/{id}/cancel", params(("id" = Uuid, Path)), responses((status = 200, body = Checkout), (status = 403, body = ErrorBody)))]
async fn cancel(Caller(me): Caller, Path(raw): Path<String>) -> ApiResult<Json<Checkout>> {
    Ok(Json(me.cancel(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/edits", params(("id" = Uuid, Path)), request_body = TtlBody, responses((status = 201, body = Edit), (status = 409, description = "artifact_busy", body = ErrorBody)))]
async fn begin_edit(
    Caller(me): Caller,
    Path(raw): Path<String>,
    body: Body,
) -> ApiResult<(StatusCode, Json<Edit>)> {
    let request: TtlBody = json_body(body).await?;
    Ok((
        StatusCode::CREATED,
        Json(me.begin_edit(id(&raw)?, request.ttl_seconds).await?),
    ))
}

#[utoipa::path(post, path = "/v1/edits/{id}/commit", params(("id" = Uuid, Path)), request_body(content = Vec<u8>, content_type = "application/octet-stream"), responses((status = 200, body = CheckinResult), (status = 409, description = "stale, with the head", body = ErrorBody)))]
async fn commit_edit(
    Caller(me): Caller,
    Path(raw): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<CheckinResult>> {
    let edit = id(&raw)?;
    Ok(Json(me.commit_edit(edit, upload(&headers, body)?).await?))
}

#[utoipa::path(delete, path = "/v1/edits/{id}", params(("id" = Uuid, Path)), responses((status = 204, description = "Released (idempotent)"), (status = 403, body = ErrorBody)))]
async fn release_edit(Caller(me): Caller, Path(raw): Path<String>) -> ApiResult<StatusCode> {
    me.release_edit(id(&raw)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/v1/proposals", params(("artifact" = Option<Uuid>, Query), ("state" = Option<ProposalState>, Query)), responses((status = 200, body = ProposalList)))]
async fn proposals(Caller(me): Caller, request: Request) -> ApiResult<Json<ProposalList>> {
    #[derive(Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct ProposalQuery {
        artifact: Option<String>,
        state: Option<ProposalState>,
    }
    let q: ProposalQuery = query(request.uri())?;
    let filter = ProposalFilter {
        artifact: q.artifact.as_deref().map(id).transpose()?,
        state: q.state,
    };
    Ok(Json(ProposalList {
        proposals: me.proposals(filter).await?,
    }))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/accept", params(("id" = Uuid, Path)), responses((status = 200, body = Proposal), (status = 409, description = "proposal_stale or artifact_busy", body = ErrorBody)))]
async fn accept(Caller(me): Caller, Path(raw): Path<String>) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.accept_proposal(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/rebuild", params(("id" = Uuid, Path)), responses((status = 201, body = Proposal)))]
async fn rebuild(
    Caller(me): Caller,
    Path(raw): Path<String>,
) -> ApiResult<(StatusCode, Json<Proposal>)> {
    Ok((
        StatusCode::CREATED,
        Json(me.rebuild_proposal(id(&raw)?).await?),
    ))
}

#[utoipa::path(post, path = "/v1/proposals/{id}/reject", params(("id" = Uuid, Path)), responses((status = 200, body = Proposal)))]
async fn reject(Caller(me): Caller, Path(raw): Path<String>) -> ApiResult<Json<Proposal>> {
    Ok(Json(me.reject_proposal(id(&raw)?).await?))
}

#[utoipa::path(post, path = "/v1/artifacts/{id}/break", params(("id" = Uuid, Path)), request_body = BreakBody, responses((status = 200, body = Artifact), (status = 403, body = ErrorBody)))]
async fn break_lease(
    Caller(me): Caller,
    Path(raw): Path<String>,
    body: Body,
) -> ApiResult<Json<Artifact>> {
    let request: BreakBody = json_body(body).await?;
    Ok(Json(me.break_lease(id(&raw)?, &request.reason).await?))
}

#[derive(Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
struct RenameBody {
    /// The new path, under the rules of every new path.
    path: String,
}

/// An addition to API.md: an admin moves an artifact to a new path (to fix
/// one stored before the path rules). Writes `artifact.renamed` {from, to}.
#[utoipa::path(post, path = "/v1/artifacts/{id}/rename", params(("id" = Uuid, Path)), request_body = RenameBody, responses((status = 200, body = Artifact), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, description = "exists, or artifact_busy with the lease", body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn rename(
    Caller(me): Caller,
    Path(raw): Path<String>,
    body: Body,
) -> ApiResult<Json<Artifact>> {
    let request: RenameBody = json_body(body).await?;
    let artifact = id(&raw)?;
    Ok(Json(me.rename(artifact, &request.path.parse()?).await?))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    after: Option<u64>,
    limit: Option<u32>,
}

#[utoipa::path(get, path = "/v1/events", params(("after" = Option<u64>, Query), ("limit" = Option<u32>, Query)), responses((status = 200, body = EventPage)))]
async fn events(Caller(me): Caller, request: Request) -> ApiResult<Json<EventPage>> {
    let q: EventsQuery = query(request.uri())?;
    Ok(Json(
        me.events(q.after.unwrap_or(0), q.limit.unwrap_or(100))
            .await?,
    ))
}

/// Server-Sent Events: every event after `after`, then each new one as it is
/// written (by this server at once; by another process within a second).
#[utoipa::path(get, path = "/v1/events/stream", params(("after" = Option<u64>, Query)), responses((status = 200, description = "Server-Sent Events, one Event per message", content_type = "text/event-stream")))]
async fn event_stream(
    Caller(me): Caller,
    request: Request,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let q: EventsQuery = query(request.uri())?;
    let start: (Bundled, u64, Vec<Event>) = (me, q.after.unwrap_or(0), Vec::new());
    let stream = futures_util::stream::unfold(start, |(me, mut after, mut pending)| async move {
        loop {
            if let Some(event) = pending.pop() {
                let sse = SseEvent::default()
                    .id(event.seq.to_string())
                    .event(&event.kind)
                    .json_data(&event)
                    .unwrap_or_default();
                return Some((Ok(sse), (me, after, pending)));
            }
            let changed = me.changed();
            match me.events(after, 500).await {
                Ok(page) if !page.events.is_empty() => {
                    after = page.next;
                    pending = page.events;
                    pending.reverse();
                }
                Ok(_) => {
                    let _ = tokio::time::timeout(Duration::from_secs(1), changed).await;
                }
                Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

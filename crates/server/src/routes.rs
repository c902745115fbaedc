//! The API's routes: one table of them here, their handlers in one module
//! per family of resources; and the answers they share (lists streamed as
//! JSON, file bytes).
//! A handler authenticates, parses and calls [`crate::backend::Backend`]: it
//! never holds a rule of its own.

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Serialize;
use tokio_util::io::ReaderStream;

use crate::bundled::Bundled;
use crate::model::Digest;

pub(crate) mod artifacts;
pub(crate) mod changes;
pub(crate) mod checkouts;
pub(crate) mod edits;
pub(crate) mod events;
pub(crate) mod health;
pub(crate) mod lfs;
pub(crate) mod lfs_objects;
pub(crate) mod previews;
pub(crate) mod proposals;
pub(crate) mod requests;
pub(crate) mod review;
pub(crate) mod studio;
pub(crate) mod uploads;

use artifacts::*;
use changes::*;
use checkouts::*;
use edits::*;
use events::*;
use health::*;
use previews::*;
use proposals::*;
use requests::*;
use review::*;
use studio::*;
use uploads::*;

/// Every route of the API, in the order of API.md, but the OpenAPI
/// document's (which lists these).
pub(crate) fn api() -> Router<Bundled> {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/me", get(me))
        .route("/v1/artifacts", get(artifacts).post(import))
        .route("/v1/artifacts/{id}", get(artifact))
        .route("/v1/folders", get(folders))
        .route("/v1/artifacts/{id}/versions", get(versions))
        .route("/v1/artifacts/{id}/content", get(content))
        .route("/v1/artifacts/{id}/chunks", get(version_chunks))
        .route("/v1/artifacts/{id}/preview", get(artifact_preview))
        .route("/v1/artifacts/{id}/checkouts", post(check_out))
        .route("/v1/checkouts", get(checkouts).post(check_out_many))
        .route("/v1/checkouts/{id}", get(checkout))
        .route("/v1/checkouts/{id}/extend", post(extend))
        .route("/v1/checkouts/{id}/checkin", post(check_in))
        .route("/v1/checkouts/{id}/cancel", post(cancel))
        .route("/v1/artifacts/{id}/edits", post(begin_edit))
        .route("/v1/edits/{id}/commit", post(commit_edit))
        .route("/v1/edits/{id}", delete(release_edit))
        .route("/v1/proposals", get(proposals))
        .route("/v1/proposals/{id}", get(proposal))
        .route("/v1/proposals/{id}/content", get(proposal_content))
        .route("/v1/proposals/{id}/preview", get(proposal_preview))
        .route("/v1/proposals/{id}/accept", post(accept))
        .route("/v1/proposals/{id}/rebuild", post(rebuild))
        .route("/v1/proposals/{id}/reject", post(reject))
        .route("/v1/artifacts/{id}/break", post(break_lease))
        .route("/v1/artifacts/{id}/rename", post(rename))
        .route("/v1/events", get(events))
        .route("/v1/events/stream", get(event_stream))
        .route("/v1/artifacts/{id}/requests", post(ask))
        .route("/v1/requests", get(requests))
        .route("/v1/requests/{id}/reply", post(reply))
        .route("/v1/requests/{id}/withdraw", post(withdraw))
        .route("/v1/artifacts/{id}/threads", get(threads).post(open_thread))
        .route("/v1/threads/{id}/comments", post(comment))
        .route("/v1/threads/{id}/resolve", post(resolve))
        .route("/v1/threads/{id}/reopen", post(reopen))
        .route("/v1/artifacts/{id}/reviews", get(reviews).post(review))
        .route("/v1/artifacts/{id}/review-requests", post(request_review))
        .route("/v1/inbox", get(inbox))
        .route("/v1/inbox/read", post(read_inbox))
        .route("/v1/checkouts/{id}/stage", post(stage))
        .route("/v1/changes", post(commit_change))
        .route("/v1/changes/{id}", get(change))
        .route("/v1/uploads", post(begin_upload))
        .route(
            "/v1/uploads/{id}",
            get(upload_state).patch(append_upload).delete(cancel_upload),
        )
        .route("/v1/invites", get(invites).post(invite))
        .route("/v1/invites/{id}", delete(revoke_invite))
        .route("/v1/me/invites", post(invite_myself))
        .route("/v1/invites/redeem", post(redeem))
        .route("/v1/me/devices", get(my_devices))
        .route("/v1/me/devices/{id}", delete(revoke_my_device))
        .route("/v1/participants", get(participants))
        .route(
            "/v1/participants/{participant}/devices/{id}",
            delete(revoke_device),
        )
        .route("/v1/groups", get(groups))
        .route("/v1/groups/{name}", put(put_group).delete(delete_group))
        .route("/v1/permissions", get(permissions).put(put_permissions))
        .route(
            "/lfs/{folder}/locks",
            get(lfs::list_locks).post(lfs::create_lock),
        )
        .route("/lfs/{folder}/locks/verify", post(lfs::verify_locks))
        .route("/lfs/{folder}/locks/{id}/unlock", post(lfs::unlock))
        .route("/lfs/{folder}/objects/batch", post(lfs_objects::batch))
        .route(
            "/lfs/{folder}/objects/{oid}",
            get(lfs_objects::download).put(lfs_objects::upload),
        )
        .route(
            "/lfs/{folder}/objects/{oid}/verify",
            post(lfs_objects::verify),
        )
}

/// What a handler that makes something answers: 201 and its JSON.
pub(crate) type Created<T> = (StatusCode, Json<T>);

pub(crate) fn created<T>(made: T) -> Created<T> {
    (StatusCode::CREATED, Json(made))
}

/// A list answered as `{"<key>": [...], ...}`, serialized as the client reads
/// it, about 64 KiB at a time, rather than into one buffer as large as the
/// whole answer. `rest` is the fields after the list, as JSON text (`,"next":7`).
pub(crate) struct JsonList<T> {
    key: &'static str,
    items: Vec<T>,
    rest: String,
}

impl<T> JsonList<T> {
    fn new(key: &'static str, items: Vec<T>) -> Self {
        Self {
            key,
            items,
            rest: String::new(),
        }
    }

    /// The list followed by these fields.
    fn with_fields(mut self, fields: serde_json::Map<String, serde_json::Value>) -> Self {
        for (name, value) in fields {
            self.rest
                .push_str(&format!(",{}:{value}", serde_json::Value::from(name)));
        }
        self
    }
}

impl<T: Serialize + Send + 'static> IntoResponse for JsonList<T> {
    fn into_response(self) -> Response {
        const CHUNK: usize = 64 << 10;
        let opening = format!("{{\"{}\":[", self.key).into_bytes();
        let closing = format!("]{}}}", self.rest).into_bytes();
        let items = self.items.into_iter().enumerate();
        let chunks = futures_util::stream::unfold(
            (Some(opening), items, Some(closing)),
            |(mut opening, mut items, mut closing)| async move {
                let mut chunk = opening.take().unwrap_or_default();
                for (i, item) in items.by_ref() {
                    if i > 0 {
                        chunk.push(b',');
                    }
                    if let Err(e) = serde_json::to_writer(&mut chunk, &item) {
                        tracing::error!(error = %e, "a list item could not be serialized");
                        return Some((Err(std::io::Error::other(e)), (None, items, None)));
                    }
                    if chunk.len() >= CHUNK {
                        return Some((Ok(chunk), (None, items, closing)));
                    }
                }
                chunk.extend(closing.take()?);
                Some((Ok(chunk), (None, items, None)))
            },
        );
        (
            [(header::CONTENT_TYPE, "application/json")],
            Body::from_stream(chunks),
        )
            .into_response()
    }
}

/// 206: the bytes `range` of content of `size` bytes and `digest`.
pub(crate) fn partial_response(
    range: std::ops::Range<u64>,
    size: u64,
    digest: &Digest,
    reader: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
) -> Response {
    let (first, last) = (range.start, range.end.saturating_sub(1));
    let mut response = bytes_response(range.end - range.start, digest, reader);
    *response.status_mut() = StatusCode::PARTIAL_CONTENT;
    if let Ok(value) = format!("bytes {first}-{last}/{size}").parse() {
        response.headers_mut().insert(header::CONTENT_RANGE, value);
    }
    response
}

/// Streams `length` bytes of content of `digest` (a version's or a
/// proposal's, or part of one), with the digest as its ETag.
pub(crate) fn bytes_response(
    length: u64,
    digest: &Digest,
    reader: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
) -> Response {
    let headers = [
        (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
        (header::CONTENT_LENGTH, length.to_string()),
        (header::ETAG, format!("\"{digest}\"")),
    ];
    (
        headers,
        Body::from_stream(ReaderStream::with_capacity(reader, 1 << 20)),
    )
        .into_response()
}

//! The API's error bodies back into the [`Error`] the bundled backend
//! returns, code by code: the one place a client reads a refusal. It must
//! never invent a code the server does not send.

use reqwest::StatusCode;
use serde::Deserialize;

use crate::error::Error;
use crate::model::{BusyFile, Digest, Head, Lease};

/// The API's error body, back into the error the bundled backend returns.
pub(super) async fn error_from(response: reqwest::Response) -> Error {
    #[derive(Deserialize)]
    struct Body {
        error: String,
        message: String,
        path: Option<String>,
        lease: Option<Lease>,
        head: Option<Head>,
        expected: Option<Digest>,
        actual: Option<Digest>,
        limit: Option<u64>,
        busy: Option<Vec<BusyFile>>,
        offset: Option<u64>,
        length: Option<u64>,
        index: Option<u64>,
        size: Option<u64>,
    }
    let status = response.status();
    let body: Body = match response.json().await {
        Ok(body) => body,
        Err(_) => {
            return match status {
                StatusCode::UNAUTHORIZED => {
                    Error::Unauthorized("the server refused the token".into())
                }
                status => Error::Internal(format!(
                    "the server answered {status} without an error body"
                )),
            }
        }
    };
    let message = body.message;
    match (body.error.as_str(), body.head, body.expected, body.actual) {
        ("artifact_busy", ..) if body.busy.is_some() => {
            Error::SomeBusy(body.busy.unwrap_or_default())
        }
        ("artifact_busy", ..) => Error::ArtifactBusy {
            path: body.path.unwrap_or_default(),
            lease: body.lease.map(Box::new),
        },
        ("stale", Some(head), ..) => Error::Stale {
            head: Box::new(head),
        },
        ("proposal_stale", Some(head), ..) => Error::ProposalStale {
            head: Box::new(head),
        },
        ("digest_mismatch", _, Some(expected), Some(actual)) => {
            Error::DigestMismatch { expected, actual }
        }
        ("too_large", ..) => Error::TooLarge {
            limit: body.limit.unwrap_or(0),
        },
        ("wrong_offset", ..) if body.offset.is_some() => Error::WrongOffset {
            offset: body.offset.unwrap_or_default(),
        },
        ("chunk_mismatch", ..) if body.index.is_some() && body.offset.is_some() => {
            Error::ChunkMismatch {
                index: body.index.unwrap_or_default(),
                offset: body.offset.unwrap_or_default(),
            }
        }
        ("upload_incomplete", ..) if body.offset.is_some() && body.length.is_some() => {
            Error::UploadIncomplete {
                offset: body.offset.unwrap_or_default(),
                length: body.length.unwrap_or_default(),
            }
        }
        ("range_not_satisfiable", ..) if body.size.is_some() => Error::RangeNotSatisfiable {
            size: body.size.unwrap_or_default(),
        },
        ("forbidden", ..) => Error::Forbidden(message),
        ("checkout_closed", ..) => Error::CheckoutClosed(message),
        ("not_held", ..) => Error::NotHeld(message),
        ("not_staged", ..) => Error::NotStaged(message),
        ("exists", ..) => Error::Exists(message),
        ("not_found", ..) => Error::NotFound(message),
        ("invite_invalid", ..) => Error::InviteInvalid(message),
        ("too_many", ..) => Error::TooMany(message),
        ("no_preview", ..) => Error::NoPreview(message),
        ("invalid", ..) => Error::Invalid(message),
        ("bad_request", ..) => Error::BadRequest(message),
        ("unauthorized", ..) => Error::Unauthorized(message),
        ("deadline_exceeded", ..) => Error::DeadlineExceeded(message),
        ("storage_full", ..) => Error::StorageFull(message),
        ("unavailable", ..) => Error::Unavailable(message),
        (code, ..) => Error::Internal(format!("the server failed ({code}): {message}")),
    }
}

//! The API's error bodies back into the [`Error`] the bundled backend
//! returns, code by code: the one place a client reads a refusal. It must
//! never invent a code the server does not send; a code it does not know
//! (a newer server's) is the server's failure, said with its message.

use reqwest::StatusCode;
use serde::Deserialize;

use crate::error::{Code, Error};
use crate::model::{BusyFile, Digest, Head, Lease};

/// The API's error body, back into the error the bundled backend returns.
pub(super) async fn error_from(response: reqwest::Response) -> Error {
    let status = response.status();
    match response.json().await {
        Ok(body) => from_body(body),
        Err(_) => match status {
            StatusCode::UNAUTHORIZED => Error::Unauthorized("the server refused the token".into()),
            status => Error::Internal(format!(
                "the server answered {status} without an error body"
            )),
        },
    }
}

/// An error body as `Error::to_body` writes it. The code stays a string
/// until read: one this client does not know must not fail the body.
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

fn from_body(body: Body) -> Error {
    let message = body.message;
    let Ok(code) = body.error.parse::<Code>() else {
        return Error::Internal(format!("the server failed ({}): {message}", body.error));
    };
    match (code, body.head, body.expected, body.actual) {
        (Code::ArtifactBusy, ..) if body.busy.is_some() => {
            Error::SomeBusy(body.busy.unwrap_or_default())
        }
        (Code::ArtifactBusy, ..) => Error::ArtifactBusy {
            path: body.path.unwrap_or_default(),
            lease: body.lease.map(Box::new),
        },
        (Code::Stale, Some(head), ..) => Error::Stale {
            head: Box::new(head),
        },
        (Code::ProposalStale, Some(head), ..) => Error::ProposalStale {
            head: Box::new(head),
        },
        (Code::DigestMismatch, _, Some(expected), Some(actual)) => {
            Error::DigestMismatch { expected, actual }
        }
        (Code::TooLarge, ..) => Error::TooLarge {
            limit: body.limit.unwrap_or(0),
        },
        (Code::WrongOffset, ..) if body.offset.is_some() => Error::WrongOffset {
            offset: body.offset.unwrap_or_default(),
        },
        (Code::ChunkMismatch, ..) if body.index.is_some() && body.offset.is_some() => {
            Error::ChunkMismatch {
                index: body.index.unwrap_or_default(),
                offset: body.offset.unwrap_or_default(),
            }
        }
        (Code::UploadIncomplete, ..) if body.offset.is_some() && body.length.is_some() => {
            Error::UploadIncomplete {
                offset: body.offset.unwrap_or_default(),
                length: body.length.unwrap_or_default(),
            }
        }
        (Code::RangeNotSatisfiable, ..) if body.size.is_some() => Error::RangeNotSatisfiable {
            size: body.size.unwrap_or_default(),
        },
        (Code::Forbidden, ..) => Error::Forbidden(message),
        (Code::CheckoutClosed, ..) => Error::CheckoutClosed(message),
        (Code::NotHeld, ..) => Error::NotHeld(message),
        (Code::NotStaged, ..) => Error::NotStaged(message),
        (Code::Exists, ..) => Error::Exists(message),
        (Code::NotFound, ..) => Error::NotFound(message),
        (Code::InviteInvalid, ..) => Error::InviteInvalid(message),
        (Code::TooMany, ..) => Error::TooMany(message),
        (Code::NoPreview, ..) => Error::NoPreview(message),
        (Code::Invalid, ..) => Error::Invalid(message),
        (Code::BadRequest, ..) => Error::BadRequest(message),
        (Code::Unauthorized, ..) => Error::Unauthorized(message),
        (Code::DeadlineExceeded, ..) => Error::DeadlineExceeded(message),
        (Code::StorageFull, ..) => Error::StorageFull(message),
        (Code::Unavailable, ..) => Error::Unavailable(message),
        // A server's own failure; a method it lacks is this client's
        // mistake; and the client's and the app's own codes never come
        // from a server: each is the server failing, as far as a caller can
        // act on it.
        (code, ..) => Error::Internal(format!("the server failed ({code}): {message}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    /// The errors the server answers with `code`, with every detail their
    /// body carries; none for the codes no server sends. Every code is
    /// named, so a new one is decided here before this builds.
    fn sent_with(code: Code) -> Vec<Error> {
        let head = || {
            Box::new(Head {
                version: 3,
                digest: Digest::from(blake3::hash(b"v3")),
                size: 2,
                author: "user:bob".parse().unwrap(),
                committed_at: chrono::DateTime::from_timestamp_millis(1_700_000_000_000).unwrap(),
                message: Some("crop".into()),
                change_id: None,
            })
        };
        let lease = || Lease {
            holder: "checkout:x:user:bob".into(),
            participant: "user:bob".parse().unwrap(),
            kind: LeaseKind::Checkout,
            checkout_id: None,
            note: Some("print crop".into()),
            acquired_at: chrono::DateTime::from_timestamp_millis(1_700_000_000_000).unwrap(),
            expires_at: chrono::DateTime::from_timestamp_millis(1_700_003_600_000).unwrap(),
        };
        let said = || "what the server said".to_owned();
        match code {
            Code::ArtifactBusy => vec![
                Error::ArtifactBusy {
                    path: "brand/hero.psd".into(),
                    lease: Some(Box::new(lease())),
                },
                Error::ArtifactBusy {
                    path: "brand/hero.psd".into(),
                    lease: None,
                },
                Error::SomeBusy(vec![BusyFile {
                    artifact_id: ArtifactId::new(),
                    path: "brand/hero.psd".parse().unwrap(),
                    lease: lease(),
                }]),
            ],
            Code::Forbidden => vec![Error::Forbidden(said())],
            Code::CheckoutClosed => vec![Error::CheckoutClosed(said())],
            Code::NotHeld => vec![Error::NotHeld(said())],
            Code::NotStaged => vec![Error::NotStaged(said())],
            Code::Stale => vec![Error::Stale { head: head() }],
            Code::ProposalStale => vec![Error::ProposalStale { head: head() }],
            Code::Exists => vec![Error::Exists(said())],
            Code::NotFound => vec![Error::NotFound(said())],
            Code::InviteInvalid => vec![Error::InviteInvalid(said())],
            Code::TooMany => vec![Error::TooMany(said())],
            Code::NoPreview => vec![Error::NoPreview(said())],
            Code::Invalid => vec![Error::Invalid(said())],
            Code::BadRequest => vec![Error::BadRequest(said())],
            Code::DigestMismatch => vec![Error::DigestMismatch {
                expected: Digest::from(blake3::hash(b"sent")),
                actual: Digest::from(blake3::hash(b"came")),
            }],
            Code::Unauthorized => vec![Error::Unauthorized(said())],
            Code::DeadlineExceeded => vec![Error::DeadlineExceeded(said())],
            Code::TooLarge => vec![Error::TooLarge { limit: 1 << 30 }],
            Code::WrongOffset => vec![Error::WrongOffset { offset: 4096 }],
            Code::ChunkMismatch => vec![Error::ChunkMismatch {
                index: 2,
                offset: 8192,
            }],
            Code::UploadIncomplete => vec![Error::UploadIncomplete {
                offset: 10,
                length: 20,
            }],
            Code::RangeNotSatisfiable => vec![Error::RangeNotSatisfiable { size: 5 }],
            Code::StorageFull => vec![Error::StorageFull(said())],
            Code::Unavailable => vec![Error::Unavailable(said())],
            Code::Internal => vec![Error::Internal(said())],
            // The server writes it itself (no `Error` has it): see below.
            Code::MethodNotAllowed => vec![],
            // The client's and the app's own (`Code::sent_by_server`); the
            // test below fails for a code a server sends and this leaves out.
            _ => vec![],
        }
    }

    fn read(body: serde_json::Value) -> Error {
        from_body(serde_json::from_value(body).expect("an error body"))
    }

    #[test]
    fn every_error_a_server_sends_comes_back_as_itself() {
        for &code in Code::ALL {
            let sent = sent_with(code);
            assert_eq!(
                sent.is_empty(),
                !code.sent_by_server() || code == Code::MethodNotAllowed,
                "{code:?}: an example for each code a server sends"
            );
            for error in sent {
                assert_eq!(error.code(), code, "{error:?}");
                let back = read(error.to_body());
                assert_eq!(back.code(), code, "{error:?} came back as {back:?}");
                match error {
                    // Their message wraps a detail of the server's (its log
                    // keeps an internal one): the same variant comes back,
                    // saying what the server said.
                    Error::Internal(_) | Error::StorageFull(_) => {
                        let same = std::mem::discriminant(&back) == std::mem::discriminant(&error);
                        assert!(same, "{error:?} came back as {back:?}");
                        assert!(back.to_string().contains("what the server said"), "{back}");
                    }
                    _ => assert_eq!(back, error),
                }
            }
        }
    }

    #[test]
    fn a_code_no_server_should_send_is_the_servers_failure() {
        for &code in Code::ALL.iter().filter(|c| !c.sent_by_server()) {
            let back = read(serde_json::json!({ "error": code, "message": "odd" }));
            assert_eq!(back.code(), Code::Internal, "{code:?}: {back:?}");
        }
        let back =
            read(serde_json::json!({ "error": Code::MethodNotAllowed, "message": "no PUT" }));
        assert_eq!(back.code(), Code::Internal, "{back:?}");
    }

    #[test]
    fn a_code_from_a_newer_server_is_read_not_refused() {
        let back = read(serde_json::json!({ "error": "brand_new", "message": "Why." }));
        assert_eq!(
            back,
            Error::Internal("the server failed (brand_new): Why.".into()),
            "the code and the message reach the caller"
        );
    }
}

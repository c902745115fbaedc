//! The one list of error codes: what a server writes in an error body, what
//! its clients read back, and what the app hands the window (whose
//! TypeScript type is generated from this one, so the window branches on
//! these names and a misspelt one fails its build). A code is the
//! consumer's to act on; the message is for people.
//!
//! A code is added only when a consumer acts on it: the HTTP API's are
//! `docs/API.md`'s; the client's and the app's own follow them, each marked
//! so, and a server never sends those ([`Code::sent_by_server`]).

use serde::{Deserialize, Serialize};

/// An error's code, as its JSON string (`"artifact_busy"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Code {
    /// Someone else holds the file; the body has its `path` and `lease` (or
    /// null: it ended meanwhile), and `busy` when several were asked for.
    ArtifactBusy,
    Forbidden,
    CheckoutClosed,
    /// Nobody holds the file under a check-out: there is no holder to ask.
    NotHeld,
    /// A check-out of a change has no file staged for it.
    NotStaged,
    /// The head moved since the change's base; the body has the `head`.
    Stale,
    /// The head moved since the proposal was made; the body has the `head`.
    ProposalStale,
    Exists,
    NotFound,
    /// An invite code unknown, used or lapsed: one answer for all three.
    InviteInvalid,
    TooMany,
    NoPreview,
    Invalid,
    BadRequest,
    DigestMismatch,
    Unauthorized,
    DeadlineExceeded,
    TooLarge,
    WrongOffset,
    ChunkMismatch,
    UploadIncomplete,
    RangeNotSatisfiable,
    StorageFull,
    Unavailable,
    Internal,
    /// A method the path does not have (405, with `Allow`).
    MethodNotAllowed,

    /// The client's own: the server's certificate is not the one pinned.
    CertificateChanged,
    /// The client's own: the server's certificate is not trusted.
    CertificateUntrusted,

    /// The app's: no server answered; the view shown is the one kept, and
    /// `since` says when it was read.
    Offline,
    /// The app's: no store is open.
    NoBackend,
    /// The app's: no server address is set, or the store is not a server's.
    NoServer,
    /// The app's: no token for the server.
    NoToken,
    /// The app's: the user cancelled an upload; nothing was stored.
    Cancelled,
    /// The app's: the system's keychain could not be used.
    Keychain,
    /// The app's: the settings file could not be saved.
    Settings,
    /// The app's: the file manager could not show a file; the body has its `path`.
    Reveal,
}

impl Code {
    /// Every code, in the order of the enum.
    pub const ALL: &'static [Code] = &[
        Code::ArtifactBusy,
        Code::Forbidden,
        Code::CheckoutClosed,
        Code::NotHeld,
        Code::NotStaged,
        Code::Stale,
        Code::ProposalStale,
        Code::Exists,
        Code::NotFound,
        Code::InviteInvalid,
        Code::TooMany,
        Code::NoPreview,
        Code::Invalid,
        Code::BadRequest,
        Code::DigestMismatch,
        Code::Unauthorized,
        Code::DeadlineExceeded,
        Code::TooLarge,
        Code::WrongOffset,
        Code::ChunkMismatch,
        Code::UploadIncomplete,
        Code::RangeNotSatisfiable,
        Code::StorageFull,
        Code::Unavailable,
        Code::Internal,
        Code::MethodNotAllowed,
        Code::CertificateChanged,
        Code::CertificateUntrusted,
        Code::Offline,
        Code::NoBackend,
        Code::NoServer,
        Code::NoToken,
        Code::Cancelled,
        Code::Keychain,
        Code::Settings,
        Code::Reveal,
    ];

    /// The code as the JSON string it is on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::ArtifactBusy => "artifact_busy",
            Code::Forbidden => "forbidden",
            Code::CheckoutClosed => "checkout_closed",
            Code::NotHeld => "not_held",
            Code::NotStaged => "not_staged",
            Code::Stale => "stale",
            Code::ProposalStale => "proposal_stale",
            Code::Exists => "exists",
            Code::NotFound => "not_found",
            Code::InviteInvalid => "invite_invalid",
            Code::TooMany => "too_many",
            Code::NoPreview => "no_preview",
            Code::Invalid => "invalid",
            Code::BadRequest => "bad_request",
            Code::DigestMismatch => "digest_mismatch",
            Code::Unauthorized => "unauthorized",
            Code::DeadlineExceeded => "deadline_exceeded",
            Code::TooLarge => "too_large",
            Code::WrongOffset => "wrong_offset",
            Code::ChunkMismatch => "chunk_mismatch",
            Code::UploadIncomplete => "upload_incomplete",
            Code::RangeNotSatisfiable => "range_not_satisfiable",
            Code::StorageFull => "storage_full",
            Code::Unavailable => "unavailable",
            Code::Internal => "internal",
            Code::MethodNotAllowed => "method_not_allowed",
            Code::CertificateChanged => "certificate_changed",
            Code::CertificateUntrusted => "certificate_untrusted",
            Code::Offline => "offline",
            Code::NoBackend => "no_backend",
            Code::NoServer => "no_server",
            Code::NoToken => "no_token",
            Code::Cancelled => "cancelled",
            Code::Keychain => "keychain",
            Code::Settings => "settings",
            Code::Reveal => "reveal",
        }
    }

    /// Whether a server may send it: the API's codes are; the client's and
    /// the app's own never are, so a client takes one from a server as a
    /// server's failure, not as its own refusal.
    pub fn sent_by_server(self) -> bool {
        match self {
            Code::ArtifactBusy
            | Code::Forbidden
            | Code::CheckoutClosed
            | Code::NotHeld
            | Code::NotStaged
            | Code::Stale
            | Code::ProposalStale
            | Code::Exists
            | Code::NotFound
            | Code::InviteInvalid
            | Code::TooMany
            | Code::NoPreview
            | Code::Invalid
            | Code::BadRequest
            | Code::DigestMismatch
            | Code::Unauthorized
            | Code::DeadlineExceeded
            | Code::TooLarge
            | Code::WrongOffset
            | Code::ChunkMismatch
            | Code::UploadIncomplete
            | Code::RangeNotSatisfiable
            | Code::StorageFull
            | Code::Unavailable
            | Code::Internal
            | Code::MethodNotAllowed => true,
            Code::CertificateChanged | Code::CertificateUntrusted => false,
            Code::Offline
            | Code::NoBackend
            | Code::NoServer
            | Code::NoToken
            | Code::Cancelled
            | Code::Keychain
            | Code::Settings
            | Code::Reveal => false,
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A code this build does not know (a newer server's, say): its string.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an error code this version knows")]
pub struct UnknownCode(pub String);

impl std::str::FromStr for Code {
    type Err = UnknownCode;

    fn from_str(text: &str) -> Result<Self, UnknownCode> {
        Code::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == text)
            .ok_or_else(|| UnknownCode(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_rs::TS;

    #[test]
    fn every_code_is_its_json_string_both_ways() {
        for &code in Code::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::json!(code.as_str()), "{code:?} written");
            let read: Code = serde_json::from_value(json).unwrap();
            assert_eq!(read, code, "{code:?} read back");
            assert_eq!(code.as_str().parse::<Code>(), Ok(code), "{code:?} parsed");
            assert_eq!(code.to_string(), code.as_str());
        }
    }

    #[test]
    fn all_lists_every_code_once() {
        // ts-rs reads the enum's variants from the derive: the union it
        // writes for the window is the list of every code there is.
        let union = Code::inline();
        let mut declared: Vec<&str> = union.split(" | ").map(|c| c.trim_matches('"')).collect();
        let mut listed: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(listed.len(), declared.len(), "{union}");
        declared.sort_unstable();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(listed, declared, "Code::ALL against the enum");
    }

    #[test]
    fn an_unknown_code_is_refused_with_its_text_not_a_panic() {
        assert_eq!(
            "brand_new".parse::<Code>(),
            Err(UnknownCode("brand_new".into()))
        );
        assert!(serde_json::from_str::<Code>("\"brand_new\"").is_err());
        assert!(
            "Artifact_Busy".parse::<Code>().is_err(),
            "exact, as on the wire"
        );
    }
}

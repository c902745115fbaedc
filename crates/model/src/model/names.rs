//! Ids and validated names: the UUID ids, `Participant` and `Digest`,
//! each parsed once at the edge and trusted after. Knows no error type but
//! `Invalid`; never depends on `error` or on the API objects.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::Invalid;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
        #[serde(transparent)]
        #[derive(ts_rs::TS)]
        #[ts(export)]
        pub struct $name(pub Uuid);

        impl $name {
            pub fn new() -> Self {
                Self(Uuid::new_v4())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = Invalid;
            fn from_str(s: &str) -> Result<Self, Invalid> {
                Uuid::parse_str(s)
                    .map(Self)
                    .map_err(|_| Invalid(format!("{s:?} is not a UUID")))
            }
        }
    };
}

id_type!(
    /// Names one artifact for its whole life, whatever its path.
    ArtifactId
);
id_type!(
    /// Names one check-out record.
    CheckoutId
);
id_type!(
    /// Names one agent edit; its lease holder is `edit:<id>`.
    EditId
);
id_type!(
    /// Names one proposal.
    ProposalId
);
id_type!(
    /// Names one request to a holder to release a file.
    RequestId
);
id_type!(
    /// Names one change: several files checked in together.
    ChangeId
);
id_type!(
    /// Names one resumable upload (`POST /v1/uploads`).
    UploadId
);
id_type!(
    /// Names one invite, as an admin lists and revokes it (never its code).
    InviteId
);
id_type!(
    /// Names one review thread on a version or a proposal.
    ThreadId
);
id_type!(
    /// Names one comment of a review thread.
    CommentId
);
id_type!(
    /// Names one reviewer's decision on a version or a proposal.
    ReviewId
);

/// Who acts: `user:NAME` or `agent:NAME`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub struct Participant(String);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParticipantKind {
    User,
    Agent,
}

impl Participant {
    pub fn user(name: &str) -> Result<Self, Invalid> {
        format!("user:{name}").parse()
    }

    pub fn agent(name: &str) -> Result<Self, Invalid> {
        format!("agent:{name}").parse()
    }

    pub fn kind(&self) -> ParticipantKind {
        if self.0.starts_with("agent:") {
            ParticipantKind::Agent
        } else {
            ParticipantKind::User
        }
    }

    /// The name without its `user:` or `agent:` prefix.
    pub fn name(&self) -> &str {
        self.0.split_once(':').map_or("", |(_, name)| name)
    }
}

impl FromStr for Participant {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        let name = s
            .strip_prefix("user:")
            .or_else(|| s.strip_prefix("agent:"))
            .ok_or_else(|| Invalid(format!("participant {s:?} must be user:NAME or agent:NAME")))?;
        if !is_plain_name(name) {
            return Err(Invalid(format!(
                "participant name {name:?} must be 1 to 64 letters, digits or . _ - @"
            )));
        }
        Ok(Self(s.to_owned()))
    }
}

string_conversions!(parsed Participant);

/// Whether `name` is 1 to 64 letters, digits or `. _ - @`: a participant's
/// name after its prefix, or a group's.
pub(super) fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b))
}

/// A content digest, `blake3:<64 lowercase hex>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub struct Digest(String);

impl Digest {
    pub fn hex(&self) -> &str {
        &self.0["blake3:".len()..]
    }
}

impl From<blake3::Hash> for Digest {
    fn from(hash: blake3::Hash) -> Self {
        Self(format!("blake3:{}", hash.to_hex()))
    }
}

impl FromStr for Digest {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        let hex = s.strip_prefix("blake3:").unwrap_or("");
        if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(Self(s.to_owned()))
        } else {
            Err(Invalid(format!(
                "digest {s:?} must be blake3: and 64 lowercase hex digits"
            )))
        }
    }
}

string_conversions!(parsed Digest);

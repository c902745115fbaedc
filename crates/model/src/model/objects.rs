//! The API's objects (`Artifact`, `Head`, `Lease`, `Checkout`, `Proposal`,
//! `Edit`, `Event`...), shaped as `docs/API.md` says so the server
//! serializes them as they are, and the limits on what they carry. Plain
//! data: no rule here reads a store, and no error type but `Invalid`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::{
    Access, ArtifactId, ChangeId, CheckoutId, DeviceRef, Digest, EditId, Invalid, Participant,
    ProposalId, RepoPath, Request, Timestamp, MAX_TTL_SECONDS,
};

/// One committed version; an artifact's head is its newest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Head {
    #[ts(type = "number")]
    pub version: u64,
    pub digest: Digest,
    #[ts(type = "number")]
    pub size: u64,
    pub author: Participant,
    pub committed_at: DateTime<Utc>,
    /// The description given with the upload.
    #[serde(default)]
    pub message: Option<String>,
    /// The change it came in, if it came with other files.
    #[serde(default)]
    pub change_id: Option<ChangeId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum LeaseKind {
    Checkout,
    Edit,
}

/// The one live write lease an artifact may have.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Lease {
    /// `checkout:<id>:<participant>` or `edit:<id>`.
    pub holder: String,
    pub participant: Participant,
    pub kind: LeaseKind,
    pub checkout_id: Option<CheckoutId>,
    pub note: Option<String>,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Lease {
    pub fn checkout_holder(id: CheckoutId, participant: &Participant) -> String {
        format!("checkout:{id}:{participant}")
    }

    pub fn edit_holder(id: EditId) -> String {
        format!("edit:{id}")
    }

    pub fn is_live(&self, now: Timestamp) -> bool {
        self.expires_at > now
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Artifact {
    pub id: ArtifactId,
    pub path: RepoPath,
    pub head: Head,
    /// The live lease; a lapsed, released or broken one is not shown.
    pub lease: Option<Lease>,
    /// What the caller may do with it (folder permissions).
    #[serde(default)]
    pub access: Access,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum CheckoutState {
    Open,
    Closed,
}

/// Who broke a check-out's lease, and why. Its holder's check-in becomes a proposal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Broken {
    pub by: Participant,
    pub reason: String,
    pub at: DateTime<Utc>,
}

/// A person's hold on a file, from check-out to check-in or cancel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Checkout {
    pub id: CheckoutId,
    pub artifact_id: ArtifactId,
    pub path: RepoPath,
    /// The version and digest checked out: every check-in's base.
    #[ts(type = "number")]
    pub version: u64,
    pub digest: Digest,
    pub actor: Participant,
    pub holder: String,
    pub note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub state: CheckoutState,
    pub result: Option<CheckinResult>,
    /// Set when an admin broke this check-out's lease.
    pub broken: Option<Broken>,
    /// The change that closed it, if it was checked in with other files.
    #[serde(default)]
    pub change_id: Option<ChangeId>,
    /// The device it was made on: on a server, the device of the token that
    /// made it; none on the bundled store, and for check-outs made before
    /// devices were recorded (`docs/API-additions.md`).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub device: Option<DeviceRef>,
}

/// What a check-in or an edit's commit did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "outcome", rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum CheckinResult {
    Committed {
        #[ts(type = "number")]
        version: u64,
        digest: Digest,
    },
    Unchanged {
        #[ts(type = "number")]
        version: u64,
        digest: Digest,
    },
    Proposal {
        proposal: Proposal,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum ProposalState {
    Open,
    Accepted,
    Rejected,
    Superseded,
}

/// The version a stale change was made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Provenance {
    #[ts(type = "number")]
    pub version: u64,
    pub digest: Digest,
}

/// A stale check-in, kept against the head for review.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Proposal {
    pub id: ProposalId,
    pub artifact_id: ArtifactId,
    /// The head it was made against; accept requires the head's digest to still be `test_digest`.
    #[ts(type = "number")]
    pub base_version: u64,
    pub test_digest: Digest,
    pub provenance: Provenance,
    pub digest: Digest,
    #[ts(type = "number")]
    pub size: u64,
    pub author: Participant,
    pub checkout_id: Option<CheckoutId>,
    pub state: ProposalState,
    pub created_at: DateTime<Utc>,
    /// The description given with the upload.
    #[serde(default)]
    pub message: Option<String>,
    /// The change it was kept for: its proposals are decided together.
    #[serde(default)]
    pub change_id: Option<ChangeId>,
}

/// An agent's short hold on a file, for one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Edit {
    pub id: EditId,
    pub artifact_id: ArtifactId,
    pub holder: String,
    pub participant: Participant,
    pub base_version: u64,
    pub base_digest: Digest,
    pub expires_at: DateTime<Utc>,
}

/// One fact on the append-only ledger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Event {
    #[ts(type = "number")]
    pub seq: u64,
    pub id: Uuid,
    #[serde(rename = "type")]
    pub kind: String,
    pub artifact_id: Option<ArtifactId>,
    pub participant: Option<Participant>,
    pub holder: Option<String>,
    pub at: DateTime<Utc>,
    #[schema(value_type = Object)]
    #[ts(type = "Record<string, unknown>")]
    pub data: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct EventPage {
    pub events: Vec<Event>,
    /// Ask for events after this sequence number next time.
    #[ts(type = "number")]
    pub next: u64,
}

/// The body of a list request: one field holding the list, as API.md names it.
macro_rules! list {
    ($(#[$doc:meta])* $name:ident { $field:ident: $item:ty }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
        pub struct $name {
            pub $field: Vec<$item>,
        }
    };
}

list!(
    /// `GET /v1/artifacts`.
    ArtifactList { artifacts: Artifact }
);
list!(
    /// `GET /v1/artifacts/{id}/versions`, newest first.
    VersionList { versions: Head }
);
list!(
    /// `GET /v1/checkouts`.
    CheckoutList { checkouts: Checkout }
);
list!(
    /// `GET /v1/proposals`.
    ProposalList { proposals: Proposal }
);
list!(
    /// `GET /v1/requests`: those to the caller and those from the caller.
    RequestList { requests: Request }
);

/// Body of `POST /v1/artifacts/{id}/checkouts`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Which proposals to list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ProposalFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ProposalState>,
}

/// A participant known to the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Account {
    pub participant: Participant,
    pub admin: bool,
    pub created_at: DateTime<Utc>,
}
/// The longest description of a version or a proposal, in bytes of UTF-8.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// Checks a version's description: at most [`MAX_MESSAGE_BYTES`]; an empty
/// one is none.
pub fn check_message(message: Option<String>) -> Result<Option<String>, Invalid> {
    match message {
        Some(m) if m.len() > MAX_MESSAGE_BYTES => Err(Invalid(format!(
            "the description is {} bytes long, over the limit of {MAX_MESSAGE_BYTES}: nothing was stored",
            m.len()
        ))),
        Some(m) if m.is_empty() => Ok(None),
        other => Ok(other),
    }
}

/// What a preview is of: a version (the head when `version` is `None`) or a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreviewOf {
    Version {
        artifact: ArtifactId,
        version: Option<u64>,
    },
    Proposal(ProposalId),
}

/// Which events to read: those after `after` oldest first, or those before
/// `before` newest first (not both), of one artifact or all, at most `limit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventQuery {
    pub artifact: Option<ArtifactId>,
    pub after: Option<u64>,
    pub before: Option<u64>,
    pub limit: u32,
}

/// Checks a requested lease length and applies the default.
pub fn lease_seconds(requested: Option<u64>, default: u64) -> Result<u64, Invalid> {
    match requested.unwrap_or(default) {
        s @ 1..=MAX_TTL_SECONDS => Ok(s),
        s => Err(Invalid(format!(
            "ttl_seconds {s} is out of range: use 1 to {MAX_TTL_SECONDS}"
        ))),
    }
}

//! Changes of several files: check-outs taken together (all or none), their
//! files staged one by one, then checked in as one change that commits
//! every file or keeps every changed file as a proposal of the change.

use std::collections::HashSet;
use std::hash::Hash;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    ArtifactId, ChangeId, CheckinResult, CheckoutId, Digest, Invalid, Lease, Participant, RepoPath,
};

/// The most files one multi-file check-out or one change takes.
pub const MAX_CHANGE_FILES: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum ChangeOutcome {
    /// Every changed file committed a version.
    Committed,
    /// Some file was stale: every changed file was kept as a proposal.
    Proposal,
}

/// One file of a change, with what its check-in did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct ChangeFile {
    pub artifact_id: ArtifactId,
    pub path: RepoPath,
    pub checkout_id: CheckoutId,
    pub result: CheckinResult,
}

/// Several files checked in as one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Change {
    pub id: ChangeId,
    pub message: Option<String>,
    pub author: Participant,
    pub created_at: DateTime<Utc>,
    pub outcome: ChangeOutcome,
    /// In the order the check-outs were given.
    pub files: Vec<ChangeFile>,
}

/// Body of `POST /v1/checkouts`: several files checked out together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutsRequest {
    pub artifact_ids: Vec<ArtifactId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Body of `POST /v1/changes`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeRequest {
    pub checkouts: Vec<CheckoutId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What `POST /v1/checkouts/{id}/stage` kept for the check-out's next change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct StagedFile {
    pub digest: Digest,
    #[ts(type = "number")]
    pub size: u64,
}

/// One file a multi-file check-out found held by someone else.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct BusyFile {
    pub artifact_id: ArtifactId,
    pub path: RepoPath,
    pub lease: Lease,
}

/// Checks the ids a multi-file check-out or a change names: 1 to
/// [`MAX_CHANGE_FILES`], none twice. `what` names them ("files", "check-outs").
pub fn check_distinct<T: Eq + Hash + std::fmt::Display>(
    ids: &[T],
    what: &str,
) -> Result<(), Invalid> {
    if ids.is_empty() || ids.len() > MAX_CHANGE_FILES {
        return Err(Invalid(format!(
            "name 1 to {MAX_CHANGE_FILES} {what}, not {}",
            ids.len()
        )));
    }
    let mut seen = HashSet::with_capacity(ids.len());
    match ids.iter().find(|id| !seen.insert(*id)) {
        Some(twice) => Err(Invalid(format!(
            "{twice} is named twice: name each of the {what} once"
        ))),
        None => Ok(()),
    }
}

//! The nouns of resumable, chunked transfers (`docs/API-transfers.md`): what
//! an upload is for, and how far it has come.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{CheckoutId, Digest, EditId, RepoPath, UploadId};

/// What a resumable upload's bytes will be used for, fixed when it begins:
/// a check-in or a stage of a check-out, an edit's commit, or an import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UploadFor {
    Checkout(CheckoutId),
    Edit(EditId),
    Import(RepoPath),
}

/// A resumable upload, as `POST`, `GET` and `PATCH /v1/uploads/{id}` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct UploadState {
    pub id: UploadId,
    /// The whole file's size and digest, checked before anything commits.
    #[ts(type = "number")]
    pub size: u64,
    pub digest: Digest,
    /// The chunks to send, as runs of their positions in the list
    /// (`[first, end)`), in order; each distinct chunk once. Their bytes one
    /// after another are the upload's bytes. Empty for an upload begun
    /// without a list, whose bytes are the whole file.
    #[ts(type = "Array<[number, number]>")]
    pub send: Vec<(u64, u64)>,
    /// How many bytes the upload takes in all: the sizes of `send`'s chunks.
    #[ts(type = "number")]
    pub length: u64,
    /// How many of them the server has: the next append starts here.
    #[ts(type = "number")]
    pub offset: u64,
    /// Unfinished after this, it is removed (sooner if its check-out or
    /// edit closes).
    pub expires_at: DateTime<Utc>,
    /// In the answer to a begin without a chunk list: the bytes of the
    /// blobs a list would have been matched against (0 for an import), so
    /// a client knows whether cutting its file into chunks could pay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "number", optional)]
    pub known: Option<u64>,
}

impl UploadState {
    pub fn is_complete(&self) -> bool {
        self.offset == self.length
    }
}

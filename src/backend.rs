//! The one trait every operation goes through, bundled or remote. A backend
//! value acts as one participant (the bundled one is told which; the remote one
//! is whoever its token names).

use std::path::PathBuf;
use std::pin::Pin;

use async_trait::async_trait;
use tokio::io::AsyncRead;

use crate::error::Result;
use crate::model::*;

/// Bytes to store: a local file (read in large blocking chunks, the fast path)
/// or any stream. `digest`, when given, must match or nothing is stored.
pub struct Upload {
    pub source: UploadSource,
    pub digest: Option<Digest>,
}

pub enum UploadSource {
    File(PathBuf),
    Stream(Pin<Box<dyn AsyncRead + Send>>),
}

impl Upload {
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self {
            source: UploadSource::File(path.into()),
            digest: None,
        }
    }

    pub fn stream(reader: impl AsyncRead + Send + 'static) -> Self {
        Self {
            source: UploadSource::Stream(Box::pin(reader)),
            digest: None,
        }
    }

    /// Declares the upload's digest: a mismatch fails with `DigestMismatch`.
    pub fn with_digest(mut self, digest: Digest) -> Self {
        self.digest = Some(digest);
        self
    }
}

/// A version's bytes, as a stream.
pub struct Content {
    pub head: Head,
    pub reader: Pin<Box<dyn AsyncRead + Send>>,
}

#[async_trait]
pub trait Backend: Send + Sync {
    /// The participant this backend acts as.
    async fn me(&self) -> Result<Participant>;

    /// Stores a new artifact at `path` as its version 1.
    async fn import(&self, path: &RepoPath, upload: Upload) -> Result<Artifact>;
    async fn artifacts(&self) -> Result<Vec<Artifact>>;
    async fn artifact(&self, id: ArtifactId) -> Result<Artifact>;
    async fn artifact_by_path(&self, path: &RepoPath) -> Result<Artifact>;
    /// Versions, newest first.
    async fn versions(&self, id: ArtifactId) -> Result<Vec<Head>>;
    /// A version's bytes (the head's when `version` is `None`).
    async fn content(&self, id: ArtifactId, version: Option<u64>) -> Result<Content>;

    async fn check_out(&self, id: ArtifactId, request: CheckoutRequest) -> Result<Checkout>;
    async fn checkout(&self, id: CheckoutId) -> Result<Checkout>;
    /// The caller's own check-outs, newest first; only open ones if `open_only`.
    async fn checkouts(&self, open_only: bool) -> Result<Vec<Checkout>>;
    async fn extend(&self, id: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout>;
    async fn check_in(&self, id: CheckoutId, upload: Upload) -> Result<Checkout>;
    async fn cancel(&self, id: CheckoutId) -> Result<Checkout>;

    async fn begin_edit(&self, id: ArtifactId, ttl_seconds: Option<u64>) -> Result<Edit>;
    async fn commit_edit(&self, id: EditId, upload: Upload) -> Result<CheckinResult>;
    async fn release_edit(&self, id: EditId) -> Result<()>;

    async fn proposals(&self, filter: ProposalFilter) -> Result<Vec<Proposal>>;
    async fn accept_proposal(&self, id: ProposalId) -> Result<Proposal>;
    async fn rebuild_proposal(&self, id: ProposalId) -> Result<Proposal>;
    async fn reject_proposal(&self, id: ProposalId) -> Result<Proposal>;

    /// Ends someone's lease (admins only); `reason` is shown to them.
    async fn break_lease(&self, id: ArtifactId, reason: &str) -> Result<Artifact>;

    /// Events with a sequence number above `after`, oldest first, at most `limit`.
    async fn events(&self, after: u64, limit: u32) -> Result<EventPage>;
}

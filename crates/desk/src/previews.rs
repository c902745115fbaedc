//! Previews as PNG files in the cache: a version's or a proposal's, asked of
//! the backend once per (digest, size), and your local copy's, made here by
//! the same reader. An image is never filed under another's digest.

use std::collections::HashMap;
use std::path::PathBuf;

use super::offline::is_unreachable;
use super::Desk;
use crate::error::{Error, Result};
use crate::model::*;

/// Digests of versions and proposals already asked for (they never change).
#[derive(Default)]
pub(super) struct KnownDigests {
    versions: HashMap<(ArtifactId, u64), Digest>,
    proposals: HashMap<ProposalId, Digest>,
}

impl Desk {
    /// A version's or a proposal's preview as a PNG file in the cache: the
    /// backend is asked once per (digest, size), then the file is served (a
    /// "no preview" answer is kept too). The head is resolved to its number
    /// first, so a commit meanwhile cannot file one image under another's digest.
    pub async fn preview(&self, of: PreviewOf, size: u32) -> Result<PathBuf> {
        let size = leasedesk_blobs::previews::check_size(size)?;
        let (of, digest) = match of {
            PreviewOf::Version {
                artifact,
                version: None,
            } => {
                let head = self.backend.artifact(artifact).await?.head;
                let of = PreviewOf::Version {
                    artifact,
                    version: Some(head.version),
                };
                (of, head.digest)
            }
            PreviewOf::Version {
                artifact,
                version: Some(version),
            } => (of, self.digest_of_version(artifact, version).await?),
            PreviewOf::Proposal(id) => (of, self.digest_of_proposal(id).await?),
        };
        self.previews
            .get_or_make(&digest, size, || self.backend.preview(of, size))
            .await
    }

    /// A version's digest: versions never change, so each is asked once.
    async fn digest_of_version(&self, artifact: ArtifactId, version: u64) -> Result<Digest> {
        let key = (artifact, version);
        if let Some(known) = self.lock_digests().versions.get(&key) {
            return Ok(known.clone());
        }
        let artifact = self.backend.artifact(artifact).await?;
        let head = self.version_of(&artifact, version).await?;
        self.lock_digests()
            .versions
            .insert(key, head.digest.clone());
        Ok(head.digest)
    }

    /// A proposal's digest, asked once (a proposal's bytes never change).
    async fn digest_of_proposal(&self, id: ProposalId) -> Result<Digest> {
        if let Some(known) = self.lock_digests().proposals.get(&id) {
            return Ok(known.clone());
        }
        let digest = self.backend.proposal(id).await?.digest;
        self.lock_digests().proposals.insert(id, digest.clone());
        Ok(digest)
    }

    fn lock_digests(&self) -> std::sync::MutexGuard<'_, KnownDigests> {
        self.digests.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The preview of your local copy as it is now (a modified copy shows
    /// what you are about to check in), made here by the same core reader as
    /// the backend's, keyed by the copy's digest.
    pub async fn local_preview(&self, artifact: ArtifactId, size: u32) -> Result<PathBuf> {
        let size = leasedesk_blobs::previews::check_size(size)?;
        // Your copy is here whether or not the server answers.
        let artifact = match self.backend.artifact(artifact).await {
            Err(e) if is_unreachable(&e) => {
                let seen = self.seen_row_parts(artifact);
                seen.map(|(artifact, _)| artifact).ok_or(e)?
            }
            fetched => fetched?,
        };
        let local = self.workspace.local_path(&artifact.path)?;
        // A save between hashing and reading would file one image under the
        // other's digest: the digest is taken again after, and must not move.
        for _ in 0..3 {
            let Some(digest) = self.local_digest(&artifact.path).await? else {
                return Err(Error::NotFound(format!(
                    "{} is not on this computer",
                    artifact.path.file_name()
                )));
            };
            let mut moved = false;
            let (moved_meanwhile, path, hashed, from) =
                (&mut moved, &artifact.path, &digest, local.clone());
            let made = self
                .previews
                .get_or_make(&digest, size, || async move {
                    let png = self.previews.decode(from, size).await;
                    if self.local_digest(path).await?.as_ref() != Some(hashed) {
                        *moved_meanwhile = true;
                        return Err(Error::Unavailable("the copy changed meanwhile".into()));
                    }
                    png
                })
                .await;
            if !moved {
                return made;
            }
        }
        Err(Error::Unavailable(format!(
            "{} keeps changing: its preview will come once it is saved",
            artifact.path.file_name()
        )))
    }

    async fn local_digest(&self, path: &RepoPath) -> Result<Option<Digest>> {
        let (workspace, path) = (self.workspace.clone(), path.clone());
        tokio::task::spawn_blocking(move || workspace.digest(&path))
            .await
            .map_err(|e| Error::Internal(format!("hashing task: {e}")))?
    }
}

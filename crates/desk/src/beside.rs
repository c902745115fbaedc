//! What opens beside your copy to compare with the head: a proposal's
//! bytes (your own backup when it has them), an older version as a
//! read-only copy; and the decision on a proposal. It never writes over
//! your copy or any existing file.

use std::path::PathBuf;

use super::offline::Action;
use super::Desk;
use crate::error::{Error, Result};
use crate::model::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum Decision {
    Accept,
    Rebuild,
    Reject,
}

impl Desk {
    /// The proposal's bytes as a file beside the local copy, to open next to
    /// the head: your own backup when it has those bytes, else downloaded
    /// (read-only), from either backend.
    pub async fn proposal_file(
        &self,
        artifact: ArtifactId,
        proposal: ProposalId,
    ) -> Result<PathBuf> {
        let outcome = async {
            let (artifact, proposals) = tokio::try_join!(
                self.backend.artifact(artifact),
                self.backend.proposals(ProposalFilter {
                    artifact: Some(artifact),
                    state: None,
                })
            )?;
            let wanted = proposals
                .into_iter()
                .find(|p| p.id == proposal)
                .ok_or_else(|| {
                    Error::NotFound(format!("no proposal {proposal} for {}", artifact.path))
                })?;
            // Its file would go beside a copy that cannot be placed here.
            self.workspace.local_path(&artifact.path)?;
            let (workspace, path, digest) = (
                self.workspace.clone(),
                artifact.path.clone(),
                wanted.digest.clone(),
            );
            let size = wanted.size;
            let beside =
                tokio::task::spawn_blocking(move || workspace.find_beside(&path, &digest, size))
                    .await
                    .map_err(|e| Error::Internal(format!("looking for the file: {e}")))?;
            if let Some(found) = beside {
                return Ok(found);
            }
            let (proposal, reader) = self.backend.proposal_content(proposal).await?;
            self.workspace
                .save_proposal(&artifact.path, &proposal, reader)
                .await
        }
        .await;
        self.refused_offline(Action::Read, outcome)
    }

    /// Version `version` of a file as a read-only copy beside your local
    /// copy, to open next to it: `hero (v3).psd` (digest-checked; an existing
    /// name is never written over: `hero (v3) 2.psd`). A copy of that version
    /// already there under such a name is given again.
    pub async fn open_copy(&self, artifact: ArtifactId, version: u64) -> Result<PathBuf> {
        let outcome = async {
            let artifact = self.backend.artifact(artifact).await?;
            // A path that cannot be placed here has nowhere to put a copy beside.
            self.workspace.local_path(&artifact.path)?;
            let head = self.version_of(&artifact, version).await?;
            let (workspace, path, wanted) =
                (self.workspace.clone(), artifact.path.clone(), head.clone());
            let found =
                tokio::task::spawn_blocking(move || workspace.find_version_copy(&path, &wanted))
                    .await
                    .map_err(|e| Error::Internal(format!("looking for the copy: {e}")))?;
            if let Some(found) = found {
                return Ok(found);
            }
            let content = self.backend.content(artifact.id, Some(version)).await?;
            self.workspace
                .save_version_copy(&artifact.path, content)
                .await
        }
        .await;
        self.refused_offline(Action::Read, outcome)
    }

    pub async fn decide(&self, proposal: ProposalId, decision: Decision) -> Result<Proposal> {
        let outcome = async {
            match decision {
                Decision::Accept => self.backend.accept_proposal(proposal).await,
                Decision::Rebuild => self.backend.rebuild_proposal(proposal).await,
                Decision::Reject => self.backend.reject_proposal(proposal).await,
            }
        }
        .await;
        self.refused_offline(Action::Decide, outcome)
    }
}

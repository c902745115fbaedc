//! The user's lease actions on a file, each through the workspace so the
//! copy follows the lease: check out, extend, check in, cancel, get a copy,
//! get latest, add, restore a version, and the check-in's drafted
//! description. Offline, each is refused with what to do; none is queued.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::offline::Action;
use super::Desk;
use crate::backend::{Progress, Watch};
use crate::error::{Error, Result};
use crate::model::*;
use crate::workspace::{CheckedOut, Closed};

/// What a restore did: where your changes went (none when the copy had none).
#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Restored {
    pub checkout: CheckoutId,
    #[ts(type = "number")]
    pub version: u64,
    pub backup: Option<PathBuf>,
    /// The next check-in's description, prefilled: "Restored version N".
    pub draft: String,
}

impl Desk {
    pub async fn check_out(
        &self,
        artifact: ArtifactId,
        request: CheckoutRequest,
        progress: Option<Progress>,
    ) -> Result<CheckedOut> {
        let outcome = async {
            self.workspace
                .check_out(self.backend.as_ref(), artifact, request, progress)
                .await
        }
        .await;
        self.refused_offline(Action::CheckOut, outcome)
    }

    /// Checks out several files together: every one, or none.
    pub async fn check_out_many(&self, request: CheckoutsRequest) -> Result<Vec<CheckedOut>> {
        let outcome = async {
            self.workspace
                .check_out_many(self.backend.as_ref(), request)
                .await
        }
        .await;
        self.refused_offline(Action::CheckOut, outcome)
    }

    /// Checks in your copies of several open check-outs (as the caller
    /// last read them) as one change described by `message`; `cancel` stops
    /// it until the commit begins, leaving every file as it was.
    pub async fn check_in_change(
        &self,
        checkouts: &[Checkout],
        message: Option<String>,
        watch: Watch,
    ) -> Result<(Change, Vec<Closed>)> {
        let outcome = async {
            let (change, closed) = self
                .workspace
                .check_in_change(self.backend.as_ref(), checkouts, message, watch)
                .await?;
            let closed = closed
                .into_iter()
                .map(|c| self.forget_draft(c))
                .collect::<Result<Vec<_>>>()?;
            Ok((change, closed))
        }
        .await;
        self.refused_offline(Action::CheckIn, outcome)
    }

    pub async fn extend(&self, checkout: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout> {
        let outcome = async { self.backend.extend(checkout, ttl_seconds).await }.await;
        self.refused_offline(Action::Extend, outcome)
    }

    /// Checks in your copy with `message` as the version's description
    /// (none when blank); the check-out's drafted description goes with it.
    pub async fn check_in(
        &self,
        checkout: CheckoutId,
        message: Option<String>,
        watch: Watch,
    ) -> Result<Closed> {
        let outcome = async {
            let checkout = self.backend.checkout(checkout).await?;
            let message = message.filter(|m| !m.trim().is_empty());
            let closed = self
                .workspace
                .check_in_described(self.backend.as_ref(), &checkout, message, watch)
                .await?;
            self.forget_draft(closed)
        }
        .await;
        self.refused_offline(Action::CheckIn, outcome)
    }

    pub async fn cancel(&self, checkout: CheckoutId) -> Result<Closed> {
        let outcome = async {
            let checkout = self.backend.checkout(checkout).await?;
            let closed = self
                .workspace
                .cancel(self.backend.as_ref(), &checkout)
                .await?;
            self.forget_draft(closed)
        }
        .await;
        self.refused_offline(Action::CancelCheckout, outcome)
    }

    /// Brings your checked-out version here as your copy to edit, when the
    /// check-out was made elsewhere (or the copy is gone). The lease is not touched.
    pub async fn get_copy(
        &self,
        checkout: CheckoutId,
        progress: Option<Progress>,
    ) -> Result<CheckedOut> {
        let outcome = async {
            let checkout = self.backend.checkout(checkout).await?;
            if checkout.state != CheckoutState::Open {
                return Err(Error::CheckoutClosed(format!(
                    "your check-out of {} has ended: check the file out again to edit it",
                    checkout.path
                )));
            }
            self.workspace
                .get_copy(self.backend.as_ref(), checkout, progress)
                .await
        }
        .await;
        self.refused_offline(Action::GetCopy, outcome)
    }

    /// "Get latest" for a file you do not hold.
    pub async fn update(&self, artifact: ArtifactId) -> Result<Option<PathBuf>> {
        let outcome = async {
            let artifact = self.backend.artifact(artifact).await?;
            self.workspace
                .update(self.backend.as_ref(), &artifact)
                .await
        }
        .await;
        self.refused_offline(Action::Update, outcome)
    }

    /// Adds a file at `folder/<its name>` (or at the top if `folder` is empty).
    pub async fn add(&self, source: &Path, folder: &str) -> Result<Artifact> {
        let outcome = async {
            let name = source.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                Error::Invalid(format!("{} has no usable name", source.display()))
            })?;
            let folder = folder.trim_matches('/');
            let path: RepoPath = if folder.is_empty() {
                name.parse()?
            } else {
                format!("{folder}/{name}").parse()?
            };
            self.workspace
                .add(self.backend.as_ref(), source, &path)
                .await
        }
        .await;
        self.refused_offline(Action::Add, outcome)
    }

    pub(super) async fn version_of(&self, artifact: &Artifact, version: u64) -> Result<Head> {
        if version == artifact.head.version {
            return Ok(artifact.head.clone());
        }
        self.backend
            .versions(artifact.id)
            .await?
            .into_iter()
            .find(|head| head.version == version)
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "{} has no version {version} (its newest is {})",
                    artifact.path, artifact.head.version
                ))
            })
    }

    /// Your open check-out of the file (the newest, after a lapse), if any.
    async fn my_open_checkout(&self, artifact: ArtifactId) -> Result<Option<Checkout>> {
        Ok(self
            .backend
            .checkouts(true)
            .await?
            .into_iter()
            .filter(|c| c.artifact_id == artifact)
            .max_by_key(|c| c.created_at))
    }

    /// Puts version `version`'s bytes into your copy of a file you hold,
    /// keeping your changes as a backup beside it, and drafts "Restored
    /// version N" as the next check-in's description (kept across restarts).
    /// Refused unless you hold the file's check-out: nothing changes then.
    pub async fn restore(&self, artifact: ArtifactId, version: u64) -> Result<Restored> {
        let outcome = async {
            let (artifact, mine) = tokio::try_join!(
                self.backend.artifact(artifact),
                self.my_open_checkout(artifact)
            )?;
            let Some(checkout) = mine else {
                return Err(Error::Forbidden(format!(
                    "you do not hold {}, so nothing was restored: check it out first, then restore version {version} into your copy",
                    artifact.path.file_name()
                )));
            };
            let head = self.version_of(&artifact, version).await?;
            let backup = self
                .workspace
                .restore_version(self.backend.as_ref(), &checkout, &head)
                .await?;
            let draft = format!("Restored version {version}");
            self.workspace.set_draft(checkout.id, Some(&draft))?;
            Ok(Restored {
                checkout: checkout.id,
                version,
                backup,
                draft,
            })
        }
        .await;
        self.refused_offline(Action::Restore, outcome)
    }

    /// The description to prefill the check-in with: the drafted one (a
    /// restore's), else the check-out's note, else nothing.
    pub async fn checkin_draft(&self, checkout: CheckoutId) -> Result<String> {
        if let Some(draft) = self.workspace.draft(checkout)? {
            return Ok(draft);
        }
        Ok(self
            .backend
            .checkout(checkout)
            .await?
            .note
            .unwrap_or_default())
    }

    /// A check-out closed here (checked in or cancelled) needs no draft any more.
    fn forget_draft(&self, closed: Closed) -> Result<Closed> {
        self.workspace.set_draft(closed.checkout.id, None)?;
        Ok(closed)
    }
}

//! An agent's edit as one call: take an edit lease, do the work under a
//! deadline, commit what it made, and release the lease however it ended.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::{AbortHandle, JoinHandle};

use crate::error::{Error, Result};
use crate::model::{ArtifactId, CheckinResult, Edit, EditId, MAX_TTL_SECONDS};
use crate::{Backend, Upload};

/// How long an agent's command may run.
pub const EDIT_DEADLINE: Duration = Duration::from_secs(30);

/// What the edit's lease adds to the deadline, for the commit.
const COMMIT_ALLOWANCE: Duration = Duration::from_secs(15);

/// Runs `work` on a fresh edit of `artifact` and commits the upload it returns.
/// The lease is released on success, error, panic (which then continues),
/// timeout, and when this call itself is dropped, even while the lease is
/// being taken. A busy file is refused with `ArtifactBusy`: plan again.
pub async fn run_edit<F, Fut>(
    backend: Arc<dyn Backend>,
    artifact: ArtifactId,
    deadline: Duration,
    work: F,
) -> Result<CheckinResult>
where
    F: FnOnce(Edit) -> Fut,
    Fut: Future<Output = Result<Upload>> + Send + 'static,
{
    let lease_seconds = (deadline + COMMIT_ALLOWANCE).as_secs().min(MAX_TTL_SECONDS);
    let begin = tokio::spawn({
        let backend = backend.clone();
        async move { backend.begin_edit(artifact, Some(lease_seconds)).await }
    });
    let mut guard = EditGuard {
        backend: backend.clone(),
        begin: Some(begin),
        edit: None,
        work: None,
    };
    let edit = guard.begun().await?;
    // Spawned, so a panic in the work is caught here and a timeout can stop it.
    let task = tokio::spawn(work(edit.clone()));
    guard.work = Some(task.abort_handle());
    let outcome = match tokio::time::timeout(deadline, task).await {
        Err(_) => Err(Error::DeadlineExceeded(format!(
            "the edit's work ran longer than {} s and was stopped; nothing was committed",
            deadline.as_secs_f64()
        ))),
        Ok(Err(join)) if join.is_panic() => {
            // The panic goes on whatever the release says.
            let _ = guard.release().await;
            std::panic::resume_unwind(join.into_panic());
        }
        Ok(Err(join)) => Err(Error::Internal(format!("edit task: {join}"))),
        Ok(Ok(Err(e))) => Err(e),
        Ok(Ok(Ok(upload))) => backend.commit_edit(edit.id, upload).await,
    };
    // A commit released the lease already; releasing again is a no-op.
    let released = guard.release().await;
    let result = outcome?;
    released?;
    Ok(result)
}

/// Owns an edit from the moment its lease is asked for: stops the work and
/// releases the lease if `run_edit` ends before releasing it itself.
struct EditGuard {
    backend: Arc<dyn Backend>,
    /// The lease being taken, until it is.
    begin: Option<JoinHandle<Result<Edit>>>,
    edit: Option<EditId>,
    work: Option<AbortHandle>,
}

impl EditGuard {
    async fn begun(&mut self) -> Result<Edit> {
        let begin = self.begin.as_mut().expect("begun once");
        let outcome = begin.await;
        self.begin = None;
        match outcome {
            Ok(Ok(edit)) => {
                self.edit = Some(edit.id);
                Ok(edit)
            }
            Ok(Err(refused)) => Err(refused),
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            Err(join) => Err(Error::Internal(format!("edit begin: {join}"))),
        }
    }

    async fn release(&mut self) -> Result<()> {
        if let Some(work) = self.work.take() {
            work.abort();
        }
        match self.edit.take() {
            Some(id) => self.backend.release_edit(id).await,
            None => Ok(()),
        }
    }
}

impl Drop for EditGuard {
    fn drop(&mut self) {
        if let Some(work) = self.work.take() {
            work.abort();
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // no runtime left: the lease lapses on its own
        };
        let backend = self.backend.clone();
        if let Some(begin) = self.begin.take() {
            runtime.spawn(async move {
                if let Ok(Ok(edit)) = begin.await {
                    let _ = backend.release_edit(edit.id).await;
                }
            });
        } else if let Some(id) = self.edit.take() {
            runtime.spawn(async move { backend.release_edit(id).await });
        }
    }
}

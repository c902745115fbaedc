//! An agent's edit as one call: take an edit lease, do the work under a
//! deadline, commit what it made, and release the lease however it ended.

use std::future::Future;
use std::time::Duration;

use crate::backend::{Backend, Upload};
use crate::error::{Error, Result};
use crate::model::{ArtifactId, CheckinResult, Edit};

/// How long an agent's command may run (the edit lease adds time for the commit).
pub const EDIT_DEADLINE: Duration = Duration::from_secs(30);

/// Runs `work` on a fresh edit of `artifact` and commits the upload it returns.
/// The lease is released on success, error, panic (which then continues) and
/// timeout alike. A busy file is refused with `ArtifactBusy`: plan again.
pub async fn run_edit<F, Fut>(
    backend: &dyn Backend,
    artifact: ArtifactId,
    deadline: Duration,
    work: F,
) -> Result<CheckinResult>
where
    F: FnOnce(Edit) -> Fut,
    Fut: Future<Output = Result<Upload>> + Send + 'static,
{
    let edit = backend.begin_edit(artifact, None).await?;
    let id = edit.id;
    // Spawned, so a panic in the work is caught here and a timeout can stop it.
    let task = tokio::spawn(work(edit));
    let abort = task.abort_handle();
    let outcome = match tokio::time::timeout(deadline, task).await {
        Err(_) => {
            abort.abort();
            Err(Error::DeadlineExceeded(format!(
                "the edit's work ran longer than {} s and was stopped; nothing was committed",
                deadline.as_secs_f64()
            )))
        }
        Ok(Err(join)) if join.is_panic() => {
            let _ = backend.release_edit(id).await;
            std::panic::resume_unwind(join.into_panic());
        }
        Ok(Err(join)) => Err(Error::Internal(format!("edit task: {join}"))),
        Ok(Ok(Err(e))) => Err(e),
        Ok(Ok(Ok(upload))) => backend.commit_edit(id, upload).await,
    };
    // A commit released the lease already; releasing again is a no-op.
    let released = backend.release_edit(id).await;
    let result = outcome?;
    released?;
    Ok(result)
}

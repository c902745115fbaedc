//! `edit`, for agents: a short edit lease, the agent's command run on a copy
//! of the head under a deadline, the copy committed if the command succeeds.
//! The lease is always released, and the command never gets the caller's
//! token or server.

use std::sync::Arc;
use std::time::Duration;

use leasedesk::model::*;
use leasedesk::{Backend, Error, Upload};

use super::{described, Output, Target};

/// `edit`: runs `command` on a copy of `path`'s head within `deadline` seconds.
pub(super) async fn run(
    target: &Target,
    path: &RepoPath,
    deadline: u64,
    message: Option<String>,
    command: Vec<String>,
    out: &Output,
) -> Result<(), Error> {
    let artifact = target.backend().artifact_by_path(path).await?;
    let result = edit(
        target.shared(),
        &artifact,
        Duration::from_secs(deadline),
        message,
        command,
    )
    .await?;
    out.print(&result, || match &result {
        CheckinResult::Committed { version, .. } => {
            format!("committed {} as version {version}", artifact.path)
        }
        CheckinResult::Unchanged { .. } => {
            format!("{} is unchanged: nothing was committed", artifact.path)
        }
        CheckinResult::Proposal { proposal } => format!("kept as proposal {}", proposal.id),
    });
    Ok(())
}

/// Runs an agent's command on a copy of the head under an edit lease, and
/// commits the copy if the command succeeds.
async fn edit(
    backend: Arc<dyn Backend>,
    artifact: &Artifact,
    deadline: Duration,
    message: Option<String>,
    command: Vec<String>,
) -> Result<CheckinResult, Error> {
    let work_dir = std::env::temp_dir().join(format!("leasedesk-edit-{}", EditId::new()));
    // Refused before any lease for a name that cannot be a file here.
    let file = leasedesk::workspace::join_under(&work_dir, artifact.path.file_name())?;
    std::fs::create_dir_all(&work_dir)?;
    let work = {
        let (backend, file) = (backend.clone(), file.clone());
        move |edit: Edit| async move {
            let mut content = backend
                .content(edit.artifact_id, Some(edit.base_version))
                .await?;
            let mut copy = tokio::fs::File::create(&file).await?;
            tokio::io::copy(&mut content.reader, &mut copy).await?;
            drop(copy);
            let path = file.to_string_lossy().into_owned();
            let (program, args) = command.split_first().expect("clap requires a command");
            let mut args: Vec<String> = args.iter().map(|a| a.replace("{}", &path)).collect();
            if !command.iter().any(|a| a.contains("{}")) {
                args.push(path);
            }
            let mut run = tokio::process::Command::new(program);
            run.args(&args)
                // The agent's command gets the caller's environment, but not
                // the means to act as the caller on the server.
                .env_remove("LEASEDESK_TOKEN")
                .env_remove("LEASEDESK_SERVER")
                .kill_on_drop(true);
            // Its own process group (on Windows, a job), so a deadline stops
            // what it started too.
            #[cfg(unix)]
            run.process_group(0);
            let mut child = run
                .spawn()
                .map_err(|e| Error::Invalid(format!("cannot run {program}: {e}")))?;
            // A deadline drops this future: then the command and all it started stop.
            let _group = KillTreeOnDrop::of(&child);
            let status = child.wait().await?;
            if !status.success() {
                return Err(Error::Invalid(format!(
                    "{program} failed ({status}): nothing was committed"
                )));
            }
            Ok(described(Upload::file(&file), message))
        }
    };
    let result = leasedesk::agent::run_edit(backend, artifact.id, deadline, work).await;
    let _ = std::fs::remove_dir_all(&work_dir);
    result
}

/// Kills a command and all it started when dropped (a command stopped at its
/// deadline takes what it started with it, which would otherwise hold our
/// output open): its process group, or on Windows the job it was put in.
struct KillTreeOnDrop {
    #[cfg(unix)]
    group: Option<u32>,
    #[cfg(windows)]
    job: Option<Job>,
}

/// A Windows job's handle.
#[cfg(windows)]
struct Job(windows_sys::Win32::Foundation::HANDLE);

// SAFETY: a kernel handle may be used and closed from any thread.
#[cfg(windows)]
unsafe impl Send for Job {}

impl KillTreeOnDrop {
    #[cfg(unix)]
    fn of(child: &tokio::process::Child) -> Self {
        Self { group: child.id() }
    }

    /// A job that kills its processes when its handle closes; what the command
    /// starts joins it too. Without one (an old Windows, a refusal), only the
    /// command itself is stopped.
    #[cfg(windows)]
    fn of(child: &tokio::process::Child) -> Self {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::JobObjects::{
            AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
            SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        };
        let Some(process) = child.raw_handle() else {
            return Self { job: None };
        };
        // SAFETY: the job handle is ours until closed; `limits` outlives the
        // call that reads it; `process` is the live child's handle.
        unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if job.is_null() {
                return Self { job: None };
            }
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            let set = SetInformationJobObject(
                job,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of_val(&limits) as u32,
            );
            if set == 0 || AssignProcessToJobObject(job, process as _) == 0 {
                CloseHandle(job);
                return Self { job: None };
            }
            Self {
                job: Some(Job(job)),
            }
        }
    }
}

impl Drop for KillTreeOnDrop {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(group) = self.group {
            // SAFETY: kill only reads its arguments. The group is the command's own
            // (process_group(0)); after the command exits it is empty or gone.
            unsafe { libc::kill(-(group as i32), libc::SIGKILL) };
        }
        #[cfg(windows)]
        if let Some(job) = self.job.take() {
            // SAFETY: the handle is ours and closed once; closing it kills the job.
            unsafe { windows_sys::Win32::Foundation::CloseHandle(job.0) };
        }
    }
}

//! What a test does through a backend in one call (imports, a check-out
//! and its check-in, proposals and events read whole, content read out),
//! and the assertions about what came of it.

use std::sync::Arc;

use leasedesk::model::*;
use leasedesk::{Backend, Upload};
use tempfile::TempDir;

use super::{bytes, checkout_request, path};

/// That a check-in committed `version`.
pub fn assert_committed(result: &Option<CheckinResult>, version: u64) {
    assert!(
        matches!(result, Some(CheckinResult::Committed { version: v, .. }) if *v == version),
        "expected version {version} committed, got {result:?}"
    );
}

/// That `result` is a refusal as forbidden; `what` says what was tried.
#[track_caller]
pub fn assert_forbidden<T: std::fmt::Debug>(result: &leasedesk::Result<T>, what: &str) {
    assert!(
        matches!(result, Err(leasedesk::Error::Forbidden(_))),
        "{what}: {result:?}"
    );
}

/// The proposal a check-in became; a panic if it became none.
pub fn proposal_of(done: Checkout) -> Proposal {
    let Some(CheckinResult::Proposal { proposal }) = done.result else {
        panic!("expected a proposal, got {:?}", done.result);
    };
    proposal
}

/// Imports `data` at `p` through `backend`.
pub async fn import_as(backend: &dyn Backend, p: &str, data: &[u8]) -> Artifact {
    backend.import(&path(p), bytes(data)).await.expect("import")
}

/// `backend` checks `a` out and checks `data` in: the closed check-out.
pub async fn check_out_and_in_as(backend: &dyn Backend, a: ArtifactId, data: &[u8]) -> Checkout {
    let c = backend.check_out(a, checkout_request()).await.unwrap();
    backend.check_in(c.id, bytes(data)).await.unwrap()
}

/// `backend` checks `a` out and cancels: the events of both, no lease left.
pub async fn check_out_and_cancel_as(backend: &dyn Backend, a: ArtifactId) {
    let c = backend.check_out(a, checkout_request()).await.unwrap();
    backend.cancel(c.id).await.unwrap();
}

/// `backend` stages each check-out's bytes.
pub async fn stage_each(backend: &dyn Backend, staged: &[(CheckoutId, &[u8])]) {
    for (checkout, data) in staged {
        backend.stage(*checkout, bytes(data)).await.unwrap();
    }
}

/// Every path `backend` lists, in the list's order.
pub async fn listed_paths(backend: &dyn Backend) -> Vec<String> {
    let all = backend.artifacts().await.unwrap();
    all.iter().map(|a| a.path.to_string()).collect()
}

/// Imports `data` at `p` through `backend` and checks it out: the open
/// check-out, whose `artifact_id` is the new artifact.
pub async fn import_checked_out(backend: &dyn Backend, p: &str, data: &[u8]) -> Checkout {
    let artifact = backend.import(&path(p), bytes(data)).await.unwrap();
    backend
        .check_out(artifact.id, checkout_request())
        .await
        .unwrap()
}

/// `data` in a file `name` of a temp folder of its own, checked in on
/// `checkout` by `backend` in the background: the folder, to keep while
/// the check-in runs, and the check-in.
pub fn checking_in(
    backend: Arc<dyn Backend>,
    checkout: CheckoutId,
    name: &str,
    data: &[u8],
) -> (
    TempDir,
    tokio::task::JoinHandle<leasedesk::Result<Checkout>>,
) {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join(name);
    std::fs::write(&file, data).unwrap();
    let checkin =
        tokio::spawn(async move { backend.check_in(checkout, Upload::file(&file)).await });
    (folder, checkin)
}

/// Every proposal `backend` sees.
pub async fn all_proposals(backend: &dyn Backend) -> Vec<Proposal> {
    backend
        .proposals(ProposalFilter::default())
        .await
        .expect("proposals")
}

/// The proposals of `artifact` that `backend` sees, in `state` (any if None).
pub async fn proposals_of(
    backend: &dyn Backend,
    artifact: ArtifactId,
    state: Option<ProposalState>,
) -> Vec<Proposal> {
    backend
        .proposals(ProposalFilter {
            artifact: Some(artifact),
            state,
        })
        .await
        .unwrap()
}

pub async fn all_events(backend: &dyn Backend) -> Vec<Event> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let page = backend.events(after, 1000).await.expect("events");
        if page.events.is_empty() {
            return events;
        }
        after = page.next;
        events.extend(page.events);
    }
}

pub async fn read_content(backend: &dyn Backend, id: ArtifactId, version: Option<u64>) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut content = backend.content(id, version).await.expect("content");
    let mut out = Vec::new();
    content
        .reader
        .read_to_end(&mut out)
        .await
        .expect("read content");
    out
}

/// That the `sent` bytes of a transfer of `file` bytes were each byte about
/// once: within 5 % of the file.
pub fn assert_sent_about_once(sent: u64, file: usize) {
    assert!(
        sent < file as u64 * 105 / 100,
        "{sent} bytes went up for a file of {file}"
    );
}

/// Counts a racing check-in's result as `[committed, unchanged, proposal]`.
pub fn count_outcome(outcomes: &mut [usize; 3], result: &Option<CheckinResult>) {
    match result {
        Some(CheckinResult::Committed { .. }) => outcomes[0] += 1,
        Some(CheckinResult::Unchanged { .. }) => outcomes[1] += 1,
        Some(CheckinResult::Proposal { .. }) => outcomes[2] += 1,
        None => panic!("a check-in has a result"),
    }
}

/// The racing tasks' counts added up: the race must have made both commits
/// and proposals (stale check-ins).
pub async fn race_outcomes(tasks: Vec<tokio::task::JoinHandle<[usize; 3]>>) -> [usize; 3] {
    let mut outcomes = [0usize; 3];
    for task in tasks {
        for (total, n) in outcomes.iter_mut().zip(task.await.unwrap()) {
            *total += n;
        }
    }
    let [committed, _, proposals] = outcomes;
    assert!(
        committed > 0 && proposals > 0,
        "the race exercised commits and stale check-ins: {outcomes:?}"
    );
    outcomes
}

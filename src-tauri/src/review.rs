//! Review in the window: a file's threads, a thread opened on a version or
//! a proposal (pinned where the designer clicked), a comment, a thread
//! resolved or reopened, a decision and the review state. Thin: each command
//! is the desk's call. The window hears of others' review through the
//! ledger's events (`activity`), as of everything else.

use leasedesk_model::model::*;

use crate::commands::desk_commands;

desk_commands! {
    /// Every thread of the file, on any version or proposal, by number.
    fn threads(artifact: ArtifactId) -> Vec<Thread> =
        on_desk(|desk| desk.threads(artifact).await);

    /// A thread on version `version` or proposal `proposal` (one of them),
    /// pinned at `pin` on a picture of `image`'s size when given.
    fn open_thread(
        artifact: ArtifactId,
        version: Option<u64>,
        proposal: Option<ProposalId>,
        pin: Option<Pin>,
        image: Option<ImageSize>,
        body: String,
    ) -> Thread =
        on_desk(|desk| desk.open_thread(artifact, version, proposal, pin, image, &body).await);

    fn comment(thread: ThreadId, body: String) -> Comment =
        on_desk(|desk| desk.comment(thread, &body).await);

    /// Resolves the thread (`resolved`), or reopens it.
    fn resolve_thread(thread: ThreadId, resolved: bool) -> Thread =
        on_desk(|desk| desk.resolve_thread(thread, resolved).await);

    /// Your decision on version `version` or proposal `proposal`.
    fn submit_review(
        artifact: ArtifactId,
        version: Option<u64>,
        proposal: Option<ProposalId>,
        decision: ReviewDecision,
        message: Option<String>,
    ) -> Review =
        on_desk(|desk| desk.submit_review(artifact, version, proposal, decision, message.as_deref()).await);

    /// The decisions on version `version` or proposal `proposal`, and its state.
    fn review_state(artifact: ArtifactId, version: Option<u64>, proposal: Option<ProposalId>) -> ReviewList =
        on_desk(|desk| desk.review_state(artifact, version, proposal).await);
}

//! The names on the wire that the server and its clients must agree on:
//! our headers beyond HTTP's own. Both `server` and `remote` (and the app's
//! `preview:` scheme) import them from here; this module imports nothing.

/// The header a client may send with an upload's digest (`blake3:<hex>`).
pub const DIGEST_HEADER: &str = "leasedesk-digest";
/// An upload's description, percent-encoded UTF-8.
pub const MESSAGE_HEADER: &str = "leasedesk-message";
/// The answer's header that says a preview is approximate (`Leasedesk-Preview: approximate`).
pub const APPROXIMATE_HEADER: &str = "leasedesk-preview";
/// Where an event stream resumes, as Server-Sent Events define it.
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";
/// Names a finished resumable upload whose bytes a check-in, stage, edit's
/// commit or import takes instead of its body.
pub const UPLOAD_HEADER: &str = "leasedesk-upload";
/// Where an append to a resumable upload starts (tus 1.0's name).
pub const OFFSET_HEADER: &str = "upload-offset";
/// A begin's key of the client's choosing: the same key begins nothing new
/// (the IETF's Idempotency-Key header).
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

//! Asking the holder: one participant asks whoever holds a file under a
//! check-out to release it, with a message; the holder may reply. A request
//! never releases anything by itself (only the holder's own action does),
//! and it ends with its check-out.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{ArtifactId, CheckoutId, Invalid, Participant, RepoPath, RequestId};

/// The longest message of a request or a reply, in characters.
pub const MAX_REQUEST_MESSAGE_CHARS: usize = 1000;

/// Asking again within this many seconds notifies the holder no second time.
pub const REQUEST_QUIET_SECONDS: i64 = 15 * 60;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum RequestState {
    /// Waiting for the holder.
    Open,
    /// The holder answered; the request still stands.
    Replied,
    /// Taken back by the one who asked.
    Withdrawn,
    /// Its check-out closed: checked in, cancelled, lapsed or broken.
    Ended,
}

impl RequestState {
    /// Whether the request still stands (open or replied).
    pub fn is_live(self) -> bool {
        matches!(self, RequestState::Open | RequestState::Replied)
    }
}

/// A request to the holder of a file's check-out to release it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Request {
    pub id: RequestId,
    pub artifact_id: ArtifactId,
    pub path: RepoPath,
    /// Who asks.
    pub from: Participant,
    /// Who holds the file: the check-out's actor.
    pub to: Participant,
    pub checkout_id: CheckoutId,
    pub message: Option<String>,
    pub state: RequestState,
    pub reply: Option<String>,
    pub created_at: DateTime<Utc>,
    pub replied_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
}

/// A request's or a reply's message: at most [`MAX_REQUEST_MESSAGE_CHARS`]
/// characters, no control characters but line breaks; blank is none.
pub fn check_request_message(message: Option<&str>) -> Result<Option<String>, Invalid> {
    let Some(message) = message.map(str::trim).filter(|m| !m.is_empty()) else {
        return Ok(None);
    };
    let chars = message.chars().count();
    if chars > MAX_REQUEST_MESSAGE_CHARS {
        return Err(Invalid(format!(
            "the message is {chars} characters long, over the limit of {MAX_REQUEST_MESSAGE_CHARS}"
        )));
    }
    if message.chars().any(|c| c.is_control() && c != '\n') {
        return Err(Invalid("the message contains a control character".into()));
    }
    Ok(Some(message.to_owned()))
}

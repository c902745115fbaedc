//! Review on the work (API.md "Review (additions)"): threads of comments on
//! one version or one proposal, pinned to a point or a box of its picture;
//! each reviewer's decision; review requests; and the inbox that gathers
//! what needs a participant. Checks the shapes here; who may do what is
//! the rules'.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    ArtifactId, CommentId, Invalid, Participant, ProposalId, RepoPath, ReviewId, ThreadId,
};

/// The longest comment, in characters.
pub const MAX_COMMENT_CHARS: usize = 10_000;
/// The most threads one file may have: a listing of a file's threads stays
/// a bounded answer.
pub const MAX_THREADS_PER_FILE: u64 = 10_000;
/// The most comments one thread may have.
pub const MAX_COMMENTS_PER_THREAD: u64 = 1_000;
/// The most bytes of comments a file's threads may hold together: what a
/// listing of them answers stays a few megabytes.
pub const MAX_COMMENT_BYTES_PER_FILE: u64 = 8 << 20;
/// The most decisions one file may have, and the longest message of one,
/// in characters: a listing of them stays small too.
pub const MAX_REVIEWS_PER_FILE: u64 = 2_000;
pub const MAX_REVIEW_MESSAGE_CHARS: usize = 1_000;
/// The most distinct `@names` one comment may hold: more is a flood, not a
/// conversation, and each is looked up.
pub const MAX_MENTIONS: usize = 50;
/// The most reviewers one review request may name.
pub const MAX_REVIEWERS: usize = 50;
/// The unread items counted, at most: a count past it is shown as "1000+",
/// and counting stays cheap however many a participant has not read.
pub const MAX_UNREAD_COUNTED: u64 = 1_000;
/// The longest inbox page, and the one given without a limit.
pub const MAX_INBOX_PAGE: u32 = 200;
pub const DEFAULT_INBOX_PAGE: u32 = 50;

/// Where a thread points: fractions 0..1 of the image from its top left; a
/// point, or a box with its width and height.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct Pin {
    pub x: f64,
    pub y: f64,
    #[serde(default)]
    pub w: Option<f64>,
    #[serde(default)]
    pub h: Option<f64>,
}

impl Pin {
    /// Within the image: x and y in 0..1, and a box (both `w` and `h`, each
    /// above 0) that ends within it too.
    pub fn check(&self) -> Result<(), Invalid> {
        let within = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(Invalid(format!(
                    "the pin's {name} is {v}: it must be a fraction of the image from 0 to 1"
                )))
            }
        };
        within("x", self.x)?;
        within("y", self.y)?;
        match (self.w, self.h) {
            (None, None) => Ok(()),
            (Some(w), Some(h)) => {
                within("w", w)?;
                within("h", h)?;
                if w <= 0.0 || h <= 0.0 {
                    return Err(Invalid(
                        "the pin's box must have a width and a height above 0".into(),
                    ));
                }
                // A little slack for the rounding of fractions a client computed.
                if self.x + w > 1.0 + 1e-9 || self.y + h > 1.0 + 1e-9 {
                    return Err(Invalid("the pin's box reaches beyond the image".into()));
                }
                Ok(())
            }
            _ => Err(Invalid(
                "a pin is a point (x, y) or a box with both w and h".into(),
            )),
        }
    }
}

/// The pixel size of the picture a pin was made on, so a client can redraw
/// it on another size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct ImageSize {
    pub width: u32,
    pub height: u32,
}

impl ImageSize {
    pub fn check(&self) -> Result<(), Invalid> {
        const MAX_SIDE: u32 = 1 << 20;
        if self.width == 0 || self.height == 0 || self.width > MAX_SIDE || self.height > MAX_SIDE {
            return Err(Invalid(format!(
                "the image size {}x{} is not a picture's: each side is 1 to {MAX_SIDE} pixels",
                self.width, self.height
            )));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum ThreadState {
    Open,
    Resolved,
}

/// What a thread, a review or a request is about: one version of a file, or
/// one proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewTarget {
    Version(u64),
    Proposal(ProposalId),
}

impl ReviewTarget {
    /// The `version` and `proposal_id` a body names for it.
    pub fn parts(self) -> (Option<u64>, Option<ProposalId>) {
        match self {
            Self::Version(v) => (Some(v), None),
            Self::Proposal(id) => (None, Some(id)),
        }
    }

    /// Exactly one of `version` and `proposal_id`, as a body names it.
    pub fn from_parts(
        version: Option<u64>,
        proposal_id: Option<ProposalId>,
    ) -> Result<Self, Invalid> {
        match (version, proposal_id) {
            (Some(version), None) => Ok(Self::Version(version)),
            (None, Some(id)) => Ok(Self::Proposal(id)),
            (Some(_), Some(_)) => Err(Invalid(
                "name either a version or a proposal_id, not both".into(),
            )),
            (None, None) => Err(Invalid("name a version or a proposal_id".into())),
        }
    }
}

/// A review thread: its comments, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Thread {
    pub id: ThreadId,
    pub artifact_id: ArtifactId,
    /// Counts the file's threads from 1.
    #[ts(type = "number")]
    pub number: u64,
    /// The version it is on; a proposal's thread has the version the
    /// proposal became once accepted.
    #[ts(type = "number | null")]
    pub version: Option<u64>,
    /// The proposal it is on (the newest, after a rebuild).
    pub proposal_id: Option<ProposalId>,
    pub pin: Option<Pin>,
    pub image: Option<ImageSize>,
    pub state: ThreadState,
    pub author: Participant,
    pub created_at: DateTime<Utc>,
    pub resolved_by: Option<Participant>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub comments: Vec<Comment>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Comment {
    pub id: CommentId,
    pub thread_id: ThreadId,
    pub author: Participant,
    pub body: String,
    /// The participants its `@names` reached: each could read the file.
    pub mentions: Vec<Participant>,
    pub created_at: DateTime<Utc>,
}

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ReviewDecision {
    Approved,
    ChangesRequested,
    #[default]
    Commented,
}

/// One reviewer's decision on a version or a proposal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Review {
    pub id: ReviewId,
    pub artifact_id: ArtifactId,
    #[ts(type = "number | null")]
    pub version: Option<u64>,
    pub proposal_id: Option<ProposalId>,
    pub reviewer: Participant,
    pub decision: ReviewDecision,
    pub message: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A version's or a proposal's review state, from each reviewer's newest
/// decision and the reviewers asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ReviewState {
    Approved,
    ChangesRequested,
    Pending,
    None,
}

/// `GET /v1/artifacts/{id}/reviews`: the decisions, oldest first, and the state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct ReviewList {
    pub reviews: Vec<Review>,
    pub state: ReviewState,
    /// The reviewers asked who have not decided yet.
    #[serde(default)]
    pub waiting_for: Vec<Participant>,
}

/// `GET /v1/artifacts/{id}/threads`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct ThreadList {
    pub threads: Vec<Thread>,
}

/// `POST /v1/artifacts/{id}/review-requests`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Requested {
    pub requested: Vec<Participant>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum InboxKind {
    /// A comment named you.
    Mention,
    /// Someone asked you to review.
    ReviewRequested,
    /// A thread was opened on a version or a proposal of yours.
    ThreadOnYours,
    /// A comment was added to a thread on your work, or to one you opened.
    CommentInYours,
    /// A reviewer decided on a version or a proposal of yours.
    DecisionOnYours,
}

/// One thing for a participant to look at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct InboxItem {
    #[ts(type = "number")]
    pub seq: u64,
    pub kind: InboxKind,
    pub artifact_id: ArtifactId,
    /// The file's path now.
    pub path: RepoPath,
    pub thread_id: Option<ThreadId>,
    pub review_id: Option<ReviewId>,
    pub from: Participant,
    pub at: DateTime<Utc>,
    pub read: bool,
}

/// `GET /v1/inbox`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct InboxPage {
    pub items: Vec<InboxItem>,
    /// Pass as `after` for the next page (or as `before`, paging back).
    #[ts(type = "number")]
    pub next: u64,
    /// The caller's unread items, of files they may read, counted up to
    /// [`MAX_UNREAD_COUNTED`] (which then means that many or more).
    #[ts(type = "number")]
    pub unread: u64,
}

/// Which of a file's threads: on a version, on a proposal, in a state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ThreadQuery {
    pub version: Option<u64>,
    pub proposal: Option<ProposalId>,
    pub state: Option<ThreadState>,
}

/// Which inbox items: after a seq (oldest first, to follow) or before one
/// (newest first, to show), only unread ones if asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct InboxQuery {
    pub after: Option<u64>,
    pub before: Option<u64>,
    pub limit: Option<u32>,
    #[serde(default)]
    pub unread: bool,
}

/// Body of `POST /v1/artifacts/{id}/threads`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct NewThread {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "number | null")]
    pub version: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<ProposalId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    /// The pixel size of the picture the pin was made on, if the client
    /// knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageSize>,
    pub body: String,
}

/// Body of `POST /v1/artifacts/{id}/reviews`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct NewReview {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "number | null")]
    pub version: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<ProposalId>,
    pub decision: ReviewDecision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Body of `POST /v1/artifacts/{id}/review-requests`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct NewReviewRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "number | null")]
    pub version: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<ProposalId>,
    pub reviewers: Vec<Participant>,
}

/// A comment's body: 1 to [`MAX_COMMENT_CHARS`] characters, no control
/// characters but line breaks (as a request's message), kept as written but
/// for the blank at its ends.
pub fn check_comment_body(body: &str) -> Result<String, Invalid> {
    let body = body.trim();
    if body.is_empty() {
        return Err(Invalid("say something: the comment is empty".into()));
    }
    let chars = body.chars().count();
    if chars > MAX_COMMENT_CHARS {
        return Err(Invalid(format!(
            "the comment is {chars} characters long, over the limit of {MAX_COMMENT_CHARS}: nothing was stored"
        )));
    }
    if body
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(Invalid("the comment contains a control character".into()));
    }
    Ok(body.to_owned())
}

/// The distinct `@names` of a body, in order: `@` at the start or after a
/// character that is not part of a name, then 1 to 64 letters, digits or
/// `. _ - @`, less a trailing `.` (the end of a sentence). At most
/// [`MAX_MENTIONS`], else refused.
pub fn mentioned_names(body: &str) -> Result<Vec<String>, Invalid> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || "._-@".contains(c);
    let mut names: Vec<String> = Vec::new();
    let mut rest = body;
    let mut before: Option<char> = None;
    while let Some(at) = rest.find('@') {
        let prior = rest[..at].chars().next_back().or(before);
        let after = &rest[at + 1..];
        let len = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
        let name = after[..len].trim_end_matches('.');
        let counts = !prior.is_some_and(is_name) && !name.is_empty() && name.len() <= 64;
        if counts && !names.iter().any(|n| n == name) {
            if names.len() == MAX_MENTIONS {
                return Err(Invalid(format!(
                    "the comment names more than {MAX_MENTIONS} people with @: name fewer"
                )));
            }
            names.push(name.to_owned());
        }
        before = after[..len].chars().next_back().or(Some('@'));
        rest = &after[len..];
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_names_after_an_at_sign_once_each() {
        let names = mentioned_names("@bob see this, @sam. and @bob again; mail x@y.z").unwrap();
        assert_eq!(names, ["bob", "sam"]);
        assert_eq!(mentioned_names("@a.b-c_d!").unwrap(), ["a.b-c_d"]);
        assert!(mentioned_names("no one").unwrap().is_empty());
    }

    #[test]
    fn a_flood_of_mentions_is_refused() {
        let flood: String = (0..1000).map(|i| format!("@p{i} ")).collect();
        assert!(mentioned_names(&flood).is_err());
        let fifty: String = (0..50).map(|i| format!("@p{i} ")).collect();
        assert_eq!(mentioned_names(&fifty).unwrap().len(), 50);
    }

    #[test]
    fn pins_stay_within_the_image() {
        let point = |x, y| Pin {
            x,
            y,
            w: None,
            h: None,
        };
        assert!(point(0.0, 1.0).check().is_ok());
        assert!(point(-0.1, 0.5).check().is_err());
        assert!(point(f64::NAN, 0.5).check().is_err());
        assert!(point(0.5, f64::INFINITY).check().is_err());
        let boxed = |x, y, w, h| Pin {
            x,
            y,
            w: Some(w),
            h: Some(h),
        };
        assert!(boxed(0.5, 0.5, 0.5, 0.5).check().is_ok());
        assert!(boxed(0.6, 0.5, 0.5, 0.1).check().is_err());
        assert!(boxed(0.1, 0.1, 0.0, 0.1).check().is_err());
        assert!(Pin {
            x: 0.1,
            y: 0.1,
            w: Some(0.1),
            h: None
        }
        .check()
        .is_err());
    }

    #[test]
    fn a_body_is_one_to_ten_thousand_characters() {
        assert!(check_comment_body("  ").is_err());
        assert!(check_comment_body(&"é".repeat(10_000)).is_ok());
        assert!(check_comment_body(&"é".repeat(10_001)).is_err());
        assert!(check_comment_body("a\u{7}b").is_err());
        assert_eq!(check_comment_body(" ok\n").unwrap(), "ok");
    }
}

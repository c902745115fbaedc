//! The domain's nouns, shaped as the objects of `shared/API.md` so that the
//! server serializes them as they are. They know no error type but their
//! own `Invalid`: `error` depends on them, never the reverse.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// A value that breaks the API's rules for it (a path, a name, a ttl...): the
/// message says which rule. It becomes `Error::Invalid` (422) wherever it
/// meets the error type; the nouns never depend on that type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// A point on the backend's clock, kept to the millisecond (the store's precision).
pub type Timestamp = DateTime<Utc>;

/// Default lease of a check-out: 8 hours.
pub const DEFAULT_CHECKOUT_TTL_SECONDS: u64 = 8 * 3600;
/// Default lease of an agent's edit: the 30 s deadline of its command plus its commit.
pub const DEFAULT_EDIT_TTL_SECONDS: u64 = 45;
/// Longest lease anyone may ask for: one week.
pub const MAX_TTL_SECONDS: u64 = 7 * 24 * 3600;
/// Most events one page of the ledger holds.
pub const MAX_EVENTS_PAGE: u32 = 1000;
/// Longest note a check-out may carry.
pub const MAX_NOTE_BYTES: usize = 1024;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
        #[serde(transparent)]
        #[derive(ts_rs::TS)]
        #[ts(export)]
        pub struct $name(pub Uuid);

        impl $name {
            pub fn new() -> Self {
                Self(Uuid::new_v4())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = Invalid;
            fn from_str(s: &str) -> Result<Self, Invalid> {
                Uuid::parse_str(s)
                    .map(Self)
                    .map_err(|_| Invalid(format!("{s:?} is not a UUID")))
            }
        }
    };
}

id_type!(
    /// Names one artifact for its whole life, whatever its path.
    ArtifactId
);
id_type!(
    /// Names one check-out record.
    CheckoutId
);
id_type!(
    /// Names one agent edit; its lease holder is `edit:<id>`.
    EditId
);
id_type!(
    /// Names one proposal.
    ProposalId
);

/// Who acts: `user:NAME` or `agent:NAME`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub struct Participant(String);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParticipantKind {
    User,
    Agent,
}

impl Participant {
    pub fn user(name: &str) -> Result<Self, Invalid> {
        format!("user:{name}").parse()
    }

    pub fn agent(name: &str) -> Result<Self, Invalid> {
        format!("agent:{name}").parse()
    }

    pub fn kind(&self) -> ParticipantKind {
        if self.0.starts_with("agent:") {
            ParticipantKind::Agent
        } else {
            ParticipantKind::User
        }
    }

    /// The name without its `user:` or `agent:` prefix.
    pub fn name(&self) -> &str {
        self.0.split_once(':').map_or("", |(_, name)| name)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Participant {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        let name = s
            .strip_prefix("user:")
            .or_else(|| s.strip_prefix("agent:"))
            .ok_or_else(|| {
                Invalid(format!("participant {s:?} must be user:NAME or agent:NAME"))
            })?;
        let valid_name = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b));
        if !valid_name {
            return Err(Invalid(format!(
                "participant name {name:?} must be 1 to 64 letters, digits or . _ - @"
            )));
        }
        Ok(Self(s.to_owned()))
    }
}

impl TryFrom<String> for Participant {
    type Error = Invalid;
    fn try_from(s: String) -> Result<Self, Invalid> {
        s.parse()
    }
}

impl From<Participant> for String {
    fn from(p: Participant) -> String {
        p.0
    }
}

impl fmt::Display for Participant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An artifact's place in the store: relative, `/`-separated, no empty, `.` or
/// `..` segment, no control characters, at most 1024 bytes; and, for a path
/// made now, one that every designer's computer can hold (see
/// [`RepoPath::placement_problem`]). This is the one parser of those rules.
///
/// Two constructors: `parse` (`FromStr`) is strict, for anything that makes a
/// path (an import, a rename's target), and keeps the path in NFC (macOS hands
/// back NFD names; the workspace maps them to NFC). [`RepoPath::stored`] keeps
/// only the rules of older versions, so that an artifact stored before the
/// placement rules stays readable and can be renamed: store reads, lookups
/// by path and deserialization (a client reading the server's list) use it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub struct RepoPath(String);

/// Names Windows keeps for devices, in any case and with any extension
/// (`nul.txt` is the device too). The superscript digits count as digits there.
const RESERVED_DEVICE_NAMES: &[&str] = &[
    "CON",
    "PRN",
    "AUX",
    "NUL",
    "CONIN$",
    "CONOUT$",
    // Reserved too since Windows 11's documentation says so.
    "COM0",
    "LPT0",
    "COM1",
    "COM2",
    "COM3",
    "COM4",
    "COM5",
    "COM6",
    "COM7",
    "COM8",
    "COM9",
    "COM\u{b9}",
    "COM\u{b2}",
    "COM\u{b3}",
    "LPT1",
    "LPT2",
    "LPT3",
    "LPT4",
    "LPT5",
    "LPT6",
    "LPT7",
    "LPT8",
    "LPT9",
    "LPT\u{b9}",
    "LPT\u{b2}",
    "LPT\u{b3}",
];

/// Characters Windows refuses in a name (`:` also makes drive-relative paths
/// and alternate data streams; `\\` is a separator there).
const FORBIDDEN_CHARACTERS: &[char] = &['\\', ':', '<', '>', '"', '|', '?', '*'];

impl RepoPath {
    pub const MAX_BYTES: usize = 1024;

    /// A path as older versions accepted it: for paths read back from a store
    /// or a server, never for making one. Refuses only what those refused.
    pub fn stored(s: &str) -> Result<Self, Invalid> {
        let refuse = |why: &str| Err(Invalid(format!("path {s:?} {why}")));
        if s.is_empty() {
            return refuse("is empty");
        }
        if s.len() > Self::MAX_BYTES {
            return refuse("is longer than 1024 bytes");
        }
        if s.chars().any(char::is_control) {
            return refuse("contains a control character");
        }
        if s.starts_with('/') || s.contains('\\') {
            return refuse("must be relative and use / between folders");
        }
        if s.split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
        {
            return refuse("has an empty, . or .. segment");
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment: what a person calls the file.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// Why this path cannot be placed in a workspace on Windows, macOS or
    /// Linux (`None` when it can): only a path stored before these rules
    /// can have one.
    pub fn placement_problem(&self) -> Option<String> {
        placement_problem(&self.0)
    }

    /// What two paths share when one computer's folder cannot tell them
    /// apart: NFC, then full Unicode case folding (then NFC again, since a
    /// fold can leave a string unnormalized). `Case.psd` and `case.psd`, or
    /// `é` as one character and as `e` plus an accent, have one key.
    pub fn collision_key(&self) -> String {
        collision_key(&self.0)
    }

    /// The keys of the folders above this path, outermost first (`a`, `a/b`
    /// for `a/b/c.psd`): a path cannot lie under an artifact at any of them.
    pub fn folder_keys(&self) -> Vec<String> {
        let key = self.collision_key();
        key.match_indices('/')
            .map(|(at, _)| key[..at].to_owned())
            .collect()
    }
}

/// See [`RepoPath::collision_key`]. After folding, letters are upper-cased
/// too: NTFS compares names through an upper-case table, where `ı` (dotless
/// i) and `i` are both `I` though case folding keeps them apart.
pub fn collision_key(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let folded = caseless::default_case_fold_str(&s.nfc().collect::<String>());
    folded.to_uppercase().nfc().collect()
}

/// Whether `segment` has the shape of a Windows short (8.3) name with a
/// numeric tail, `PROGRA~1` or `CHARAC~1.PSD`: on a volume that makes short
/// names, opening it may open another file whose long name it stands for.
fn is_short_name_alias(segment: &str) -> bool {
    let (base, extension) = match segment.rsplit_once('.') {
        Some((base, extension)) => (base, extension),
        None => (segment, ""),
    };
    let Some((stem, tail)) = base.rsplit_once('~') else {
        return false;
    };
    segment.is_ascii()
        && base.len() <= 8
        && extension.len() <= 3
        && !stem.is_empty()
        && !stem.contains('.')
        && !tail.is_empty()
        && tail.bytes().all(|b| b.is_ascii_digit())
}

/// Why `s` (a `/`-separated relative path) cannot be a file's place on every
/// designer's computer, or `None`. A pure function of the string, so it can be
/// checked anywhere (the workspace checks it again before writing).
pub fn placement_problem(s: &str) -> Option<String> {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    if let Some(c) = s.chars().find(|c| FORBIDDEN_CHARACTERS.contains(c)) {
        return Some(format!(
            "contains {c:?}, which Windows does not allow in a name (no \\ : < > \" | ? *)"
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| c.general_category() == GeneralCategory::Format)
    {
        return Some(format!(
            "contains U+{:04X}, an invisible format character (bidirectional controls, \
             zero-width characters and the like can disguise a name)",
            c as u32
        ));
    }
    for segment in s.split('/') {
        if segment.ends_with('.') || segment.ends_with(' ') {
            return Some(format!(
                "has {segment:?}, which ends in a dot or a space: Windows drops those, \
                 so the name would change on the way to disk"
            ));
        }
        if is_short_name_alias(segment) {
            return Some(format!(
                "has {segment:?}, which has the shape of a Windows short name (like \
                 PROGRA~1): there it can stand for another file's long name"
            ));
        }
        // The device is the part before the first dot, trailing spaces dropped.
        let base = segment
            .split('.')
            .next()
            .unwrap_or(segment)
            .trim_end_matches(' ');
        // (ASCII case only: Windows matches `com¹` as it matches `COM¹`.)
        if RESERVED_DEVICE_NAMES
            .iter()
            .any(|name| name.eq_ignore_ascii_case(base))
        {
            return Some(format!(
                "has {segment:?}: {base} is a device on Windows, in any case and with any extension"
            ));
        }
    }
    None
}

impl FromStr for RepoPath {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        use unicode_normalization::UnicodeNormalization;
        let nfc: String = s.nfc().collect();
        let path = Self::stored(&nfc)?;
        match path.placement_problem() {
            None => Ok(path),
            Some(why) => Err(Invalid(format!("path {s:?} {why}"))),
        }
    }
}

/// Deserialized as stored: a client must read every path a server lists,
/// including one stored before the placement rules.
impl TryFrom<String> for RepoPath {
    type Error = Invalid;
    fn try_from(s: String) -> Result<Self, Invalid> {
        Self::stored(&s)
    }
}

impl From<RepoPath> for String {
    fn from(p: RepoPath) -> String {
        p.0
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A content digest, `blake3:<64 lowercase hex>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub struct Digest(String);

impl Digest {
    pub fn hex(&self) -> &str {
        &self.0["blake3:".len()..]
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<blake3::Hash> for Digest {
    fn from(hash: blake3::Hash) -> Self {
        Self(format!("blake3:{}", hash.to_hex()))
    }
}

impl FromStr for Digest {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        let hex = s.strip_prefix("blake3:").unwrap_or("");
        if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(Self(s.to_owned()))
        } else {
            Err(Invalid(format!(
                "digest {s:?} must be blake3: and 64 lowercase hex digits"
            )))
        }
    }
}

impl TryFrom<String> for Digest {
    type Error = Invalid;
    fn try_from(s: String) -> Result<Self, Invalid> {
        s.parse()
    }
}

impl From<Digest> for String {
    fn from(d: Digest) -> String {
        d.0
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One committed version; an artifact's head is its newest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Head {
    #[ts(type = "number")]
    pub version: u64,
    pub digest: Digest,
    #[ts(type = "number")]
    pub size: u64,
    pub author: Participant,
    pub committed_at: DateTime<Utc>,
    /// The description given with the upload.
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum LeaseKind {
    Checkout,
    Edit,
}

/// The one live write lease an artifact may have.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Lease {
    /// `checkout:<id>:<participant>` or `edit:<id>`.
    pub holder: String,
    pub participant: Participant,
    pub kind: LeaseKind,
    pub checkout_id: Option<CheckoutId>,
    pub note: Option<String>,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Lease {
    pub fn checkout_holder(id: CheckoutId, participant: &Participant) -> String {
        format!("checkout:{id}:{participant}")
    }

    pub fn edit_holder(id: EditId) -> String {
        format!("edit:{id}")
    }

    pub fn is_live(&self, now: Timestamp) -> bool {
        self.expires_at > now
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Artifact {
    pub id: ArtifactId,
    pub path: RepoPath,
    pub head: Head,
    /// The live lease; a lapsed, released or broken one is not shown.
    pub lease: Option<Lease>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum CheckoutState {
    Open,
    Closed,
}

/// Who broke a check-out's lease, and why. Its holder's check-in becomes a proposal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Broken {
    pub by: Participant,
    pub reason: String,
    pub at: DateTime<Utc>,
}

/// A person's hold on a file, from check-out to check-in or cancel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Checkout {
    pub id: CheckoutId,
    pub artifact_id: ArtifactId,
    pub path: RepoPath,
    /// The version and digest checked out: every check-in's base.
    #[ts(type = "number")]
    pub version: u64,
    pub digest: Digest,
    pub actor: Participant,
    pub holder: String,
    pub note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub state: CheckoutState,
    pub result: Option<CheckinResult>,
    /// Set when an admin broke this check-out's lease.
    pub broken: Option<Broken>,
}

/// What a check-in or an edit's commit did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "outcome", rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum CheckinResult {
    Committed {
        #[ts(type = "number")]
        version: u64,
        digest: Digest,
    },
    Unchanged {
        #[ts(type = "number")]
        version: u64,
        digest: Digest,
    },
    Proposal {
        proposal: Proposal,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum ProposalState {
    Open,
    Accepted,
    Rejected,
    Superseded,
}

/// The version a stale change was made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Provenance {
    #[ts(type = "number")]
    pub version: u64,
    pub digest: Digest,
}

/// A stale check-in, kept against the head for review.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Proposal {
    pub id: ProposalId,
    pub artifact_id: ArtifactId,
    /// The head it was made against; accept requires the head's digest to still be `test_digest`.
    #[ts(type = "number")]
    pub base_version: u64,
    pub test_digest: Digest,
    pub provenance: Provenance,
    pub digest: Digest,
    #[ts(type = "number")]
    pub size: u64,
    pub author: Participant,
    pub checkout_id: Option<CheckoutId>,
    pub state: ProposalState,
    pub created_at: DateTime<Utc>,
    /// The description given with the upload.
    #[serde(default)]
    pub message: Option<String>,
}

/// An agent's short hold on a file, for one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Edit {
    pub id: EditId,
    pub artifact_id: ArtifactId,
    pub holder: String,
    pub participant: Participant,
    pub base_version: u64,
    pub base_digest: Digest,
    pub expires_at: DateTime<Utc>,
}

/// One fact on the append-only ledger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Event {
    #[ts(type = "number")]
    pub seq: u64,
    pub id: Uuid,
    #[serde(rename = "type")]
    pub kind: String,
    pub artifact_id: Option<ArtifactId>,
    pub participant: Option<Participant>,
    pub holder: Option<String>,
    pub at: DateTime<Utc>,
    #[schema(value_type = Object)]
    #[ts(type = "Record<string, unknown>")]
    pub data: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct EventPage {
    pub events: Vec<Event>,
    /// Ask for events after this sequence number next time.
    #[ts(type = "number")]
    pub next: u64,
}

/// `GET /v1/artifacts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ArtifactList {
    pub artifacts: Vec<Artifact>,
}

/// `GET /v1/artifacts/{id}/versions`, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VersionList {
    pub versions: Vec<Head>,
}

/// `GET /v1/checkouts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CheckoutList {
    pub checkouts: Vec<Checkout>,
}

/// `GET /v1/proposals`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProposalList {
    pub proposals: Vec<Proposal>,
}

/// Body of `POST /v1/artifacts/{id}/checkouts`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Which proposals to list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ProposalFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ProposalState>,
}

/// A participant known to the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Account {
    pub participant: Participant,
    pub admin: bool,
    pub created_at: DateTime<Utc>,
}

/// Checks a requested lease length and applies the default.
/// The longest description of a version or a proposal, in bytes of UTF-8.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// Checks a version's description: at most [`MAX_MESSAGE_BYTES`]; an empty
/// one is none.
pub fn check_message(message: Option<String>) -> Result<Option<String>, Invalid> {
    match message {
        Some(m) if m.len() > MAX_MESSAGE_BYTES => Err(Invalid(format!(
            "the description is {} bytes long, over the limit of {MAX_MESSAGE_BYTES}: nothing was stored",
            m.len()
        ))),
        Some(m) if m.is_empty() => Ok(None),
        other => Ok(other),
    }
}

/// What a preview is of: a version (the head when `version` is `None`) or a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreviewOf {
    Version {
        artifact: ArtifactId,
        version: Option<u64>,
    },
    Proposal(ProposalId),
}

/// Which events to read: those after `after` oldest first, or those before
/// `before` newest first (not both), of one artifact or all, at most `limit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventQuery {
    pub artifact: Option<ArtifactId>,
    pub after: Option<u64>,
    pub before: Option<u64>,
    pub limit: u32,
}

pub fn lease_seconds(requested: Option<u64>, default: u64) -> Result<u64, Invalid> {
    match requested.unwrap_or(default) {
        s @ 1..=MAX_TTL_SECONDS => Ok(s),
        s => Err(Invalid(format!(
            "ttl_seconds {s} is out of range: use 1 to {MAX_TTL_SECONDS}"
        ))),
    }
}

//! A studio's people and folders: devices and their invites, groups, and
//! folder permissions (`docs/API.md`, "Joining a studio" and "Folder
//! permissions"). Which rule decides for whom lives in `rules::access`.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use chrono::{DateTime, Utc};

use super::names::is_plain_name;
use super::{collision_key, Invalid, InviteId, Participant, RepoPath};

/// One computer of a participant: one token, listed and revocable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Device {
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// To the minute.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// The device a check-out was made on (`docs/API-additions.md`): its id
/// (the token's) and its name as its owner gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct DeviceRef {
    pub id: String,
    pub name: String,
}

/// A participant as an admin sees it: its flags and its devices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Member {
    pub participant: Participant,
    pub admin: bool,
    pub agent: bool,
    pub devices: Vec<Device>,
}

/// `GET /v1/participants`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MemberList {
    pub participants: Vec<Member>,
}

/// `GET /v1/groups`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GroupList {
    pub groups: Vec<Group>,
}

/// The caller's devices, and which one is asking.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct MyDevices {
    pub devices: Vec<Device>,
    pub current: String,
}

/// Who an invite is for: a new participant, or another device of one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteRequest {
    pub name: String,
    #[serde(default)]
    pub admin: bool,
    #[serde(default)]
    pub agent: bool,
    #[serde(default)]
    pub expires_seconds: Option<u64>,
}

/// An invite's code, shown once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Invite {
    pub code: String,
    pub participant: Participant,
    pub expires_at: DateTime<Utc>,
}

/// An invite not yet used nor lapsed, as an admin lists it: who it is
/// for, who made it and until when; never its code, which was shown once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct OpenInvite {
    pub id: InviteId,
    pub participant: Participant,
    /// Whether redeeming it makes an admin.
    pub admin: bool,
    /// Who made it: null for the store's owner (the CLI on the data folder
    /// or the database), and for invites made before this was kept.
    pub made_by: Option<Participant>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// `GET /v1/invites`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct InviteList {
    pub invites: Vec<OpenInvite>,
}

/// What redeeming an invite gives: the token of this device, shown once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Redeemed {
    pub participant: Participant,
    pub device: Device,
    pub token: String,
}

/// An invite lapses after a week unless told otherwise, and after 30 days at most.
pub const DEFAULT_INVITE_SECONDS: u64 = 7 * 24 * 3600;
pub const MAX_INVITE_SECONDS: u64 = 30 * 24 * 3600;

/// Checks an invite's lapse and applies the default.
pub fn invite_seconds(requested: Option<u64>) -> Result<u64, Invalid> {
    match requested.unwrap_or(DEFAULT_INVITE_SECONDS) {
        s @ 60..=MAX_INVITE_SECONDS => Ok(s),
        s => Err(Invalid(format!(
            "expires_seconds {s} is out of range: use 60 to {MAX_INVITE_SECONDS} (30 days)"
        ))),
    }
}

/// A device's name as its owner gave it: 1 to 64 characters, no control
/// characters, trimmed.
pub fn device_name(name: &str) -> Result<String, Invalid> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        return Err(Invalid(format!(
            "device name {name:?} must be 1 to 64 characters, none of them control characters"
        )));
    }
    Ok(name.to_owned())
}

/// A group's name: 1 to 64 letters, digits or `. _ - @`, like a participant's.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub struct GroupName(String);

impl FromStr for GroupName {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        if !is_plain_name(s) {
            return Err(Invalid(format!(
                "group name {s:?} must be 1 to 64 letters, digits or . _ - @"
            )));
        }
        Ok(Self(s.to_owned()))
    }
}

string_conversions!(parsed GroupName);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[ts(export)]
pub struct Group {
    pub name: GroupName,
    pub members: Vec<Participant>,
}

/// What a rule lets its people do in its folder.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum Level {
    /// The files do not exist for them.
    None,
    Read,
    Write,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Read => "read",
            Level::Write => "write",
        }
    }
}

impl FromStr for Level {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        match s {
            "none" => Ok(Level::None),
            "read" => Ok(Level::Read),
            "write" => Ok(Level::Write),
            _ => Err(Invalid(format!("level {s:?} must be none, read or write"))),
        }
    }
}

/// What the caller may do with an artifact it can see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum Access {
    Read,
    #[default]
    Write,
}

/// Whom a rule names.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
#[derive(ts_rs::TS)]
#[ts(export, type = "string")]
pub enum Who {
    Everyone,
    Group(GroupName),
    Participant(Participant),
}

impl FromStr for Who {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        if s == "everyone" {
            return Ok(Who::Everyone);
        }
        if let Some(name) = s.strip_prefix("group:") {
            return Ok(Who::Group(name.parse()?));
        }
        if s.starts_with("user:") || s.starts_with("agent:") {
            return Ok(Who::Participant(s.parse()?));
        }
        Err(Invalid(format!(
            "who {s:?} must be everyone, group:NAME, user:NAME or agent:NAME"
        )))
    }
}

impl TryFrom<String> for Who {
    type Error = Invalid;
    fn try_from(s: String) -> Result<Self, Invalid> {
        s.parse()
    }
}

impl From<Who> for String {
    fn from(who: Who) -> String {
        who.to_string()
    }
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::Everyone => f.write_str("everyone"),
            Who::Group(name) => write!(f, "group:{name}"),
            Who::Participant(participant) => write!(f, "{participant}"),
        }
    }
}

/// A folder's rule for someone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct Rule {
    /// A path prefix ending in `/`, or `""` for the whole store.
    #[serde(deserialize_with = "folder_field")]
    pub folder: String,
    /// `everyone`, `group:NAME`, `user:NAME` or `agent:NAME`.
    #[schema(value_type = String)]
    pub who: Who,
    pub level: Level,
}

impl Rule {
    /// A rule from its three words, each checked.
    pub fn parse(folder: &str, who: &str, level: &str) -> Result<Self, Invalid> {
        check_folder(folder)?;
        Ok(Rule {
            folder: folder.to_owned(),
            who: who.parse()?,
            level: level.parse()?,
        })
    }
}

/// The rules of a store, which replace all at once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct Rules {
    pub rules: Vec<Rule>,
}

/// The rules and groups as the store keeps them: one document, replaced whole.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions {
    pub rules: Vec<Rule>,
    pub groups: Vec<Group>,
}

/// Most rules a store keeps.
pub const MAX_RULES: usize = 10_000;

fn folder_field<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let text = String::deserialize(d)?;
    check_folder(&text).map_err(serde::de::Error::custom)?;
    Ok(text)
}

/// A rule's folder: `""` (the whole store), or a path that is valid as
/// stored, followed by `/`.
pub fn check_folder(folder: &str) -> Result<(), Invalid> {
    if folder.is_empty() {
        return Ok(());
    }
    let Some(path) = folder.strip_suffix('/') else {
        return Err(Invalid(format!(
            "folder {folder:?} must end with / (brand/), or be \"\" for every file"
        )));
    };
    RepoPath::stored(path)
        .map(|_| ())
        .map_err(|e| Invalid(format!("folder {folder:?} is not a folder's path: {e}")))
}

/// The key a folder's rules are filed under: its path's collision key, so a
/// rule on `finance/` also covers `Finance/` (one folder on Windows and macOS).
pub fn folder_key(folder: &str) -> String {
    collision_key(folder.strip_suffix('/').unwrap_or(folder))
}

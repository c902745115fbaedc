//! The domain's nouns, shaped as the objects of `docs/API.md` so that the
//! server serializes them as they are: ids and validated names (`names`,
//! `path`) apart from the API objects (`objects`). They know no error type
//! but their own `Invalid`: `error` depends on them, never the reverse.

use chrono::{DateTime, Utc};

/// `From<T> for String`, `Display` and `as_str` for a validated string
/// newtype: what every one of them gives back is the string it was parsed from.
/// `parsed` adds `TryFrom<String>` through its `FromStr`, for serde.
macro_rules! string_conversions {
    (parsed $name:ident) => {
        impl TryFrom<String> for $name {
            type Error = Invalid;
            fn try_from(s: String) -> Result<Self, Invalid> {
                s.parse()
            }
        }

        string_conversions!($name);
    };
    ($name:ident) => {
        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
    };
}

mod changes;
mod git;
mod listing;
mod names;
mod objects;
mod path;
mod requests;
mod review;
mod studio;
mod transfers;

pub use changes::*;
pub use git::*;
pub use listing::*;
pub use names::*;
pub use objects::*;
pub use path::*;
pub use requests::*;
pub use review::*;
pub use studio::*;
pub use transfers::*;

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

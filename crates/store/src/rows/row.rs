//! A row of either store, read by column index ([`Row`]), and the typed
//! reads of its columns: counts, times, parsed texts, paths, JSON.

use chrono::DateTime;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::*;

/// A row of either store, read by column index.
pub trait Row {
    fn int(&self, i: usize) -> Result<i64>;
    fn int_opt(&self, i: usize) -> Result<Option<i64>>;
    fn text(&self, i: usize) -> Result<String>;
    fn text_opt(&self, i: usize) -> Result<Option<String>>;
    fn flag(&self, i: usize) -> Result<bool>;
    fn bytes(&self, i: usize) -> Result<Vec<u8>>;
}

/// Each getter is the driver's own typed read of column `i`; the drivers
/// differ only in its name.
macro_rules! row_getters {
    ($get:ident) => {
        fn int(&self, i: usize) -> Result<i64> {
            Ok(self.$get(i)?)
        }
        fn int_opt(&self, i: usize) -> Result<Option<i64>> {
            Ok(self.$get(i)?)
        }
        fn text(&self, i: usize) -> Result<String> {
            Ok(self.$get(i)?)
        }
        fn text_opt(&self, i: usize) -> Result<Option<String>> {
            Ok(self.$get(i)?)
        }
        fn flag(&self, i: usize) -> Result<bool> {
            Ok(self.$get(i)?)
        }
        fn bytes(&self, i: usize) -> Result<Vec<u8>> {
            Ok(self.$get(i)?)
        }
    };
}

impl Row for rusqlite::Row<'_> {
    row_getters!(get);
}

#[cfg(feature = "postgres")]
impl Row for tokio_postgres::Row {
    row_getters!(try_get);
}

pub fn millis(t: Timestamp) -> i64 {
    t.timestamp_millis()
}

pub fn time(ms: i64) -> Result<Timestamp> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| Error::Internal(format!("a stored time is out of range: {ms}")))
}

pub fn unsigned(n: i64) -> Result<u64> {
    u64::try_from(n).map_err(|_| Error::Internal(format!("a stored count is negative: {n}")))
}

/// A stored count or version, as a `u64`.
pub fn count(row: &(impl Row + ?Sized), i: usize) -> Result<u64> {
    unsigned(row.int(i)?)
}

/// A stored time.
pub fn time_at(row: &(impl Row + ?Sized), i: usize) -> Result<Timestamp> {
    time(row.int(i)?)
}

/// A stored text column parsed into a domain type.
pub fn parsed<T: std::str::FromStr>(row: &(impl Row + ?Sized), i: usize) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    let text = row.text(i)?;
    text.parse()
        .map_err(|e| Error::Internal(format!("a stored value cannot be read ({text:?}): {e}")))
}

pub fn parsed_opt<T: std::str::FromStr>(row: &(impl Row + ?Sized), i: usize) -> Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    match row.text_opt(i)? {
        None => Ok(None),
        Some(_) => parsed(row, i).map(Some),
    }
}

/// A stored path, as older versions' rules allowed it (it may be one that
/// cannot be placed on a computer: it must stay readable).
pub fn stored_path(row: &(impl Row + ?Sized), i: usize) -> Result<RepoPath> {
    let text = row.text(i)?;
    RepoPath::stored(&text)
        .map_err(|e| Error::Internal(format!("a stored path cannot be read ({text:?}): {e}")))
}

pub fn json<T: for<'de> Deserialize<'de>>(
    row: &(impl Row + ?Sized),
    i: usize,
) -> Result<Option<T>> {
    match row.text_opt(i)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Internal(format!("a stored result cannot be read: {e}"))),
    }
}

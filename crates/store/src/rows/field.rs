//! What a write binds: a column's value as each driver takes it
//! ([`Field`]), and a statement of the shared SQL with its parameters
//! ([`Statement`]).

#[cfg(feature = "postgres")]
use bytes::BytesMut;
use serde::Serialize;
#[cfg(feature = "postgres")]
use tokio_postgres::types::{IsNull, ToSql as PgToSql, Type};

use crate::error::{Error, Result};

/// A column's type, as both schemas have it.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Int,
    Text,
    Bool,
}

/// One column's value: as a write binds it, or in transit from one store to
/// the other (`migrate`).
#[derive(Clone, Debug)]
pub enum Field {
    Int(Option<i64>),
    Text(Option<String>),
    Bool(bool),
}

impl rusqlite::ToSql for Field {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Field::Int(n) => rusqlite::ToSql::to_sql(n),
            Field::Text(t) => rusqlite::ToSql::to_sql(t),
            Field::Bool(b) => rusqlite::ToSql::to_sql(b),
        }
    }
}

/// What binding a value for PostgreSQL gives.
#[cfg(feature = "postgres")]
type PgBound = std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>>;

#[cfg(feature = "postgres")]
impl PgToSql for Field {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> PgBound {
        match self {
            Field::Int(n) => n.to_sql(ty, out),
            Field::Text(t) => t.to_sql(ty, out),
            Field::Bool(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <i64 as PgToSql>::accepts(ty)
            || <String as PgToSql>::accepts(ty)
            || <bool as PgToSql>::accepts(ty)
    }

    /// Checked against the variant's own type, not any of the three.
    fn to_sql_checked(&self, ty: &Type, out: &mut BytesMut) -> PgBound {
        match self {
            Field::Int(n) => n.to_sql_checked(ty, out),
            Field::Text(t) => t.to_sql_checked(ty, out),
            Field::Bool(b) => b.to_sql_checked(ty, out),
        }
    }
}

/// A number for an INTEGER or BIGINT column; ours never pass 2^63 - 1.
pub fn signed(n: u64) -> Result<i64> {
    i64::try_from(n).map_err(|_| Error::Invalid(format!("{n} is out of range")))
}

/// A statement both stores run, with its parameters in the order of their
/// numbers. Made only here, by the statements of `rows`; a store runs it
/// through its `Sql`, or takes its SQL to wrap in its own.
#[derive(Clone, Debug)]
pub struct Statement {
    sql: String,
    params: Vec<Field>,
}

impl Statement {
    pub(crate) fn new(sql: String, params: Vec<Field>) -> Self {
        Self { sql, params }
    }

    pub fn sql(&self) -> &str {
        &self.sql
    }

    pub fn params(&self) -> &[Field] {
        &self.params
    }

    pub fn into_params(self) -> Vec<Field> {
        self.params
    }
}

pub(crate) fn int(n: i64) -> Field {
    Field::Int(Some(n))
}

pub(crate) fn count_field(n: u64) -> Result<Field> {
    Ok(int(signed(n)?))
}

pub(crate) fn text(t: impl ToString) -> Field {
    Field::Text(Some(t.to_string()))
}

pub(crate) fn text_opt(t: Option<impl ToString>) -> Field {
    Field::Text(t.map(|t| t.to_string()))
}

/// A statement whose one parameter, `1`, is a row's key.
pub(crate) fn by_key(sql: String, key: impl ToString) -> Statement {
    Statement::new(sql, vec![text(key)])
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("stored values serialize")
}

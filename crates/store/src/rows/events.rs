//! The ledger of events: its columns, and the page of it both stores read.

use super::field::{int, text};
use super::{count, parsed, parsed_opt, time_at, Row, Statement};
use crate::error::Result;
use crate::model::*;
use crate::EventRows;

pub const EVENT_COLUMNS: &str = "seq, id, type, artifact_id, participant, holder, at, data";

pub fn event(row: &(impl Row + ?Sized)) -> Result<Event> {
    let data = row.text(7)?;
    Ok(Event {
        seq: count(row, 0)?,
        id: parsed(row, 1)?,
        kind: row.text(2)?,
        artifact_id: parsed_opt(row, 3)?,
        participant: parsed_opt(row, 4)?,
        holder: row.text_opt(5)?,
        at: time_at(row, 6)?,
        data: serde_json::from_str(&data).unwrap_or(serde_json::Value::Null),
    })
}

/// One [`EventRows`] page: 1 the bound, 2 the limit, 3 the artifact.
pub fn select_events(p: char, page: &EventRows) -> Statement {
    let (cmp, order) = match page.older {
        false => (">", ""),
        true => ("<", " DESC"),
    };
    let mut params = vec![int(page.bound), int(page.limit.into())];
    let artifact = match page.artifact {
        Some(id) => {
            params.push(text(id));
            format!("artifact_id = {p}3 AND ")
        }
        None => String::new(),
    };
    Statement::new(
        format!(
            "SELECT {EVENT_COLUMNS} FROM events
             WHERE {artifact}seq {cmp} {p}1 ORDER BY seq{order} LIMIT {p}2"
        ),
        params,
    )
}

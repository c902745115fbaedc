//! Writes held back to go out as one statement (see [`PgTx::hold`]): a
//! lease pair's lease, edit and artifact row in one round trip.

use super::{Owned, PgTx};
use crate::error::Result;
use crate::model::ArtifactId;

/// Writes held back to go out as one statement with the next statement
/// sent, or the commit: each artifact's row written once (its touch and
/// the lease epochs counted, in one `UPDATE`), then the others, no two of
/// one row.
#[derive(Default)]
pub(crate) struct HeldWrites {
    /// Each artifact written: the time it was touched at, and the lease
    /// epochs counted.
    artifacts: Vec<(ArtifactId, Option<i64>, u64)>,
    /// The other writes: the row each writes (its table and key), its
    /// query (parameters from `$1`) and parameters.
    others: Vec<(HeldRow, String, Vec<Owned>)>,
}

/// A row a held write writes: its table and key.
pub(crate) type HeldRow = (&'static str, String);

/// The most writes held at once. A lease pair holds three; a sweep of many
/// lapsed leases would otherwise send one statement of thousands of queries
/// (past the protocol's 65,535 parameters), each count a statement of a new
/// shape for the connection to prepare and keep.
const MOST_HELD: usize = 8;

impl HeldWrites {
    pub(super) fn is_empty(&self) -> bool {
        self.artifacts.is_empty() && self.others.is_empty()
    }

    fn is_full(&self) -> bool {
        self.artifacts.len() + self.others.len() >= MOST_HELD
    }

    fn holds_artifact(&self, id: ArtifactId) -> bool {
        self.artifacts.iter().any(|(a, ..)| *a == id)
    }

    fn artifact(&mut self, id: ArtifactId) -> &mut (ArtifactId, Option<i64>, u64) {
        let at = match self.artifacts.iter().position(|(a, ..)| *a == id) {
            Some(at) => at,
            None => {
                self.artifacts.push((id, None, 0));
                self.artifacts.len() - 1
            }
        };
        &mut self.artifacts[at]
    }

    /// The writes as one statement, and its parameters.
    fn statement(self) -> (String, Vec<Owned>) {
        let mut queries = Vec::new();
        let mut params: Vec<Owned> = Vec::new();
        for (id, touched_at, epochs) in self.artifacts {
            params.push(Box::new(id.to_string()));
            let id_param = params.len();
            let mut set = Vec::new();
            if epochs > 0 {
                params.push(Box::new(epochs as i64));
                set.push(format!("lease_epoch = lease_epoch + ${}", params.len()));
            }
            if let Some(at) = touched_at {
                params.push(Box::new(at));
                set.push(format!(
                    "touched_at = GREATEST(touched_at, ${})",
                    params.len()
                ));
            }
            queries.push(format!(
                "UPDATE artifacts SET {} WHERE id = ${id_param}",
                set.join(", ")
            ));
        }
        for (_, sql, mut own) in self.others {
            queries.push(numbered_after(&sql, params.len()));
            params.append(&mut own);
        }
        (one_statement(&queries), params)
    }
}

/// `queries` as one statement: all but the last in its `WITH`. PostgreSQL
/// runs every query of a `WITH` on one snapshot, none seeing another's
/// writes: they must touch different rows and not read what the others
/// write.
fn one_statement(queries: &[String]) -> String {
    let (last, with) = queries.split_last().expect("a statement has a query");
    if with.is_empty() {
        return last.clone();
    }
    let named: Vec<String> = with
        .iter()
        .enumerate()
        .map(|(i, query)| format!("w{i} AS ({query})"))
        .collect();
    format!("WITH {} {last}", named.join(", "))
}

/// `sql` with each parameter `$n` renumbered `$(n + by)`. Our statements
/// hold no `$` but their parameters'.
fn numbered_after(sql: &str, by: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        out.push(c);
        if c != '$' {
            continue;
        }
        let mut digits = String::new();
        while let Some((_, d)) = chars.next_if(|(_, d)| d.is_ascii_digit()) {
            digits.push(d);
        }
        if let Ok(n) = digits.parse::<usize>() {
            out.push_str(&(n + by).to_string());
        } else {
            out.push_str(&digits);
        }
    }
    out
}

impl PgTx<'_> {
    /// Holds a write of `row` back, to go out with the other held writes
    /// as one statement; a second write of the same row sends those first.
    /// Only writes that read nothing another held write writes are held.
    pub(crate) fn hold(&self, row: HeldRow, sql: &str, params: Vec<Owned>) -> Result<()> {
        // A write: what was read ahead may be stale.
        self.prefetched.take();
        let send_first = {
            let held = self.held_writes.borrow();
            held.is_full() || held.others.iter().any(|(r, ..)| *r == row)
        };
        if send_first {
            self.send_held()?;
        }
        self.held_writes
            .borrow_mut()
            .others
            .push((row, sql.to_owned(), params));
        Ok(())
    }

    /// Counts a lease taken on `artifact`, held (see [`PgTx::hold`]).
    pub(crate) fn hold_epoch(&self, artifact: ArtifactId) -> Result<()> {
        self.prefetched.take();
        self.make_room_for(artifact)?;
        self.held_writes.borrow_mut().artifact(artifact).2 += 1;
        Ok(())
    }

    /// Writes `artifact`'s row, held (see [`PgTx::hold`]), once in this
    /// write: its `touched_at` keeps this write's time.
    pub(super) fn hold_touch(&self, artifact: ArtifactId, at: i64) -> Result<()> {
        if self.held.borrow_mut().touched.insert(artifact) {
            self.make_room_for(artifact)?;
            self.held_writes.borrow_mut().artifact(artifact).1 = Some(at);
        }
        Ok(())
    }

    /// Sends the held writes first if `artifact`'s row would be one write
    /// too many (see [`MOST_HELD`]).
    fn make_room_for(&self, artifact: ArtifactId) -> Result<()> {
        let full = {
            let held = self.held_writes.borrow();
            held.is_full() && !held.holds_artifact(artifact)
        };
        if full {
            self.send_held()?;
        }
        Ok(())
    }

    /// Queues the held writes as one statement.
    pub(super) fn send_held(&self) -> Result<()> {
        let held = std::mem::take(&mut *self.held_writes.borrow_mut());
        if held.is_empty() {
            return Ok(());
        }
        let (sql, params) = held.statement();
        self.defer(&sql, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tx::owned;

    #[test]
    fn held_writes_go_as_one_statement_writing_each_artifact_once() {
        let artifact = ArtifactId::new();
        let mut held = HeldWrites::default();
        held.artifact(artifact).1 = Some(5);
        held.artifact(artifact).2 += 1;
        held.others.push((
            ("leases", artifact.to_string()),
            "DELETE FROM leases WHERE artifact_id = $1".into(),
            owned![artifact.to_string()],
        ));
        held.others.push((
            ("edits", "e".into()),
            "INSERT INTO edits (id, state, note) VALUES ($1, $2, $10)".into(),
            owned![String::from("e"), String::from("open"), 7i64],
        ));
        let (sql, params) = held.statement();
        assert_eq!(
            sql,
            "WITH w0 AS (UPDATE artifacts SET lease_epoch = lease_epoch + $2, \
             touched_at = GREATEST(touched_at, $3) WHERE id = $1), \
             w1 AS (DELETE FROM leases WHERE artifact_id = $4) \
             INSERT INTO edits (id, state, note) VALUES ($5, $6, $14)"
        );
        assert_eq!(params.len(), 7);
    }
}

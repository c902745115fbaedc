//! The app's mirror of the studio's list, in the workspace's own SQLite
//! file: every artifact the designer may read, by id, with the event
//! sequence number it is exact as of. A resync fills a second table and
//! swaps it in with one transaction, so a mirror is always whole: as it was
//! before, or complete. Desk keeps it up to date (`desk::mirror`); here are
//! its rows only.

use rusqlite::{params, OptionalExtension, Transaction};

use super::index::Index;
use crate::error::{Error, Result};
use crate::model::{Artifact, ArtifactId};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS mirror (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    artifact TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mirror_by_path ON mirror (path);
CREATE TABLE IF NOT EXISTS mirror_filling (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    artifact TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mirror_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    origin TEXT NOT NULL,
    seq INTEGER NOT NULL
);
";

/// Which of the two tables a change goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// The mirror the window reads.
    Mirror,
    /// The one a resync fills, swapped in when it is complete.
    Filling,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Mirror => "mirror",
            Table::Filling => "mirror_filling",
        }
    }
}

/// A change to one row: the artifact as now read, or gone (deleted, or
/// hidden from the designer).
#[derive(Clone, Debug, PartialEq)]
pub enum RowChange {
    Put(Box<Artifact>),
    Gone(ArtifactId),
}

/// What the mirror is of and as of when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorState {
    /// The server and participant it lists for (a mirror of another is
    /// not this one's).
    pub origin: String,
    pub seq: u64,
}

fn json_error(e: serde_json::Error) -> Error {
    Error::Internal(format!("the mirror's row: {e}"))
}

fn apply(tx: &Transaction, table: Table, changes: &[RowChange]) -> Result<()> {
    let name = table.name();
    let mut put = tx.prepare_cached(&format!(
        "INSERT OR REPLACE INTO {name} (id, path, artifact) VALUES (?1, ?2, ?3)"
    ))?;
    let mut gone = tx.prepare_cached(&format!("DELETE FROM {name} WHERE id = ?1"))?;
    for change in changes {
        match change {
            RowChange::Put(a) => {
                let json = serde_json::to_string(a).map_err(json_error)?;
                put.execute(params![a.id.to_string(), a.path.as_str(), json])?;
            }
            RowChange::Gone(id) => {
                gone.execute([id.to_string()])?;
            }
        }
    }
    Ok(())
}

/// Makes the mirror's tables in the workspace's file, if missing.
pub(super) fn create_tables(index: &Index) -> Result<()> {
    index.conn().execute_batch(SCHEMA)?;
    Ok(())
}

impl Index {
    pub fn mirror_state(&self) -> Result<Option<MirrorState>> {
        Ok(self
            .conn()
            .query_row("SELECT origin, seq FROM mirror_state", [], |r| {
                Ok(MirrorState {
                    origin: r.get(0)?,
                    seq: r.get(1)?,
                })
            })
            .optional()?)
    }

    /// Empties the table a resync fills.
    pub fn begin_filling(&self) -> Result<()> {
        self.conn().execute("DELETE FROM mirror_filling", [])?;
        Ok(())
    }

    /// Applies `changes` to `table`; to the mirror, as of `seq` (in the
    /// same transaction, so the mirror and its sequence number agree).
    pub fn apply_to_mirror(
        &self,
        table: Table,
        changes: &[RowChange],
        seq: Option<u64>,
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        apply(&tx, table, changes)?;
        if let Some(seq) = seq {
            tx.execute("UPDATE mirror_state SET seq = ?1", [seq])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Makes the filled table the mirror, of `origin` as of `seq`, in one
    /// transaction.
    pub fn finish_filling(&self, origin: &str, seq: u64) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute_batch(
            "DELETE FROM mirror;
             INSERT INTO mirror SELECT * FROM mirror_filling;
             DELETE FROM mirror_filling;
             DELETE FROM mirror_state;",
        )?;
        tx.execute(
            "INSERT INTO mirror_state (one, origin, seq) VALUES (1, ?1, ?2)",
            params![origin, seq],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The mirror's artifacts under `folder` (`""`: all), by path, after
    /// `after`, at most `limit`.
    pub fn mirror_page(
        &self,
        folder: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Artifact>> {
        let end = crate::model::folder_range_end(folder);
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT artifact FROM mirror
             WHERE path > ?1 AND path >= ?2 AND (?3 IS NULL OR path < ?3)
             ORDER BY path LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![after.unwrap_or(""), folder, end, limit], |r| {
            r.get::<_, String>(0)
        })?;
        rows.map(|json| serde_json::from_str(&json?).map_err(json_error))
            .collect()
    }
}

//! The app's mirror of the studio's list, in the workspace's own SQLite
//! file: every artifact the designer may read, by id, with the event
//! sequence number it is exact as of. A resync fills a second table and
//! swaps it in with one transaction, so a mirror is always whole: as it was
//! before, or complete. Desk keeps it up to date (`desk::mirror`); here are
//! its rows only.

use std::collections::BTreeMap;

use rusqlite::types::Value;
use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

use super::index::Index;
use crate::error::{Error, Result};
use crate::model::{
    folder_range_end, folders_above, Artifact, ArtifactId, FolderCount, FolderList,
};

/// Each table of rows has a table of its folders' counts (`files` and
/// `held` at any depth beneath, the whole list's as `""`), kept in the
/// transaction that changes a row, as the server keeps its own: the tree
/// and a folder's length are then one read, whatever the studio's size.
/// A row's keys of the other orders (its head's size, save time in
/// microseconds and version, its holder or `""`) are columns, each with an
/// index by key and path: a folder's files in that order are a walk along
/// it (`SortKey`).
///
/// The mirror and the table a resync fills have one definition, so the
/// swap's `INSERT ... SELECT *` lines their columns up; only the mirror is
/// indexed.
fn schema() -> String {
    let mut sql = String::new();
    for table in [Table::Mirror, Table::Filling] {
        let (rows, folders) = (table.name(), table.folders());
        sql += &format!(
            "
CREATE TABLE IF NOT EXISTS {rows} (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    held INTEGER NOT NULL,
    artifact TEXT NOT NULL,
    size INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    version INTEGER NOT NULL,
    holder TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {folders} (
    path TEXT PRIMARY KEY,
    parent TEXT,
    files INTEGER NOT NULL,
    held INTEGER NOT NULL
) WITHOUT ROWID;"
        );
    }
    sql + "
CREATE INDEX IF NOT EXISTS mirror_by_path ON mirror (path);
CREATE INDEX IF NOT EXISTS mirror_by_size ON mirror (size, path);
CREATE INDEX IF NOT EXISTS mirror_by_modified ON mirror (modified, path);
CREATE INDEX IF NOT EXISTS mirror_by_version ON mirror (version, path);
CREATE INDEX IF NOT EXISTS mirror_by_holder ON mirror (holder, path);
CREATE INDEX IF NOT EXISTS mirror_folders_by_parent ON mirror_folders (parent, path);
CREATE TABLE IF NOT EXISTS mirror_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    origin TEXT NOT NULL,
    seq INTEGER NOT NULL
);
"
}

/// A mirror made before it kept folders, or before it kept the keys of
/// its orders, is dropped, to be filled anew.
const BEFORE_KEYS: &str = "
DROP TABLE IF EXISTS mirror;
DROP TABLE IF EXISTS mirror_filling;
DROP TABLE IF EXISTS mirror_folders;
DROP TABLE IF EXISTS mirror_filling_folders;
DROP TABLE IF EXISTS mirror_state;
";

/// What a folder's files can be listed by: their path, or another key
/// with ties by path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum SortKey {
    #[default]
    Path,
    /// The head's size.
    Size,
    /// The head's save time.
    Modified,
    /// The head's version.
    Version,
    /// Who holds it (its participant); free files first.
    Holder,
}

/// An order of a folder's files: a key, and whether it is reversed (ties
/// too: the walk is the index's backwards).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct ListOrder {
    pub by: SortKey,
    #[serde(default)]
    pub descending: bool,
}

impl ListOrder {
    pub const PATH: ListOrder = ListOrder {
        by: SortKey::Path,
        descending: false,
    };

    /// The key's column and its index; `path` for `Path`.
    fn column(self) -> (&'static str, &'static str) {
        match self.by {
            SortKey::Path => ("path", "mirror_by_path"),
            SortKey::Size => ("size", "mirror_by_size"),
            SortKey::Modified => ("modified", "mirror_by_modified"),
            SortKey::Version => ("version", "mirror_by_version"),
            SortKey::Holder => ("holder", "mirror_by_holder"),
        }
    }
}

/// A place in an order: the key there (none by path) and the path.
#[derive(Clone, Debug, PartialEq)]
pub struct Cursor {
    key: Value,
    pub path: String,
}

/// A folder holding fewer than one file in this many of the mirror's is
/// listed by key from its paths, sorted (at most that share of the files);
/// a larger one by a walk along the key's index, which passes the other
/// folders' files (at most this many for each of its own).
const WALK_SHARE: u64 = 32;

/// The keys of the orders for a row: size, modified (µs), version, holder.
fn keys(a: &Artifact) -> (i64, i64, i64, String) {
    (
        i64::try_from(a.head.size).unwrap_or(i64::MAX),
        a.head.committed_at.timestamp_micros(),
        i64::try_from(a.head.version).unwrap_or(i64::MAX),
        a.lease
            .as_ref()
            .map_or_else(String::new, |l| l.participant.to_string()),
    )
}

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

    fn folders(self) -> &'static str {
        match self {
            Table::Mirror => "mirror_folders",
            Table::Filling => "mirror_filling_folders",
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

impl RowChange {
    fn id(&self) -> ArtifactId {
        match self {
            RowChange::Put(a) => a.id,
            RowChange::Gone(id) => *id,
        }
    }
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

fn artifact_of(json: rusqlite::Result<String>) -> Result<Artifact> {
    serde_json::from_str(&json?).map_err(json_error)
}

/// Files and held files a change adds to each folder (negative: takes away).
type Counts = BTreeMap<String, (Option<String>, i64, i64)>;

fn count(counts: &mut Counts, path: &str, held: bool, sign: i64) {
    for (folder, parent) in folders_above(path) {
        let entry = counts
            .entry(folder.to_owned())
            .or_insert_with(|| (parent.map(str::to_owned), 0, 0));
        entry.1 += sign;
        entry.2 += sign * i64::from(held);
    }
}

/// What a change to the mirror moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// A file came, went or moved: which file is at which place by path.
    pub moved: bool,
    /// That, or a row's key of another order changed (its size, save
    /// time, version or holder): places in those orders.
    pub reordered: bool,
}

/// Applies `changes` to `table` and its folders' counts; what moved
/// (which file is at which place in a folder, not only how a row reads).
fn apply(tx: &Transaction, table: Table, changes: &[RowChange]) -> Result<Applied> {
    let (name, folders) = (table.name(), table.folders());
    let mut was = tx.prepare_cached(&format!(
        "SELECT path, held, size, modified, version, holder FROM {name} WHERE id = ?1"
    ))?;
    let mut put = tx.prepare_cached(&format!(
        "INSERT OR REPLACE INTO {name} (id, path, held, artifact, size, modified, version, holder)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    ))?;
    let mut gone = tx.prepare_cached(&format!("DELETE FROM {name} WHERE id = ?1"))?;
    let mut counts = Counts::new();
    let mut applied = Applied::default();
    for change in changes {
        let id = change.id().to_string();
        type Was = (String, bool, (i64, i64, i64, String));
        let before: Option<Was> = was
            .query_row([&id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    (r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?),
                ))
            })
            .optional()?;
        if let Some((path, held, _)) = &before {
            count(&mut counts, path, *held, -1);
        }
        match change {
            RowChange::Put(a) => {
                let held = a.lease.is_some();
                count(&mut counts, a.path.as_str(), held, 1);
                let keys = keys(a);
                applied.moved |= before
                    .as_ref()
                    .is_none_or(|(path, _, _)| path != a.path.as_str());
                applied.reordered |= before.as_ref().is_none_or(|(_, _, was)| *was != keys);
                let json = serde_json::to_string(a).map_err(json_error)?;
                let (size, modified, version, holder) = keys;
                put.execute(params![
                    id,
                    a.path.as_str(),
                    held,
                    json,
                    size,
                    modified,
                    version,
                    holder
                ])?;
            }
            RowChange::Gone(_) => {
                applied.moved |= before.is_some();
                gone.execute([&id])?;
            }
        }
    }
    applied.reordered |= applied.moved;
    let mut add = tx.prepare_cached(&format!(
        "INSERT INTO {folders} (path, parent, files, held) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (path) DO UPDATE SET files = files + excluded.files, held = held + excluded.held"
    ))?;
    let mut empty = tx.prepare_cached(&format!(
        "DELETE FROM {folders} WHERE path = ?1 AND files <= 0"
    ))?;
    for (folder, (parent, files, held)) in counts {
        if files != 0 || held != 0 {
            add.execute(params![folder, parent, files, held])?;
            empty.execute([&folder])?;
        }
    }
    Ok(applied)
}

/// The lowest path of `folder` (`""`: all) at or after `from`: one bound,
/// so the path index is entered there and not walked to it.
fn lower_bound<'a>(folder: &'a str, from: Option<&'a str>) -> &'a str {
    from.filter(|from| *from > folder).unwrap_or(folder)
}

/// Makes the mirror's tables in the workspace's file, if missing.
pub(super) fn create_tables(index: &Index) -> Result<()> {
    let conn = index.conn();
    if conn.prepare("SELECT holder FROM mirror LIMIT 0").is_err() {
        conn.execute_batch(BEFORE_KEYS)?;
    }
    conn.execute_batch(&schema())?;
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
        self.conn().execute_batch(
            "DELETE FROM mirror_filling;
             DELETE FROM mirror_filling_folders;",
        )?;
        Ok(())
    }

    /// Applies `changes` to `table`; to the mirror, as of `seq` (in the
    /// same transaction, so the mirror and its sequence number agree).
    /// What moved.
    pub fn apply_to_mirror(
        &self,
        table: Table,
        changes: &[RowChange],
        seq: Option<u64>,
    ) -> Result<Applied> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let moved = apply(&tx, table, changes)?;
        if let Some(seq) = seq {
            tx.execute("UPDATE mirror_state SET seq = ?1", [seq])?;
        }
        tx.commit()?;
        Ok(moved)
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
             DELETE FROM mirror_folders;
             INSERT INTO mirror_folders SELECT * FROM mirror_filling_folders;
             DELETE FROM mirror_filling_folders;
             DELETE FROM mirror_state;",
        )?;
        tx.execute(
            "INSERT INTO mirror_state (one, origin, seq) VALUES (1, ?1, ?2)",
            params![origin, seq],
        )?;
        tx.commit()?;
        // The swap wrote the whole list to the write-ahead log: folded into
        // the file now and the log emptied, a start after a crash does not
        // read it all back (a million files' log made a start 0.6 s slower).
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
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
        let end = folder_range_end(folder);
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT artifact FROM mirror
             WHERE path > ?1 AND path >= ?2 AND (?3 IS NULL OR path < ?3)
             ORDER BY path LIMIT ?4",
        )?;
        let from = lower_bound(folder, after);
        let rows = stmt.query_map(params![after.unwrap_or(""), from, end, limit], |r| r.get(0))?;
        rows.map(artifact_of).collect()
    }

    /// The place `skip` after `from` (or after the folder's first) among
    /// the files under `folder` in `order`, as a cursor to read from. Read
    /// along the order's index; for a folder of under one file in
    /// [`WALK_SHARE`], from its paths sorted (see [`Index::sorted`]).
    pub fn mirror_cursor_at(
        &self,
        folder: &str,
        order: ListOrder,
        from: Option<&Cursor>,
        skip: u64,
    ) -> Result<Option<Cursor>> {
        let skip = i64::try_from(skip).unwrap_or(i64::MAX);
        let keyed = order.by != SortKey::Path;
        let select = if keyed {
            format!("{}, path", order.column().0)
        } else {
            "NULL, path".to_owned()
        };
        let (sql, mut values) = self.sorted(folder, order, from, &select)?;
        values.push(Value::Integer(1));
        values.push(Value::Integer(skip));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{sql} LIMIT ? OFFSET ?"))?;
        Ok(stmt
            .query_row(rusqlite::params_from_iter(values), |r| {
                Ok(Cursor {
                    key: r.get(0)?,
                    path: r.get(1)?,
                })
            })
            .optional()?)
    }

    /// The mirror's artifacts under `folder` in `order`, from the place
    /// `from` on (or from the folder's first), at most `limit`.
    pub fn mirror_rows_in(
        &self,
        folder: &str,
        order: ListOrder,
        from: Option<&Cursor>,
        limit: u32,
    ) -> Result<Vec<Artifact>> {
        let (sql, mut values) = self.sorted(folder, order, from, "artifact")?;
        values.push(Value::Integer(limit.into()));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{sql} LIMIT ?"))?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| r.get(0))?;
        rows.map(artifact_of).collect()
    }

    /// The query of `select` for the files under `folder` in `order` from
    /// `from` on (inclusive), and its values, a limit to add. By path, one
    /// range of the path index. By another key, a folder of at least one
    /// file in [`WALK_SHARE`] is a walk along the key's index (key, path)
    /// from the cursor, passing the files of other folders: a page costs
    /// its rows times the share, and no sort. A smaller folder is its range
    /// of paths sorted by key: at most that share of the mirror, read
    /// whole only to the page asked for (SQLite keeps the top rows).
    fn sorted(
        &self,
        folder: &str,
        order: ListOrder,
        from: Option<&Cursor>,
        select: &str,
    ) -> Result<(String, Vec<Value>)> {
        let end = folder_range_end(folder).map_or(Value::Null, Value::Text);
        let dir = if order.descending { "DESC" } else { "ASC" };
        if order.by == SortKey::Path {
            // One lower and one upper bound, so the index is entered at the
            // cursor and not walked to it.
            let (lower, upper, below) = match (from, order.descending) {
                (Some(from), false) => (lower_bound(folder, Some(&from.path)), end, "<"),
                (Some(from), true) => (folder, Value::Text(from.path.clone()), "<="),
                (None, _) => (folder, end, "<"),
            };
            // An upper bound only when there is one (see below).
            let (bound, values) = match upper {
                Value::Null => (String::new(), vec![Value::Text(lower.to_owned())]),
                upper => (
                    format!("AND path {below} ?"),
                    vec![Value::Text(lower.to_owned()), upper],
                ),
            };
            let sql = format!(
                "SELECT {select} FROM mirror INDEXED BY mirror_by_path
                 WHERE path >= ? {bound} ORDER BY path {dir}"
            );
            return Ok((sql, values));
        }
        let (column, index) = order.column();
        let files = self.mirror_count(folder)?.files;
        let all = self.mirror_count("")?.files;
        let via = if folder.is_empty() || files.saturating_mul(WALK_SHARE) >= all {
            index
        } else {
            "mirror_by_path"
        };
        // The upper bound written only when there is one: `?2 IS NULL OR`
        // would keep SQLite from ending the range there, and a small folder
        // would read every path after it.
        let mut values = vec![Value::Text(folder.to_owned())];
        let below = match end {
            Value::Null => "",
            end => {
                values.push(end);
                "AND path < ?"
            }
        };
        let after = match from {
            Some(from) => {
                values.push(from.key.clone());
                values.push(Value::Text(from.path.clone()));
                let cmp = if order.descending { "<=" } else { ">=" };
                format!("AND ({column}, path) {cmp} (?, ?)")
            }
            None => String::new(),
        };
        let sql = format!(
            "SELECT {select} FROM mirror INDEXED BY {via}
             WHERE path >= ? {below} {after}
             ORDER BY {column} {dir}, path {dir}"
        );
        Ok((sql, values))
    }

    /// The files under `folder` (at any depth) and how many of them are held.
    pub fn mirror_count(&self, folder: &str) -> Result<FolderCount> {
        let (files, held) = self
            .conn()
            .prepare_cached("SELECT files, held FROM mirror_folders WHERE path = ?1")?
            .query_row([folder], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .unwrap_or((0, 0));
        Ok(FolderCount {
            path: folder.to_owned(),
            files,
            held,
        })
    }

    /// The folders directly under `folder`, with their counts, and how many
    /// files are in it directly: `GET /v1/folders` as the mirror has it.
    pub fn mirror_folders(&self, folder: &str) -> Result<FolderList> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT path, files, held FROM mirror_folders WHERE parent = ?1 ORDER BY path",
        )?;
        let folders = stmt
            .query_map([folder], |r| {
                Ok(FolderCount {
                    path: r.get(0)?,
                    files: r.get(1)?,
                    held: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        drop(stmt);
        drop(conn);
        let beneath: u64 = folders.iter().map(|f| f.files).sum();
        Ok(FolderList {
            files: self.mirror_count(folder)?.files.saturating_sub(beneath),
            folders,
        })
    }

    /// The mirror's artifacts with these ids (those it has), in no order.
    pub fn mirror_artifacts(&self, ids: &[ArtifactId]) -> Result<Vec<Artifact>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT artifact FROM mirror WHERE id = ?1")?;
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(json) = stmt.query_row([id.to_string()], |r| r.get(0)).optional()? {
                found.push(artifact_of(Ok(json))?);
            }
        }
        Ok(found)
    }

    /// The mirror's artifact at `path`, if any.
    pub fn mirror_at(&self, path: &str) -> Result<Option<Artifact>> {
        self.conn()
            .prepare_cached("SELECT artifact FROM mirror WHERE path = ?1")?
            .query_row([path], |r| r.get(0))
            .optional()?
            .map(|json| artifact_of(Ok(json)))
            .transpose()
    }

    /// The mirror's artifacts whose path contains `text` (ASCII letters in
    /// any case) and, if `held`, that are held, after `after` by path: what
    /// a search shows while no server answers. It reads every row.
    pub fn mirror_matching(
        &self,
        text: Option<&str>,
        held: bool,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Artifact>> {
        let pattern = text.map(|t| {
            let escaped = t
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        });
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT artifact FROM mirror
             WHERE path > ?1 AND (?2 IS NULL OR path LIKE ?2 ESCAPE '\\') AND (?3 = 0 OR held = 1)
             ORDER BY path LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![after.unwrap_or(""), pattern, held, limit], |r| {
            r.get(0)
        })?;
        rows.map(artifact_of).collect()
    }
}

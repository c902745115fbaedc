//! The schema of a data folder's database, as numbered migrations
//! (`migrations/*.sql`, each with an optional Rust step), and the reading of
//! every row for a copy into PostgreSQL (`leasedesk migrate`). Never changes
//! a migration once released: add the next one.

use rusqlite::{params, Connection, TransactionBehavior};

use super::{connect, SqliteStore};
use crate::error::{Error, Result};
use crate::model::{collision_key, RepoPath};
use leasedesk_store::listing;
use leasedesk_store::rows::{Field, Kind};

/// A migration's step that SQL cannot do.
type RustStep = fn(&rusqlite::Transaction) -> Result<()>;

/// The numbered migrations' SQL, in order (`user_version` counts those applied).
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_leases.sql"),
    include_str!("../migrations/0002_tokens.sql"),
    include_str!("../migrations/0003_path_keys.sql"),
    include_str!("../migrations/0004_blob_names.sql"),
    include_str!("../migrations/0005_messages.sql"),
    include_str!("../migrations/0006_requests.sql"),
    include_str!("../migrations/0007_changes.sql"),
    include_str!("../migrations/0008_studio.sql"),
    include_str!("../migrations/0009_folders.sql"),
    include_str!("../migrations/0010_search_walk.sql"),
    include_str!("../migrations/0011_chunk_lists.sql"),
    include_str!("../migrations/0012_open_invites.sql"),
    include_str!("../migrations/0013_checkout_devices.sql"),
    include_str!("../migrations/0014_failed_redeems.sql"),
    include_str!("../migrations/0015_uploads.sql"),
    include_str!("../migrations/0016_held_paths.sql"),
    include_str!("../migrations/0017_lfs_objects.sql"),
    include_str!("../migrations/0018_review.sql"),
    include_str!("../migrations/0019_lease_paths.sql"),
];

/// The migrations SQL cannot finish, by number, and the Rust run after their SQL.
const RUST_STEPS: &[(usize, RustStep)] = &[(3, fill_path_keys), (9, count_folders)];

/// Gives every artifact stored before path keys its key (which needs NFC and
/// Unicode case folding, so Rust). Rows whose keys collide are kept as they
/// are: they stay readable, and an admin renames one of them.
fn fill_path_keys(tx: &rusqlite::Transaction) -> Result<()> {
    let rows: Vec<(String, String)> = tx
        .prepare("SELECT id, path FROM artifacts WHERE path_key IS NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut update = tx.prepare("UPDATE artifacts SET path_key = ?2 WHERE id = ?1")?;
    for (id, path) in rows {
        update.execute(params![id, collision_key(&path)])?;
    }
    Ok(())
}

/// Counts the files of every folder of the artifacts stored before folder
/// counts, as each import would have.
fn count_folders(tx: &rusqlite::Transaction) -> Result<()> {
    let mut paths = tx.prepare("SELECT path FROM artifacts")?;
    let mut count = tx.prepare(&listing::count_files_sql('?'))?;
    let mut rows = paths.query([])?;
    while let Some(row) = rows.next()? {
        let path = RepoPath::stored(&row.get::<_, String>(0)?)?;
        for folder in listing::folder_counts(&path, 1) {
            count.execute(rusqlite::params_from_iter(&folder))?;
        }
    }
    Ok(())
}

pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let applied: usize = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if applied > MIGRATIONS.len() {
        return Err(Error::Internal(format!(
            "the store's schema (version {applied}) is newer than this program knows ({}): upgrade Leasedesk",
            MIGRATIONS.len()
        )));
    }
    if applied == MIGRATIONS.len() {
        return Ok(());
    }
    for (number, sql) in (1..).zip(MIGRATIONS).skip(applied) {
        tx.execute_batch(sql)?;
        if let Some((_, then)) = RUST_STEPS.iter().find(|(n, _)| *n == number) {
            then(&tx)?;
        }
    }
    tx.pragma_update(None, "user_version", MIGRATIONS.len())?;
    tx.commit()?;
    Ok(())
}

impl SqliteStore {
    /// Reads every row of `table` (its `columns`, in its key's order) on a
    /// connection of its own, one at a time: for copying a store elsewhere.
    pub fn each_row(
        &self,
        table: &str,
        columns: &[(&str, Kind)],
        f: &mut dyn FnMut(Vec<Field>) -> Result<()>,
    ) -> Result<()> {
        let conn = connect(&self.path)?;
        let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
        let mut stmt = conn.prepare(&format!(
            "SELECT {} FROM {table} ORDER BY {}",
            names.join(", "),
            names[0]
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let fields = columns
                .iter()
                .enumerate()
                .map(|(i, (_, kind))| {
                    Ok(match kind {
                        Kind::Int => Field::Int(row.get(i)?),
                        Kind::Text => Field::Text(row.get(i)?),
                        Kind::Bool => Field::Bool(row.get(i)?),
                    })
                })
                .collect::<rusqlite::Result<Vec<_>>>()?;
            f(fields)?;
        }
        Ok(())
    }
}

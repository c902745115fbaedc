//! The schema, as numbered migrations (`pg_migrations/`, applied once under
//! an advisory lock, so servers starting together migrate once), and the
//! loader that writes rows copied from a data folder (`leasedesk migrate`).
//! Never changes a migration once released: add the next one.

use tokio_postgres::types::ToSql;

use super::connect::{Conn, OpenTx};
use super::{wait, PgStore};
use crate::error::{Error, Result};
use crate::failpoint::Failpoints;
use leasedesk_store::rows::{Field, Kind};

/// Numbered migrations; `leasedesk_schema` keeps how many were applied.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_schema.sql"),
    include_str!("../migrations/0002_touched_at.sql"),
    include_str!("../migrations/0003_wal_flush.sql"),
    include_str!("../migrations/0004_lease_foreign_keys.sql"),
    // The same table as SQLite's: one text for both.
    include_str!("../../store-sqlite/migrations/0006_requests.sql"),
    include_str!("../../store-sqlite/migrations/0007_changes.sql"),
    include_str!("../../store-sqlite/migrations/0008_studio.sql"),
    include_str!("../migrations/0005_folders.sql"),
    include_str!("../migrations/0006_lease_paths.sql"),
    include_str!("../migrations/0007_chunk_lists.sql"),
    include_str!("../../store-sqlite/migrations/0012_open_invites.sql"),
    include_str!("../../store-sqlite/migrations/0013_checkout_devices.sql"),
    include_str!("../migrations/0008_failed_redeems.sql"),
    include_str!("../../store-sqlite/migrations/0015_uploads.sql"),
    include_str!("../migrations/0009_held_paths.sql"),
    include_str!("../../store-sqlite/migrations/0017_lfs_objects.sql"),
    include_str!("../../store-sqlite/migrations/0018_review.sql"),
    include_str!("../migrations/0010_lease_path_given.sql"),
];

/// Held while migrating, so servers starting together migrate once.
const MIGRATION_LOCK: i64 = 0x6c65_6173_6564_736b;

impl PgStore {
    pub(super) fn migrate(&self) -> Result<()> {
        let mut client = self.connection()?;
        let tx = wait(client.transaction())?;
        wait(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))?;
        wait(tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS leasedesk_schema (version INTEGER NOT NULL);
             INSERT INTO leasedesk_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM leasedesk_schema);",
        ))?;
        let applied: i32 = wait(tx.query_one("SELECT version FROM leasedesk_schema", &[]))?.get(0);
        let applied = applied as usize;
        if applied > MIGRATIONS.len() {
            return Err(Error::Internal(format!(
                "the database's schema (version {applied}) is newer than this program knows ({}): upgrade Leasedesk",
                MIGRATIONS.len()
            )));
        }
        for sql in &MIGRATIONS[applied..] {
            wait(tx.batch_execute(sql))?;
        }
        let version = MIGRATIONS.len() as i32;
        wait(tx.execute("UPDATE leasedesk_schema SET version = $1", &[&version]))?;
        wait(tx.commit())?;
        Ok(())
    }

    /// Runs `f` in one write transaction that holds the ledger's lock, with
    /// a [`Loader`] for rows copied from elsewhere (`leasedesk migrate`).
    pub fn load<T>(&self, f: impl FnOnce(&Loader) -> Result<T>) -> Result<T> {
        let client = self.connection()?;
        let mut open = OpenTx::begin(Conn::Pooled(&client), "BEGIN")?;
        wait(client.batch_execute("SELECT last_seq FROM ledger FOR UPDATE"))?;
        let value = f(&Loader {
            client: &client,
            failpoints: &self.failpoints,
        })?;
        open.finish("COMMIT")?;
        Ok(value)
    }
}

/// Writes rows as they were elsewhere, inside [`PgStore::load`]'s transaction.
pub struct Loader<'a> {
    client: &'a deadpool_postgres::Object,
    pub failpoints: &'a Failpoints,
}

impl Loader<'_> {
    pub fn count(&self, table: &str) -> Result<i64> {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        Ok(wait(self.client.query_one(&sql, &[]))?.try_get(0)?)
    }

    pub fn insert(&self, table: &str, columns: &[(&str, Kind)], row: &[Field]) -> Result<()> {
        let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
        let places: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            names.join(", "),
            places.join(", ")
        );
        let params: Vec<&(dyn ToSql + Sync)> = row
            .iter()
            .map(|field| match field {
                Field::Int(n) => n as &(dyn ToSql + Sync),
                Field::Text(t) => t as &(dyn ToSql + Sync),
                Field::Bool(b) => b as &(dyn ToSql + Sync),
            })
            .collect();
        wait(async {
            let statement = self.client.prepare_cached(&sql).await?;
            self.client.execute(&statement, &params).await
        })?;
        Ok(())
    }

    pub fn set_last_seq(&self, seq: i64) -> Result<()> {
        wait(
            self.client
                .execute("UPDATE ledger SET last_seq = $1", &[&seq]),
        )?;
        Ok(())
    }

    /// Numbers the next inbox item after the copied ones.
    pub fn set_last_inbox_seq(&self, seq: i64) -> Result<()> {
        wait(
            self.client
                .execute("UPDATE inbox_counter SET last_seq = $1", &[&seq]),
        )?;
        Ok(())
    }
}

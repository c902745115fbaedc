//! One transaction on SQLite: how it runs the statements both stores share
//! ([`Sql`], for the families' defaults in `store::transaction`), and what
//! it writes its own way: an artifact's search row (`artifact_search`),
//! pages of a search, chunk lists, lapsed leases, events, and the steps
//! of uploads and failed redeems whose SQL is SQLite's. Rows map through
//! the shared `store::rows`; never decode a row here by hand.

use std::cell::Cell;

use rusqlite::{params, params_from_iter};

use crate::clock::Clock;
use crate::error::Result;
use crate::model::*;
use leasedesk_store::listing::{self, Dialect};
use leasedesk_store::rows::{self, millis, Row, Statement, LEASE_COLUMNS};
use leasedesk_store::uploads::{self, UploadRow, UploadRows};
use leasedesk_store::{
    fetch_one, insert_version, ArtifactRows, CheckoutRows, LeaseRows, ListQuery, NewEvent,
    ReviewRows, Sql, StudioRows, Tx,
};

/// SQLite's SQL where a search's plan does not matter.
const SQLITE: Dialect = Dialect::Sqlite {
    search_index: false,
};

/// One transaction on the SQLite store.
pub struct SqliteTx<'a> {
    pub(super) tx: &'a rusqlite::Transaction<'a>,
    pub(super) durable: &'a Cell<bool>,
}

impl SqliteTx<'_> {
    /// Adds `by` files (1 or -1) to each folder above `path`.
    fn count_files(&self, path: &RepoPath, by: i64) -> Result<()> {
        let mut count = self.tx.prepare_cached(&listing::count_files_sql('?'))?;
        let mut forget = self
            .tx
            .prepare_cached(&listing::forget_empty_folder_sql('?'))?;
        for row in listing::folder_counts(path, by) {
            count.execute(params_from_iter(&row))?;
            if by < 0 {
                forget.execute([&row[0]])?;
            }
        }
        Ok(())
    }

    /// Whether so few paths contain `key` (3 characters or more) that
    /// sorting the search index's matches beats walking every path.
    fn few_matches(&self, key: &str) -> Result<bool> {
        let dialect = Dialect::Sqlite { search_index: true };
        let (sql, fields) = listing::few_matches_sql(key, listing::FEW_MATCHES, dialect);
        let found: u64 = self
            .tx
            .prepare_cached(&sql)?
            .query_row(params_from_iter(fields), |r| r.get(0))?;
        Ok(found < listing::FEW_MATCHES as u64)
    }

    /// Every row `sql` finds, each mapped by `f`.
    fn all<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl Fn(&rusqlite::Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self.tx.prepare_cached(sql)?;
        let mut rows = stmt.query(params)?;
        let mut all = Vec::new();
        while let Some(row) = rows.next()? {
            all.push(f(row)?);
        }
        Ok(all)
    }
}

impl Sql for SqliteTx<'_> {
    fn dialect(&self) -> Dialect {
        SQLITE
    }

    fn fetch(
        &self,
        statement: &Statement,
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.tx.prepare_cached(statement.sql())?;
        let mut rows = stmt.query(params_from_iter(statement.params()))?;
        while let Some(row) = rows.next()? {
            each(row)?;
        }
        Ok(())
    }

    fn run(&self, statement: &Statement) -> Result<u64> {
        let mut stmt = self.tx.prepare_cached(statement.sql())?;
        Ok(stmt.execute(params_from_iter(statement.params()))? as u64)
    }

    fn queue(&self, statement: Statement) -> Result<()> {
        self.run(&statement).map(drop)
    }

    /// One writer at a time: nothing to take.
    fn lock_paths(&self) -> Result<()> {
        Ok(())
    }

    fn require_durable(&self) {
        self.durable.set(true);
    }
}

impl Tx for SqliteTx<'_> {
    fn now(&self, clock: &Clock) -> Result<Timestamp> {
        Ok(clock.now())
    }

    fn savepoint(&self, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<Result<()>> {
        let run = |sql: &str| self.tx.prepare_cached(sql)?.execute([]);
        run("SAVEPOINT writer")?;
        let outcome = f(self);
        if outcome.is_err() {
            run("ROLLBACK TO writer")?;
        }
        run("RELEASE writer")?;
        Ok(outcome)
    }

    /// Appends an event; writes nothing if an event with its id exists
    /// already (a contender asking again).
    fn insert_event(&self, e: NewEvent) -> Result<()> {
        self
            .tx
            .prepare_cached(
                "INSERT OR IGNORE INTO events (id, type, artifact_id, participant, holder, at, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                e.id.to_string(),
                e.kind,
                e.artifact_id.map(|id| id.to_string()),
                e.participant.map(Participant::as_str),
                e.holder,
                millis(e.at),
                e.data.to_string(),
            ])?;
        Ok(())
    }

    fn last_event_seq(&self) -> Result<u64> {
        Ok(self
            .tx
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get(0))?)
    }
}

/// An artifact's path is kept in the search index too (`artifact_search`,
/// FTS5 by trigram), whose row the artifact names.
impl ArtifactRows for SqliteTx<'_> {
    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()> {
        let old = fetch_one(self, rows::select_artifact_path('?', id), |r| r.text(0))?;
        self.run(&rows::rename_artifact('?', id, path))?;
        self.tx.execute(
            "UPDATE artifact_search SET key = ?2
             WHERE rowid = (SELECT search_row FROM artifacts WHERE id = ?1)",
            params![id.to_string(), path.collision_key()],
        )?;
        self.count_files(&RepoPath::stored(&old)?, -1)?;
        self.count_files(path, 1)
    }

    fn artifact_page(&self, query: &ListQuery) -> Result<Vec<Artifact>> {
        let search_index = match &query.text_key {
            Some(key) if key.chars().count() >= 3 && query.within.is_none() => {
                self.few_matches(key)?
            }
            _ => false,
        };
        let (sql, fields) = listing::artifact_page_sql(query, Dialect::Sqlite { search_index });
        self.all(&sql, params_from_iter(fields), |r| rows::artifact(r))
    }

    fn insert_artifact(&self, id: ArtifactId, path: &RepoPath, head: &Head) -> Result<()> {
        self.tx.execute(
            "INSERT INTO artifact_search (key, id) VALUES (?1, ?2)",
            params![path.collision_key(), id.to_string()],
        )?;
        self.tx.execute(
            "INSERT INTO artifacts (id, path, path_key, head_version, created_at, search_row)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                id.to_string(),
                path.as_str(),
                path.collision_key(),
                head.version,
                millis(head.committed_at),
                self.tx.last_insert_rowid()
            ],
        )?;
        self.count_files(path, 1)?;
        insert_version(self, id, head, None)
    }

    fn put_chunk_list(&self, digest: &Digest, list: &[u8]) -> Result<()> {
        self.tx
            .prepare_cached("INSERT OR IGNORE INTO chunk_lists (digest, list) VALUES (?1, ?2)")?
            .execute(rusqlite::params![digest.as_str(), list])?;
        Ok(())
    }
}

impl LeaseRows for SqliteTx<'_> {
    /// Leases whose expiry has passed but whose lapse is not yet recorded:
    /// one writer at a time, so every one of them.
    fn lapsed_leases(&self, now: Timestamp) -> Result<Vec<(ArtifactId, Lease)>> {
        let sql =
            format!("SELECT l.artifact_id, {LEASE_COLUMNS} FROM leases l WHERE l.expires_at <= ?1");
        self.all(&sql, [millis(now)], |r| rows::lapsed_lease(r))
    }
}

impl CheckoutRows for SqliteTx<'_> {}

impl ReviewRows for SqliteTx<'_> {}

impl StudioRows for SqliteTx<'_> {
    fn forget_failed_redeems(&self, over_before: Timestamp, limit: u32) -> Result<u64> {
        let forgotten = self.tx.execute(
            "DELETE FROM failed_redeems WHERE address IN (
                 SELECT address FROM failed_redeems WHERE since <= ?1 ORDER BY since LIMIT ?2)",
            params![millis(over_before), limit],
        )?;
        Ok(forgotten as u64)
    }
}

/// Resumable uploads' rows: one writer at a time, so a begin's count and
/// insert need no lock of their own.
impl UploadRows for SqliteTx<'_> {
    fn lock_uploads_of(&self, _owner: &Participant) -> Result<()> {
        Ok(())
    }

    fn next_upload_writer(&self, id: UploadId) -> Result<Option<UploadRow>> {
        self.tx.execute(
            "UPDATE uploads SET writer = writer + 1 WHERE id = ?1",
            [id.to_string()],
        )?;
        self.upload(id)
    }

    fn add_upload_piece(&self, id: UploadId, writer: u64, from: u64, to: u64) -> Result<bool> {
        let moved = self.run(&uploads::reach_upload('?', id, writer, from, to))?;
        if moved == 1 {
            self.tx.execute(
                "INSERT OR REPLACE INTO upload_pieces (upload_id, start, stop) VALUES (?1, ?2, ?3)",
                params![id.to_string(), from as i64, to as i64],
            )?;
        }
        Ok(moved == 1)
    }
}

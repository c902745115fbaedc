//! The typed reads and writes of [`Tx`] on SQLite: the SQL of each.
//! Rows map through the shared `store::rows`; never decode a row here by hand.

use std::cell::Cell;

use rusqlite::{params, params_from_iter};

use crate::clock::Clock;
use crate::error::Result;
use crate::model::*;
use leasedesk_store::listing::{self, Dialect};
use leasedesk_store::rows::{
    self, millis, parsed_opt, proposal_state_str, ACCOUNT_COLUMNS, BLOB_DIGESTS, CHANGE_COLUMNS,
    CHECKOUT_COLUMNS, EDIT_COLUMNS, HEAD_COLUMNS, HELD_PATH_COLUMNS, LEASE_COLUMNS,
    LFS_OBJECT_COLUMNS, PROPOSAL_COLUMNS, REQUESTS_JOINED, REQUEST_COLUMNS, REQUEST_FIELDS,
    REQUEST_UPDATE,
};
use leasedesk_store::{
    head_moved, inserted_once, resolved, ChangeRow, CheckoutRow, Decision, EditRow, EventRows,
    FolderRow, HeldPath, Hidden, LeaseAt, ListQuery, NewEvent, RequestRow, StoredResult, Tx,
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
        let found = self.first(&sql, params_from_iter(fields), |r| rows::count(r, 0))?;
        Ok(found.unwrap_or(0) < listing::FEW_MATCHES as u64)
    }

    /// Every row `sql` finds, each mapped by `f`.
    pub(super) fn all<T>(
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

    /// The first row `sql` finds, mapped by `f`.
    pub(super) fn first<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl Fn(&rusqlite::Row) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut stmt = self.tx.prepare_cached(sql)?;
        let mut rows = stmt.query(params)?;
        rows.next()?.map(f).transpose()
    }

    fn insert_version(&self, id: ArtifactId, head: &Head, base: Option<u64>) -> Result<()> {
        self.require_durable();
        self.tx.execute(
            "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at, base_version, message, change_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params_from_iter(rows::version_fields(id, head, base)?),
        )?;
        Ok(())
    }
}

impl Tx for SqliteTx<'_> {
    fn now(&self, clock: &Clock) -> Result<Timestamp> {
        Ok(clock.now())
    }

    /// Makes this transaction's commit survive power loss.
    fn require_durable(&self) {
        self.durable.set(true);
    }

    /// Runs `f` in a savepoint: its error rolls back what `f` wrote and nothing
    /// before it, so several writers can share one transaction (group commit).
    /// The outer error is the store's own failure, which ends the transaction.
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

    // ----- participants

    fn account(&self, participant: &Participant) -> Result<Option<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM participants WHERE participant = ?1");
        self.first(&sql, [participant.as_str()], |r| rows::account(r))
    }

    fn insert_account(&self, account: &Account) -> Result<()> {
        let inserted = self.tx.execute(
            "INSERT INTO participants (participant, admin, created_at) VALUES (?1, ?2, ?3)
             ON CONFLICT DO NOTHING",
            params_from_iter(rows::account_fields(account)),
        )?;
        inserted_once(account, inserted as u64)
    }

    fn accounts(&self) -> Result<Vec<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM participants ORDER BY participant");
        self.all(&sql, [], |r| rows::account(r))
    }

    // ----- artifacts and versions

    /// The artifact at `path`, or else the one whose path has its collision
    /// key (the same file on a computer: `Hero.psd` finds `hero.psd`).
    fn artifact_id_by_path(&self, path: &RepoPath) -> Result<Option<ArtifactId>> {
        self.first(
            "SELECT id FROM artifacts WHERE path = ?1 OR path_key = ?2
             ORDER BY path = ?1 DESC, path LIMIT 1",
            params![path.as_str(), path.collision_key()],
            |r| rows::parsed(r, 0),
        )
    }

    /// The artifacts whose path has collision key `key`, by path.
    fn artifacts_with_key(&self, key: &str) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.all(
            "SELECT id, path FROM artifacts WHERE path_key = ?1 ORDER BY path",
            [key],
            |r| rows::id_and_path(r),
        )
    }

    /// Artifacts whose key lies under the folder `key` (`key/...`), at most
    /// `limit`, by path; an index range, since `0` follows `/` in byte order.
    fn artifacts_under_key(&self, key: &str, limit: u32) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.all(
            "SELECT id, path FROM artifacts WHERE path_key >= ?1 || '/' AND path_key < ?1 || '0'
             ORDER BY path LIMIT ?2",
            params![key, limit],
            |r| rows::id_and_path(r),
        )
    }

    /// Moves an artifact to `path` (the rules checked it is free).
    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()> {
        let old: String = self.tx.query_row(
            "SELECT path FROM artifacts WHERE id = ?1",
            [id.to_string()],
            |r| r.get(0),
        )?;
        self.tx.execute(
            "UPDATE artifacts SET path = ?2, path_key = ?3 WHERE id = ?1",
            params![id.to_string(), path.as_str(), path.collision_key()],
        )?;
        self.tx.execute(
            "UPDATE artifact_search SET key = ?2
             WHERE rowid = (SELECT search_row FROM artifacts WHERE id = ?1)",
            params![id.to_string(), path.collision_key()],
        )?;
        self.count_files(&RepoPath::stored(&old)?, -1)?;
        self.count_files(path, 1)
    }

    /// An artifact with its head and its lease row, lapsed or not.
    fn artifact(&self, id: ArtifactId) -> Result<Option<Artifact>> {
        let sql = rows::artifact_select("WHERE a.id = ?1");
        self.first(&sql, [id.to_string()], |r| rows::artifact(r))
    }

    /// Every artifact by path, with its head and its lease row, lapsed or not.
    fn artifacts(&self) -> Result<Vec<Artifact>> {
        let sql = rows::artifact_select("ORDER BY a.path");
        self.all(&sql, [], |r| rows::artifact(r))
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

    fn subfolders(&self, folder: &str) -> Result<(Vec<FolderRow>, u64)> {
        let folders = self.all(&listing::subfolders_sql('?'), [folder], |r| {
            Ok(FolderRow {
                path: r.get(0)?,
                key: r.get(1)?,
                files: rows::count(r, 2)?,
            })
        })?;
        let direct = self.first(&listing::direct_files_sql('?'), [folder], |r| {
            rows::count(r, 0)
        })?;
        Ok((folders, direct.unwrap_or(0)))
    }

    fn folder_paths(&self, keys: &[String]) -> Result<Vec<(String, String)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (sql, fields) = listing::folder_paths_sql(keys, SQLITE);
        self.all(&sql, params_from_iter(fields), |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
    }

    fn files_under_key(&self, key: &str, within: &str) -> Result<u64> {
        let (sql, fields) = listing::files_under_key_sql(key, within, SQLITE);
        let found = self.first(&sql, params_from_iter(fields), |r| rows::count(r, 0))?;
        Ok(found.unwrap_or(0))
    }

    fn held_by_folder(
        &self,
        folder: &str,
        now: Timestamp,
        hidden: &[Hidden],
    ) -> Result<Vec<(String, u64)>> {
        let dialect = SQLITE;
        let (sql, fields) = listing::held_by_folder_sql(folder, now, hidden, dialect);
        self.all(&sql, params_from_iter(fields), |r| {
            Ok((
                format!("{folder}{}", r.get::<_, String>(0)?),
                rows::count(r, 1)?,
            ))
        })
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
        self.insert_version(id, head, None)
    }

    /// Appends `head` as the artifact's new head, replacing `base`; refuses (as an
    /// internal error: the rules test the base first) if `base` is not the head.
    fn commit_version(&self, id: ArtifactId, head: &Head, base: u64) -> Result<()> {
        let moved = self.tx.execute(
            "UPDATE artifacts SET head_version = ?1 WHERE id = ?2 AND head_version = ?3",
            params![head.version, id.to_string(), base],
        )?;
        head_moved(id, base, moved as u64)?;
        self.insert_version(id, head, Some(base))
    }

    /// Versions, newest first, with the version each replaced.
    fn versions(&self, id: ArtifactId) -> Result<Vec<(Head, Option<u64>)>> {
        let sql = format!(
            "SELECT {HEAD_COLUMNS}, v.base_version FROM versions v WHERE v.artifact_id = ?1 ORDER BY v.version DESC"
        );
        self.all(&sql, [id.to_string()], |r| rows::version(r))
    }

    fn version(&self, id: ArtifactId, version: u64) -> Result<Option<Head>> {
        if i64::try_from(version).is_err() {
            return Ok(None); // SQLite's integers stop at 2^63 - 1: no such version
        }
        let sql = format!(
            "SELECT {HEAD_COLUMNS} FROM versions v WHERE v.artifact_id = ?1 AND v.version = ?2"
        );
        self.first(&sql, params![id.to_string(), version], |r| rows::head(r, 0))
    }

    // ----- blobs

    /// Whether a version or a proposal (of any state: rows are never deleted)
    /// names `digest`: the rows whose bytes are served, so their blob must stay.
    fn names_blob(&self, digest: &Digest) -> Result<bool> {
        Ok(self
            .tx
            .prepare_cached(&rows::names_blob_sql('?'))?
            .query_row([digest.as_str()], |r| r.get(0))?)
    }

    /// Every digest [`Tx::names_blob`] would find.
    fn blob_digests(&self) -> Result<std::collections::HashSet<Digest>> {
        let digests = self.all(BLOB_DIGESTS, [], |r| rows::parsed(r, 0))?;
        Ok(digests.into_iter().collect())
    }

    fn chunk_list(&self, digest: &Digest) -> Result<Option<Vec<u8>>> {
        Ok(self
            .tx
            .prepare_cached("SELECT list FROM chunk_lists WHERE digest = ?1")?
            .query_row([digest.as_str()], |r| r.get(0))
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?)
    }

    fn put_chunk_list(&self, digest: &Digest, list: &[u8]) -> Result<()> {
        self.tx
            .prepare_cached("INSERT OR IGNORE INTO chunk_lists (digest, list) VALUES (?1, ?2)")?
            .execute(rusqlite::params![digest.as_str(), list])?;
        Ok(())
    }

    // ----- leases

    fn put_lease(&self, artifact_id: ArtifactId, lease: &Lease) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (artifact_id) DO UPDATE SET holder = ?2, participant = ?3, kind = ?4,
                     checkout_id = ?5, note = ?6, acquired_at = ?7, expires_at = ?8",
            )?
            .execute(params_from_iter(rows::lease_fields(artifact_id, lease)))?;
        Ok(())
    }

    fn delete_lease(&self, artifact_id: ArtifactId) -> Result<()> {
        self.tx
            .prepare_cached("DELETE FROM leases WHERE artifact_id = ?1")?
            .execute([artifact_id.to_string()])?;
        Ok(())
    }

    /// How many leases were ever taken on the artifact.
    fn lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        Ok(self
            .tx
            .prepare_cached("SELECT lease_epoch FROM artifacts WHERE id = ?1")?
            .query_row([artifact_id.to_string()], |r| r.get(0))?)
    }

    /// Counts one more lease taken on the artifact; returns the new epoch.
    fn next_lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        Ok(self
            .tx
            .prepare_cached("UPDATE artifacts SET lease_epoch = lease_epoch + 1 WHERE id = ?1 RETURNING lease_epoch")?
            .query_row([artifact_id.to_string()], |r| r.get(0))?)
    }

    fn live_lease_count(&self, now: Timestamp) -> Result<u64> {
        Ok(self
            .tx
            .prepare_cached("SELECT COUNT(*) FROM leases WHERE expires_at > ?1")?
            .query_row([millis(now)], |r| r.get(0))?)
    }

    /// Leases whose expiry has passed but whose lapse is not yet recorded.
    fn lapsed_leases(&self, now: Timestamp) -> Result<Vec<(ArtifactId, Lease)>> {
        let sql =
            format!("SELECT l.artifact_id, {LEASE_COLUMNS} FROM leases l WHERE l.expires_at <= ?1");
        self.all(&sql, [millis(now)], |r| rows::lapsed_lease(r))
    }

    // ----- Git locks: leases by folder, paths held with no file

    fn leases_under(
        &self,
        folder: &str,
        after: &str,
        limit: u32,
        now: Timestamp,
    ) -> Result<Vec<LeaseAt>> {
        let sql = format!(
            "SELECT l.artifact_id, a.path, {LEASE_COLUMNS} FROM artifacts a
             JOIN leases l ON l.artifact_id = a.id
             WHERE a.path >= ?1 AND a.path < ?2 AND a.path > ?3 AND l.expires_at > ?4
             ORDER BY a.path LIMIT ?5"
        );
        let end = rows::folder_end(folder);
        self.all(&sql, params![folder, end, after, millis(now), limit], |r| {
            rows::lease_at(r)
        })
    }

    fn held_path(&self, key: &str) -> Result<Option<HeldPath>> {
        let sql = format!("SELECT {HELD_PATH_COLUMNS} FROM held_paths h WHERE h.path_key = ?1");
        self.first(&sql, [key], |r| rows::held_path(r))
    }

    fn held_path_by_id(&self, id: CheckoutId) -> Result<Option<HeldPath>> {
        let sql = format!("SELECT {HELD_PATH_COLUMNS} FROM held_paths h WHERE h.id = ?1");
        self.first(&sql, [id.to_string()], |r| rows::held_path(r))
    }

    fn held_paths_under(
        &self,
        folder: &str,
        after: &str,
        limit: u32,
        now: Timestamp,
    ) -> Result<Vec<HeldPath>> {
        let sql = format!(
            "SELECT {HELD_PATH_COLUMNS} FROM held_paths h
             WHERE h.path >= ?1 AND h.path < ?2 AND h.path > ?3 AND h.expires_at > ?4
             ORDER BY h.path LIMIT ?5"
        );
        let end = rows::folder_end(folder);
        self.all(&sql, params![folder, end, after, millis(now), limit], |r| {
            rows::held_path(r)
        })
    }

    fn put_held_path(&self, held: &HeldPath) -> Result<()> {
        self.tx
            .prepare_cached(&rows::PUT_HELD_PATH.replace('$', "?"))?
            .execute(params_from_iter(rows::held_path_fields(held)))?;
        Ok(())
    }

    fn delete_held_path(&self, key: &str) -> Result<()> {
        self.tx
            .prepare_cached("DELETE FROM held_paths WHERE path_key = ?1")?
            .execute([key])?;
        Ok(())
    }

    fn lfs_object(&self, folder: &str, oid: &str) -> Result<Option<LfsObject>> {
        let sql =
            format!("SELECT {LFS_OBJECT_COLUMNS} FROM lfs_objects WHERE folder = ?1 AND oid = ?2");
        self.first(&sql, [folder, oid], |r| rows::lfs_object(r))
    }

    fn put_lfs_object(&self, folder: &str, object: &LfsObject, now: Timestamp) -> Result<()> {
        self.tx
            .prepare_cached(&rows::PUT_LFS_OBJECT.replace('$', "?"))?
            .execute(params_from_iter(rows::lfs_object_fields(
                folder, object, now,
            )?))?;
        Ok(())
    }

    fn secret(&self, name: &str, made: &str) -> Result<String> {
        self.tx
            .prepare_cached(&rows::PUT_SECRET.replace('$', "?"))?
            .execute([name, made])?;
        self.first("SELECT value FROM secrets WHERE name = ?1", [name], |r| {
            Ok(r.get(0)?)
        })?
        .ok_or_else(|| crate::error::Error::Internal(format!("the secret {name} was not kept")))
    }

    // ----- check-outs

    fn checkout(&self, id: CheckoutId) -> Result<Option<CheckoutRow>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id WHERE c.id = ?1"
        );
        let row = self.first(&sql, [id.to_string()], |r| rows::checkout(r))?;
        row.map(|row| resolved(self, row)).transpose()
    }

    /// A participant's check-outs, newest first; only open ones if `open_only`.
    fn checkouts_of(&self, actor: &Participant, open_only: bool) -> Result<Vec<Checkout>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id
             WHERE c.actor = ?1 AND (?2 = 0 OR c.state = 'open') ORDER BY c.created_at DESC, c.id"
        );
        self.all(&sql, params![actor.as_str(), open_only], |r| {
            rows::checkout(r)
        })?
        .into_iter()
        .map(|row| Ok(resolved(self, row)?.checkout))
        .collect()
    }

    /// Writes a whole check-out record, new or changed.
    fn put_checkout(
        &self,
        row: &CheckoutRow,
        result: Option<&StoredResult>,
        closed_at: Option<Timestamp>,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO checkouts (id, artifact_id, version, digest, actor, note, created_at, expires_at,
                     state, closed_at, checkin_digest, result, broken_by, broken_reason, broken_at, lease_epoch,
                 staged_digest, staged_size, change_id, device_id, device_name)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)
                 ON CONFLICT (id) DO UPDATE SET expires_at = ?8, state = ?9, closed_at = ?10,
                     checkin_digest = ?11, result = ?12, broken_by = ?13, broken_reason = ?14, broken_at = ?15,
                     lease_epoch = ?16, staged_digest = ?17, staged_size = ?18, change_id = ?19",
            )?
            .execute(params_from_iter(rows::checkout_fields(row, result, closed_at)?))?;
        Ok(())
    }

    // ----- edits

    fn edit(&self, id: EditId) -> Result<Option<EditRow>> {
        let sql = format!("SELECT {EDIT_COLUMNS} FROM edits WHERE id = ?1");
        self.first(&sql, [id.to_string()], |r| rows::edit(r))
    }

    fn put_edit(&self, row: &EditRow, now: Timestamp) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO edits (id, artifact_id, participant, base_version, base_digest, created_at, expires_at,
                     state, commit_digest, result)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (id) DO UPDATE SET state = ?8, commit_digest = ?9, result = ?10",
            )?
            .execute(params_from_iter(rows::edit_fields(row, now)?))?;
        Ok(())
    }

    // ----- proposals

    fn proposal(&self, id: ProposalId) -> Result<Option<Proposal>> {
        let sql = format!("SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE id = ?1");
        self.first(&sql, [id.to_string()], |r| rows::proposal(r))
    }

    fn proposals(&self, filter: &ProposalFilter) -> Result<Vec<Proposal>> {
        let sql = format!(
            "SELECT {PROPOSAL_COLUMNS} FROM proposals
             WHERE (?1 IS NULL OR artifact_id = ?1) AND (?2 IS NULL OR state = ?2)
             ORDER BY created_at, id"
        );
        self.all(
            &sql,
            params![
                filter.artifact.map(|id| id.to_string()),
                filter.state.map(proposal_state_str)
            ],
            |r| rows::proposal(r),
        )
    }

    /// The proposal that replaced a superseded one.
    fn successor(&self, id: ProposalId) -> Result<Option<ProposalId>> {
        Ok(self
            .first(
                "SELECT superseded_by FROM proposals WHERE id = ?1",
                [id.to_string()],
                |r| parsed_opt(r, 0),
            )?
            .flatten())
    }

    fn insert_proposal(&self, p: &Proposal) -> Result<()> {
        self.require_durable();
        self.tx.execute(
            &format!("INSERT INTO proposals ({PROPOSAL_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
            params_from_iter(rows::proposal_fields(p)?),
        )?;
        Ok(())
    }

    fn decide_proposal(&self, id: ProposalId, decision: &Decision) -> Result<()> {
        self.tx.execute(
            "UPDATE proposals SET state = ?2, decided_by = ?3, decided_at = ?4, superseded_by = ?5
             WHERE id = ?1 AND state = 'open'",
            params_from_iter(rows::decision_fields(id, decision)),
        )?;
        Ok(())
    }

    // ----- requests

    fn request(&self, id: RequestId) -> Result<Option<RequestRow>> {
        let sql = format!("SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED} WHERE r.id = ?1");
        self.first(&sql, [id.to_string()], |r| rows::request(r))
    }

    fn checkout_requests(&self, checkout: CheckoutId) -> Result<Vec<RequestRow>> {
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED} WHERE r.checkout_id = ?1
             ORDER BY r.created_at, r.id"
        );
        self.all(&sql, [checkout.to_string()], |r| rows::request(r))
    }

    fn requests_of(&self, participant: &Participant, live_only: bool) -> Result<Vec<Request>> {
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED}
             WHERE (r.to_participant = ?1 OR r.from_participant = ?1)
               AND (?2 = 0 OR r.state IN ('open', 'replied'))
             ORDER BY r.created_at DESC, r.id"
        );
        self.all(&sql, params![participant.as_str(), live_only], |r| {
            rows::request(r).map(|row| row.request)
        })
    }

    // ----- changes

    fn insert_change(&self, change: &ChangeRow) -> Result<()> {
        self.tx.execute(
            &format!("INSERT INTO changes ({CHANGE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
            params_from_iter(rows::change_fields(change)),
        )?;
        Ok(())
    }

    fn change(&self, id: ChangeId) -> Result<Option<ChangeRow>> {
        let sql = format!("SELECT {CHANGE_COLUMNS} FROM changes WHERE id = ?1");
        self.first(&sql, [id.to_string()], |r| rows::change(r))
    }

    fn change_proposals(&self, id: ChangeId) -> Result<Vec<Proposal>> {
        let sql = format!(
            "SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE change_id = ?1 ORDER BY created_at, id"
        );
        self.all(&sql, [id.to_string()], |r| rows::proposal(r))
    }

    fn drop_blob(&self, digest: &Digest) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO dropped_blobs (digest) VALUES (?1) ON CONFLICT DO NOTHING",
            )?
            .execute([digest.as_str()])?;
        Ok(())
    }

    fn dropped_blobs(&self, limit: u32) -> Result<Vec<Digest>> {
        self.all("SELECT digest FROM dropped_blobs LIMIT ?1", [limit], |r| {
            rows::parsed(r, 0)
        })
    }

    fn forget_dropped_blob(&self, digest: &Digest) -> Result<()> {
        self.tx
            .prepare_cached("DELETE FROM dropped_blobs WHERE digest = ?1")?
            .execute([digest.as_str()])?;
        Ok(())
    }

    fn put_request(&self, row: &RequestRow) -> Result<()> {
        self.tx.execute(
            &format!(
                "INSERT INTO requests ({REQUEST_FIELDS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                 ON CONFLICT (id) DO UPDATE SET {REQUEST_UPDATE}"
            ),
            params_from_iter(rows::request_fields(row)),
        )?;
        Ok(())
    }

    // ----- events

    /// Appends an event. Returns false, writing nothing, if an event with its id
    /// exists already (a contender asking again).
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

    fn event_rows(&self, page: EventRows) -> Result<Vec<Event>> {
        let sql = rows::events_sql('?', &page);
        let (bound, limit) = (page.bound, page.limit);
        match page.artifact {
            None => self.all(&sql, params![bound, limit], |r| rows::event(r)),
            Some(id) => self.all(&sql, params![bound, limit, id.to_string()], |r| {
                rows::event(r)
            }),
        }
    }

    fn last_event_seq(&self) -> Result<u64> {
        Ok(self
            .tx
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get(0))?)
    }
}

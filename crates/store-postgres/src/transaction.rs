//! The typed reads and writes of [`Tx`] on PostgreSQL: the SQL, and
//! which artifact each statement locks first (see `tx`). Rows map through
//! the shared `store::rows`; never decode a row here by hand.

use super::tx::{
    owned, owned_fields, LOCK_ARTIFACT, LOCK_BY_CHECKOUT, LOCK_BY_EDIT, LOCK_BY_PROPOSAL,
    LOCK_BY_REQUEST,
};
use super::tx::{Columns, PgTx};
use crate::clock::Clock;
use crate::error::Result;
use crate::model::*;
use leasedesk_store::listing::{self, Dialect};
use leasedesk_store::rows::signed;
use leasedesk_store::rows::{
    self, count, millis, parsed, parsed_opt, proposal_state_str, ACCOUNT_COLUMNS, BLOB_DIGESTS,
    CHANGE_COLUMNS, CHECKOUT_COLUMNS, EDIT_COLUMNS, HEAD_COLUMNS, HELD_PATH_COLUMNS, LEASE_COLUMNS,
    LFS_OBJECT_COLUMNS, PROPOSAL_COLUMNS, REQUESTS_JOINED, REQUEST_COLUMNS, REQUEST_FIELDS,
    REQUEST_UPDATE,
};
use leasedesk_store::{
    head_moved, inserted_once, resolved, ChangeRow, CheckoutRow, Decision, EditRow, EventRows,
    FolderRow, HeldPath, Hidden, LeaseAt, ListQuery, NewEvent, RequestRow, StoredResult, Tx,
};
use tokio_postgres::types::ToSql;

/// Writes an artifact's lease: `$1` its id, then [`rows::lease_fields`].
macro_rules! put_lease_sql {
    () => {
        "INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (artifact_id) DO UPDATE SET holder = $2, participant = $3, kind = $4,
             checkout_id = $5, note = $6, acquired_at = $7, expires_at = $8"
    };
}

/// An artifact's row as [`rows::artifact`] reads it, `id` being SQL for its id.
fn artifact_where(id: &str) -> String {
    rows::artifact_select(&format!("WHERE a.id = {id}"))
}

impl Tx for PgTx<'_> {
    fn now(&self, clock: &Clock) -> Result<Timestamp> {
        self.time(clock)
    }

    fn require_durable(&self) {
        self.durable.set(true);
    }

    fn savepoint(&self, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<Result<()>> {
        self.in_savepoint(f)
    }

    // ----- participants

    fn account(&self, participant: &Participant) -> Result<Option<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM participants WHERE participant = $1");
        self.query_opt(&sql, &[&participant.as_str()])?
            .map(|r| rows::account(&r))
            .transpose()
    }

    fn insert_account(&self, account: &Account) -> Result<()> {
        let fields = rows::account_fields(account);
        let params: Vec<&(dyn ToSql + Sync)> = fields.iter().map(|f| f as _).collect();
        let inserted = self.execute(
            "INSERT INTO participants (participant, admin, created_at) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &params,
        )?;
        inserted_once(account, inserted)
    }

    fn accounts(&self) -> Result<Vec<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM participants ORDER BY participant");
        self.query(&sql, &[])?.iter().map(rows::account).collect()
    }

    // ----- artifacts and versions

    fn artifact_id_by_path(&self, path: &RepoPath) -> Result<Option<ArtifactId>> {
        self.lock_paths()?;
        self.query_opt(
            "SELECT id FROM artifacts WHERE path = $1 OR path_key = $2
             ORDER BY path = $1 DESC, path LIMIT 1",
            &[&path.as_str(), &path.collision_key()],
        )?
        .map(|r| parsed(&r, 0))
        .transpose()
    }

    fn artifacts_with_key(&self, key: &str) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.lock_paths()?;
        self.query(
            "SELECT id, path FROM artifacts WHERE path_key = $1 ORDER BY path",
            &[&key],
        )?
        .iter()
        .map(rows::id_and_path)
        .collect()
    }

    fn artifacts_under_key(&self, key: &str, limit: u32) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.lock_paths()?;
        self.query(
            "SELECT id, path FROM artifacts WHERE path_key >= $1 || '/' AND path_key < $1 || '0'
             ORDER BY path LIMIT $2",
            &[&key, &i64::from(limit)],
        )?
        .iter()
        .map(rows::id_and_path)
        .collect()
    }

    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()> {
        let old = self.query_one(
            "SELECT path FROM artifacts WHERE id = $1",
            &[&id.to_string()],
        )?;
        self.count_files(&RepoPath::stored(old.get::<_, &str>(0))?, -1)?;
        self.count_files(path, 1)?;
        self.defer(
            "UPDATE artifacts SET path = $2, path_key = $3 WHERE id = $1",
            owned![
                id.to_string(),
                path.as_str().to_owned(),
                path.collision_key(),
            ],
        )?;
        Ok(())
    }

    fn artifact(&self, id: ArtifactId) -> Result<Option<Artifact>> {
        let sql = artifact_where("$1");
        let key = id.to_string();
        let prefetched = self
            .prefetched
            .take()
            .filter(|(artifact, _)| *artifact == id)
            .map(|(_, row)| vec![row]);
        let rows = match prefetched {
            Some(rows) => rows,
            None => self.locked_query(LOCK_ARTIFACT, &key, Some(id), &sql, &[&key])?,
        };
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        if let Some(epoch) = self.held.borrow_mut().artifacts.get_mut(&id) {
            *epoch = Some(count(row, rows::LEASE_EPOCH_COLUMN)?);
        }
        rows::artifact(row).map(Some)
    }

    fn artifacts(&self) -> Result<Vec<Artifact>> {
        let sql = rows::artifact_select("ORDER BY a.path");
        self.query(&sql, &[])?.iter().map(rows::artifact).collect()
    }

    fn artifact_page(&self, query: &ListQuery) -> Result<Vec<Artifact>> {
        let search_index = match &query.text_key {
            Some(key) if key.chars().count() >= 3 && query.within.is_none() => {
                self.few_matches(key)?
            }
            _ => false,
        };
        let dialect = Dialect::Postgres { search_index };
        let (sql, fields) = listing::artifact_page_sql(query, dialect);
        // A range without a limit is walked along the path's index too: the
        // planner would rather read the whole table, and what lies outside
        // the range with it, then sort.
        let walk = query.within.is_some() && query.limit.is_none();
        if walk {
            self.execute("SET LOCAL enable_seqscan = off", &[])?;
            self.execute("SET LOCAL enable_bitmapscan = off", &[])?;
        }
        let found = self.query(&sql, &bound(&fields));
        if walk {
            self.execute("SET LOCAL enable_seqscan = on", &[])?;
            self.execute("SET LOCAL enable_bitmapscan = on", &[])?;
        }
        found?.iter().map(rows::artifact).collect()
    }

    fn subfolders(&self, folder: &str) -> Result<(Vec<FolderRow>, u64)> {
        let folders = self
            .query(&listing::subfolders_sql('$'), &[&folder])?
            .iter()
            .map(|r| {
                Ok(FolderRow {
                    path: r.get(0),
                    key: r.get(1),
                    files: count(r, 2)?,
                })
            })
            .collect::<Result<_>>()?;
        let direct = self.query_opt(&listing::direct_files_sql('$'), &[&folder])?;
        Ok((
            folders,
            direct.map(|r| count(&r, 0)).transpose()?.unwrap_or(0),
        ))
    }

    fn folder_paths(&self, keys: &[String]) -> Result<Vec<(String, String)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (sql, fields) = listing::folder_paths_sql(keys, PG);
        Ok(self
            .query(&sql, &bound(&fields))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    fn files_under_key(&self, key: &str, within: &str) -> Result<u64> {
        let (sql, fields) = listing::files_under_key_sql(key, within, PG);
        count(&self.query_one(&sql, &bound(&fields))?, 0)
    }

    fn held_by_folder(
        &self,
        folder: &str,
        now: Timestamp,
        hidden: &[Hidden],
    ) -> Result<Vec<(String, u64)>> {
        let (sql, fields) = listing::held_by_folder_sql(folder, now, hidden, PG);
        self.query(&sql, &bound(&fields))?
            .iter()
            .map(|r| Ok((format!("{folder}{}", r.get::<_, &str>(0)), count(r, 1)?)))
            .collect()
    }

    fn insert_artifact(&self, id: ArtifactId, path: &RepoPath, head: &Head) -> Result<()> {
        // A new row is this transaction's alone until it commits.
        self.held.borrow_mut().artifacts.insert(id, Some(0));
        self.defer(
            "INSERT INTO artifacts (id, path, path_key, head_version, created_at)
             VALUES ($1, $2, $3, $4, $5)",
            owned![
                id.to_string(),
                path.as_str().to_owned(),
                path.collision_key(),
                signed(head.version)?,
                millis(head.committed_at),
            ],
        )?;
        self.count_files(path, 1)?;
        self.insert_version(id, head, None)
    }

    fn commit_version(&self, id: ArtifactId, head: &Head, base: u64) -> Result<()> {
        let moved = self.execute(
            "UPDATE artifacts SET head_version = $1 WHERE id = $2 AND head_version = $3",
            &[&signed(head.version)?, &id.to_string(), &signed(base)?],
        )?;
        head_moved(id, base, moved)?;
        self.insert_version(id, head, Some(base))
    }

    fn versions(&self, id: ArtifactId) -> Result<Vec<(Head, Option<u64>)>> {
        let sql = format!(
            "SELECT {HEAD_COLUMNS}, v.base_version FROM versions v WHERE v.artifact_id = $1 ORDER BY v.version DESC"
        );
        self.query(&sql, &[&id.to_string()])?
            .iter()
            .map(rows::version)
            .collect()
    }

    fn version(&self, id: ArtifactId, version: u64) -> Result<Option<Head>> {
        let Ok(version) = i64::try_from(version) else {
            return Ok(None); // no version is past 2^63 - 1
        };
        let sql = format!(
            "SELECT {HEAD_COLUMNS} FROM versions v WHERE v.artifact_id = $1 AND v.version = $2"
        );
        self.query_opt(&sql, &[&id.to_string(), &version])?
            .map(|r| rows::head(&r, 0))
            .transpose()
    }

    // ----- blobs

    fn names_blob(&self, digest: &Digest) -> Result<bool> {
        Ok(self
            .query_one(&rows::names_blob_sql('$'), &[&digest.as_str()])?
            .try_get(0)?)
    }

    fn blob_digests(&self) -> Result<std::collections::HashSet<Digest>> {
        self.query(BLOB_DIGESTS, &[])?
            .iter()
            .map(|r| parsed(r, 0))
            .collect()
    }

    fn chunk_list(&self, digest: &Digest) -> Result<Option<Vec<u8>>> {
        self.query_opt(
            "SELECT list FROM chunk_lists WHERE digest = $1",
            &[&digest.as_str()],
        )?
        .map(|r| Ok(r.try_get(0)?))
        .transpose()
    }

    fn put_chunk_list(&self, digest: &Digest, list: &[u8]) -> Result<()> {
        self.execute(
            "INSERT INTO chunk_lists (digest, list) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&digest.as_str(), &list],
        )?;
        Ok(())
    }

    // ----- leases

    fn put_lease(&self, artifact_id: ArtifactId, lease: &Lease) -> Result<()> {
        // A new lease's epoch is counted in the same statement.
        let sql = match self.take_epoch_count(artifact_id) {
            true => concat!(
                "WITH counted AS (UPDATE artifacts SET lease_epoch = lease_epoch + 1 WHERE id = $1) ",
                put_lease_sql!()
            ),
            false => put_lease_sql!(),
        };
        self.defer(sql, owned_fields(rows::lease_fields(artifact_id, lease)))?;
        Ok(())
    }

    fn delete_lease(&self, artifact_id: ArtifactId) -> Result<()> {
        self.defer(
            "DELETE FROM leases WHERE artifact_id = $1",
            owned![artifact_id.to_string(),],
        )?;
        Ok(())
    }

    fn lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        if let Some(Some(epoch)) = self.held.borrow().artifacts.get(&artifact_id) {
            return Ok(*epoch);
        }
        count(
            &self.query_one(
                "SELECT lease_epoch FROM artifacts WHERE id = $1",
                &[&artifact_id.to_string()],
            )?,
            0,
        )
    }

    fn next_lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        // Known from the artifact's read under its lock: no need to wait.
        let known = self
            .held
            .borrow()
            .artifacts
            .get(&artifact_id)
            .copied()
            .flatten();
        if let Some(epoch) = known {
            self.count_epoch_later(artifact_id)?;
            self.held
                .borrow_mut()
                .artifacts
                .insert(artifact_id, Some(epoch + 1));
            return Ok(epoch + 1);
        }
        let epoch = count(
            &self.query_one(
                "UPDATE artifacts SET lease_epoch = lease_epoch + 1 WHERE id = $1 RETURNING lease_epoch",
                &[&artifact_id.to_string()],
            )?,
            0,
        )?;
        if let Some(known) = self.held.borrow_mut().artifacts.get_mut(&artifact_id) {
            *known = Some(epoch);
        }
        Ok(epoch)
    }

    fn live_lease_count(&self, now: Timestamp) -> Result<u64> {
        count(
            &self.query_one(
                "SELECT COUNT(*) FROM leases WHERE expires_at > $1",
                &[&millis(now)],
            )?,
            0,
        )
    }

    /// Lapsed leases. In a write, of the artifacts it could lock at once:
    /// each server's sweeper takes what no other write holds, and records
    /// it under the lock, so each lapse is recorded once.
    fn lapsed_leases(&self, now: Timestamp) -> Result<Vec<(ArtifactId, Lease)>> {
        let now = millis(now);
        let ids: Vec<String> = if self.write {
            let locked = self.query(
                "UPDATE artifacts SET touched_at = GREATEST(touched_at, $1)
                 WHERE id IN (SELECT a.id FROM artifacts a JOIN leases l ON l.artifact_id = a.id
                              WHERE l.expires_at <= $1 FOR NO KEY UPDATE OF a SKIP LOCKED)
                 RETURNING id, touched_at",
                &[&now],
            )?;
            let mut ids = Vec::new();
            for row in &locked {
                let id: ArtifactId = parsed(row, 0)?;
                self.held.borrow_mut().artifacts.entry(id).or_insert(None);
                // Changed at a later time meanwhile: its next sweep records it.
                if row.try_get::<_, i64>(1)? <= now {
                    ids.push(id.to_string());
                }
            }
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            ids
        } else {
            Vec::new()
        };
        let sql = format!(
            "SELECT l.artifact_id, {LEASE_COLUMNS} FROM leases l
             WHERE l.expires_at <= $1 AND ($2 = false OR l.artifact_id = ANY($3))
             ORDER BY l.artifact_id"
        );
        self.query(&sql, &[&now, &self.write, &ids])?
            .iter()
            .map(rows::lapsed_lease)
            .collect()
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
             WHERE a.path >= $1 AND a.path < $2 AND a.path > $3 AND l.expires_at > $4
             ORDER BY a.path LIMIT $5"
        );
        let end = rows::folder_end(folder);
        self.query(
            &sql,
            &[&folder, &end, &after, &millis(now), &i64::from(limit)],
        )?
        .iter()
        .map(rows::lease_at)
        .collect()
    }

    fn held_path(&self, key: &str) -> Result<Option<HeldPath>> {
        self.lock_paths()?;
        let sql = format!("SELECT {HELD_PATH_COLUMNS} FROM held_paths h WHERE h.path_key = $1");
        self.query_opt(&sql, &[&key])?
            .map(|r| rows::held_path(&r))
            .transpose()
    }

    fn held_path_by_id(&self, id: CheckoutId) -> Result<Option<HeldPath>> {
        self.lock_paths()?;
        let sql = format!("SELECT {HELD_PATH_COLUMNS} FROM held_paths h WHERE h.id = $1");
        self.query_opt(&sql, &[&id.to_string()])?
            .map(|r| rows::held_path(&r))
            .transpose()
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
             WHERE h.path >= $1 AND h.path < $2 AND h.path > $3 AND h.expires_at > $4
             ORDER BY h.path LIMIT $5"
        );
        let end = rows::folder_end(folder);
        self.query(
            &sql,
            &[&folder, &end, &after, &millis(now), &i64::from(limit)],
        )?
        .iter()
        .map(rows::held_path)
        .collect()
    }

    fn put_held_path(&self, held: &HeldPath) -> Result<()> {
        self.lock_paths()?;
        self.defer(
            rows::PUT_HELD_PATH,
            owned_fields(rows::held_path_fields(held)),
        )
    }

    fn delete_held_path(&self, key: &str) -> Result<()> {
        self.lock_paths()?;
        self.defer(
            "DELETE FROM held_paths WHERE path_key = $1",
            owned![key.to_owned(),],
        )
    }

    fn lfs_object(&self, folder: &str, oid: &str) -> Result<Option<LfsObject>> {
        let sql =
            format!("SELECT {LFS_OBJECT_COLUMNS} FROM lfs_objects WHERE folder = $1 AND oid = $2");
        self.query_opt(&sql, &[&folder, &oid])?
            .map(|r| rows::lfs_object(&r))
            .transpose()
    }

    fn put_lfs_object(&self, folder: &str, object: &LfsObject, now: Timestamp) -> Result<()> {
        self.defer(
            rows::PUT_LFS_OBJECT,
            owned_fields(rows::lfs_object_fields(folder, object, now)?),
        )
    }

    fn secret(&self, name: &str, made: &str) -> Result<String> {
        self.execute(rows::PUT_SECRET, &[&name, &made])?;
        Ok(self
            .query_one("SELECT value FROM secrets WHERE name = $1", &[&name])?
            .try_get(0)?)
    }

    // ----- check-outs

    fn checkout(&self, id: CheckoutId) -> Result<Option<CheckoutRow>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id WHERE c.id = $1"
        );
        let by = "(SELECT artifact_id FROM checkouts WHERE id = $1)";
        let row = self.with_artifact(LOCK_BY_CHECKOUT, &id.to_string(), by, &sql, |r| {
            rows::checkout(r)
        })?;
        row.map(|row| resolved(self, row)).transpose()
    }

    fn checkouts_of(&self, actor: &Participant, open_only: bool) -> Result<Vec<Checkout>> {
        let sql = format!(
            "SELECT {CHECKOUT_COLUMNS} FROM checkouts c JOIN artifacts a ON a.id = c.artifact_id
             WHERE c.actor = $1 AND ($2 = false OR c.state = 'open') ORDER BY c.created_at DESC, c.id"
        );
        self.query(&sql, &[&actor.as_str(), &open_only])?
            .iter()
            .map(|r| Ok(resolved(self, rows::checkout(r)?)?.checkout))
            .collect()
    }

    fn put_checkout(
        &self,
        row: &CheckoutRow,
        result: Option<&StoredResult>,
        closed_at: Option<Timestamp>,
    ) -> Result<()> {
        self.defer(
            "INSERT INTO checkouts (id, artifact_id, version, digest, actor, note, created_at, expires_at,
                 state, closed_at, checkin_digest, result, broken_by, broken_reason, broken_at, lease_epoch,
                 staged_digest, staged_size, change_id, device_id, device_name)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
             ON CONFLICT (id) DO UPDATE SET expires_at = $8, state = $9, closed_at = $10,
                 checkin_digest = $11, result = $12, broken_by = $13, broken_reason = $14, broken_at = $15,
                 lease_epoch = $16, staged_digest = $17, staged_size = $18, change_id = $19",
            owned_fields(rows::checkout_fields(row, result, closed_at)?),
        )?;
        Ok(())
    }

    // ----- edits

    fn edit(&self, id: EditId) -> Result<Option<EditRow>> {
        let sql = format!("SELECT {EDIT_COLUMNS} FROM edits WHERE id = $1");
        let by = "(SELECT artifact_id FROM edits WHERE id = $1)";
        self.with_artifact(LOCK_BY_EDIT, &id.to_string(), by, &sql, |r| rows::edit(r))
    }

    fn put_edit(&self, row: &EditRow, now: Timestamp) -> Result<()> {
        self.defer(
            "INSERT INTO edits (id, artifact_id, participant, base_version, base_digest, created_at, expires_at,
                 state, commit_digest, result)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (id) DO UPDATE SET state = $8, commit_digest = $9, result = $10",
            owned_fields(rows::edit_fields(row, now)?),
        )?;
        Ok(())
    }

    // ----- proposals

    fn proposal(&self, id: ProposalId) -> Result<Option<Proposal>> {
        let sql = format!("SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE id = $1");
        let key = id.to_string();
        self.locked_query(LOCK_BY_PROPOSAL, &key, None, &sql, &[&key])?
            .first()
            .map(rows::proposal)
            .transpose()
    }

    fn proposals(&self, filter: &ProposalFilter) -> Result<Vec<Proposal>> {
        let sql = format!(
            "SELECT {PROPOSAL_COLUMNS} FROM proposals
             WHERE ($1::text IS NULL OR artifact_id = $1) AND ($2::text IS NULL OR state = $2)
             ORDER BY created_at, id"
        );
        self.query(
            &sql,
            &[
                &filter.artifact.map(|id| id.to_string()),
                &filter.state.map(proposal_state_str),
            ],
        )?
        .iter()
        .map(rows::proposal)
        .collect()
    }

    fn successor(&self, id: ProposalId) -> Result<Option<ProposalId>> {
        match self.query_opt(
            "SELECT superseded_by FROM proposals WHERE id = $1",
            &[&id.to_string()],
        )? {
            None => Ok(None),
            Some(r) => parsed_opt(&r, 0),
        }
    }

    fn insert_proposal(&self, p: &Proposal) -> Result<()> {
        self.require_durable();
        self.defer(
            &format!("INSERT INTO proposals ({PROPOSAL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"),
            owned_fields(rows::proposal_fields(p)?),
        )?;
        Ok(())
    }

    fn decide_proposal(&self, id: ProposalId, decision: &Decision) -> Result<()> {
        self.defer(
            "UPDATE proposals SET state = $2, decided_by = $3, decided_at = $4, superseded_by = $5
             WHERE id = $1 AND state = 'open'",
            owned_fields(rows::decision_fields(id, decision)),
        )?;
        Ok(())
    }

    // ----- changes

    fn insert_change(&self, change: &ChangeRow) -> Result<()> {
        self.require_durable();
        self.defer(
            &format!("INSERT INTO changes ({CHANGE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"),
            owned_fields(rows::change_fields(change)),
        )
    }

    fn change(&self, id: ChangeId) -> Result<Option<ChangeRow>> {
        let sql = format!("SELECT {CHANGE_COLUMNS} FROM changes WHERE id = $1");
        self.query_opt(&sql, &[&id.to_string()])?
            .map(|r| rows::change(&r))
            .transpose()
    }

    fn change_proposals(&self, id: ChangeId) -> Result<Vec<Proposal>> {
        let sql = format!(
            "SELECT {PROPOSAL_COLUMNS} FROM proposals WHERE change_id = $1 ORDER BY created_at, id"
        );
        self.query(&sql, &[&id.to_string()])?
            .iter()
            .map(rows::proposal)
            .collect()
    }

    fn drop_blob(&self, digest: &Digest) -> Result<()> {
        self.defer(
            "INSERT INTO dropped_blobs (digest) VALUES ($1) ON CONFLICT DO NOTHING",
            owned![digest.to_string()],
        )
    }

    fn dropped_blobs(&self, limit: u32) -> Result<Vec<Digest>> {
        self.query(
            "SELECT digest FROM dropped_blobs LIMIT $1",
            &[&i64::from(limit)],
        )?
        .iter()
        .map(|r| parsed(r, 0))
        .collect()
    }

    fn forget_dropped_blob(&self, digest: &Digest) -> Result<()> {
        self.defer(
            "DELETE FROM dropped_blobs WHERE digest = $1",
            owned![digest.to_string()],
        )
    }

    // ----- requests

    fn request(&self, id: RequestId) -> Result<Option<RequestRow>> {
        let sql = format!("SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED} WHERE r.id = $1");
        let key = id.to_string();
        self.locked_query(LOCK_BY_REQUEST, &key, None, &sql, &[&key])?
            .first()
            .map(rows::request)
            .transpose()
    }

    fn checkout_requests(&self, checkout: CheckoutId) -> Result<Vec<RequestRow>> {
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED} WHERE r.checkout_id = $1
             ORDER BY r.created_at, r.id"
        );
        self.query(&sql, &[&checkout.to_string()])?
            .iter()
            .map(rows::request)
            .collect()
    }

    fn requests_of(&self, participant: &Participant, live_only: bool) -> Result<Vec<Request>> {
        let sql = format!(
            "SELECT {REQUEST_COLUMNS} FROM {REQUESTS_JOINED}
             WHERE (r.to_participant = $1 OR r.from_participant = $1)
               AND (NOT $2 OR r.state IN ('open', 'replied'))
             ORDER BY r.created_at DESC, r.id"
        );
        self.query(&sql, &[&participant.as_str(), &live_only])?
            .iter()
            .map(|r| rows::request(r).map(|row| row.request))
            .collect()
    }

    fn put_request(&self, row: &RequestRow) -> Result<()> {
        self.defer(
            &format!(
                "INSERT INTO requests ({REQUEST_FIELDS})
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                 ON CONFLICT (id) DO UPDATE SET {REQUEST_UPDATE}"
            ),
            owned_fields(rows::request_fields(row)),
        )
    }

    // ----- events

    fn insert_event(&self, e: NewEvent) -> Result<()> {
        self.queue_event(e)
    }

    fn event_rows(&self, page: EventRows) -> Result<Vec<Event>> {
        let sql = rows::events_sql('$', &page);
        let (bound, limit) = (page.bound, i64::from(page.limit));
        let rows = match page.artifact.map(|id| id.to_string()) {
            None => self.query(&sql, &[&bound, &limit])?,
            Some(id) => self.query(&sql, &[&bound, &limit, &id])?,
        };
        rows.iter().map(rows::event).collect()
    }

    fn last_event_seq(&self) -> Result<u64> {
        count(
            &self.query_one("SELECT COALESCE(MAX(seq), 0)::bigint FROM events", &[])?,
            0,
        )
    }
}

/// Parameters for a query from their values.
fn bound(fields: &[rows::Field]) -> Vec<&(dyn ToSql + Sync)> {
    fields.iter().map(|f| f as _).collect()
}

/// PostgreSQL's SQL where a search's plan does not matter.
const PG: Dialect = Dialect::Postgres {
    search_index: false,
};

impl PgTx<'_> {
    /// Whether so few paths contain `key` (3 characters or more) that
    /// sorting the trigram index's matches beats walking every path. Asked
    /// of that index alone: with a LIMIT the planner would walk the table
    /// and, for a rare text, read all of it.
    fn few_matches(&self, key: &str) -> Result<bool> {
        let (sql, fields) = listing::few_matches_sql(key, listing::FEW_MATCHES, PG);
        self.execute("SET LOCAL enable_seqscan = off", &[])?;
        self.execute("SET LOCAL enable_indexscan = off", &[])?;
        let found = self.query_one(&sql, &bound(&fields));
        self.execute("SET LOCAL enable_seqscan = on", &[])?;
        self.execute("SET LOCAL enable_indexscan = on", &[])?;
        Ok(count(&found?, 0)? < listing::FEW_MATCHES as u64)
    }

    /// Adds `by` files (1 or -1) to each folder above `path`.
    fn count_files(&self, path: &RepoPath, by: i64) -> Result<()> {
        for row in listing::folder_counts(path, by) {
            let folder = row[0].clone();
            self.defer(&listing::count_files_sql('$'), owned_fields(row))?;
            if by < 0 {
                self.defer(
                    &listing::forget_empty_folder_sql('$'),
                    owned_fields(vec![folder]),
                )?;
            }
        }
        Ok(())
    }

    /// The row `sql` reads by `key` (`$1`), decoded by `decode`, in a write
    /// with its artifact (`by` names it) locked first (see
    /// [`PgTx::locked_query`]) and read ahead in the same statement: the
    /// rules read the artifact of a check-out or edit next, and
    /// `Tx::artifact` then finds it.
    fn with_artifact<T>(
        &self,
        lock: &str,
        key: &str,
        by: &str,
        sql: &str,
        decode: impl Fn(&Columns) -> Result<T>,
    ) -> Result<Option<T>> {
        // The artifact's columns, then the row's.
        let count = |list: &str| list.split(',').count();
        let artifact_columns = 2 + count(HEAD_COLUMNS) + count(LEASE_COLUMNS) + 1;
        let both = format!("SELECT x.*, y.* FROM ({}) x, ({sql}) y", artifact_where(by));
        let Some(row) = self
            .locked_query(lock, key, None, &both, &[&key])?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let value = decode(&Columns(&row, artifact_columns))?;
        if self.write {
            *self.prefetched.borrow_mut() = Some((parsed(&row, 0)?, row));
        }
        Ok(Some(value))
    }

    fn insert_version(&self, id: ArtifactId, head: &Head, base: Option<u64>) -> Result<()> {
        self.require_durable();
        self.defer(
            "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at, base_version, message, change_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            owned_fields(rows::version_fields(id, head, base)?),
        )?;
        Ok(())
    }
}

//! One transaction on PostgreSQL as the rules see it: how it runs the
//! statements both stores share ([`Sql`], for the families' defaults in
//! `store::transaction`), which artifact a read locks first (see `tx`), and
//! what it writes its own way: lease epochs counted with the lease, lapsed
//! leases taken under their lock, pages of a search, and the steps of
//! uploads and failed redeems whose SQL is PostgreSQL's. Rows map through
//! the shared `store::rows`; never decode a row here by hand.

use tokio_postgres::types::ToSql;

use super::tx::{owned, owned_fields, LOCK_BY_PROPOSAL, LOCK_BY_REQUEST};
use super::tx::{Columns, PgTx};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::model::*;
use leasedesk_store::listing::{self, Dialect};
use leasedesk_store::rows::{
    self, count, millis, parsed, Field, NewInboxItem, Row, Statement, HEAD_COLUMNS, LEASE_COLUMNS,
};
use leasedesk_store::uploads::{self, UploadRow, UploadRows, UPLOAD_COLUMNS};
use leasedesk_store::{
    fetch_one, insert_version, resolved, ArtifactRows, ChangeRow, CheckoutRow, CheckoutRows,
    EditRow, LeaseRows, ListQuery, NewEvent, RequestRow, ReviewRows, Sql, StudioRows, Tx,
};

/// PostgreSQL's SQL where a search's plan does not matter.
const PG: Dialect = Dialect::Postgres {
    search_index: false,
};

/// The advisory locks of uploads' owners are in a space of their own.
const UPLOADS_LOCK_SPACE: i32 = 0x5550;

impl Sql for PgTx<'_> {
    fn dialect(&self) -> Dialect {
        PG
    }

    fn fetch(
        &self,
        statement: &Statement,
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        for row in self.query(statement.sql(), &bound(statement.params()))? {
            each(&row)?;
        }
        Ok(())
    }

    fn run(&self, statement: &Statement) -> Result<u64> {
        self.execute(statement.sql(), &bound(statement.params()))
    }

    fn queue(&self, statement: Statement) -> Result<()> {
        let sql = statement.sql().to_owned();
        self.defer(&sql, owned_fields(statement.into_params()))
    }

    fn lock_paths(&self) -> Result<()> {
        self.take_paths_lock()
    }

    fn require_durable(&self) {
        self.durable.set(true);
    }
}

impl Tx for PgTx<'_> {
    fn now(&self, clock: &Clock) -> Result<Timestamp> {
        self.time(clock)
    }

    fn savepoint(&self, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<Result<()>> {
        self.in_savepoint(f)
    }

    fn insert_event(&self, e: NewEvent) -> Result<()> {
        self.queue_event(e)
    }

    fn last_event_seq(&self) -> Result<u64> {
        count(
            &self.query_one("SELECT COALESCE(MAX(seq), 0)::bigint FROM events", &[])?,
            0,
        )
    }
}

/// An artifact read in a write is read under its lock (see `tx`); a file
/// counts in its folders as it is imported and renamed.
impl ArtifactRows for PgTx<'_> {
    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()> {
        let old = fetch_one(self, rows::select_artifact_path('$', id), |r| r.text(0))?;
        self.count_files(&RepoPath::stored(&old)?, -1)?;
        self.count_files(path, 1)?;
        self.queue(rows::rename_artifact('$', id, path))
    }

    /// Read again only after this transaction writes.
    fn artifact(&self, id: ArtifactId) -> Result<Option<Artifact>> {
        if let Some((_, row, at)) = self.prefetched.borrow().as_ref().filter(|(a, ..)| *a == id) {
            return self.artifact_of(id, &Columns(row, *at)).map(Some);
        }
        let key = id.to_string();
        let read = self.lock_and_read("$1", &key, Some(id), &artifact_where("$1"))?;
        let Some((row, at)) = read else {
            return Ok(None);
        };
        let artifact = self.artifact_of(id, &Columns(&row, at))?;
        if self.write {
            *self.prefetched.borrow_mut() = Some((id, row, at));
        }
        Ok(Some(artifact))
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
                rows::signed(head.version)?,
                millis(head.committed_at),
            ],
        )?;
        self.count_files(path, 1)?;
        insert_version(self, id, head, None)
    }

    fn put_chunk_list(&self, digest: &Digest, list: &[u8]) -> Result<()> {
        self.execute(
            "INSERT INTO chunk_lists (digest, list) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&digest.as_str(), &list],
        )?;
        Ok(())
    }
}

/// A lease's epoch is known from its artifact's read under the lock, and
/// counted with the lease's write.
impl LeaseRows for PgTx<'_> {
    fn put_lease(&self, artifact_id: ArtifactId, lease: &Lease) -> Result<()> {
        let put = rows::put_lease('$', artifact_id, lease);
        let row = ("leases", artifact_id.to_string());
        self.hold(row, PUT_LEASE, owned_fields(put.into_params()))
    }

    fn delete_lease(&self, artifact_id: ArtifactId) -> Result<()> {
        let delete = rows::delete_lease('$', artifact_id);
        let row = ("leases", artifact_id.to_string());
        let sql = delete.sql().to_owned();
        self.hold(row, &sql, owned_fields(delete.into_params()))
    }

    fn lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        if let Some(Some(epoch)) = self.held.borrow().artifacts.get(&artifact_id) {
            return Ok(*epoch);
        }
        let epoch = rows::select_lease_epoch('$', artifact_id);
        fetch_one(self, epoch, |r| count(r, 0))
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
            self.hold_epoch(artifact_id)?;
            self.held
                .borrow_mut()
                .artifacts
                .insert(artifact_id, Some(epoch + 1));
            return Ok(epoch + 1);
        }
        let epoch = rows::next_lease_epoch('$', artifact_id);
        let epoch = fetch_one(self, epoch, |r| count(r, 0))?;
        if let Some(known) = self.held.borrow_mut().artifacts.get_mut(&artifact_id) {
            *known = Some(epoch);
        }
        Ok(epoch)
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
                let mut held = self.held.borrow_mut();
                held.artifacts.entry(id).or_insert(None);
                held.touched.insert(id);
                drop(held);
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
}

/// Check-outs, edits, proposals and requests are reached through their
/// artifact's lock (see `tx`).
impl CheckoutRows for PgTx<'_> {
    fn checkout(&self, id: CheckoutId) -> Result<Option<CheckoutRow>> {
        let sql = rows::select_checkout('$', id);
        let by = "(SELECT artifact_id FROM checkouts WHERE id = $1)";
        let row = self.with_artifact(&id.to_string(), by, sql.sql(), |r| rows::checkout(r))?;
        row.map(|row| resolved(self, row)).transpose()
    }

    /// Held, to go in one statement with its lease's write.
    fn put_edit(&self, row: &EditRow, now: Timestamp) -> Result<()> {
        let put = rows::put_edit('$', row, now)?;
        let sql = put.sql().to_owned();
        let row = ("edits", row.edit.id.to_string());
        self.hold(row, &sql, owned_fields(put.into_params()))
    }

    fn edit(&self, id: EditId) -> Result<Option<EditRow>> {
        let sql = rows::select_edit('$', id);
        let by = "(SELECT artifact_id FROM edits WHERE id = $1)";
        self.with_artifact(&id.to_string(), by, sql.sql(), |r| rows::edit(r))
    }

    fn proposal(&self, id: ProposalId) -> Result<Option<Proposal>> {
        let sql = rows::select_proposal('$', id);
        self.locked_first(LOCK_BY_PROPOSAL, &id.to_string(), sql.sql(), rows::proposal)
    }

    /// Kept through power loss, as the versions and proposals it names.
    fn insert_change(&self, change: &ChangeRow) -> Result<()> {
        self.require_durable();
        self.queue(rows::insert_change('$', change))
    }

    fn request(&self, id: RequestId) -> Result<Option<RequestRow>> {
        let sql = rows::select_request('$', id);
        self.locked_first(LOCK_BY_REQUEST, &id.to_string(), sql.sql(), rows::request)
    }
}

/// Review's writes lock their file first, by reading it (`rules::review`);
/// inbox items are numbered at commit, after the events (see `tx`).
impl ReviewRows for PgTx<'_> {
    fn add_inbox_items(&self, items: Vec<NewInboxItem>) -> Result<()> {
        if !self.write {
            return Err(Error::Internal("inbox items written in a read".into()));
        }
        self.inbox.borrow_mut().extend(items);
        Ok(())
    }
}

/// None of a studio's rows locks an artifact. The permissions' stamp comes
/// with the first artifact a transaction reads.
impl StudioRows for PgTx<'_> {
    fn permissions_stamp(&self) -> Result<Option<String>> {
        if let Some(stamp) = self.stamp.borrow().clone() {
            return Ok(stamp);
        }
        let stamp =
            leasedesk_store::fetch_first(self, rows::select_permissions_stamp(), |r| r.text(0))?;
        *self.stamp.borrow_mut() = Some(stamp.clone());
        Ok(stamp)
    }

    fn put_permissions(&self, stamp: &str, document: &Permissions) -> Result<()> {
        self.stamp.take();
        self.run(&rows::put_permissions('$', stamp, document)?)?;
        Ok(())
    }

    fn forget_failed_redeems(&self, over_before: Timestamp, limit: u32) -> Result<u64> {
        // Rows another server's redeem holds are left for a later write:
        // pruning never waits.
        self.execute(
            "DELETE FROM failed_redeems WHERE address IN (
                 SELECT address FROM failed_redeems WHERE since <= $1
                 ORDER BY since LIMIT $2 FOR UPDATE SKIP LOCKED)",
            &[&millis(over_before), &i64::from(limit)],
        )
    }
}

/// Resumable uploads' rows. Several servers begin uploads at once: a
/// begin's count and insert run under an advisory lock of the owner's, and
/// a part counts only where the row still says so (one `UPDATE … WHERE`),
/// so two servers never both move an upload.
impl UploadRows for PgTx<'_> {
    fn lock_uploads_of(&self, owner: &Participant) -> Result<()> {
        self.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            &[&UPLOADS_LOCK_SPACE, &owner.as_str()],
        )?;
        Ok(())
    }

    fn next_upload_writer(&self, id: UploadId) -> Result<Option<UploadRow>> {
        self.query_opt(
            &format!(
                "UPDATE uploads SET writer = writer + 1 WHERE id = $1 RETURNING {UPLOAD_COLUMNS}"
            ),
            &[&id.to_string()],
        )?
        .map(|r| uploads::upload_row(&r))
        .transpose()
    }

    fn add_upload_piece(&self, id: UploadId, writer: u64, from: u64, to: u64) -> Result<bool> {
        let moved = self.run(&uploads::reach_upload('$', id, writer, from, to))?;
        if moved == 1 {
            self.execute(
                "INSERT INTO upload_pieces (upload_id, start, stop) VALUES ($1, $2, $3) \
                 ON CONFLICT (upload_id, start) DO UPDATE SET stop = $3",
                &[&id.to_string(), &(from as i64), &(to as i64)],
            )?;
        }
        Ok(moved == 1)
    }
}

/// Parameters for a query from their values.
fn bound(fields: &[Field]) -> Vec<&(dyn ToSql + Sync)> {
    fields.iter().map(|f| f as _).collect()
}

/// [`PUT_LEASE`]'s lease takes its artifact's path and key here, not in
/// migration 0006's trigger (a statement of its own).
const PUT_LEASE: &str = "INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id,
         note, acquired_at, expires_at, path, path_key)
     SELECT $1, $2, $3, $4, $5, $6, $7::bigint, $8::bigint, a.path, a.path_key
     FROM artifacts a WHERE a.id = $1
     ON CONFLICT (artifact_id) DO UPDATE SET holder = $2, participant = $3, kind = $4,
         checkout_id = $5, note = $6, acquired_at = $7, expires_at = $8";

/// The column of [`artifact_where`] holding the permissions' stamp.
const STAMP_COLUMN: usize = rows::LEASE_EPOCH_COLUMN + 1;

/// An artifact's row as [`rows::artifact`] reads it, `id` being SQL for
/// its id, then (column [`STAMP_COLUMN`]) the permissions' stamp: the rules
/// ask for it next, to know what the caller may do there.
fn artifact_where(id: &str) -> String {
    format!(
        "SELECT x.*, (SELECT stamp FROM permissions WHERE id = 1) FROM ({}) x",
        rows::artifact_select(&format!("WHERE a.id = {id}"))
    )
}

impl PgTx<'_> {
    /// The artifact `id` in a row of [`artifact_where`], noting its lease
    /// epoch (if locked) and the permissions' stamp.
    fn artifact_of(&self, id: ArtifactId, row: &Columns) -> Result<Artifact> {
        if let Some(epoch) = self.held.borrow_mut().artifacts.get_mut(&id) {
            *epoch = Some(count(row, rows::LEASE_EPOCH_COLUMN)?);
        }
        *self.stamp.borrow_mut() = Some(row.text_opt(STAMP_COLUMN)?);
        rows::artifact(row)
    }

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

    /// The row `sql` reads by `key` (`$1`), read by `read`, in a write
    /// with the artifact that `lock` names by the same key locked first
    /// (see [`PgTx::locked_query`]).
    fn locked_first<T>(
        &self,
        lock: &str,
        key: &str,
        sql: &str,
        read: impl Fn(&tokio_postgres::Row) -> Result<T>,
    ) -> Result<Option<T>> {
        self.locked_query(lock, key, None, sql, &[&key])?
            .first()
            .map(read)
            .transpose()
    }

    /// The row `sql` reads by `key` (`$1`), decoded by `decode`, in a write
    /// with its artifact (`by` names it) locked and read in the same
    /// statement ([`PgTx::lock_and_read`]): the rules read the artifact of
    /// a check-out or edit next, and `ArtifactRows::artifact` then finds it.
    fn with_artifact<T>(
        &self,
        key: &str,
        by: &str,
        sql: &str,
        decode: impl Fn(&Columns) -> Result<T>,
    ) -> Result<Option<T>> {
        // The artifact's columns (with the stamp), then the row's.
        let count = |list: &str| list.split(',').count();
        let artifact_columns = 2 + count(HEAD_COLUMNS) + count(LEASE_COLUMNS) + 2;
        let both = format!("SELECT x.*, y.* FROM ({}) x, ({sql}) y", artifact_where(by));
        let Some((row, at)) = self.lock_and_read(by, key, None, &both)? else {
            return Ok(None);
        };
        let value = decode(&Columns(&row, at + artifact_columns))?;
        let id: ArtifactId = parsed(&Columns(&row, at), 0)?;
        self.artifact_of(id, &Columns(&row, at))?;
        if self.write {
            *self.prefetched.borrow_mut() = Some((id, row, at));
        }
        Ok(Some(value))
    }
}

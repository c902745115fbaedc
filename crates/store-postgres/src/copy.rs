//! Copying a data folder's rows into an empty PostgreSQL database, whole:
//! `leasedesk migrate`. Every row keeps its ids, times and sequence numbers.
//! Never writes into a database that holds any row, nor leaves half a copy.

use crate::model::collision_key;
use leasedesk_store_sqlite::SqliteStore;

use crate::error::{Error, Result};
use crate::PgStore;

use leasedesk_store::rows::{
    Field, Kind,
    Kind::{Bool, Int, Text},
};

/// Every table, each after those its rows refer to, with its columns.
pub(super) const TABLES: &[(&str, &[(&str, Kind)])] = &[
    (
        "participants",
        &[("participant", Text), ("admin", Bool), ("created_at", Int)],
    ),
    (
        "tokens",
        &[
            ("id", Text),
            ("participant", Text),
            ("hash", Text),
            ("created_at", Int),
            ("revoked_at", Int),
            ("device", Text),
            ("last_used_at", Int),
        ],
    ),
    (
        "invites",
        &[
            ("hash", Text),
            ("participant", Text),
            ("admin", Bool),
            ("created_at", Int),
            ("expires_at", Int),
            ("used_at", Int),
            ("id", Text),
            ("made_by", Text),
        ],
    ),
    (
        "permissions",
        &[("id", Int), ("stamp", Text), ("document", Text)],
    ),
    (
        "artifacts",
        &[
            ("id", Text),
            ("path", Text),
            ("path_key", Text),
            ("head_version", Int),
            ("lease_epoch", Int),
            ("created_at", Int),
        ],
    ),
    (
        "folders",
        &[
            ("path", Text),
            ("parent", Text),
            ("key", Text),
            ("files", Int),
            ("direct", Int),
        ],
    ),
    (
        "versions",
        &[
            ("artifact_id", Text),
            ("version", Int),
            ("digest", Text),
            ("size", Int),
            ("author", Text),
            ("committed_at", Int),
            ("base_version", Int),
            ("message", Text),
            ("change_id", Text),
        ],
    ),
    (
        "leases",
        &[
            ("artifact_id", Text),
            ("holder", Text),
            ("participant", Text),
            ("kind", Text),
            ("checkout_id", Text),
            ("note", Text),
            ("acquired_at", Int),
            ("expires_at", Int),
        ],
    ),
    (
        "checkouts",
        &[
            ("id", Text),
            ("artifact_id", Text),
            ("version", Int),
            ("digest", Text),
            ("actor", Text),
            ("note", Text),
            ("created_at", Int),
            ("expires_at", Int),
            ("lease_epoch", Int),
            ("state", Text),
            ("closed_at", Int),
            ("checkin_digest", Text),
            ("result", Text),
            ("broken_by", Text),
            ("broken_reason", Text),
            ("broken_at", Int),
            ("staged_digest", Text),
            ("staged_size", Int),
            ("change_id", Text),
            ("device_id", Text),
            ("device_name", Text),
        ],
    ),
    (
        "edits",
        &[
            ("id", Text),
            ("artifact_id", Text),
            ("participant", Text),
            ("base_version", Int),
            ("base_digest", Text),
            ("created_at", Int),
            ("expires_at", Int),
            ("state", Text),
            ("commit_digest", Text),
            ("result", Text),
        ],
    ),
    (
        "proposals",
        &[
            ("id", Text),
            ("artifact_id", Text),
            ("base_version", Int),
            ("test_digest", Text),
            ("provenance_version", Int),
            ("provenance_digest", Text),
            ("digest", Text),
            ("size", Int),
            ("author", Text),
            ("checkout_id", Text),
            ("state", Text),
            ("created_at", Int),
            ("decided_by", Text),
            ("decided_at", Int),
            ("superseded_by", Text),
            ("message", Text),
            ("change_id", Text),
        ],
    ),
    (
        "changes",
        &[
            ("id", Text),
            ("author", Text),
            ("message", Text),
            ("created_at", Int),
            ("outcome", Text),
            ("checkouts", Text),
        ],
    ),
    ("dropped_blobs", &[("digest", Text)]),
    (
        "held_paths",
        &[
            ("path_key", Text),
            ("path", Text),
            ("id", Text),
            ("participant", Text),
            ("note", Text),
            ("acquired_at", Int),
            ("expires_at", Int),
            ("device_id", Text),
            ("device_name", Text),
        ],
    ),
    (
        "lfs_objects",
        &[
            ("folder", Text),
            ("oid", Text),
            ("size", Int),
            ("digest", Text),
            ("created_at", Int),
        ],
    ),
    (
        "requests",
        &[
            ("id", Text),
            ("artifact_id", Text),
            ("checkout_id", Text),
            ("from_participant", Text),
            ("to_participant", Text),
            ("message", Text),
            ("state", Text),
            ("reply", Text),
            ("created_at", Int),
            ("replied_at", Int),
            ("ended_at", Int),
            ("notified_at", Int),
        ],
    ),
    (
        "review_threads",
        &[
            ("id", Text),
            ("artifact_id", Text),
            ("number", Int),
            ("version", Int),
            ("proposal_id", Text),
            ("pin", Text),
            ("image", Text),
            ("state", Text),
            ("author", Text),
            ("created_at", Int),
            ("resolved_by", Text),
            ("resolved_at", Int),
            ("body_bytes", Int),
        ],
    ),
    (
        "review_comments",
        &[
            ("id", Text),
            ("thread_id", Text),
            ("artifact_id", Text),
            ("ord", Int),
            ("author", Text),
            ("body", Text),
            ("mentions", Text),
            ("created_at", Int),
        ],
    ),
    (
        "reviews",
        &[
            ("id", Text),
            ("artifact_id", Text),
            ("ord", Int),
            ("version", Int),
            ("proposal_id", Text),
            ("reviewer", Text),
            ("decision", Text),
            ("message", Text),
            ("created_at", Int),
        ],
    ),
    (
        "review_requests",
        &[
            ("artifact_id", Text),
            ("version", Int),
            ("proposal_id", Text),
            ("reviewer", Text),
            ("requested_by", Text),
            ("created_at", Int),
        ],
    ),
    (
        "inbox_items",
        &[
            ("participant", Text),
            ("seq", Int),
            ("kind", Text),
            ("artifact_id", Text),
            ("thread_id", Text),
            ("review_id", Text),
            ("from_participant", Text),
            ("at", Int),
        ],
    ),
    ("inbox_reads", &[("participant", Text), ("up_to", Int)]),
    (
        "events",
        &[
            ("seq", Int),
            ("id", Text),
            ("type", Text),
            ("artifact_id", Text),
            ("participant", Text),
            ("holder", Text),
            ("at", Int),
            ("data", Text),
        ],
    ),
];

/// How many rows of each table were copied.
pub type RowCounts = Vec<(&'static str, u64)>;

/// Copies every row of the SQLite store `from` into the PostgreSQL store
/// `to`, in one transaction of `to`: an interrupted copy leaves `to` empty,
/// so it can simply be run again. Refuses a `to` that holds any row.
pub fn copy_rows(from: &SqliteStore, to: &PgStore) -> Result<RowCounts> {
    to.load(|load| {
        refuse_rows(load)?;
        let mut counts = RowCounts::new();
        let (mut last_seq, mut last_inbox_seq) = (0, 0);
        for (table, columns) in TABLES {
            let mut copied = 0u64;
            from.each_row(table, columns, &mut |mut row| {
                if *table == "artifacts" {
                    fill_path_key(&mut row);
                }
                if *table == "events" {
                    if let Field::Int(Some(seq)) = row[0] {
                        last_seq = last_seq.max(seq);
                    }
                }
                if *table == "inbox_items" {
                    if let Field::Int(Some(seq)) = row[1] {
                        last_inbox_seq = last_inbox_seq.max(seq);
                    }
                }
                load.insert(table, columns, &row)?;
                copied += 1;
                Ok(())
            })?;
            counts.push((*table, copied));
        }
        load.set_last_seq(last_seq)?;
        load.set_last_inbox_seq(last_inbox_seq)?;
        load.failpoints.hit(crate::failpoint::at::MIGRATE_ROWS)?;
        Ok(counts)
    })
}

/// Refuses a target database that holds any row.
pub fn ensure_empty(to: &PgStore) -> Result<()> {
    to.load(refuse_rows)
}

fn refuse_rows(load: &crate::Loader) -> Result<()> {
    for (table, _) in TABLES {
        if load.count(table)? > 0 {
            return Err(Error::Exists(format!(
                "the target database is not empty (its table {table} has rows): migrate into a new database"
            )));
        }
    }
    Ok(())
}

/// An artifact stored before path keys has none: give it its key.
fn fill_path_key(row: &mut [Field]) {
    if let (Field::Text(Some(path)), Field::Text(key @ None)) = (&row[1].clone(), &mut row[2]) {
        *key = Some(collision_key(path));
    }
}

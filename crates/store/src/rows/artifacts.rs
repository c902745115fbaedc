//! Artifacts by path, their heads and versions, and the blobs rows name:
//! their columns, and the statements both stores run.

use super::field::{by_key, count_field, int, text, text_opt};
use super::{
    count, lease, millis, parsed, parsed_opt, signed, stored_path, time_at, unsigned, Field, Row,
    Statement, LEASE_COLUMNS,
};
use crate::error::Result;
use crate::model::*;

/// An artifact's id and path.
pub fn id_and_path(row: &(impl Row + ?Sized)) -> Result<(ArtifactId, RepoPath)> {
    Ok((parsed(row, 0)?, stored_path(row, 1)?))
}

/// The artifact at `path`, or else the one whose path has its collision
/// key, as its id.
pub fn select_artifact_id_by_path(p: char, path: &RepoPath) -> Statement {
    Statement::new(
        format!(
            "SELECT id FROM artifacts WHERE path = {p}1 OR path_key = {p}2
             ORDER BY path = {p}1 DESC, path LIMIT 1"
        ),
        vec![text(path), text(path.collision_key())],
    )
}

/// The artifacts whose path has collision key `key`, by path, as
/// [`id_and_path`] reads them.
pub fn select_artifacts_with_key(p: char, key: &str) -> Statement {
    by_key(
        format!("SELECT id, path FROM artifacts WHERE path_key = {p}1 ORDER BY path"),
        key,
    )
}

/// Artifacts whose key lies under the folder `key`, at most `limit`, by
/// path, as [`id_and_path`] reads them: an index range, since `0` follows
/// `/` in byte order.
pub fn select_artifacts_under_key(p: char, key: &str, limit: u32) -> Statement {
    Statement::new(
        format!(
            "SELECT id, path FROM artifacts WHERE path_key >= {p}1 || '/' AND path_key < {p}1 || '0'
             ORDER BY path LIMIT {p}2"
        ),
        vec![text(key), int(limit.into())],
    )
}

/// An artifact's path, before a rename.
pub fn select_artifact_path(p: char, id: ArtifactId) -> Statement {
    by_key(format!("SELECT path FROM artifacts WHERE id = {p}1"), id)
}

/// Moves an artifact to `path` (its folders' counts and SQLite's search
/// row are the store's to move).
pub fn rename_artifact(p: char, id: ArtifactId, path: &RepoPath) -> Statement {
    Statement::new(
        format!("UPDATE artifacts SET path = {p}2, path_key = {p}3 WHERE id = {p}1"),
        vec![text(id), text(path), text(path.collision_key())],
    )
}

pub const HEAD_COLUMNS: &str =
    "v.version, v.digest, v.size, v.author, v.committed_at, v.message, v.change_id";

/// How many columns [`HEAD_COLUMNS`] has.
pub(super) const HEAD_WIDTH: usize = 7;

/// A head whose [`HEAD_COLUMNS`] begin at column `i`.
pub fn head(row: &(impl Row + ?Sized), i: usize) -> Result<Head> {
    Ok(Head {
        version: count(row, i)?,
        digest: parsed(row, i + 1)?,
        size: count(row, i + 2)?,
        author: parsed(row, i + 3)?,
        committed_at: time_at(row, i + 4)?,
        message: row.text_opt(i + 5)?,
        change_id: parsed_opt(row, i + 6)?,
    })
}

/// A version ([`HEAD_COLUMNS`], then its base version).
pub fn version(row: &(impl Row + ?Sized)) -> Result<(Head, Option<u64>)> {
    let base = row.int_opt(HEAD_WIDTH)?;
    Ok((head(row, 0)?, base.map(unsigned).transpose()?))
}

/// The column of [`artifact_select`] that holds the artifact's lease epoch.
pub const LEASE_EPOCH_COLUMN: usize = 2 + HEAD_WIDTH + 7;

/// An artifact with its head and lease row ([`artifact`] reads them), then
/// (column [`LEASE_EPOCH_COLUMN`]) its lease epoch; `rest` is SQL after the joins.
pub fn artifact_select(rest: &str) -> String {
    artifact_select_from("artifacts a", rest)
}

/// [`artifact_select`] with `from` naming the artifacts `a` (a join that
/// finds them, say).
pub fn artifact_select_from(from: &str, rest: &str) -> String {
    format!(
        "SELECT a.id, a.path, {HEAD_COLUMNS}, {LEASE_COLUMNS}, a.lease_epoch
         FROM {from}
         JOIN versions v ON v.artifact_id = a.id AND v.version = a.head_version
         LEFT JOIN leases l ON l.artifact_id = a.id
         {rest}"
    )
}

pub fn artifact(row: &(impl Row + ?Sized)) -> Result<Artifact> {
    Ok(Artifact {
        id: parsed(row, 0)?,
        path: stored_path(row, 1)?,
        head: head(row, 2)?,
        lease: lease(row, 2 + HEAD_WIDTH)?,
        // The caller's, which the rules set.
        access: Access::Write,
    })
}

/// An artifact by its id, as [`artifact`] reads it.
pub fn select_artifact(p: char, id: ArtifactId) -> Statement {
    Statement::new(
        artifact_select(&format!("WHERE a.id = {p}1")),
        vec![text(id)],
    )
}

/// Every artifact by path, as [`artifact`] reads them.
pub fn select_artifacts() -> Statement {
    Statement::new(artifact_select("ORDER BY a.path"), Vec::new())
}

/// Makes `head` the artifact's head if `base` is: one row moved, or none.
pub fn move_head(p: char, id: ArtifactId, head: &Head, base: u64) -> Result<Statement> {
    Ok(Statement::new(
        format!("UPDATE artifacts SET head_version = {p}1 WHERE id = {p}2 AND head_version = {p}3"),
        vec![count_field(head.version)?, text(id), count_field(base)?],
    ))
}

/// artifact_id, version, digest, size, author, committed_at, base_version,
/// message, change_id
fn version_fields(id: ArtifactId, head: &Head, base: Option<u64>) -> Result<Vec<Field>> {
    Ok(vec![
        text(id),
        count_field(head.version)?,
        text(&head.digest),
        count_field(head.size)?,
        text(&head.author),
        int(millis(head.committed_at)),
        Field::Int(base.map(signed).transpose()?),
        text_opt(head.message.as_ref()),
        text_opt(head.change_id),
    ])
}

pub fn insert_version(
    p: char,
    id: ArtifactId,
    head: &Head,
    base: Option<u64>,
) -> Result<Statement> {
    Ok(Statement::new(
        format!(
            "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at, base_version, message, change_id)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9)"
        ),
        version_fields(id, head, base)?,
    ))
}

/// An artifact's versions, newest first, as [`version`] reads them.
pub fn select_versions(p: char, id: ArtifactId) -> Statement {
    by_key(format!("SELECT {HEAD_COLUMNS}, v.base_version FROM versions v WHERE v.artifact_id = {p}1 ORDER BY v.version DESC"), id)
}

/// One version of an artifact, as [`head`] reads it.
pub fn select_version(p: char, id: ArtifactId, version: i64) -> Statement {
    Statement::new(
        format!(
            "SELECT {HEAD_COLUMNS} FROM versions v WHERE v.artifact_id = {p}1 AND v.version = {p}2"
        ),
        vec![text(id), int(version)],
    )
}

/// Whether a row names a blob: a version, a proposal (of any state: rows
/// are never deleted), bytes staged for a check-out's next change, or a Git
/// LFS object.
pub fn select_names_blob(p: char, digest: &Digest) -> Statement {
    by_key(
        format!(
            "SELECT EXISTS (SELECT 1 FROM versions WHERE digest = {p}1)
             OR EXISTS (SELECT 1 FROM proposals WHERE digest = {p}1)
             OR EXISTS (SELECT 1 FROM checkouts WHERE staged_digest = {p}1)
             OR EXISTS (SELECT 1 FROM lfs_objects WHERE digest = {p}1)"
        ),
        digest,
    )
}

/// Every digest [`select_names_blob`] would find.
pub fn select_blob_digests() -> Statement {
    Statement::new(
        "SELECT digest FROM versions UNION SELECT digest FROM proposals
     UNION SELECT staged_digest FROM checkouts WHERE staged_digest IS NOT NULL
     UNION SELECT digest FROM lfs_objects"
            .into(),
        Vec::new(),
    )
}

/// The chunk list kept for a blob.
pub fn select_chunk_list(p: char, digest: &Digest) -> Statement {
    by_key(
        format!("SELECT list FROM chunk_lists WHERE digest = {p}1"),
        digest,
    )
}

pub fn select_has_chunk_list(p: char, digest: &Digest) -> Statement {
    by_key(
        format!("SELECT EXISTS (SELECT 1 FROM chunk_lists WHERE digest = {p}1)"),
        digest,
    )
}

/// Notes a blob no longer named by a closed check-out's staged bytes.
pub fn drop_blob(p: char, digest: &Digest) -> Statement {
    by_key(
        format!("INSERT INTO dropped_blobs (digest) VALUES ({p}1) ON CONFLICT DO NOTHING"),
        digest,
    )
}

pub fn select_dropped_blobs(p: char, limit: u32) -> Statement {
    Statement::new(
        format!("SELECT digest FROM dropped_blobs LIMIT {p}1"),
        vec![int(limit.into())],
    )
}

pub fn forget_dropped_blob(p: char, digest: &Digest) -> Statement {
    by_key(
        format!("DELETE FROM dropped_blobs WHERE digest = {p}1"),
        digest,
    )
}

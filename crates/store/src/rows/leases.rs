//! Leases, and what Git's locks add to them: leases by folder, paths held
//! with no file, Git LFS objects and the secrets every server shares; their
//! columns, and the statements both stores run.

use super::field::{by_key, int, text, text_opt};
use super::{
    lease_kind, lease_kind_str, millis, parsed, parsed_opt, signed, stored_path, time_at, unsigned,
    Field, Row, Statement,
};
use crate::error::{Error, Result};
use crate::model::*;
use crate::{HeldPath, LeaseAt};

pub const LEASE_COLUMNS: &str =
    "l.holder, l.participant, l.kind, l.checkout_id, l.note, l.acquired_at, l.expires_at";

/// A lease whose [`LEASE_COLUMNS`] begin at column `i`; none if its holder is NULL.
pub fn lease(row: &(impl Row + ?Sized), i: usize) -> Result<Option<Lease>> {
    let Some(holder) = row.text_opt(i)? else {
        return Ok(None);
    };
    Ok(Some(Lease {
        holder,
        participant: parsed(row, i + 1)?,
        kind: lease_kind(&row.text(i + 2)?),
        checkout_id: parsed_opt(row, i + 3)?,
        note: row.text_opt(i + 4)?,
        acquired_at: time_at(row, i + 5)?,
        expires_at: time_at(row, i + 6)?,
    }))
}

/// A lapsed lease: its artifact's id, then [`LEASE_COLUMNS`].
pub fn lapsed_lease(row: &(impl Row + ?Sized)) -> Result<(ArtifactId, Lease)> {
    let lease =
        lease(row, 1)?.ok_or_else(|| Error::Internal("a lease row without a holder".into()))?;
    Ok((parsed(row, 0)?, lease))
}

/// artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at
fn lease_fields(artifact_id: ArtifactId, lease: &Lease) -> Vec<Field> {
    vec![
        text(artifact_id),
        text(&lease.holder),
        text(&lease.participant),
        text(lease_kind_str(lease.kind)),
        text_opt(lease.checkout_id),
        text_opt(lease.note.as_ref()),
        int(millis(lease.acquired_at)),
        int(millis(lease.expires_at)),
    ]
}

/// Writes an artifact's lease, replacing the one it had.
pub fn put_lease(p: char, artifact_id: ArtifactId, lease: &Lease) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8)
             ON CONFLICT (artifact_id) DO UPDATE SET holder = {p}2, participant = {p}3, kind = {p}4,
                 checkout_id = {p}5, note = {p}6, acquired_at = {p}7, expires_at = {p}8"
        ),
        lease_fields(artifact_id, lease),
    )
}

pub fn delete_lease(p: char, artifact_id: ArtifactId) -> Statement {
    by_key(
        format!("DELETE FROM leases WHERE artifact_id = {p}1"),
        artifact_id,
    )
}

/// How many leases were ever taken on the artifact.
pub fn select_lease_epoch(p: char, artifact_id: ArtifactId) -> Statement {
    by_key(
        format!("SELECT lease_epoch FROM artifacts WHERE id = {p}1"),
        artifact_id,
    )
}

/// Counts one more lease taken on the artifact, answering the new count.
pub fn next_lease_epoch(p: char, artifact_id: ArtifactId) -> Statement {
    by_key(format!("UPDATE artifacts SET lease_epoch = lease_epoch + 1 WHERE id = {p}1 RETURNING lease_epoch"), artifact_id)
}

/// How many leases are live at `now`.
pub fn count_live_leases(p: char, now: Timestamp) -> Statement {
    Statement::new(
        format!("SELECT COUNT(*) FROM leases WHERE expires_at > {p}1"),
        vec![int(millis(now))],
    )
}

/// A live lease with its file: the artifact's id, its path, then [`LEASE_COLUMNS`].
pub fn lease_at(row: &(impl Row + ?Sized)) -> Result<LeaseAt> {
    Ok(LeaseAt {
        artifact_id: parsed(row, 0)?,
        path: stored_path(row, 1)?,
        lease: lease(row, 2)?
            .ok_or_else(|| Error::Internal("a lease row without a holder".into()))?,
    })
}

/// The first text past every path under `folder` (ending in `/`): the
/// folder with its `/` turned into the next byte, `0`.
pub fn folder_end(folder: &str) -> String {
    match folder.strip_suffix('/') {
        Some(stem) => format!("{stem}0"),
        None => format!("{folder}\u{10ffff}"),
    }
}

/// A walk of the paths under `folder` (ending in `/`) that sort after
/// `after`, by path, at most `limit`, of what is live at `now`.
pub struct Under<'a> {
    pub folder: &'a str,
    pub after: &'a str,
    pub limit: u32,
    pub now: Timestamp,
}

impl<'a> Under<'a> {
    pub fn new(folder: &'a str, after: &'a str, limit: u32, now: Timestamp) -> Self {
        Self {
            folder,
            after,
            limit,
            now,
        }
    }

    /// 1 and 2 the folder's range, 3 `after`, 4 `now`, 5 `limit`.
    fn params(&self) -> Vec<Field> {
        vec![
            text(self.folder),
            text(folder_end(self.folder)),
            text(self.after),
            int(millis(self.now)),
            int(self.limit.into()),
        ]
    }
}

/// The leases live on the files of a walk, as [`lease_at`] reads them.
pub fn select_leases_under(p: char, under: &Under) -> Statement {
    Statement::new(
        format!(
            "SELECT l.artifact_id, a.path, {LEASE_COLUMNS} FROM artifacts a
             JOIN leases l ON l.artifact_id = a.id
             WHERE a.path >= {p}1 AND a.path < {p}2 AND a.path > {p}3 AND l.expires_at > {p}4
             ORDER BY a.path LIMIT {p}5"
        ),
        under.params(),
    )
}

/// The columns of a held path ([`held_path`] reads them).
pub const HELD_PATH_COLUMNS: &str =
    "h.id, h.path, h.participant, h.note, h.acquired_at, h.expires_at, h.device_id, h.device_name";

pub fn held_path(row: &(impl Row + ?Sized)) -> Result<HeldPath> {
    Ok(HeldPath {
        id: parsed(row, 0)?,
        path: stored_path(row, 1)?,
        participant: parsed(row, 2)?,
        note: row.text_opt(3)?,
        acquired_at: time_at(row, 4)?,
        expires_at: time_at(row, 5)?,
        device: match row.text_opt(6)? {
            Some(id) => Some(DeviceRef {
                id,
                name: row.text_opt(7)?.unwrap_or_default(),
            }),
            None => None,
        },
    })
}

/// The hold on a path with no file of path key `key`.
pub fn select_held_path(p: char, key: &str) -> Statement {
    by_key(
        format!("SELECT {HELD_PATH_COLUMNS} FROM held_paths h WHERE h.path_key = {p}1"),
        key,
    )
}

/// The hold on a path with no file of id `id`.
pub fn select_held_path_by_id(p: char, id: CheckoutId) -> Statement {
    by_key(
        format!("SELECT {HELD_PATH_COLUMNS} FROM held_paths h WHERE h.id = {p}1"),
        id,
    )
}

/// The live holds on the paths of a walk.
pub fn select_held_paths_under(p: char, under: &Under) -> Statement {
    Statement::new(
        format!(
            "SELECT {HELD_PATH_COLUMNS} FROM held_paths h
             WHERE h.path >= {p}1 AND h.path < {p}2 AND h.path > {p}3 AND h.expires_at > {p}4
             ORDER BY h.path LIMIT {p}5"
        ),
        under.params(),
    )
}

/// path_key, path, id, participant, note, acquired_at, expires_at,
/// device_id, device_name
fn held_path_fields(held: &HeldPath) -> Vec<Field> {
    vec![
        text(held.path.collision_key()),
        text(&held.path),
        text(held.id),
        text(&held.participant),
        text_opt(held.note.as_ref()),
        int(millis(held.acquired_at)),
        int(millis(held.expires_at)),
        text_opt(held.device.as_ref().map(|d| &d.id)),
        text_opt(held.device.as_ref().map(|d| &d.name)),
    ]
}

/// Keeps a hold, replacing the one of its path key.
pub fn put_held_path(p: char, held: &HeldPath) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO held_paths
             (path_key, path, id, participant, note, acquired_at, expires_at, device_id, device_name)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7, {p}8, {p}9)
             ON CONFLICT (path_key) DO UPDATE SET path = {p}2, id = {p}3, participant = {p}4, note = {p}5,
                 acquired_at = {p}6, expires_at = {p}7, device_id = {p}8, device_name = {p}9"
        ),
        held_path_fields(held),
    )
}

pub fn delete_held_path(p: char, key: &str) -> Statement {
    by_key(format!("DELETE FROM held_paths WHERE path_key = {p}1"), key)
}

/// The columns of a Git LFS object ([`lfs_object`] reads them).
pub const LFS_OBJECT_COLUMNS: &str = "oid, size, digest";

pub fn lfs_object(row: &(impl Row + ?Sized)) -> Result<LfsObject> {
    Ok(LfsObject {
        oid: row.text(0)?,
        size: unsigned(row.int(1)?)?,
        digest: parsed(row, 2)?,
    })
}

/// The Git LFS object `oid` kept for the folder `folder`.
pub fn select_lfs_object(p: char, folder: &str, oid: &str) -> Statement {
    Statement::new(
        format!("SELECT {LFS_OBJECT_COLUMNS} FROM lfs_objects WHERE folder = {p}1 AND oid = {p}2"),
        vec![text(folder), text(oid)],
    )
}

/// Keeps a Git LFS object for `folder`; one kept already stays.
pub fn put_lfs_object(
    p: char,
    folder: &str,
    object: &LfsObject,
    now: Timestamp,
) -> Result<Statement> {
    Ok(Statement::new(
        format!(
            "INSERT INTO lfs_objects (folder, oid, size, digest, created_at)
             VALUES ({p}1, {p}2, {p}3, {p}4, {p}5) ON CONFLICT (folder, oid) DO NOTHING"
        ),
        vec![
            text(folder),
            text(&object.oid),
            Field::Int(Some(signed(object.size)?)),
            text(&object.digest),
            int(millis(now)),
        ],
    ))
}

/// Keeps a secret unless one of its name is kept.
pub fn put_secret(p: char, name: &str, value: &str) -> Statement {
    Statement::new(
        format!(
            "INSERT INTO secrets (name, value) VALUES ({p}1, {p}2) ON CONFLICT (name) DO NOTHING"
        ),
        vec![text(name), text(value)],
    )
}

pub fn select_secret(p: char, name: &str) -> Statement {
    by_key(format!("SELECT value FROM secrets WHERE name = {p}1"), name)
}

//! Leases, and what Git's locks add to them.

use super::{fetch_all, fetch_first, fetch_one, Sql};
use crate::error::{Error, Result};
use crate::model::*;
use crate::rows::{self, Under};
use crate::{HeldPath, LeaseAt};

/// Leases, and what Git's locks add to them: leases by folder, paths held
/// with no file, Git LFS objects and the secrets every server shares. Part
/// of every [`Tx`](super::Tx).
pub trait LeaseRows: Sql {
    fn put_lease(&self, artifact_id: ArtifactId, lease: &Lease) -> Result<()> {
        self.queue(rows::put_lease(self.p(), artifact_id, lease))
    }

    fn delete_lease(&self, artifact_id: ArtifactId) -> Result<()> {
        self.queue(rows::delete_lease(self.p(), artifact_id))
    }

    /// How many leases were ever taken on the artifact.
    fn lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        let epoch = rows::select_lease_epoch(self.p(), artifact_id);
        fetch_one(self, epoch, |r| rows::count(r, 0))
    }

    /// Counts one more lease taken on the artifact; returns the new epoch.
    fn next_lease_epoch(&self, artifact_id: ArtifactId) -> Result<u64> {
        let epoch = rows::next_lease_epoch(self.p(), artifact_id);
        fetch_one(self, epoch, |r| rows::count(r, 0))
    }

    /// How many leases are live at `now` (not past their expiry), for the
    /// metrics scrape.
    fn live_lease_count(&self, now: Timestamp) -> Result<u64> {
        fetch_one(self, rows::count_live_leases(self.p(), now), |r| {
            rows::count(r, 0)
        })
    }

    /// Leases whose expiry has passed but whose lapse is not yet recorded.
    fn lapsed_leases(&self, now: Timestamp) -> Result<Vec<(ArtifactId, Lease)>>;

    /// The leases live on files along the walk `under`.
    fn leases_under(&self, under: &Under) -> Result<Vec<LeaseAt>> {
        fetch_all(self, rows::select_leases_under(self.p(), under), |r| {
            rows::lease_at(r)
        })
    }

    /// The hold on a path with no file (live or lapsed) of path key `key`.
    fn held_path(&self, key: &str) -> Result<Option<HeldPath>> {
        self.lock_paths()?;
        fetch_first(self, rows::select_held_path(self.p(), key), |r| {
            rows::held_path(r)
        })
    }

    /// The hold on a path with no file (live or lapsed) of id `id`.
    fn held_path_by_id(&self, id: CheckoutId) -> Result<Option<HeldPath>> {
        self.lock_paths()?;
        let found = rows::select_held_path_by_id(self.p(), id);
        fetch_first(self, found, |r| rows::held_path(r))
    }

    /// The holds live on paths along the walk `under`.
    fn held_paths_under(&self, under: &Under) -> Result<Vec<HeldPath>> {
        let found = rows::select_held_paths_under(self.p(), under);
        fetch_all(self, found, |r| rows::held_path(r))
    }

    /// Keeps a hold, replacing the one of its path key.
    fn put_held_path(&self, held: &HeldPath) -> Result<()> {
        self.lock_paths()?;
        self.queue(rows::put_held_path(self.p(), held))
    }

    /// Forgets the hold of path key `key`, if any.
    fn delete_held_path(&self, key: &str) -> Result<()> {
        self.lock_paths()?;
        self.queue(rows::delete_held_path(self.p(), key))
    }

    /// The Git LFS object `oid` kept for the top-level folder `folder`.
    fn lfs_object(&self, folder: &str, oid: &str) -> Result<Option<LfsObject>> {
        let found = rows::select_lfs_object(self.p(), folder, oid);
        fetch_first(self, found, |r| rows::lfs_object(r))
    }

    /// Keeps a Git LFS object for `folder` (kept already: nothing changes).
    fn put_lfs_object(&self, folder: &str, object: &LfsObject, now: Timestamp) -> Result<()> {
        self.queue(rows::put_lfs_object(self.p(), folder, object, now)?)
    }

    /// The secret `name` every server of this store shares: the one kept,
    /// or `made` if none was yet (then kept). Only in a write.
    fn secret(&self, name: &str, made: &str) -> Result<String> {
        self.run(&rows::put_secret(self.p(), name, made))?;
        fetch_first(self, rows::select_secret(self.p(), name), |r| r.text(0))?
            .ok_or_else(|| Error::Internal(format!("the secret {name} was not kept")))
    }
}

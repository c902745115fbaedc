//! Git LFS locks for the server's `/lfs/F` routes: the rules of
//! `rules::git` in a write or a read, with the studio's Git lock time.
//! Not part of `Backend`: only a server speaks Git LFS.

use super::Bundled;
use crate::error::Result;
use crate::model::*;
use crate::rules;
use crate::store::Durability;

impl Bundled {
    /// Locks `path` for the caller, for the studio's Git lock time.
    pub async fn git_lock(&self, path: &RepoPath) -> Result<GitLock> {
        let ttl = self.shared.options.git_lock_hours * 3600;
        let (device, path) = (self.device.clone(), path.clone());
        self.write(Durability::Normal, move |tx, me, now, failpoints| {
            let device = rules::device_of(tx, me, device.as_deref())?;
            rules::lock(tx, me, device.as_ref(), &path, ttl, now, failpoints)
        })
        .await?
    }

    /// A page of the live locks under a folder that the caller may see.
    pub async fn git_locks(&self, query: GitLockQuery) -> Result<GitLockPage> {
        self.read(move |tx, me, now| rules::locks(tx, me, &query, now))
            .await
    }

    /// Unlocks lock `id` under `folder` (see `rules::unlock`).
    pub async fn git_unlock(&self, folder: &str, id: uuid::Uuid, force: bool) -> Result<GitLock> {
        let folder = folder.to_owned();
        self.write_normal(move |tx, me, now| rules::unlock(tx, me, &folder, id, force, now))
            .await
    }
}

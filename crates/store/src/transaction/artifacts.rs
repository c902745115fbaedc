//! Artifacts by path, their versions, the folders they are in, and the
//! blobs their rows name.

use super::{fetch_all, fetch_first, fetch_one, Sql};
use crate::error::Result;
use crate::listing;
use crate::model::*;
use crate::rows::{self, Statement};
use crate::{head_moved, FolderRow, Hidden, ListQuery};

/// Artifacts by path, their versions, the folders they are in, and the
/// blobs their rows name. Part of every [`Tx`](super::Tx).
pub trait ArtifactRows: Sql {
    /// The artifact at `path`, or else the one whose path has its collision
    /// key (the same file on a computer: `Hero.psd` finds `hero.psd`).
    fn artifact_id_by_path(&self, path: &RepoPath) -> Result<Option<ArtifactId>> {
        self.lock_paths()?;
        let found = rows::select_artifact_id_by_path(self.p(), path);
        fetch_first(self, found, |r| rows::parsed(r, 0))
    }

    /// The artifacts whose path has collision key `key`, by path.
    fn artifacts_with_key(&self, key: &str) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.lock_paths()?;
        let found = rows::select_artifacts_with_key(self.p(), key);
        fetch_all(self, found, |r| rows::id_and_path(r))
    }

    /// Artifacts whose key lies under the folder `key` (`key/...`), at most
    /// `limit`, by path; an index range, since `0` follows `/` in byte order.
    fn artifacts_under_key(&self, key: &str, limit: u32) -> Result<Vec<(ArtifactId, RepoPath)>> {
        self.lock_paths()?;
        let found = rows::select_artifacts_under_key(self.p(), key, limit);
        fetch_all(self, found, |r| rows::id_and_path(r))
    }

    /// Moves an artifact to `path` (the rules checked it is free).
    fn rename_artifact(&self, id: ArtifactId, path: &RepoPath) -> Result<()>;

    /// An artifact with its head and its lease row, lapsed or not.
    fn artifact(&self, id: ArtifactId) -> Result<Option<Artifact>> {
        fetch_first(self, rows::select_artifact(self.p(), id), |r| {
            rows::artifact(r)
        })
    }

    /// Every artifact by path, with its head and its lease row, lapsed or not.
    fn artifacts(&self) -> Result<Vec<Artifact>> {
        fetch_all(self, rows::select_artifacts(), |r| rows::artifact(r))
    }

    /// Artifacts by path as `query` says, with their heads and lease rows.
    fn artifact_page(&self, query: &ListQuery) -> Result<Vec<Artifact>>;

    /// The folders directly under `folder` by path, and how many files
    /// are directly in `folder` (from counts each import and rename keeps).
    fn subfolders(&self, folder: &str) -> Result<(Vec<FolderRow>, u64)> {
        let p = self.p();
        let folders = rows::by_key(listing::subfolders_sql(p), folder);
        let folders = fetch_all(self, folders, |r| {
            Ok(FolderRow {
                path: r.text(0)?,
                key: r.text(1)?,
                files: rows::count(r, 2)?,
            })
        })?;
        let direct = rows::by_key(listing::direct_files_sql(p), folder);
        let direct = fetch_first(self, direct, |r| rows::count(r, 0))?;
        Ok((folders, direct.unwrap_or(0)))
    }

    /// The folders whose key is one of `keys`, as (key, path), by path:
    /// `brand/` and `Brand/` for `BRAND`, `""` for the whole store's `""`.
    fn folder_paths(&self, keys: &[String]) -> Result<Vec<(String, String)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (sql, fields) = listing::folder_paths_sql(keys, self.dialect());
        fetch_all(self, Statement::new(sql, fields), |r| {
            Ok((r.text(0)?, r.text(1)?))
        })
    }

    /// The files under the folders whose key is `key` that lie within the
    /// folder `within` (`""`: anywhere).
    fn files_under_key(&self, key: &str, within: &str) -> Result<u64> {
        let (sql, fields) = listing::files_under_key_sql(key, within, self.dialect());
        let found = fetch_first(self, Statement::new(sql, fields), |r| rows::count(r, 0))?;
        Ok(found.unwrap_or(0))
    }

    /// How many files under each folder directly under `folder` have a
    /// lease live at `now`, leaving out the `hidden`, by folder (`brand/`).
    fn held_by_folder(
        &self,
        folder: &str,
        now: Timestamp,
        hidden: &[Hidden],
    ) -> Result<Vec<(String, u64)>> {
        let (sql, fields) = listing::held_by_folder_sql(folder, now, hidden, self.dialect());
        fetch_all(self, Statement::new(sql, fields), |r| {
            Ok((format!("{folder}{}", r.text(0)?), rows::count(r, 1)?))
        })
    }

    fn insert_artifact(&self, id: ArtifactId, path: &RepoPath, head: &Head) -> Result<()>;

    /// Appends `head` as the artifact's new head, replacing `base`; refuses (as an
    /// internal error: the rules test the base first) if `base` is not the head.
    fn commit_version(&self, id: ArtifactId, head: &Head, base: u64) -> Result<()> {
        let moved = self.run(&rows::move_head(self.p(), id, head, base)?)?;
        head_moved(id, base, moved)?;
        insert_version(self, id, head, Some(base))
    }

    /// Versions, newest first, with the version each replaced.
    fn versions(&self, id: ArtifactId) -> Result<Vec<(Head, Option<u64>)>> {
        fetch_all(self, rows::select_versions(self.p(), id), |r| {
            rows::version(r)
        })
    }

    fn version(&self, id: ArtifactId, version: u64) -> Result<Option<Head>> {
        let Ok(version) = i64::try_from(version) else {
            return Ok(None); // no version is past 2^63 - 1
        };
        let found = rows::select_version(self.p(), id, version);
        fetch_first(self, found, |r| rows::head(r, 0))
    }

    /// Whether a version, a proposal (of any state: rows are never deleted)
    /// or a check-out's staged bytes name `digest`: their blob must stay.
    fn names_blob(&self, digest: &Digest) -> Result<bool> {
        fetch_one(self, rows::select_names_blob(self.p(), digest), |r| {
            r.flag(0)
        })
    }

    /// Every digest [`ArtifactRows::names_blob`] would find.
    fn blob_digests(&self) -> Result<std::collections::HashSet<Digest>> {
        let digests = fetch_all(self, rows::select_blob_digests(), |r| rows::parsed(r, 0))?;
        Ok(digests.into_iter().collect())
    }

    /// The chunk list kept for a blob (`Chunked::encode_list`), if made.
    fn chunk_list(&self, digest: &Digest) -> Result<Option<Vec<u8>>> {
        fetch_first(self, rows::select_chunk_list(self.p(), digest), |r| {
            r.bytes(0)
        })
    }

    /// Whether a chunk list is kept for a blob, without reading it.
    fn has_chunk_list(&self, digest: &Digest) -> Result<bool> {
        fetch_one(self, rows::select_has_chunk_list(self.p(), digest), |r| {
            r.flag(0)
        })
    }

    /// Keeps a blob's chunk list; one kept already stays (it is the same).
    fn put_chunk_list(&self, digest: &Digest, list: &[u8]) -> Result<()>;

    /// Notes that a closed check-out's staged bytes are no longer named by
    /// it: their blob goes once no other row names it.
    fn drop_blob(&self, digest: &Digest) -> Result<()> {
        self.queue(rows::drop_blob(self.p(), digest))
    }

    /// Blobs dropped (see [`ArtifactRows::drop_blob`]) and not yet looked at, at most `limit`.
    fn dropped_blobs(&self, limit: u32) -> Result<Vec<Digest>> {
        fetch_all(self, rows::select_dropped_blobs(self.p(), limit), |r| {
            rows::parsed(r, 0)
        })
    }

    /// A dropped blob looked at: removed, or named again.
    fn forget_dropped_blob(&self, digest: &Digest) -> Result<()> {
        self.queue(rows::forget_dropped_blob(self.p(), digest))
    }
}

/// Appends a version (`base`: the one it replaces), which the commit must
/// keep through power loss.
pub fn insert_version(
    tx: &(impl Sql + ?Sized),
    id: ArtifactId,
    head: &Head,
    base: Option<u64>,
) -> Result<()> {
    tx.require_durable();
    tx.queue(rows::insert_version(tx.p(), id, head, base)?)
}

//! The workspace's own small SQLite file (in the app's state folder, not in the
//! workspace): what each local file was last synced to, and digests of local
//! files by size, mtime and inode, so a large file is hashed again only when
//! it changed. And the description drafted for a check-out's next check-in
//! ("Restored version 2"), so a restart keeps it. And the check-outs whose
//! copy to edit was placed here, so one made on another device can be told
//! from one that can be checked in here. And the mirror of the studio's
//! list (`mirror`).

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::model::{ArtifactId, CheckoutId, Digest, RepoPath};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS fingerprints (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    digest TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS synced (
    path TEXT PRIMARY KEY,
    artifact TEXT NOT NULL,
    version INTEGER NOT NULL,
    digest TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS drafts (
    checkout TEXT PRIMARY KEY,
    message TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS placed (
    checkout TEXT PRIMARY KEY
) WITHOUT ROWID;
";

/// What identifies a file's content without reading it: if all three are as
/// recorded, the recorded digest still holds. (An atomic save makes a new
/// inode; an in-place write moves the mtime.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
    pub inode: u64,
}

impl Stat {
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        let mtime_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(metadata);
        #[cfg(not(unix))]
        let inode = 0;
        Self {
            size: metadata.len(),
            mtime_ns,
            inode,
        }
    }
}

/// The version a local file was last made equal to (by a download or a check-in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Synced {
    pub artifact: ArtifactId,
    pub version: u64,
    pub digest: Digest,
}

pub struct Index {
    conn: Mutex<Connection>,
}

impl Index {
    pub fn open(file: &Path) -> Result<Self> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let conn = Connection::open(file)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // The log is cut back to this after each checkpoint, not left at
        // the size of its largest transaction (a mirror's fill).
        conn.pragma_update(None, "journal_size_limit", 64 << 20)?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    pub(super) fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn fingerprint(&self, path: &RepoPath, stat: Stat) -> Result<Option<Digest>> {
        let digest: Option<String> = self
            .conn()
            .prepare_cached(
                "SELECT digest FROM fingerprints
                 WHERE path = ?1 AND size = ?2 AND mtime_ns = ?3 AND inode = ?4",
            )?
            .query_row(
                params![path.as_str(), stat.size, stat.mtime_ns, stat.inode],
                |r| r.get(0),
            )
            .optional()?;
        Ok(digest.and_then(|d| d.parse().ok()))
    }

    pub fn set_fingerprint(&self, path: &RepoPath, stat: Stat, digest: &Digest) -> Result<()> {
        self.conn()
            .prepare_cached("INSERT OR REPLACE INTO fingerprints VALUES (?1, ?2, ?3, ?4, ?5)")?
            .execute(params![
                path.as_str(),
                stat.size,
                stat.mtime_ns,
                stat.inode,
                digest.to_string()
            ])?;
        Ok(())
    }

    pub fn synced(&self, path: &RepoPath) -> Result<Option<Synced>> {
        let row: Option<(String, u64, String)> = self
            .conn()
            .prepare_cached("SELECT artifact, version, digest FROM synced WHERE path = ?1")?
            .query_row([path.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        Ok(row.and_then(|(artifact, version, digest)| {
            Some(Synced {
                artifact: artifact.parse().ok()?,
                version,
                digest: digest.parse().ok()?,
            })
        }))
    }

    pub fn set_synced(&self, path: &RepoPath, synced: &Synced) -> Result<()> {
        self.conn()
            .prepare_cached("INSERT OR REPLACE INTO synced VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![
                path.as_str(),
                synced.artifact.to_string(),
                synced.version,
                synced.digest.to_string()
            ])?;
        Ok(())
    }

    /// Whether the check-out's copy to edit was placed here (checked out
    /// here, or got here after a check-out made elsewhere).
    pub fn placed(&self, checkout: CheckoutId) -> Result<bool> {
        Ok(self
            .conn()
            .prepare_cached("SELECT 1 FROM placed WHERE checkout = ?1")?
            .exists([checkout.to_string()])?)
    }

    /// Notes (`true`) or forgets (`false`) that the check-out's copy to edit is here.
    pub fn set_placed(&self, checkout: CheckoutId, placed: bool) -> Result<()> {
        let sql = match placed {
            true => "INSERT OR IGNORE INTO placed VALUES (?1)",
            false => "DELETE FROM placed WHERE checkout = ?1",
        };
        self.conn()
            .prepare_cached(sql)?
            .execute([checkout.to_string()])?;
        Ok(())
    }

    pub fn draft(&self, checkout: CheckoutId) -> Result<Option<String>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT message FROM drafts WHERE checkout = ?1")?
            .query_row([checkout.to_string()], |r| r.get(0))
            .optional()?)
    }

    /// Sets (`Some`) or clears (`None`) the check-out's draft description.
    pub fn set_draft(&self, checkout: CheckoutId, message: Option<&str>) -> Result<()> {
        let conn = self.conn();
        match message {
            Some(message) => conn
                .prepare_cached("INSERT OR REPLACE INTO drafts VALUES (?1, ?2)")?
                .execute(params![checkout.to_string(), message])?,
            None => conn
                .prepare_cached("DELETE FROM drafts WHERE checkout = ?1")?
                .execute([checkout.to_string()])?,
        };
        Ok(())
    }
}

//! Files beside a copy: backups of your changes (`hero (my changes …).psd`),
//! a proposal's bytes and older versions as read-only copies to open next
//! to it, and finding one already there. An existing name is never written
//! over.

use std::path::{Path, PathBuf};

use super::place::set_writable;
use super::{Stat, Workspace};
use crate::backend;
use crate::error::Result;
use crate::local_file;
use crate::model::*;

impl Workspace {
    /// A file beside `path`'s local copy whose bytes have `digest` (your
    /// backup of a check-in that became a proposal, or an earlier download).
    /// Only files of the right size are hashed, and those once.
    pub fn find_beside(&self, path: &RepoPath, digest: &Digest, size: u64) -> Option<PathBuf> {
        let local = self.local_path(path).ok()?;
        let stem = local.file_stem()?.to_string_lossy().into_owned();
        std::fs::read_dir(local.parent()?)
            .ok()?
            .filter_map(|entry| entry.ok())
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{stem} ("))
                    && entry
                        .metadata()
                        .is_ok_and(|m| m.is_file() && m.len() == size)
            })
            .map(|entry| entry.path())
            .find(|candidate| self.holds(candidate, digest))
    }

    /// Saves a proposal's bytes beside the local copy, read-only, to compare
    /// with it: `hero (alice's proposal against v3).psd`. Verified against the
    /// proposal's digest; nothing is left behind if they differ.
    pub async fn save_proposal(
        &self,
        path: &RepoPath,
        proposal: &Proposal,
        reader: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
    ) -> Result<PathBuf> {
        let local = self.place_beside(path).await?;
        let label = format!(
            "{}'s proposal against v{}",
            proposal.author.name(),
            proposal.base_version
        );
        let dest = labelled_path(&local, &label);
        backend::save_verified(reader, &proposal.digest, &dest, None).await?;
        set_writable(&dest, false)?;
        Ok(dest)
    }

    /// A read-only copy of version `head` already beside `path`'s local copy
    /// under its name (`hero (v3).psd`, `hero (v3) 2.psd`…): files of the
    /// right size are hashed, once. Blocking.
    pub fn find_version_copy(&self, path: &RepoPath, head: &Head) -> Option<PathBuf> {
        let local = self.local_path(path).ok()?;
        let label = format!("v{}", head.version);
        (1..)
            .map(|n| numbered_after_label(&local, &label, n))
            .take_while(|candidate| candidate.exists())
            .find(|candidate| {
                std::fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.len() == head.size)
                    && self.holds(candidate, &head.digest)
            })
    }

    /// Saves a version's bytes beside the local copy, read-only, to open
    /// next to it: `hero (v3).psd`, else `hero (v3) 2.psd` and on. No existing
    /// name is ever written over: the copy is downloaded under a hidden name
    /// and linked to the free one, which fails on a name taken meanwhile.
    /// Verified against its head's digest; nothing is left behind if they differ.
    pub async fn save_version_copy(
        &self,
        path: &RepoPath,
        content: backend::Content,
    ) -> Result<PathBuf> {
        let backend::Content { head, reader } = content;
        let local = self.place_beside(path).await?;
        let staging = local.with_file_name(format!(
            ".{}.leasedesk-copy-{}",
            path.file_name(),
            uuid::Uuid::new_v4()
        ));
        backend::save_verified(reader, &head.digest, &staging, None).await?;
        // Read-only before it has its name: nobody sees it writable.
        let placed = set_writable(&staging, false).and_then(|()| {
            let label = format!("v{}", head.version);
            (1..)
                .map(|n| numbered_after_label(&local, &label, n))
                .find_map(
                    |candidate| match local_file::move_new(&staging, &candidate) {
                        Ok(()) => Some(Ok(candidate)),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                        Err(e) => Some(Err(e.into())),
                    },
                )
                .expect("a free name")
        });
        if placed.is_err() {
            let _ = set_writable(&staging, true);
            let _ = std::fs::remove_file(&staging);
        }
        let copy = placed?;
        // Its digest is known: a later look for it need not hash it.
        if let (Some(repo_path), Ok(metadata)) = (self.repo_path(&copy), std::fs::metadata(&copy)) {
            self.inner
                .index
                .set_fingerprint(&repo_path, Stat::of(&metadata), &head.digest)?;
        }
        Ok(copy)
    }

    /// A second name for the local copy, beside it: the download that follows
    /// replaces the original name only, so the user's bytes are never copied
    /// and never at risk. Falls back to a copy where hard links are refused.
    /// Neither ever writes over an existing name: if another backup takes the
    /// free name first (two restores at once), the next free name is used.
    pub(super) fn keep_backup(&self, local: &Path) -> Result<PathBuf> {
        let now = self.inner.clock.now().with_timezone(&chrono::Local);
        let when = now.format("%Y-%m-%d %H%M").to_string();
        loop {
            let backup = backup_path(local, &when);
            let kept = std::fs::hard_link(local, &backup).or_else(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Err(e),
                _ => local_file::copy_to_new(local, &backup),
            });
            match kept {
                Ok(()) => return Ok(backup),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Whether `candidate`, a file in the workspace, has `digest`'s bytes.
    fn holds(&self, candidate: &Path, digest: &Digest) -> bool {
        self.repo_path(candidate)
            .and_then(|repo_path| self.digest(&repo_path).ok().flatten())
            .is_some_and(|found| &found == digest)
    }

    /// `path`'s local copy's place, its folder made, for a file beside it.
    async fn place_beside(&self, path: &RepoPath) -> Result<PathBuf> {
        let local = self.local_path(path)?;
        if let Some(dir) = local.parent() {
            tokio::fs::create_dir_all(dir).await?;
        }
        Ok(local)
    }
}

/// `hero.psd` → `hero (my changes 2026-11-29 1405).psd`, numbered if taken.
pub fn backup_path(local: &Path, when: &str) -> PathBuf {
    labelled_path(local, &format!("my changes {when}"))
}

/// `hero.psd` → `hero (LABEL).psd`, or `hero (LABEL 2).psd` and on if taken.
fn labelled_path(local: &Path, label: &str) -> PathBuf {
    let (stem, extension) = stem_and_extension(local);
    (1..)
        .map(|n| {
            let suffix = if n == 1 {
                String::new()
            } else {
                format!(" {n}")
            };
            local.with_file_name(format!("{stem} ({label}{suffix}){extension}"))
        })
        .find(|candidate| !candidate.exists())
        .expect("a free name")
}

/// `hero.psd` → `hero (LABEL).psd` for `n` = 1, else `hero (LABEL) N.psd`.
fn numbered_after_label(local: &Path, label: &str, n: u32) -> PathBuf {
    let (stem, extension) = stem_and_extension(local);
    let number = if n == 1 {
        String::new()
    } else {
        format!(" {n}")
    };
    local.with_file_name(format!("{stem} ({label}){number}{extension}"))
}

/// `hero.psd` → (`hero`, `.psd`).
fn stem_and_extension(local: &Path) -> (String, String) {
    let stem = local
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let extension = local
        .extension()
        .map_or_else(String::new, |e| format!(".{}", e.to_string_lossy()));
    (stem, extension)
}

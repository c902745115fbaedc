//! The folder store: blobs as files named by their digest in 256 shard
//! folders (the data folder's `blobs/`, or a shared one), and the holds that
//! keep a blob no row names yet from removal (a shared lock per digest).
//! Never removes a blob that a committed row names or a live upload holds:
//! a removal takes the digest's lock alone and asks the caller afresh.
//!
//! A blob gets its digest's name only once its bytes are fsynced, and the
//! shard folder's entry is fsynced after the rename (the 256 shard folders
//! are made, durably, when the folder is opened), so no row can name bytes
//! a power loss would take. A hold is a shared lock on `tmp/hold-<hex>`,
//! taken before the rename; a shared folder keeps these rules only on a file
//! system that shares locks (NFSv4, SMB3).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tokio::io::AsyncRead;

use super::staging::{self, StagedBlob, TempBlob};
use super::{digest_named, open_local, Intake};
use crate::error::{Error, Result};
use crate::model::Digest;
use crate::owner_only;

/// The start of a hold's lock file's name in `tmp/`, before the digest's hex.
const HOLD_PREFIX: &str = "hold-";

#[derive(Clone, Debug)]
pub struct BlobStore {
    root: PathBuf,
}

impl BlobStore {
    /// Opens (creating) the blob folder and removes temporary files that no live
    /// upload holds: what a killed process left behind.
    pub fn open(root: &Path) -> Result<Self> {
        let store = Self {
            root: root.to_owned(),
        };
        owner_only::create_dir_all(&store.temp_dir())?;
        store.create_shard_dirs()?;
        store.remove_stale_temp_files()?;
        Ok(store)
    }

    fn remove_stale_temp_files(&self) -> Result<()> {
        for entry in fs::read_dir(self.temp_dir())? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with(HOLD_PREFIX) {
                continue; // the journal of interrupted uploads: see `sweep_interrupted`
            }
            let path = entry.path();
            // A live upload (maybe another process's) holds a lock on its file,
            // and a hold's file may have been made again since it was opened here.
            if let Ok(file) = File::open(&path) {
                if file.try_lock().is_ok() && still_named(&file, &path)? {
                    let _ = fs::remove_file(&path);
                }
            }
        }
        Ok(())
    }

    /// A folder for temporary files only (an object store's uploads waiting
    /// for their digest, copies for a preview's reader): made if missing, and
    /// what a killed process left there removed, as [`BlobStore::open`] does.
    pub fn open_spool(root: &Path) -> Result<Self> {
        let store = Self {
            root: root.to_owned(),
        };
        owner_only::create_dir_all(&store.temp_dir())?;
        store.remove_stale_temp_files()?;
        Ok(store)
    }

    /// Removes the blobs of uploads a killed process left unfinished, and
    /// looks at nothing else: an open costs what was interrupted, never
    /// what is stored. An upload holds its digest (a lock file in `tmp/`)
    /// from before its blob takes the digest's name until the transaction
    /// that would name it in a row has ended, and the last holder out
    /// removes the lock file; so a lock file that no live process holds is
    /// an upload that never finished. Its blob goes unless `is_named` finds
    /// a row naming it (the commit may have happened just before the kill).
    /// Returns how many blobs it removed.
    pub fn sweep_interrupted(&self, is_named: impl Fn(&Digest) -> Result<bool>) -> Result<usize> {
        let mut removed = 0;
        for entry in fs::read_dir(self.temp_dir())? {
            let name = entry?.file_name();
            let held = name.to_str().and_then(|n| n.strip_prefix(HOLD_PREFIX));
            let Some(digest) = held.and_then(digest_named) else {
                continue;
            };
            if self.remove_unnamed(&digest, &is_named)? {
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn hold_path(&self, digest: &Digest) -> PathBuf {
        self.temp_dir()
            .join(format!("{HOLD_PREFIX}{}", digest.hex()))
    }

    /// Opens the lock file of `digest`'s holds, as it is named now (a removal
    /// deletes it while it has it alone, and the next one makes it again).
    fn open_hold_file(&self, digest: &Digest, shared: bool) -> Result<Option<File>> {
        let path = self.hold_path(digest);
        let mut denied = 0;
        loop {
            let file = match owner_only::file_options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
            {
                Ok(file) => file,
                // Windows refuses to open a file that is being deleted: soon it is gone.
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied && denied < 100 => {
                    denied += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if shared {
                file.lock_shared()?;
            } else {
                match file.try_lock() {
                    Ok(()) => {}
                    Err(fs::TryLockError::WouldBlock) => return Ok(None),
                    Err(fs::TryLockError::Error(e)) => return Err(e.into()),
                }
            }
            if still_named(&file, &path)? {
                return Ok(Some(file));
            }
        }
    }

    /// Holds `digest`'s blob against removal, waiting while a removal decides.
    /// An upload takes this before its blob is named by its digest and keeps
    /// it until the transaction that would name it in a row has ended, so that
    /// no process removes it meanwhile (the bytes may be shared with another
    /// upload of the same digest, or with a committed row).
    pub fn hold(&self, digest: &Digest) -> Result<BlobHold> {
        let file = self
            .open_hold_file(digest, true)?
            .expect("a shared lock waits rather than fails");
        Ok(BlobHold {
            file: Some(file),
            path: self.hold_path(digest),
            digest: digest.clone(),
        })
    }

    /// Removes `digest`'s blob unless an upload holds it or `is_named` finds a
    /// committed row naming it. Nobody can start naming it meanwhile: naming
    /// needs a hold, and this has the digest's lock alone while it asks and
    /// removes. Returns whether it removed the blob.
    pub fn remove_unnamed(
        &self,
        digest: &Digest,
        is_named: impl FnOnce(&Digest) -> Result<bool>,
    ) -> Result<bool> {
        let Some(sole) = self.open_hold_file(digest, false)? else {
            return Ok(false); // an upload holds it: its own end decides
        };
        let removed = match is_named(digest) {
            Ok(true) => Ok(false),
            Ok(false) => match fs::remove_file(self.path(digest)) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
                Err(e) => Err(e.into()),
            },
            Err(e) => Err(e),
        };
        // The blob first, then the lock file: an upload that finds the lock
        // file made anew finds the blob gone too, and stores its own.
        let _ = fs::remove_file(self.hold_path(digest));
        drop(sole);
        removed
    }

    /// Makes the 256 folders blobs are spread over, once, durably: then a blob's
    /// rename never depends on a folder another process created a moment ago.
    fn create_shard_dirs(&self) -> Result<()> {
        let mut created = false;
        for shard in 0..=255u8 {
            let dir = self.root.join(format!("{shard:02x}"));
            if !dir.is_dir() {
                owner_only::create_dir_all(&dir)?;
                created = true;
            }
        }
        if created {
            sync_dir(&self.root)?;
        }
        Ok(())
    }

    fn temp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// For the health check: the blob folder is there and an upload could be
    /// written into it (a probe file made and removed in its temp folder).
    /// `Err` says what is wrong, naming the folder.
    pub fn check_writable(&self) -> std::result::Result<(), String> {
        if !self.root.is_dir() {
            return Err(format!(
                "the blob folder {} is missing",
                self.root.display()
            ));
        }
        let written = self.new_temp_file("health").and_then(|(probe, mut file)| {
            let written = file.write_all(b"ok");
            let _ = fs::remove_file(&probe);
            written
        });
        written.map_err(|e| {
            format!(
                "the blob folder {} cannot be written to: {e}",
                self.root.display()
            )
        })
    }

    /// The folder the blobs are in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn path(&self, digest: &Digest) -> PathBuf {
        let hex = digest.hex();
        self.root.join(&hex[..2]).join(hex)
    }

    pub fn open_blob(&self, digest: &Digest) -> Result<File> {
        File::open(self.path(digest)).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::Internal(format!("blob {digest} is missing")),
            _ => e.into(),
        })
    }

    /// Makes a staged blob's bytes durable under their digest's name; from
    /// then on rows may refer to them. If the folder has these bytes already,
    /// the upload is dropped (and the existing name made durable, in case a
    /// crash interrupted its rename).
    pub fn persist(&self, mut staged: StagedBlob) -> Result<()> {
        let target = self.path(&staged.digest);
        let dir = target.parent().expect("blob path has a folder");
        if target.is_file() {
            sync_dir(dir)?;
            return Ok(()); // dropping `staged` removes the upload
        }
        staged.sync_all()?;
        if !dir.is_dir() {
            // Made at open; someone removed it since.
            owner_only::create_dir_all(dir)?;
            sync_dir(&self.root)?;
        }
        rename_durably(staged.temp_path(), &target)?;
        sync_dir(dir)?;
        Ok(())
    }

    /// A file made new in the temp folder, under a fresh name after `prefix`.
    fn new_temp_file(&self, prefix: &str) -> io::Result<(PathBuf, File)> {
        let path = self
            .temp_dir()
            .join(format!("{prefix}-{}", uuid::Uuid::new_v4()));
        let file = owner_only::file_options()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok((path, file))
    }

    /// A new locked temporary file. Another process's cleanup may remove the
    /// file between its creation and its lock; then it is made again.
    fn temp_blob(&self) -> Result<TempBlob> {
        loop {
            let (path, file) = self.new_temp_file("upload")?;
            file.lock()?;
            if still_named(&file, &path)? {
                return Ok(TempBlob::new(path, file));
            }
        }
    }

    /// Copies a local file into a staged blob (see [`staging::stage_file`]).
    /// Blocking: call it from a blocking thread.
    pub fn stage_file(&self, source: &Path, intake: Intake<'_>) -> Result<StagedBlob> {
        let source = open_local(source)?;
        let temp = self.temp_blob()?;
        staging::stage_file(temp, source, intake)
    }

    /// Stages `source`, a file of the server's own that holds the bytes of
    /// `digest`, by a hard link into the temp folder: no copy. `None` where
    /// no link can be made (another file system), so the caller copies.
    /// The digest is checked again, on every core, reading the page cache
    /// the bytes were just written to: a file changed since is refused.
    /// Not when the bytes were `hashed` whole as they were written, by the
    /// one request that wrote them all. Blocking.
    pub fn stage_linked(
        &self,
        source: &Path,
        digest: Digest,
        hashed: bool,
    ) -> Result<Option<StagedBlob>> {
        loop {
            let path = self
                .temp_dir()
                .join(format!("upload-{}", uuid::Uuid::new_v4()));
            if fs::hard_link(source, &path).is_err() {
                return Ok(None);
            }
            let file = match owner_only::file_options()
                .read(true)
                .write(true)
                .open(&path)
            {
                Ok(file) => file,
                Err(_) => {
                    let _ = fs::remove_file(&path);
                    return Ok(None);
                }
            };
            file.lock()?;
            if !still_named(&file, &path)? {
                continue;
            }
            let temp = TempBlob::new(path, file);
            return staging::linked(temp, digest, hashed).map(Some);
        }
    }

    /// Streams a reader into a staged blob (see [`staging::stage_stream`]).
    /// Stops with `TooLarge` past `limit` bytes.
    pub async fn stage_stream<R: AsyncRead + Unpin>(
        &self,
        reader: R,
        intake: Intake<'_>,
    ) -> Result<StagedBlob> {
        let temp = self.temp_blob()?;
        staging::stage_stream(temp, reader, intake).await
    }
}

/// An upload's hold on its digest's blob (see [`BlobStore::hold`]), released
/// when dropped.
pub struct BlobHold {
    file: Option<File>,
    path: PathBuf,
    digest: Digest,
}

impl BlobHold {
    pub fn digest(&self) -> &Digest {
        &self.digest
    }
}

impl Drop for BlobHold {
    fn drop(&mut self) {
        // The last holder out removes the lock file, so that one is not left
        // per digest ever stored. It may do so only with the lock alone.
        let Some(file) = self.file.take() else { return };
        let _ = file.unlock();
        if file.try_lock().is_ok() && still_named(&file, &self.path).unwrap_or(false) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Whether `path` still names the open `file` (and not nothing, or another
/// file): the same file identity (device and inode; on Windows, volume and
/// file index), since a file deleted and made again under the name must not
/// pass for the one that is locked.
fn still_named(file: &File, path: &Path) -> io::Result<bool> {
    let ours = same_file::Handle::from_file(file.try_clone()?)?;
    Ok(same_file::Handle::from_path(path).is_ok_and(|named| named == ours))
}

/// Makes a folder's entries (a rename, a new file) survive power loss.
#[cfg(not(windows))]
pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows cannot flush a folder (opening one as a file is refused, as
/// SQLite and PostgreSQL also find): NTFS journals a folder's entries, and
/// [`rename_durably`] writes its rename through, which commits the journal
/// up to it, folders made before it included.
#[cfg(windows)]
pub(super) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Renames a finished upload to its digest's name, durably.
#[cfg(not(windows))]
pub(super) fn rename_durably(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

/// Renames a finished upload to its digest's name, returning once the rename
/// is on disk (`MOVEFILE_WRITE_THROUGH`). A blob that another upload of the
/// same bytes named meanwhile is kept: it may be open for a download, which
/// Windows would not let a rename replace.
#[cfg(windows)]
pub(super) fn rename_durably(from: &Path, to: &Path) -> io::Result<()> {
    use windows_sys::Win32::Storage::FileSystem::{MoveFileExW, MOVEFILE_WRITE_THROUGH};
    let (from, to) = (crate::long_path::wide(from), crate::long_path::wide(to));
    // SAFETY: both are NUL-terminated UTF-16 strings that outlive the call.
    if unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), MOVEFILE_WRITE_THROUGH) } != 0 {
        return Ok(());
    }
    match io::Error::last_os_error() {
        e if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        e => Err(e),
    }
}

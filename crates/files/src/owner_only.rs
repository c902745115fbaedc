//! Files and folders only their owner may open: the data folder holds every
//! designer's work and the token hashes. On unix, folders are made 0700 and
//! files 0600 whatever the umask; elsewhere the defaults stand (on Windows a
//! folder under the user's profile inherits ACLs that keep it private).

use std::fs::{self, OpenOptions};
use std::io;
use std::path::Path;

/// Makes `dir` and any missing parent, each for its owner only.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Options that create a file for its owner only.
pub fn file_options() -> OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Creates `path`, empty and for its owner only, unless it exists. SQLite
/// gives its log and shared-memory files the database file's mode, so making
/// the database this way first makes them private too.
pub fn create_file(path: &Path) -> io::Result<()> {
    match file_options().write(true).create_new(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// A data folder an older version made under the default umask is open to
/// everyone (755, its files 644): then make everything in it the owner's only.
/// A folder open to its group but not to everyone was set so on purpose, and
/// is left alone. Best effort: what cannot be changed (another owner's) stays.
#[cfg(unix)]
pub fn restrict_if_open_to_all(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let open_to_all = fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o007 != 0);
    if !open_to_all {
        return;
    }
    // The folder first: from then on nobody else can reach what is inside.
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        let _ = fs::set_permissions(&folder, fs::Permissions::from_mode(0o700));
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            // Symlinks are neither followed nor changed.
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => folders.push(entry.path()),
                Ok(kind) if kind.is_file() => {
                    let _ = fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o600));
                }
                _ => {}
            }
        }
    }
}

#[cfg(not(unix))]
pub fn restrict_if_open_to_all(_dir: &Path) {}

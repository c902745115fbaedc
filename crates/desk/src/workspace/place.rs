//! Where a repo path may land on disk (`join_under`, the one way in) and a
//! copy's read-only bit. A stored path that cannot be placed here is never
//! written: a copy of it is refused before any lease is taken, until an
//! admin renames it. Pure of the workspace's state: it never reads the
//! index or the store.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::{placement_problem, RepoPath};

/// The one way a repo path becomes a place on disk: `relative` under `root`,
/// proved to stay there, or refused. Checked first as a string, the same on
/// every OS (so a test on Linux can feed it Windows' dangers: `C:/x`, `C:x`,
/// `x:stream`, `..\\x`, `\\\\server\\share`, `CON`, `trail.`), then as this OS
/// reads it: only plain names (no prefix, root, `.` or `..`), and the joined
/// path still starts with `root` and is exactly that many names longer.
pub fn join_under(root: &Path, relative: &str) -> Result<PathBuf> {
    let refuse = |why: String| {
        Err(Error::Invalid(format!(
            "{relative:?} cannot be placed on this computer ({why}), so nothing was written \
             and no lease was taken: ask an admin to run `leasedesk rename {relative} NEW` \
             to give it a name every computer can hold"
        )))
    };
    if let Err(e) = RepoPath::stored(relative) {
        return refuse(e.to_string());
    }
    if let Some(why) = placement_problem(relative) {
        return refuse(format!("it {why}"));
    }
    let segments = relative.split('/').count();
    let mut names = 0;
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(_) => names += 1,
            // On Windows this is where `C:` and `\\\\server\\share` would show.
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => {
                return refuse(format!("this system reads {component:?} in it"))
            }
        }
    }
    #[cfg(windows)]
    if Path::new(relative).has_root() || relative.contains(['\\', ':']) {
        return refuse("Windows reads a drive, a root or a stream in it".into());
    }
    if names != segments {
        return refuse("this system reads its folders differently".into());
    }
    let joined = root.join(relative);
    if !joined.starts_with(root) || joined.components().count() != root.components().count() + names
    {
        return refuse("it would land outside the workspace folder".into());
    }
    Ok(joined)
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Read-only unless checked out, as Perforce and Git LFS lockable files are:
/// an application then warns before editing a file nobody reserved.
pub(super) fn set_writable(path: &Path, writable: bool) -> Result<()> {
    let mut permissions = std::fs::metadata(path)?.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = permissions.mode();
        permissions.set_mode(if writable {
            mode | 0o200
        } else {
            mode & !0o222
        });
    }
    #[cfg(not(unix))]
    permissions.set_readonly(!writable);
    std::fs::set_permissions(path, permissions)?;
    Ok(())
}

/// Whether the local copy can be written (for the UI's read-only state).
pub fn is_writable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

//! A designer's files as each system lets us touch them. On Windows another
//! program may hold a file: Photoshop keeps its documents open, and a virus
//! scanner locks a file for a moment after it is written. Reading or
//! replacing such a file is tried again with a bounded backoff, and if it
//! stays held the error names the program that holds it where Windows can
//! tell, and nothing is half-written. A copy that is not checked out is
//! read-only, and is replaced the way Perforce replaces it.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

/// The waits between tries on a held file: about 2.5 s in all, longer than a
/// scanner's look, short enough that a person is told soon.
const BACKOFF: [Duration; 8] = [
    Duration::from_millis(10),
    Duration::from_millis(20),
    Duration::from_millis(40),
    Duration::from_millis(80),
    Duration::from_millis(160),
    Duration::from_millis(320),
    Duration::from_millis(640),
    Duration::from_millis(1280),
];

/// Opens `path` to read (to check it in), waiting out a short hold.
pub fn open_to_read(path: &Path) -> Result<File> {
    let mut waits = BACKOFF.iter();
    loop {
        match File::open(path) {
            Ok(file) => return Ok(file),
            Err(e) if held_by_another_program(&e) => match waits.next() {
                Some(wait) => std::thread::sleep(*wait),
                None => return Err(in_use(path, "read")),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(Error::NotFound(format!(
                    "{} does not exist",
                    path.display()
                )))
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Puts the finished file `from` in `to`'s place, in one rename: `to` is
/// either what it was or all of `from`, never a mix. A read-only `to` (a copy
/// not checked out) is replaced; a held one is waited for, then refused with
/// `to` untouched and `from` left for the caller to remove.
pub async fn replace(from: &Path, to: &Path) -> Result<()> {
    let mut waits = BACKOFF.iter();
    loop {
        let tried = {
            let (from, to) = (from.to_owned(), to.to_owned());
            tokio::task::spawn_blocking(move || rename_over(&from, &to))
                .await
                .map_err(|e| Error::Internal(format!("rename: {e}")))?
        };
        match tried {
            Ok(()) => return Ok(()),
            Err(e) if held_by_another_program(&e) || is_held(to) => match waits.next() {
                Some(wait) => tokio::time::sleep(*wait).await,
                None => return Err(in_use(to, "replace")),
            },
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(not(windows))]
fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::rename(from, to)
}

/// Windows will not rename over a read-only file: its attribute is cleared
/// first (the new file carries its own), and put back if the rename fails.
#[cfg(windows)]
fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    let read_only = std::fs::metadata(to).is_ok_and(|m| m.permissions().readonly());
    if read_only {
        set_read_only(to, false)?;
    }
    let renamed = std::fs::rename(from, to);
    if renamed.is_err() && read_only {
        let _ = set_read_only(to, true);
    }
    renamed
}

#[cfg(windows)]
fn set_read_only(path: &Path, read_only: bool) -> io::Result<()> {
    let mut permissions = std::fs::metadata(path)?.permissions();
    permissions.set_readonly(read_only);
    std::fs::set_permissions(path, permissions)
}

/// Moves `from` to the name `to`, which must not exist yet (`AlreadyExists`
/// if it does, and `from` stays): a new file appears whole, with the
/// permissions `from` already has. Where hard links fail (FAT, some shares)
/// the bytes are copied.
#[cfg(not(windows))]
pub fn move_new(from: &Path, to: &Path) -> io::Result<()> {
    match std::fs::hard_link(from, to) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => copy_to_new(from, to)?,
    }
    std::fs::remove_file(from)
}

/// Windows renames without replacing when it is not asked to replace.
#[cfg(windows)]
pub fn move_new(from: &Path, to: &Path) -> io::Result<()> {
    use windows_sys::Win32::Storage::FileSystem::{MoveFileExW, MOVEFILE_COPY_ALLOWED};
    let (from, to) = (crate::long_path::wide(from), crate::long_path::wide(to));
    // SAFETY: both are NUL-terminated UTF-16 strings that outlive the call.
    match unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), MOVEFILE_COPY_ALLOWED) } {
        0 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

/// Copies `from` to `to`, which must not exist yet: a copy onto an existing
/// name (a link to `from` itself, say) would truncate the bytes it copies.
pub fn copy_to_new(from: &Path, to: &Path) -> io::Result<()> {
    let mut source = File::open(from)?;
    let mut dest = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    let copied = io::copy(&mut source, &mut dest)
        .and_then(|_| dest.set_permissions(source.metadata()?.permissions()))
        .and_then(|_| dest.sync_all());
    if copied.is_err() {
        let _ = std::fs::remove_file(to);
    }
    copied
}

/// A sharing or lock violation: another program has the file open in a way
/// that excludes us (Unix has no such refusal).
fn held_by_another_program(e: &io::Error) -> bool {
    const ERROR_SHARING_VIOLATION: i32 = 32;
    const ERROR_LOCK_VIOLATION: i32 = 33;
    cfg!(windows)
        && matches!(
            e.raw_os_error(),
            Some(ERROR_SHARING_VIOLATION | ERROR_LOCK_VIOLATION)
        )
}

/// Whether another program has `path` open without letting it be deleted or
/// replaced: a rename over such a file fails with "access denied", which a
/// folder we may not write gives too, so the file itself is asked.
#[cfg(windows)]
fn is_held(path: &Path) -> bool {
    use std::os::windows::fs::OpenOptionsExt;
    const DELETE: u32 = 0x0001_0000;
    const SHARE_ALL: u32 = 0x7; // read, write, delete
    std::fs::OpenOptions::new()
        .access_mode(DELETE)
        .share_mode(SHARE_ALL)
        .open(path)
        .is_err_and(|e| held_by_another_program(&e))
}

#[cfg(not(windows))]
fn is_held(_path: &Path) -> bool {
    false
}

fn in_use(path: &Path, action: &str) -> Error {
    let who = match holders(path).as_slice() {
        [] => "another program".to_owned(),
        names => names.join(", "),
    };
    Error::Unavailable(format!(
        "{} is open in {who}, so Leasedesk cannot {action} it: close it there and try again \
         (nothing was changed)",
        path.display()
    ))
}

/// The programs that hold `path` open, as Windows' Restart Manager names
/// them (what installers ask before replacing a file); none where it cannot
/// tell.
#[cfg(windows)]
fn holders(path: &Path) -> Vec<String> {
    use windows_sys::Win32::System::RestartManager::{
        RmEndSession, RmGetList, RmRegisterResources, RmStartSession, CCH_RM_SESSION_KEY,
        RM_PROCESS_INFO,
    };
    let file = crate::long_path::wide(path);
    let mut session = 0u32;
    let mut key = [0u16; CCH_RM_SESSION_KEY as usize + 1];
    // SAFETY: every pointer is to a live local of the size the call expects;
    // the session is ended before returning.
    unsafe {
        if RmStartSession(&mut session, 0, key.as_mut_ptr()) != 0 {
            return Vec::new();
        }
        let files = [file.as_ptr()];
        let mut names = Vec::new();
        if RmRegisterResources(
            session,
            1,
            files.as_ptr(),
            0,
            std::ptr::null(),
            0,
            std::ptr::null(),
        ) == 0
        {
            let mut infos: [RM_PROCESS_INFO; 8] = std::mem::zeroed();
            let (mut needed, mut count, mut reasons) = (0u32, infos.len() as u32, 0u32);
            if RmGetList(
                session,
                &mut needed,
                &mut count,
                infos.as_mut_ptr(),
                &mut reasons,
            ) == 0
            {
                for info in &infos[..count as usize] {
                    let name = &info.strAppName;
                    let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
                    names.push(String::from_utf16_lossy(&name[..len]));
                }
            }
        }
        RmEndSession(session);
        names
    }
}

#[cfg(not(windows))]
fn holders(_path: &Path) -> Vec<String> {
    Vec::new()
}

//! `plugin-api.json`: how a plugin finds the running app. It holds the port,
//! the secret and the app's process id, is readable by the user alone, is
//! replaced whole (never seen half-written) and is removed when the app ends.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The discovery file's name in the app's data folder.
pub const FILE_NAME: &str = "plugin-api.json";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    pub port: u16,
    pub secret: String,
    pub pid: u32,
}

/// 32 random bytes as hex: new at each start, so a secret read from an
/// earlier start opens nothing.
pub fn new_secret() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The discovery file as written; removed on drop if it is still ours (a
/// later start may have replaced it).
pub struct Written {
    path: PathBuf,
    secret: String,
}

impl Written {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        if read(&self.path).is_ok_and(|d| d.secret == self.secret) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes the discovery file into `data_dir` (made, for its owner only, if
/// missing): a private temporary file renamed over the old one.
pub fn write(data_dir: &Path, port: u16, secret: &str) -> io::Result<Written> {
    leasedesk_files::owner_only::create_dir_all(data_dir)?;
    let discovery = Discovery {
        port,
        secret: secret.to_owned(),
        pid: std::process::id(),
    };
    let path = data_dir.join(FILE_NAME);
    let temporary = data_dir.join(format!("{FILE_NAME}.{}.new", std::process::id()));
    let written = (|| {
        let mut file = leasedesk_files::owner_only::file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temporary)?;
        file.write_all(&serde_json::to_vec(&discovery)?)?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(e);
    }
    Ok(Written {
        path,
        secret: secret.to_owned(),
    })
}

/// Reads a discovery file.
pub fn read(path: &Path) -> io::Result<Discovery> {
    let bytes = std::fs::read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_whole_private_and_gone_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let written = write(&data, 4321, "s3cret").unwrap();
        let found = read(written.path()).unwrap();
        assert_eq!(
            found,
            Discovery {
                port: 4321,
                secret: "s3cret".into(),
                pid: std::process::id()
            }
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(written.path()), 0o600, "the file is the user's alone");
            assert_eq!(mode(&data), 0o700, "so is its folder, when made here");
        }
        let names: Vec<_> = std::fs::read_dir(&data).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
        let path = written.path().to_owned();
        drop(written);
        assert!(!path.exists(), "removed when the app ends");
    }

    #[test]
    fn a_later_starts_file_is_not_removed_by_an_earlier_one() {
        let dir = tempfile::tempdir().unwrap();
        let earlier = write(dir.path(), 1, "first").unwrap();
        let later = write(dir.path(), 2, "second").unwrap();
        drop(earlier);
        assert_eq!(read(later.path()).unwrap().secret, "second");
    }

    #[test]
    fn each_secret_is_new_and_long() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}

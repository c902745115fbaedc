//! Where Leasedesk keeps a user's files on each system, as that system's own
//! programs do. Plain functions of the environment, so the Linux tests check
//! the Windows and macOS answers too.

use std::ffi::OsString;
use std::path::PathBuf;

/// The systems whose conventions differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    Linux,
    MacOs,
    Windows,
}

impl System {
    /// The system this build runs on (other Unixes follow Linux).
    pub const THIS: System = if cfg!(windows) {
        System::Windows
    } else if cfg!(target_os = "macos") {
        System::MacOs
    } else {
        System::Linux
    };
}

/// Reads an environment variable; tests pass their own.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// The process's own environment.
pub fn process_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|value| !value.is_empty())
}

/// The app's folders on Windows: settings roam with the user
/// (`%APPDATA%\Leasedesk`); the store and the previews stay on this computer
/// (`%LOCALAPPDATA%\Leasedesk`), since gigabytes of blobs have no place in a
/// roaming profile. Both folders are the user's alone by inheritance: Windows
/// gives a profile's AppData to its user, SYSTEM and Administrators only.
pub struct WindowsDirs {
    pub config: PathBuf,
    pub data: PathBuf,
    pub cache: PathBuf,
}

pub fn windows_dirs(env: Env) -> Option<WindowsDirs> {
    let roaming = PathBuf::from(env("APPDATA")?).join("Leasedesk");
    let local = PathBuf::from(env("LOCALAPPDATA")?).join("Leasedesk");
    Some(WindowsDirs {
        config: roaming,
        cache: local.join("cache"),
        data: local,
    })
}

/// The CLI's data folder when `--data` and `LEASEDESK_DATA` are not given:
/// the same store the app opens on Windows and macOS; on Linux
/// `$XDG_DATA_HOME/leasedesk`.
pub fn cli_data(system: System, env: Env) -> PathBuf {
    let home = || env("HOME").map(PathBuf::from);
    let base = match system {
        System::Windows => windows_dirs(env).map(|dirs| dirs.data.join("store")),
        System::MacOs => {
            home().map(|home| home.join("Library/Application Support/dev.leasedesk.desk/store"))
        }
        System::Linux => env("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| home().map(|home| home.join(".local/share")))
            .map(|base| base.join("leasedesk")),
    };
    base.unwrap_or_else(|| PathBuf::from("leasedesk-data"))
}

/// The workspace a new user starts with: `Leasedesk` in their home folder
/// (`%USERPROFILE%` on Windows, which has no `HOME`).
pub fn default_workspace(system: System, env: Env) -> PathBuf {
    let home = match system {
        System::Windows => env("USERPROFILE"),
        System::Linux | System::MacOs => env("HOME"),
    };
    home.map_or_else(|| PathBuf::from("."), PathBuf::from)
        .join("Leasedesk")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn windows_keeps_settings_roaming_and_the_store_on_this_computer() {
        let env = env_of(&[
            ("APPDATA", r"C:\Users\ana\AppData\Roaming"),
            ("LOCALAPPDATA", r"C:\Users\ana\AppData\Local"),
            ("USERPROFILE", r"C:\Users\ana"),
        ]);
        let dirs = windows_dirs(&env).unwrap();
        let path = |p: PathBuf| p.to_string_lossy().replace('/', "\\");
        assert_eq!(path(dirs.config), r"C:\Users\ana\AppData\Roaming\Leasedesk");
        assert_eq!(path(dirs.data), r"C:\Users\ana\AppData\Local\Leasedesk");
        assert_eq!(
            path(dirs.cache),
            r"C:\Users\ana\AppData\Local\Leasedesk\cache"
        );
        assert_eq!(
            path(cli_data(System::Windows, &env)),
            r"C:\Users\ana\AppData\Local\Leasedesk\store",
            "the CLI opens the app's store"
        );
        assert_eq!(
            path(default_workspace(System::Windows, &env)),
            r"C:\Users\ana\Leasedesk"
        );
    }

    #[test]
    fn macos_uses_application_support_and_linux_the_xdg_folders() {
        let env = env_of(&[("HOME", "/Users/ana")]);
        assert_eq!(
            cli_data(System::MacOs, &env),
            PathBuf::from("/Users/ana/Library/Application Support/dev.leasedesk.desk/store")
        );
        assert_eq!(
            default_workspace(System::MacOs, &env),
            PathBuf::from("/Users/ana/Leasedesk")
        );
        assert_eq!(
            cli_data(System::Linux, &env_of(&[("HOME", "/home/ana")])),
            PathBuf::from("/home/ana/.local/share/leasedesk")
        );
        assert_eq!(
            cli_data(
                System::Linux,
                &env_of(&[("HOME", "/home/ana"), ("XDG_DATA_HOME", "/data/ana")])
            ),
            PathBuf::from("/data/ana/leasedesk")
        );
    }
}

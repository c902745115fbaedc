//! The app's settings, as a JSON file in its config folder. The token is not
//! here: it lives in the OS keychain (see `keychain`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum BackendChoice {
    /// The store inside the app: no server needed.
    Bundled,
    /// A studio's `leasedesk serve`.
    Remote,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[derive(ts_rs::TS)]
#[ts(export)]
pub struct Settings {
    pub backend: BackendChoice,
    /// One or more server URLs, separated by commas.
    pub server_url: String,
    /// The SHA-256 fingerprint (lower-case hex) of a self-signed server
    /// certificate the user chose to trust; any other is refused. Not a
    /// secret: it only says which certificate is the server's.
    pub pinned_sha256: Option<String>,
    pub workspace: PathBuf,
    /// Your name on the bundled backend (a remote one knows you by your token).
    pub display_name: String,
}

impl Default for Settings {
    fn default() -> Self {
        use leasedesk_files::places;
        Self {
            backend: BackendChoice::Bundled,
            server_url: String::new(),
            pinned_sha256: None,
            workspace: places::default_workspace(places::System::THIS, &places::process_env),
            display_name: leasedesk_engine::os_user().name().to_owned(),
        }
    }
}

impl Settings {
    pub fn load(file: &Path) -> Self {
        std::fs::read(file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// The pin that goes on when `new` replaces these settings: it changes
    /// only by trusting a certificate, and belongs to its server, so another
    /// address starts with none (whatever `new` says).
    pub fn pin_kept_for(&self, new: &Settings) -> Option<String> {
        let same_servers = self.server_url.trim() == new.server_url.trim();
        same_servers.then(|| self.pinned_sha256.clone()).flatten()
    }

    /// Written to a temporary file and renamed, so a crash never leaves half a file.
    pub fn save(&self, file: &Path) -> std::io::Result<()> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let temp = file.with_extension("json.tmp");
        std::fs::write(&temp, serde_json::to_vec_pretty(self)?)?;
        std::fs::rename(temp, file)
    }
}

/// Where the app keeps its files (settings, the bundled store, the workspace
/// index, the previews).
#[derive(Clone, Debug)]
pub struct Dirs {
    pub config: PathBuf,
    pub data: PathBuf,
    /// What can be made again (the previews).
    pub cache: PathBuf,
}

impl Dirs {
    pub fn settings_file(&self) -> PathBuf {
        self.config.join("settings.json")
    }
    pub fn bundled_store(&self) -> PathBuf {
        self.data.join("store")
    }
    pub fn workspace_state(&self) -> PathBuf {
        self.data.join("workspace")
    }
    pub fn previews(&self) -> PathBuf {
        self.cache.join("previews")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_never_hold_a_token() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let settings = Settings {
            backend: BackendChoice::Remote,
            server_url: "https://a.example:7443, https://b.example:7443".into(),
            pinned_sha256: Some("ab".repeat(32)),
            workspace: dir.path().join("ws"),
            display_name: "alice".into(),
        };
        settings.save(&file).unwrap();
        assert_eq!(Settings::load(&file), settings);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("token"), "settings hold no token: {text}");
    }

    #[test]
    fn a_pin_stays_with_its_server_and_is_never_set_by_a_save() {
        let pinned = Settings {
            backend: BackendChoice::Remote,
            server_url: "https://files.studio.lan:7443".into(),
            pinned_sha256: Some("ab".repeat(32)),
            ..Settings::default()
        };
        let resaved = Settings {
            server_url: " https://files.studio.lan:7443 ".into(),
            pinned_sha256: None,
            ..pinned.clone()
        };
        assert_eq!(pinned.pin_kept_for(&resaved), pinned.pinned_sha256);
        let elsewhere = Settings {
            server_url: "https://other.lan:7443".into(),
            ..pinned.clone()
        };
        assert_eq!(pinned.pin_kept_for(&elsewhere), None, "another server");
        let smuggled = Settings {
            pinned_sha256: Some("cd".repeat(32)),
            ..Settings::default()
        };
        assert_eq!(
            Settings::default().pin_kept_for(&smuggled),
            None,
            "a save sets no pin"
        );
    }

    #[test]
    fn a_missing_or_broken_file_gives_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        assert_eq!(Settings::load(&file).backend, BackendChoice::Bundled);
        std::fs::write(&file, b"{ not json").unwrap();
        assert_eq!(Settings::load(&file), Settings::default());
    }
}

//! The app under test and its WebDriver session: tauri-driver started with
//! the app on a home of the test's own (settings, workspace, store), the
//! `World` a scenario drives, the CLI acting as the other people on its store.
//! Never more than one app at a time (`ONE_APP`); never a step of a scenario.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use super::group::KilledGroup;
use super::process::{end_app_instances, free_port, run_cli, succeeded, tool};
use super::server::{start_server, Server};

/// One app at a time: the app allows a single instance per session bus,
/// and a launch ends every other app on it. A scenario holds it from
/// before its desktop services start until its app is gone.
pub static ONE_APP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A scenario's hold on [`ONE_APP`], which starting an app asks for.
pub type OneApp = tokio::sync::MutexGuard<'static, ()>;

#[derive(Clone, Copy, PartialEq)]
pub enum Backend {
    Bundled,
    Remote,
}

/// The app under test, its folders, and how others reach its store.
pub struct World {
    pub kind: Backend,
    pub client: Client,
    pub workspace: PathBuf,
    pub store: PathBuf,
    pub server: Option<Server>,
    pub shots: PathBuf,
    /// The drivers' and the app's output (its errors beside, `.stderr.log`).
    pub log: PathBuf,
    pub _driver: KilledGroup,
    pub _home: tempfile::TempDir,
}

/// Starts tauri-driver and, through it, the app on `home`. Starting a
/// WebDriver session on a loaded machine sometimes fails in the drivers (not
/// the app): that is tried again, twice at most, each time from scratch.
pub async fn launch(home: &Path, log: &Path) -> (Client, KilledGroup) {
    let mut attempt = 0;
    loop {
        attempt += 1;
        end_app_instances();
        let (port, native_port) = (free_port(), free_port());
        let driver = Command::new(tool("TAURI_DRIVER"))
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ])
            .env("LEASEDESK_APP_HOME", home)
            // The drivers' and the app's own output, for a failure's post-mortem.
            .stdout(std::fs::File::create(log).unwrap())
            .stderr(std::fs::File::create(log.with_extension("stderr.log")).unwrap())
            .env("RUST_BACKTRACE", "1")
            .process_group(0)
            .spawn()
            .unwrap();
        let driver = KilledGroup(driver);
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "tauri-driver did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".into(), json!("wry"));
        capabilities.insert(
            "tauri:options".into(),
            json!({ "application": env!("CARGO_BIN_EXE_leasedesk-app") }),
        );
        let mut builder =
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        builder.capabilities(capabilities);
        let address = format!("http://127.0.0.1:{port}");
        match tokio::time::timeout(Duration::from_secs(45), builder.connect(&address)).await {
            // Now and then the drivers' first page never finishes loading
            // (app and web process idle), which would hold every later
            // command: that launch is started again.
            Ok(Ok(client)) if showed_its_list(&client).await => return (client, driver),
            Ok(Ok(_)) if attempt < 3 => eprintln!("the window did not show its list; again"),
            Ok(Ok(_)) => panic!("the app's window never showed its list, three times"),
            Ok(Err(e)) if attempt < 3 => eprintln!("no WebDriver session yet ({e}); again"),
            Err(_) if attempt < 3 => eprintln!("no WebDriver session within 45 s; again"),
            Ok(Err(e)) => panic!("a WebDriver session with the app: {e}"),
            Err(_) => panic!("no window from the app within 45 s, three times"),
        }
    }
}

/// Whether the window shows its first list within 30 s; each look at it is
/// bounded, and later commands give up after 30 s rather than WebDriver's 300.
pub async fn showed_its_list(client: &Client) -> bool {
    let limits = fantoccini::wd::TimeoutConfiguration::new(
        Some(Duration::from_secs(30)),
        Some(Duration::from_secs(30)),
        Some(Duration::ZERO),
    );
    if !matches!(
        tokio::time::timeout(Duration::from_secs(10), client.update_timeouts(limits)).await,
        Ok(Ok(()))
    ) {
        return false;
    }
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        let look = client.find_all(Locator::Css("body[data-ready=true]"));
        match tokio::time::timeout(Duration::from_secs(5), look).await {
            Ok(Ok(found)) if !found.is_empty() => return true,
            Ok(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(_) => {} // that look hung: look again while time is left
        }
    }
    false
}

/// A whole scenario may take this long; past it the test fails instead of
/// holding CI (a WebDriver call has no timeout of its own).
pub const SCENARIO_LIMIT: Duration = Duration::from_secs(300);

/// Runs `scenario` to its end, or fails the test at [`SCENARIO_LIMIT`].
pub async fn within_limit(scenario: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(SCENARIO_LIMIT, scenario)
        .await
        .expect("the scenario within its limit");
}

/// Two tests of `scenario` (an `async fn(Backend)`), each within the
/// limit: `$bundled` on the bundled backend, `$remote` on a team server.
#[allow(unused_macros)] // the designer binary runs no scenario on both
macro_rules! on_both_backends {
    ($scenario:ident: $bundled:ident, $remote:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $bundled() {
            $crate::window::within_limit($scenario($crate::window::Backend::Bundled)).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $remote() {
            $crate::window::within_limit($scenario($crate::window::Backend::Remote)).await;
        }
    };
}
#[allow(unused_imports)]
pub(crate) use on_both_backends;

impl Drop for World {
    fn drop(&mut self) {
        end_app_instances();
    }
}

impl World {
    pub async fn start(_one: &OneApp, kind: Backend) -> Self {
        let home = tempfile::tempdir().unwrap();
        let server = (kind == Backend::Remote).then(|| start_server(&home.path().join("server")));
        Self::start_in(_one, home, kind, server).await
    }

    /// The app on `home`, on `server` when given.
    pub async fn start_in(
        _one: &OneApp,
        home: tempfile::TempDir,
        kind: Backend,
        server: Option<Server>,
    ) -> Self {
        let workspace = home.path().join("Leasedesk");
        let store = home.path().join("data/store");
        let settings = json!({
            "backend": if kind == Backend::Remote { "remote" } else { "bundled" },
            "server_url": server.as_ref().map_or(String::new(), |s| s.url.clone()),
            "workspace": workspace,
            "display_name": "alice",
        });
        std::fs::create_dir_all(home.path().join("config")).unwrap();
        std::fs::write(
            home.path().join("config/settings.json"),
            settings.to_string(),
        )
        .unwrap();
        if let Some(server) = &server {
            // The token the user would paste in Settings, in the real keychain.
            leasedesk_app::keychain::store(&server.url, &server.tokens["alice"]).unwrap();
        } else {
            // The bundled store needs an admin account for the break step.
            run_cli(&[
                "--data",
                store.to_str().unwrap(),
                "user",
                "add",
                "admin",
                "--admin",
            ]);
        }
        let log = match kind {
            Backend::Remote => "remote-app.log",
            Backend::Bundled => "bundled-app.log",
        };
        Self::launched(home, kind, server, log).await
    }

    /// The app on a fresh profile: no settings saved yet, so it opens on
    /// the first run's choice; `server` is the studio it may join.
    pub async fn fresh(_one: &OneApp, server: Server) -> Self {
        let home = tempfile::tempdir().unwrap();
        Self::launched(home, Backend::Remote, Some(server), "fresh-app.log").await
    }

    /// The app launched on `home`, its log `log` beside the screenshots,
    /// once its window shows its first list.
    async fn launched(
        home: tempfile::TempDir,
        kind: Backend,
        server: Option<Server>,
        log: &str,
    ) -> Self {
        let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/e2e-screenshots");
        std::fs::create_dir_all(&shots).unwrap();
        let log = shots.join(log);
        let (client, driver) = launch(home.path(), &log).await;
        let world = Self {
            kind,
            client,
            workspace: home.path().join("Leasedesk"),
            store: home.path().join("data/store"),
            server,
            shots,
            log,
            _driver: driver,
            _home: home,
        };
        world
            .wait_for("body[data-ready=true]", "the window's first list")
            .await;
        world.wait_shown().await;
        world
    }

    /// Waits for the window to be on screen: it is built hidden and shown
    /// once its page has loaded.
    pub async fn wait_shown(&self) {
        let started = Instant::now();
        while self.eval("return document.visibilityState;").await != "visible" {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{}: the window loaded but never showed",
                self.name()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Ends the app and starts it again on the same folders: new connections.
    pub async fn relaunch(&mut self) {
        let log = self.shots.join(format!("{}-app-again.log", self.name()));
        let (client, driver) = launch(self._home.path(), &log).await;
        self.log = log;
        self.client = client;
        self._driver = driver;
        self.wait_for("body[data-ready=true]", "the window again")
            .await;
        self.wait_shown().await;
    }

    pub fn name(&self) -> &'static str {
        match self.kind {
            Backend::Bundled => "bundled",
            Backend::Remote => "remote",
        }
    }

    /// Runs the CLI as `who` against the app's store.
    pub fn cli(&self, who: &str, args: &[&str]) {
        self.cli_output(who, args);
    }

    /// The CLI's `--json` answer, as `who`.
    pub fn cli_json(&self, who: &str, args: &[&str]) -> serde_json::Value {
        let with_json: Vec<&str> = std::iter::once("--json")
            .chain(args.iter().copied())
            .collect();
        serde_json::from_slice(&self.cli_output(who, &with_json)).unwrap()
    }

    /// The team server's answer to `method path` with `body` (JSON), as
    /// `who`: for what the CLI does not do. It must succeed.
    pub async fn http_as(
        &self,
        who: &str,
        method: &str,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let server = self.server.as_ref().expect("a team server");
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = reqwest::Client::new()
            .request(method, format!("{}{path}", server.url))
            .bearer_auth(&server.tokens[who]);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer = request.send().await.unwrap();
        let status = answer.status();
        let text = answer.text().await.unwrap();
        assert!(status.is_success(), "{who} {path}: {status} {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// What the CLI printed, run as `who` against the app's store; it must succeed.
    fn cli_output(&self, who: &str, args: &[&str]) -> Vec<u8> {
        let mut command = Command::new(tool("LEASEDESK_BIN"));
        match &self.server {
            Some(server) => {
                command
                    .args(["--server", &server.url])
                    .env("LEASEDESK_TOKEN", &server.tokens[who]);
            }
            None => {
                command
                    .arg("--data")
                    .arg(&self.store)
                    .args(["--as", &format!("user:{who}")]);
            }
        }
        succeeded(
            command.args(args).env_remove("LEASEDESK_DATA"),
            &format!("{who} {args:?}"),
        )
    }
}

//! The harness of the window tests: the real app under tauri-driver, a real
//! `leasedesk serve`, the CLI acting as other people, screenshots. Shared by
//! the test files in this folder; each uses a part of it.
#![allow(dead_code)]

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// One app at a time: the app allows a single instance per session bus.
pub static ONE_APP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub fn tool(var: &str) -> PathBuf {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: run the end-to-end tests through `cargo xtask test`")
    });
    assert!(path.exists(), "{var}={} does not exist", path.display());
    path
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when the test ends, however it ends.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A child in a process group of its own, killed whole when the test ends:
/// tauri-driver starts WebKitWebDriver, which starts the app, and all three
/// must go (the app allows one instance per session bus).
pub struct KilledGroup(pub Child);

impl Drop for KilledGroup {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.wait();
    }
}

/// A real `leasedesk serve` with three users.
pub struct Server {
    pub url: String,
    pub tokens: std::collections::HashMap<&'static str, String>,
    pub data: PathBuf,
    /// `serve`'s flags beyond the data folder and the address (TLS).
    pub flags: Vec<std::ffi::OsString>,
    /// `None` while killed (`kill`), until started again (`restart`).
    pub process: Option<Killed>,
}

impl Server {
    /// SIGKILL: no goodbye to any client.
    pub fn kill(&mut self) {
        self.process = None;
    }

    /// `serve` again on the same address.
    pub fn restart(&mut self) {
        let listen = self.url.split("://").last().unwrap().to_owned();
        let (url, process) = serve(&self.data, &listen, &self.flags);
        assert_eq!(url, self.url, "the same address again");
        self.process = Some(process);
    }
}

pub fn start_server(data: &Path) -> Server {
    start_server_with(data, Vec::new())
}

/// As `start_server`, with more of `serve`'s flags.
pub fn start_server_with(data: &Path, flags: Vec<std::ffi::OsString>) -> Server {
    let cli = tool("LEASEDESK_BIN");
    let mut tokens = std::collections::HashMap::new();
    for (name, flags) in [
        ("alice", &[][..]),
        ("bob", &[][..]),
        ("admin", &["--admin"][..]),
    ] {
        let out = Command::new(&cli)
            .arg("--data")
            .arg(data)
            .args(["user", "add", name])
            .args(flags)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "user add {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let token = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .to_owned();
        tokens.insert(name, token);
    }
    let (url, process) = serve(data, "127.0.0.1:0", &flags);
    Server {
        url,
        tokens,
        data: data.to_owned(),
        flags,
        process: Some(process),
    }
}

/// `leasedesk serve` on `listen`; its address as it says it.
pub fn serve(data: &Path, listen: &str, flags: &[std::ffi::OsString]) -> (String, Killed) {
    let mut child = Command::new(tool("LEASEDESK_BIN"))
        .arg("--data")
        .arg(data)
        .args(["serve", "--listen", listen])
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("the address")
        .to_owned();
    (url, Killed(child))
}

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
    pub _driver: KilledGroup,
    pub _home: tempfile::TempDir,
}

/// Ends the app itself too: closing its window only hides it (the app lives
/// on in the tray), and a second app would give way to a first left running.
pub fn end_app_instances() {
    let app = env!("CARGO_BIN_EXE_leasedesk-app");
    let _ = Command::new("pkill").args(["-KILL", "-f", app]).status();
    let started = Instant::now();
    while Command::new("pgrep")
        .args(["-f", app])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        if started.elapsed() > Duration::from_secs(5) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
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

impl Drop for World {
    fn drop(&mut self) {
        end_app_instances();
    }
}

impl World {
    pub async fn start(kind: Backend) -> Self {
        let home = tempfile::tempdir().unwrap();
        let server = (kind == Backend::Remote).then(|| start_server(&home.path().join("server")));
        Self::start_in(home, kind, server).await
    }

    /// The app on `home`, on `server` when given.
    pub async fn start_in(home: tempfile::TempDir, kind: Backend, server: Option<Server>) -> Self {
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

        let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/e2e-screenshots");
        std::fs::create_dir_all(&shots).unwrap();
        let name = if kind == Backend::Remote {
            "remote"
        } else {
            "bundled"
        };
        let (client, driver) = launch(home.path(), &shots.join(format!("{name}-app.log"))).await;
        let world = Self {
            kind,
            client,
            workspace,
            store,
            server,
            shots,
            _driver: driver,
            _home: home,
        };
        world
            .wait_for("body[data-ready=true]", "the window's first list")
            .await;
        world
    }

    /// Ends the app and starts it again on the same folders: new connections.
    pub async fn relaunch(&mut self) {
        let log = self.shots.join(format!("{}-app-again.log", self.name()));
        let (client, driver) = launch(self._home.path(), &log).await;
        self.client = client;
        self._driver = driver;
        self.wait_for("body[data-ready=true]", "the window again")
            .await;
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
        let out = command
            .args(args)
            .env_remove("LEASEDESK_DATA")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{who} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    pub async fn screenshot(&self, step: &str) {
        let png = self.png().await;
        std::fs::write(self.shots.join(format!("{}-{step}.png", self.name())), png).unwrap();
    }

    /// The window as PNG. Read from Xvfb's framebuffer file when
    /// `LEASEDESK_XVFB_FRAMEBUFFER` names it (`cargo xtask test` does): on a
    /// busy machine WebKitWebDriver's screenshot sometimes never answers, and
    /// holds every later command of the session with it.
    pub async fn png(&self) -> Vec<u8> {
        let Some(file) = std::env::var_os("LEASEDESK_XVFB_FRAMEBUFFER") else {
            return self.client.screenshot().await.unwrap();
        };
        let frame = self
            .client
            .execute(
                "return [screenX, screenY, outerWidth, outerHeight];",
                vec![],
            )
            .await
            .unwrap();
        let at: Vec<u32> = frame
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap().max(0.0) as u32)
            .collect();
        // A frame drawn since the last change, so the file shows it.
        tokio::time::sleep(Duration::from_millis(150)).await;
        let screen = xwd_to_rgb(&std::fs::read(file).unwrap());
        let (width, height) = (
            at[2].min(screen.width() - at[0]),
            at[3].min(screen.height() - at[1]),
        );
        let window = image::imageops::crop_imm(&screen, at[0], at[1], width, height).to_image();
        let mut png = std::io::Cursor::new(Vec::new());
        window.write_to(&mut png, image::ImageFormat::Png).unwrap();
        png.into_inner()
    }

    /// Waits up to 15 s for an element matching `css`.
    pub async fn wait_for(&self, css: &str, what: &str) -> fantoccini::elements::Element {
        self.wait_until(css, what, Duration::from_secs(15), |_| true)
            .await
    }

    /// Waits for an element matching `css` whose text passes `test`.
    pub async fn wait_until(
        &self,
        css: &str,
        what: &str,
        limit: Duration,
        test: impl Fn(&str) -> bool,
    ) -> fantoccini::elements::Element {
        let started = Instant::now();
        let mut seen = Vec::new();
        loop {
            seen.clear();
            if let Ok(found) = self.client.find_all(Locator::Css(css)).await {
                for element in found {
                    // The DOM's text: WebKit's "visible text" reads some plain spans as empty.
                    match element.prop("textContent").await {
                        Ok(Some(text)) if test(text.trim()) => return element,
                        Ok(text) => seen.push(text.unwrap_or_default()),
                        Err(e) => seen.push(format!("({e})")),
                    }
                }
            }
            if started.elapsed() > limit {
                self.screenshot("failure").await;
                panic!(
                    "{}: {what} did not show within {limit:?} ({css}); it reads {seen:?}",
                    self.name()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn row(path: &str) -> String {
        format!(".row[data-path=\"{path}\"]")
    }

    pub async fn open_row(&self, path: &str) {
        self.click_css(&Self::row(path), path).await;
    }

    /// Clicks the open file's Check out and waits for the row to show you.
    pub async fn check_out_here(&self, row: &str) {
        // Enabled: while an earlier action runs, its buttons are disabled and a click does nothing.
        self.click_css("#action-checkout:not([disabled])", "Check out")
            .await;
        self.wait_until(
            &format!("{row} .holder"),
            "you as the holder",
            Duration::from_secs(10),
            |t| t.starts_with("You"),
        )
        .await;
    }

    /// Clicks the open file's Check in, which asks for a description: checks
    /// the draft it offers (when `expect_draft` is given), then confirms, with
    /// the draft as it is.
    pub async fn check_in_here(&self, expect_draft: Option<&str>) {
        self.check_in_with(expect_draft, None).await;
    }

    /// As `check_in_here`, typing `message` over the draft when given.
    pub async fn check_in_with(&self, expect_draft: Option<&str>, message: Option<&str>) {
        self.click_css("#action-checkin:not([disabled])", "Check in")
            .await;
        let field = self
            .wait_for(
                "#checkin[open] #checkin-message",
                "the description asked for",
            )
            .await;
        if let Some(draft) = expect_draft {
            // The draft arrives with the dialog: it is filled before it opens.
            assert_eq!(
                field.prop("value").await.unwrap().as_deref(),
                Some(draft),
                "{}: the check-in's draft description",
                self.name()
            );
        }
        if let Some(message) = message {
            field.clear().await.unwrap();
            field.send_keys(message).await.unwrap();
        }
        self.click("checkin-confirm").await;
    }

    /// bob checks `bytes` in as the next version of `path`.
    pub fn bob_commits(&self, path: &str, bytes: &[u8]) {
        let file = self._home.path().join("incoming/bob-next");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bytes).unwrap();
        self.cli("bob", &["checkout", path]);
        self.cli("bob", &["checkin", path, file.to_str().unwrap()]);
    }

    /// A check-in that arrives late: the open file `path` checked out here
    /// and saved with `mine`, the lease broken by the admin, bob's `theirs`
    /// committed as `bobs_version`, then Check in pressed: a proposal.
    pub async fn late_check_in(&self, path: &str, mine: &[u8], theirs: &[u8], bobs_version: u32) {
        let row = World::row(path);
        self.check_out_here(&row).await;
        save_atomically(&self.workspace.join(path), mine);
        self.cli("admin", &["break", path, "--reason", "bob needs it"]);
        self.wait_until(
            &format!("{row} .holder"),
            "the lost lease",
            Duration::from_secs(10),
            |t| t == "Your lease broken by admin",
        )
        .await;
        self.bob_commits(path, theirs);
        self.wait_until(
            &format!("{row} .version"),
            "bob's version",
            Duration::from_secs(10),
            |t| t == format!("v{bobs_version}"),
        )
        .await;
        self.open_row(path).await;
        self.check_in_here(None).await;
        self.wait_until(".notice", "the proposal", Duration::from_secs(10), |t| {
            t.contains("became a proposal")
        })
        .await;
    }

    /// Waits until the image matching `css` is decoded; answers its size.
    pub async fn decoded(&self, css: &str, what: &str) -> (u64, u64) {
        let started = Instant::now();
        loop {
            let size = self
                .client
                .execute(
                    "const img = document.querySelector(arguments[0]);
                     return img && img.complete && img.naturalWidth > 0 ? [img.naturalWidth, img.naturalHeight] : null;",
                    vec![json!(css)],
                )
                .await
                .unwrap();
            if let Some([width, height]) = size.as_array().map(Vec::as_slice) {
                return (width.as_u64().unwrap(), height.as_u64().unwrap());
            }
            if started.elapsed() > Duration::from_secs(15) {
                self.screenshot("failure").await;
                panic!(
                    "{}: {what} was not decoded within 15 s ({css})",
                    self.name()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Dismisses the notices, as a user would before reaching what they cover
    /// (they stack over the detail's lower part).
    pub async fn dismiss_notices(&self) {
        self.client
            .execute(
                "for (const b of document.querySelectorAll('.notice .button')) if (b.textContent === 'Dismiss') b.click();",
                vec![],
            )
            .await
            .unwrap();
    }

    /// Scrolls the element into the middle of its panel and clicks it there.
    /// For the history's buttons, far down the detail's own scrolling panel,
    /// where WebKitWebDriver's click answers an empty error.
    pub async fn click_in_panel(&self, css: &str, what: &str) {
        self.wait_for(css, what).await;
        let clicked = self
            .client
            .execute(
                "const b = document.querySelector(arguments[0]);
                 if (!b || b.disabled) return false;
                 b.scrollIntoView({ block: 'center' });
                 b.click();
                 return true;",
                vec![json!(css)],
            )
            .await
            .unwrap();
        assert_eq!(
            clicked,
            json!(true),
            "{}: {what} is not there to click",
            self.name()
        );
    }

    /// Presses a key in the window (outside any field).
    pub async fn press(&self, key: &str) {
        self.wait_for("body", "the page")
            .await
            .send_keys(key)
            .await
            .unwrap();
    }

    /// A screenshot for the README too (`docs/screenshots/NAME.png`) when
    /// `LEASEDESK_SCREENSHOTS=update`, so a plain test run changes no tracked file.
    pub async fn readme_screenshot(&self, name: &str) {
        self.screenshot(name).await;
        if std::env::var("LEASEDESK_SCREENSHOTS").as_deref() == Ok("update") {
            let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join(format!("{name}.png")), self.png().await).unwrap();
        }
    }

    pub async fn click(&self, id: &str) {
        self.click_css(&format!("#{id}"), id).await;
    }

    /// Clicks the element, finding it again if the window redrew it meanwhile.
    pub async fn click_css(&self, css: &str, what: &str) {
        let started = Instant::now();
        loop {
            let element = self.wait_for(css, what).await;
            match element.click().await {
                Ok(_) => return,
                Err(e) if started.elapsed() < Duration::from_secs(10) => {
                    let _ = e; // redrawn (stale) or covered for a moment: try again
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("{}: clicking {what}: {e}", self.name()),
            }
        }
    }

    pub async fn invoke(&self, command: &str, args: serde_json::Value) -> serde_json::Value {
        self.client
            .execute_async(
                "const [command, args, done] = arguments;
                 window.__TAURI_INTERNALS__.invoke(command, args).then(done, (e) => done({ failed: e }));",
                vec![json!(command), args],
            )
            .await
            .unwrap()
    }
}

/// Xvfb's screen (`-fbdir`: an XWD file, ZPixmap at 32 bits per pixel) as RGB.
pub fn xwd_to_rgb(xwd: &[u8]) -> image::RgbImage {
    let field = |i: usize| u32::from_be_bytes(xwd[i * 4..i * 4 + 4].try_into().unwrap());
    let (header, width, height) = (field(0) as usize, field(4), field(5));
    let (byte_order, bits_per_pixel, bytes_per_line) = (field(7), field(11), field(12) as usize);
    let colours = field(19) as usize;
    assert_eq!((field(2), bits_per_pixel), (2, 32), "a 24-bit Xvfb screen");
    let pixels = &xwd[header + colours * 12..];
    image::RgbImage::from_fn(width, height, |x, y| {
        let at = y as usize * bytes_per_line + x as usize * 4;
        let p = &pixels[at..at + 4];
        // LSBFirst (0) keeps blue first in memory.
        if byte_order == 0 {
            image::Rgb([p[2], p[1], p[0]])
        } else {
            image::Rgb([p[1], p[2], p[3]])
        }
    })
}

pub fn run_cli(args: &[&str]) {
    let out = Command::new(tool("LEASEDESK_BIN"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Saves the way design applications do: a temporary file renamed over the original.
pub fn save_atomically(path: &Path, data: &[u8]) {
    let temp = path.with_extension("saving~");
    std::fs::write(&temp, data).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

pub fn writable(path: &Path) -> bool {
    !std::fs::metadata(path).unwrap().permissions().readonly()
}

/// A poster 320 × 200: a sky with a sun at `sun_x`, as PNG bytes.
pub fn poster(sun_x: u32) -> Vec<u8> {
    let image = image::RgbaImage::from_fn(320, 200, |x, y| {
        let (dx, dy) = (x as i64 - sun_x as i64, y as i64 - 60);
        if dx * dx + dy * dy < 30 * 30 {
            image::Rgba([250, 200, 40, 255])
        } else if y > 150 {
            image::Rgba([40, 120, 60, 255])
        } else {
            image::Rgba([90, 150, 230, 255])
        }
    });
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// A 16×16 Photoshop document saved without its composite: an orange
/// layer under an Invert adjustment layer, which previews leave out (so
/// they are approximate).
pub fn layers_with_an_adjustment() -> Vec<u8> {
    let be16 = |v: u16| v.to_be_bytes().to_vec();
    let be32 = |v: u32| v.to_be_bytes().to_vec();
    let mut psd = b"8BPS".to_vec();
    psd.extend(be16(1));
    psd.extend([0; 6]);
    for part in [be16(3), be32(16), be32(16), be16(8), be16(3), be32(0)] {
        psd.extend(part);
    }
    // Version info (1057): no real composite ("maximize compatibility" off).
    let info = [be32(1), vec![0], be32(0), be32(0), be32(1)].concat();
    let resource = [
        b"8BIM".to_vec(),
        be16(1057),
        vec![0, 0],
        be32(info.len() as u32),
        info,
    ]
    .concat();
    psd.extend(be32(resource.len() as u32));
    psd.extend(resource);
    let plane = 2 + 16 * 16;
    let mut info = be16(2);
    // The orange layer: transparency then R, G, B, each raw.
    for v in [0u32, 0, 16, 16] {
        info.extend(be32(v));
    }
    info.extend(be16(4));
    for id in [-1i16, 0, 1, 2] {
        info.extend(id.to_be_bytes());
        info.extend(be32(plane));
    }
    info.extend(b"8BIMnorm\xff\0\0\0");
    info.extend(be32(12));
    info.extend([0; 12]);
    // The adjustment: no pixels, its `nvrt` block.
    info.extend([0; 16]);
    info.extend(be16(0));
    info.extend(b"8BIMnorm\xff\0\0\0");
    info.extend(be32(24));
    info.extend([0; 12]);
    info.extend(b"8BIMnvrt");
    info.extend(be32(0));
    for value in [255u8, 200, 100, 50] {
        info.extend(be16(0));
        info.extend([value; 256]);
    }
    psd.extend(be32(4 + info.len() as u32 + 4));
    psd.extend(be32(info.len() as u32));
    psd.extend(info);
    psd.extend(be32(0));
    // The composite that is not the real one: white.
    psd.extend(be16(0));
    psd.extend([255; 3 * 256]);
    psd
}

/// Waits until `path` holds `bytes`.
pub async fn until_holds(path: &Path, bytes: &[u8], what: &str) {
    let started = Instant::now();
    while std::fs::read(path).ok().as_deref() != Some(bytes) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: {} does not hold the expected bytes",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The newest version's description, as the store has it.
pub fn newest_message(w: &World, path: &str) -> serde_json::Value {
    let answer = w.cli_json("bob", &["versions", path]);
    let versions = answer.get("versions").unwrap_or(&answer);
    versions[0]["message"].clone()
}

/// Opens the compare view's difference (key 4) and answers what it says of
/// the two images, once both are decoded and the difference is worked out.
pub async fn difference_said(w: &World) -> String {
    let a = w
        .decoded(
            "#compare-stage > .pane:not(.stack):not(.diff) img[data-side=a]",
            "the first image",
        )
        .await;
    let b = w
        .decoded(
            "#compare-stage > .pane:not(.stack):not(.diff) img[data-side=b]",
            "the second image",
        )
        .await;
    assert_eq!(
        (a, b),
        ((320, 200), (320, 200)),
        "both images, at their size"
    );
    w.press("4").await;
    w.wait_until(
        "#compare-stage[data-mode=diff]",
        "the difference mode",
        Duration::from_secs(5),
        |_| true,
    )
    .await;
    let share = w
        .wait_until(
            "#compare-share",
            "the difference's share",
            Duration::from_secs(15),
            |t| {
                t.starts_with("identical")
                    || t.starts_with("The pixels are identical")
                    || t.ends_with("of pixels differ")
            },
        )
        .await;
    share.prop("textContent").await.unwrap().unwrap_or_default()
}

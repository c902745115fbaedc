//! End to end: the real app in a real window, driven through WebDriver
//! (`tauri-driver` in front of WebKitWebDriver), on the bundled backend and on
//! a real `leasedesk serve` on 127.0.0.1:0. A second user and an admin act
//! through the `leasedesk` CLI. `cargo xtask test` installs tauri-driver and
//! runs this under Xvfb and a session bus with an unlocked keyring; it tells
//! the test where the tools are (`TAURI_DRIVER`, `LEASEDESK_BIN`).
//!
//! Each step saves a screenshot in `target/e2e-screenshots/`.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// One app at a time: the app allows a single instance per session bus.
static ONE_APP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn tool(var: &str) -> PathBuf {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: run the end-to-end tests through `cargo xtask test`")
    });
    assert!(path.exists(), "{var}={} does not exist", path.display());
    path
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A child in a process group of its own, killed whole when the test ends:
/// tauri-driver starts WebKitWebDriver, which starts the app, and all three
/// must go (the app allows one instance per session bus).
struct KilledGroup(Child);

impl Drop for KilledGroup {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.wait();
    }
}

/// A real `leasedesk serve` with three users.
struct Server {
    url: String,
    tokens: std::collections::HashMap<&'static str, String>,
    data: PathBuf,
    /// `serve`'s flags beyond the data folder and the address (TLS).
    flags: Vec<std::ffi::OsString>,
    /// `None` while killed (`kill`), until started again (`restart`).
    process: Option<Killed>,
}

impl Server {
    /// SIGKILL: no goodbye to any client.
    fn kill(&mut self) {
        self.process = None;
    }

    /// `serve` again on the same address.
    fn restart(&mut self) {
        let listen = self.url.split("://").last().unwrap().to_owned();
        let (url, process) = serve(&self.data, &listen, &self.flags);
        assert_eq!(url, self.url, "the same address again");
        self.process = Some(process);
    }
}

fn start_server(data: &Path) -> Server {
    start_server_with(data, Vec::new())
}

/// As `start_server`, with more of `serve`'s flags.
fn start_server_with(data: &Path, flags: Vec<std::ffi::OsString>) -> Server {
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
fn serve(data: &Path, listen: &str, flags: &[std::ffi::OsString]) -> (String, Killed) {
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
enum Backend {
    Bundled,
    Remote,
}

/// The app under test, its folders, and how others reach its store.
struct World {
    kind: Backend,
    client: Client,
    workspace: PathBuf,
    store: PathBuf,
    server: Option<Server>,
    shots: PathBuf,
    _driver: KilledGroup,
    _home: tempfile::TempDir,
}

/// Ends the app itself too: closing its window only hides it (the app lives
/// on in the tray), and a second app would give way to a first left running.
fn end_app_instances() {
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
async fn launch(home: &Path, log: &Path) -> (Client, KilledGroup) {
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
async fn showed_its_list(client: &Client) -> bool {
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
const SCENARIO_LIMIT: Duration = Duration::from_secs(300);

impl Drop for World {
    fn drop(&mut self) {
        end_app_instances();
    }
}

impl World {
    async fn start(kind: Backend) -> Self {
        let home = tempfile::tempdir().unwrap();
        let server = (kind == Backend::Remote).then(|| start_server(&home.path().join("server")));
        Self::start_in(home, kind, server).await
    }

    /// The app on `home`, on `server` when given.
    async fn start_in(home: tempfile::TempDir, kind: Backend, server: Option<Server>) -> Self {
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
    async fn relaunch(&mut self) {
        let log = self.shots.join(format!("{}-app-again.log", self.name()));
        let (client, driver) = launch(self._home.path(), &log).await;
        self.client = client;
        self._driver = driver;
        self.wait_for("body[data-ready=true]", "the window again")
            .await;
    }

    fn name(&self) -> &'static str {
        match self.kind {
            Backend::Bundled => "bundled",
            Backend::Remote => "remote",
        }
    }

    /// Runs the CLI as `who` against the app's store.
    fn cli(&self, who: &str, args: &[&str]) {
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
    }

    async fn screenshot(&self, step: &str) {
        let png = self.png().await;
        std::fs::write(self.shots.join(format!("{}-{step}.png", self.name())), png).unwrap();
    }

    /// The window as PNG. Read from Xvfb's framebuffer file when
    /// `LEASEDESK_XVFB_FRAMEBUFFER` names it (`cargo xtask test` does): on a
    /// busy machine WebKitWebDriver's screenshot sometimes never answers, and
    /// holds every later command of the session with it.
    async fn png(&self) -> Vec<u8> {
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
    async fn wait_for(&self, css: &str, what: &str) -> fantoccini::elements::Element {
        self.wait_until(css, what, Duration::from_secs(15), |_| true)
            .await
    }

    /// Waits for an element matching `css` whose text passes `test`.
    async fn wait_until(
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

    fn row(path: &str) -> String {
        format!(".row[data-path=\"{path}\"]")
    }

    async fn open_row(&self, path: &str) {
        self.click_css(&Self::row(path), path).await;
    }

    /// Clicks the open file's Check out and waits for the row to show you.
    async fn check_out_here(&self, row: &str) {
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
    async fn check_in_here(&self, expect_draft: Option<&str>) {
        self.check_in_with(expect_draft, None).await;
    }

    /// As `check_in_here`, typing `message` over the draft when given.
    async fn check_in_with(&self, expect_draft: Option<&str>, message: Option<&str>) {
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

    /// Waits until the image matching `css` is decoded; answers its size.
    async fn decoded(&self, css: &str, what: &str) -> (u64, u64) {
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
    async fn dismiss_notices(&self) {
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
    async fn click_in_panel(&self, css: &str, what: &str) {
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
    async fn press(&self, key: &str) {
        self.wait_for("body", "the page")
            .await
            .send_keys(key)
            .await
            .unwrap();
    }

    /// The CLI's `--json` answer, as `who`.
    fn cli_json(&self, who: &str, args: &[&str]) -> serde_json::Value {
        let mut command = Command::new(tool("LEASEDESK_BIN"));
        command
            .arg("--data")
            .arg(&self.store)
            .args(["--as", &format!("user:{who}"), "--json"]);
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
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// A screenshot for the README too (`docs/screenshots/NAME.png`) when
    /// `LEASEDESK_SCREENSHOTS=update`, so a plain test run changes no tracked file.
    async fn readme_screenshot(&self, name: &str) {
        self.screenshot(name).await;
        if std::env::var("LEASEDESK_SCREENSHOTS").as_deref() == Ok("update") {
            let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join(format!("{name}.png")), self.png().await).unwrap();
        }
    }

    async fn click(&self, id: &str) {
        self.click_css(&format!("#{id}"), id).await;
    }

    /// Clicks the element, finding it again if the window redrew it meanwhile.
    async fn click_css(&self, css: &str, what: &str) {
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

    async fn invoke(&self, command: &str, args: serde_json::Value) -> serde_json::Value {
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
fn xwd_to_rgb(xwd: &[u8]) -> image::RgbImage {
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

fn run_cli(args: &[&str]) {
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
fn save_atomically(path: &Path, data: &[u8]) {
    let temp = path.with_extension("saving~");
    std::fs::write(&temp, data).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

fn writable(path: &Path) -> bool {
    !std::fs::metadata(path).unwrap().permissions().readonly()
}

async fn scenarios(kind: Backend) {
    let _one = ONE_APP.lock().await;
    let w = World::start(kind).await;
    let path = "brand/hero.psd";
    let row = World::row(path);
    let local = w.workspace.join(path);

    // Add a file, through the command the Add button and a drop both use.
    let incoming = w._home.path().join("incoming/hero.psd");
    std::fs::create_dir_all(incoming.parent().unwrap()).unwrap();
    std::fs::write(&incoming, b"poster v1").unwrap();
    let added = w
        .invoke(
            "add_files",
            json!({ "paths": [incoming], "folder": "brand" }),
        )
        .await;
    assert!(added[0]["artifact"]["id"].is_string(), "added: {added}");
    w.wait_until(
        &format!("{row} .local"),
        "the new file, up to date",
        Duration::from_secs(10),
        |t| t == "Up to date",
    )
    .await;
    assert!(!writable(&local), "a file you do not hold is read-only");
    w.screenshot("01-added").await;

    // Check it out: the copy becomes writable; the row shows you and a countdown.
    w.open_row(path).await;
    w.client
        .find(Locator::Css("#checkout-note"))
        .await
        .unwrap()
        .send_keys("retouching the sky")
        .await
        .unwrap();
    w.check_out_here(&row).await;
    w.wait_until(
        &format!("{row} .countdown"),
        "a countdown",
        Duration::from_secs(5),
        |t| t.ends_with("min"),
    )
    .await;
    assert!(writable(&local), "a checked-out copy is writable");
    if kind == Backend::Bundled {
        readable_at_double_size(&w).await;
    }
    w.screenshot("02-checked-out").await;

    // Save the way applications do: "Modified" within 2 seconds.
    let saved = Instant::now();
    save_atomically(&local, b"poster v2 by alice");
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(2),
        |t| t == "Modified",
    )
    .await;
    let shown_after = saved.elapsed();
    assert!(
        shown_after < Duration::from_secs(2),
        "modified shown after {shown_after:?}"
    );
    w.screenshot("03-modified").await;

    // Check in: version 2, read-only again.
    w.check_in_here(None).await;
    w.wait_until(
        &format!("{row} .version"),
        "version 2",
        Duration::from_secs(10),
        |t| t == "v2",
    )
    .await;
    w.wait_until(".notice", "the outcome", Duration::from_secs(5), |t| {
        t.contains("committed as version 2")
    })
    .await;
    w.wait_until(
        &format!("{row} .holder"),
        "the file free",
        Duration::from_secs(5),
        |t| t == "Free",
    )
    .await;
    assert!(!writable(&local), "read-only after check-in");
    w.screenshot("04-checked-in").await;

    // Bob checks out through the CLI: the row names him, with his note.
    w.cli("bob", &["checkout", path, "--note", "print crop"]);
    w.wait_until(
        &format!("{row} .holder"),
        "bob as the holder",
        Duration::from_secs(10),
        |t| t.contains("bob") && t.contains("print crop"),
    )
    .await;
    w.screenshot("05-bob-holds-it").await;

    // Alice's attempt says who holds it, until when, and offers to notify her.
    w.open_row(path).await;
    w.wait_until(".busy", "who holds it", Duration::from_secs(5), |t| {
        t.contains("bob has it until")
    })
    .await;
    w.click("action-checkout").await;
    w.wait_until(
        ".notice.error",
        "the refusal",
        Duration::from_secs(5),
        |t| t.contains("bob has it until") && t.contains("print crop"),
    )
    .await;
    w.screenshot("06-busy").await;
    w.cli("bob", &["cancel", path]);
    w.wait_until(
        &format!("{row} .holder"),
        "the file free again",
        Duration::from_secs(10),
        |t| t == "Free",
    )
    .await;

    // A stale check-in: alice's lease is broken, bob commits, alice checks in.
    w.open_row(path).await;
    w.check_out_here(&row).await;
    save_atomically(&local, b"poster v3 by alice, late");
    w.cli(
        "admin",
        &["break", path, "--reason", "bob needs it for print"],
    );
    w.wait_until(
        &format!("{row} .holder"),
        "the lost lease",
        Duration::from_secs(10),
        |t| t == "Your lease broken by admin",
    )
    .await;
    w.screenshot("07a-lease-broken").await;
    let bob_copy = w._home.path().join("bob-hero.psd");
    std::fs::write(&bob_copy, b"poster v3 by bob").unwrap();
    w.cli("bob", &["checkout", path]);
    w.cli("bob", &["checkin", path, bob_copy.to_str().unwrap()]);
    w.wait_until(
        &format!("{row} .version"),
        "bob's version 3",
        Duration::from_secs(10),
        |t| t == "v3",
    )
    .await;
    w.open_row(path).await;
    w.check_in_here(None).await;
    w.wait_until(".notice", "the proposal", Duration::from_secs(10), |t| {
        t.contains("became a proposal because bob committed version 3")
    })
    .await;
    assert_eq!(
        std::fs::read(&local).unwrap(),
        b"poster v3 by bob",
        "the head is in place"
    );
    let backups = backups(&local);
    assert_eq!(
        backups.len(),
        1,
        "alice's file is kept beside it: {backups:?}"
    );
    assert_eq!(
        std::fs::read(&backups[0]).unwrap(),
        b"poster v3 by alice, late"
    );
    w.click("tab-proposals").await;
    w.wait_until(
        "[data-proposal]",
        "the open proposal",
        Duration::from_secs(5),
        |t| t.contains("alice proposed"),
    )
    .await;
    w.screenshot("07-proposal").await;
    // To compare in other tools, her own file: the backup beside the head's.
    w.click_css("[data-save-beside]", "Save beside the head")
        .await;
    w.wait_until(
        ".notice",
        "the file to compare",
        Duration::from_secs(10),
        |t| t.contains("Ready to compare") && t.contains("hero (my changes "),
    )
    .await;
    w.click("tab-files").await;

    // Cancel keeps the changes in a backup and puts the head back.
    std::fs::remove_file(&backups[0]).unwrap();
    w.open_row(path).await;
    w.check_out_here(&row).await;
    save_atomically(&local, b"an experiment to throw away");
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(3),
        |t| t == "Modified",
    )
    .await;
    w.click("action-cancel").await;
    w.wait_until(".notice", "the backup", Duration::from_secs(10), |t| {
        t.contains("Your changes are kept as")
    })
    .await;
    let backups = self::backups(&local);
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(
        std::fs::read(&backups[0]).unwrap(),
        b"an experiment to throw away"
    );
    assert_eq!(std::fs::read(&local).unwrap(), b"poster v3 by bob");
    assert!(!writable(&local));
    w.screenshot("08-cancelled-with-backup").await;

    // A file alice checked out elsewhere (the CLI) and never had here: not
    // "Missing" but not on this computer, and one click brings her copy to
    // edit, leaving the lease as it was.
    let elsewhere = "brand/cover.psd";
    let cover_row = World::row(elsewhere);
    let cover = w._home.path().join("cover.psd");
    std::fs::write(&cover, b"cover v1").unwrap();
    w.cli("bob", &["import", elsewhere, cover.to_str().unwrap()]);
    w.cli("alice", &["checkout", elsewhere]);
    w.wait_until(
        &format!("{cover_row} .local"),
        "a held file that is not here",
        Duration::from_secs(10),
        |t| t == "Not on this computer",
    )
    .await;
    let lease_before = lease_ends(&w).await[elsewhere];
    w.open_row(elsewhere).await;
    w.click("action-get-copy").await;
    w.wait_until(
        &format!("{cover_row} .local"),
        "her copy, here",
        Duration::from_secs(10),
        |t| t == "Up to date",
    )
    .await;
    let local_cover = w.workspace.join(elsewhere);
    assert_eq!(std::fs::read(&local_cover).unwrap(), b"cover v1");
    assert!(writable(&local_cover), "her copy to edit");
    assert_eq!(lease_ends(&w).await[elsewhere], lease_before);
    w.screenshot("08b-got-a-copy-to-edit").await;
    w.cli("alice", &["cancel", elsewhere]);

    if kind == Backend::Bundled {
        reminders(&w).await;
        closing_keeps_the_app_in_the_tray(&w).await;
    } else {
        switching_stores_in_settings(&w, &local).await;
        w.client.clone().close().await.unwrap();
    }
}

/// Settings: the remote store is shown as set up; switching to the store on
/// this computer and back loses no local file; a wrong token is refused in
/// the dialog; the right one goes to the keychain and never to a file.
async fn switching_stores_in_settings(w: &World, local: &Path) {
    let server = w.server.as_ref().unwrap();
    let files_before: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    // In the open dialog: a closed one keeps its old fields until redrawn.
    let field =
        |id: &'static str| async move { w.wait_for(&format!("#settings[open] #{id}"), id).await };
    let value = |id: &'static str| async move {
        field(id)
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default()
    };

    w.click("open-settings").await;
    assert_eq!(value("settings-backend").await, "remote");
    assert_eq!(value("settings-url").await, server.url);
    assert_eq!(
        field("settings-token")
            .await
            .attr("placeholder")
            .await
            .unwrap()
            .as_deref(),
        Some("stored in your keychain")
    );

    // To the store on this computer: the server's files leave the list, the
    // workspace keeps every byte.
    field("settings-backend")
        .await
        .select_by_value("bundled")
        .await
        .unwrap();
    w.click("settings-save").await;
    let started = Instant::now();
    while !w
        .client
        .find_all(Locator::Css(&World::row("brand/hero.psd")))
        .await
        .unwrap()
        .is_empty()
        || !w
            .client
            .find_all(Locator::Css("dialog[open]"))
            .await
            .unwrap()
            .is_empty()
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the switch to the bundled store"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for (path, bytes) in &files_before {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} changed",
            path.display()
        );
    }

    // Back to the server, first with a wrong token: refused in the dialog.
    w.click("open-settings").await;
    field("settings-backend")
        .await
        .select_by_value("remote")
        .await
        .unwrap();
    field("settings-token")
        .await
        .send_keys("not-a-token")
        .await
        .unwrap();
    w.click("settings-save").await;
    w.wait_until(
        "#settings [role=status]",
        "the refusal",
        Duration::from_secs(10),
        |t| t == "The server did not accept this token.",
    )
    .await;
    w.screenshot("09-settings-wrong-token").await;
    assert_eq!(
        leasedesk_app::keychain::read(&server.url)
            .unwrap()
            .as_deref(),
        Some(server.tokens["alice"].as_str()),
        "a refused token replaced the keychain's"
    );

    let token = &server.tokens["alice"];
    field("settings-token").await.clear().await.unwrap();
    field("settings-token")
        .await
        .send_keys(token)
        .await
        .unwrap();
    w.click("settings-save").await;
    w.wait_for(&World::row("brand/hero.psd"), "the server's files again")
        .await;
    assert_eq!(
        leasedesk_app::keychain::read(&server.url)
            .unwrap()
            .as_deref(),
        Some(token.as_str())
    );
    let settings_file =
        std::fs::read_to_string(w._home.path().join("config/settings.json")).unwrap();
    assert!(settings_file.contains("\"remote\""), "{settings_file}");
    assert!(!settings_file.contains(token.as_str()) && !settings_file.contains("not-a-token"));
    for (path, bytes) in &files_before {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} changed",
            path.display()
        );
    }
}

/// At 200% (Ctrl+= as the zoom keys do, or a 2x display) everything still
/// fits the window: nothing runs off its right edge, the file's row and its
/// actions stay on screen.
async fn readable_at_double_size(w: &World) {
    let zoomed = w
        .invoke("plugin:webview|set_webview_zoom", json!({ "value": 2.0 }))
        .await;
    assert!(zoomed.get("failed").is_none(), "zoom: {zoomed}");
    let overflow = || async {
        w.client
            .execute(
                "const width = document.documentElement.clientWidth;
                 const out = [...document.querySelectorAll('header *, .tabs *, .row, .detail .actions button')]
                   .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > width + 1)
                   .map((e) => e.id || e.className || e.tagName);
                 const row = document.querySelector('.row.selected');
                 const box = row && row.getBoundingClientRect();
                 const seen = box && row.contains(document.elementFromPoint(box.left + 20, box.top + box.height / 2));
                 return { width, scroll: document.documentElement.scrollWidth, out, rowInSight: !!seen, rowText: row && row.innerText };",
                vec![],
            )
            .await
            .unwrap()
    };
    let started = Instant::now();
    loop {
        let layout = overflow().await;
        if layout["width"].as_f64().unwrap() < 600.0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no zoom: {layout}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await; // a frame or two at the new size
    let layout = overflow().await;
    w.screenshot("02b-at-200-percent").await;
    assert!(
        layout["out"].as_array().unwrap().is_empty()
            && layout["scroll"].as_f64() <= layout["width"].as_f64(),
        "at 200% these run off the window: {layout}"
    );
    assert_eq!(
        layout["rowInSight"], true,
        "at 200% the open file's row is hidden: {layout}"
    );
    // What is rendered, not only in the page: name, folder, holder, time
    // left, and the state of the copy on this computer.
    let shown = layout["rowText"].as_str().unwrap_or_default();
    for part in ["hero.psd", "brand", "You", "min", "Up to date"] {
        assert!(
            shown.contains(part),
            "at 200% the row shows {shown:?}, without {part:?}"
        );
    }
    w.invoke("plugin:webview|set_webview_zoom", json!({ "value": 1.0 }))
        .await;
}

/// Ctrl+W closes the window to the tray: the app runs on without WebKit's
/// web process, and launching it again brings a new window.
async fn closing_keeps_the_app_in_the_tray(w: &World) {
    let app = oldest_app_process().expect("the app is running");
    assert!(
        web_process_of(app).is_some(),
        "the open window has a web process"
    );
    let body = w.wait_for("body", "the page").await;
    // WebDriver answers "no such window": the window closed under the keys.
    let _ = body.send_keys("\u{E009}w").await;
    let started = Instant::now();
    while web_process_of(app).is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the closed window's web process is still running"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        Path::new(&format!("/proc/{app}")).exists(),
        "the app ended when its window closed"
    );

    // A second launch gives way to the first, which opens its window again.
    let second = Command::new(env!("CARGO_BIN_EXE_leasedesk-app"))
        .env("LEASEDESK_APP_HOME", w._home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut second = Killed(second);
    let started = Instant::now();
    while web_process_of(app).is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "launching again did not open the first app's window"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = second.0.wait().unwrap();
    assert!(status.success(), "the second instance: {status}");
    assert_eq!(oldest_app_process(), Some(app), "one app, the first");
}

fn oldest_app_process() -> Option<u32> {
    let out = Command::new("pgrep")
        .args(["-o", "-f", env!("CARGO_BIN_EXE_leasedesk-app")])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The WebKit web process the app started, if one runs.
fn web_process_of(app: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{app}/task")).ok()?;
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .find(|child| {
            std::fs::read_to_string(format!("/proc/{child}/cmdline"))
                .is_ok_and(|cmd| cmd.contains("WebKitWebProcess"))
        })
}

fn backups(local: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("(my changes ")
        })
        .collect();
    found.sort();
    found
}

/// The desktop's notification service: dunst, a real one, on the test's
/// session bus and X display. `dunstctl action 0` clicks a notification's
/// only button.
fn start_notification_service() -> Killed {
    let dunst = Command::new("dunst")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dunst: `cargo xtask test` installs it");
    let started = Instant::now();
    while !dunstctl(&["count"]).0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "dunst did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Killed(dunst)
}

fn dunstctl(args: &[&str]) -> (bool, String) {
    let out = Command::new("dunstctl").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    )
}

/// When each of your open check-outs ends, from the app's own overview.
async fn lease_ends(w: &World) -> std::collections::HashMap<String, chrono::DateTime<chrono::Utc>> {
    let overview = w.invoke("overview", json!({})).await;
    overview["checkouts"]
        .as_array()
        .unwrap_or_else(|| panic!("an overview: {overview}"))
        .iter()
        .map(|c| {
            let ends = c["expires_at"].as_str().unwrap().parse().unwrap();
            (c["path"].as_str().unwrap().to_owned(), ends)
        })
        .collect()
}

/// Two leases of yours end within 5 minutes: one is extended from the
/// desktop notification's Extend button, the other from the window's. Nothing
/// else extends them.
async fn reminders(w: &World) {
    let _dunst = start_notification_service();
    // Earlier steps' notices may have started it already (D-Bus activation).
    assert!(dunstctl(&["close-all"]).0);
    let (near, far) = ("art/near.psd", "art/far.psd");
    let source = w._home.path().join("source.psd");
    std::fs::write(&source, b"layers").unwrap();
    for path in [near, far] {
        w.cli("alice", &["import", path, source.to_str().unwrap()]);
        // Shorter than 5 minutes: the last call comes at once, with what is left.
        w.cli("alice", &["checkout", path, "--ttl", "4m"]);
    }
    let first = lease_ends(w).await;
    assert_eq!(first.len(), 2, "{first:?}");

    // The reminders arrive within one tick (20 s) as desktop notifications.
    let started = Instant::now();
    while dunstctl(&["count", "displayed"]).1 != "2" {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "two reminders on the desktop; dunst shows {}",
            dunstctl(&["count", "displayed"]).1
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let soon = chrono::Utc::now() + chrono::TimeDelta::minutes(30);
    assert!(
        lease_ends(w).await.values().all(|ends| *ends < soon),
        "a reminder alone extends nothing"
    );

    // The user clicks Extend on one notification.
    assert!(dunstctl(&["action", "0"]).0);
    let started = Instant::now();
    let extended = loop {
        let ends = lease_ends(w).await;
        if let Some((path, _)) = ends.iter().find(|(_, ends)| **ends > soon) {
            break path.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "Extend on the notification extended nothing: {ends:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    // And the other from the window's notice.
    let other = if extended == near { far } else { near };
    let name = other.rsplit('/').next().unwrap();
    let notice = w
        .wait_until(
            ".notice",
            "the other reminder",
            Duration::from_secs(5),
            |t| {
                ["3 min", "4 min"]
                    .iter()
                    .any(|left| t.contains(&format!("{name}: your lease ends in {left}")))
            },
        )
        .await;
    w.screenshot("09-reminder-with-extend").await;
    notice
        .find(Locator::XPath(".//button[text()='Extend']"))
        .await
        .expect("an Extend button on the reminder")
        .click()
        .await
        .unwrap();
    let started = Instant::now();
    while !lease_ends(w).await.values().all(|ends| *ends > soon) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "Extend in the window extended nothing"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_on_the_bundled_backend() {
    tokio::time::timeout(SCENARIO_LIMIT, scenarios(Backend::Bundled))
        .await
        .expect("the scenarios within 5 minutes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_on_a_team_server() {
    tokio::time::timeout(SCENARIO_LIMIT, scenarios(Backend::Remote))
        .await
        .expect("the scenarios within 5 minutes");
}

/// A poster 320 × 200: a sky with a sun at `sun_x`, as PNG bytes.
fn poster(sun_x: u32) -> Vec<u8> {
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

/// Waits until `path` holds `bytes`.
async fn until_holds(path: &Path, bytes: &[u8], what: &str) {
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
fn newest_message(w: &World, path: &str) -> serde_json::Value {
    let answer = w.cli_json("bob", &["versions", path]);
    let versions = answer.get("versions").unwrap_or(&answer);
    versions[0]["message"].clone()
}

/// Opens the compare view's difference (key 4) and answers what it says of
/// the two images, once both are decoded and the difference is worked out.
async fn difference_said(w: &World) -> String {
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
            |t| t == "identical" || t.ends_with("of pixels differ"),
        )
        .await;
    share.prop("textContent").await.unwrap().unwrap_or_default()
}

/// Seeing the work: thumbnails in the list, a check-in that asks for a
/// description (stored, read back from the store), the history with a copy
/// of an old version opened and that version restored, two versions and a
/// proposal compared in the window.
async fn seeing_the_work() {
    let _one = ONE_APP.lock().await;
    let w = World::start(Backend::Bundled).await;
    let path = "art/poster.png";
    let row = World::row(path);
    let local = w.workspace.join(path);
    let (v1, v2) = (poster(80), poster(240));
    let incoming = w._home.path().join("poster.png");
    std::fs::write(&incoming, &v1).unwrap();
    w.cli("bob", &["import", path, incoming.to_str().unwrap()]);

    // The list shows the file's thumbnail, decoded.
    let (width, _) = w
        .decoded(&format!("{row} .thumb img"), "the row's thumbnail")
        .await;
    assert!(
        width > 0 && width <= 72,
        "a thumbnail, not the image: {width} px"
    );

    // Check out with a note, save a change: the detail previews the local
    // copy and says it is modified.
    w.open_row(path).await;
    w.client
        .find(Locator::Css("#checkout-note"))
        .await
        .unwrap()
        .send_keys("moving the sun")
        .await
        .unwrap();
    w.check_out_here(&row).await;
    save_atomically(&local, &v2);
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(3),
        |t| t == "Modified",
    )
    .await;
    w.wait_until(
        "#detail-preview figcaption",
        "the local copy's preview",
        Duration::from_secs(5),
        |t| t.contains("modified"),
    )
    .await;
    w.decoded("#detail-preview img", "the local copy's preview")
        .await;

    // Check in: asked for a description, offered the note; stored as typed.
    w.check_in_with(Some("moving the sun"), Some("The sun moves to the right"))
        .await;
    w.wait_until(
        &format!("{row} .version"),
        "version 2",
        Duration::from_secs(10),
        |t| t == "v2",
    )
    .await;
    assert_eq!(
        newest_message(&w, path),
        json!("The sun moves to the right")
    );

    // The history, newest first, with thumbnails and the description.
    let version = |n: u32| format!("#history [data-kind=version][data-version=\"{n}\"]");
    w.wait_until(
        &version(2),
        "version 2 in the history",
        Duration::from_secs(10),
        |t| t.contains("The sun moves to the right"),
    )
    .await;
    w.wait_for(&version(1), "version 1 in the history").await;
    w.decoded(
        &format!("{} .thumb img", version(1)),
        "version 1's thumbnail",
    )
    .await;
    w.wait_until(
        "#history [data-kind=checkout] .ending",
        "how the check-out ended",
        Duration::from_secs(5),
        |t| t == "checked in as version 2",
    )
    .await;
    // The README's picture shows the history itself, not what covers it.
    w.dismiss_notices().await;
    w.client
        .execute(
            "document.querySelector('#history').scrollIntoView({ block: 'start' });",
            vec![],
        )
        .await
        .unwrap();
    w.readme_screenshot("history").await;

    // Open a copy of version 1: beside the file, read-only, its bytes.
    w.dismiss_notices().await;
    w.click_css("[data-open-copy=\"1\"]", "Open a copy of version 1")
        .await;
    let copy = local.with_file_name("poster (v1).png");
    until_holds(&copy, &v1, "the copy of version 1").await;
    assert!(!writable(&copy), "an opened copy is read-only");

    // Restore version 1 while holding the check-out, over a change of
    // yours: the copy has version 1's bytes, the change is kept beside it,
    // and the check-in offers "Restored version 1".
    w.check_out_here(&row).await;
    let change = poster(200);
    save_atomically(&local, &change);
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(3),
        |t| t == "Modified",
    )
    .await;
    w.dismiss_notices().await;
    w.click_in_panel("[data-restore=\"1\"]", "Restore version 1")
        .await;
    until_holds(&local, &v1, "the restored copy").await;
    let kept: Vec<PathBuf> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read(p).ok().as_deref() == Some(&change[..]))
        .collect();
    assert_eq!(kept.len(), 1, "the change is kept beside: {kept:?}");
    w.check_in_here(Some("Restored version 1")).await;
    w.wait_until(
        &format!("{row} .version"),
        "version 3",
        Duration::from_secs(10),
        |t| t == "v3",
    )
    .await;
    assert_eq!(newest_message(&w, path), json!("Restored version 1"));

    // Compare two versions: 1 and 3 are the same picture, 1 and 2 are not.
    w.wait_for(&version(3), "version 3 in the history").await;
    let pick = |n: u32| format!("#history [data-pick=\"{n}\"]");
    w.dismiss_notices().await;
    w.click_css(&pick(1), "pick version 1").await;
    w.click_css(&pick(3), "pick version 3").await;
    w.click("history-compare").await;
    assert_eq!(difference_said(&w).await, "identical");
    w.click("compare-close").await;
    w.click_css(&pick(3), "unpick version 3").await;
    w.click_css(&pick(2), "pick version 2").await;
    w.click("history-compare").await;
    let said = difference_said(&w).await;
    assert!(
        said != "identical" && said.ends_with("% of pixels differ"),
        "{said}"
    );
    w.click("compare-close").await;

    // A proposal against the head, compared in the window.
    w.check_out_here(&row).await;
    save_atomically(&local, &poster(160));
    w.cli("admin", &["break", path, "--reason", "print deadline"]);
    w.wait_until(
        &format!("{row} .holder"),
        "the lost lease",
        Duration::from_secs(10),
        |t| t == "Your lease broken by admin",
    )
    .await;
    let bob_copy = w._home.path().join("bob-poster.png");
    std::fs::write(&bob_copy, poster(300)).unwrap();
    w.cli("bob", &["checkout", path]);
    w.cli("bob", &["checkin", path, bob_copy.to_str().unwrap()]);
    w.wait_until(
        &format!("{row} .version"),
        "bob's version 4",
        Duration::from_secs(10),
        |t| t == "v4",
    )
    .await;
    w.open_row(path).await;
    w.check_in_here(None).await;
    w.wait_until(".notice", "the proposal", Duration::from_secs(10), |t| {
        t.contains("became a proposal")
    })
    .await;
    w.click("tab-proposals").await;
    w.dismiss_notices().await;
    w.click_css("[data-compare]", "Compare with the head").await;
    w.press("1").await;
    w.readme_screenshot("compare").await;
    let said = difference_said(&w).await;
    assert!(
        said != "identical" && said.ends_with("% of pixels differ"),
        "{said}"
    );
    w.readme_screenshot("compare-difference").await;
    w.click("compare-close").await;
    w.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_shows_the_work() {
    tokio::time::timeout(SCENARIO_LIMIT, seeing_the_work())
        .await
        .expect("the scenario within 5 minutes");
}

/// The server killed under the app: the view stays, marked offline; the
/// checked-out copy stays writable and a save still shows; a check-in is
/// refused with why and sent nowhere. The server back on the same port, the
/// mark goes by itself, and the check-in, pressed again, lands.
async fn offline_and_back(w: &mut World) {
    let path = "brand/hero.psd";
    let row = World::row(path);
    let local = w.workspace.join(path);
    let incoming = w._home.path().join("incoming/hero.psd");
    std::fs::create_dir_all(incoming.parent().unwrap()).unwrap();
    std::fs::write(&incoming, b"poster v1").unwrap();
    let added = w
        .invoke(
            "add_files",
            json!({ "paths": [incoming], "folder": "brand" }),
        )
        .await;
    assert!(added[0]["artifact"]["id"].is_string(), "added: {added}");
    w.open_row(path).await;
    w.check_out_here(&row).await;
    let url = w.server.as_ref().unwrap().url.clone();
    w.wait_until(
        "#server",
        "the server in use",
        Duration::from_secs(5),
        |t| t == format!("Server: {}", url.trim_start_matches("http://")),
    )
    .await;
    assert!(writable(&local), "a checked-out copy is writable");

    w.server.as_mut().unwrap().kill();
    w.wait_until(
        "#offline:not([hidden])",
        "the offline mark",
        Duration::from_secs(15),
        |t| {
            t.starts_with("Offline since ")
                && t.contains("Reconnecting…")
                && t.contains("stay writable")
        },
    )
    .await;
    w.wait_until(
        &format!("{row} .holder"),
        "the check-out, still shown",
        Duration::from_secs(2),
        |t| t.starts_with("You"),
    )
    .await;
    save_atomically(&local, b"poster v2, drawn offline");
    w.wait_until(
        &format!("{row} .local"),
        "the save, shown offline",
        Duration::from_secs(10),
        |t| t == "Modified",
    )
    .await;
    w.screenshot("offline-01-marked").await;

    w.dismiss_notices().await;
    w.check_in_here(None).await;
    w.wait_until(
        ".notice.error",
        "the check-in's refusal",
        Duration::from_secs(15),
        |t| t.starts_with("Offline since ") && t.contains("check-in was not sent"),
    )
    .await;
    assert!(
        writable(&local),
        "offline, the checked-out copy stays writable"
    );
    assert_eq!(std::fs::read(&local).unwrap(), b"poster v2, drawn offline");
    w.screenshot("offline-02-refused").await;

    w.server.as_mut().unwrap().restart();
    w.wait_for("#offline[hidden]", "the mark gone, by itself")
        .await;
    // Nothing was sent meanwhile: the server's head is still version 1.
    w.wait_until(
        &format!("{row} .version"),
        "still version 1",
        Duration::from_secs(5),
        |t| t == "v1",
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let files = w.invoke("overview", json!({})).await;
    assert_eq!(
        files["files"][0]["artifact"]["head"]["version"],
        json!(1),
        "no check-in was sent in the background: {files}"
    );
    assert!(files["offline_since"].is_null(), "{files}");
    w.dismiss_notices().await;
    w.check_in_here(None).await;
    w.wait_until(
        &format!("{row} .version"),
        "version 2, pressed again",
        Duration::from_secs(10),
        |t| t == "v2",
    )
    .await;
    assert!(!writable(&local), "read-only after check-in");
    w.screenshot("offline-03-back").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_offline_keeps_its_view_and_reconnects_by_itself() {
    let _one = ONE_APP.lock().await;
    let mut w = World::start(Backend::Remote).await;
    tokio::time::timeout(SCENARIO_LIMIT, offline_and_back(&mut w))
        .await
        .expect("offline and back within 5 minutes");
}

/// A self-signed certificate for 127.0.0.1 into `cert` and `key` (each
/// written beside and renamed, as a renewal would); its SHA-256 as
/// `openssl x509 -fingerprint` says it ("AB:CD:…").
fn self_signed(cert: &Path, key: &Path, name: &str) -> String {
    let (new_cert, new_key) = (cert.with_extension("new"), key.with_extension("new"));
    let out = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={name}/O=Studio")])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&new_key)
        .arg("-out")
        .arg(&new_cert)
        .output()
        .expect("openssl (Debian's openssl package)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(new_key, key).unwrap();
    std::fs::rename(new_cert, cert).unwrap();
    let out = Command::new("openssl")
        .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
        .arg(cert)
        .output()
        .unwrap();
    let said = String::from_utf8(out.stdout).unwrap();
    said.trim().rsplit('=').next().unwrap().to_uppercase()
}

/// A studio's self-signed server: Settings show its fingerprint and subject;
/// trusted, it is pinned in the settings file and the files show. The
/// certificate replaced (SIGHUP), the app started again refuses it with the
/// changed-certificate message, and Settings look again and show the new one.
async fn trusting_a_self_signed_server(home: tempfile::TempDir) {
    let tls = home.path().join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let (cert, key) = (tls.join("cert.pem"), tls.join("key.pem"));
    let first = self_signed(&cert, &key, "files.studio.lan");
    let data = home.path().join("server");
    let server = start_server_with(
        &data,
        vec![
            "--tls-cert".into(),
            cert.clone().into(),
            "--tls-key".into(),
            key.clone().into(),
        ],
    );
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let source = home.path().join("hero.psd");
    std::fs::write(&source, b"poster v1").unwrap();
    run_cli(&[
        "--data",
        data.to_str().unwrap(),
        "--as",
        "user:alice",
        "import",
        "brand/hero.psd",
        source.to_str().unwrap(),
    ]);
    let settings_file = home.path().join("config/settings.json");
    let mut w = World::start_in(home, Backend::Remote, Some(server)).await;

    w.wait_until(
        ".notice.error",
        "the refused certificate",
        Duration::from_secs(15),
        |t| t.starts_with("The server's certificate is not trusted"),
    )
    .await;
    w.click("open-settings").await;
    w.wait_until(
        "#settings-fingerprint",
        "the certificate's fingerprint",
        Duration::from_secs(15),
        |t| t == first,
    )
    .await;
    w.wait_until(
        "#settings-subject",
        "its subject",
        Duration::from_secs(2),
        |t| t.contains("CN=files.studio.lan"),
    )
    .await;
    w.screenshot("tls-01-untrusted").await;
    w.click("settings-trust").await;
    w.wait_for(&World::row("brand/hero.psd"), "the server's files, trusted")
        .await;
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&settings_file).unwrap()).unwrap();
    assert_eq!(
        saved["pinned_sha256"],
        json!(first.replace(':', "").to_lowercase()),
        "the pin is in the settings file: {saved}"
    );
    let token = &w.server.as_ref().unwrap().tokens["alice"];
    assert!(
        !std::fs::read_to_string(&settings_file)
            .unwrap()
            .contains(token.as_str()),
        "the token stays in the keychain"
    );
    w.screenshot("tls-02-trusted").await;

    // A new certificate, loaded by SIGHUP: the pin refuses it.
    let second = self_signed(&cert, &key, "files.studio.lan");
    assert_ne!(first, second);
    let pid = w.server.as_ref().unwrap().process.as_ref().unwrap().0.id();
    let hup = Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    tokio::time::sleep(Duration::from_millis(500)).await;
    w.relaunch().await;
    w.wait_until(
        ".notice.error",
        "the changed certificate",
        Duration::from_secs(15),
        |t| t.starts_with("The server's certificate changed"),
    )
    .await;
    w.click("open-settings").await;
    w.wait_until(
        "#settings [role=status]",
        "why, in Settings",
        Duration::from_secs(10),
        |t| {
            t.starts_with("The server's certificate changed")
                && t.contains(&first.replace(':', "").to_lowercase())
        },
    )
    .await;
    w.click("settings-look-again").await;
    w.wait_until(
        "#settings-fingerprint",
        "the new certificate's fingerprint",
        Duration::from_secs(15),
        |t| t == second,
    )
    .await;
    w.screenshot("tls-03-changed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_trusts_a_self_signed_server_by_its_fingerprint() {
    let _one = ONE_APP.lock().await;
    let home = tempfile::tempdir().unwrap();
    tokio::time::timeout(SCENARIO_LIMIT, trusting_a_self_signed_server(home))
        .await
        .expect("within 5 minutes");
}

/// Several servers in Settings, the first not answering: the app works
/// through the next, and its header names that one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_names_the_server_it_moved_to() {
    let _one = ONE_APP.lock().await;
    let w = World::start(Backend::Remote).await;
    let server = w.server.as_ref().unwrap();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let servers = format!("{dead}, {}", server.url);
    let view = w
        .invoke(
            "save_settings",
            json!({
                "settings": {
                    "backend": "remote",
                    "server_url": servers,
                    "pinned_sha256": null,
                    "workspace": w.workspace,
                    "display_name": "alice",
                },
                "token": server.tokens["alice"],
            }),
        )
        .await;
    assert!(view["session_error"].is_null(), "{view}");
    let overview = w.invoke("overview", json!({})).await;
    assert_eq!(overview["server"], json!(server.url), "{overview}");
    // The window's reload after the save, not the header drawn before it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let url = server.url.clone();
    w.wait_until(
        "#server",
        "the server moved to",
        Duration::from_secs(15),
        |t| t == format!("Server: {}", url.trim_start_matches("http://")),
    )
    .await;
    w.screenshot("several-servers").await;
}

//! The desktop app's figures (issue: desktop app). Run by `cargo xtask bench`
//! under Xvfb with `TAURI_DRIVER` and `LEASEDESK_APP_BIN` (a release build)
//! set. Prints Markdown rows.
//!
//! - `startup-hash`: a workspace of 100 checked-out files totalling 20 GiB
//!   (sparse files: the hashing is the work, not the disk) is opened twice;
//!   the second start must hash nothing.
//! - `window`: launch to file list, idle memory of all the app's processes,
//!   scrolling 10,000 files, and a save on disk to "modified" on screen.
//! - `compare`: two 4096 px versions of one image in the compare view:
//!   switching between its four modes, and the difference worked out once.
//!
//! - `app-million`: a team server of a million files (see `app/million.rs`).
//!
//! `--quick` uses small sizes; `--only startup-hash|window|compare|app-million` runs one
//! part, `--only scroll` the scrolling of `window` alone, `--only editor` a
//! plugin's check-out through the local API.

#[path = "app/editor.rs"]
mod editor;
#[path = "../../benches/common/figures.rs"]
mod figures;
#[path = "../tests/window/group.rs"]
#[allow(dead_code)] // the bench kills its groups its own way, by kill_group
mod group;
#[path = "app/million.rs"]
mod million;
#[path = "../tests/window/on_this_bus.rs"]
mod on_this_bus;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use figures::{row, value};
use group::kill_group;
use leasedesk::clock::Clock;
use leasedesk::model::RepoPath;
use leasedesk::workspace::Workspace;
use leasedesk::{Backend, Bundled, Upload};
use serde_json::json;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[((values.len() - 1) as f64 * p).round() as usize]
}

/// The row of a launch figure: the median of `launches` (in seconds), each
/// one beside it, against the 1 s target.
fn launch_row(figure: &str, launches: &[f64]) {
    let ms = median(launches.to_vec()) * 1000.0;
    row(
        figure,
        format!(
            "**{ms:.0} ms** (each: {})",
            launches
                .iter()
                .map(|s| format!("{:.0}", s * 1000.0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "under 1 s",
        value(ms, "ms"),
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let runs = |part: &str| only.as_deref().is_none_or(|o| o == part);
    println!("| figure | measured | target |\n|---|---|---|");
    let work = tempfile::tempdir().unwrap();
    if runs("startup-hash") {
        startup_hash(work.path(), quick);
    }
    if runs("window") {
        window(work.path(), quick).await;
    }
    if only.as_deref() == Some("scroll") {
        // The scroll of `window` alone, as a change to the list is tried.
        let home = work.path().join("scroll");
        let count = if quick { 2000 } else { 10_000 };
        seed(&home, count, true).await;
        scroll(&home, count).await;
    }
    if runs("compare") {
        compare(work.path(), quick).await;
    }
    if runs("app-million") {
        million::million(work.path(), quick).await;
    }
    if runs("editor") {
        editor::editor(work.path()).await;
    }
}

/// A `side` px square of coloured noise from `seed`, as PNG: noise, so no
/// encoder shortcut makes the image cheaper than a real one.
fn noise_png(side: u32, seed: u32) -> Vec<u8> {
    let mut state = seed.wrapping_mul(2_654_435_761) | 1;
    let image = image::RgbaImage::from_fn(side, side, |x, y| {
        // A gradient with a little noise: about what a photograph compresses to.
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let grain = (state & 15) as u8;
        image::Rgba([
            (x * 255 / side) as u8 ^ grain,
            (y * 255 / side) as u8,
            ((seed * 40) as u8).wrapping_add(grain),
            255,
        ])
    });
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// Two versions of a 4096 px image compared in the window: how long until
/// the difference is shown the first time (decoding both, working it out),
/// and then how long each switch of mode takes to reach the screen (from
/// the key to the second frame after it), every mode in turn.
async fn compare(work: &Path, quick: bool) {
    let home = work.join("compare");
    let store = seed(&home, 0, false).await;
    let side = if quick { 1024 } else { 4096 };
    let path: RepoPath = "art/matte.png".parse().unwrap();
    // Version 1 and 2: the same size, every pixel another.
    let version = |seed| Upload::stream(std::io::Cursor::new(noise_png(side, seed)));
    let artifact = store.import(&path, version(1)).await.unwrap();
    let checkout = store.check_out(artifact.id, Default::default()).await;
    store
        .check_in(checkout.unwrap().id, version(2))
        .await
        .unwrap();
    let (client, _driver, _) = launch(&home).await;
    click(&client, &format!(".row[data-path=\"{path}\"]")).await;
    click(&client, "#history [data-pick=\"1\"]").await;
    click(&client, "#history [data-pick=\"2\"]").await;
    click(&client, "#history-compare").await;
    let first = client
        .execute_async(
            "const done = arguments[0];
             const started = performance.now();
             (function wait() {
               const share = document.getElementById('compare-share');
               if (share && share.dataset.changed) done({ ms: performance.now() - started, said: share.textContent });
               else setTimeout(wait, 5);
             })();",
            vec![],
        )
        .await
        .unwrap();
    let switches = client
        .execute_async(
            "const done = arguments[0];
             const keys = ['2', '3', '4', '1'];
             const times = [];
             let round = 0;
             function next() {
               const key = keys[round % keys.length];
               const started = performance.now();
               document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
               requestAnimationFrame(() => requestAnimationFrame(() => {
                 times.push(performance.now() - started);
                 if (++round < 40) setTimeout(next, 30); else done(times);
               }));
             }
             next();",
            vec![],
        )
        .await
        .unwrap();
    let times: Vec<f64> = serde_json::from_value(switches).unwrap();
    let opened = first["ms"].as_f64().unwrap_or(f64::NAN);
    row(
        &format!("compare view, two {side} px versions: from opening to the difference shown (fetch, decode, diff once)"),
        format!("{opened:.0} ms ({})", first["said"].as_str().unwrap_or("?")),
        "",
        value(opened, "ms"),
    );
    let slowest = times.iter().cloned().fold(0.0, f64::max);
    row(
        &format!("compare view, two {side} px versions: switching mode (key to the second frame after it; 40 switches through all four)"),
        format!(
            "median **{:.1} ms**, slowest {slowest:.1} ms",
            median(times.clone()),
        ),
        "under 100 ms",
        value(median(times), "ms").and("slowest", slowest, "ms"),
    );
    let _ = client.close().await;
}

/// 100 checked-out files totalling 20 GiB: the first start hashes them all,
/// the next one (sizes and mtimes unchanged) none.
fn startup_hash(work: &Path, quick: bool) {
    let (files, each): (u64, u64) = if quick {
        (100, 2 << 20)
    } else {
        (100, (20 << 30) / 100)
    };
    let root = work.join("hash/files");
    let state = work.join("hash/state");
    std::fs::create_dir_all(&root).unwrap();
    let paths: Vec<RepoPath> = (0..files)
        .map(|i| format!("shots/shot-{i:03}.blend").parse().unwrap())
        .collect();
    std::fs::create_dir_all(root.join("shots")).unwrap();
    for path in &paths {
        let file = std::fs::File::create(root.join(path.as_str())).unwrap();
        file.set_len(each).unwrap();
    }
    let open = || Workspace::open(&root, &state, Clock::system()).unwrap();
    let first = open();
    let started = Instant::now();
    for path in &paths {
        first.digest(path).unwrap();
    }
    let cold = started.elapsed();
    let hashed_cold = first.files_hashed();
    drop(first);
    let second = open();
    let started = Instant::now();
    for path in &paths {
        second.digest(path).unwrap();
    }
    let warm = started.elapsed();
    let total = files * each;
    row(
        &format!(
            "start-up over {files} checked-out files, {:.0} GiB in all: first start (nothing cached)",
            total as f64 / (1u64 << 30) as f64
        ),
        format!("{hashed_cold} files hashed in {:.1} s", cold.as_secs_f64()),
        "",
        value(cold.as_secs_f64(), "s").and("files hashed", hashed_cold as f64, "files"),
    );
    row(
        "the next start (sizes and mtimes unchanged)",
        format!(
            "**{} files hashed**, {:.1} ms",
            second.files_hashed(),
            warm.as_secs_f64() * 1000.0
        ),
        "hashes nothing",
        value(second.files_hashed() as f64, "files hashed").and(
            "time",
            warm.as_secs_f64() * 1000.0,
            "ms",
        ),
    );
}

fn tool(var: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{var} is not set: run through `cargo xtask bench`"))
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        kill_group(&mut self.0);
        // Closing the window only hides the app (it lives on in the tray):
        // ours is ended by its id, never another session's by its name.
        for pid in app_processes() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Launches the release app on `home` through tauri-driver; the session, the
/// driver, and how long the window took to show the file list.
async fn launch(home: &Path) -> (Client, Killed, Duration) {
    use std::os::unix::process::CommandExt;
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (port, native) = (free(), free());
    let driver = Command::new(tool("TAURI_DRIVER"))
        .args(["--port", &port.to_string()])
        .args(["--native-port", &native.to_string()])
        .env("LEASEDESK_APP_HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let driver = Killed(driver);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("browserName".into(), json!("wry"));
    capabilities.insert(
        "tauri:options".into(),
        json!({ "application": tool("LEASEDESK_APP_BIN") }),
    );
    let mut builder = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
    builder.capabilities(capabilities);
    // tauri-driver may take a moment after its port opens to take sessions.
    let address = format!("http://127.0.0.1:{port}");
    let mut attempts = 0;
    let (client, started) = loop {
        let started = Instant::now();
        match builder.connect(&address).await {
            Ok(client) => break (client, started),
            Err(e) if attempts < 10 => {
                attempts += 1;
                let _ = e;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Err(e) => panic!("no WebDriver session: {e}"),
        }
    };
    loop {
        if client
            .find(Locator::Css("body[data-ready=true] .row"))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (client, driver, started.elapsed())
}

/// Clicks `css` once the window shows it (finding it again if redrawn).
async fn click(client: &Client, css: &str) {
    let started = Instant::now();
    loop {
        if let Ok(element) = client.find(Locator::Css(css)).await {
            if element.click().await.is_ok() {
                return;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{css} never clickable"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A process and all its descendants.
fn process_tree(root: u32) -> Vec<u32> {
    let mut tree = Vec::new();
    let mut pending = vec![root];
    while let Some(pid) = pending.pop() {
        tree.push(pid);
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
            pending.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    tree
}

/// Proportional memory (PSS) of a process and all its descendants.
fn tree_memory(root: u32) -> u64 {
    process_tree(root)
        .into_iter()
        .map(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("Pss:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                })
                .unwrap_or(0)
                * 1024
        })
        .sum()
}

/// The processes of the app the bench launches (a release build by `cargo
/// xtask bench`) on this session bus, oldest first: the bench's own, never an
/// app that a test or a developer runs in another session.
fn app_processes() -> Vec<u32> {
    let app = std::env::var("LEASEDESK_APP_BIN").unwrap_or_else(|_| "release/leasedesk-app".into());
    on_this_bus::processes_on_this_bus(&app)
}

fn app_pid() -> Option<u32> {
    app_processes().last().copied()
}

/// What a bare WebKitGTK window costs on this machine, if its MiniBrowser
/// is installed: the floor under any window of ours.
async fn blank_webkit_window_memory() -> Option<f64> {
    use std::os::unix::process::CommandExt;
    let browser = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
    let child = Command::new(browser)
        .args(["--geometry=1120x740", "about:blank"])
        .env("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let child = Killed(child);
    tokio::time::sleep(Duration::from_secs(5)).await;
    Some(tree_memory(child.0.id()) as f64)
}

/// A bundled store of `count` files under `home`, as the app finds it; with
/// `images`, each a small PNG of its own (so every row has a thumbnail to load).
async fn seed(home: &Path, count: usize, images: bool) -> Bundled {
    let store = Bundled::open(&home.join("data/store"))
        .unwrap()
        .acting_as("user:alice".parse().unwrap());
    for i in 0..count {
        let (extension, bytes) = if images {
            ("png", noise_png(48, i as u32 + 1))
        } else {
            ("psd", format!("asset {i}").into_bytes())
        };
        let path: RepoPath = format!("project/folder-{:02}/asset-{i:05}.{extension}", i % 40)
            .parse()
            .unwrap();
        store
            .import(&path, Upload::stream(std::io::Cursor::new(bytes)))
            .await
            .unwrap();
    }
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(
        home.join("config/settings.json"),
        json!({ "backend": "bundled", "workspace": home.join("Leasedesk"), "display_name": "alice" }).to_string(),
    )
    .unwrap();
    store
}

async fn window(work: &Path, quick: bool) {
    // Launch to list, and idle memory, on a store of ten files.
    let small = work.join("window-small");
    seed(&small, 10, false).await;
    let mut launches = Vec::new();
    let (mut open, mut in_tray) = (Vec::new(), Vec::new());
    for _ in 0..if quick { 2 } else { 5 } {
        let (client, driver, took) = launch(&small).await;
        launches.push(took.as_secs_f64());
        tokio::time::sleep(Duration::from_secs(5)).await;
        let pid = app_pid().expect("the app is running");
        open.push(tree_memory(pid) as f64);
        // Ctrl+W closes the window to the tray, as a designer leaves it all day.
        if let Ok(body) = client.find(Locator::Css("body")).await {
            let _ = body.send_keys("\u{E009}w").await;
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "the app ended when its window closed"
        );
        in_tray.push(tree_memory(pid) as f64);
        let _ = client.close().await;
        drop(driver);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    launch_row(
        "release build: from launch to the window showing the file list (through WebDriver, median)",
        &launches,
    );
    let mib = |values: Vec<f64>| median(values) / 1048576.0;
    let (in_tray, open) = (mib(in_tray), mib(open));
    row(
        "idle memory of all the app's processes, window closed to the tray (PSS, median, 5 s after Ctrl+W)",
        format!("**{in_tray:.0} MiB**"),
        "under 150 MiB",
        value(in_tray, "MiB"),
    );
    let blank = blank_webkit_window_memory().await.map(|b| b / 1048576.0);
    let blank_name = "for scale: WebKitGTK's own MiniBrowser showing about:blank, same window size and renderer (PSS, 5 s after start)";
    let mut open_data = value(open, "MiB");
    if let Some(blank) = blank {
        open_data = open_data.against(blank_name, blank, "MiB");
    }
    row(
        "idle memory of all the app's processes, window open (app, WebKit web and network processes; PSS, median, 5 s after the list shows)",
        format!("**{open:.0} MiB**"),
        "under 150 MiB",
        open_data,
    );
    if let Some(blank) = blank {
        row(
            blank_name,
            format!("{blank:.0} MiB"),
            "",
            value(blank, "MiB"),
        );
    }

    // 10,000 files: launch, scroll smoothness, rows in the page.
    let big = work.join("window-big");
    let count = if quick { 2000 } else { 10_000 };
    seed(&big, count, true).await;
    scroll(&big, count).await;

    // A save on disk to "modified" on screen.
    let target: RepoPath = "project/folder-00/asset-00000.png".parse().unwrap();
    let (client, _driver, _) = launch(&big).await;
    client
        .find(Locator::Css("#filter"))
        .await
        .unwrap()
        .send_keys("asset-00000")
        .await
        .unwrap();
    let target_row = format!(".row[data-path=\"{target}\"]");
    click(&client, &target_row).await;
    click(&client, "#action-checkout").await;
    let local = big.join("Leasedesk").join(target.as_str());
    let started = Instant::now();
    while !std::fs::metadata(&local).is_ok_and(|m| !m.permissions().readonly()) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the check-out made no writable copy"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let selector = format!(".row[data-path=\"{target}\"] .local");
    let state = |client: &Client| {
        let (client, selector) = (client.clone(), selector.clone());
        async move {
            match client.find(Locator::Css(&selector)).await {
                Ok(e) => e
                    .prop("textContent")
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or_default(),
                Err(_) => String::new(),
            }
        }
    };
    let mut latencies = Vec::new();
    for round in 0..if quick { 3 } else { 10 } {
        // Alternate between the head's bytes and a change, so each save flips the state.
        let (bytes, expect) = if round % 2 == 0 {
            (format!("changed {round}").into_bytes(), "Modified")
        } else {
            (noise_png(48, 1), "Up to date")
        };
        tokio::time::sleep(Duration::from_millis(600)).await;
        let temp = local.with_extension("saving~");
        std::fs::write(&temp, bytes).unwrap();
        let saved = Instant::now();
        std::fs::rename(&temp, &local).unwrap();
        while state(&client).await != expect {
            assert!(
                saved.elapsed() < Duration::from_secs(5),
                "no {expect} within 5 s"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        latencies.push(saved.elapsed().as_secs_f64());
    }
    row(
        "from a save on disk (temp file renamed over it) to the row's new state on screen",
        format!(
            "median **{:.0} ms**, slowest {:.0} ms ({} saves)",
            median(latencies.clone()) * 1000.0,
            latencies.iter().cloned().fold(0.0, f64::max) * 1000.0,
            latencies.len()
        ),
        "under 1 s",
        value(median(latencies.clone()) * 1000.0, "ms").and(
            "slowest",
            latencies.iter().cloned().fold(0.0, f64::max) * 1000.0,
            "ms",
        ),
    );
    let _ = client.close().await;
}

/// The list of `count` files in `home` scrolled while its thumbnails load:
/// launch, then the frame times of 180 frames that each scroll 240 px,
/// against 60 frames with nothing to do.
async fn scroll(home: &Path, count: usize) {
    let (client, _driver, took) = launch(home).await;
    row(
        &format!("the same with {count} files"),
        format!("{:.0} ms", took.as_secs_f64() * 1000.0),
        "",
        value(took.as_secs_f64() * 1000.0, "ms"),
    );
    let frames = client
        .execute_async(
            "const done = arguments[0];
             const list = document.getElementById('file-list');
             const times = [];
             let last = performance.now();
             const idle = [];
             let frame = 0;
             function still(now) {
               idle.push(now - last); last = now;
               if (++frame < 60) requestAnimationFrame(still);
               else { frame = 0; requestAnimationFrame(step); }
             }
             function step(now) {
               times.push(now - last); last = now;
               list.scrollTop += 240;
               if (++frame < 180) requestAnimationFrame(step);
               else {
                 // Thumbnails shown in the rows in view: now, and a second later.
                 const inView = () => {
                   const box = list.getBoundingClientRect();
                   return [...list.querySelectorAll('.row')].filter((r) => {
                     const b = r.getBoundingClientRect();
                     return b.bottom > box.top && b.top < box.bottom;
                   });
                 };
                 const shown = () => inView().filter((r) => {
                   const i = r.querySelector('.thumb img');
                   return i && i.complete && i.naturalWidth > 0;
                 }).length;
                 const thumbs = shown();
                 setTimeout(() => done({ times: times.slice(1), idle: idle.slice(1), rows: list.querySelectorAll('.row').length,
                                         thumbs, inView: inView().length, later: shown() }), 1000);
               }
             }
             requestAnimationFrame(still);",
            vec![],
        )
        .await
        .unwrap();
    let numbers = |key: &str| -> Vec<f64> {
        frames[key]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.as_f64())
            .collect()
    };
    let (idle, times) = (numbers("idle"), numbers("times"));
    let (idle, p95) = (median(idle), percentile(times.clone(), 0.95));
    let frame = median(times.clone());
    row(
        &format!("scrolling the {count}-file list while thumbnails load, 240 px per frame for 180 frames"),
        format!(
            "frame time median {frame:.1} ms, **p95 {p95:.1} ms = {:.2}× the idle frame** ({idle:.1} ms, the median of 60 frames with nothing to do); {} rows in the page; of the {} rows in view, {} show their thumbnail at the end, {} a second later",
            p95 / idle,
            frames["rows"],
            frames["inView"],
            frames["thumbs"],
            frames["later"]
        ),
        "p95 ≤ 1.2× the idle frame; only visible rows rendered",
        value(p95, "ms")
            .against("the idle frame (median of 60 frames with nothing to do)", idle, "ms")
            .and("median", frame, "ms"),
    );
    let _ = client.close().await;
    drop(_driver);
}

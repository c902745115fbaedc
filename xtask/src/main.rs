//! `cargo xtask run | test | bundle | cli-demo | seed-demo | bench | fuzz`: the tasks cargo alone
//! cannot express. Each installs what it needs (Debian packages, npm packages).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{bail, Context, Result};

mod bench_windows;
mod demo;
mod installer;
mod macos;
mod windows;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let result = match task {
        "run" => run(),
        "test" => test(),
        "test-windows" => windows::test().map(|(passed, failed)| {
            println!("\ntests on Windows, under Wine: {passed} passed, {failed} failed")
        }),
        "bundle" => bundle(),
        "cli-demo" => cli_demo(),
        "seed-demo" => seed_demo_into(&args[1..]),
        "bench" => bench(&args[1..]),
        "fuzz" => fuzz(&args[1..]),
        "check-macos" => macos::check_macos(),
        "types" => ui_types(&root().join(GENERATED_TYPES)).map(|_| ()),
        _ => {
            eprintln!(
                "usage: cargo xtask run | test | test-windows | bundle | cli-demo | seed-demo DIR | types | bench [--quick] [--only PART] | fuzz [SECONDS [TARGET]]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {task}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// What a cold build of the workspace and its test tools writes under target/
/// (measured on a clean clone: 2.9 GiB), with room to spare.
const COLD_BUILD_BYTES: u64 = 4 << 30;

/// Says so up front when the disk under target/ is nearly full: a build that
/// fills it dies in the linker with a bare "Bus error", far from the cause.
fn warn_if_disk_is_low() {
    let dir = target_dir();
    let probe = if dir.exists() { dir } else { root() };
    let Ok(out) = Command::new("df").args(["-Pk"]).arg(&probe).output() else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // POSIX format: the second line's fourth field is the space available, in KiB.
    let available = text
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib * 1024);
    if let Some(bytes) = available.filter(|&bytes| bytes < COLD_BUILD_BYTES) {
        eprintln!(
            "warning: only {:.1} GiB free on the disk that holds {}; a cold build needs about {} GiB, \
             and one that fills the disk fails in the linker with \"Bus error\"",
            bytes as f64 / f64::from(1 << 30),
            probe.display(),
            COLD_BUILD_BYTES >> 30,
        );
    }
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Runs a command, echoing it, and fails if it fails.
fn check(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// Whether xtask runs as root (then apt-get needs no sudo, and Wine runs as
/// an ordinary user of its own).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// Adds a target's standard library to this toolchain, if it lacks it.
fn ensure_target(target: &str) -> Result<()> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .context("rustup lists the installed targets")?;
    if !String::from_utf8_lossy(&installed.stdout)
        .lines()
        .any(|line| line.trim() == target)
    {
        check(Command::new("rustup").args(["target", "add", target]))?;
    }
    Ok(())
}

/// Adds the toolchain components the checks use, if this toolchain lacks them.
fn ensure_components() -> Result<()> {
    let has = |sub: &str| {
        cargo()
            .args([sub, "--version"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("fmt") || !has("clippy") {
        check(Command::new("rustup").args(["component", "add", "rustfmt", "clippy"]))?;
    }
    Ok(())
}

/// Debian packages the desktop app builds and runs with (Tauri on Linux).
const APP_PACKAGES: &[&str] = &[
    "pkg-config",
    "libwebkit2gtk-4.1-dev",
    "libgtk-3-dev",
    "libayatana-appindicator3-dev",
    "librsvg2-dev",
];

/// What the tests add: a virtual display, WebKit's WebDriver, a session bus
/// and a keyring daemon for the keychain test.
const TEST_PACKAGES: &[&str] = &[
    "xvfb",
    "xauth",
    "webkit2gtk-driver",
    "dbus-daemon",
    "gnome-keyring",
    // A real notification service, whose buttons the tests can click.
    "dunst",
    // Reads the X clipboard, where the app's "Copy path" puts the path.
    "xclip",
    // Drag a file from a GTK window (as from a file manager) onto the app's.
    "xdotool",
    "python3-gi",
    "gir1.2-gtk-3.0",
    // Writes the .blend files (with their thumbnails) the preview tests read.
    "blender",
    // Writes the CMYK and grey test images with embedded profiles, and shows
    // them through those profiles (Little CMS) for the previews to match:
    // ghostscript's SWOP CMYK profile (libgs-common) and a grey one.
    "imagemagick",
    "libgs-common",
    "icc-profiles-free",
    // The team server's store in the contract suite's third configuration.
    "postgresql-15",
    // Makes the CAs and certificates of the TLS tests.
    "openssl",
    // etcd-client (a dev-dependency, the team bench's baseline) builds its
    // gRPC code with protoc (and its well-known types), and clippy
    // --all-targets builds the benches.
    "protobuf-compiler",
    "libprotobuf-dev",
];

/// Formatting, lints (warnings are errors) and every test: the UI's (Vitest),
/// then the workspace's under a virtual display with a session bus and an
/// unlocked keyring, so the keychain and the end-to-end tests run for real.
/// Closes with one line that counts the tests of every test binary.
fn test() -> Result<()> {
    warn_if_disk_is_low();
    ensure_components()?;
    let packages: Vec<&str> = APP_PACKAGES.iter().chain(TEST_PACKAGES).copied().collect();
    ensure_debian_packages(&packages)?;
    build_ui()?;
    check_ui_types()?;
    let (mut passed, mut failed) = ui_tests()?;
    check(cargo().args(["fmt", "--all", "--", "--check"]))?;
    check(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    let tauri_driver = ensure_tauri_driver()?;
    // A keyring of the tests' own, made fresh each run.
    let keyring_home = target_dir().join("test-keyring");
    let _ = std::fs::remove_dir_all(&keyring_home);
    std::fs::create_dir_all(&keyring_home)?;
    // Xvfb keeps its screen in a file there, which the end-to-end tests read
    // for their screenshots (WebDriver's sometimes never answers on a busy machine).
    let framebuffer = target_dir().join("xvfb-screen");
    std::fs::create_dir_all(&framebuffer)?;
    let mut cmd = Command::new("xvfb-run");
    cmd.current_dir(root())
        .args([
            "-a",
            "-s",
            &format!("-screen 0 1280x800x24 -fbdir {}", framebuffer.display()),
            "dbus-run-session",
            "--",
        ])
        .args([
            "sh",
            "-c",
            "printf leasedesk-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec \"$@\"",
            "with-keyring",
        ])
        .arg(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["test", "--workspace"])
        .env("XDG_DATA_HOME", &keyring_home)
        .env("TAURI_DRIVER", &tauri_driver)
        .env("LEASEDESK_BIN", target_dir().join("debug/leasedesk"))
        .env(
            "LEASEDESK_XVFB_FRAMEBUFFER",
            framebuffer.join("Xvfb_screen0"),
        )
        .stdout(Stdio::piped());
    eprintln!("$ {cmd:?}");
    let mut child = cmd.spawn().context("could not start cargo test")?;
    let (rust_passed, rust_failed, _) = echo_test_output(child.stdout.take().expect("piped"))?;
    passed += rust_passed;
    failed += rust_failed;
    let status = child.wait()?;
    if !status.success() {
        println!("\ntests: {passed} passed, {failed} failed");
        bail!("cargo test failed with {status}");
    }
    let (windows_passed, windows_failed) = windows::test()?;
    macos::check_macos()?;
    println!(
        "\ntests: {} passed, {} failed (of which on Windows, under Wine: {windows_passed} passed, {windows_failed} failed)",
        passed + windows_passed,
        failed + windows_failed
    );
    Ok(())
}

/// Where the UI's TypeScript types of the Rust ones are kept (committed).
const GENERATED_TYPES: &str = "ui/src/generated";

/// Writes the TypeScript types of the model's and the app's types (ts-rs's
/// `export_bindings` tests) into `dir`, emptied first; answers the files.
fn ui_types(dir: &Path) -> Result<Vec<String>> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    check(
        cargo()
            .args([
                "test",
                "--quiet",
                "-p",
                "leasedesk",
                "-p",
                "leasedesk-app",
                "--lib",
            ])
            .arg("export_bindings")
            .env("TS_RS_EXPORT_DIR", dir),
    )?;
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_>>()?;
    names.sort();
    Ok(names)
}

/// Fails when the committed TypeScript types are not what the Rust types
/// give now (a field added in Rust and not in the window, or the reverse).
fn check_ui_types() -> Result<()> {
    let fresh = target_dir().join("ui-types");
    let names = ui_types(&fresh)?;
    let committed = root().join(GENERATED_TYPES);
    let mut kept: Vec<String> = std::fs::read_dir(&committed)
        .with_context(|| format!("reading {}", committed.display()))?
        .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_>>()?;
    kept.sort();
    let mut stale: Vec<&String> = names
        .iter()
        .filter(|name| {
            std::fs::read(fresh.join(name)).ok() != std::fs::read(committed.join(name)).ok()
        })
        .collect();
    stale.extend(kept.iter().filter(|name| !names.contains(name)));
    if !stale.is_empty() {
        bail!(
            "{GENERATED_TYPES} is stale ({}): run `cargo xtask types` and commit the result",
            stale
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

/// The UI's unit tests (Vitest): their pass and fail counts.
fn ui_tests() -> Result<(u64, u64)> {
    let mut cmd = npm();
    cmd.args(["test", "--", "--reporter=dot"])
        .env("NO_COLOR", "1");
    eprintln!("$ {cmd:?}");
    let out = cmd.output().context("could not run the UI's tests")?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}{}", String::from_utf8_lossy(&out.stderr));
    // "      Tests  14 passed (14)" or "Tests  1 failed | 13 passed (14)"
    let words: Vec<&str> = text
        .lines()
        .find(|l| l.trim_start().starts_with("Tests "))
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let number_before = |label: &str| {
        words
            .windows(2)
            .find(|pair| pair[1] == label)
            .and_then(|pair| pair[0].parse::<u64>().ok())
            .unwrap_or(0)
    };
    let counts = (number_before("passed"), number_before("failed"));
    if !out.status.success() {
        bail!("the UI's tests failed ({} failed)", counts.1);
    }
    Ok(counts)
}

/// Echoes a test run's output; answers the pass and fail counts of its
/// summaries, and whether there was one.
fn echo_test_output(output: impl std::io::Read) -> Result<(u64, u64, bool)> {
    let (mut passed, mut failed, mut summed) = (0, 0, false);
    for line in BufReader::new(output).lines() {
        let line = line?;
        println!("{line}");
        if let Some(counts) = line.strip_prefix("test result: ") {
            passed += count_of(counts, "passed");
            failed += count_of(counts, "failed");
            summed = true;
        }
    }
    Ok((passed, failed, summed))
}

/// The number before `label` in a summary like "ok. 63 passed; 0 failed; ...".
fn count_of(summary: &str, label: &str) -> u64 {
    summary
        .split([';', '.'])
        .find_map(|part| part.trim().strip_suffix(label))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// A short demonstration of the CLI on a temporary data folder.
fn cli_demo() -> Result<()> {
    check(cargo().args(["build", "--quiet", "--bin", "leasedesk"]))?;
    let bin = target_dir().join("debug/leasedesk");
    let demo = std::env::temp_dir().join(format!("leasedesk-demo-{}", std::process::id()));
    std::fs::create_dir_all(&demo)?;
    let data = demo.join("data");
    let file = demo.join("hero.psd");
    std::fs::write(&file, b"a layered poster, version 1")?;
    let file = file.to_str().context("a UTF-8 temp path")?;

    let steps: &[(&str, &[&str])] = &[
        ("user:admin", &["user", "add", "admin", "--admin"]),
        ("user:alice", &["import", "brand/hero.psd", file]),
        (
            "user:alice",
            &[
                "checkout",
                "brand/hero.psd",
                "--note",
                "retouching the sky",
                "--ttl",
                "2h",
            ],
        ),
        ("user:bob", &["checkout", "brand/hero.psd"]),
        ("user:bob", &["who", "brand/hero.psd"]),
        ("user:alice", &["checkin", "brand/hero.psd", file]),
        (
            "user:bob",
            &["checkout", "brand/hero.psd", "--note", "print crop"],
        ),
        ("user:bob", &["ls"]),
        ("user:bob", &["cancel", "brand/hero.psd"]),
        ("user:bob", &["events"]),
    ];
    for (who, args) in steps {
        if args.first() == Some(&"checkin") {
            std::fs::write(file, b"a layered poster, version 2")?;
        }
        println!("\n$ leasedesk --as {who} {}", args.join(" "));
        let out = Command::new(&bin)
            .arg("--data")
            .arg(&data)
            .args(["--as", who])
            .args(*args)
            .output()?;
        print!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            println!("(exit code {})", out.status.code().unwrap_or(-1));
        }
    }
    println!(
        "\nThe data folder is {}. Try: {} --data {} --help",
        data.display(),
        bin.display(),
        data.display()
    );
    Ok(())
}

/// Installs what the app needs, builds it, and opens it on the bundled
/// backend with a sample workspace (kept in `target/demo-home`, seeded once
/// with a few files, one of them held by a colleague).
fn run() -> Result<()> {
    warn_if_disk_is_low();
    ensure_debian_packages(APP_PACKAGES)?;
    // The app's crate embeds ui/dist, so the types are made after a first
    // build of the window, which is then built again with them.
    build_ui()?;
    ui_types(&root().join(GENERATED_TYPES))?;
    build_ui()?;
    check(cargo().args(["build", "-p", "leasedesk", "--bin", "leasedesk"]))?;
    check(cargo().args(["build", "-p", "leasedesk-app"]))?;
    let home = target_dir().join("demo-home");
    let store = home.join("data/store");
    if !store.exists() {
        seed_demo(&home, &store)?;
    }
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        bail!(
            "no display: run this from a desktop session (or under `xvfb-run -a cargo xtask run` to try it headless)"
        );
    }
    eprintln!(
        "Leasedesk opens on the bundled backend; its workspace is {}",
        home.join("Leasedesk").display()
    );
    check(Command::new(target_dir().join("debug/leasedesk-app")).env("LEASEDESK_APP_HOME", &home))
}

/// `cargo xtask seed-demo DIR`: the demo's store and settings in DIR (a
/// fresh folder), without the app: to look at it with the CLI, or to run the
/// app on it with `LEASEDESK_APP_HOME=DIR`.
fn seed_demo_into(args: &[String]) -> Result<()> {
    let Some(home) = args.first().map(PathBuf::from) else {
        bail!("usage: cargo xtask seed-demo DIR");
    };
    if home.join("data/store").exists() {
        bail!("{} already holds a demo store", home.display());
    }
    check(cargo().args(["build", "-p", "leasedesk", "--bin", "leasedesk"]))?;
    seed_demo(&home, &home.join("data/store"))
}

/// A sample store: a design team's files with real images (made by
/// `demo`), each with a few described versions; one held by bob with a note;
/// and one open proposal of yours (your lease was broken, bob committed, and
/// your late check-in was kept against his version).
fn seed_demo(home: &Path, store: &Path) -> Result<()> {
    let cli = target_dir().join("debug/leasedesk");
    let incoming = home.join("incoming");
    std::fs::create_dir_all(&incoming)?;
    let name = std::env::var("USER").unwrap_or_else(|_| "me".into());
    let me = format!("user:{name}");
    let leasedesk = |who: &str, args: &[&str]| {
        check(
            Command::new(&cli)
                .arg("--data")
                .arg(store)
                .args(["--as", who])
                .args(args),
        )
    };
    let mut made = 0;
    let mut file = |bytes: Vec<u8>, path: &str| -> Result<String> {
        made += 1;
        let file = incoming.join(format!("{made}-{}", path.replace('/', "-")));
        std::fs::write(&file, bytes)?;
        Ok(file.to_str().context("UTF-8 path")?.to_owned())
    };
    leasedesk("user:admin", &["user", "add", "admin", "--admin"])?;
    type Make = fn(u32) -> Vec<u8>;
    let files: [(&str, &str, Make, &[&str]); 5] = [
        (
            "brand/hero.psd",
            "user:bob",
            |v| demo::psd(640, 400, v),
            &[
                "First layout: sky and sea",
                "Warmer sunset",
                "Sun raised for the title",
            ],
        ),
        (
            "brand/logo.svg",
            "user:carol",
            demo::svg,
            &["Logo sketch", "Brand blue, turned mark"],
        ),
        (
            "web/banner.png",
            &*me,
            |v| demo::png(720, 240, v),
            &["Banner for the launch page", "Evening colours"],
        ),
        (
            "scenes/shot-010.blend",
            "user:bob",
            |v| demo::blend(128, 96, v),
            &["Blocking of the night scene", "First light pass"],
        ),
        (
            "print/brochure.indd",
            &*me,
            |v| format!("sample InDesign file, version {v}\n").into_bytes(),
            &["Brochure, first draft"],
        ),
    ];
    for (path, who, make, messages) in files {
        let first = file(make(1), path)?;
        leasedesk(who, &["import", path, &first, "-m", messages[0]])?;
        for (n, message) in messages.iter().enumerate().skip(1) {
            leasedesk(who, &["checkout", path])?;
            let next = file(make(n as u32 + 1), path)?;
            leasedesk(who, &["checkin", path, &next, "-m", message])?;
        }
    }
    // The proposal: your check-out of the banner is broken for bob, who
    // commits; your check-in then is kept as a proposal against his version.
    let banner = "web/banner.png";
    leasedesk(&me, &["checkout", banner, "--note", "bolder type"])?;
    leasedesk(
        "user:admin",
        &[
            "break",
            banner,
            "--reason",
            "bob needs the banner for today's launch",
        ],
    )?;
    leasedesk("user:bob", &["checkout", banner])?;
    let bobs = file(demo::png(720, 240, 3), banner)?;
    leasedesk(
        "user:bob",
        &["checkin", banner, &bobs, "-m", "Launch date added"],
    )?;
    let yours = file(demo::png(720, 240, 4), banner)?;
    leasedesk(&me, &["checkin", banner, &yours, "-m", "Bolder colours"])?;
    leasedesk(
        "user:bob",
        &[
            "checkout",
            "scenes/shot-010.blend",
            "--note",
            "relighting the night scene",
            "--ttl",
            "3h",
        ],
    )?;
    std::fs::create_dir_all(home.join("config"))?;
    std::fs::write(
        home.join("config/settings.json"),
        format!(
            "{{\"backend\":\"bundled\",\"workspace\":{:?},\"display_name\":{name:?}}}",
            home.join("Leasedesk").to_string_lossy()
        ),
    )?;
    Ok(())
}

/// Builds an installable `.deb` of the app, offline: a release build laid out
/// with its desktop entry and icons, packed by `dpkg-deb`.
fn bundle() -> Result<()> {
    ensure_debian_packages(APP_PACKAGES)?;
    build_ui()?;
    check(cargo().args([
        "build",
        "--release",
        "-p",
        "leasedesk",
        "--bin",
        "leasedesk",
    ]))?;
    check(cargo().args(["build", "--release", "-p", "leasedesk-app"]))?;
    let version = env!("CARGO_PKG_VERSION");
    let stage = target_dir().join("bundle/leasedesk");
    let _ = std::fs::remove_dir_all(&stage);
    let bin = stage.join("usr/bin");
    std::fs::create_dir_all(&bin)?;
    std::fs::copy(
        target_dir().join("release/leasedesk-app"),
        bin.join("leasedesk-app"),
    )?;
    std::fs::copy(
        target_dir().join("release/leasedesk"),
        bin.join("leasedesk"),
    )?;
    // The release profile keeps line tables for profiling; a package does not need them.
    check(
        Command::new("strip")
            .arg("--strip-debug")
            .arg(bin.join("leasedesk-app"))
            .arg(bin.join("leasedesk")),
    )?;
    for (size, file) in [
        ("32x32", "32x32.png"),
        ("128x128", "128x128.png"),
        ("256x256", "128x128@2x.png"),
        ("512x512", "icon.png"),
    ] {
        let dir = stage.join(format!("usr/share/icons/hicolor/{size}/apps"));
        std::fs::create_dir_all(&dir)?;
        std::fs::copy(root().join("icons").join(file), dir.join("leasedesk.png"))?;
    }
    let applications = stage.join("usr/share/applications");
    std::fs::create_dir_all(&applications)?;
    std::fs::write(
        applications.join("leasedesk.desktop"),
        "[Desktop Entry]\nType=Application\nName=Leasedesk\nComment=Check files out, see who holds what, check in\nExec=leasedesk-app\nIcon=leasedesk\nCategories=Graphics;Office;\nStartupNotify=true\n",
    )?;
    let control = stage.join("DEBIAN");
    std::fs::create_dir_all(&control)?;
    std::fs::write(
        control.join("control"),
        format!(
            "Package: leasedesk\nVersion: {version}\nArchitecture: amd64\nMaintainer: Leasedesk <team@leasedesk.invalid>\nDepends: libwebkit2gtk-4.1-0, libgtk-3-0, libayatana-appindicator3-1\nSection: graphics\nPriority: optional\nDescription: One writer at a time for files that cannot be merged\n Check files out from the tray, see who holds what, check in by upload.\n"
        ),
    )?;
    let deb = target_dir().join(format!("bundle/leasedesk_{version}_amd64.deb"));
    check(
        Command::new("dpkg-deb")
            .args(["--build", "--root-owner-group"])
            .arg(&stage)
            .arg(&deb),
    )?;
    println!("{}", deb.display());
    // Windows: the installer and the CLI's zip, cross-built.
    for path in installer::bundle_windows("release")? {
        println!("{}", path.display());
    }
    Ok(())
}

fn npm() -> Command {
    let mut cmd = Command::new("npm");
    cmd.current_dir(root().join("ui"));
    cmd
}

/// Installs the UI's npm packages (as locked) when missing, and builds it into
/// `ui/dist`, which the app embeds.
fn build_ui() -> Result<()> {
    if Command::new("npm").arg("--version").output().is_err() {
        ensure_debian_packages(&["nodejs", "npm"])?;
    }
    if !root().join("ui/node_modules/.package-lock.json").exists() {
        check(npm().args(["ci", "--no-audit", "--no-fund"]))?;
    }
    check(npm().args(["run", "build"]))
}

/// `tauri-driver` (WebDriver for Tauri apps), installed into the target folder.
fn ensure_tauri_driver() -> Result<PathBuf> {
    let tools = target_dir().join("e2e-tools");
    let driver = tools.join("bin/tauri-driver");
    if !driver.exists() {
        check(
            cargo()
                .args(["install", "tauri-driver", "--locked", "--quiet", "--root"])
                .arg(&tools),
        )?;
    }
    Ok(driver)
}

/// Fuzzes TARGET (default each target in turn; `fuzz/`, cargo-fuzz on the
/// nightly toolchain) for SECONDS (default 300), then prints how many inputs ran. cargo-fuzz is
/// installed into `target/fuzz-tools`; a crash leaves its input in
/// `fuzz/artifacts/` and fails the task.
fn fuzz(args: &[String]) -> Result<()> {
    let seconds: u64 = match args.first() {
        Some(text) => text.parse().context("SECONDS must be a whole number")?,
        None => 300,
    };
    // `fuzz_targets/*.rs`: every one unless one is named.
    let targets: Vec<&str> = match args.get(1) {
        Some(named) => vec![named.as_str()],
        None => FUZZ_TARGETS.to_vec(),
    };
    let has_nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_nightly {
        check(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    let tools = target_dir().join("fuzz-tools");
    if !tools.join("bin/cargo-fuzz").exists() {
        check(
            cargo()
                .args(["install", "cargo-fuzz", "--locked", "--quiet", "--root"])
                .arg(&tools),
        )?;
    }
    let path = std::env::join_paths(std::iter::once(tools.join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))?;
    for target in targets {
        let mut cmd = Command::new("rustup");
        cmd.current_dir(root())
            .args(["run", "nightly", "cargo", "fuzz", "run", target]);
        // Committed seeds (`fuzz/seeds/TARGET`) start the search beside the
        // corpus the fuzzer grows (`fuzz/corpus/TARGET`, not committed).
        let seeds = root().join("fuzz/seeds").join(target);
        if seeds.is_dir() {
            let corpus = root().join("fuzz/corpus").join(target);
            std::fs::create_dir_all(&corpus)?;
            cmd.arg(corpus).arg(seeds);
        }
        cmd.arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg("-print_final_stats=1")
            .env("PATH", &path)
            .stderr(Stdio::piped());
        eprintln!("$ {cmd:?}");
        let mut child = cmd.spawn().context("could not start cargo fuzz")?;
        let mut runs = None;
        for line in BufReader::new(child.stderr.take().expect("piped")).lines() {
            let line = line?;
            eprintln!("{line}");
            // libFuzzer closes with "Done 1234567 runs in 300 second(s)".
            if let Some(rest) = line.strip_prefix("Done ") {
                runs = rest.split_whitespace().next().map(str::to_owned);
            }
        }
        let status = child.wait()?;
        if !status.success() {
            bail!("the fuzzer {target} failed ({status}): see fuzz/artifacts/");
        }
        println!(
            "fuzz {target}: {} inputs ran in {seconds} s, no failure",
            runs.as_deref().unwrap_or("?")
        );
    }
    Ok(())
}

/// The cargo-fuzz targets (`fuzz/fuzz_targets/`), each run for SECONDS.
const FUZZ_TARGETS: &[&str] = &[
    "request_parsers",
    "preview_readers",
    "preview_psd",
    "preview_psd_layers",
];

/// Installs the Debian packages that are not installed yet, in one go.
fn ensure_debian_packages(packages: &[&str]) -> Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|package| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", package])
                .output()
                .is_ok_and(|o| o.stdout.ends_with(b"install ok installed"))
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut install = vec!["install", "-y", "-q", "--no-install-recommends"];
    install.extend(&missing);
    check(&mut apt(&["update", "-q"]))?;
    check(&mut apt(&install))
}

/// `apt-get` as root, or through sudo.
fn apt(args: &[&str]) -> Command {
    let root = is_root();
    let mut cmd = Command::new(if root { "apt-get" } else { "sudo" });
    if !root {
        cmd.arg("apt-get");
    }
    cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    cmd
}

/// The `--only` parts of `src-tauri/benches/app.rs`.
const APP_BENCH_PARTS: &[&str] = &["startup-hash", "window", "compare"];

/// Builds in release mode and runs the benchmarks (`benches/lease.rs`,
/// `benches/server.rs`, `benches/preview.rs`, `benches/failover.rs`,
/// `benches/objects.rs`, `benches/team.rs`, `benches/stream.rs`,
/// `src-tauri/benches/app.rs`),
/// with `b3sum`, etcd, PostgreSQL and openssl
/// (installed here, for the comparisons only) beside them.
fn bench(args: &[String]) -> Result<()> {
    // The Windows figures (what Wine costs): the lease bench for Linux and
    // for Windows, side by side.
    if args.windows(2).any(|pair| pair == ["--only", "windows"]) {
        return bench_windows::bench_windows();
    }
    let tools = target_dir().join("bench-tools");
    let b3sum = tools.join("bin/b3sum");
    if !b3sum.exists() {
        check(
            cargo()
                .args(["install", "b3sum", "--locked", "--quiet", "--root"])
                .arg(&tools),
        )?;
    }
    // etcd is the baseline of the server's lease figures; the team figure
    // runs on a PostgreSQL of its own; etcd-client's build needs protoc.
    ensure_debian_packages(&[
        "etcd-server",
        "postgresql-15",
        "protobuf-compiler",
        "libprotobuf-dev",
        "openssl",
    ])?;
    check(cargo().args(["build", "--release", "--bin", "leasedesk"]))?;
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1));
    for bench in [
        "lease", "server", "preview", "failover", "objects", "team", "stream",
    ] {
        // failover.rs has no parts and reads no `--only`: `--only failover` or nothing runs it.
        if bench == "failover" && only.is_some_and(|part| part != "failover") {
            continue;
        }
        check(
            cargo()
                .args(["bench", "--bench", bench, "--"])
                .args(args)
                .env("LEASEDESK_BIN", target_dir().join("release/leasedesk"))
                .env("B3SUM", &b3sum),
        )?;
    }
    // The app's figures: a release build in a real window, under Xvfb; not
    // built when `--only` names a part of the benches above.
    if only.is_some_and(|part| !APP_BENCH_PARTS.contains(&part.as_str())) {
        return Ok(());
    }
    let packages: Vec<&str> = APP_PACKAGES.iter().chain(TEST_PACKAGES).copied().collect();
    ensure_debian_packages(&packages)?;
    build_ui()?;
    check(cargo().args(["build", "--release", "-p", "leasedesk-app"]))?;
    let tauri_driver = ensure_tauri_driver()?;
    check(
        Command::new("xvfb-run")
            .current_dir(root())
            .args([
                "-a",
                "-s",
                "-screen 0 1280x800x24",
                "dbus-run-session",
                "--",
            ])
            .arg(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["bench", "-p", "leasedesk-app", "--bench", "app", "--"])
            .args(args)
            .env("TAURI_DRIVER", tauri_driver)
            .env(
                "LEASEDESK_APP_BIN",
                target_dir().join("release/leasedesk-app"),
            ),
    )
}

//! `cargo xtask run | test | bundle | cli-demo | seed-demo | bench | fuzz`: the tasks cargo alone
//! cannot express. Each installs what it needs (Debian packages, npm packages).
//!
//! This file names the tasks and holds what every task runs on (the
//! workspace's folders, cargo, a checked command); each task lives in its own
//! module and never calls another task's entry point.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

mod bench;
mod bench_windows;
mod bundle;
mod demo;
mod fuzz;
mod installer;
mod layers;
mod macos;
mod packages;
mod results;
mod samples;
mod suite;
mod ui;
mod windows;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let result = match task {
        "run" => samples::run(),
        "test" => suite::test(),
        "test-windows" => windows::test().map(|(passed, failed)| {
            println!("\ntests on Windows, under Wine: {passed} passed, {failed} failed")
        }),
        "test-installer" => windows::test_installer()
            .map(|checks| println!("\nthe installer under Wine: {checks} checks passed")),
        "bundle" => bundle::bundle(),
        "cli-demo" => samples::cli_demo(),
        "seed-demo" => samples::seed_demo_into(&args[1..]),
        "bench" => bench::bench(&args[1..]),
        "fuzz" => fuzz::fuzz(&args[1..]),
        "check-macos" => macos::check_macos(),
        "layers" => layers::check(&root()),
        "types" => ui::ui_types(&root().join(ui::GENERATED_TYPES)).map(|_| ()),
        _ => {
            eprintln!(
                "usage: cargo xtask run | test | test-windows | test-installer | bundle | cli-demo | seed-demo DIR | types | bench [--quick] [--only PART] | fuzz [SECONDS [TARGET]]"
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

/// What a clean clone's `cargo xtask test` writes at its peak, under target/
/// and in the temp folder, with room to spare: its Linux legs left 6.3 GiB
/// under target/ (without incremental caches, as CI builds), and the
/// Windows leg and the macOS check add their own targets.
const COLD_TEST_BYTES: u64 = 16 << 30;

/// The space free on the disk that holds target/, in bytes (from `df`).
fn disk_free() -> Option<u64> {
    let dir = target_dir();
    let probe = if dir.exists() { dir } else { root() };
    let out = Command::new("df").args(["-Pk"]).arg(&probe).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // POSIX format: the second line's fourth field is the space available, in KiB.
    let kib: u64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Says how much disk is free, and warns up front when it is too little: a
/// build that fills the disk dies in the linker with a bare "Bus error", and
/// tests that fill it fail by the hundred, far from the cause.
fn warn_if_disk_is_low() {
    let Some(bytes) = disk_free() else { return };
    let gib = |bytes: u64| bytes as f64 / f64::from(1 << 30);
    eprintln!(
        "disk: {:.1} GiB free under {}",
        gib(bytes),
        target_dir().display()
    );
    if bytes < COLD_TEST_BYTES {
        eprintln!(
            "warning: a clean clone's build and tests need about {:.0} GiB; \
             with less, they may fail with \"No space left on device\" or \"Bus error\"",
            gib(COLD_TEST_BYTES),
        );
    }
}

/// The cargo that runs xtask (or the one on the PATH).
fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The CLI and the app as `cargo xtask run` runs them, each built for itself
/// (the app without the server's features). `cargo xtask test` builds them
/// the same way, so a run after a test builds nothing: a selection of its
/// own (`cargo build` of both at once, or the tests' build, which
/// dev-dependencies widen) would resolve other features and rebuild them.
fn build_binaries() -> Result<()> {
    check(cargo().args(["build", "-p", "leasedesk", "--bin", "leasedesk"]))?;
    check(cargo().args(["build", "-p", "leasedesk-app"]))
}

/// Every layer crate, the CLI's package and the app's (`-p NAME` each),
/// then `targets` (`--lib`, `--tests`, ...): what the Windows leg and the
/// macOS check build.
fn product_selection(targets: &[&str]) -> Vec<String> {
    let mut selection = layer_crates();
    selection.extend(["-p", "leasedesk", "-p", "leasedesk-app"].map(String::from));
    selection.extend(targets.iter().map(|t| t.to_string()));
    selection
}

/// `-p NAME` for each of our layer crates (`crates/NAME` is `leasedesk-NAME`).
fn layer_crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.path().join("Cargo.toml").is_file())
        .map(|entry| format!("leasedesk-{}", entry.file_name().to_string_lossy()))
        .collect();
    names.sort();
    names
        .into_iter()
        .flat_map(|name| ["-p".to_owned(), name])
        .collect()
}

fn cargo() -> Command {
    let mut cmd = Command::new(cargo_program());
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

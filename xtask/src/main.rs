//! `cargo xtask run | test | bench`: the tasks cargo alone cannot express.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{bail, Context, Result};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let result = match task {
        "run" => run(),
        "test" => test(),
        "bench" => bench(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask run | test | bench [--quick] [--only PART]");
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

/// Formatting, lints (warnings are errors) and every test, closing with one
/// line that counts the tests of every test binary.
fn test() -> Result<()> {
    ensure_components()?;
    check(cargo().args(["fmt", "--all", "--", "--check"]))?;
    check(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    let mut cmd = cargo();
    cmd.args(["test", "--workspace"]).stdout(Stdio::piped());
    eprintln!("$ {cmd:?}");
    let mut child = cmd.spawn().context("could not start cargo test")?;
    let (mut passed, mut failed) = (0u64, 0u64);
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line?;
        println!("{line}");
        if let Some(counts) = line.strip_prefix("test result: ") {
            passed += count_of(counts, "passed");
            failed += count_of(counts, "failed");
        }
    }
    let status = child.wait()?;
    println!("\ntests: {passed} passed, {failed} failed");
    if !status.success() {
        bail!("cargo test failed with {status}");
    }
    Ok(())
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
fn run() -> Result<()> {
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

/// Builds in release mode and runs the benchmark in `benches/lease.rs`, with
/// `b3sum` (installed here, for the comparison only) beside it.
fn bench(args: &[String]) -> Result<()> {
    let tools = target_dir().join("bench-tools");
    let b3sum = tools.join("bin/b3sum");
    if !b3sum.exists() {
        check(
            cargo()
                .args(["install", "b3sum", "--locked", "--quiet", "--root"])
                .arg(&tools),
        )?;
    }
    // etcd is the baseline of the server's lease figures.
    ensure_debian_package("etcd", "etcd-server")?;
    check(cargo().args(["build", "--release", "--bin", "leasedesk"]))?;
    for bench in ["lease", "server"] {
        check(
            cargo()
                .args(["bench", "--bench", bench, "--"])
                .args(args)
                .env("LEASEDESK_BIN", target_dir().join("release/leasedesk"))
                .env("B3SUM", &b3sum),
        )?;
    }
    Ok(())
}

/// Installs a Debian package if its command is missing (as root, or with sudo).
fn ensure_debian_package(command: &str, package: &str) -> Result<()> {
    let present = Command::new("sh")
        .args(["-c", &format!("command -v {command}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let apt = |args: &[&str]| {
        let mut cmd = Command::new(if root { "apt-get" } else { "sudo" });
        if !root {
            cmd.arg("apt-get");
        }
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    check(&mut apt(&["update", "-q"]))?;
    check(&mut apt(&["install", "-y", "-q", package]))
}

//! `cargo xtask run | test | bench`: the tasks cargo alone cannot express.
//! Each installs what it needs on a fresh Debian machine first.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let result = match task {
        "run" => run(),
        "test" => test(),
        "bench" => bench(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask run | test | bench [--quick]");
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

/// Installs Debian packages for the commands that are missing (as root, or
/// through sudo), so both README commands work on a fresh machine.
fn ensure_commands(needed: &[(&str, &str)]) -> Result<()> {
    let missing: Vec<&str> = needed
        .iter()
        .filter(|(command, _)| {
            !Command::new("sh")
                .args(["-c", &format!("command -v {command}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(|(_, package)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    let apt = |args: &[&str]| {
        let mut cmd = if root {
            Command::new("apt-get")
        } else {
            Command::new("sudo")
        };
        if !root {
            cmd.arg("apt-get");
        }
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    check(&mut apt(&["update", "-q"]))?;
    check(apt(&["install", "-y", "-q"]).args(&missing))
}

/// What building needs: a C compiler for the bundled SQLite.
fn ensure_build_tools() -> Result<()> {
    ensure_commands(&[("cc", "gcc"), ("make", "make")])
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

/// Formatting, lints (warnings are errors) and every test.
fn test() -> Result<()> {
    ensure_build_tools()?;
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
    check(cargo().args(["test", "--workspace"]))
}

/// A short demonstration of the CLI on a temporary data folder.
fn run() -> Result<()> {
    ensure_build_tools()?;
    check(cargo().args(["build", "--quiet", "--bin", "leasedesk"]))?;
    let bin = root().join("target/debug/leasedesk");
    let demo = std::env::temp_dir().join(format!("leasedesk-demo-{}", std::process::id()));
    std::fs::create_dir_all(&demo)?;
    let data = demo.join("data");
    let file = demo.join("hero.psd");
    std::fs::write(&file, b"a layered poster, version 1")?;
    let file = file.to_str().unwrap();

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
    let tools = root().join("target/bench-tools");
    let b3sum = tools.join("bin/b3sum");
    if !b3sum.exists() {
        check(
            cargo()
                .args(["install", "b3sum", "--locked", "--quiet", "--root"])
                .arg(&tools),
        )?;
    }
    check(cargo().args(["build", "--release", "--bin", "leasedesk"]))?;
    check(
        cargo()
            .args(["bench", "--bench", "lease", "--"])
            .args(args)
            .env("LEASEDESK_BIN", root().join("target/release/leasedesk"))
            .env("B3SUM", &b3sum),
    )
}

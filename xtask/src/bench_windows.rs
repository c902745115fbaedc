//! `cargo xtask bench --only windows`: what Wine costs. The lease bench
//! (`benches/lease.rs`) built in release mode for Linux and for Windows, and
//! two of its parts run by both in the same run: the bundled lease acquire +
//! release pairs, and a 256 MiB check-in beside `std::fs::copy` of the same
//! file. The Windows build runs under Wine, so its figures are Wine's on this
//! machine, not Windows'.

use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::packages::ensure_debian_packages;
use crate::windows::{self, Wine};
use crate::{cargo, check};

/// The big file's size: 256 MiB, as in the object-store check-in figures.
const BIG_MIB: &str = "256";

/// The two executables one build of the lease bench needs.
struct Build {
    bench: PathBuf,
    cli: PathBuf,
}

pub fn bench_windows() -> Result<()> {
    println!("load average at start: {}", load_average());
    windows::ensure_toolchain()?;
    // etcd-client, a dev-dependency of the Linux build, needs protoc.
    ensure_debian_packages(&["protobuf-compiler", "libprotobuf-dev"])?;
    let linux = build(None)?;
    let win = build(Some(windows::TARGET))?;

    // Its Drop ends the shared prefix's wineserver, and with it any Windows
    // tests running beside this bench: kept, never dropped.
    let wine = ManuallyDrop::new(Wine::prepare()?);
    let prefix = bench_prefix(&wine)?;
    let dir = wine.stage("bench", &[win.bench.clone(), win.cli.clone()])?;
    let under_wine = |args: &[&str]| {
        let bench = win.bench.file_name().expect("a file name");
        let mut cmd = wine.command(dir.join(bench));
        cmd.args(args)
            .env("WINEPREFIX", &prefix)
            .env(
                "LEASEDESK_BIN",
                Wine::windows_path(&dir.join("leasedesk.exe")),
            )
            .env("LEASEDESK_BENCH_TMP", Wine::windows_path(&dir));
        cmd
    };
    let on_linux = |args: &[&str]| {
        let mut cmd = Command::new(&linux.bench);
        cmd.args(args).env("LEASEDESK_BIN", &linux.cli);
        cmd
    };

    let pairs = ["--only", "pairs"];
    let big = ["--only", "big", "--big-mib", BIG_MIB];
    let linux_pairs = run(on_linux(&pairs))?;
    let wine_pairs = run(under_wine(&pairs))?;
    let linux_big = run(on_linux(&big))?;
    let wine_big = run(under_wine(&big))?;

    let rate = |out: &str| figure(out, "lease acquire + release pairs, bundled");
    let copy = |out: &str| figure(out, "std::fs::copy of");
    let checkin = |out: &str| figure(out, "check-in of the");
    let start = |out: &str| figure(out, "start and exit of the CLI");
    let (lr, wr) = (rate(&linux_pairs)?, rate(&wine_pairs)?);
    let (lc, wc) = (copy(&linux_big)?, copy(&wine_big)?);
    let (li, wi) = (checkin(&linux_big)?, checkin(&wine_big)?);
    let (ls, ws) = (start(&linux_big)?, start(&wine_big)?);

    println!();
    println!("| figure | Linux | Windows under Wine | Wine / Linux |");
    println!("|---|---|---|---|");
    println!(
        "| lease acquire + release pairs, bundled | {lr:.0} pairs/s | {wr:.0} pairs/s | {:.2}x the rate |",
        wr / lr
    );
    println!(
        "| `std::fs::copy` of a page-cached {BIG_MIB} MiB file (median of 7) | {lc:.3} s | {wc:.3} s | {:.2}x the time |",
        wc / lc
    );
    println!(
        "| check-in of that file (`leasedesk checkin`: hash while copying, fsync, commit) | {li:.3} s | {wi:.3} s | {:.2}x the time |",
        wi / li
    );
    println!(
        "| check-in / copy, each build's own | {:.2}x | {:.2}x | |",
        li / lc,
        wi / wc
    );
    println!(
        "| start and exit of the CLI (`leasedesk --version`), inside the check-in | {ls:.3} s | {ws:.3} s | {:.0}x the time |",
        ws / ls
    );
    println!("load average at the end: {}", load_average());
    Ok(())
}

/// Builds the lease bench (and the CLI it runs) in release mode, for Linux or
/// for `target`.
fn build(target: Option<&str>) -> Result<Build> {
    let mut cmd = cargo();
    cmd.args(["bench", "--bench", "lease", "--no-run"])
        .args(["--message-format=json-render-diagnostics"])
        .stdout(Stdio::piped());
    if let Some(target) = target {
        // As `cargo xtask test` builds for Windows, so the two share artifacts.
        cmd.args(["--target", target])
            .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS", "-Dwarnings");
    }
    eprintln!("$ {cmd:?}");
    let out = cmd.output().context("could not start cargo")?;
    if !out.status.success() {
        bail!("{cmd:?} failed with {}", out.status);
    }
    let (mut bench, mut cli) = (None, None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(exe) = message["executable"].as_str() else {
            continue;
        };
        match message["target"]["name"].as_str() {
            Some("lease") => bench = Some(PathBuf::from(exe)),
            Some("leasedesk") => cli = Some(PathBuf::from(exe)),
            _ => {}
        }
    }
    Ok(Build {
        bench: bench.context("the lease bench's executable")?,
        cli: cli.context("the leasedesk executable")?,
    })
}

/// A Wine prefix for the bench alone, beside the tests' (made once): the
/// tests' may be busy, or ended by them, while the bench runs.
fn bench_prefix(wine: &Wine) -> Result<PathBuf> {
    let prefix = wine.prefix().with_file_name("bench-prefix");
    if !prefix.join("system.reg").exists() {
        check(
            wine.command("wineboot")
                .arg("--init")
                .env("WINEPREFIX", &prefix),
        )?;
    }
    // The stand-in for `bcryptprimitives.dll` that `Wine::prepare` built.
    let dll = Path::new("windows/system32/bcryptprimitives.dll");
    let installed = prefix.join("drive_c").join(dll);
    std::fs::copy(wine.drive_c().join(dll), &installed)?;
    check(
        Command::new("chown")
            .arg(format!("--reference={}", prefix.display()))
            .arg(&installed),
    )?;
    Ok(prefix)
}

/// Runs one part of the bench, echoing and answering its report.
fn run(mut cmd: Command) -> Result<String> {
    eprintln!("$ {cmd:?}");
    let out = cmd.stderr(Stdio::inherit()).output()?;
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{report}");
    if !out.status.success() {
        bail!("{cmd:?} failed with {}", out.status);
    }
    Ok(report)
}

/// The number a report row's measured column starts with (a median).
fn figure(report: &str, name: &str) -> Result<f64> {
    report
        .lines()
        .filter_map(|line| line.strip_prefix("| "))
        .find(|row| row.starts_with(name))
        .and_then(|row| row.split(" | ").nth(1))
        .and_then(|measured| measured.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .with_context(|| format!("no figure {name:?} in\n{report}"))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

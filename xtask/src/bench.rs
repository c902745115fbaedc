//! `cargo xtask bench`: the benchmarks in release builds, with what they are
//! compared against (b3sum, etcd, PostgreSQL, openssl) installed beside them,
//! and the app's figures in a real window under Xvfb. Each bench prints its
//! Markdown report; the figures its rows print as data are kept per part in
//! `benches/results/DATE-PART.json` (see `results.rs`). `docs/BENCHMARKS.md`
//! is written by hand, never here.

use std::io::BufReader;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::packages::{
    app_and_test_packages, cargo_installed, ensure_debian_packages, ensure_tauri_driver,
};
use crate::results::{Results, Run};
use crate::suite::{on_virtual_display, with_test_keyring};
use crate::ui::build_ui;
use crate::{bench_windows, cargo, cargo_program, check, root, target_dir};

/// The `--only` parts of `src-tauri/benches/app.rs`; `--only app` runs all
/// of them.
const APP_BENCH_PARTS: &[&str] = &[
    "startup-hash",
    "window",
    "scroll",
    "compare",
    "app-million",
    "editor",
];

/// The benches of `benches/`, in the order they run, each with the `--only`
/// parts it measures. `--only NAME` of a bench that has no part NAME runs
/// that bench whole (`--only lease`).
const CORE_BENCHES: &[(&str, &[&str])] = &[
    ("lease", &["sqlite", "pairs", "cycles", "big"]),
    (
        "server",
        &[
            "http", "etcd", "upload", "list", "hostile", "preview", "changes",
        ],
    ),
    ("preview", &["preview", "psd-corpus"]),
    ("formats", &["formats"]),
    ("failover", &["failover"]),
    ("objects", &["objects"]),
    ("team", &["team", "team-pg", "team-requests"]),
    ("stream", &["stream"]),
    ("permissions", &["permissions"]),
    ("million", &["million", "million-sorted"]),
    ("link", &["link"]),
    ("lfs", &["lfs"]),
    ("review", &["review"]),
];

/// Builds in release mode and runs the benchmarks (those of
/// [`CORE_BENCHES`], then `src-tauri/benches/app.rs`), with `b3sum`, etcd,
/// PostgreSQL and openssl (installed here, for the comparisons only) beside
/// them; keeps their figures in `benches/results/`.
pub fn bench(args: &[String]) -> Result<()> {
    // The Windows figures (what Wine costs): the lease bench for Linux and
    // for Windows, side by side.
    if args.windows(2).any(|pair| pair == ["--only", "windows"]) {
        return bench_windows::bench_windows();
    }
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1));
    let mut results = Results::new(root().join("benches/results"), Run::here(&root(), args));
    let ran = run(args, only.map(String::as_str), &mut results);
    match results.save() {
        Ok(files) => {
            for file in files {
                eprintln!("figures kept in {}", file.display());
            }
        }
        Err(e) => eprintln!("the figures were not kept: {e:#}"),
    }
    ran
}

fn run(args: &[String], only: Option<&str>, results: &mut Results) -> Result<()> {
    let app = only.is_some_and(|part| part == "app" || APP_BENCH_PARTS.contains(&part));
    // A part of the app's bench needs none of the comparisons below.
    if !app {
        core_benches(args, only, results)?;
    }
    // The app's figures: a release build in a real window, under Xvfb; not
    // built when `--only` names a part of the benches above.
    if only.is_some() && !app {
        return Ok(());
    }
    ensure_debian_packages(&app_and_test_packages())?;
    build_ui()?;
    check(cargo().args(["build", "--release", "-p", "leasedesk-app"]))?;
    let tauri_driver = ensure_tauri_driver()?;
    // A keyring for the server token of `--only app-million`'s app.
    let (args, part) = match only {
        Some("app") => (without_only(args), "app"),
        Some(part) => (args.to_vec(), part),
        None => (args.to_vec(), "app"),
    };
    run_bench(
        with_test_keyring(on_virtual_display(None), "bench-keyring")?
            .arg(cargo_program())
            .args(["bench", "-p", "leasedesk-app", "--bench", "app", "--"])
            .args(&args)
            .env("TAURI_DRIVER", tauri_driver)
            .env(
                "LEASEDESK_APP_BIN",
                target_dir().join("release/leasedesk-app"),
            ),
        "app",
        part,
        results,
    )
}

/// The core's benches (`benches/*.rs`): each given `args`, or those that
/// measure the part `only` names.
fn core_benches(args: &[String], only: Option<&str>, results: &mut Results) -> Result<()> {
    let b3sum = cargo_installed("b3sum", "bench-tools")?;
    // etcd is the baseline of the server's lease figures; the team figure
    // runs on a PostgreSQL of its own; etcd-client's build needs protoc.
    ensure_debian_packages(&[
        "etcd-server",
        "postgresql-15",
        "protobuf-compiler",
        "libprotobuf-dev",
        "openssl",
        // The link bench's real edits: Blender, GIMP and ImageMagick write them.
        "blender",
        "gimp",
        "imagemagick",
        // The Git LFS figures' client.
        "git-lfs",
        // The formats bench's big PDF is Inkscape's, its baseline poppler's.
        "inkscape",
        "poppler-utils",
    ])?;
    check(cargo().args(["build", "--release", "--bin", "leasedesk"]))?;
    for (bench, args, part) in core_runs(args, only) {
        run_bench(
            cargo()
                .args(["bench", "--bench", bench, "--"])
                .args(&args)
                .env("LEASEDESK_BIN", target_dir().join("release/leasedesk"))
                .env("B3SUM", &b3sum),
            bench,
            &part,
            results,
        )?;
    }
    Ok(())
}

/// Which core benches run, each with its arguments and the part its
/// figures are kept under: with no `--only`, every bench, each its own
/// part; `--only PART`, the benches that measure PART; `--only NAME` of a
/// bench without such a part, that bench whole; a part no bench is known
/// to measure, every bench given it (each skips what is not its own).
fn core_runs(args: &[String], only: Option<&str>) -> Vec<(&'static str, Vec<String>, String)> {
    let names = CORE_BENCHES.iter().map(|(bench, _)| *bench);
    let Some(part) = only else {
        return names
            .map(|bench| (bench, args.to_vec(), bench.to_owned()))
            .collect();
    };
    let measuring: Vec<_> = CORE_BENCHES
        .iter()
        .filter(|(_, parts)| parts.contains(&part))
        .map(|(bench, _)| (*bench, args.to_vec(), part.to_owned()))
        .collect();
    if !measuring.is_empty() {
        return measuring;
    }
    if let Some(bench) = names.clone().find(|bench| *bench == part) {
        return vec![(bench, without_only(args), part.to_owned())];
    }
    eprintln!("no bench is known to measure part {part:?}: every bench is given it");
    names
        // failover.rs reads no `--only`: it would run whole.
        .filter(|bench| *bench != "failover")
        .map(|bench| (bench, args.to_vec(), part.to_owned()))
        .collect()
}

/// `args` without `--only` and its value.
fn without_only(args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--only" {
            args.next();
        } else {
            kept.push(arg.clone());
        }
    }
    kept
}

/// Runs one bench, echoing its report without its figure lines; their
/// figures are kept in `results` under `part`, and saved even when the
/// bench fails part way.
fn run_bench(cmd: &mut Command, bench: &str, part: &str, results: &mut Results) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start {cmd:?}"))?;
    let report = BufReader::new(child.stdout.take().expect("piped"));
    let collected = results.collect(bench, part, report, &mut std::io::stdout().lock());
    if collected.is_err() {
        // Nobody reads its report any more: it would wait on the pipe.
        let _ = child.kill();
    }
    let status = child.wait()?;
    results.save()?;
    collected?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn runs(text: &str) -> Vec<(&'static str, String, String)> {
        let args = args(text);
        let only = args
            .iter()
            .position(|a| a == "--only")
            .map(|i| args[i + 1].as_str());
        core_runs(&args, only)
            .into_iter()
            .map(|(bench, args, part)| (bench, args.join(" "), part))
            .collect()
    }

    #[test]
    fn a_part_runs_only_the_benches_that_measure_it() {
        assert_eq!(
            runs("--only pairs --quick"),
            [("lease", "--only pairs --quick".into(), "pairs".into())]
        );
        // server.rs has a part `preview` too: both keep their figures under it.
        assert_eq!(
            runs("--only preview"),
            [
                ("server", "--only preview".into(), "preview".into()),
                ("preview", "--only preview".into(), "preview".into())
            ]
        );
    }

    #[test]
    fn a_bench_named_without_a_part_of_that_name_runs_whole() {
        assert_eq!(
            runs("--quick --only lease --big-mib 64"),
            [("lease", "--quick --big-mib 64".into(), "lease".into())]
        );
        // failover.rs's one part is its name: it gets `--only failover`.
        assert_eq!(
            runs("--only failover"),
            [("failover", "--only failover".into(), "failover".into())]
        );
    }

    #[test]
    fn with_no_part_or_an_unknown_one_every_bench_runs() {
        let all = runs("--quick");
        assert_eq!(all.len(), CORE_BENCHES.len());
        assert!(all
            .iter()
            .all(|(bench, args, part)| args == "--quick" && part == bench));
        let unknown = runs("--only nosuchpart");
        assert_eq!(unknown.len(), CORE_BENCHES.len() - 1);
        assert!(unknown
            .iter()
            .all(|(bench, _, part)| *bench != "failover" && part == "nosuchpart"));
    }
}

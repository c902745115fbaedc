//! `cargo xtask fuzz`: the cargo-fuzz targets (`fuzz/`, nightly), each for a
//! time, with their committed seeds. A crash fails the task and leaves its
//! input in `fuzz/artifacts/`; seeds are only read, never rewritten.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::packages::cargo_installed;
use crate::{check, root};

/// Fuzzes TARGET (default each target in turn; `fuzz/`, cargo-fuzz on the
/// nightly toolchain) for SECONDS (default 300), then prints how many inputs ran. cargo-fuzz is
/// installed into `target/fuzz-tools`; a crash leaves its input in
/// `fuzz/artifacts/` and fails the task.
pub fn fuzz(args: &[String]) -> Result<()> {
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
    let cargo_fuzz = cargo_installed("cargo-fuzz", "fuzz-tools")?;
    let tools_bin = cargo_fuzz.parent().expect("a tools folder");
    let path = std::env::join_paths(std::iter::once(tools_bin.to_owned()).chain(
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
    "preview_design",
    "preview_psd",
    "preview_psd_layers",
];

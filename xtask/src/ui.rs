//! The window's side of the tasks (`ui/`): npm, its build into `ui/dist`, its
//! unit tests (Vitest), and the TypeScript types generated from the Rust ones
//! (ts-rs). It never edits the UI's sources, only `ui/src/generated` on
//! `cargo xtask types`.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::packages::ensure_debian_packages;
use crate::{cargo, check, root, target_dir};

fn npm() -> Command {
    let mut cmd = Command::new("npm");
    cmd.current_dir(root().join("ui"));
    cmd
}

/// Installs the UI's npm packages (as locked) when missing, and builds it into
/// `ui/dist`, which the app embeds.
pub fn build_ui() -> Result<()> {
    if Command::new("npm").arg("--version").output().is_err() {
        ensure_debian_packages(&["nodejs", "npm"])?;
    }
    if !root().join("ui/node_modules/.package-lock.json").exists() {
        check(npm().args(["ci", "--no-audit", "--no-fund"]))?;
    }
    check(npm().args(["run", "build"]))
}

/// Where the UI's TypeScript types of the Rust ones are kept (committed).
pub const GENERATED_TYPES: &str = "ui/src/generated";

/// Writes the TypeScript types of the model's and the app's types (ts-rs's
/// `export_bindings` tests), and the shell's commands and events
/// (`Shell.ts`, from `src-tauri/src/ipc.rs`), into `dir`, emptied first;
/// answers the files.
pub fn ui_types(dir: &Path) -> Result<Vec<String>> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    check(
        cargo()
            .args([
                "test",
                "--quiet",
                // The whole workspace, though only the model, the desk and
                // the app export types: so the features resolve as for
                // `cargo test --workspace`, and its build serves both.
                "--workspace",
                "--lib",
            ])
            .arg("export_bindings")
            .env("TS_RS_EXPORT_DIR", dir),
    )?;
    file_names(dir)
}

/// The names of the files in `dir`, sorted.
fn file_names(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_>>()?;
    names.sort();
    Ok(names)
}

/// Fails when the committed TypeScript types are not what the Rust types
/// give now (a field added in Rust and not in the window, or the reverse).
pub fn check_ui_types() -> Result<()> {
    let fresh = target_dir().join("ui-types");
    let names = ui_types(&fresh)?;
    let committed = root().join(GENERATED_TYPES);
    let kept = file_names(&committed)?;
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
pub fn ui_tests() -> Result<(u64, u64)> {
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

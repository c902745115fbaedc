//! macOS, from Linux: the core and the app type-checked and linted for
//! `aarch64-apple-darwin`, so that their macOS branches compile somewhere.
//! Nothing is linked (there is no Apple SDK here), so nothing runs.
//!
//! The C in dependencies (SQLite, ring, zstd, BLAKE3) is compiled by zig,
//! from PyPI, whose clang ships macOS's libc headers. Objective-C that needs
//! Apple's frameworks (mac-notification-sys includes Cocoa) cannot be: see
//! `DOCS_RS` below.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;

use crate::packages::{ensure_components, ensure_debian_packages, ensure_target};
use crate::ui::build_ui;
use crate::{cargo, check, target_dir};

const TARGET: &str = "aarch64-apple-darwin";

/// The zig release, pinned: what its `cc` accepts changes between releases.
const ZIG_VERSION: &str = "0.15.2";

/// What is checked: every layer crate's, the CLI's and the app's libraries,
/// binaries and tests.
fn selection() -> Vec<String> {
    crate::product_selection(&["--lib", "--bins", "--tests"])
}

/// Clippy (which type-checks everything `cargo check` does; warnings are
/// errors), for macOS.
pub fn check_macos() -> Result<()> {
    ensure_components()?;
    ensure_target(TARGET)?;
    let tools = ensure_zig()?;
    // The app's crate embeds ui/dist.
    build_ui()?;
    check(
        cargo()
            .args(["clippy", "--target", TARGET])
            .args(selection())
            .args(["--", "-D", "warnings"])
            .env("CC_aarch64_apple_darwin", tools.join("cc"))
            .env("CXX_aarch64_apple_darwin", tools.join("c++"))
            .env("AR_aarch64_apple_darwin", tools.join("ar"))
            // Else cc-rs asks `xcrun` for the SDK's version.
            .env("MACOSX_DEPLOYMENT_TARGET", "11.0")
            // mac-notification-sys (under the notification plugin) then
            // skips its Objective-C, which needs Cocoa's headers, as it
            // does on docs.rs; so does objc2-exception-helper. Only the
            // iOS and Android builds of Tauri's plugins read it too.
            .env("DOCS_RS", "1"),
    )?;
    Ok(())
}

/// zig, in a Python venv of ours under the target folder, behind scripts that
/// cc-rs calls as the target's `cc`, `c++` and `ar`. Answers their folder.
fn ensure_zig() -> Result<PathBuf> {
    // Absolute: the scripts run in the build scripts' folders.
    let tools = std::path::absolute(target_dir().join("macos-tools"))?;
    let python = tools.join("venv/bin/python");
    let installed = Command::new(&python)
        .args(["-m", "ziglang", "version"])
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == ZIG_VERSION.as_bytes());
    if !installed {
        // Debian's python3 makes venvs only with python3-venv.
        ensure_debian_packages(&["python3-venv"])?;
        check(
            Command::new("python3")
                .args(["-m", "venv"])
                .arg(tools.join("venv")),
        )?;
        check(
            Command::new(&python)
                .args(["-m", "pip", "install", "--quiet"])
                .arg(format!("ziglang=={ZIG_VERSION}")),
        )?;
    }
    let bin = tools.join("bin");
    std::fs::create_dir_all(&bin)?;
    for (name, zig) in [
        ("cc", "cc -target aarch64-macos"),
        ("c++", "c++ -target aarch64-macos"),
        ("ar", "ar"),
    ] {
        // cc-rs adds clang's `--target=arm64-apple-macosx`, which zig does
        // not parse (its own `-target` says the same): dropped.
        let script = format!(
            r#"#!/bin/sh
for arg do
  shift
  case "$arg" in --target=*) ;; *) set -- "$@" "$arg" ;; esac
done
exec '{python}' -m ziglang {zig} "$@"
"#,
            python = python.display()
        );
        let path = bin.join(name);
        std::fs::write(&path, script)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(bin)
}

//! What the tasks install when it is missing: Debian packages (apt-get), the
//! toolchain's targets and components (rustup), and tools built with `cargo
//! install` into the target folder. It only installs: it never builds or runs
//! the project.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

use crate::{cargo, check, is_root, target_dir};

/// Adds a target's standard library to this toolchain, if it lacks it.
pub fn ensure_target(target: &str) -> Result<()> {
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
pub fn ensure_components() -> Result<()> {
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
pub const APP_PACKAGES: &[&str] = &[
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
    // Writes the .blend files (with their thumbnails) the preview tests read,
    // and runs the Blender add-on against the app (src-tauri/tests/blender).
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
    // The real Git LFS client the Git LFS API's tests drive (tests/lfs.rs).
    "git-lfs",
    // etcd-client (a dev-dependency, the team bench's baseline) builds its
    // gRPC code with protoc (and its well-known types), and clippy
    // --all-targets builds the benches.
    "protobuf-compiler",
    "libprotobuf-dev",
];

/// What the app's window tests and benches need: the app's packages and the tests'.
pub fn app_and_test_packages() -> Vec<&'static str> {
    APP_PACKAGES.iter().chain(TEST_PACKAGES).copied().collect()
}

/// Installs the Debian packages that are not installed yet, in one go.
pub fn ensure_debian_packages(packages: &[&str]) -> Result<()> {
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

/// `tauri-driver` (WebDriver for Tauri apps), installed into the target folder.
pub fn ensure_tauri_driver() -> Result<PathBuf> {
    cargo_installed("tauri-driver", "e2e-tools")
}

/// The binary of crate `krate`, `cargo install`ed into `target/TOOLS/bin`
/// the first time it is wanted.
pub fn cargo_installed(krate: &str, tools: &str) -> Result<PathBuf> {
    let tools = target_dir().join(tools);
    let binary = tools.join("bin").join(krate);
    if !binary.exists() {
        check(
            cargo()
                .args(["install", krate, "--locked", "--quiet", "--root"])
                .arg(&tools),
        )?;
    }
    Ok(binary)
}

//! `cargo xtask bench`: the benchmarks in release builds, with what they are
//! compared against (b3sum, etcd, PostgreSQL, openssl) installed beside them,
//! and the app's figures in a real window under Xvfb. The figures are
//! printed; `docs/BENCHMARKS.md` is written by hand, never here.

use anyhow::Result;

use crate::packages::{
    app_and_test_packages, cargo_installed, ensure_debian_packages, ensure_tauri_driver,
};
use crate::suite::{on_virtual_display, with_test_keyring};
use crate::ui::build_ui;
use crate::{bench_windows, cargo, cargo_program, check, target_dir};

/// The `--only` parts of `src-tauri/benches/app.rs`.
const APP_BENCH_PARTS: &[&str] = &["startup-hash", "window", "scroll", "compare", "app-million"];

/// Builds in release mode and runs the benchmarks (`benches/lease.rs`,
/// `benches/server.rs`, `benches/preview.rs`, `benches/failover.rs`,
/// `benches/objects.rs`, `benches/team.rs`, `benches/stream.rs`,
/// `benches/permissions.rs`, `benches/million.rs`, `benches/link.rs`,
/// `src-tauri/benches/app.rs`),
/// with `b3sum`, etcd, PostgreSQL and openssl
/// (installed here, for the comparisons only) beside them.
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
    // A part of the app's bench needs none of the comparisons below.
    if !only.is_some_and(|part| APP_BENCH_PARTS.contains(&part.as_str())) {
        core_benches(args, only)?;
    }
    // The app's figures: a release build in a real window, under Xvfb; not
    // built when `--only` names a part of the benches above.
    if only.is_some_and(|part| !APP_BENCH_PARTS.contains(&part.as_str())) {
        return Ok(());
    }
    ensure_debian_packages(&app_and_test_packages())?;
    build_ui()?;
    check(cargo().args(["build", "--release", "-p", "leasedesk-app"]))?;
    let tauri_driver = ensure_tauri_driver()?;
    // A keyring for the server token of `--only app-million`'s app.
    check(
        with_test_keyring(on_virtual_display(None), "bench-keyring")?
            .arg(cargo_program())
            .args(["bench", "-p", "leasedesk-app", "--bench", "app", "--"])
            .args(args)
            .env("TAURI_DRIVER", tauri_driver)
            .env(
                "LEASEDESK_APP_BIN",
                target_dir().join("release/leasedesk-app"),
            ),
    )
}

/// The core's benches (`benches/*.rs`), each given `args`.
fn core_benches(args: &[String], only: Option<&String>) -> Result<()> {
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
    ])?;
    check(cargo().args(["build", "--release", "--bin", "leasedesk"]))?;
    for bench in [
        "lease",
        "server",
        "preview",
        "failover",
        "objects",
        "team",
        "stream",
        "permissions",
        "million",
        "link",
        "lfs",
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
    Ok(())
}

//! `cargo xtask test`: formatting, lints and every test (the UI's, the
//! workspace's under a virtual display, the Windows leg, the macOS check),
//! closing with one line that counts them. It reads the test runners' output
//! to count; it never decides a test's outcome itself.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::packages::{
    app_and_test_packages, ensure_components, ensure_debian_packages, ensure_tauri_driver,
};
use crate::ui::{build_ui, check_ui_types, ui_tests};
use crate::{
    build_binaries, cargo, cargo_program, check, layers, macos, root, target_dir,
    warn_if_disk_is_low, windows,
};

/// Formatting, lints (warnings are errors) and every test: the UI's (Vitest),
/// then the workspace's under a virtual display with a session bus and an
/// unlocked keyring, so the keychain and the end-to-end tests run for real.
/// Closes with one line that counts the tests of every test binary.
pub fn test() -> Result<()> {
    warn_if_disk_is_low();
    layers::check(&root())?;
    ensure_components()?;
    ensure_debian_packages(&app_and_test_packages())?;
    build_ui()?;
    check_ui_types()?;
    build_binaries()?;
    let (mut passed, mut failed) = ui_tests()?;
    check(cargo().args(["fmt", "--all", "--", "--check"]))?;
    check(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    let tauri_driver = ensure_tauri_driver()?;
    // Xvfb keeps its screen in a file there, which the end-to-end tests read
    // for their screenshots (WebDriver's sometimes never answers on a busy machine).
    let framebuffer = target_dir().join("xvfb-screen");
    std::fs::create_dir_all(&framebuffer)?;
    let mut cmd = with_test_keyring(on_virtual_display(Some(&framebuffer)), "test-keyring")?;
    cmd.arg(cargo_program())
        .args(["test", "--workspace"])
        .env("TAURI_DRIVER", &tauri_driver)
        .env("LEASEDESK_BIN", target_dir().join("debug/leasedesk"))
        .env(
            "LEASEDESK_XVFB_FRAMEBUFFER",
            framebuffer.join("Xvfb_screen0"),
        )
        .stdout(Stdio::piped());
    eprintln!("$ {cmd:?}");
    let mut child = cmd.spawn().context("could not start cargo test")?;
    let (rust_passed, rust_failed, _) = echo_test_output(child.stdout.take().expect("piped"))?;
    passed += rust_passed;
    failed += rust_failed;
    let status = child.wait()?;
    if !status.success() {
        println!("\ntests: {passed} passed, {failed} failed");
        warn_if_disk_is_low();
        bail!("cargo test failed with {status}");
    }
    let (windows_passed, windows_failed) = windows::test()?;
    macos::check_macos()?;
    println!(
        "\ntests: {} passed, {} failed (of which on Windows, under Wine: {windows_passed} passed, {windows_failed} failed)",
        passed + windows_passed,
        failed + windows_failed
    );
    Ok(())
}

/// `xvfb-run` with a 1280×800 screen (its framebuffer kept in a file in
/// `framebuffer`, if given) and a session bus, ready for the command to run there.
/// `cmd` (a session's) going on to run what is added to it with a keyring
/// of its own, made fresh in the target folder's `name`, unlocked: the app
/// keeps its server tokens there.
pub fn with_test_keyring(mut cmd: Command, name: &str) -> Result<Command> {
    let keyring_home = target_dir().join(name);
    let _ = std::fs::remove_dir_all(&keyring_home);
    std::fs::create_dir_all(&keyring_home)?;
    cmd.args([
        "sh",
        "-c",
        "printf leasedesk-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec \"$@\"",
        "with-keyring",
    ])
    .env("XDG_DATA_HOME", &keyring_home);
    Ok(cmd)
}

pub fn on_virtual_display(framebuffer: Option<&Path>) -> Command {
    let mut screen = "-screen 0 1280x800x24".to_owned();
    if let Some(dir) = framebuffer {
        screen.push_str(&format!(" -fbdir {}", dir.display()));
    }
    let mut cmd = Command::new("xvfb-run");
    cmd.current_dir(root())
        .args(["-a", "-s", &screen, "dbus-run-session", "--"]);
    cmd
}

/// Echoes a test run's output; answers the pass and fail counts of its
/// summaries, and whether there was one.
pub fn echo_test_output(output: impl std::io::Read) -> Result<(u64, u64, bool)> {
    let (mut passed, mut failed, mut summed) = (0, 0, false);
    for line in BufReader::new(output).lines() {
        let line = line?;
        println!("{line}");
        if let Some(counts) = line.strip_prefix("test result: ") {
            passed += count_of(counts, "passed");
            failed += count_of(counts, "failed");
            summed = true;
        }
    }
    Ok((passed, failed, summed))
}

/// The number before `label` in a summary like "ok. 63 passed; 0 failed; ...".
fn count_of(summary: &str, label: &str) -> u64 {
    summary
        .split([';', '.'])
        .find_map(|part| part.trim().strip_suffix(label))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

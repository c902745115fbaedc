//! The processes a window test starts and watches: the tools it is given
//! (`TAURI_DRIVER`, `LEASEDESK_BIN`), children killed however a test ends, the
//! app's own processes. Never leaves a child running past its guard.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub fn tool(var: &str) -> PathBuf {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: run the end-to-end tests through `cargo xtask test`")
    });
    assert!(path.exists(), "{var}={} does not exist", path.display());
    path
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when the test ends, however it ends.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The app's processes on this test's session bus, oldest first: the ones
/// a second app would give way to. An app on another bus (another run's,
/// a developer's) is not this test's, and is left alone.
pub fn app_processes() -> Vec<u32> {
    super::on_this_bus::processes_on_this_bus(env!("CARGO_BIN_EXE_leasedesk-app"))
}

/// Ends the app itself too, by its ids: closing its window only hides it
/// (the app lives on in the tray), and a second app would give way to a
/// first left running.
pub fn end_app_instances() {
    for pid in app_processes() {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let started = Instant::now();
    while !app_processes().is_empty() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The oldest process of the app under test, if one runs.
pub fn oldest_app_process() -> Option<u32> {
    app_processes().first().copied()
}

/// The WebKit web process the app started, if one runs.
pub fn web_process_of(app: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{app}/task")).ok()?;
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .find(|child| {
            std::fs::read_to_string(format!("/proc/{child}/cmdline"))
                .is_ok_and(|cmd| cmd.contains("WebKitWebProcess"))
        })
}

/// Runs `command`, which must start and succeed; what it printed.
pub fn succeeded(command: &mut Command, what: &str) -> Vec<u8> {
    let out = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The `leasedesk` CLI with `args`, which must succeed.
pub fn run_cli(args: &[&str]) {
    succeeded(
        Command::new(tool("LEASEDESK_BIN")).args(args),
        &format!("{args:?}"),
    );
}

//! The app's processes on this session bus, shared by the window tests and
//! the app's bench (which includes this file): theirs alone, never an app a
//! developer or another run has on another bus.

use std::process::Command;

/// The processes whose command line has `binary` and whose session bus is
/// this process's, oldest first.
pub fn processes_on_this_bus(binary: &str) -> Vec<u32> {
    let bus = format!(
        "DBUS_SESSION_BUS_ADDRESS={}\0",
        std::env::var("DBUS_SESSION_BUS_ADDRESS").unwrap_or_default()
    );
    let Ok(out) = Command::new("pgrep").args(["-f", binary]).output() else {
        return Vec::new();
    };
    let started = |pid: u32| -> u64 {
        // stat's 22nd field, counted after the command's closing parenthesis.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                let (_, rest) = s.rsplit_once(')')?;
                rest.split_whitespace().nth(19)?.parse().ok()
            })
            .unwrap_or(0)
    };
    let mut pids: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(bus.len()).any(|w| w == bus.as_bytes()))
        })
        .collect();
    pids.sort_by_key(|&pid| started(pid));
    pids
}

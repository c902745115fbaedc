//! A child's process group, killed whole: shared by the window tests, the
//! Blender test and the app's bench (which include this file).

use std::process::{Child, Command};

/// A child in a process group of its own, killed whole when the test ends:
/// tauri-driver starts WebKitWebDriver, which starts the app, and all three
/// must go (the app allows one instance per session bus).
pub struct KilledGroup(pub Child);

impl Drop for KilledGroup {
    fn drop(&mut self) {
        kill_group(&mut self.0);
    }
}

/// Kills the process group `child` leads, and reaps `child`.
pub fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    let _ = child.wait();
}

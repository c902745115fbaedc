//! The built `leasedesk` binary, as an admin, a script or an agent runs it:
//! one module per family of commands, and here what they share (the CLI on a
//! data folder as one participant or another, a real `leasedesk serve`). It
//! reaches the store only through the binary, never through the library.

mod admin;
#[cfg(unix)]
mod data_folder;
mod edit;
mod events;
mod lease;
mod output;
mod serve;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use testkit::ServeProcess;

/// The system's shell, as an agent's command line calls it.
const SHELL: [&str; 2] = if cfg!(windows) {
    ["cmd", "/C"]
} else {
    ["sh", "-c"]
};

/// The CLI on one data folder, run as whichever participant each call names.
struct Cli<'a> {
    data: &'a Path,
}

impl Cli<'_> {
    fn run(&self, who: &str, args: &[&str]) -> Output {
        crate::harness::leasedesk()
            .arg("--data")
            .arg(self.data)
            .args(["--as", who])
            .args(args)
            .output()
            .expect("run leasedesk")
    }

    fn ok(&self, who: &str, args: &[&str]) -> String {
        let out = self.run(who, args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, who: &str, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(who, &all)).expect("JSON output")
    }

    /// Adds a participant as root (`user add ARGS`) and answers its token,
    /// printed alone on the last line.
    fn add_participant(&self, args: &[&str]) -> String {
        let mut all = vec!["user", "add"];
        all.extend_from_slice(args);
        self.ok("user:root", &all)
            .lines()
            .last()
            .unwrap()
            .to_owned()
    }
}

/// A real `leasedesk serve` on `data`, on 127.0.0.1:0, its debug log in a
/// file beside the data folder.
fn serve(data: &Path) -> ServeProcess {
    crate::harness::cli_on()
        .data(data)
        .serve()
        .env("LEASEDESK_LOG", "debug")
        .log_to(data.with_extension("log"))
        .spawn()
}

/// Asks the server to stop (SIGTERM, Ctrl+Break) and returns whether it exited cleanly.
fn stop(mut server: ServeProcess) -> bool {
    crate::harness::ask_to_stop(&mut server.child);
    server.child.wait().unwrap().success()
}

//! The built `leasedesk` binary, as an admin, a script or an agent runs it:
//! one module per family of commands, and here what they share (the CLI on a
//! data folder as one participant or another, a real `leasedesk serve`). It
//! reaches the store only through the binary, never through the library.

mod admin;
mod changes;
#[cfg(unix)]
mod data_folder;
mod edit;
mod events;
mod lease;
mod listing;
mod output;
mod requests;
mod review;
mod serve;
mod studio;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;
use testkit::ServeProcess;
use testkit::WithEnvironment;

/// The system's shell, as an agent's command line calls it.
const SHELL: [&str; 2] = if cfg!(windows) {
    ["cmd", "/C"]
} else {
    ["sh", "-c"]
};

/// The CLI on a data folder of its own in a temp folder (testkit's), run as
/// whichever participant each call names.
struct Cli {
    kit: testkit::Cli,
}

impl Cli {
    fn new() -> Self {
        Self {
            kit: crate::harness::cli_in_temp_dir(),
        }
    }

    /// The data folder.
    fn data(&self) -> PathBuf {
        self.kit.data_dir().expect("a data folder")
    }

    /// Writes `bytes` to `name` in the temp folder (beside the data folder)
    /// and answers its path, for `import` and `checkin`.
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.kit.dir().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    }

    /// Alice imports `bytes` at `path`, from a file of that name beside the
    /// data folder.
    fn import(&self, path: &str, bytes: &[u8]) {
        self.ok("user:alice", &["import", path, &self.file(path, bytes)]);
    }

    /// `leasedesk --data DATA --as WHO`, ready for a command's arguments.
    fn command(&self, who: &str) -> Command {
        let mut command = self.kit.command();
        command.args(["--as", who]);
        command
    }

    fn run(&self, who: &str, args: &[&str]) -> Output {
        self.command(who)
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

    /// Adds a participant (`user add ARGS`) and serves the data folder: the
    /// server, and that participant's CLI as its client.
    fn serve_to(&self, args: &[&str]) -> (ServeProcess, testkit::Cli) {
        let token = self.add_participant(args);
        let server = self.serve();
        let client = server.client_cli(&token);
        (server, client)
    }

    /// A real `leasedesk serve` on the data folder, on 127.0.0.1:0, its debug
    /// log in `serve.log` beside the data folder.
    fn serve(&self) -> ServeProcess {
        crate::harness::serve_logged(&self.kit)
            .env("LEASEDESK_LOG", "debug")
            .spawn()
    }
}

/// Asks the server to stop (SIGTERM, Ctrl+Break) and returns whether it exited cleanly.
fn stop(mut server: ServeProcess) -> bool {
    server.ask_to_stop();
    server.child.wait().unwrap().success()
}

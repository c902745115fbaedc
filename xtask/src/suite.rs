//! `cargo xtask test`: formatting, lints and every test (the UI's, the
//! workspace's under a virtual display, the Windows leg, the macOS check),
//! closing with one line that counts them. It reads the test runners' output
//! to count; it never decides a test's outcome itself.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::packages::{
    app_and_test_packages, ensure_components, ensure_debian_packages, ensure_tauri_driver,
};
use crate::ui::{build_ui, check_ui_types, ui_tests};
use crate::{
    cargo, cargo_program, check, layers, macos, root, target_dir, warn_if_disk_is_low, windows,
};

/// Formatting, lints (warnings are errors) and every test: the UI's (Vitest),
/// then the workspace's under a virtual display with a session bus and an
/// unlocked keyring, so the keychain and the end-to-end tests run for real.
/// Closes with one line that counts the tests of every test binary.
pub fn test() -> Result<()> {
    let mut phases = Phases::started();
    warn_if_disk_is_low();
    layers::check(&root())?;
    ensure_components()?;
    ensure_debian_packages(&app_and_test_packages())?;
    phases.ended("checks and packages");
    build_ui()?;
    phases.ended("the UI's build");
    // Every test and the binaries they run, in one build of one feature
    // set: the binaries built alone, without the tests' dev-dependencies,
    // resolve other features and compile much of the tree twice.
    check(cargo().args(["test", "--workspace", "--no-run"]))?;
    phases.ended("the build");
    check_ui_types()?;
    // The product as its users build it, without the tests' features:
    // checked, not built, as nothing runs it here.
    check(cargo().args(["check", "-p", "leasedesk", "--bins"]))?;
    check(cargo().args(["check", "-p", "leasedesk-app", "--bins"]))?;
    phases.ended("the UI's types and the product's check");
    let (mut passed, mut failed) = ui_tests()?;
    phases.ended("Vitest");
    check(cargo().args(["fmt", "--all", "--", "--check"]))?;
    check(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    phases.ended("fmt and clippy");
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
    let rust = echo_test_output(child.stdout.take().expect("piped"))?;
    passed += rust.passed;
    failed += rust.failed;
    let status = child.wait()?;
    if !status.success() {
        rust.repeat_failures();
        println!("\ntests: {passed} passed, {failed} failed");
        warn_if_disk_is_low();
        bail!("cargo test failed with {status}");
    }
    phases.ended("cargo test");
    let (windows_passed, windows_failed) = windows::test()?;
    phases.ended("the Windows leg");
    macos::check_macos()?;
    phases.ended("the macOS check");
    phases.report(false);
    println!(
        "\ntests: {} passed, {} failed (of which on Windows, under Wine: {windows_passed} passed, {windows_failed} failed)",
        passed + windows_passed,
        failed + windows_failed
    );
    Ok(())
}

/// How long each phase of the run took, printed before the count of a run
/// that passed, and last in one that did not: CI keeps the tail of the
/// output, and its time has a budget.
struct Phases {
    began: Instant,
    took: Vec<(&'static str, Duration)>,
    reported: bool,
}

impl Phases {
    fn started() -> Self {
        Self {
            began: Instant::now(),
            took: Vec::new(),
            reported: false,
        }
    }

    /// `name` ended now; it began where the phase before it ended.
    fn ended(&mut self, name: &'static str) {
        let before: Duration = self.took.iter().map(|(_, took)| *took).sum();
        self.took.push((name, self.began.elapsed() - before));
    }

    /// Prints each phase's time, and with `failed` the time of the one the
    /// run stopped in.
    fn report(&mut self, failed: bool) {
        let minutes = |d: Duration| format!("{:.1} min", d.as_secs_f64() / 60.0);
        let mut each: Vec<String> = self
            .took
            .iter()
            .map(|(name, took)| format!("{name} {}", minutes(*took)))
            .collect();
        if failed {
            let ended: Duration = self.took.iter().map(|(_, took)| *took).sum();
            each.push(format!(
                "the phase that failed {}",
                minutes(self.began.elapsed() - ended)
            ));
        }
        self.reported = true;
        println!(
            "\ntime: {} in all; {}",
            minutes(self.began.elapsed()),
            each.join(", ")
        );
    }
}

impl Drop for Phases {
    fn drop(&mut self) {
        if !self.reported {
            self.report(true);
        }
    }
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

/// What a test run's output said: its counts, and each failure's report.
#[derive(Default)]
pub struct TestOutput {
    pub passed: u64,
    pub failed: u64,
    /// Whether it said how many tests it runs ("running N tests").
    pub began: bool,
    /// Whether it printed a summary at all.
    pub summed: bool,
    /// Each failing test's report ("---- name stdout ----" and what follows),
    /// cut to its last lines.
    pub failures: Vec<String>,
}

impl TestOutput {
    /// Counts `other`'s tests and keeps its failures with these.
    pub fn add(&mut self, other: TestOutput) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.began |= other.began;
        self.summed |= other.summed;
        self.failures.extend(other.failures);
    }

    /// Prints the failures' reports again, last: CI keeps only the head
    /// and the tail of a long run's output, and the reports fall between.
    pub fn repeat_failures(&self) {
        if self.failures.is_empty() {
            return;
        }
        println!("\nthe failures, again:");
        for report in &self.failures {
            println!("{report}");
        }
    }
}

/// A failure's report keeps this many of its last lines: a test's panic
/// comes after what it printed.
const REPORT_LINES: usize = 60;

/// One failing test's report as it is read: its header, its last lines.
struct Report {
    header: String,
    last: VecDeque<String>,
    cut: usize,
}

impl Report {
    fn add(&mut self, line: &str) {
        if self.last.len() == REPORT_LINES {
            self.last.pop_front();
            self.cut += 1;
        }
        self.last.push_back(line.to_owned());
    }

    fn text(self) -> String {
        let mut text = self.header;
        if self.cut > 0 {
            text.push_str(&format!("\n({} lines cut here: in full above)", self.cut));
        }
        for line in self.last {
            text.push('\n');
            text.push_str(&line);
        }
        text.trim_end().to_owned()
    }
}

/// libtest's header of a failing test's report: "---- NAME stdout ----".
fn is_report_header(line: &str) -> bool {
    line.starts_with("---- ") && line.ends_with(" stdout ----")
}

/// Echoes a test run's output; answers its counts and failures.
pub fn echo_test_output(output: impl std::io::Read) -> Result<TestOutput> {
    read_test_output(output, |line| println!("{line}"))
}

/// Reads a test run's output, handing each line to `echo`.
fn read_test_output(output: impl std::io::Read, mut echo: impl FnMut(&str)) -> Result<TestOutput> {
    let mut seen = TestOutput::default();
    let mut report: Option<Report> = None;
    for line in BufReader::new(output).lines() {
        let line = line?;
        echo(&line);
        if line.starts_with("running ") && (line.ends_with(" test") || line.ends_with(" tests")) {
            seen.began = true;
        }
        let summary = line.strip_prefix("test result: ");
        if is_report_header(&line) || line == "failures:" || summary.is_some() {
            seen.failures.extend(report.take().map(Report::text));
        }
        if is_report_header(&line) {
            report = Some(Report {
                header: line.clone(),
                last: VecDeque::new(),
                cut: 0,
            });
        } else if let Some(report) = report.as_mut() {
            report.add(&line);
        }
        if let Some(counts) = summary {
            seen.passed += count_of(counts, "passed");
            seen.failed += count_of(counts, "failed");
            seen.summed = true;
        }
    }
    seen.failures.extend(report.map(Report::text));
    Ok(seen)
}

/// The number before `label` in a summary like "ok. 63 passed; 0 failed; ...".
fn count_of(summary: &str, label: &str) -> u64 {
    summary
        .split([';', '.'])
        .find_map(|part| part.trim().strip_suffix(label))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_died_at_its_start_is_told_from_one_that_began() {
        let died = "wine client error:0: recvmsg: Connection reset by peer\n";
        let seen = read_test_output(died.as_bytes(), |_| {}).unwrap();
        assert!(!seen.began && !seen.summed);
        let began = "\nrunning 0 tests\n";
        assert!(read_test_output(began.as_bytes(), |_| {}).unwrap().began);
    }

    #[test]
    fn the_counts_and_each_failures_report_are_read_from_a_runs_output() {
        let output = "\
running 3 tests
test a::one ... ok
test a::two ... FAILED
test a::three ... FAILED

failures:

---- a::two stdout ----
thread 'a::two' panicked at tests/a.rs:9:5:
assertion `left == right` failed: a 413
---- a::three stdout ----
thread 'a::three' panicked at tests/a.rs:20:5:
an answer: Os { code: 104, kind: ConnectionReset }

failures:
    a::two
    a::three

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

running 1 test
test b::one ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let seen = read_test_output(output.as_bytes(), |_| {}).unwrap();
        assert_eq!((seen.passed, seen.failed, seen.summed), (2, 2, true));
        assert!(seen.began);
        assert_eq!(seen.failures.len(), 2, "{:?}", seen.failures);
        assert!(seen.failures[0].starts_with("---- a::two stdout ----\n"));
        assert!(
            seen.failures[0].ends_with("failed: a 413"),
            "{:?}",
            seen.failures[0]
        );
        assert!(seen.failures[1].contains("ConnectionReset"));
        assert!(
            !seen.failures[1].contains("a::two"),
            "{:?}",
            seen.failures[1]
        );
    }

    #[test]
    fn a_long_report_keeps_its_last_lines_and_says_what_was_cut() {
        let mut output = String::from("---- big stdout ----\n");
        for n in 0..500 {
            output.push_str(&format!("line {n}\n"));
        }
        output.push_str("---- a diff ----\nthread 'big' panicked at tests/a.rs:1:1:\n");
        output.push_str("\nfailures:\n    big\n\ntest result: FAILED. 0 passed; 1 failed;\n");
        let seen = read_test_output(output.as_bytes(), |_| {}).unwrap();
        assert_eq!(seen.failures.len(), 1, "{:?}", seen.failures);
        let report = &seen.failures[0];
        assert!(
            report.starts_with("---- big stdout ----\n(443 lines cut here"),
            "{report}"
        );
        assert!(!report.contains("line 442\n"), "{report}");
        assert!(report.contains("line 443\n"), "{report}");
        assert!(
            report.ends_with("---- a diff ----\nthread 'big' panicked at tests/a.rs:1:1:"),
            "{report}"
        );
    }
}

//! A tool the tests and benches run beside ours (ImageMagick, openssl,
//! Blender, psd-tools' Python, a bench's child process), which must start
//! and succeed, and the lines a process prints, read as they come.
//! `leasedesk` itself runs through [`crate::Cli`] instead.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// Runs `command`, which must start (else a panic naming `what`, e.g. the
/// package that brings it) and succeed (else a panic with its stderr); its
/// output.
pub fn run_ok(command: &mut Command, what: &str) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what} runs: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({command:?}, {}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The lines of `from` (a child's stdout or stderr), read on a thread of
/// their own, so that a silent process fails a test at its deadline
/// instead of hanging it.
pub fn lines_of(from: impl Read + Send + 'static) -> Receiver<String> {
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    said
}

/// The lines that come from `lines` until one is `last` (kept), or until
/// `within` has passed.
pub fn lines_until(
    lines: &Receiver<String>,
    within: Duration,
    last: impl Fn(&str) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + within;
    let mut came = Vec::new();
    while !came.last().is_some_and(|line: &String| last(line)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => came.push(line),
            Err(_) => break,
        }
    }
    came
}

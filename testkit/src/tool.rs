//! A tool the tests and benches run beside ours (ImageMagick, openssl,
//! Blender, psd-tools' Python, a bench's child process), which must start
//! and succeed. `leasedesk` itself runs through [`crate::Cli`] instead.

use std::process::{Command, Output};

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

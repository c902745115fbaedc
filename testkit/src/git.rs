//! git (with git-lfs) as a designer's machine runs it, kept apart from this
//! machine's: a home of its own, no system configuration, never a prompt.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// git with `args` in `dir`, its home (and so its global configuration)
/// `home`: what it did.
pub fn git(dir: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "/bin/false")
        .env("SSH_ASKPASS", "/bin/false")
        .env_remove("GIT_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("git runs (is git-lfs installed? cargo xtask installs both)")
}

/// [`git`], which must succeed: what it printed.
pub fn git_ok(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = git(dir, home, args);
    assert!(
        out.status.success(),
        "git {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

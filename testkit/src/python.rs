//! The Python tools the tests and benches run beside ours (psd-tools and
//! Pillow, moto): a virtual environment made once under `target/` from a
//! pinned requirements file, and made again when that file changes. It never
//! installs anything outside that folder.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The virtual environment at `venv` with `requirements` installed; its
/// `bin/python` and the tools it installed are under it.
pub fn venv(requirements: &Path, venv: &Path) -> PathBuf {
    let stamp = venv.join("installed.txt");
    let wanted = std::fs::read_to_string(requirements).expect("the requirements");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        let run = |cmd: &mut Command| {
            let status = cmd.status().expect("python3 runs");
            assert!(status.success(), "{cmd:?} failed: {status}");
        };
        run(Command::new("python3").args(["-m", "venv"]).arg(venv));
        run(Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "--quiet"])
            .args(["--disable-pip-version-check", "-r"])
            .arg(requirements));
        std::fs::write(&stamp, wanted).expect("the stamp");
    }
    venv.to_owned()
}

//! The processes tests run beside themselves: the `leasedesk` binary and its
//! `serve` (testkit's), a Python with the preview tools, and a person's
//! ways of stopping a server and deleting a file.

/// A Python with the tools that write the preview tests' images (psd-tools,
/// Pillow, numpy), in a virtual environment made once under `target/` from
/// `tests/fixtures/requirements.txt`; `LEASEDESK_PYTHON` names another.
#[allow(dead_code)] // the preview tests are being written
pub fn python() -> std::process::Command {
    static VENV: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let interpreter = VENV.get_or_init(|| {
        if let Some(given) = std::env::var_os("LEASEDESK_PYTHON") {
            return given.into();
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        testkit::python::venv(
            &root.join("tests/fixtures/requirements.txt"),
            &root.join("target/test-python"),
        )
        .join("bin/python")
    });
    std::process::Command::new(interpreter)
}

/// The `leasedesk` binary the tests run: `LEASEDESK_BIN` when set (the
/// Windows leg runs a copy staged where Wine's user can read it), else cargo's.
pub fn leasedesk_bin() -> std::path::PathBuf {
    std::env::var_os("LEASEDESK_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_leasedesk").into(), Into::into)
}

/// A `leasedesk` command.
pub fn leasedesk() -> std::process::Command {
    std::process::Command::new(leasedesk_bin())
}

/// Whether a test can ask a server to stop as an admin would and see it stop
/// cleanly: SIGTERM on Unix. Wine cannot deliver Ctrl+Break to another
/// process group (GenerateConsoleCtrlEvent fails, with or without a
/// console), so on Windows the server is ended instead, and its clean stop is
/// a manual check (docs/WINDOWS.md).
pub const GRACEFUL_STOP: bool = cfg!(unix);

/// The `leasedesk` CLI (and its `serve`) on a data folder of its own in a
/// temp folder, where a server's log can go too (`serve_log`).
pub fn cli_in_temp_dir() -> testkit::Cli {
    testkit::Cli::in_temp_dir(leasedesk_bin())
}

/// The `leasedesk` CLI (and its `serve`) on no store yet.
pub fn cli_on() -> testkit::Cli {
    testkit::Cli::new(leasedesk_bin())
}

/// `leasedesk serve` on `cli`'s temp folder, its log in `serve.log` there.
pub fn serve_logged(cli: &testkit::Cli) -> testkit::Serve {
    cli.serve().log_to(cli.dir().join("serve.log"))
}

/// Deletes a file as a person would, read-only or not (Windows refuses to
/// delete a read-only file; Explorer asks, then clears the attribute).
pub fn delete_file(path: &std::path::Path) {
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    if cfg!(windows) && permissions.readonly() {
        #[allow(clippy::permissions_set_readonly_false)] // Windows only: one attribute
        permissions.set_readonly(false);
        std::fs::set_permissions(path, permissions).unwrap();
    }
    std::fs::remove_file(path).unwrap();
}

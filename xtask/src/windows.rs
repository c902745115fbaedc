//! Windows, from Linux: the workspace cross-built for `x86_64-pc-windows-gnu`
//! with mingw-w64, and run under Wine in a prefix of our own, as an ordinary
//! user (under Wine, root may write a read-only file, which Windows never lets
//! a user do).

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use anyhow::{bail, Context, Result};

use crate::packages::ensure_debian_packages;
use crate::suite::{echo_test_output, TestOutput};
use crate::{cargo, check, is_root, root, target_dir};

pub const TARGET: &str = "x86_64-pc-windows-gnu";

/// What builds and runs Windows programs here: mingw-w64's C compiler and
/// linker, its binutils (`windres` for the app's resources), Wine 8 to run
/// them, and NSIS to make the installer.
const PACKAGES: &[&str] = &[
    "gcc-mingw-w64-x86-64",
    "binutils-mingw-w64-x86-64",
    "wine64",
    "nsis",
];

/// Debian's wine64 package has no `wine` on the PATH.
const WINE: &str = "/usr/lib/wine/wine64";
const WINESERVER: &str = "/usr/lib/wine/wineserver";

/// The ordinary user the Windows programs run as when xtask runs as root.
const WINE_USER: &str = "leasedesk-wine";

/// Adds the Windows target and the packages that build and run for it.
pub fn ensure_toolchain() -> Result<()> {
    crate::packages::ensure_target(TARGET)?;
    ensure_debian_packages(PACKAGES)
}

/// The folder of a Windows build's binaries (debug or release).
pub fn out_dir(profile: &str) -> PathBuf {
    target_dir().join(TARGET).join(profile)
}

/// A Wine prefix of our own, ready to run Rust programs: made once (about
/// 20 s), then reused, with the stand-in for `bcryptprimitives.dll`.
pub struct Wine {
    /// Runs as this user (when we are root), else as ourselves.
    user: Option<&'static str>,
    /// That user's folder: the prefix, and the binaries staged to run.
    home: PathBuf,
}

impl Wine {
    pub fn prepare() -> Result<Self> {
        let wine = if is_root() {
            ensure_user()?;
            Wine {
                user: Some(WINE_USER),
                home: Path::new("/var/lib").join(WINE_USER),
            }
        } else {
            Wine {
                user: None,
                home: target_dir().join("wine"),
            }
        };
        std::fs::create_dir_all(&wine.home)?;
        wine.give(&wine.home)?;
        if !wine.prefix().join("system.reg").exists() {
            check(wine.command("wineboot").arg("--init"))?;
        }
        wine.install_prng_stand_in()?;
        Ok(wine)
    }

    pub fn prefix(&self) -> PathBuf {
        self.home.join("prefix")
    }

    /// The prefix's `C:\`, as a Linux folder.
    pub fn drive_c(&self) -> PathBuf {
        self.prefix().join("drive_c")
    }

    /// Runs `program` (a Windows path, a Linux path or a built-in such as
    /// `cmd`) under Wine, in the user's folder, with no display.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = self.as_user(WINE);
        cmd.arg(program)
            .current_dir(&self.home)
            .env("WINEPREFIX", self.prefix())
            .env("WINEDEBUG", "-all")
            // No Mono or Gecko: nothing here needs .NET or Wine's HTML.
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY");
        cmd
    }

    /// `tool` (Wine's own), run as the Wine user.
    fn as_user(&self, tool: &str) -> Command {
        match self.user {
            Some(user) => {
                let mut cmd = Command::new("runuser");
                cmd.args(["-u", user, "--", tool]);
                cmd
            }
            None => Command::new(tool),
        }
    }

    /// Copies `files` into a folder of the user's (emptied first), where the
    /// user can run them whatever the permissions on the way to `target/`.
    pub fn stage(&self, name: &str, files: &[PathBuf]) -> Result<PathBuf> {
        let dir = self.home.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        for file in files {
            let name = file.file_name().context("a file name")?;
            std::fs::copy(file, dir.join(name))
                .with_context(|| format!("staging {}", file.display()))?;
        }
        self.give(&dir)?;
        Ok(dir)
    }

    /// Makes `path` (and what is under it) the Wine user's.
    fn give(&self, path: &Path) -> Result<()> {
        if let Some(user) = self.user {
            check(
                Command::new("chown")
                    .args(["-R", &format!("{user}:{user}")])
                    .arg(path),
            )?;
        }
        Ok(())
    }

    /// Rust programs take their random numbers from `ProcessPrng` in
    /// `bcryptprimitives.dll`, which Wine 8.0 lacks: a small DLL of ours
    /// (`xtask/windows/bcryptprimitives.c`) stands in for it.
    fn install_prng_stand_in(&self) -> Result<()> {
        let built = target_dir().join("wine-stand-in/bcryptprimitives.dll");
        let source = root().join("xtask/windows/bcryptprimitives.c");
        let stale = |out: &Path| {
            let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
            modified(out) < modified(&source)
        };
        if stale(&built) {
            std::fs::create_dir_all(built.parent().expect("a folder"))?;
            check(
                Command::new("x86_64-w64-mingw32-gcc")
                    .args(["-O2", "-shared", "-o"])
                    .arg(&built)
                    .arg(&source)
                    .arg(root().join("xtask/windows/bcryptprimitives.def"))
                    .arg("-ladvapi32"),
            )?;
        }
        let installed = self.drive_c().join("windows/system32/bcryptprimitives.dll");
        std::fs::copy(&built, &installed)?;
        self.give(&installed)
    }

    /// A Linux path as Windows programs under Wine name it (Wine's `Z:` is `/`).
    pub fn windows_path(path: &Path) -> String {
        format!("Z:{}", path.display()).replace('/', "\\")
    }

    /// Waits for the prefix's wineserver to end (it ends once its last
    /// program has).
    pub fn wait_for_server(&self) {
        let _ = self
            .as_user(WINESERVER)
            .arg("-w")
            .env("WINEPREFIX", self.prefix())
            .status();
    }
}

impl Drop for Wine {
    /// Ends the prefix's wineserver, and with it anything a test left running.
    fn drop(&mut self) {
        let _ = self
            .as_user(WINESERVER)
            .arg("-k")
            .env("WINEPREFIX", self.prefix())
            .status();
    }
}

/// Makes the ordinary user the Windows programs run as, once.
fn ensure_user() -> Result<()> {
    let exists = Command::new("id")
        .arg(WINE_USER)
        .output()
        .is_ok_and(|o| o.status.success());
    if !exists {
        check(
            Command::new("useradd")
                .args(["--system", "--create-home", "--home-dir"])
                .arg(Path::new("/var/lib").join(WINE_USER))
                .args(["--shell", "/usr/sbin/nologin", WINE_USER]),
        )?;
    }
    Ok(())
}

/// The test executables a `cargo test --no-run` built, from its JSON messages.
fn built_test_executables(build: &mut Command) -> Result<Vec<PathBuf>> {
    build
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .stdout(Stdio::piped());
    eprintln!("$ {build:?}");
    let out = build.spawn().context("could not start cargo")?;
    let mut executables = Vec::new();
    let mut child = out;
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line?;
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if let Some(exe) = message["executable"].as_str() {
            if message["profile"]["test"].as_bool() == Some(true) {
                executables.push(PathBuf::from(exe));
            }
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("{build:?} failed with {status}");
    }
    Ok(executables)
}

/// Runs one staged test executable under Wine (`cmd` makes its command),
/// echoing its output; answers its counts and failures.
///
/// A program Wine could not start (it failed before saying how many tests
/// it runs) is run once more, once the prefix's wineserver has ended: a
/// program started just as the server of the one before it ends can die at
/// once ("wine client error:0: recvmsg: Connection reset by peer").
fn run_tests(wine: &Wine, cmd: impl Fn() -> Command) -> Result<TestOutput> {
    let (mut seen, mut status) = run_test_program(cmd())?;
    if !seen.began && !status.success() {
        eprintln!(
            "Wine did not start the program ({status}): once more, once its server has ended"
        );
        wine.wait_for_server();
        (seen, status) = run_test_program(cmd())?;
    }
    // A test program that dies (or whose Wine does) says nothing of its
    // failures: no summary is a failure, whatever the exit status.
    if !seen.summed || (!status.success() && seen.failed == 0) {
        bail!("{:?} ended ({status}) without its tests' summary", cmd());
    }
    Ok(seen)
}

fn run_test_program(mut cmd: Command) -> Result<(TestOutput, ExitStatus)> {
    cmd.stdout(Stdio::piped());
    eprintln!("$ {cmd:?}");
    let mut child = cmd.spawn().context("could not start Wine")?;
    let seen = echo_test_output(child.stdout.take().expect("piped"))?;
    Ok((seen, child.wait()?))
}

/// The Windows leg of `cargo xtask test`: the core's tests (unit, the CLI's,
/// and every integration test but those that need PostgreSQL, moto, openssl's
/// CAs or Python beside them) and the app's unit and keychain tests, built
/// for Windows and run under Wine. Answers the pass and fail counts.
pub fn test() -> Result<(u64, u64)> {
    ensure_toolchain()?;
    let executables = build_tests()?;
    let debug = out_dir("debug");
    // The CLI the tests run, and the DLL the app's binaries load.
    let mut staged = executables.clone();
    staged.push(debug.join("leasedesk.exe"));
    staged.extend(
        std::fs::read_dir(&debug)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| {
                path.extension()
                    .is_some_and(|ext| ext.eq_ignore_ascii_case("dll"))
            }),
    );
    let wine = Wine::prepare()?;
    let bin = wine.stage("tests", &staged)?;
    let mut total = TestOutput::default();
    for exe in &executables {
        let name = exe.file_name().expect("a file name");
        let cmd = || {
            let mut cmd = wine.command(bin.join(name));
            cmd.args(["--test-threads", "2"])
                // They write the UI's types into the repository: a Linux task.
                .args(["--skip", "export_bindings"])
                .env(
                    "LEASEDESK_BIN",
                    Wine::windows_path(&bin.join("leasedesk.exe")),
                )
                .env("RUST_BACKTRACE", "0");
            cmd
        };
        match run_tests(&wine, cmd) {
            Ok(seen) => total.add(seen),
            Err(e) => {
                // A program that died says nothing; the ones before it did.
                total.repeat_failures();
                return Err(e);
            }
        }
    }
    if total.failed > 0 {
        total.repeat_failures();
        bail!("{} Windows tests failed under Wine", total.failed);
    }
    // The installer of the binaries just built: installed, checked and
    // uninstalled under Wine; one test.
    let checks = crate::installer::test_installer(&wine)?;
    println!("the installer under Wine: {checks} checks passed");
    Ok((total.passed + 1, total.failed))
}

/// `cargo xtask test-installer`: the installer's test of the Windows leg
/// alone, on the binaries the leg builds (built, or found up to date).
pub fn test_installer() -> Result<u64> {
    ensure_toolchain()?;
    build_tests()?;
    let wine = Wine::prepare()?;
    crate::installer::test_installer(&wine)
}

/// Builds the Windows leg's tests, and with them the debug `leasedesk.exe`
/// and `leasedesk-app.exe` the installer packs; answers the test executables.
fn build_tests() -> Result<Vec<PathBuf>> {
    // One build, so that features unify once, as on Linux (the blobs' S3 and
    // the engine's PostgreSQL are compiled and tested here too): the layers'
    // unit tests, the CLI's and its integration tests, the app's unit and
    // keychain tests.
    let selection =
        crate::product_selection(&["--lib", "--bins", "--test", "tests", "--test", "keychain"]);
    let mut build = cargo();
    build
        .args(["test", "--target", TARGET])
        .args(selection)
        // The Windows-only branches are compiled nowhere else: their
        // warnings fail the build here, as clippy's do on Linux.
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS", "-Dwarnings");
    built_test_executables(&mut build)
}

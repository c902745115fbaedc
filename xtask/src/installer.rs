//! The Windows installer and zip, made on Linux: the app and the CLI
//! cross-built for Windows, packed by Debian's makensis with our own script
//! (`src-tauri/windows/installer.nsi`, which says why not Tauri's bundler),
//! and the CLI alone in a zip. The installer is tested under Wine: installed
//! silently, checked, uninstalled, checked again.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::packages::ensure_debian_packages;
use crate::windows::{self, out_dir, Wine, TARGET};
use crate::{cargo, check, root, target_dir};

const APP: &str = "leasedesk-app.exe";
const CLI: &str = "leasedesk.exe";
/// The WebView2 loader the app links to: webview2-com-sys's build script
/// puts it beside the app for the gnu target.
const WEBVIEW2_LOADER: &str = "WebView2Loader.dll";

const UNINSTALL_KEY: &str = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Leasedesk";
const AUMID_KEY: &str = r"HKCU\Software\Classes\AppUserModelId\dev.leasedesk.desk";
const RUN_KEY: &str = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run";
/// Invite links, `leasedesk://join?…`, open the app.
const SCHEME_KEY: &str = r"HKCU\Software\Classes\leasedesk";
/// The user's own environment variables, whose `Path` gets the installation
/// folder.
const ENV_KEY: &str = r"HKCU\Environment";
/// The user's own PATH before the install: a folder, and one written with a
/// variable, which must stay unexpanded.
const USER_PATH: &str = r"C:\Tools;%USERPROFILE%\bin";
/// An entry the user adds after installing, which the uninstaller must keep.
const LATER_ENTRY: &str = r"C:\Later";

/// Cross-builds the CLI and the app for Windows in `profile` ("release" for
/// `cargo xtask bundle`) and makes the per-user installer
/// `Leasedesk-Setup-VERSION.exe` and `leasedesk-VERSION-windows-x86_64.zip`
/// (the CLI alone); answers their paths. The app embeds `ui/dist`: build the
/// UI first.
pub fn bundle_windows(profile: &str) -> Result<Vec<PathBuf>> {
    windows::ensure_toolchain()?;
    ensure_debian_packages(&["zip"])?;
    for package in ["leasedesk", "leasedesk-app"] {
        build(profile, package)?;
    }
    let installer = make_installer(profile, "lzma")?;
    let zip = bundle_dir(profile).join(format!("leasedesk-{}-windows-x86_64.zip", app_version()?));
    let _ = std::fs::remove_file(&zip);
    // -j: the file at the zip's top level; -X: no Unix extras (owners).
    check(
        Command::new("zip")
            .args(["-j", "-X", "-q"])
            .arg(&zip)
            .arg(stage_dir(profile).join(CLI)),
    )?;
    Ok(vec![installer, zip])
}

/// Cross-builds a package's binaries with the flags of the Windows test leg
/// (`windows::test`), so that the two do not rebuild each other's.
fn build(profile: &str, package: &str) -> Result<()> {
    let mut cmd = cargo();
    cmd.args(["build", "--target", TARGET, "-p", package, "--bins"])
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS", "-Dwarnings");
    if profile == "release" {
        cmd.arg("--release");
    }
    check(&mut cmd)
}

/// The product's version: the app's, as Tauri knows it.
fn app_version() -> Result<String> {
    let path = root().join("src-tauri/tauri.conf.json");
    let config: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)
        .with_context(|| format!("reading {}", path.display()))?;
    config["version"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("no version in {}", path.display()))
}

/// Where the installer and the zip go: beside the .deb for a release, else
/// in the profile's own folder (the tests' debug installer).
fn bundle_dir(profile: &str) -> PathBuf {
    if profile == "release" {
        target_dir().join("bundle")
    } else {
        out_dir(profile).join("bundle")
    }
}

/// The binaries as packed, stripped of their debug info (as in the .deb).
fn stage_dir(profile: &str) -> PathBuf {
    out_dir(profile).join("bundle/windows")
}

/// Makes the installer of `profile`'s binaries (already built), compressed
/// with `compression` (lzma, zlib or off); answers its path.
fn make_installer(profile: &str, compression: &str) -> Result<PathBuf> {
    let version = app_version()?;
    let stage = stage_dir(profile);
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage)?;
    for name in [APP, CLI, WEBVIEW2_LOADER] {
        let built = out_dir(profile).join(name);
        std::fs::copy(&built, stage.join(name))
            .with_context(|| format!("copying {}: is it built?", built.display()))?;
    }
    check(
        Command::new("x86_64-w64-mingw32-strip")
            .arg("--strip-debug")
            .arg(stage.join(APP))
            .arg(stage.join(CLI)),
    )?;
    let installer = bundle_dir(profile).join(format!("Leasedesk-Setup-{version}.exe"));
    std::fs::create_dir_all(bundle_dir(profile))?;
    let define = |name: &str, value: &Path| {
        let mut arg = OsString::from(format!("-D{name}="));
        arg.push(value);
        arg
    };
    check(
        Command::new("makensis")
            // Warnings and errors only.
            .arg("-V2")
            .arg(format!("-DVERSION={version}"))
            .arg(format!("-DCOMPRESSION={compression}"))
            .arg(define("BIN", &stage))
            .arg(define("ICONS", &root().join("icons")))
            .arg(define("OUTFILE", &installer))
            .arg(root().join("src-tauri/windows/installer.nsi")),
    )?;
    Ok(installer)
}

/// The checks of a test, each named by what it wants: all run, and the
/// failures are told together.
#[derive(Default)]
struct Checks {
    passed: u64,
    failed: Vec<String>,
}

impl Checks {
    fn check(&mut self, ok: bool, what: impl Into<String>) {
        if ok {
            self.passed += 1;
        } else {
            self.failed.push(what.into());
        }
    }
}

/// The installer's test, under Wine: a debug installer (uncompressed, to be
/// quick) installed silently with `/AUTOSTART`, twice (an upgrade), and
/// checked (its files, the Start-menu shortcut, the registry, the user's
/// PATH, the installed CLI, found on that PATH by a new `cmd`), then
/// uninstalled silently and checked again: all gone but the user's data and
/// workspace (stand-ins written first) and the user's own PATH entries. Then
/// once more with a user PATH too long for NSIS's strings, which both must
/// leave as it is. Answers the number of checks, all passed, or fails naming
/// each that did not pass.
///
/// It packs the debug binaries `windows::test` built: its `cargo test`
/// builds leasedesk.exe and leasedesk-app.exe with the tests.
/// (A `cargo build -p leasedesk-app` would resolve features without the
/// dev-dependencies, and so build most of the tree a second time.)
pub fn test_installer(wine: &Wine) -> Result<u64> {
    let installer = make_installer("debug", "off")?;
    let version = app_version()?;
    let setup = wine.stage("installer", &[installer])?;
    let setup = setup.join(format!("Leasedesk-Setup-{version}.exe"));

    // The last test program's server ends first: a program started as it
    // ends can die at once (see `windows::run_tests`).
    wine.wait_for_server();
    let [profile, temp] = windows_folders(wine)?;
    let linux = |windows: &str| linux_path(wine, windows);
    let install = format!(r"{profile}\AppData\Local\Programs\Leasedesk");
    let shortcut =
        format!(r"{profile}\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Leasedesk.lnk");
    let log = linux(&format!(r"{temp}\Leasedesk-Setup.log"));
    // What uninstalling must keep: the user's data (the brief's names and
    // Tauri's, from the identifier) and workspace.
    let kept: Vec<PathBuf> = [
        r"AppData\Local\Leasedesk",
        r"AppData\Roaming\Leasedesk",
        r"AppData\Local\dev.leasedesk.desk",
        r"AppData\Roaming\dev.leasedesk.desk",
        "Leasedesk",
    ]
    .iter()
    .map(|dir| linux(&format!(r"{profile}\{dir}\installer-test-keep.txt")))
    .collect();

    // A run stopped half-way leaves an installation: away with it, so that
    // what is checked is this run's.
    if linux(&install).exists() {
        let _ = std::fs::remove_dir_all(linux(&install));
        let _ = std::fs::remove_file(linux(&shortcut));
        for key in [UNINSTALL_KEY, AUMID_KEY, SCHEME_KEY] {
            let _ = run_wine(wine.command("reg").args(["delete", key, "/f"]));
        }
        let _ = run_wine(
            wine.command("reg")
                .args(["delete", RUN_KEY, "/v", "Leasedesk", "/f"]),
        );
    }
    let _ = std::fs::remove_file(&log);
    let owner = std::fs::metadata(wine.drive_c())?;
    for file in &kept {
        let dir = file.parent().expect("a folder");
        std::fs::create_dir_all(dir)?;
        std::fs::write(file, "the user's, kept by the uninstaller")?;
        // The Wine user's, as their own files are: the uninstaller could
        // remove them if it tried.
        for path in [dir, file.as_path()] {
            use std::os::unix::fs::MetadataExt;
            std::os::unix::fs::chown(path, Some(owner.uid()), Some(owner.gid()))?;
        }
    }

    // The user's own PATH, which the installer adds to.
    set_user_path(wine, Some(USER_PATH))?;

    let mut checks = Checks::default();
    let started = Instant::now();
    let status = run_wine(wine.command(&setup).args(["/S", "/AUTOSTART"]))?;
    checks.check(status, "the silent install succeeds");
    eprintln!(
        "installed under Wine in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let with_ours = format!("{USER_PATH};{install}");
    check_user_path(wine, &mut checks, "after the install", Some(&with_ours));
    // A new Wine process, like a new terminal, takes the user's PATH from
    // the registry (after the system's).
    let (out, said) = wine_output(
        wine.command("cmd").args(["/c", "leasedesk", "--version"]),
        "running leasedesk from the PATH",
    )?;
    checks.check(
        says_version(&out, &said, &version),
        format!(
            "`cmd /c leasedesk --version` in a new process finds the installed CLI on the user's PATH (said {said:?}, {:?})",
            String::from_utf8_lossy(&out.stderr)
        ),
    );
    // Installed again over the first (an upgrade): the PATH is not touched.
    let status = run_wine(wine.command(&setup).args(["/S", "/AUTOSTART"]))?;
    checks.check(status, "a second silent install over the first succeeds");
    check_user_path(
        wine,
        &mut checks,
        "after a second install",
        Some(&with_ours),
    );
    for name in [APP, CLI, WEBVIEW2_LOADER, "leasedesk.png", "uninstall.exe"] {
        checks.check(
            linux(&install).join(name).is_file(),
            format!(r"{install}\{name} is installed"),
        );
    }
    let lnk = std::fs::read(linux(&shortcut)).unwrap_or_default();
    checks.check(
        contains_text(&lnk, &format!(r"{install}\{APP}")),
        format!("the Start-menu shortcut {shortcut} opens {APP}"),
    );
    let uninstall = reg_query(wine, UNINSTALL_KEY, None);
    for (name, value) in [
        ("DisplayName", "Leasedesk".to_owned()),
        ("DisplayVersion", version.clone()),
        ("Publisher", "Leasedesk".to_owned()),
        ("InstallLocation", install.clone()),
        ("DisplayIcon", format!(r#""{install}\{APP}",0"#)),
        ("UninstallString", format!(r#""{install}\uninstall.exe""#)),
        (
            "QuietUninstallString",
            format!(r#""{install}\uninstall.exe" /S"#),
        ),
        ("NoModify", "0x1".to_owned()),
        ("NoRepair", "0x1".to_owned()),
    ] {
        checks.check(
            reg_value(&uninstall, name) == Some(value.as_str()),
            format!(
                r"{UNINSTALL_KEY}\{name} is {value} (found {:?})",
                reg_value(&uninstall, name)
            ),
        );
    }
    let aumid = reg_query(wine, AUMID_KEY, None);
    for (name, value) in [
        ("DisplayName", "Leasedesk".to_owned()),
        ("IconUri", format!(r"{install}\leasedesk.png")),
    ] {
        checks.check(
            reg_value(&aumid, name) == Some(value.as_str()),
            format!(
                r"{AUMID_KEY}\{name} is {value} (found {:?})",
                reg_value(&aumid, name)
            ),
        );
    }
    // As text: how reg.exe prints an empty value and the default one varies.
    let scheme = reg_query(wine, SCHEME_KEY, None).unwrap_or_default();
    checks.check(
        scheme.contains("URL Protocol"),
        format!(r"{SCHEME_KEY} is a URL scheme (found {scheme:?})"),
    );
    let open = reg_query(wine, &format!(r"{SCHEME_KEY}\shell\open\command"), None);
    let command = format!(r#""{install}\{APP}" "%1""#);
    checks.check(
        open.as_deref().unwrap_or_default().contains(&command),
        format!(r"leasedesk:// links open {command} (found {open:?})"),
    );
    let run = reg_query(wine, RUN_KEY, Some("Leasedesk"));
    let autostart = format!(r#""{install}\{APP}""#);
    checks.check(
        reg_value(&run, "Leasedesk") == Some(autostart.as_str()),
        format!(
            r"/AUTOSTART sets {RUN_KEY}\Leasedesk to {autostart} (found {:?})",
            reg_value(&run, "Leasedesk")
        ),
    );
    let (out, said) = wine_output(
        wine.command(format!(r"{install}\{CLI}")).arg("--version"),
        "running the installed CLI",
    )?;
    checks.check(
        says_version(&out, &said, &version),
        format!("the installed CLI's --version says \"leasedesk {version}\" (said {said:?})"),
    );
    // Wine has no WebView2 Runtime, and the network is shut: the fetch fails,
    // is logged, and the install goes on (its files are checked above).
    let logged = std::fs::read(&log).unwrap_or_default();
    checks.check(
        contains_text(&logged, "No WebView2 Runtime")
            && contains_text(&logged, "Could not download the WebView2 Runtime"),
        format!(
            "the install logs the missing WebView2 Runtime and the failed fetch in {}",
            log.display()
        ),
    );
    // Wine keeps no AppUserModelID in a shortcut, but the calls must succeed.
    checks.check(
        !contains_text(&logged, "Could not give the shortcut its AppUserModelID"),
        "the shortcut's AppUserModelID is set without error",
    );
    for said in [
        format!("Added {install} to your PATH"),
        format!("{install} is on your PATH already"),
    ] {
        checks.check(
            contains_text(&logged, &said),
            format!("the installs log \"{said}\" in {}", log.display()),
        );
    }

    // The user adds a folder after ours, which the uninstaller must keep, in
    // its place.
    set_user_path(wine, Some(&format!("{with_ours};{LATER_ENTRY}")))?;
    let status = run_uninstaller(wine, &install)?;
    checks.check(status, "the silent uninstall starts");
    let left: Vec<String> = std::fs::read_dir(linux(&install))
        .map(|dir| {
            dir.filter_map(|entry| Some(entry.ok()?.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    checks.check(
        !linux(&install).exists(),
        format!("the uninstaller removes {install} (still there, with {left:?})"),
    );
    checks.check(
        !linux(&shortcut).exists(),
        format!("the uninstaller removes {shortcut}"),
    );
    for key in [UNINSTALL_KEY, AUMID_KEY, SCHEME_KEY] {
        checks.check(
            reg_query(wine, key, None).is_none(),
            format!("the uninstaller removes {key}"),
        );
    }
    checks.check(
        reg_query(wine, RUN_KEY, Some("Leasedesk")).is_none(),
        format!(r"the uninstaller removes {RUN_KEY}\Leasedesk"),
    );
    check_user_path(
        wine,
        &mut checks,
        "after the uninstall",
        Some(&format!("{USER_PATH};{LATER_ENTRY}")),
    );
    for file in &kept {
        checks.check(
            file.is_file(),
            format!("the uninstaller keeps the user's {}", file.display()),
        );
        // The stand-ins go; a folder that held more is the tests' own, and stays.
        let _ = std::fs::remove_file(file);
        let _ = std::fs::remove_dir(file.parent().expect("a folder"));
    }

    // A PATH longer than NSIS's strings (1024 characters) cannot be read
    // whole: the installer must leave it as it is rather than cut it, and so
    // must the uninstaller, though our folder is in it.
    let long_path: String = (0..100)
        .map(|i| format!(r"C:\Tools\{i:03};"))
        .chain([install.clone()])
        .collect();
    let size = long_path.len();
    set_user_path(wine, Some(&long_path))?;
    let _ = std::fs::remove_file(&log);
    let status = run_wine(wine.command(&setup).arg("/S"))?;
    checks.check(status, "the silent install beside a long PATH succeeds");
    check_user_path(
        wine,
        &mut checks,
        &format!("after an install beside a PATH of {size} characters"),
        Some(&long_path),
    );
    let status = run_uninstaller(wine, &install)?;
    checks.check(status, "the silent uninstall beside a long PATH starts");
    checks.check(
        !linux(&install).exists(),
        format!("the uninstaller beside a long PATH removes {install}"),
    );
    check_user_path(
        wine,
        &mut checks,
        &format!("after an uninstall beside a PATH of {size} characters"),
        Some(&long_path),
    );
    let logged = std::fs::read(&log).unwrap_or_default();
    for said in [
        "too long for this installer to change safely",
        "too long for this uninstaller to change safely",
    ] {
        checks.check(
            contains_text(&logged, said),
            format!(
                "beside a long PATH, the log says it is \"{said}\" in {}",
                log.display()
            ),
        );
    }
    // The prefix is the tests' own, and wineboot gives its user no PATH.
    set_user_path(wine, None)?;

    if !checks.failed.is_empty() {
        bail!(
            "the installer under Wine: {} of {} checks failed:\n  {}",
            checks.failed.len(),
            checks.passed + checks.failed.len() as u64,
            checks.failed.join("\n  ")
        );
    }
    Ok(checks.passed)
}

/// Runs the installation's uninstaller silently, and waits for it. It copies
/// itself to %TEMP% and returns at once; the copy removes the installation
/// folder last. Answers whether it started.
fn run_uninstaller(wine: &Wine, install: &str) -> Result<bool> {
    let started = Instant::now();
    let status = run_wine(wine.command(format!(r"{install}\uninstall.exe")).arg("/S"))?;
    while linux_path(wine, install).exists() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "uninstalled under Wine in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(status)
}

/// Sets the user's own PATH (HKCU\Environment\Path) as Windows keeps it, a
/// REG_EXPAND_SZ, or removes it (None).
fn set_user_path(wine: &Wine, value: Option<&str>) -> Result<()> {
    let mut cmd = wine.command("reg");
    match value {
        Some(value) => cmd
            .args(["add", ENV_KEY, "/v", "Path", "/t", "REG_EXPAND_SZ", "/d"])
            .arg(value),
        None => cmd.args(["delete", ENV_KEY, "/v", "Path"]),
    };
    cmd.arg("/f");
    let out = cmd.output().context("setting the user's PATH")?;
    // Deleting a value that is not there fails, and is fine.
    if value.is_some() && !out.status.success() {
        bail!("could not set the user's PATH under Wine: {out:?}");
    }
    Ok(())
}

/// Checks that the user's PATH is `want` (None: there is none), and a
/// REG_EXPAND_SZ, so that its variables are expanded.
fn check_user_path(wine: &Wine, checks: &mut Checks, when: &str, want: Option<&str>) {
    // Asked again a few times before it counts as wrong: now and then a
    // Wine process fails to start on a loaded machine, and `reg` with it.
    let wanted = |found: Option<(&str, &str)>| match want {
        Some(want) => found == Some(("REG_EXPAND_SZ", want)),
        None => found.is_none(),
    };
    let mut query = reg_query(wine, ENV_KEY, Some("Path"));
    for _ in 0..4 {
        if wanted(reg_entry(&query, "Path")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
        query = reg_query(wine, ENV_KEY, Some("Path"));
    }
    let found = reg_entry(&query, "Path");
    match want {
        Some(want) => checks.check(
            found == Some(("REG_EXPAND_SZ", want)),
            format!(r"{when}, {ENV_KEY}\Path is the REG_EXPAND_SZ {want:?} (found {found:?})"),
        ),
        None => checks.check(
            found.is_none(),
            format!(r"{when}, there is no {ENV_KEY}\Path (found {found:?})"),
        ),
    }
}

/// Runs a Wine command, echoed, with no Linux menu entries made for its
/// shortcuts (winemenubuilder), and answers whether it succeeded.
fn run_wine(cmd: &mut Command) -> Result<bool> {
    cmd.env("WINEDLLOVERRIDES", "mscoree,mshtml=;winemenubuilder.exe=d");
    eprintln!("$ {cmd:?}");
    Ok(cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?
        .success())
}

/// Runs `cmd` (under Wine) to its end: its output, and its stdout as text.
/// `what` says what it is for, if it cannot start.
fn wine_output(cmd: &mut Command, what: &'static str) -> Result<(Output, String)> {
    let out = cmd.output().context(what)?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok((out, stdout))
}

/// Whether a `leasedesk --version` that printed `said` succeeded and named
/// `version`.
fn says_version(out: &Output, said: &str, version: &str) -> bool {
    out.status.success() && said.trim().starts_with("leasedesk ") && said.contains(version)
}

/// The Wine user's profile and temporary folders, as Windows names them
/// (`C:\users\NAME`, ...).
fn windows_folders(wine: &Wine) -> Result<[String; 2]> {
    let (_, text) = wine_output(
        wine.command("cmd")
            .args(["/c", "echo", "%USERPROFILE%;%TEMP%"]),
        "asking Wine for the user's folders",
    )?;
    match text.trim().split_once(';') {
        Some((profile, temp)) if profile.starts_with(r"C:\") && temp.starts_with(r"C:\") => {
            Ok([profile.to_owned(), temp.to_owned()])
        }
        _ => bail!("Wine's %USERPROFILE% and %TEMP% are {text:?}, not folders on C:"),
    }
}

/// A `C:\...` path of the prefix as a Linux path.
fn linux_path(wine: &Wine, windows: &str) -> PathBuf {
    let rest = windows.get(3..).unwrap_or_default();
    rest.split('\\')
        .fold(wine.drive_c(), |path, part| path.join(part))
}

/// `reg query KEY [/v NAME]`'s output, or None when there is no such key
/// (or value).
fn reg_query(wine: &Wine, key: &str, value: Option<&str>) -> Option<String> {
    let mut cmd = wine.command("reg");
    cmd.args(["query", key]);
    if let Some(name) = value {
        cmd.args(["/v", name]);
    }
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A value's data in `reg query`'s output ("    NAME    REG_SZ    DATA").
fn reg_value<'a>(query: &'a Option<String>, name: &str) -> Option<&'a str> {
    reg_entry(query, name).map(|(_kind, data)| data)
}

/// A value's type and data in `reg query`'s output.
fn reg_entry<'a>(query: &'a Option<String>, name: &str) -> Option<(&'a str, &'a str)> {
    query.as_deref()?.lines().find_map(|line| {
        let (found, rest) = line.trim_start().split_once("    ")?;
        let (kind, data) = rest.split_once("    ")?;
        (found == name).then(|| (kind, data.trim_end_matches('\r')))
    })
}

/// Whether `bytes` hold `text`, in UTF-16LE (Windows' strings) or in ASCII,
/// ignoring case (Windows' paths do).
fn contains_text(bytes: &[u8], text: &str) -> bool {
    let lower = |b: &[u8]| b.to_ascii_lowercase();
    let haystack = lower(bytes);
    let ascii = lower(text.as_bytes());
    let utf16: Vec<u8> = text
        .to_ascii_lowercase()
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    [ascii, utf16].iter().any(|needle| {
        haystack
            .windows(needle.len())
            .any(|w| w == needle.as_slice())
    })
}

//! The Blender add-on in real Blender (Debian's, headless), against the real
//! app under the test's virtual display, both run as an ordinary user: root
//! may write a read-only file, and would hide the lock the add-on explains.
//! The scenario itself is `plugins/blender/tests/in_blender.py`; this sets
//! the stage (the user, the app's home, the files, bob's check-out), runs
//! it, and checks what it did through the CLI.
#![cfg(target_os = "linux")]

#[path = "../window/group.rs"]
mod group;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use group::KilledGroup;

/// The ordinary user the app and Blender run as when the tests run as root.
const DESIGNER: &str = "leasedesk-designer";

#[test]
fn the_blender_add_on_works_the_app_from_inside_blender() {
    let stage = Stage::new();
    for (repo_path, who) in [
        ("scenes/hero.blend", "alice"),
        ("scenes/held.blend", "alice"),
    ] {
        let seed = stage.home.join("seed.blend");
        stage.blender_expr(&format!(
            "import bpy; bpy.ops.wm.save_as_mainfile(filepath={:?})",
            seed.to_str().unwrap()
        ));
        stage.cli(who, &["import", repo_path, seed.to_str().unwrap()]);
        std::fs::remove_file(&seed).unwrap();
    }
    stage.cli(
        "bob",
        &["checkout", "scenes/held.blend", "--note", "retouching"],
    );

    let app = stage.start_app();
    let figures = stage.blender_scenario("running");
    let history = stage.cli("alice", &["--json", "versions", "scenes/hero.blend"]);
    assert!(
        String::from_utf8_lossy(&history).contains("the new sky"),
        "the check-in's description is version 2's: {}",
        String::from_utf8_lossy(&history)
    );
    let requests = stage.cli("bob", &["--json", "requests"]);
    assert!(
        String::from_utf8_lossy(&requests).contains("may I have it for the render?"),
        "bob was asked from Blender: {}",
        String::from_utf8_lossy(&requests)
    );
    println!("figures with the app running: {figures}");
    assert!(figures["main_thread_ms_max"].as_f64().unwrap() < 16.0);

    // What Settings' "Install the Blender add-on" does: Blender installs and
    // enables it in the user's own preferences, which keep it.
    let scratch = stage.home.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    stage.own(&scratch);
    leasedesk_plugin_api::blender::install_with(stage.command("blender"), &scratch).unwrap();
    let mut enabled = stage.command("blender");
    enabled.args([
        "--background",
        "--python-exit-code",
        "1",
        "--python-expr",
        "import bpy, sys; sys.exit(0 if 'leasedesk' in bpy.context.preferences.addons else 3)",
    ]);
    succeeded(&mut enabled, "the add-on enabled in the user's Blender");

    drop(app);
    let stopped = stage.blender_scenario("stopped");
    println!("figures with the app stopped: {stopped}");
    assert!(stopped["not_running_said_ms"].as_f64().unwrap() < 3000.0);
}

/// The app's home, the binaries and the add-on, all the designer's.
struct Stage {
    home: PathBuf,
    user: Option<&'static str>,
    _dir: tempfile::TempDir,
}

impl Stage {
    fn new() -> Self {
        let user = running_as_root().then(ensure_designer);
        // Under /tmp: the designer must reach it whatever the way to target/ allows.
        let dir = tempfile::Builder::new()
            .prefix("leasedesk-blender-")
            .tempdir_in("/tmp")
            .unwrap();
        let home = dir.path().to_owned();
        let bin = home.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(
            env!("CARGO_BIN_EXE_leasedesk-app"),
            bin.join("leasedesk-app"),
        )
        .unwrap();
        std::fs::copy(tool("LEASEDESK_BIN"), bin.join("leasedesk")).unwrap();
        std::fs::create_dir_all(home.join("config")).unwrap();
        std::fs::create_dir_all(home.join("outside")).unwrap();
        let settings = serde_json::json!({
            "backend": "bundled",
            "workspace": home.join("Leasedesk"),
            "display_name": "alice",
        });
        std::fs::write(home.join("config/settings.json"), settings.to_string()).unwrap();
        zip_add_on(&home.join("leasedesk-blender.zip"));
        // The display's cookie, for a user who cannot read root's.
        if let Some(auth) = std::env::var_os("XAUTHORITY") {
            std::fs::copy(auth, home.join(".Xauthority")).unwrap();
        }
        let stage = Self {
            home,
            user,
            _dir: dir,
        };
        stage.own(&stage.home);
        stage
    }

    /// Makes `path` (and what is in it) the designer's.
    fn own(&self, path: &Path) {
        if let Some(user) = self.user {
            let owned = Command::new("chown")
                .args(["-R", &format!("{user}:{user}")])
                .arg(path)
                .status()
                .unwrap();
            assert!(owned.success());
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
    }

    /// `program` as the designer, with the app's home and the display.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = match self.user {
            // runuser sets HOME to the user's own: `env` sets it back to
            // the stage's, so each run starts with a Blender of its own.
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--", "env"]);
                command
                    .arg(format!("HOME={}", self.home.display()))
                    .arg(program);
                command
            }
            None => Command::new(program),
        };
        command
            .env("HOME", &self.home)
            .env("LEASEDESK_APP_HOME", &self.home)
            .env("XAUTHORITY", self.home.join(".Xauthority"))
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_RUNTIME_DIR")
            .current_dir(&self.home);
        command
    }

    fn cli(&self, who: &str, args: &[&str]) -> Vec<u8> {
        let store = self.home.join("data/store");
        let mut command = self.command(self.home.join("bin/leasedesk"));
        command
            .arg("--data")
            .arg(&store)
            .args(["--as", &format!("user:{who}")])
            .args(args);
        succeeded(&mut command, &format!("leasedesk {args:?}")).stdout
    }

    fn blender(&self) -> Command {
        let mut command = self.command("blender");
        command.args(["--background", "--factory-startup"]);
        command
    }

    fn blender_expr(&self, expression: &str) {
        let mut command = self.blender();
        command.args(["--python-exit-code", "1", "--python-expr", expression]);
        succeeded(&mut command, "blender");
    }

    /// Runs `in_blender.py`'s `scenario`; its figures.
    fn blender_scenario(&self, scenario: &str) -> serde_json::Value {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/blender/tests/in_blender.py");
        let staged = self.home.join("in_blender.py");
        std::fs::copy(script, &staged).unwrap();
        let mut command = self.blender();
        command
            .args(["--python-exit-code", "1", "--python"])
            .arg(&staged)
            .arg("--")
            .arg(scenario)
            .arg(self.home.join("leasedesk-blender.zip"))
            .arg(self.home.join("Leasedesk"))
            .arg(self.home.join("outside"));
        let output = succeeded(&mut command, &format!("blender, {scenario}"));
        let said = String::from_utf8_lossy(&output.stdout);
        let figures = said
            .lines()
            .find_map(|line| line.strip_prefix("LEASEDESK-FIGURES "))
            .unwrap_or_else(|| panic!("no figures from Blender:\n{said}"));
        serde_json::from_str(figures).unwrap()
    }

    /// The app, on a session bus of its own, once its local API answers.
    fn start_app(&self) -> KilledGroup {
        let log = std::fs::File::create(self.home.join("app.log")).unwrap();
        let mut command = self.command("dbus-run-session");
        command
            .arg("--")
            .arg(self.home.join("bin/leasedesk-app"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0);
        let app = KilledGroup(command.spawn().unwrap());
        let discovery = self.home.join("data/plugin-api.json");
        let started = Instant::now();
        while !discovery.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the app wrote no plugin-api.json within 60 s: {}",
                std::fs::read_to_string(self.home.join("app.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        app
    }
}

/// The add-on as `cargo xtask bundle` packs it: the `leasedesk` folder.
fn zip_add_on(to: &Path) {
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/blender");
    let zipped = Command::new("python3")
        .args([
            "-c",
            "import shutil, sys; shutil.make_archive(sys.argv[1], 'zip', sys.argv[2], 'leasedesk')",
        ])
        .arg(to.with_extension(""))
        .arg(&plugins)
        .status()
        .unwrap();
    assert!(zipped.success());
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// The ordinary user, made once.
fn ensure_designer() -> &'static str {
    let exists = Command::new("id")
        .arg(DESIGNER)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !exists {
        let made = Command::new("useradd")
            // A home of its own: parts of the desktop look there, not at $HOME.
            .args(["--system", "--create-home", "--home-dir"])
            .arg(Path::new("/var/lib").join(DESIGNER))
            .args(["--shell", "/usr/sbin/nologin", DESIGNER])
            .status()
            .unwrap();
        assert!(made.success(), "useradd {DESIGNER}");
    }
    DESIGNER
}

fn tool(var: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: run the Blender test through `cargo xtask test`")
    })
}

fn succeeded(command: &mut Command, what: &str) -> Output {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

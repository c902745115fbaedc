//! Leasedesk on sample data: `cargo xtask run` (the app on a seeded demo
//! store), `seed-demo` (that store alone) and `cli-demo` (the CLI's session on
//! a temporary data folder). They only write into the target folder, a
//! temporary folder or the folder they are given, never into the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::packages::{ensure_debian_packages, APP_PACKAGES};
use crate::ui::{build_ui, ui_types, GENERATED_TYPES};
use crate::{build_binaries, cargo, check, demo, root, target_dir, warn_if_disk_is_low};

/// A short demonstration of the CLI on a temporary data folder.
pub fn cli_demo() -> Result<()> {
    check(cargo().args(["build", "--quiet", "--bin", "leasedesk"]))?;
    let bin = target_dir().join("debug/leasedesk");
    let demo = std::env::temp_dir().join(format!("leasedesk-demo-{}", std::process::id()));
    std::fs::create_dir_all(&demo)?;
    let data = demo.join("data");
    let file = demo.join("hero.psd");
    std::fs::write(&file, b"a layered poster, version 1")?;
    let file = file.to_str().context("a UTF-8 temp path")?;

    let steps: &[(&str, &[&str])] = &[
        ("user:admin", &["user", "add", "admin", "--admin"]),
        ("user:alice", &["import", "brand/hero.psd", file]),
        (
            "user:alice",
            &[
                "checkout",
                "brand/hero.psd",
                "--note",
                "retouching the sky",
                "--ttl",
                "2h",
            ],
        ),
        ("user:bob", &["checkout", "brand/hero.psd"]),
        ("user:bob", &["who", "brand/hero.psd"]),
        ("user:alice", &["checkin", "brand/hero.psd", file]),
        (
            "user:bob",
            &["checkout", "brand/hero.psd", "--note", "print crop"],
        ),
        ("user:bob", &["ls"]),
        ("user:bob", &["cancel", "brand/hero.psd"]),
        ("user:bob", &["events"]),
    ];
    for (who, args) in steps {
        if args.first() == Some(&"checkin") {
            std::fs::write(file, b"a layered poster, version 2")?;
        }
        println!("\n$ leasedesk --as {who} {}", args.join(" "));
        let out = Command::new(&bin)
            .arg("--data")
            .arg(&data)
            .args(["--as", who])
            .args(*args)
            .output()?;
        print!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            println!("(exit code {})", out.status.code().unwrap_or(-1));
        }
    }
    println!(
        "\nThe data folder is {}. Try: {} --data {} --help",
        data.display(),
        bin.display(),
        data.display()
    );
    Ok(())
}

/// Installs what the app needs, builds it, and opens it on the bundled
/// backend with a sample workspace (kept in `target/demo-home`, seeded once
/// with a few files, one of them held by a colleague).
pub fn run() -> Result<()> {
    warn_if_disk_is_low();
    ensure_debian_packages(APP_PACKAGES)?;
    // The app's crate embeds ui/dist, so the types are made after a first
    // build of the window, which is then built again with them.
    build_ui()?;
    ui_types(&root().join(GENERATED_TYPES))?;
    build_ui()?;
    build_binaries()?;
    let home = target_dir().join("demo-home");
    let store = home.join("data/store");
    if !store.exists() {
        seed_demo(&home, &store)?;
    }
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        bail!(
            "no display: run this from a desktop session (or under `xvfb-run -a cargo xtask run` to try it headless)"
        );
    }
    eprintln!(
        "Leasedesk opens on the bundled backend; its workspace is {}",
        home.join("Leasedesk").display()
    );
    check(Command::new(target_dir().join("debug/leasedesk-app")).env("LEASEDESK_APP_HOME", &home))
}

/// `cargo xtask seed-demo DIR`: the demo's store and settings in DIR (a
/// fresh folder), without the app: to look at it with the CLI, or to run the
/// app on it with `LEASEDESK_APP_HOME=DIR`.
pub fn seed_demo_into(args: &[String]) -> Result<()> {
    let Some(home) = args.first().map(PathBuf::from) else {
        bail!("usage: cargo xtask seed-demo DIR");
    };
    if home.join("data/store").exists() {
        bail!("{} already holds a demo store", home.display());
    }
    check(cargo().args(["build", "-p", "leasedesk", "--bin", "leasedesk"]))?;
    seed_demo(&home, &home.join("data/store"))
}

/// A sample store: a design team's files with real images (made by
/// `demo`), each with a few described versions; one held by bob with a note;
/// and one open proposal of yours (your lease was broken, bob committed, and
/// your late check-in was kept against his version).
fn seed_demo(home: &Path, store: &Path) -> Result<()> {
    let cli = target_dir().join("debug/leasedesk");
    let incoming = home.join("incoming");
    std::fs::create_dir_all(&incoming)?;
    let name = std::env::var("USER").unwrap_or_else(|_| "me".into());
    let me = format!("user:{name}");
    let leasedesk = |who: &str, args: &[&str]| {
        check(
            Command::new(&cli)
                .arg("--data")
                .arg(store)
                .args(["--as", who])
                .args(args),
        )
    };
    let mut made = 0;
    let mut file = |bytes: Vec<u8>, path: &str| -> Result<String> {
        made += 1;
        let file = incoming.join(format!("{made}-{}", path.replace('/', "-")));
        std::fs::write(&file, bytes)?;
        Ok(file.to_str().context("UTF-8 path")?.to_owned())
    };
    leasedesk("user:admin", &["user", "add", "admin", "--admin"])?;
    type Make = fn(u32) -> Vec<u8>;
    let files: [(&str, &str, Make, &[&str]); 5] = [
        (
            "brand/hero.psd",
            "user:bob",
            |v| demo::psd(640, 400, v),
            &[
                "First layout: sky and sea",
                "Warmer sunset",
                "Sun raised for the title",
            ],
        ),
        (
            "brand/logo.svg",
            "user:carol",
            demo::svg,
            &["Logo sketch", "Brand blue, turned mark"],
        ),
        (
            "web/banner.png",
            &*me,
            |v| demo::png(720, 240, v),
            &["Banner for the launch page", "Evening colours"],
        ),
        (
            "scenes/shot-010.blend",
            "user:bob",
            |v| demo::blend(128, 96, v),
            &["Blocking of the night scene", "First light pass"],
        ),
        (
            "print/brochure.indd",
            &*me,
            |v| format!("sample InDesign file, version {v}\n").into_bytes(),
            &["Brochure, first draft"],
        ),
    ];
    for (path, who, make, messages) in files {
        let first = file(make(1), path)?;
        leasedesk(who, &["import", path, &first, "-m", messages[0]])?;
        for (n, message) in messages.iter().enumerate().skip(1) {
            leasedesk(who, &["checkout", path])?;
            let next = file(make(n as u32 + 1), path)?;
            leasedesk(who, &["checkin", path, &next, "-m", message])?;
        }
    }
    // The proposal: your check-out of the banner is broken for bob, who
    // commits; your check-in then is kept as a proposal against his version.
    let banner = "web/banner.png";
    leasedesk(&me, &["checkout", banner, "--note", "bolder type"])?;
    leasedesk(
        "user:admin",
        &[
            "break",
            banner,
            "--reason",
            "bob needs the banner for today's launch",
        ],
    )?;
    leasedesk("user:bob", &["checkout", banner])?;
    let bobs = file(demo::png(720, 240, 3), banner)?;
    leasedesk(
        "user:bob",
        &["checkin", banner, &bobs, "-m", "Launch date added"],
    )?;
    let yours = file(demo::png(720, 240, 4), banner)?;
    leasedesk(&me, &["checkin", banner, &yours, "-m", "Bolder colours"])?;
    leasedesk(
        "user:bob",
        &[
            "checkout",
            "scenes/shot-010.blend",
            "--note",
            "relighting the night scene",
            "--ttl",
            "3h",
        ],
    )?;
    std::fs::create_dir_all(home.join("config"))?;
    std::fs::write(
        home.join("config/settings.json"),
        format!(
            "{{\"backend\":\"bundled\",\"workspace\":{:?},\"display_name\":{name:?}}}",
            home.join("Leasedesk").to_string_lossy()
        ),
    )?;
    Ok(())
}

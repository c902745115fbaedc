//! `cargo xtask bundle`: the installable packages, offline: the Linux `.deb`
//! (laid out here, packed by `dpkg-deb`) and the Windows installer and zip
//! (`installer`). It packs release builds; it never changes what they contain.

use std::process::Command;

use anyhow::Result;

use crate::packages::{ensure_debian_packages, APP_PACKAGES};
use crate::ui::build_ui;
use crate::{cargo, check, installer, root, target_dir};

/// Builds an installable `.deb` of the app, offline: a release build laid out
/// with its desktop entry and icons, packed by `dpkg-deb`.
pub fn bundle() -> Result<()> {
    ensure_debian_packages(APP_PACKAGES)?;
    build_ui()?;
    check(cargo().args([
        "build",
        "--release",
        "-p",
        "leasedesk",
        "--bin",
        "leasedesk",
    ]))?;
    check(cargo().args(["build", "--release", "-p", "leasedesk-app"]))?;
    let version = env!("CARGO_PKG_VERSION");
    let stage = target_dir().join("bundle/leasedesk");
    let _ = std::fs::remove_dir_all(&stage);
    let bin = stage.join("usr/bin");
    std::fs::create_dir_all(&bin)?;
    std::fs::copy(
        target_dir().join("release/leasedesk-app"),
        bin.join("leasedesk-app"),
    )?;
    std::fs::copy(
        target_dir().join("release/leasedesk"),
        bin.join("leasedesk"),
    )?;
    // The release profile keeps line tables for profiling; a package does not need them.
    check(
        Command::new("strip")
            .arg("--strip-debug")
            .arg(bin.join("leasedesk-app"))
            .arg(bin.join("leasedesk")),
    )?;
    for (size, file) in [
        ("32x32", "32x32.png"),
        ("128x128", "128x128.png"),
        ("256x256", "128x128@2x.png"),
        ("512x512", "icon.png"),
    ] {
        let dir = stage.join(format!("usr/share/icons/hicolor/{size}/apps"));
        std::fs::create_dir_all(&dir)?;
        std::fs::copy(root().join("icons").join(file), dir.join("leasedesk.png"))?;
    }
    let applications = stage.join("usr/share/applications");
    std::fs::create_dir_all(&applications)?;
    std::fs::write(
        applications.join("leasedesk.desktop"),
        "[Desktop Entry]\nType=Application\nName=Leasedesk\nComment=Check files out, see who holds what, check in\nExec=leasedesk-app %u\nIcon=leasedesk\nCategories=Graphics;Office;\nMimeType=x-scheme-handler/leasedesk;\nStartupNotify=true\n",
    )?;
    let control = stage.join("DEBIAN");
    std::fs::create_dir_all(&control)?;
    std::fs::write(
        control.join("control"),
        format!(
            "Package: leasedesk\nVersion: {version}\nArchitecture: amd64\nMaintainer: Leasedesk <team@leasedesk.invalid>\nDepends: libwebkit2gtk-4.1-0, libgtk-3-0, libayatana-appindicator3-1\nSection: graphics\nPriority: optional\nDescription: One writer at a time for files that cannot be merged\n Check files out from the tray, see who holds what, check in by upload.\n"
        ),
    )?;
    let deb = target_dir().join(format!("bundle/leasedesk_{version}_amd64.deb"));
    check(
        Command::new("dpkg-deb")
            .args(["--build", "--root-owner-group"])
            .arg(&stage)
            .arg(&deb),
    )?;
    println!("{}", deb.display());
    println!("{}", blender_add_on()?.display());
    // Windows: the installer and the CLI's zip, cross-built.
    for path in installer::bundle_windows("release")? {
        println!("{}", path.display());
    }
    Ok(())
}

/// `leasedesk-blender-VERSION.zip`: the add-on's `leasedesk` folder, as
/// Blender's "Install from disk" takes it (the app builds the same zip for
/// Settings' "Install the Blender add-on").
pub fn blender_add_on() -> Result<std::path::PathBuf> {
    ensure_debian_packages(&["zip"])?;
    let version = env!("CARGO_PKG_VERSION");
    let zip = target_dir().join(format!("bundle/leasedesk-blender-{version}.zip"));
    std::fs::create_dir_all(target_dir().join("bundle"))?;
    let _ = std::fs::remove_file(&zip);
    // -X: no Unix extras (owners); no caches Python may have left.
    check(
        Command::new("zip")
            .current_dir(root().join("plugins/blender"))
            .args(["-r", "-X"])
            .arg(&zip)
            .args(["leasedesk", "-x", "*__pycache__*"]),
    )?;
    Ok(zip)
}

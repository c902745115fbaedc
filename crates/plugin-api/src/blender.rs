//! The Blender add-on as the app offers it (Settings, "Install the Blender
//! add-on"): its files, built into the app, packed as the zip Blender's
//! "Install from disk" takes, and installed by Blender itself.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The add-on's files, under the `leasedesk/` folder of its zip.
const FILES: [(&str, &[u8]); 3] = [
    (
        "__init__.py",
        include_bytes!("../../../plugins/blender/leasedesk/__init__.py"),
    ),
    (
        "client.py",
        include_bytes!("../../../plugins/blender/leasedesk/client.py"),
    ),
    (
        "blender_manifest.toml",
        include_bytes!("../../../plugins/blender/leasedesk/blender_manifest.toml"),
    ),
];

/// The add-on's zip.
pub fn add_on_zip() -> std::io::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in FILES {
        zip.start_file(format!("leasedesk/{name}"), options)
            .map_err(std::io::Error::other)?;
        zip.write_all(bytes)?;
    }
    Ok(zip.finish().map_err(std::io::Error::other)?.into_inner())
}

/// Blender on this computer: on the PATH, or where its installers put it.
pub fn find_blender() -> Option<PathBuf> {
    let name = if cfg!(windows) {
        "blender.exe"
    } else {
        "blender"
    };
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(name));
    let usual: Vec<PathBuf> = if cfg!(target_os = "macos") {
        vec!["/Applications/Blender.app/Contents/MacOS/Blender".into()]
    } else if cfg!(windows) {
        // "Blender Foundation\Blender 4.2\blender.exe": the newest first.
        let foundation =
            std::env::var_os("ProgramFiles").map(|p| Path::new(&p).join("Blender Foundation"));
        let mut found: Vec<PathBuf> = foundation
            .and_then(|f| std::fs::read_dir(f).ok())
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join(name))
            .collect();
        found.sort();
        found.reverse();
        found
    } else {
        vec!["/usr/bin/blender".into(), "/snap/bin/blender".into()]
    };
    on_path.chain(usual).find(|path| path.is_file())
}

/// Installs and enables the add-on in `blender`'s user preferences (the
/// user's own, kept: Blender starts with them and saves them back).
pub fn install(blender: &Path, scratch: &Path) -> std::io::Result<()> {
    install_with(Command::new(blender), scratch)
}

/// As [`install`], with Blender started by `blender` (a test runs it as
/// another user, with that user's home).
pub fn install_with(mut blender: Command, scratch: &Path) -> std::io::Result<()> {
    let zip = scratch.join(format!(
        "leasedesk-blender-{}.zip",
        env!("CARGO_PKG_VERSION")
    ));
    std::fs::write(&zip, add_on_zip()?)?;
    let script = format!(
        "import bpy\n\
         bpy.ops.preferences.addon_install(filepath={zip:?}, overwrite=True)\n\
         bpy.ops.preferences.addon_enable(module='leasedesk')\n\
         bpy.ops.wm.save_userpref()\n",
        zip = zip.to_string_lossy()
    );
    let output = blender
        .args([
            "--background",
            "--python-exit-code",
            "1",
            "--python-expr",
            &script,
        ])
        .output();
    let _ = std::fs::remove_file(&zip);
    let output = output?;
    if output.status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "Blender could not install the add-on: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_zip_holds_the_add_on_folder_whose_versions_agree() {
        let bytes = super::add_on_zip().unwrap();
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
        assert!(
            names.iter().any(|n| n == "leasedesk/__init__.py"),
            "{names:?}"
        );
        let mut init = String::new();
        std::io::Read::read_to_string(
            &mut zip.by_name("leasedesk/__init__.py").unwrap(),
            &mut init,
        )
        .unwrap();
        let version: Vec<&str> = env!("CARGO_PKG_VERSION").split('.').collect();
        assert!(
            init.contains(&format!("\"version\": ({}),", version.join(", "))),
            "bl_info's version is the app's"
        );
        let manifest = super::FILES[2].1;
        let manifest = std::str::from_utf8(manifest).unwrap();
        assert!(manifest.contains(&format!("version = \"{}\"", env!("CARGO_PKG_VERSION"))));
    }
}

//! The data folder's permissions (Unix): private to its owner whatever the
//! umask, and an older world-readable one made private at open.

use std::path::Path;

use super::Cli;

/// Every folder and file under `root` with the permission bits it has.
fn modes_under(root: &Path) -> Vec<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = vec![(
        root.to_owned(),
        std::fs::metadata(root).unwrap().permissions().mode() & 0o777,
    )];
    let mut i = 0;
    while i < found.len() {
        let dir = found[i].0.clone();
        i += 1;
        if !dir.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            found.push((path, mode));
        }
    }
    found
}

fn assert_private(root: &Path) {
    for (path, mode) in modes_under(root) {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode, want, "{} is {mode:o}", path.display());
    }
}

/// `leasedesk` with `args` on `data` under umask 022, as a login shell has it.
fn under_umask_022(data: &Path, args: &[&str]) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut command = crate::harness::leasedesk();
    command
        .arg("--data")
        .arg(data)
        .args(["--as", "user:alice"])
        .args(args);
    // SAFETY: umask is async-signal-safe and touches only the child's state.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    command
}

#[test]
fn the_data_folder_is_private_to_its_owner_under_umask_022() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("a.psd");
    std::fs::write(&file, b"v1").unwrap();
    let run = |args: &[&str]| {
        let out = under_umask_022(&data, args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["import", "a.psd", file.to_str().unwrap()]);
    run(&["checkout", "a.psd"]);
    std::fs::write(&file, b"v2").unwrap();
    run(&["checkin", "a.psd", file.to_str().unwrap()]);
    // A server keeps the database's log and shared-memory files open: look meanwhile.
    let mut server = under_umask_022(&data, &["serve", "--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on"), "{line}");
    let names: Vec<String> = modes_under(&data)
        .iter()
        .filter_map(|(p, _)| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for expected in [
        "leasedesk.db",
        "leasedesk.db-wal",
        "leasedesk.db-shm",
        "blobs",
        "tmp",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    assert_private(&data);
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_world_readable_data_folder_of_an_older_version_is_made_private_at_open() {
    use std::os::unix::fs::PermissionsExt;
    let cli = Cli::new();
    let data = cli.data();
    cli.import("a.psd", b"v1");
    // What an older version left under umask 022: folders 755, files 644.
    for (path, _) in modes_under(&data) {
        let mode = if path.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    cli.ok("user:alice", &["ls"]);
    assert_private(&data);

    // A folder its owner opened to a group (and not to everyone) is left as chosen.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o750)).unwrap();
    cli.ok("user:alice", &["ls"]);
    let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
}

//! The CLI's output when whoever reads it stops reading: a closed stdout
//! ends a command quietly, with status 0, as other Unix tools end.

use std::path::Path;

/// Starts `args` on `data` with stdout piped, reads its first line, closes the
/// pipe, lets `meanwhile` run, and returns how the process ended.
fn close_stdout_after_one_line(
    data: &Path,
    args: &[&str],
    meanwhile: impl FnOnce(),
) -> (std::process::ExitStatus, String) {
    use std::io::{BufRead, Read};
    let mut child = crate::harness::leasedesk()
        .arg("--data")
        .arg(data)
        .args(["--as", "user:alice"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "{args:?} printed a line");
    drop(stdout);
    meanwhile();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{args:?} went on after its stdout closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_the_cli_quietly_with_status_0() {
    use leasedesk::Backend;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let alice = leasedesk::Bundled::open(&data)
        .unwrap()
        .acting_as("user:alice".parse().unwrap());
    // Far more output than a pipe buffers (64 KiB), so a write meets the closed pipe.
    let long_folder = "a-folder-with-a-rather-long-name/".repeat(6);
    let imports: Vec<_> = (0..400)
        .map(|i| {
            let alice = alice.clone();
            let path = format!("{long_folder}file-{i:04}.psd").parse().unwrap();
            tokio::spawn(async move {
                let upload = leasedesk::Upload::stream(std::io::Cursor::new(vec![i as u8]));
                alice.import(&path, upload).await.unwrap()
            })
        })
        .collect();
    for import in imports {
        import.await.unwrap();
    }
    let data_path = data.clone();
    tokio::task::spawn_blocking(move || {
        let data = &data_path;
        for args in [
            &["ls"][..],
            &["--json", "ls"],
            &["events", "--limit", "1000"],
            &["--json", "events", "--limit", "1000"],
        ] {
            let (status, stderr) = close_stdout_after_one_line(data, args, || {});
            assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
            assert!(stderr.is_empty(), "{args:?} ends quietly: {stderr}");
        }
        // A follower writes on as events come: the next one after the close ends it.
        let (status, stderr) = close_stdout_after_one_line(data, &["events", "--follow"], || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let file = data.with_extension("psd");
            std::fs::write(&file, b"one more").unwrap();
            let out = crate::harness::leasedesk()
                .arg("--data")
                .arg(data)
                .args(["import", "one-more.psd"])
                .arg(&file)
                .output()
                .unwrap();
            assert!(out.status.success());
        });
        assert_eq!(status.code(), Some(0), "events --follow: {stderr}");
        assert!(stderr.is_empty(), "events --follow ends quietly: {stderr}");
    })
    .await
    .unwrap();
}

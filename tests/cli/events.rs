//! `events --follow` on a data folder: the follower records what happens
//! while nobody else writes.

use serde_json::Value;

use super::Cli;

/// `events --follow` on a data folder keeps the store open, so it records
/// lapses as they come: a 1 s lease lapses with no other write, and its
/// `lease.expired` is printed.
#[test]
fn following_events_on_a_data_folder_records_a_lapse_nobody_touches() {
    let cli = Cli::new();
    cli.import("hero.psd", b"first");
    let mut follow = cli
        .command("user:bob")
        .args(["--json", "events", "--follow"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = follow.stdout.take().unwrap();
    let (lines, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
            let Ok(line) = line else { return };
            let event: Value = serde_json::from_str(&line).unwrap();
            if lines
                .send(event["type"].as_str().unwrap().to_owned())
                .is_err()
            {
                return;
            }
        }
    });
    cli.ok("user:alice", &["checkout", "hero.psd", "--ttl", "1s"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(8);
    let mut kinds = Vec::new();
    while !kinds.iter().any(|k| k == "lease.expired") {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match seen.recv_timeout(left) {
            Ok(kind) => kinds.push(kind),
            Err(_) => break,
        }
    }
    follow.kill().unwrap();
    follow.wait().unwrap();
    assert!(
        kinds.iter().any(|k| k == "lease.expired"),
        "no lapse recorded while following: {kinds:?}"
    );
}

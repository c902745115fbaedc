//! `cargo xtask bench`, the failover figure of issue 11: two real `leasedesk
//! serve` processes (release build) on one data folder; one is killed with
//! SIGKILL and the CLI, given both URLs, must complete its next request on
//! the other within 2 s. Measured for a one-shot command (`ls`) and for
//! `events --follow`, which must print an event written just after the kill.
//! `--quick` runs fewer rounds. Prints Markdown rows.

#[path = "common/figures.rs"]
mod figures;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use figures::{row, value, Data};
use testkit::tool::lines_of;
use testkit::WithEnvironment;

const TARGET: Duration = Duration::from_secs(2);

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 5 } else { 20 };
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-failover");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let data = work.join("data");
    let token = add_user(&data);
    let file = work.join("a.psd");
    std::fs::write(&file, b"v1").unwrap();
    let imported = leasedesk(&data, &token, None)
        .args(["import", "a.psd"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(imported.status.success(), "{}", text(&imported.stderr));

    let standing = Server::start(&data);
    let mut plain = Vec::new();
    let mut moved = Vec::new();
    let mut followed = Vec::new();
    for _ in 0..rounds {
        let doomed = Server::start(&data);
        let servers = format!("{},{}", doomed.url, standing.url);
        plain.push(timed_ls(&data, &token, &standing.url, false));

        // A follower reading from the doomed server, caught up.
        let mut follow = leasedesk(&data, &token, Some(&servers))
            .args(["--json", "events", "--follow"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let printed = lines_of(follow.stdout.take().unwrap());
        let last = wait_for_seq(&printed, u64::MAX, Duration::from_millis(500));

        // An event written just after the kill (a check-out, through the
        // standing server, its own CLI process counted in): the follower
        // must print it.
        let killed = doomed.kill();
        let checked_out = leasedesk(&data, &token, Some(&standing.url))
            .args(["checkout", "a.psd"])
            .output()
            .unwrap();
        assert!(
            checked_out.status.success(),
            "{}",
            text(&checked_out.stderr)
        );
        let printed_after = wait_for_seq(&printed, last + 1, Duration::from_secs(30));
        assert!(printed_after > last, "the follower printed the new event");
        followed.push(killed.elapsed());
        moved.push(timed_ls(&data, &token, &servers, true));
        let _ = follow.kill();
        let _ = follow.wait();
        let cancelled = leasedesk(&data, &token, Some(&standing.url))
            .args(["cancel", "a.psd"])
            .output()
            .unwrap();
        assert!(cancelled.status.success(), "{}", text(&cancelled.stderr));
    }
    let summary = |times: &[Duration]| {
        let worst = times.iter().max().unwrap();
        format!(
            "median {:.0} ms, worst {:.0} ms ({rounds} kills)",
            ms(median(times.to_vec())),
            ms(*worst)
        )
    };
    // The median, then the worst; `against` compares the median.
    let data = |times: &[Duration], against: Option<(&str, &[Duration])>| -> Data {
        let mut data = value(ms(median(times.to_vec())), "ms");
        if let Some((name, baseline)) = against {
            data = data.against(name, ms(median(baseline.to_vec())), "ms");
        }
        data.and("worst", ms(*times.iter().max().unwrap()), "ms")
    };
    let plain_name = "`leasedesk --server B ls`, nothing killed (same rounds)";
    row(
        "`leasedesk --server A,B ls` after SIGKILL of A (whole command, process start to exit)",
        format!("**{}**", summary(&moved)),
        "within 2 s",
        data(&moved, Some((plain_name, &plain))),
    );
    row(plain_name, summary(&plain), "baseline", data(&plain, None));
    row(
        "`events --follow` on A: SIGKILL of A to the follower printing an event written after it (a `checkout` CLI through B, counted in)",
        format!("**{}**", summary(&followed)),
        "within 2 s",
        data(&followed, None),
    );
    let over: Vec<_> = moved
        .iter()
        .chain(&followed)
        .filter(|t| **t > TARGET)
        .collect();
    assert!(over.is_empty(), "over 2 s: {over:?}");
    drop(standing);
    let _ = std::fs::remove_dir_all(&work);
}

fn bin() -> PathBuf {
    PathBuf::from(std::env::var("LEASEDESK_BIN").expect("run through cargo xtask bench"))
}

fn add_user(data: &Path) -> String {
    testkit::Cli::new(bin()).data(data).add_user("bench")
}

/// The CLI against `servers`, or on the data folder itself.
fn leasedesk(data: &Path, token: &str, servers: Option<&str>) -> Command {
    let mut cmd = Command::new(bin());
    match servers {
        Some(servers) => cmd
            .args(["--server", servers])
            .env("LEASEDESK_TOKEN", token),
        None => cmd.arg("--data").arg(data).args(["--as", "user:bench"]),
    };
    cmd
}

/// How long `ls` takes against `servers`; whether it must say it moved.
fn timed_ls(data: &Path, token: &str, servers: &str, moves: bool) -> Duration {
    let started = Instant::now();
    let listed = leasedesk(data, token, Some(servers))
        .arg("ls")
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    assert_eq!(
        text(&listed.stderr).contains("did not answer; using"),
        moves,
        "{}",
        text(&listed.stderr)
    );
    took
}

/// Reads events until one with seq at least `until`, or until `quiet` passes
/// with nothing printed; returns the last seq read.
fn wait_for_seq(printed: &Receiver<String>, until: u64, quiet: Duration) -> u64 {
    let mut last = 0;
    while last < until {
        match printed.recv_timeout(quiet) {
            Ok(line) => {
                let event: serde_json::Value = serde_json::from_str(&line).unwrap();
                last = event["seq"].as_u64().unwrap();
            }
            Err(_) => break,
        }
    }
    last
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A real `leasedesk serve` on 127.0.0.1:0 over a data folder.
struct Server {
    process: testkit::ServeProcess,
    url: String,
}

impl Server {
    fn start(data: &Path) -> Self {
        let process = testkit::Cli::new(bin())
            .data(data)
            .serve()
            .env("LEASEDESK_LOG", "warn")
            .spawn();
        Self {
            url: process.url.clone(),
            process,
        }
    }

    /// SIGKILL; returns when it was sent.
    fn kill(mut self) -> Instant {
        let at = Instant::now();
        self.process.kill();
        at
    }
}

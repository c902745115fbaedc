//! The built `leasedesk` binary, as an admin, a script or an agent runs it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

struct Cli<'a> {
    data: &'a Path,
}

impl Cli<'_> {
    fn run(&self, who: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_leasedesk"))
            .arg("--data")
            .arg(self.data)
            .args(["--as", who])
            .args(args)
            .output()
            .expect("run leasedesk")
    }

    fn ok(&self, who: &str, args: &[&str]) -> String {
        let out = self.run(who, args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, who: &str, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(who, &all)).expect("JSON output")
    }
}

#[test]
fn a_designer_session_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data: &dir.path().join("data"),
    };
    let file = dir.path().join("hero.psd");
    std::fs::write(&file, b"first").unwrap();
    let file = file.to_str().unwrap();

    assert!(cli
        .ok("user:root", &["user", "add", "boss", "--admin"])
        .contains("user:boss (admin)"));
    assert!(cli
        .ok("user:root", &["user", "add", "resizer", "--agent"])
        .contains("agent:resizer"));
    let agent_admin = cli.run("user:root", &["user", "add", "robot", "--agent", "--admin"]);
    assert_eq!(
        agent_admin.status.code(),
        Some(1),
        "only users can be admins"
    );
    let again = cli.run("user:root", &["user", "add", "boss"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("user:boss already exists"));
    let users = cli.ok("user:root", &["user", "list"]);
    assert!(
        users.contains("user:boss  admin") && users.contains("agent:resizer"),
        "{users}"
    );

    assert!(cli
        .ok("user:alice", &["import", "brand/hero.psd", file])
        .contains("version 1"));
    let out = cli.ok(
        "user:alice",
        &[
            "checkout",
            "brand/hero.psd",
            "--note",
            "sky retouch",
            "--ttl",
            "2h",
        ],
    );
    assert!(
        out.contains("checked out brand/hero.psd at version 1"),
        "{out}"
    );

    // Bob is refused, told who has it, and the exit code says "busy".
    let refused = cli.run("user:bob", &["checkout", "brand/hero.psd"]);
    assert_eq!(refused.status.code(), Some(75));
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("user:alice") && why.contains("sky retouch"),
        "{why}"
    );

    let who = cli.ok("user:bob", &["who", "brand/hero.psd"]);
    assert!(
        who.contains("checked out by user:alice")
            && who.contains("left")
            && who.contains("note: sky retouch"),
        "{who}"
    );
    let ls = cli.ok("user:bob", &["ls"]);
    assert!(ls.contains("brand/hero.psd  v1  user:alice"), "{ls}");

    assert!(cli
        .ok("user:alice", &["extend", "brand/hero.psd", "--ttl", "3h"])
        .contains("extended"));
    std::fs::write(file, b"second").unwrap();
    let checked_in = cli.json("user:alice", &["checkin", "brand/hero.psd", file]);
    assert_eq!(checked_in["state"], "closed");
    assert_eq!(checked_in["result"]["outcome"], "committed");
    assert_eq!(checked_in["result"]["version"], 2);
    assert!(cli
        .ok("user:bob", &["who", "brand/hero.psd"])
        .contains("is free (version 2 by user:alice)"));

    let lease = cli.json("user:bob", &["who", "brand/hero.psd"]);
    assert_eq!(lease, Value::Null, "--json who on a free file prints null");
    let versions = cli.json("user:bob", &["versions", "brand/hero.psd"]);
    assert_eq!(versions.as_array().unwrap().len(), 2);

    cli.ok("user:bob", &["checkout", "brand/hero.psd"]);
    assert!(cli
        .ok("user:bob", &["cancel", "brand/hero.psd"])
        .contains("cancelled"));

    let events = cli.json("user:bob", &["events", "--after", "0"]);
    let kinds: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"lease.contended") && kinds.contains(&"checkout.closed"),
        "{kinds:?}"
    );
}

/// `events --follow` on a data folder keeps the store open, so it records
/// lapses as they come: a 1 s lease lapses with no other write, and its
/// `lease.expired` is printed.
#[test]
fn following_events_on_a_data_folder_records_a_lapse_nobody_touches() {
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data: &dir.path().join("data"),
    };
    let file = dir.path().join("hero.psd");
    std::fs::write(&file, b"first").unwrap();
    cli.ok(
        "user:alice",
        &["import", "hero.psd", file.to_str().unwrap()],
    );
    let mut follow = Command::new(env!("CARGO_BIN_EXE_leasedesk"))
        .arg("--data")
        .arg(cli.data)
        .args(["--as", "user:bob", "--json", "events", "--follow"])
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

#[test]
fn refusals_exit_non_zero_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data: &dir.path().join("data"),
    };
    let file = dir.path().join("a.psd");
    std::fs::write(&file, b"x").unwrap();
    let file = file.to_str().unwrap();

    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["checkout", "missing.psd"],
            1,
            "no artifact at missing.psd",
        ),
        (&["import", "../etc/passwd", file], 2, ".. segment"),
        (&["checkin", "a.psd", file], 1, "no open check-out of a.psd"),
        (&["checkout", "a.psd", "--ttl", "9w"], 2, "unknown unit"),
    ];
    cli.ok("user:alice", &["import", "a.psd", file]);
    for (args, code, reason) in cases {
        let out = cli.run("user:alice", args);
        assert_eq!(out.status.code(), Some(*code), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
    let again = cli.run("user:alice", &["import", "a.psd", file]);
    assert_eq!(again.status.code(), Some(1));
    let mut json_args = vec!["--json", "checkout", "a.psd", "--ttl", "30d"];
    let out = cli.run("user:alice", &json_args);
    let body: Value = serde_json::from_slice(&out.stderr).expect("a JSON error body on stderr");
    assert_eq!(body["error"], "invalid");
    json_args.truncate(3);
    cli.ok("user:alice", &json_args);
    let busy = cli.run("user:bob", &json_args);
    let body: Value = serde_json::from_slice(&busy.stderr).unwrap();
    assert_eq!(
        (
            body["error"].as_str(),
            body["lease"]["participant"].as_str()
        ),
        (Some("artifact_busy"), Some("user:alice"))
    );
}

#[test]
fn an_agents_edit_commits_on_success_and_always_releases_its_lease() {
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data: &dir.path().join("data"),
    };
    let file = dir.path().join("a.txt");
    std::fs::write(&file, b"hello\n").unwrap();
    cli.ok("user:alice", &["import", "a.txt", file.to_str().unwrap()]);

    let done = cli.ok(
        "agent:bot",
        &["edit", "a.txt", "--", "sh", "-c", "echo more >> {}"],
    );
    assert!(done.contains("committed a.txt as version 2"), "{done}");

    let failed = cli.run("agent:bot", &["edit", "a.txt", "--", "false"]);
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("nothing was committed"));

    let started = std::time::Instant::now();
    let slow = cli.run(
        "agent:bot",
        &[
            "edit",
            "a.txt",
            "--deadline",
            "1",
            "--",
            "sh",
            "-c",
            "sleep 30",
        ],
    );
    assert_eq!(slow.status.code(), Some(1));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the deadline stopped the command"
    );
    assert!(
        String::from_utf8_lossy(&slow.stderr).contains("ran longer than 1 s"),
        "{}",
        String::from_utf8_lossy(&slow.stderr)
    );

    // After success, failure and timeout alike the file is free, at version 2.
    let who = cli.ok("user:bob", &["who", "a.txt"]);
    assert!(who.contains("is free (version 2 by agent:bot)"), "{who}");

    cli.ok("user:alice", &["checkout", "a.txt", "--note", "proofing"]);
    let busy = cli.run("agent:bot", &["edit", "a.txt", "--", "true"]);
    assert_eq!(busy.status.code(), Some(75), "a busy file exits with 75");
    assert!(String::from_utf8_lossy(&busy.stderr).contains("user:alice"));
}

/// A real `leasedesk serve` process on 127.0.0.1:0, its log in a file.
struct ServeProcess {
    child: std::process::Child,
    url: String,
    log: std::path::PathBuf,
}

impl ServeProcess {
    fn start(data: &Path) -> Self {
        use std::io::BufRead;
        let log = data.with_extension("log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_leasedesk"))
            .arg("--data")
            .arg(data)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("LEASEDESK_LOG", "debug")
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .expect("the address line")
            .to_owned();
        Self { child, url, log }
    }

    fn terminate(&self) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    }

    /// Asks the server to stop (SIGTERM) and returns whether it exited cleanly.
    fn stop(mut self) -> bool {
        self.terminate();
        self.child.wait().unwrap().success()
    }
}

#[test]
fn the_cli_works_the_same_against_a_real_server_process() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let local = Cli { data: &data };
    let token_of = |name: &str| {
        local
            .ok("user:root", &["user", "add", name])
            .lines()
            .last()
            .unwrap()
            .to_owned()
    };
    let (alice, bob) = (token_of("alice"), token_of("bob"));
    let server = ServeProcess::start(&data);
    let remote = |token: &str, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_leasedesk"))
            .args(["--server", &server.url])
            .args(args)
            .env("LEASEDESK_TOKEN", token)
            .output()
            .unwrap()
    };
    let file = dir.path().join("hero.psd");
    std::fs::write(&file, b"v1").unwrap();
    let file = file.to_str().unwrap();

    assert!(remote(&alice, &["import", "brand/hero.psd", file])
        .status
        .success());
    let out = remote(&alice, &["checkout", "brand/hero.psd", "--note", "sky"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let busy = remote(&bob, &["checkout", "brand/hero.psd"]);
    assert_eq!(busy.status.code(), Some(75));
    assert!(String::from_utf8_lossy(&busy.stderr).contains("user:alice"));
    let who = String::from_utf8(remote(&bob, &["who", "brand/hero.psd"]).stdout).unwrap();
    assert!(
        who.contains("checked out by user:alice") && who.contains("note: sky"),
        "{who}"
    );
    std::fs::write(file, b"v2").unwrap();
    let checked_in =
        String::from_utf8(remote(&alice, &["checkin", "brand/hero.psd", file]).stdout).unwrap();
    assert!(checked_in.contains("as version 2"), "{checked_in}");
    let edited = remote(
        &bob,
        &["edit", "brand/hero.psd", "--", "sh", "-c", "echo v3 > {}"],
    );
    assert!(
        String::from_utf8_lossy(&edited.stdout).contains("version 3"),
        "{}",
        String::from_utf8_lossy(&edited.stderr)
    );

    let wrong = remote(
        "ld_0000000000000000_000000000000000000000000000000000000000000000000",
        &["ls"],
    );
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("token"));
    let admin_only = remote(&alice, &["user", "list"]);
    assert!(String::from_utf8_lossy(&admin_only.stderr).contains("data folder"));

    // `events --follow` streams the ledger (the first lines, then it is stopped).
    let mut follow = Command::new(env!("CARGO_BIN_EXE_leasedesk"))
        .args(["--server", &server.url, "--json", "events", "--follow"])
        .env("LEASEDESK_TOKEN", &bob)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(follow.stdout.take().unwrap()));
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(
        (first["seq"].as_u64(), first["type"].as_str()),
        (Some(1), Some("version.committed"))
    );
    follow.kill().unwrap();
    follow.wait().unwrap();

    let log_file = server.log.clone();
    assert!(server.stop(), "the server stops cleanly on SIGTERM");
    let log = std::fs::read_to_string(log_file).unwrap();
    assert!(log.contains("/v1/artifacts"), "requests are logged");
    for token in [&alice, &bob] {
        let secret = token.rsplit('_').next().unwrap();
        assert!(!log.contains(secret), "no token in the log");
    }
}

#[test]
fn an_upload_in_flight_when_the_server_is_told_to_stop_still_completes() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let local = Cli { data: &data };
    let token = local
        .ok("user:root", &["user", "add", "alice"])
        .lines()
        .last()
        .unwrap()
        .to_owned();
    let file = dir.path().join("a.psd");
    std::fs::write(&file, b"v1").unwrap();
    local.ok("user:alice", &["import", "a.psd", file.to_str().unwrap()]);
    let checkout: Value =
        serde_json::from_str(&local.ok("user:alice", &["--json", "checkout", "a.psd"])).unwrap();
    let server = ServeProcess::start(&data);

    let mut socket =
        std::net::TcpStream::connect(server.url.trim_start_matches("http://")).unwrap();
    let body = vec![3u8; 4 << 20];
    write!(
        socket,
        "POST /v1/checkouts/{}/checkin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n",
        checkout["id"].as_str().unwrap(),
        body.len()
    )
    .unwrap();
    socket.write_all(&body[..1 << 20]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    server.terminate();
    std::thread::sleep(std::time::Duration::from_millis(200));
    socket.write_all(&body[1 << 20..]).unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"outcome\":\"committed\""), "{answer}");
    assert!(server.stop(), "then the server stops cleanly");
    let versions: Value =
        serde_json::from_str(&local.ok("user:alice", &["--json", "versions", "a.psd"])).unwrap();
    assert_eq!(
        versions.as_array().unwrap().len(),
        2,
        "the upload committed whole"
    );
}

//! The built `leasedesk` binary, as an admin, a script or an agent runs it.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

/// The system's shell, as an agent's command line calls it.
const SHELL: [&str; 2] = if cfg!(windows) {
    ["cmd", "/C"]
} else {
    ["sh", "-c"]
};
// A command line that names no `{}` gets the copy's path as one more
// argument: `sh -c` takes it as `$0`, cmd would run it, so there `rem {}`
// takes it.
/// Half a minute of waiting (ping waits a second a ping: Windows' `timeout`
/// needs a console).
const SLEEP_30: &str = if cfg!(windows) {
    "ping -n 31 127.0.0.1 >NUL & rem {}"
} else {
    "sleep 30"
};
/// Prints the environment, a NAME=value a line.
const PRINT_ENV: &str = if cfg!(windows) { "set & rem {}" } else { "env" };

struct Cli<'a> {
    data: &'a Path,
}

impl Cli<'_> {
    fn run(&self, who: &str, args: &[&str]) -> Output {
        crate::harness::leasedesk()
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
    let mut follow = crate::harness::leasedesk()
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
        &["edit", "a.txt", "--", SHELL[0], SHELL[1], "echo more>> {}"],
    );
    assert!(done.contains("committed a.txt as version 2"), "{done}");

    let failed = cli.run(
        "agent:bot",
        &["edit", "a.txt", "--", SHELL[0], SHELL[1], "exit 1"],
    );
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
            SHELL[0],
            SHELL[1],
            SLEEP_30,
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
    let busy = cli.run(
        "agent:bot",
        &["edit", "a.txt", "--", SHELL[0], SHELL[1], "exit 0"],
    );
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
        let mut child = crate::harness::leasedesk()
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

    fn terminate(&mut self) {
        crate::harness::ask_to_stop(&mut self.child);
    }

    /// Asks the server to stop (SIGTERM, Ctrl+Break) and returns whether it exited cleanly.
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
        crate::harness::leasedesk()
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
        &[
            "edit",
            "brand/hero.psd",
            "--",
            SHELL[0],
            SHELL[1],
            "echo v3> {}",
        ],
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
    let mut follow = crate::harness::leasedesk()
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
    assert!(
        server.stop() || !crate::harness::GRACEFUL_STOP,
        "the server stops cleanly on SIGTERM"
    );
    let log = std::fs::read_to_string(log_file).unwrap();
    assert!(log.contains("/v1/artifacts"), "requests are logged");
    for token in [&alice, &bob] {
        let secret = token.rsplit('_').next().unwrap();
        assert!(!log.contains(secret), "no token in the log");
    }
}

// A graceful stop, which a test can ask for on Unix only (harness::GRACEFUL_STOP).
#[cfg(unix)]
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
    let mut server = ServeProcess::start(&data);

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

#[test]
fn an_agents_command_runs_without_the_token_and_server_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let local = Cli { data: &data };
    let token = local
        .ok("user:root", &["user", "add", "resizer", "--agent"])
        .lines()
        .last()
        .unwrap()
        .to_owned();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, b"hello\n").unwrap();
    local.ok("user:alice", &["import", "a.txt", file.to_str().unwrap()]);
    let server = ServeProcess::start(&data);
    // The command prints its environment, one NAME=value per line, then leaves the file be.
    let edit = crate::harness::leasedesk()
        .args(["edit", "a.txt", "--", SHELL[0], SHELL[1], PRINT_ENV])
        .env("LEASEDESK_SERVER", &server.url)
        .env("LEASEDESK_TOKEN", &token)
        .env("LEASEDESK_TEST_KEPT", "kept")
        .output()
        .unwrap();
    assert!(
        edit.status.success(),
        "{}",
        String::from_utf8_lossy(&edit.stderr)
    );
    let printed = String::from_utf8(edit.stdout).unwrap();
    let names: Vec<&str> = printed
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    assert!(
        names.contains(&"LEASEDESK_TEST_KEPT"),
        "the rest is kept: {printed}"
    );
    assert!(names.contains(&"PATH"), "{printed}");
    for secret in ["LEASEDESK_TOKEN", "LEASEDESK_SERVER"] {
        assert!(!names.contains(&secret), "{secret} reached the command");
    }
    let secret = token.rsplit('_').next().unwrap();
    assert!(!printed.contains(secret), "the token reached the command");
    assert!(printed.contains("a.txt is unchanged"), "{printed}");
    assert!(server.stop() || !crate::harness::GRACEFUL_STOP);
}

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

#[cfg(unix)]
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

#[cfg(unix)]
fn assert_private(root: &Path) {
    for (path, mode) in modes_under(root) {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode, want, "{} is {mode:o}", path.display());
    }
}

#[cfg(unix)]
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

#[cfg(unix)]
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

#[cfg(unix)]
#[test]
fn a_world_readable_data_folder_of_an_older_version_is_made_private_at_open() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("a.psd");
    std::fs::write(&file, b"v1").unwrap();
    let cli = Cli { data: &data };
    cli.ok("user:alice", &["import", "a.psd", file.to_str().unwrap()]);
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

/// `leasedesk rename OLD NEW`: an admin fixes a path stored before the path
/// rules (found as stored); anyone else is refused and nothing changes.
#[test]
fn rename_fixes_a_legacy_path_for_admins_only() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let cli = Cli { data: &data };
    let file = dir.path().join("seed.psd");
    std::fs::write(&file, b"bytes").unwrap();
    cli.ok("user:root", &["user", "add", "boss", "--admin"]);
    cli.ok("user:root", &["user", "add", "ada"]);
    let seed = cli.json("user:ada", &["import", "seed.psd", file.to_str().unwrap()]);
    {
        // As an older version stored it, its key as migration 0003 fills it.
        let db = rusqlite::Connection::open(data.join("leasedesk.db")).unwrap();
        let id = uuid::Uuid::new_v4().to_string();
        db.execute(
            "INSERT INTO artifacts (id, path, path_key, head_version, created_at) VALUES (?1, 'CON', 'con', 1, 0)",
            [&id],
        )
        .unwrap();
        db.execute(
            "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at)
             VALUES (?1, 1, ?2, 5, 'user:ada', 0)",
            [id.as_str(), seed["head"]["digest"].as_str().unwrap()],
        )
        .unwrap();
    }

    let refused = cli.run("user:ada", &["rename", "CON", "console.psd"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("admin"));
    let unsafe_target = cli.run("user:boss", &["rename", "CON", "nul.txt"]);
    assert!(
        !unsafe_target.status.success(),
        "the new path meets the rules"
    );
    let taken = cli.run("user:boss", &["rename", "CON", "SEED.psd"]);
    assert!(
        !taken.status.success(),
        "the new path collides with seed.psd"
    );
    assert!(
        cli.ok("user:ada", &["ls"]).contains("CON"),
        "nothing changed yet"
    );

    let renamed = cli.json("user:boss", &["rename", "CON", "console.psd"]);
    assert_eq!(renamed["path"], "console.psd");
    let listed = cli.ok("user:ada", &["ls"]);
    assert!(
        listed.contains("console.psd") && !listed.contains("CON "),
        "{listed}"
    );
    let events = cli.ok("user:ada", &["--json", "events"]);
    assert!(events.contains("artifact.renamed"), "{events}");
}

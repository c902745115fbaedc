//! The CLI against a real `leasedesk serve` process: the same commands over
//! HTTP, tokens kept out of the log, and a graceful stop that lets an upload
//! in flight complete.

use serde_json::Value;

use super::{stop, Cli, SHELL};

#[test]
fn the_cli_works_the_same_against_a_real_server_process() {
    let local = Cli::new();
    let token_of = |name: &str| local.add_participant(&[name]);
    let (alice, bob) = (token_of("alice"), token_of("bob"));
    let server = local.serve();
    let remote = |token: &str, args: &[&str]| server.client_cli(token).output(args);
    let file = &local.file("hero.psd", b"v1");

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
    let mut follow = server
        .client_cli(&bob)
        .command()
        .args(["--json", "events", "--follow"])
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

    let log_file = server.log_path().to_owned();
    assert!(
        stop(server) || !crate::harness::GRACEFUL_STOP,
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
    let local = Cli::new();
    let token = local.add_participant(&["alice"]);
    local.import("a.psd", b"v1");
    let checkout = local.json("user:alice", &["checkout", "a.psd"]);
    let mut server = local.serve();

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
    server.ask_to_stop();
    std::thread::sleep(std::time::Duration::from_millis(200));
    socket.write_all(&body[1 << 20..]).unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"outcome\":\"committed\""), "{answer}");
    assert!(stop(server), "then the server stops cleanly");
    let versions = local.json("user:alice", &["versions", "a.psd"]);
    assert_eq!(
        versions.as_array().unwrap().len(),
        2,
        "the upload committed whole"
    );
}

/// A check-in of a large file over a server says, on stderr, that only
/// what the server lacks goes; stdout stays the answer.
#[test]
fn a_checkin_over_a_server_says_what_it_sends() {
    let local = Cli::new();
    let (_server, alice) = local.serve_to(&["alice"]);
    let remote = |args: &[&str]| alice.output(args);
    let v1 = crate::harness::noise(21, 4 << 20);
    let file = &local.file("hero.psd", &v1);
    assert!(remote(&["import", "hero.psd", file]).status.success());
    assert!(remote(&["checkout", "hero.psd"]).status.success());
    let mut v2 = v1;
    v2[2 << 20..(2 << 20) + 100].fill(7);
    std::fs::write(file, &v2).unwrap();
    let out = remote(&["checkin", "hero.psd", file]);
    let (said, answer) = (
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout),
    );
    assert!(out.status.success(), "{said}");
    assert!(answer.contains("as version 2"), "{answer}");
    assert!(
        said.contains("of 4.0 MiB (the rest is already on the server)"),
        "{said}"
    );
}

//! Event streams under hostile conditions: a revoked token, `Last-Event-ID`,
//! page limits, shutdown with streams and uploads open, a log nobody reads.

use super::*;

/// Reads the event stream's `data:` lines until it ends or `within` passes;
/// whether it ended, and the events read.
fn read_stream(socket: &mut TcpStream, within: Duration) -> (bool, Vec<Value>) {
    socket.set_read_timeout(Some(within)).unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 8192];
    let ended = loop {
        match socket.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => {
                text.push_str(&String::from_utf8_lossy(&buf[..n]));
                // The chunked encoding's last chunk: the stream ended.
                if text == "0\r\n\r\n" || text.ends_with("\r\n0\r\n\r\n") {
                    break true;
                }
            }
            Err(_) => break false,
        }
    };
    let events = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    (ended, events)
}

fn open_stream(served: &Served, token: &str, extra: &str) -> TcpStream {
    let request = format!(
        "GET /v1/events/stream HTTP/1.1\r\n{}{extra}accept: text/event-stream\r\n\r\n",
        bearer(token)
    );
    served.connect_and_write(request.as_bytes())
}

#[test]
fn a_revoked_token_loses_its_event_stream_within_a_second() {
    let served = Served::start(&[]);
    let alice = served.token("alice");
    let bob = served.token("bob");
    let id = import(&served, &alice, "hero.psd", b"version one");
    let mut stream = open_stream(&served, &alice, "");
    let (ended, events) = read_stream(&mut stream, Duration::from_millis(1500));
    assert!(!ended);
    assert!(
        !events.is_empty(),
        "the stream delivers events before the revocation"
    );
    served.process.cli.ok(&["user", "revoke", "alice"]);
    let revoked = Instant::now();
    let answer = post_json(
        &served,
        &bob,
        &format!("/v1/artifacts/{id}/checkouts"),
        r#"{"note":"written after the revocation"}"#,
    );
    assert_eq!(answer.status, 201, "{answer:?}");
    let (ended, events) = read_stream(&mut stream, Duration::from_secs(5));
    assert!(ended, "the stream ends once its token is revoked");
    let took = revoked.elapsed();
    assert!(
        took < Duration::from_millis(1500),
        "ended {took:?} after the revocation"
    );
    assert!(
        events
            .iter()
            .all(|e| e["data"]["note"] != "written after the revocation"),
        "nothing written after the revocation is sent: {events:?}"
    );
    println!("the revoked stream ended {took:?} after the revocation");
}

#[test]
fn the_event_stream_honours_last_event_id() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    for n in 0..3 {
        import(&served, &token, &format!("f{n}.psd"), b"bytes");
    }
    let all = served.get("/v1/events", &token);
    let seqs: Vec<u64> = all.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(seqs.len() >= 3);
    let from = seqs[seqs.len() - 2];
    let mut stream = open_stream(&served, &token, &format!("last-event-id: {from}\r\n"));
    let (_, events) = read_stream(&mut stream, Duration::from_millis(1500));
    let got: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(
        got,
        seqs[seqs.len() - 1..],
        "only the events after Last-Event-ID"
    );
}

#[test]
fn event_pages_hold_at_most_1000_events() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let id = import(&served, &token, "hero.psd", b"v1");
    // Each extension is an event: 1100 of them, through the data folder.
    let checkout = post_json(
        &served,
        &token,
        &format!("/v1/artifacts/{id}/checkouts"),
        "{}",
    );
    let checkout_id = checkout.body["id"].as_str().unwrap().to_owned();
    let mut socket = served.connect();
    let extend = format!(
        "POST /v1/checkouts/{checkout_id}/extend HTTP/1.1\r\n{}content-length: 0\r\n\r\n",
        bearer(&token)
    );
    for _ in 0..1100 {
        socket.write_all(extend.as_bytes()).unwrap();
        assert_eq!(Answer::read(&mut socket).status, 200);
    }
    let page = served.get("/v1/events?limit=10000", &token);
    let events = page.body["events"].as_array().unwrap();
    assert_eq!(events.len(), 1000, "a larger limit is lowered to 1000");
    assert_eq!(page.body["next"], events[999]["seq"]);
}

// A graceful stop, which a test can ask for on Unix only (harness::GRACEFUL_STOP).
#[cfg(unix)]
#[test]
fn shutdown_ends_streams_at_once_and_bounds_uploads() {
    // Streams, idle and half-sent connections: the server exits at once.
    let mut served = Served::start(&[]);
    let token = served.token("alice");
    let mut streams: Vec<TcpStream> = (0..3).map(|_| open_stream(&served, &token, "")).collect();
    // Held open, half-sent, while the server stops.
    let _half = served.connect_and_write(b"GET /v1/me HTTP/1.1\r\n");
    std::thread::sleep(Duration::from_millis(300));
    served.terminate();
    let took = served.exit_within(Duration::from_secs(5));
    assert!(took < Duration::from_secs(2), "exit took {took:?}");
    for stream in &mut streams {
        assert!(
            read_stream(stream, Duration::from_secs(2)).0,
            "each stream ended"
        );
    }
    println!("SIGTERM to exit with 3 event streams and a half-sent request open: {took:?}");

    // A stalled upload gets the grace period, then is dropped: nothing stored,
    // the check-out still open.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let log = dir.path().join("serve.log");
    let mut served = Served::start_on(&data, &log, &["--shutdown-grace", "2s"]);
    let token = served.token("alice");
    let (id, checkout_id) = checked_out(&served, &token);
    let _upload = begin_checkin(&served, &token, &checkout_id, 1000, b"ten bytes.");
    let _stream = open_stream(&served, &token, "");
    std::thread::sleep(Duration::from_millis(300));
    served.terminate();
    let took = served.exit_within(Duration::from_secs(10));
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(4),
        "the stalled upload had its 2 s grace, then the server exited: {took:?}"
    );
    drop(served);
    let again = Served::start_on(&data, &log, &[]);
    nothing_was_checked_in(&again, &token, &id, &checkout_id);
}

#[test]
fn logging_never_blocks_the_server() {
    // stderr is a pipe nobody reads: once it is full, a blocking logger
    // would stop the server.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = Served::start_logging_to_a_pipe(&data, &[]);
    let token = served.token("alice");
    let mut socket = served.connect();
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let long_path = format!("/v1/{}", "x".repeat(2000));
    let request = format!("GET {long_path} HTTP/1.1\r\n{}\r\n", bearer(&token));
    // 2000 logged requests of 2 KB each: far more than a pipe holds.
    for n in 0..2000 {
        socket.write_all(request.as_bytes()).unwrap();
        let answer = Answer::read(&mut socket);
        assert_eq!(answer.status, 404, "request {n}: {answer:?}");
    }
}

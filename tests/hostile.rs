//! A hostile client against a real `leasedesk serve` process: half-sent and
//! malformed requests, stalls, revocations and shutdown under load. Plain
//! sockets, so the test sends exactly the bytes it means.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A `leasedesk serve` on 127.0.0.1:0 over its own data folder.
struct Served {
    child: Child,
    addr: String,
    data: PathBuf,
    log: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl Served {
    fn start(flags: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let log = dir.path().join("serve.log");
        let mut served = Self::start_on(&data, &log, flags);
        served._dir = Some(dir);
        served
    }

    fn start_on(data: &Path, log: &Path, flags: &[&str]) -> Self {
        Self::start_logging_to(data, log, std::fs::File::create(log).unwrap().into(), flags)
    }

    /// Serves `data` with its log written to `stderr` (`log` names where
    /// `log_text` reads it).
    fn start_logging_to(data: &Path, log: &Path, stderr: Stdio, flags: &[&str]) -> Self {
        for name in ["alice", "bob"] {
            // Already there when a test serves the same folder again.
            let _ = crate::harness::leasedesk()
                .arg("--data")
                .arg(data)
                .args(["user", "add", name])
                .output();
        }
        let mut child = crate::harness::leasedesk()
            .arg("--data")
            .arg(data)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .expect("the address line")
            .to_owned();
        Self {
            child,
            addr,
            data: data.to_owned(),
            log: log.to_owned(),
            _dir: None,
        }
    }

    fn token(&self, name: &str) -> String {
        leasedesk_cli(&self.data, &["user", "token", name])
            .lines()
            .last()
            .unwrap()
            .to_owned()
    }

    fn connect(&self) -> TcpStream {
        let socket = TcpStream::connect(&self.addr).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        socket
    }

    /// Sends `request` on a new connection and reads the answer to its end.
    fn send(&self, request: &[u8]) -> Answer {
        let mut socket = self.connect();
        socket.write_all(request).unwrap();
        Answer::read(&mut socket)
    }

    fn get(&self, path: &str, token: &str) -> Answer {
        self.send(
            format!(
                "GET {path} HTTP/1.1\r\nauthorization: Bearer {token}\r\nconnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
    }

    fn terminate(&mut self) {
        crate::harness::ask_to_stop(&mut self.child);
    }

    /// Waits up to `limit` for the process to exit; how long it took.
    fn exit_within(&mut self, limit: Duration) -> Duration {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "serve exited with {status}");
                return started.elapsed();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("serve did not exit within {limit:?} of SIGTERM");
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn leasedesk_cli(data: &Path, args: &[&str]) -> String {
    let out = crate::harness::leasedesk()
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: Value,
}

impl Answer {
    /// One answer: a head, then a body of Content-Length bytes (or to the end).
    fn read(socket: &mut TcpStream) -> Answer {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let n = socket.read(&mut buf).expect("an answer");
            assert!(n > 0, "the connection closed without an answer: {bytes:?}");
            bytes.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&bytes[..head_end]).to_lowercase();
        let status = head[9..12].parse().unwrap();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .map(|n| n.trim().parse::<usize>().unwrap());
        let mut body = bytes[head_end..].to_vec();
        let chunked = head.contains("transfer-encoding: chunked");
        let complete = |body: &[u8]| match length {
            Some(n) => body.len() >= n,
            None => chunked && (body.ends_with(b"\r\n0\r\n\r\n") || body.starts_with(b"0\r\n\r\n")),
        };
        while !complete(&body) {
            match socket.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&buf[..n]),
            }
        }
        if chunked {
            body = dechunk(&body);
        }
        Answer {
            status,
            head,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        }
    }

    /// An error in the API's shape: this status and code, a message, no-store.
    fn refused(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.body["error"], code, "{self:?}");
        assert!(
            self.body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{self:?}"
        );
        assert!(self.head.contains("cache-control: no-store"), "{self:?}");
    }
}

/// A chunked body's bytes.
fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = chunked.windows(2).position(|w| w == b"\r\n") else {
            return body;
        };
        let size = std::str::from_utf8(&chunked[..line_end]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap(), 16).unwrap();
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&chunked[start..start + size]);
        chunked = &chunked[start + size + 2..];
    }
}

/// Whether the server has closed `socket` (reads the end of the stream).
fn closed_by_server(socket: &mut TcpStream, within: Duration) -> bool {
    socket.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match socket.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

fn bearer(token: &str) -> String {
    format!("authorization: Bearer {token}\r\n")
}

/// Imports `bytes` at `path` as the token's owner; the artifact's id.
fn import(served: &Served, token: &str, path: &str, bytes: &[u8]) -> String {
    let mut request = format!(
        "POST /v1/artifacts?path={path} HTTP/1.1\r\n{}content-length: {}\r\nconnection: close\r\n\r\n",
        bearer(token),
        bytes.len()
    )
    .into_bytes();
    request.extend_from_slice(bytes);
    let answer = served.send(&request);
    assert_eq!(answer.status, 201, "{answer:?}");
    answer.body["id"].as_str().unwrap().to_owned()
}

fn post_json(served: &Served, token: &str, path: &str, json: &str) -> Answer {
    served.send(
        format!(
            "POST {path} HTTP/1.1\r\n{}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
            bearer(token),
            json.len()
        )
        .as_bytes(),
    )
}

/// hero.psd imported and checked out by the token's owner: (artifact, check-out).
fn checked_out(served: &Served, token: &str) -> (String, String) {
    let id = import(served, token, "hero.psd", b"version one");
    let checkout = post_json(
        served,
        token,
        &format!("/v1/artifacts/{id}/checkouts"),
        "{}",
    );
    assert_eq!(checkout.status, 201, "{checkout:?}");
    (id, checkout.body["id"].as_str().unwrap().to_owned())
}

/// A check-in that declares `declared` bytes and sends only `sent`.
fn begin_checkin(
    served: &Served,
    token: &str,
    checkout_id: &str,
    declared: usize,
    sent: &[u8],
) -> TcpStream {
    let mut socket = served.connect();
    let mut request = format!(
        "POST /v1/checkouts/{checkout_id}/checkin HTTP/1.1\r\n{}content-length: {declared}\r\n\r\n",
        bearer(token)
    )
    .into_bytes();
    request.extend_from_slice(sent);
    socket.write_all(&request).unwrap();
    socket
}

/// The check-out is still open and the artifact still has its one version.
fn nothing_was_checked_in(served: &Served, token: &str, id: &str, checkout_id: &str) {
    let open = served.get(&format!("/v1/checkouts/{checkout_id}"), token);
    assert_eq!(open.body["state"], "open", "{open:?}");
    let versions = served.get(&format!("/v1/artifacts/{id}/versions"), token);
    assert_eq!(versions.body["versions"].as_array().unwrap().len(), 1);
}

#[test]
fn half_sent_requests_are_dropped_and_normal_clients_served_meanwhile() {
    let served = Served::start(&["--header-timeout", "2s"]);
    let token = served.token("alice");
    let opened = Instant::now();
    let mut idle: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut socket = served.connect();
            socket
                .write_all(b"GET /v1/me HTTP/1.1\r\nhost: x\r\n")
                .unwrap();
            socket
        })
        .collect();
    // Meanwhile a normal client is served at once.
    let answer = served.get("/v1/me", &token);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        opened.elapsed() < Duration::from_secs(2),
        "served while 20 half-sent requests were open"
    );
    for socket in &mut idle {
        assert!(
            closed_by_server(socket, Duration::from_secs(10)),
            "a half-sent request is dropped after the header timeout"
        );
    }
    let dropped_after = opened.elapsed();
    assert!(
        dropped_after >= Duration::from_millis(1900),
        "not before the header timeout: {dropped_after:?}"
    );
    println!("20 half-sent requests dropped after {dropped_after:?}");
    assert_eq!(served.get("/v1/me", &token).status, 200);
}

#[test]
fn past_the_connection_cap_a_client_gets_503_in_json() {
    let served = Served::start(&["--max-connections", "4", "--header-timeout", "2s"]);
    let token = served.token("alice");
    let held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut socket = served.connect();
            socket.write_all(b"GET /v1/me HTTP/1.1\r\n").unwrap();
            socket
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    served.get("/v1/me", &token).refused(503, "unavailable");
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        served.get("/v1/me", &token).status,
        200,
        "served again once they close"
    );
}

#[test]
fn an_upload_that_stalls_is_dropped_and_the_checkout_stays_open() {
    let served = Served::start(&["--stall-timeout", "2s"]);
    let token = served.token("alice");
    let (id, checkout_id) = checked_out(&served, &token);
    let mut socket = begin_checkin(&served, &token, &checkout_id, 1000, b"ten bytes.");
    let started = Instant::now();
    let answer = Answer::read(&mut socket);
    answer.refused(400, "bad_request");
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        started.elapsed()
    );
    nothing_was_checked_in(&served, &token, &id, &checkout_id);
}

#[test]
fn every_http_layer_error_is_our_json() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let auth = bearer(&token);
    let id = import(&served, &token, "hero.psd", b"version one");
    let big = "a".repeat(70_000);
    let long = "a".repeat(9_000);
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "a header too large",
            format!("GET /v1/me HTTP/1.1\r\nx-big: {big}\r\n\r\n").into_bytes(),
            431,
            "too_large",
        ),
        (
            "a URI too long",
            format!("GET /{long} HTTP/1.1\r\n\r\n").into_bytes(),
            414,
            "too_large",
        ),
        ("a bad request line", b"HELLO\r\n\r\n".to_vec(), 400, "bad_request"),
        (
            "an HTTP/2 preface",
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
            400,
            "bad_request",
        ),
        (
            "a duplicate Content-Length",
            format!("POST /v1/artifacts?path=x.psd HTTP/1.1\r\n{auth}content-length: 1\r\ncontent-length: 2\r\n\r\nab").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "Content-Length with Transfer-Encoding",
            format!("POST /v1/artifacts?path=x.psd HTTP/1.1\r\n{auth}content-length: 1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a NUL in a header",
            format!("GET /v1/me HTTP/1.1\r\n{auth}x-a: a\0b\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "an id that is not UTF-8",
            format!("GET /v1/artifacts/%FF%FE HTTP/1.1\r\n{auth}connection: close\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a chunk size that is not hex",
            format!("POST /v1/artifacts?path=x.psd HTTP/1.1\r\n{auth}transfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a negative chunk size",
            format!("POST /v1/artifacts?path=x.psd HTTP/1.1\r\n{auth}transfer-encoding: chunked\r\n\r\n-5\r\nabcde\r\n0\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a chunk longer than its size",
            format!("POST /v1/artifacts?path=x.psd HTTP/1.1\r\n{auth}transfer-encoding: chunked\r\n\r\n2\r\nabcde\r\n0\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a JSON array for an object",
            format!("POST /v1/artifacts/{id}/checkouts HTTP/1.1\r\n{auth}content-length: 11\r\nconnection: close\r\n\r\n[60,\"note\"]").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a JSON body over its limit",
            {
                let json = format!("{{\"note\":\"{}\"}}", "n".repeat(70_000));
                format!("POST /v1/artifacts/{id}/checkouts HTTP/1.1\r\n{auth}content-length: {}\r\nconnection: close\r\n\r\n{json}", json.len()).into_bytes()
            },
            413,
            "too_large",
        ),
        (
            "after past 2^63 - 1",
            format!("GET /v1/events?after=9223372036854775808 HTTP/1.1\r\n{auth}connection: close\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "a stream's after past 2^63 - 1",
            format!("GET /v1/events/stream?after=9223372036854775808 HTTP/1.1\r\n{auth}connection: close\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "limit past 2^63 - 1",
            format!("GET /v1/events?limit=9223372036854775808 HTTP/1.1\r\n{auth}connection: close\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
        (
            "version past 2^63 - 1",
            format!("GET /v1/artifacts/{id}/content?version=9223372036854775808 HTTP/1.1\r\n{auth}connection: close\r\n\r\n").into_bytes(),
            400,
            "bad_request",
        ),
    ];
    for (what, request, status, code) in &cases {
        let answer = served.send(request);
        assert_eq!(answer.status, *status, "{what}: {answer:?}");
        answer.refused(*status, code);
    }
    // A second, malformed request on a kept-alive connection is refused alike.
    let mut socket = served.connect();
    socket
        .write_all(format!("GET /v1/me HTTP/1.1\r\n{auth}\r\nBROKEN\r\n\r\n").as_bytes())
        .unwrap();
    let mut both = String::new();
    socket.read_to_string(&mut both).unwrap();
    let second = both.find("HTTP/1.1 400").expect("a second answer");
    assert!(both.starts_with("HTTP/1.1 200"), "{both}");
    assert!(both[second..].contains("cache-control: no-store"), "{both}");
    assert!(
        both[second..].contains(r#"{"error":"bad_request","message":"#),
        "{both}"
    );
    // A chunked upload cut off by a client that leaves: its error, not ours.
    let mut socket = served.connect();
    socket
        .write_all(format!("POST /v1/artifacts?path=cut.psd HTTP/1.1\r\n{auth}transfer-encoding: chunked\r\n\r\n10\r\nabc").as_bytes())
        .unwrap();
    socket.shutdown(Shutdown::Write).unwrap();
    Answer::read(&mut socket).refused(400, "bad_request");
    let artifacts = served.get("/v1/artifacts", &token);
    let paths: Vec<&str> = artifacts.body["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["hero.psd"], "no refused upload stored anything");
    let log = served.log_text();
    assert!(
        !log.contains("internal error"),
        "no refusal is logged as ours:\n{log}"
    );
    assert!(!log.contains("status=500"), "{log}");
    println!("{} malformed requests, none answered 500", cases.len() + 2);
}

/// A client that leaves in the middle of an upload: a client error in the
/// log, and nothing stored.
#[test]
fn a_client_that_leaves_mid_upload_is_not_an_internal_error() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let mut socket = served.connect();
    socket
        .write_all(
            format!(
                "POST /v1/artifacts?path=big.psd HTTP/1.1\r\n{}content-length: 10000000\r\n\r\n",
                bearer(&token)
            )
            .as_bytes(),
        )
        .unwrap();
    socket.write_all(&[7u8; 300_000]).unwrap();
    drop(socket);
    std::thread::sleep(Duration::from_millis(500));
    let log = served.log_text();
    assert!(!log.contains("internal error"), "{log}");
    assert!(log.contains("status=400"), "{log}");
    let artifacts = served.get("/v1/artifacts", &token);
    assert_eq!(artifacts.body["artifacts"], Value::Array(vec![]));
}

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
    let mut socket = served.connect();
    socket
        .write_all(
            format!(
                "GET /v1/events/stream HTTP/1.1\r\n{}{extra}accept: text/event-stream\r\n\r\n",
                bearer(token)
            )
            .as_bytes(),
        )
        .unwrap();
    socket
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
    leasedesk_cli(&served.data, &["user", "revoke", "alice"]);
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
    let mut half = served.connect();
    half.write_all(b"GET /v1/me HTTP/1.1\r\n").unwrap();
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
    let served = Served::start_logging_to(&data, &dir.path().join("none"), Stdio::piped(), &[]);
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

/// Blobs in a data folder (each shard folder's files; not `tmp/`).
fn stored_blobs(data: &Path) -> Vec<String> {
    let mut blobs = Vec::new();
    for shard in std::fs::read_dir(data.join("blobs")).unwrap() {
        let shard = shard.unwrap();
        if shard.file_name() == "tmp" || !shard.file_type().unwrap().is_dir() {
            continue;
        }
        for blob in std::fs::read_dir(shard.path()).unwrap() {
            blobs.push(blob.unwrap().file_name().to_string_lossy().into_owned());
        }
    }
    blobs
}

#[test]
fn concurrent_imports_of_one_path_leave_only_the_winners_blob() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let answers: Vec<u16> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..16)
            .map(|n| {
                let (served, token) = (&served, &token);
                scope.spawn(move || {
                    let bytes = format!("import number {n}").repeat(10_000).into_bytes();
                    let mut request = format!(
                        "POST /v1/artifacts?path=race.psd HTTP/1.1\r\n{}content-length: {}\r\nconnection: close\r\n\r\n",
                        bearer(token),
                        bytes.len()
                    )
                    .into_bytes();
                    request.extend_from_slice(&bytes);
                    served.send(&request).status
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(
        answers.iter().filter(|&&s| s == 201).count(),
        1,
        "{answers:?}"
    );
    assert_eq!(
        answers.iter().filter(|&&s| s == 409).count(),
        15,
        "{answers:?}"
    );
    let artifacts = served.get("/v1/artifacts", &token);
    let head = artifacts.body["artifacts"][0]["head"]["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let blobs = stored_blobs(&served.data);
    assert_eq!(blobs.len(), 1, "only the winner's blob is kept: {blobs:?}");
    assert_eq!(format!("blake3:{}", blobs[0]), head);
}

fn import_status(served: &Served, token: &str, encoded_path: &str) -> Answer {
    served.send(
        format!(
            "POST /v1/artifacts?path={encoded_path} HTTP/1.1\r\n{}content-length: 5\r\nconnection: close\r\n\r\nbytes",
            bearer(token)
        )
        .as_bytes(),
    )
}

#[test]
fn paths_unsafe_on_windows_or_macos_are_refused_on_import() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    for unsafe_path in [
        "C%3A%2FUsers%2FPublic%2Fevil.bat",
        "C%3Ax",
        "x.psd%3Astream",
        "CON",
        "nul.txt",
        "trail.",
        "trail%20",
        "a%E2%80%AEgpj.exe",
        "%FF.psd",
        "a%5Cb.psd",
    ] {
        import_status(&served, &token, unsafe_path).refused(422, "invalid");
    }
    for (first, second) in [
        ("Case.psd", "case.psd"),
        ("caf%C3%A9.psd", "cafe%CC%81.psd"),
        ("a", "a%2Fb.psd"),
        ("deep%2Fb.psd", "DEEP"),
    ] {
        assert_eq!(import_status(&served, &token, first).status, 201, "{first}");
        import_status(&served, &token, second).refused(409, "exists");
    }
    let listed = served.get("/v1/artifacts", &token);
    assert_eq!(
        listed.body["artifacts"].as_array().unwrap().len(),
        4,
        "{listed:?}"
    );
}

#[test]
fn a_client_that_closes_its_side_after_a_whole_request_gets_its_answer() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let mut socket = served.connect();
    socket
        .write_all(format!("GET /v1/me HTTP/1.1\r\n{}\r\n", bearer(&token)).as_bytes())
        .unwrap();
    socket.shutdown(Shutdown::Write).unwrap();
    let answer = Answer::read(&mut socket);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["participant"], "user:alice");
}

#[test]
fn an_upload_that_trickles_in_is_dropped_and_the_checkout_stays_open() {
    let served = Served::start(&["--stall-timeout", "2s"]);
    let token = served.token("alice");
    let (id, checkout_id) = checked_out(&served, &token);
    let mut socket = begin_checkin(&served, &token, &checkout_id, 100000, b"");
    // A byte every 0.7 s: never a 2 s gap, but far below 1 KiB/s.
    let started = Instant::now();
    let answer = loop {
        if socket.write_all(b"x").is_err() {
            break Answer::read(&mut socket);
        }
        socket
            .set_read_timeout(Some(Duration::from_millis(700)))
            .unwrap();
        let mut peek = [0u8; 1];
        if socket.peek(&mut peek).is_ok_and(|n| n > 0) {
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            break Answer::read(&mut socket);
        }
        assert!(started.elapsed() < Duration::from_secs(15), "never dropped");
    };
    answer.refused(400, "bad_request");
    assert!(
        answer.body["message"]
            .as_str()
            .unwrap()
            .contains("slower than"),
        "{answer:?}"
    );
    nothing_was_checked_in(&served, &token, &id, &checkout_id);
}

/// CRC-32 (IEEE), as a PNG chunk carries it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG whose header claims `width`×`height` 8-bit RGBA pixels, with one
/// small compressed chunk after it: a few hundred bytes that would decode to
/// width × height × 4 bytes.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        let mut typed = kind.to_vec();
        typed.extend_from_slice(data);
        out.extend_from_slice(&typed);
        out.extend_from_slice(&crc32(&typed).to_be_bytes());
        out
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    // A stored (uncompressed) zlib block of zeros: the first row's start.
    let mut idat = vec![0x78, 0x01, 0x01, 0x00, 0x01, 0xff, 0xfe];
    idat.extend_from_slice(&[0u8; 256]);
    png.extend(chunk(b"IDAT", &idat));
    png.extend(chunk(b"IEND", b""));
    png
}

#[test]
fn bad_files_get_no_preview_and_the_server_stays_up_within_its_budget() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let mut random = vec![0u8; 1 << 20];
    getrandom::fill(&mut random).unwrap();
    let mut truncated = png_claiming(64, 64);
    truncated.truncate(40);
    let mut psd_bomb = b"8BPS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x04".to_vec();
    psd_bomb.extend_from_slice(&300_000u32.to_be_bytes());
    psd_bomb.extend_from_slice(&300_000u32.to_be_bytes());
    psd_bomb.extend_from_slice(&[0, 8, 0, 3]);
    let files: [(&str, Vec<u8>); 5] = [
        ("bomb.png", png_claiming(100_000, 100_000)),
        ("wide.png", png_claiming(1_000_000, 1)),
        ("noise.psd", random),
        ("cut.png", truncated),
        ("bomb.psb", psd_bomb),
    ];
    let ids: Vec<String> = files
        .iter()
        .map(|(name, bytes)| import(&served, &token, name, bytes))
        .collect();
    // All at once, twice over: the second round is answered from the cache.
    for round in 0..2 {
        std::thread::scope(|scope| {
            let asked: Vec<_> = ids
                .iter()
                .map(|id| {
                    let (served, token) = (&served, &token);
                    scope.spawn(move || {
                        served.get(&format!("/v1/artifacts/{id}/preview?size=512"), token)
                    })
                })
                .collect();
            for (answer, (name, _)) in asked.into_iter().zip(&files) {
                let answer = answer.join().unwrap();
                assert_eq!(answer.status, 404, "{name}, round {round}: {answer:?}");
                assert_eq!(answer.body["error"], "no_preview", "{name}: {answer:?}");
            }
        });
    }
    let health = served.get("/v1/health", &token);
    assert_eq!(health.status, 200);
    // The peak is read from /proc: the memory budget is checked on Linux.
    #[cfg(target_os = "linux")]
    {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", served.child.id())).unwrap();
        let peak_kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        assert!(
            peak_kib < 256 << 10,
            "the server's peak memory was {} MiB",
            peak_kib >> 10
        );
    }
}

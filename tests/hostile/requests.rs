//! Requests that never finish or are not HTTP: half-sent heads, the
//! connection cap, uploads that stall, trickle or are left, a side closed
//! early; every answer is our JSON and normal clients are served meanwhile.

use super::*;

/// A check-in begun on a server that drops an upload stalled for 2 s.
struct UploadBegun {
    served: Served,
    token: String,
    id: String,
    checkout_id: String,
    socket: TcpStream,
}

impl UploadBegun {
    /// Alice checks a file out and begins a check-in that declares
    /// `declared` bytes and sends only `sent`.
    fn start(declared: usize, sent: &[u8]) -> Self {
        let served = Served::start(&["--stall-timeout", "2s"]);
        let token = served.token("alice");
        let (id, checkout_id) = checked_out(&served, &token);
        let socket = begin_checkin(&served, &token, &checkout_id, declared, sent);
        Self {
            served,
            token,
            id,
            checkout_id,
            socket,
        }
    }

    /// The check-out is still open and the artifact still has its one version.
    fn nothing_was_checked_in(&self) {
        nothing_was_checked_in(&self.served, &self.token, &self.id, &self.checkout_id);
    }
}

#[test]
fn half_sent_requests_are_dropped_and_normal_clients_served_meanwhile() {
    let served = Served::start(&["--header-timeout", "2s"]);
    let token = served.token("alice");
    let opened = Instant::now();
    let mut idle: Vec<TcpStream> = (0..20)
        .map(|_| served.connect_and_write(b"GET /v1/me HTTP/1.1\r\nhost: x\r\n"))
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
        .map(|_| served.connect_and_write(b"GET /v1/me HTTP/1.1\r\n"))
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
    let mut upload = UploadBegun::start(1000, b"ten bytes.");
    let started = Instant::now();
    let answer = Answer::read(&mut upload.socket);
    answer.refused(400, "bad_request");
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        started.elapsed()
    );
    upload.nothing_was_checked_in();
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
    let twice = format!("GET /v1/me HTTP/1.1\r\n{auth}\r\nBROKEN\r\n\r\n");
    let mut socket = served.connect_and_write(twice.as_bytes());
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
    let cut = format!("POST /v1/artifacts?path=cut.psd HTTP/1.1\r\n{auth}transfer-encoding: chunked\r\n\r\n10\r\nabc");
    let mut socket = served.connect_and_write(cut.as_bytes());
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

/// A body refused after its first bytes (413 past a JSON body's 64 KiB) and
/// sent on whole by a client that reads only then: the server reads it away
/// rather than close on it, so the refusal arrives, not a reset.
#[test]
fn a_refused_body_sent_whole_still_gets_its_refusal() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let id = import(&served, &token, "hero.psd", b"version one");
    let body = vec![b' '; 24 << 20];
    let head = format!(
        "POST /v1/artifacts/{id}/checkouts HTTP/1.1\r\n{}content-length: {}\r\nconnection: close\r\n\r\n",
        bearer(&token),
        body.len()
    );
    let mut socket = served.connect_and_write(head.as_bytes());
    socket
        .write_all(&body)
        .expect("the server reads the refused body on to its end");
    Answer::read(&mut socket).refused(413, "too_large");
}

/// A client that waits for `100 Continue` and is refused first sends no
/// body: its connection is closed at once, not held open to read one.
#[test]
fn a_refusal_before_a_continue_closes_at_once() {
    let served = Served::start(&[]);
    let head = "POST /v1/artifacts?path=big.psd HTTP/1.1\r\nauthorization: Bearer wrong\r\nexpect: 100-continue\r\ncontent-length: 10000000\r\n\r\n";
    let mut socket = served.connect_and_write(head.as_bytes());
    let started = Instant::now();
    Answer::read(&mut socket).refused(401, "unauthorized");
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut rest = Vec::new();
    let _ = socket.read_to_end(&mut rest);
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the connection stayed open {:?}",
        started.elapsed()
    );
}

/// A client that leaves in the middle of an upload: a client error in the
/// log, and nothing stored.
#[test]
fn a_client_that_leaves_mid_upload_is_not_an_internal_error() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let request = format!(
        "POST /v1/artifacts?path=big.psd HTTP/1.1\r\n{}content-length: 10000000\r\n\r\n",
        bearer(&token)
    );
    let mut socket = served.connect_and_write(request.as_bytes());
    socket.write_all(&[7u8; 300_000]).unwrap();
    drop(socket);
    // The request's line is logged once the server has seen the client go.
    served.process.wait_for_log("status=400");
    let log = served.log_text();
    assert!(!log.contains("internal error"), "{log}");
    let artifacts = served.get("/v1/artifacts", &token);
    assert_eq!(artifacts.body["artifacts"], Value::Array(vec![]));
}

#[test]
fn a_client_that_closes_its_side_after_a_whole_request_gets_its_answer() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let request = format!("GET /v1/me HTTP/1.1\r\n{}\r\n", bearer(&token));
    let mut socket = served.connect_and_write(request.as_bytes());
    socket.shutdown(Shutdown::Write).unwrap();
    let answer = Answer::read(&mut socket);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["participant"], "user:alice");
}

#[test]
fn an_upload_that_trickles_in_is_dropped_and_the_checkout_stays_open() {
    let mut upload = UploadBegun::start(100000, b"");
    let socket = &mut upload.socket;
    // A byte every 0.7 s: never a 2 s gap, but far below 1 KiB/s.
    let started = Instant::now();
    let answer = loop {
        if socket.write_all(b"x").is_err() {
            break Answer::read(socket);
        }
        socket
            .set_read_timeout(Some(Duration::from_millis(700)))
            .unwrap();
        let mut peek = [0u8; 1];
        if socket.peek(&mut peek).is_ok_and(|n| n > 0) {
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            break Answer::read(socket);
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
    upload.nothing_was_checked_in();
}

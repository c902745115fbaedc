//! Every malformed or hostile request of the set, sent raw: what each gets
//! (an answer in our JSON, a close, silence) and that normal clients are
//! served meanwhile.

use super::*;

/// Every malformed or hostile request of the set, against one artifact
/// and one open check-out of another.
fn probes(token: &str, artifact: &str, checkout: &str) -> Vec<Probe> {
    let bearer = format!("Bearer {token}");
    let auth = [("Authorization", bearer.as_str())];
    let json_auth = [
        ("Authorization", bearer.as_str()),
        ("Content-Type", "application/json"),
    ];
    let mut out = Vec::new();
    let mut add = |kind: &'static str, bytes: Vec<u8>, close_write: bool| {
        out.push(Probe {
            kind,
            head: bytes.starts_with(b"HEAD "),
            bytes,
            close_write,
        })
    };

    // Request lines.
    let lines: Vec<Vec<u8>> = vec![
        b"GARBAGE\r\n\r\n".to_vec(),
        b"GET\r\n\r\n".to_vec(),
        b"GET /v1/me\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/9.9\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1 extra\r\nHost: x\r\n\r\n".to_vec(),
        b"GET  /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET\t/v1/me\tHTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET * HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n".to_vec(),
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1\nHost: x\n\n".to_vec(),
        b"\r\n\r\nGET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"G\0T /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/\x01me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/\xffme HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.0\r\n\r\n".to_vec(),
        b"GET http://evil.example/v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/me?%zz HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        format!("{} / HTTP/1.1\r\nHost: x\r\n\r\n", "X".repeat(2000)).into_bytes(),
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE AFTER\r\n\r\n".to_vec(),
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1\r\n\r\n".to_vec(),
        b"get /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1\r\nHost: x\r\n\r".to_vec(),
        b"GET /v1/me HTTP/1.1\r\nHost: x\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1\r\nHost: x\r\n\n\r\n".to_vec(),
        b"GET /v1/me HTTP/01.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /v1/me HTTP/1.1\r\r\nHost: x\r\n\r\n".to_vec(),
    ];
    for line in lines {
        // Only a head that is not whole needs the bench's end of stream to
        // be answered; a whole one gets it not, since hyper drops the
        // answer to a client that has half-closed.
        let whole =
            line.windows(4).any(|w| w == b"\r\n\r\n") || line.windows(2).any(|w| w == b"\n\n");
        add("request line", line, !whole);
    }

    // Heads: size, URI length, framing, bytes a header may not hold.
    let big = "a".repeat(70 << 10);
    add(
        "header",
        request(
            "GET",
            "/v1/me",
            &[("Authorization", &bearer), ("X-Big", &big)],
            b"",
        ),
        false,
    );
    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    add(
        "header",
        format!("GET /v1/me HTTP/1.1\r\nHost: x\r\n{many}\r\n").into_bytes(),
        false,
    );
    for uri_len in [8 << 10, 9 << 10, 60 << 10, 100 << 10] {
        let target = format!("/v1/artifacts/{}", "a".repeat(uri_len));
        add("uri", request("GET", &target, &auth, b""), false);
        let query = format!("/v1/events?after=0&x={}", "9".repeat(uri_len));
        add("uri", request("GET", &query, &auth, b""), false);
    }
    let checkouts = format!("/v1/artifacts/{artifact}/checkouts");
    let framing: Vec<(&str, &[u8])> = vec![
        ("Content-Length: 2\r\nContent-Length: 3", b"{}"),
        ("Content-Length: 2\r\nContent-Length: 2", b"{}"),
        ("Content-Length: 2, 2", b"{}"),
        ("Content-Length: -1", b"{}"),
        ("Content-Length: abc", b"{}"),
        ("Content-Length: +2", b"{}"),
        ("Content-Length: 99999999999999999999999", b"{}"),
        ("Content-Length: 18446744073709551616", b"{}"),
        (
            "Content-Length: 2\r\nTransfer-Encoding: chunked",
            b"2\r\n{}\r\n0\r\n\r\n",
        ),
        ("Transfer-Encoding: gzip", b"{}"),
        ("Transfer-Encoding: chunked, gzip", b"{}"),
        ("Transfer-Encoding: identity", b"{}"),
        (
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
            b"2\r\n{}\r\n0\r\n\r\n",
        ),
        ("Transfer-Encoding : chunked", b"2\r\n{}\r\n0\r\n\r\n"),
        ("Content-Length: 10", b"{}"),
        ("X-Nul: a\0b\r\nContent-Length: 2", b"{}"),
        ("X-N\0ul: ab\r\nContent-Length: 2", b"{}"),
        ("NoColonHere\r\nContent-Length: 2", b"{}"),
        ("Bad[]Name: x\r\nContent-Length: 2", b"{}"),
        (": empty-name\r\nContent-Length: 2", b"{}"),
        ("X-Cr: a\rb\r\nContent-Length: 2", b"{}"),
        ("X-High: \u{ff}\u{fe}\r\nContent-Length: 2", b"{}"),
        ("Expect: nonsense\r\nContent-Length: 2", b"{}"),
        ("Expect: 100-continue\r\nContent-Length: 2", b"{}"),
        ("Host: second\r\nContent-Length: 2", b"{}"),
        ("Content-Type: application/xml\r\nContent-Length: 2", b"{}"),
    ];
    for (headers, body) in framing {
        let mut bytes = format!(
            "POST {checkouts} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\nAuthorization: {bearer}\r\n{headers}\r\n\r\n"
        )
        .into_bytes();
        bytes.extend_from_slice(body);
        // A body shorter than its Content-Length needs the end of stream.
        let short = headers == "Content-Length: 10";
        add("framing", bytes, short);
    }
    // Upload headers with values the server must refuse as a client's error.
    let zeros = format!("blake3:{}", "0".repeat(64));
    for (path, header, value) in [
        ("digest", "Leasedesk-Digest", "blake3:zz"),
        ("digest2", "Leasedesk-Digest", zeros.as_str()),
        ("message", "Leasedesk-Message", "%FF%FE"),
    ] {
        let path = format!("/v1/artifacts?path=hostile/{path}.bin");
        let headers = [("Authorization", bearer.as_str()), (header, value)];
        add("header", request("POST", &path, &headers, b"bytes"), false);
    }

    // Chunked bodies, on an upload and on two JSON endpoints.
    let long_line = format!("5;{}\r\nhello\r\n0\r\n\r\n", "a".repeat(5000));
    let chunked: Vec<(&[u8], bool)> = vec![
        (b"zz\r\nhello\r\n0\r\n\r\n", false),
        (b"-5\r\nhello\r\n0\r\n\r\n", false),
        (b"FFFFFFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", false),
        (b"FFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", true),
        (b"5\r\nhello world\r\n0\r\n\r\n", false),
        (b"a\r\nhi\r\n0\r\n\r\n", true),
        (b"5\r\nhel", true),
        (b"5\r\nhelloXX0\r\n\r\n", false),
        (b"0x5\r\nhello\r\n0\r\n\r\n", false),
        (b" 5\r\nhello\r\n0\r\n\r\n", false),
        (b"\r\nhello\r\n0\r\n\r\n", false),
        (b"5\r\nhello\r\n", true),
        (b"0\r\nX-Trailer: a\0b\r\n\r\n", false),
        (long_line.as_bytes(), false),
    ];
    let chunked_targets = [
        "/v1/artifacts?path=hostile/chunked-N.bin".to_owned(),
        checkouts.clone(),
        format!("/v1/checkouts/{checkout}/extend"),
    ];
    for (n, (body, close_write)) in chunked.iter().enumerate() {
        for target in &chunked_targets {
            let target = target.replace("chunked-N", &format!("chunked-{n}"));
            let mut bytes = format!(
                "POST {target} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\nAuthorization: {bearer}\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            .into_bytes();
            bytes.extend_from_slice(body);
            add("chunked", bytes, *close_write);
        }
    }

    // JSON bodies that are not the object asked for.
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let big_note = format!("{{\"note\":\"{}\"}}", "n".repeat(70 << 10));
    let huge = " ".repeat(1 << 20);
    let bodies: Vec<&[u8]> = vec![
        b"[60, \"note\"]",
        b"[]",
        b"\"a string\"",
        b"123",
        b"null",
        b"true",
        b"{\"ttl_seconds\": -1}",
        b"{\"ttl_seconds\": 1e400}",
        b"{\"ttl_seconds\": 18446744073709551616}",
        b"{\"ttl_seconds\": 9223372036854775808}",
        b"{\"ttl_seconds\": \"60\"}",
        b"{\"ttl_seconds\": 60.5}",
        b"{\"nope\": 1}",
        b"{",
        b"{\"ttl_seconds\": 60, \"ttl_seconds\": 60}",
        nested.as_bytes(),
        big_note.as_bytes(),
        huge.as_bytes(),
        b"\xff\xfe{}",
        b"\xef\xbb\xbf{}",
        b"{\"note\": \"\\ud800\"}",
        b"{\"ttl_seconds\": 0}",
        b"{\"reason\": 5}",
        b"{\"note\": \"a\0b\"}",
    ];
    let json_targets = [
        checkouts.clone(),
        format!("/v1/checkouts/{checkout}/extend"),
        format!("/v1/artifacts/{artifact}/edits"),
        format!("/v1/artifacts/{artifact}/break"),
    ];
    for body in &bodies {
        for target in &json_targets {
            add("json", request("POST", target, &json_auth, body), false);
        }
    }

    // Numbers past their range, and numbers that are not numbers.
    let numbers = [
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999",
        "-1",
        "-9223372036854775809",
        "1e3",
        "0x10",
        "abc",
        "1.5",
        "%2B1",
        "%00",
    ];
    for n in numbers {
        for target in [
            format!("/v1/events?after={n}"),
            format!("/v1/events?limit={n}"),
            format!("/v1/events?artifact={artifact}&after={n}"),
            format!("/v1/events/stream?after={n}"),
            format!("/v1/artifacts/{artifact}/content?version={n}"),
            format!("/v1/artifacts/{artifact}/preview?version={n}"),
            format!("/v1/artifacts/{artifact}/preview?size={n}"),
        ] {
            add("number", request("GET", &target, &auth, b""), false);
        }
        let last_id = [("Authorization", bearer.as_str()), ("Last-Event-ID", n)];
        add(
            "number",
            request("GET", "/v1/events/stream", &last_id, b""),
            false,
        );
    }

    // Ids that are not ids: not UTF-8, not UUIDs, too long.
    let ids = [
        "%FF%FE".to_owned(),
        "%C0%AF".to_owned(),
        "%80".to_owned(),
        "%00".to_owned(),
        "%ZZ".to_owned(),
        "not-a-uuid".to_owned(),
        "{00000000-0000-0000-0000-000000000000}".to_owned(),
        artifact.to_ascii_uppercase(),
        "a".repeat(7000),
        "..%2F..%2Fetc%2Fpasswd".to_owned(),
        "%2e%2e".to_owned(),
        format!("{artifact}%00"),
    ];
    // Every route that takes an id, written as the server's routes are.
    let routes_with_an_id = [
        "GET /v1/artifacts/{id}",
        "GET /v1/artifacts/{id}/versions",
        "GET /v1/artifacts/{id}/content",
        "GET /v1/artifacts/{id}/preview",
        "GET /v1/checkouts/{id}",
        "POST /v1/checkouts/{id}/extend",
        "POST /v1/checkouts/{id}/checkin",
        "POST /v1/checkouts/{id}/cancel",
        "DELETE /v1/edits/{id}",
        "POST /v1/edits/{id}/commit",
        "GET /v1/proposals/{id}",
        "POST /v1/proposals/{id}/accept",
        "GET /v1/events?artifact={id}",
    ];
    for id in &ids {
        for route in routes_with_an_id {
            let (method, template) = route.split_once(' ').expect("METHOD /path");
            let target = template.replace("{id}", id);
            add("id", request(method, &target, &auth, b""), false);
        }
    }

    // Endpoints and methods that do not exist.
    let nope = format!("/v1/artifacts/{artifact}/nope");
    for method in [
        "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "HEAD", "FOO", "get",
    ] {
        for target in [
            "/v1/me",
            "/v1/artifacts",
            "/v1/events",
            "/v1/health",
            "/v1/nope",
            "/",
            "/v2/me",
            nope.as_str(),
            "/v1/me/",
            "//v1/me",
        ] {
            add("route", request(method, target, &auth, b""), false);
        }
    }

    // Tokens that are wrong, missing or malformed.
    let long = format!("Bearer {}", "a".repeat(7000));
    let high = format!("Bearer {token}\u{80}");
    let variants: Vec<Vec<(&str, String)>> = vec![
        vec![],
        vec![("Authorization", "Bearer".into())],
        vec![("Authorization", "Bearer ".into())],
        vec![("Authorization", "Bearer wrong".into())],
        vec![("Authorization", "Basic dXNlcjpwYXNz".into())],
        vec![("Authorization", format!("bearer {token}"))],
        vec![("Authorization", format!("Bearer  {token}"))],
        vec![("Authorization", token.to_owned())],
        vec![("Authorization", long)],
        vec![
            ("Authorization", bearer.clone()),
            ("Authorization", "Bearer wrong".into()),
        ],
        vec![("Authorization", high)],
        vec![("Authorization", format!("{bearer}x"))],
        vec![("Authorization", bearer[..bearer.len() - 1].to_owned())],
        vec![("Authorization", format!("Bearer {token}\t{token}"))],
    ];
    for variant in &variants {
        let headers: Vec<(&str, &str)> = variant.iter().map(|(n, v)| (*n, v.as_str())).collect();
        for (method, target) in [
            ("GET", "/v1/me"),
            ("GET", "/v1/artifacts"),
            ("GET", "/v1/events/stream"),
            ("POST", checkouts.as_str()),
        ] {
            add("token", request(method, target, &headers, b""), false);
        }
    }

    // Random bytes, half of them ended as a head would be.
    let mut state = testkit::noise::Xorshift::new(0x2545_F491_4F6C_DD1D);
    for i in 0..100 {
        let len = 1 + (state.next_u64() % 2048) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| state.next_u64() as u8).collect();
        let ended = i % 2 == 0;
        if ended {
            bytes.extend_from_slice(b"\r\n\r\n");
        }
        add("random bytes", bytes, !ended);
    }
    // Random printable heads: a plausible line, then noise for headers.
    for _ in 0..40 {
        let noise: String = (0..(state.next_u64() % 300))
            .map(|_| (b' ' + (state.next_u64() % 95) as u8) as char)
            .collect();
        let bytes = format!("GET /v1/{noise} HTTP/1.1\r\nHost: x\r\n{noise}\r\n\r\n");
        add("random bytes", bytes.into_bytes(), false);
    }
    out
}

pub(super) async fn malformed(work: &Path) {
    let server = Server::start(&work.join("hostile"));
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for path in ["hostile/a.psd", "hostile/b.psd"] {
        ids.push(pairs::import(&http, &server.url, &server.token, path).await);
    }
    let checkout: Value = pairs::json(
        http.post(format!("{}/v1/artifacts/{}/checkouts", server.url, ids[1]))
            .bearer_auth(&server.token)
            .json(&json!({})),
    )
    .await;
    let probes = probes(&server.token, &ids[0], checkout["id"].as_str().unwrap());
    let kinds: std::collections::BTreeSet<&str> = probes.iter().map(|p| p.kind).collect();

    let addr = server.addr();
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(probe) = probes.get(i) else { break };
                let outcome = exchange(&addr, probe);
                outcomes.lock().unwrap().push((i, outcome));
            });
        }
    });
    let elapsed = started.elapsed();
    let outcomes = outcomes.into_inner().unwrap();

    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let (mut closed, mut closed_whole, mut silent, mut not_json, mut no_store_missing) =
        (0, 0, 0, 0, 0);
    for (i, outcome) in &outcomes {
        // What went wrong with probe i (and its status), and what it sent.
        let odd = |what: &str, status: Option<u16>| {
            let status = status.map_or(String::new(), |s| format!("{s}, "));
            let probe = &probes[*i];
            eprintln!("{what} ({status}{}): {}", probe.kind, preview(&probe.bytes));
        };
        match outcome {
            Outcome::Answered {
                status,
                no_store,
                json_error,
            } => {
                *statuses.entry(*status).or_default() += 1;
                if !json_error {
                    not_json += 1;
                    odd("not a JSON error", Some(*status));
                }
                if !no_store {
                    no_store_missing += 1;
                    odd("no Cache-Control: no-store", Some(*status));
                }
            }
            Outcome::Closed => {
                closed += 1;
                if !probes[*i].close_write {
                    closed_whole += 1;
                    odd("closed, no answer", None);
                }
            }
            Outcome::Silent => {
                silent += 1;
                odd("no answer in 20 s", None);
            }
        }
    }
    let fives: usize = statuses.range(500..600).map(|(_, n)| n).sum();
    let five_hundred = statuses.get(&500).copied().unwrap_or(0);
    let status_list = statuses
        .iter()
        .map(|(s, n)| format!("{s}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let alive = http
        .get(format!("{}/v1/me", server.url))
        .bearer_auth(&server.token)
        .send()
        .await
        .is_ok_and(|r| r.status() == 200);
    row(
        &format!(
            "malformed / hostile requests over raw TCP ({} kinds: {})",
            kinds.len(),
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        ),
        format!(
            "**{} sent, {five_hundred} answered 500** ({fives} any 5xx), in {:.1} s by 8 clients; server still answers `GET /v1/me`: {}",
            probes.len(),
            elapsed.as_secs_f64(),
            if alive { "yes" } else { "NO" }
        ),
        "0 × 500",
        value(five_hundred as f64, "answered 500")
            .and("sent", probes.len() as f64, "requests")
            .and("any 5xx", fives as f64, "answers"),
    );
    row(
        "their answers, by status",
        format!(
            "{status_list}; closed without an answer: {closed} ({} cut off by the bench mid-head or mid-body, {closed_whole} whole); no answer in 20 s: {silent}",
            closed - closed_whole
        ),
        "",
        value(closed_whole as f64, "closed whole without an answer")
            .and("no answer in 20 s", silent as f64, "requests"),
    );
    row(
        "answers whose body is not `{\"error\",\"message\"}` (status ≥ 400, HEAD excepted) / without `Cache-Control: no-store`",
        format!("**{not_json} / {no_store_missing}**"),
        "0 / 0",
        value(not_json as f64, "answers")
            .and("without no-store", no_store_missing as f64, "answers"),
    );
}

fn preview(bytes: &[u8]) -> String {
    bytes[..bytes.len().min(100)].escape_ascii().to_string()
}

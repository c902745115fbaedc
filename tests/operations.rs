//! Running a server for real: the health check (503 with a reason, within
//! seconds), Prometheus metrics on their own address, JSON logs without a
//! token. Each test runs a real `leasedesk serve` process on 127.0.0.1:0.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::ServeProcess;
use testkit::WithEnvironment;

/// A `leasedesk serve` over its own data folder, its stderr in a file.
struct Served {
    process: ServeProcess,
    api: String,
    /// `http://ADDR/metrics`, with `--metrics-listen`.
    metrics: Option<String>,
    data: PathBuf,
}

impl Served {
    fn start(flags: &[&str], env: &[(&str, &str)]) -> Self {
        let cli = crate::harness::cli_in_temp_dir();
        cli.add_user("alice");
        let mut process = crate::harness::serve_logged(&cli)
            .args(flags)
            .envs(env.iter().copied())
            .spawn();
        let metrics = flags.contains(&"--metrics-listen").then(|| {
            let line = process.next_line();
            line.strip_prefix("metrics on ")
                .unwrap_or_else(|| panic!("the metrics address line, not {line:?}"))
                .to_owned()
        });
        Self {
            api: process.url.clone(),
            metrics,
            data: cli.data_dir().expect("a data folder"),
            process,
        }
    }

    fn token(&self) -> String {
        self.process.token("alice")
    }

    fn addr(&self) -> &str {
        self.process.addr()
    }

    async fn health(&self) -> (u16, Value) {
        let answer = reqwest::get(format!("{}/v1/health", self.api))
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap())
    }

    async fn scrape(&self) -> String {
        let answer = reqwest::get(self.metrics.as_deref().expect("--metrics-listen"))
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let kind = answer.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
        answer.text().await.unwrap()
    }

    /// SIGTERM, then the whole log once the process has exited.
    fn stop(mut self) -> String {
        self.process.ask_to_stop();
        let status = self.process.child.wait().unwrap();
        assert!(
            status.success() || !crate::harness::GRACEFUL_STOP,
            "{status}"
        );
        self.process.log_text()
    }
}

/// That the scrape's sample `name{labels}` is `expected` (None: absent).
fn assert_sample(scrape: &str, name: &str, labels: &str, expected: Option<f64>) {
    assert_eq!(
        sample(scrape, name, labels),
        expected,
        "{name}{{{labels}}} in {scrape}"
    );
}

/// The value of the sample `name{labels}` (labels as the text shows them,
/// `""` for none), if the scrape has it.
fn sample(scrape: &str, name: &str, labels: &str) -> Option<f64> {
    let key = match labels {
        "" => name.to_owned(),
        labels => format!("{name}{{{labels}}}"),
    };
    scrape.lines().find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        (series == key).then(|| value.parse().unwrap())
    })
}

async fn wait_for_sample(served: &Served, name: &str, labels: &str, wanted: f64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let scrape = served.scrape().await;
        if sample(&scrape, name, labels) == Some(wanted) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name}{{{labels}}} never became {wanted}:\n{scrape}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn client(token: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// The status `client` is answered for `GET url`.
async fn status_of_get(client: &reqwest::Client, url: String) -> reqwest::StatusCode {
    client.get(url).send().await.unwrap().status()
}

#[tokio::test]
async fn health_is_503_naming_the_blob_folder_while_it_is_gone_and_200_once_it_is_back() {
    let served = Served::start(&[], &[]);
    assert_eq!(
        served.health().await,
        (200, serde_json::json!({"status": "ok"}))
    );

    let blobs = served.data.join("blobs");
    let moved = served.data.join("blobs.moved");
    std::fs::rename(&blobs, &moved).unwrap();
    let (status, body) = served.health().await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unavailable");
    let reason = body["reason"].as_str().unwrap();
    assert!(
        reason.contains("blob folder") && reason.contains(&blobs.display().to_string()),
        "{reason}"
    );

    std::fs::rename(&moved, &blobs).unwrap();
    assert_eq!(
        served.health().await,
        (200, serde_json::json!({"status": "ok"}))
    );
    let log = served.stop();
    assert!(log.contains("health check failed"), "{log}");
}

// Windows never lets an open database file be moved away.
#[cfg(unix)]
#[tokio::test]
async fn health_is_503_naming_the_database_file_while_it_is_moved_away() {
    let served = Served::start(&[], &[]);
    let database = served.data.join("leasedesk.db");
    let moved = served.data.join("leasedesk.db.moved");
    std::fs::rename(&database, &moved).unwrap();
    let (status, body) = served.health().await;
    assert_eq!(status, 503, "{body}");
    let reason = body["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the database") && reason.contains(&database.display().to_string()),
        "{reason}"
    );
    std::fs::rename(&moved, &database).unwrap();
    assert_eq!(served.health().await.0, 200);
}

#[tokio::test]
async fn health_and_the_scrape_answer_within_seconds_when_the_store_hangs() {
    // Every read of the store made for health or metrics stops for good.
    let served = Served::start(
        &["--metrics-listen", "127.0.0.1:0"],
        &[("LEASEDESK_FAILPOINTS", "store.probe=pause")],
    );
    let started = Instant::now();
    let scrape = served.scrape().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "the scrape took {took:?}");
    assert_sample(&scrape, "leasedesk_store_up", "", Some(0.0));
    assert_sample(&scrape, "leasedesk_live_leases", "", None);

    // The read still hangs: the health check says so at once, rather than
    // starting another that would hang too.
    let started = Instant::now();
    let (status, body) = served.health().await;
    let took = started.elapsed();
    // Well inside the check's own 2 s limit, which a new check would wait
    // out (timed on Linux: under Wine a request alone can take a second).
    assert!(
        took < Duration::from_secs(1) || cfg!(windows),
        "the health check took {took:?}"
    );
    assert_eq!(status, 503, "{body}");
    let reason = body["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the database has not answered a check begun"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_hung_store_makes_the_health_check_503_after_its_time_limit() {
    let served = Served::start(&[], &[("LEASEDESK_FAILPOINTS", "store.probe=pause")]);
    let started = Instant::now();
    let (status, body) = served.health().await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "the database did not answer within 2 s");
}

#[tokio::test]
async fn metrics_count_requests_by_route_template_and_status_class_on_their_own_address() {
    let served = Served::start(&["--metrics-listen", "127.0.0.1:0"], &[]);
    let alice = client(&served.token());
    let api = &served.api;

    let imported: Value = crate::harness::json_of(
        alice
            .post(format!("{api}/v1/artifacts?path=hero.psd"))
            .body("version one"),
    )
    .await;
    let artifact = imported["id"].as_str().unwrap();
    let checkout = alice
        .post(format!("{api}/v1/artifacts/{artifact}/checkouts"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(checkout.status(), 201);
    let checkout: Value = checkout.json().await.unwrap();
    let checkout = checkout["id"].as_str().unwrap();

    let before = served.scrape().await;
    let route =
        |status: &str| format!(r#"method="GET",route="/v1/checkouts/{{id}}",status="{status}""#);
    let found = sample(&before, "leasedesk_http_requests_total", &route("2xx")).unwrap_or(0.0);
    for _ in 0..3 {
        let url = format!("{api}/v1/checkouts/{checkout}");
        assert_eq!(status_of_get(&alice, url).await, 200);
    }
    for _ in 0..2 {
        let stranger = uuid::Uuid::new_v4();
        let url = format!("{api}/v1/checkouts/{stranger}");
        assert_eq!(status_of_get(&alice, url).await, 404);
    }
    // Metrics are not served on the API's address, nor the API on theirs.
    let on_api = reqwest::get(format!("{api}/metrics")).await.unwrap();
    assert_eq!(on_api.status(), 404);
    let metrics_base = served
        .metrics
        .as_deref()
        .unwrap()
        .trim_end_matches("/metrics");
    let on_metrics = reqwest::get(format!("{metrics_base}/v1/health"))
        .await
        .unwrap();
    assert_eq!(on_metrics.status(), 404);

    let after = served.scrape().await;
    let ok = sample(&after, "leasedesk_http_requests_total", &route("2xx")).unwrap();
    assert_eq!(ok - found, 3.0, "{after}");
    let requests = "leasedesk_http_requests_total";
    let durations = "leasedesk_http_request_duration_seconds_count";
    let unmatched = r#"method="GET",route="unmatched",status="4xx""#;
    let checkout_made = r#"method="POST",route="/v1/artifacts/{id}/checkouts",status="2xx""#;
    for (name, labels, count) in [
        (requests, route("4xx"), 2.0),
        (durations, route("4xx"), 2.0),
        (requests, unmatched.to_owned(), 1.0),
        (requests, checkout_made.to_owned(), 1.0),
    ] {
        assert_sample(&after, name, &labels, Some(count));
    }
    // A route label is a template: no id of ours ever appears in one.
    assert!(
        !after.contains(checkout) && !after.contains(artifact),
        "{after}"
    );
    // The health check (no token) counts like any route; the scrape does not.
    assert!(!after.contains("route=\"/metrics\""), "{after}");

    // The lease is live, read from the store at the scrape.
    assert_sample(&after, "leasedesk_live_leases", "", Some(1.0));
    assert_sample(&after, "leasedesk_store_up", "", Some(1.0));
    assert_sample(&after, "leasedesk_uploads_in_flight", "", Some(0.0));
    let batches = sample(&after, "leasedesk_group_commit_batch_size_count", "").unwrap();
    let writes = sample(&after, "leasedesk_group_commit_batch_size_sum", "").unwrap();
    assert!(batches >= 2.0 && writes >= batches, "{after}");

    let cancelled = alice
        .post(format!("{api}/v1/checkouts/{checkout}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status(), 200);
    let last = served.scrape().await;
    assert_sample(&last, "leasedesk_live_leases", "", Some(0.0));
    assert!(
        sample(&last, "leasedesk_group_commit_batch_size_count", "").unwrap() > batches,
        "the cancel was a write of its own: {last}"
    );
}

#[tokio::test]
async fn an_upload_counts_as_in_flight_until_it_is_stored() {
    let served = Served::start(&["--metrics-listen", "127.0.0.1:0"], &[]);
    let token = served.token();
    let mut socket = crate::harness::connect(served.addr());
    write!(
        socket,
        "POST /v1/artifacts?path=big.psd HTTP/1.1\r\nauthorization: Bearer {token}\r\ncontent-length: 10\r\nconnection: close\r\n\r\nhalf."
    )
    .unwrap();
    wait_for_sample(&served, "leasedesk_uploads_in_flight", "", 1.0).await;

    socket.write_all(b"done.").unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let scrape = served.scrape().await;
    assert_sample(&scrape, "leasedesk_uploads_in_flight", "", Some(0.0));
    assert_sample(
        &scrape,
        "leasedesk_http_requests_total",
        r#"method="POST",route="/v1/artifacts",status="2xx""#,
        Some(1.0),
    );
}

#[tokio::test]
async fn json_logs_are_one_object_a_line_and_never_show_a_token() {
    // Everything every crate logs, to be sure none of it has a header.
    let served = Served::start(&["--log-format", "json"], &[("LEASEDESK_LOG", "trace")]);
    let token = served.token();
    let wrong = format!("{}x", &token[..token.len() - 1]);
    assert_eq!(
        status_of_get(&client(&token), format!("{}/v1/me", served.api)).await,
        200
    );
    assert_eq!(
        status_of_get(&client(&wrong), format!("{}/v1/me", served.api)).await,
        401
    );
    // Logging is asynchronous, and where a server is stopped by force
    // (Windows) what it had not written yet is lost.
    served.process.wait_for_log(r#""status":401"#);
    let log = served.stop();

    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    for line in &lines {
        assert!(line["level"].is_string(), "{line}");
        assert!(line["fields"].is_object(), "{line}");
    }
    let requests: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "request" && l["fields"]["path"] == "/v1/me")
        .collect();
    let statuses: Vec<&Value> = requests.iter().map(|l| &l["fields"]["status"]).collect();
    assert_eq!(statuses, [200, 401], "{log}");
    assert_eq!(requests[0]["level"], "INFO");
    assert!(lines.iter().any(|l| l["fields"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("serving on http://"))));
    assert!(!log.contains(&token) && !log.contains(&wrong), "{log}");
    assert!(!log.to_lowercase().contains("bearer"), "{log}");
}

/// A connection refused at the cap is counted, though it never makes a request.
#[tokio::test]
async fn connections_refused_at_the_cap_are_counted() {
    let served = Served::start(
        &["--metrics-listen", "127.0.0.1:0", "--max-connections", "2"],
        &[],
    );
    let refused = |scrape: &str| sample(scrape, "leasedesk_connections_refused_total", "");
    assert_eq!(refused(&served.scrape().await), Some(0.0));
    // Two connections hold the server's two slots with a request's first line.
    let held: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut socket = TcpStream::connect(served.addr()).unwrap();
            socket.write_all(b"GET /v1/health HTTP/1.1\r\n").unwrap();
            socket
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..3 {
        let answer =
            crate::harness::exchange(served.addr(), b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    }
    assert_eq!(refused(&served.scrape().await), Some(3.0));
    drop(held);
}

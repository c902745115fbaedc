//! Load a hostile client can put on the server: a thousand idle connections,
//! the largest pages of events and artifacts at once, shutdown with streams
//! and half-sent requests open.

use super::*;

const IDLE: usize = 1000;

/// A thousand connections that each send half a request head and stop,
/// a normal client meanwhile, and when the server drops them.
pub(super) async fn idle_connections(work: &Path) {
    let server = Server::start(&work.join("idle"));
    let addr = server.addr();
    let opened_at = Instant::now();
    let mut held = Vec::with_capacity(IDLE);
    for _ in 0..IDLE {
        let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
        socket
            .write_all(b"GET /v1/me HTTP/1.1\r\nHost: bench\r\nAuthorization: Bear")
            .await
            .unwrap();
        held.push(tokio::spawn(async move {
            let mut got = Vec::new();
            let _ = socket.read_to_end(&mut got).await;
            (Instant::now(), got)
        }));
    }
    let all_open = opened_at.elapsed();

    // A normal client, on a new connection for each request.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let (mut times, mut served) = (Vec::new(), 0);
    let me = format!("{}/v1/me", server.url);
    for _ in 0..50 {
        let started = Instant::now();
        let answer = http.get(&me).bearer_auth(&server.token).send().await;
        times.push(started.elapsed());
        if answer.is_ok_and(|r| r.status() == 200) {
            served += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let client_done = opened_at.elapsed();
    let still_held = held.iter().filter(|t| !t.is_finished()).count();
    let peak = server.peak_memory();

    let mut closes = Vec::new();
    let mut answered = BTreeMap::<String, usize>::new();
    for task in held {
        if let Ok(Ok((at, got))) = tokio::time::timeout(Duration::from_secs(60), task).await {
            closes.push(at - opened_at);
            let status = String::from_utf8_lossy(&got)
                .lines()
                .next()
                .unwrap_or("")
                .to_owned();
            *answered
                .entry(if status.is_empty() {
                    "nothing".into()
                } else {
                    status
                })
                .or_default() += 1;
        }
    }
    closes.sort();
    times.sort();
    row(
        &format!("{IDLE} connections holding half a request head"),
        format!(
            "all open in {:.2} s; {still_held} still held when the normal client finished ({:.1} s after the first opened)",
            all_open.as_secs_f64(),
            client_done.as_secs_f64()
        ),
        "held until the header timeout (10 s)",
        value(all_open.as_secs_f64(), "s").and("still held", still_held as f64, "connections"),
    );
    row(
        "normal client meanwhile: `GET /v1/me` on a new connection, 50 requests 100 ms apart",
        format!(
            "**{served}/50 served**, median {}, max {}",
            ms(times[times.len() / 2]),
            ms(*times.last().unwrap())
        ),
        "all served",
        value(served as f64, "requests served")
            .and("median", leases::millis(times[times.len() / 2]), "ms")
            .and("max", leases::millis(*times.last().unwrap()), "ms"),
    );
    row(
        "the server dropped the half-sent connections",
        format!(
            "**{} of {IDLE} closed by the server; first at {:.2} s, last at {:.2} s after the first was opened**; they received: {}; server peak memory {:.1} MiB",
            closes.len(),
            closes.first().map_or(f64::NAN, |d| d.as_secs_f64()),
            closes.last().map_or(f64::NAN, |d| d.as_secs_f64()),
            answered
                .iter()
                .map(|(k, n)| format!("{k} × {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            peak as f64 / 1048576.0
        ),
        "dropped after about 10 s",
        value(closes.len() as f64, "connections closed")
            .and("first", closes.first().map_or(f64::NAN, |d| d.as_secs_f64()), "s")
            .and("last", closes.last().map_or(f64::NAN, |d| d.as_secs_f64()), "s")
            .and("server peak memory", peak as f64 / 1048576.0, "MiB"),
    );
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

/// Adds to `count` the events after `after`, and moves `after` past them.
async fn count_new_events(store: &leasedesk::Bundled, after: &mut u64, count: &mut usize) {
    loop {
        let page = leasedesk::Backend::events(store, *after, 1000)
            .await
            .unwrap();
        if page.events.is_empty() {
            return;
        }
        *count += page.events.len();
        *after = page.next;
    }
}

/// The server's peak memory under 15 concurrent largest pages of events
/// and 15 concurrent full artifact lists.
pub(super) async fn big_pages(work: &Path, artifacts: usize) {
    let data = work.join("pages");
    let started = Instant::now();
    let (events, pairs) = {
        // Filled through the library, before the server starts: one import
        // per artifact, then a check-out and an extension of artifact
        // after artifact until the ledger holds twice as many events as
        // there are artifacts.
        let store = leasedesk::Bundled::open(&data)
            .unwrap()
            .acting_as("user:bench".parse().unwrap());
        let mut ids = Vec::with_capacity(artifacts);
        for i in 0..artifacts {
            let path: leasedesk::model::RepoPath =
                format!("ledger/p{}/file-{i}.psd", i % 100).parse().unwrap();
            let artifact = leasedesk::Backend::import(
                &store,
                &path,
                leasedesk::Upload::stream(std::io::Cursor::new(format!("v {i}").into_bytes())),
            )
            .await
            .unwrap();
            ids.push(artifact.id);
        }
        let (mut after, mut count) = (0, 0);
        count_new_events(&store, &mut after, &mut count).await;
        let mut pairs = 0;
        for (i, id) in ids.iter().enumerate() {
            if count >= 2 * artifacts {
                break;
            }
            pairs += 1;
            let checkout = leasedesk::Backend::check_out(
                &store,
                *id,
                leasedesk::model::CheckoutRequest {
                    ttl_seconds: Some(24 * 3600),
                    note: Some(format!("bench check-out {i}")),
                },
            )
            .await
            .unwrap();
            leasedesk::Backend::extend(&store, checkout.id, Some(24 * 3600))
                .await
                .unwrap();
            count_new_events(&store, &mut after, &mut count).await;
        }
        (count, pairs)
    };
    let filled = started.elapsed();
    let server = Server::start(&data);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let at_start = server.peak_memory();
    let http = reqwest::Client::new();
    let page_url = format!("{}/v1/events?limit=10000", server.url);
    let one = pairs::answered(http.get(&page_url).bearer_auth(&server.token), 200).await;
    let body = one.bytes().await.unwrap();
    let page: Value = serde_json::from_slice(&body).unwrap();
    let page_events = page["events"].as_array().unwrap().len();
    let next = page["next"].as_u64().unwrap();
    let after_one = server.peak_memory();

    let concurrently = |url: String| {
        let (http, token) = (http.clone(), server.token.clone());
        async move {
            let started = Instant::now();
            let mut tasks = Vec::new();
            for _ in 0..15 {
                let (http, url, token) = (http.clone(), url.clone(), token.clone());
                tasks.push(tokio::spawn(async move {
                    let answer = pairs::answered(http.get(&url).bearer_auth(&token), 200).await;
                    answer.bytes().await.unwrap().len()
                }));
            }
            let mut bytes = 0;
            for task in tasks {
                bytes += task.await.unwrap();
            }
            (bytes, started.elapsed())
        }
    };
    let mut page_rounds = Vec::new();
    for _ in 0..3 {
        page_rounds.push(concurrently(page_url.clone()).await.1);
    }
    let under_pages = server.peak_memory();
    let (list_bytes, list_time) = concurrently(format!("{}/v1/artifacts", server.url)).await;
    let under_lists = server.peak_memory();
    row(
        &format!("ledger for the page figures: {events} events from {artifacts} imports and {pairs} check-out + extend pairs (made through the library)"),
        format!("filled in {:.0} s", filled.as_secs_f64()),
        "at least 20,000 events",
        value(events as f64, "events").and("filled in", filled.as_secs_f64(), "s"),
    );
    row(
        "one `GET /v1/events?limit=10000`",
        format!(
            "**{page_events} events**, {:.0} KiB, `next` = {next}",
            body.len() as f64 / 1024.0
        ),
        "at most 1000 events a page",
        value(page_events as f64, "events").and("size", body.len() as f64 / 1024.0, "KiB"),
    );
    row(
        "server peak memory (VmHWM): started / after one page / after 3 rounds of 15 concurrent `GET /v1/events?limit=10000`",
        format!(
            "{} / {} / **{}** (a round took {})",
            mib(at_start),
            mib(after_one),
            mib(under_pages),
            ms(median(page_rounds))
        ),
        "issue 9, before the cap: 45 MB → 413 MB",
        value(under_pages as f64 / 1048576.0, "MiB")
            .and("started", at_start as f64 / 1048576.0, "MiB")
            .and("after one page", after_one as f64 / 1048576.0, "MiB"),
    );
    row(
        &format!(
            "server peak memory after 15 concurrent `GET /v1/artifacts` of {artifacts} artifacts"
        ),
        format!(
            "**{}** ({:.1} MiB sent in all, in {})",
            mib(under_lists),
            list_bytes as f64 / 1048576.0,
            ms(list_time)
        ),
        "",
        value(under_lists as f64 / 1048576.0, "MiB"),
    );
}

/// SIGTERM with 50 event streams and 20 half-sent requests open, to the
/// process's exit; 5 runs.
pub(super) async fn shutdown_with_streams(work: &Path) {
    let (mut times, mut exits, mut streams_ended) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..5 {
        let mut server = Server::start(&work.join(format!("shutdown-{run}")));
        let addr = server.addr();
        let mut open = Vec::new();
        for _ in 0..50 {
            let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
            socket
                .write_all(
                    format!(
                        "GET /v1/events/stream HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {}\r\n\r\n",
                        server.token
                    )
                    .as_bytes(),
                )
                .await
                .unwrap();
            let mut head = Vec::new();
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let mut chunk = [0u8; 4096];
                let n = socket.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the stream answered");
                head.extend_from_slice(&chunk[..n]);
            }
            assert!(
                head.starts_with(b"HTTP/1.1 200"),
                "{}",
                String::from_utf8_lossy(&head)
            );
            open.push(tokio::spawn(async move {
                let mut rest = Vec::new();
                let _ = socket.read_to_end(&mut rest).await;
                Instant::now()
            }));
        }
        let mut half = Vec::new();
        for _ in 0..20 {
            let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
            socket
                .write_all(b"POST /v1/artifacts?path=x HTTP/1.1\r\nHost: be")
                .await
                .unwrap();
            half.push(socket);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let pid = server.process.child.id();
        let signalled = Instant::now();
        // SAFETY: kill only sends a signal to the server we started.
        #[cfg(unix)]
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
        let status = loop {
            if let Some(status) = server.process.child.try_wait().unwrap() {
                break status;
            }
            if signalled.elapsed() > Duration::from_secs(60) {
                panic!("the server did not exit within 60 s of SIGTERM");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        times.push(signalled.elapsed());
        exits.push(status.code());
        let mut ended = 0;
        for task in open {
            if tokio::time::timeout(Duration::from_secs(1), task)
                .await
                .is_ok()
            {
                ended += 1;
            }
        }
        streams_ended.push(ended);
        drop(half);
    }
    let runs = times
        .iter()
        .map(|t| format!("{:.0}", t.as_secs_f64() * 1e3))
        .collect::<Vec<_>>()
        .join(", ");
    row(
        "SIGTERM to exit with 50 `GET /v1/events/stream` and 20 half-sent requests open, median of 5",
        format!(
            "**{}** (runs: {runs} ms); exit codes {exits:?}; streams ended by the server per run {streams_ended:?} of 50",
            ms(median(times.clone()))
        ),
        "issue 9, before: never exited",
        value(leases::millis(median(times.clone())), "ms"),
    );
}

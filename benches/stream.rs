//! `cargo xtask bench --only stream` (issue 19): what delivering only
//! durable events costs. From a lease change answered by one server to its
//! event on another server's stream, p50 and p99, with two `leasedesk serve`
//! on one PostgreSQL 15 (fsync on, the default `wal_writer_delay`); and the
//! team lease rate, 16 clients over the two servers, each with a follower.
//! Each figure twice in one run: events given only once durable (now), and
//! given at once (`LEASEDESK_BENCH_UNDURABLE_EVENTS=1`, as before). The same
//! latency on one server over an SQLite data folder. `--quick` takes fewer
//! samples.

#[path = "common/mod.rs"]
#[allow(dead_code)] // the big-file helpers are the lease bench's
mod common;
#[path = "common/figures.rs"]
mod figures;
#[path = "common/pairs.rs"]
#[allow(dead_code)] // etcd is the team bench's
mod pairs;

use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use figures::{row, value, Data};
use futures_util::StreamExt;
use pairs::{
    add_user, answered, edit_pair, import, make_artifacts, measure_pairs, ms, percentile,
    release_edit, serve,
};
use testkit::postgres::PgCluster;

const CLIENTS: usize = 16;

fn main() {
    let Some(flags) = common::Flags::for_part("stream") else {
        return;
    };
    let quick = flags.quick;
    let (samples, pairs_per_client) = if quick { (100, 50) } else { (400, 300) };
    let work = common::work_dir("bench-stream");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let cluster = PgCluster::start(&["max_connections=200"]);

    println!();
    println!("| figure | events given once durable | given at once (before) |");
    println!("|---|---|---|");
    let mut latency = Vec::new();
    let mut sqlite = Vec::new();
    // The lease rates alternate, three rounds, each on a new database: the
    // median of each, so a slow moment of the machine does not pick a side.
    let mut rates = [Vec::new(), Vec::new()];
    for round in 0..3 {
        for (n, undurable) in [false, true].into_iter().enumerate() {
            let store = [
                OsString::from("--database"),
                cluster.database_named(&format!("stream{round}{n}")).into(),
                "--data".into(),
                work.join(format!("pg{round}{n}")).into(),
            ];
            let servers = Servers::start(&store, 2, undurable);
            if round == 0 {
                latency.push(runtime.block_on(servers.latency(samples)));
            }
            rates[n].push(runtime.block_on(servers.rate(pairs_per_client)));
            drop(servers);
            if round == 0 {
                let store = [
                    OsString::from("--data"),
                    work.join(format!("sqlite{n}")).into(),
                ];
                let server = Servers::start(&store, 1, undurable);
                sqlite.push(runtime.block_on(server.latency(samples)));
            }
        }
    }
    let rates = rates.map(|mut r| {
        r.sort_by(f64::total_cmp);
        r[1]
    });
    let pair = |(p50, p99): (Duration, Duration)| format!("p50 {}, p99 {}", ms(p50), ms(p99));
    // Each figure against the same given at once, as before issue 19.
    const BEFORE: &str = "events given at once (before)";
    let millis = |d: Duration| d.as_secs_f64() * 1e3;
    let latencies = |now: (Duration, Duration), before: (Duration, Duration)| -> Data {
        value(millis(now.0), "ms")
            .against(BEFORE, millis(before.0), "ms")
            .and("p99", millis(now.1), "ms")
            .against(BEFORE, millis(before.1), "ms")
    };
    row(
        &format!("a lease change answered by one server, to its event on the other's stream (PostgreSQL, {samples} changes)"),
        pair(latency[0]),
        &pair(latency[1]),
        latencies(latency[0], latency[1]),
    );
    row(
        &format!("lease acquire + release, {CLIENTS} clients over the two servers, a stream open on each (median of 3)"),
        format!("{:.0} pairs/s", rates[0]),
        &format!("{:.0} pairs/s", rates[1]),
        value(rates[0], "pairs/s").against(BEFORE, rates[1], "pairs/s"),
    );
    row(
        &format!(
            "a lease change to its event on the same server's stream (SQLite, {samples} changes)"
        ),
        pair(sqlite[0]),
        &pair(sqlite[1]),
        latencies(sqlite[0], sqlite[1]),
    );
}

/// `leasedesk serve` processes on one store, with a user's token.
struct Servers {
    /// Killed when dropped.
    _servers: Vec<testkit::ServeProcess>,
    urls: Vec<String>,
    token: String,
    http: reqwest::Client,
}

impl Servers {
    fn start(store: &[OsString], count: usize, undurable: bool) -> Self {
        let token = add_user(store, "alice");
        if undurable {
            std::env::set_var("LEASEDESK_BENCH_UNDURABLE_EVENTS", "1");
        } else {
            std::env::remove_var("LEASEDESK_BENCH_UNDURABLE_EVENTS");
        }
        let servers: Vec<_> = (0..count).map(|_| serve(store, &[])).collect();
        Self {
            urls: servers.iter().map(|s| s.url.clone()).collect(),
            _servers: servers,
            token,
            http: reqwest::Client::new(),
        }
    }

    /// The first server's stream, read by a task: each event's kind and
    /// artifact with when it came.
    async fn follow(&self, url: &str) -> Arc<Mutex<Vec<(String, String, Instant)>>> {
        let stream = self.http.get(format!("{url}/v1/events/stream?after=0"));
        let response = answered(stream.bearer_auth(&self.token), 200).await;
        let heard = Arc::new(Mutex::new(Vec::new()));
        let into = heard.clone();
        tokio::spawn(async move {
            let mut bytes = response.bytes_stream();
            let mut buffer = Vec::new();
            while let Some(Ok(chunk)) = bytes.next().await {
                let at = Instant::now();
                buffer.extend_from_slice(&chunk);
                while let Some(data) = leasedesk::remote::next_message_data(&mut buffer) {
                    if let Ok(event) = serde_json::from_str::<serde_json::Value>(&data) {
                        let kind = event["type"].as_str().unwrap_or("").to_owned();
                        let artifact = event["artifact_id"].as_str().unwrap_or("").to_owned();
                        into.lock().unwrap().push((kind, artifact, at));
                    }
                }
            }
        });
        heard
    }

    /// `samples` edits begun one after another through the last server,
    /// 20 ms apart; each from its answer to its `lease.acquired` on the
    /// first server's stream: p50 and p99.
    async fn latency(&self, samples: usize) -> (Duration, Duration) {
        let (first, last) = (&self.urls[0], self.urls.last().unwrap());
        let artifact = import(&self.http, last, &self.token, "latency.psd").await;
        let heard = self.follow(first).await;
        let mut answered = Vec::with_capacity(samples);
        for _ in 0..samples {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let began = self
                .http
                .post(format!("{last}/v1/artifacts/{artifact}/edits"))
                .bearer_auth(&self.token)
                .send()
                .await
                .unwrap();
            answered.push(Instant::now());
            let edit: serde_json::Value = began.json().await.unwrap();
            let id = edit["id"].as_str().unwrap();
            release_edit(&self.http, last, &self.token, id).await;
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let acquired = loop {
            let acquired: Vec<Instant> = heard
                .lock()
                .unwrap()
                .iter()
                .filter(|(kind, id, _)| kind == "lease.acquired" && *id == artifact)
                .map(|(_, _, at)| *at)
                .collect();
            if acquired.len() >= samples || Instant::now() > deadline {
                break acquired;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(acquired.len(), samples, "every change heard");
        let mut delays: Vec<Duration> = acquired
            .iter()
            .zip(&answered)
            .map(|(heard, answered)| heard.saturating_duration_since(*answered))
            .collect();
        delays.sort();
        (percentile(&delays, 0.5), percentile(&delays, 0.99))
    }

    /// Pairs per second from [`CLIENTS`] clients, alternating servers, each
    /// server with a stream open.
    async fn rate(&self, pairs_per_client: usize) -> f64 {
        let mut followers = Vec::new();
        for url in &self.urls {
            followers.push(self.follow(url).await);
        }
        let artifacts = make_artifacts(&self.http, &self.urls[0], &self.token, CLIENTS).await;
        let (http, urls, token) = (self.http.clone(), self.urls.clone(), self.token.clone());
        let pair = move |client: usize| {
            let (http, url, token) = (
                http.clone(),
                urls[client % urls.len()].clone(),
                token.clone(),
            );
            let artifact = artifacts[client].clone();
            async move { edit_pair(&http, &url, &token, &artifact).await }
        };
        let (rate, _, _) = measure_pairs(CLIENTS, pairs_per_client, pair).await;
        rate
    }
}

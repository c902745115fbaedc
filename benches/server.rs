//! `cargo xtask bench`, part two: the server's figures against a real
//! `leasedesk serve` process on loopback, each beside its baseline from the same
//! run (etcd's lease grant + revoke, `cp`). Prints a Markdown report.
//! `--quick` uses small sizes; `--only http|etcd|upload|list` runs one part.

#[path = "common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{make_big_file, median, peak_memory, row, settle, size_label};
use serde_json::{json, Value};

const CLIENTS: usize = 16;

struct Sizes {
    pairs_per_client: usize,
    big_file: u64,
    artifacts: usize,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let runs = |part: &str| only.as_deref().is_none_or(|o| o == part);
    let sizes = if quick {
        Sizes {
            pairs_per_client: 50,
            big_file: 64 << 20,
            artifacts: 500,
        }
    } else {
        Sizes {
            pairs_per_client: 1000,
            big_file: 1 << 30,
            artifacts: 10_000,
        }
    };
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-server");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();

    println!("| figure | measured | baseline / target |");
    println!("|---|---|---|");
    if runs("http") {
        runtime.block_on(http_pairs(&work, &sizes));
    }
    if runs("etcd") {
        runtime.block_on(etcd_pairs(&work, &sizes));
    }
    if runs("upload") {
        runtime.block_on(upload(&work, &sizes));
    }
    if runs("list") {
        runtime.block_on(list(&work, &sizes));
    }
    let _ = std::fs::remove_dir_all(&work);
}

fn bin() -> PathBuf {
    PathBuf::from(std::env::var("LEASEDESK_BIN").expect("run through cargo xtask bench"))
}

/// A real `leasedesk serve` on 127.0.0.1:0 over `data`, with one user's token.
struct Server {
    child: Child,
    url: String,
    token: String,
}

impl Server {
    fn start(data: &Path) -> Self {
        let added = Command::new(bin())
            .arg("--data")
            .arg(data)
            .args(["user", "add", "bench"])
            .output()
            .unwrap();
        assert!(
            added.status.success(),
            "{}",
            String::from_utf8_lossy(&added.stderr)
        );
        let token = String::from_utf8(added.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .to_owned();
        let mut child = Command::new(bin())
            .arg("--data")
            .arg(data)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("LEASEDESK_LOG", "warn")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .to_owned();
        Self { child, url, token }
    }

    /// The most memory the server process has held so far.
    fn peak_memory(&self) -> u64 {
        peak_memory(self.child.id())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// Runs `CLIENTS` concurrent loops of `pairs` acquire + release pairs and
/// reports pairs per second and the pair latency's median and p99.
async fn measure_pairs<F, Fut>(pairs: usize, pair: F) -> (f64, Duration, Duration)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let pair = Arc::new(pair);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let pair = pair.clone();
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::with_capacity(pairs);
            for _ in 0..pairs {
                let started = Instant::now();
                pair(client).await;
                times.push(started.elapsed());
            }
            times
        }));
    }
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await.unwrap());
    }
    let elapsed = start.elapsed();
    times.sort();
    (
        times.len() as f64 / elapsed.as_secs_f64(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn http_pairs(work: &Path, sizes: &Sizes) {
    let server = Server::start(&work.join("http"));
    let http = reqwest::Client::new();
    let mut artifacts = Vec::new();
    for client in 0..CLIENTS {
        let created: Value = http
            .post(format!(
                "{}/v1/artifacts?path=bench/{client}.psd",
                server.url
            ))
            .bearer_auth(&server.token)
            .body("v1")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        artifacts.push(created["id"].as_str().unwrap().to_owned());
    }
    let (url, token) = (server.url.clone(), server.token.clone());
    let (rate, median, p99) = measure_pairs(sizes.pairs_per_client, move |client| {
        let (http, url, token, artifact) = (
            http.clone(),
            url.clone(),
            token.clone(),
            artifacts[client].clone(),
        );
        async move {
            let edit: Value = http
                .post(format!("{url}/v1/artifacts/{artifact}/edits"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let id = edit["id"].as_str().expect("an edit");
            let released = http
                .delete(format!("{url}/v1/edits/{id}"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            assert_eq!(released.status(), 204);
        }
    })
    .await;
    LAST_HTTP_RATE.store(rate as u64, Ordering::SeqCst);
    row(
        &format!("lease acquire + release over HTTP, {CLIENTS} clients, keep-alive"),
        format!(
            "**{rate:.0} pairs/s**, median {}, p99 {}",
            ms(median),
            ms(p99)
        ),
        "at least 3,000 pairs/s, p99 under 10 ms",
    );
    row(
        "server peak memory in that run",
        format!("{:.1} MiB", server.peak_memory() as f64 / 1048576.0),
        "",
    );
}

static LAST_HTTP_RATE: AtomicU64 = AtomicU64::new(0);

/// etcd's lease grant + revoke through its JSON gateway, the same way.
async fn etcd_pairs(work: &Path, sizes: &Sizes) {
    let Ok(etcd) = which("etcd") else {
        row(
            "etcd lease grant + revoke",
            "not measured: etcd is not installed (apt-get install etcd-server)".into(),
            "",
        );
        return;
    };
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(etcd)
        .arg("--data-dir")
        .arg(work.join("etcd"))
        .args([
            "--listen-client-urls",
            &url,
            "--advertise-client-urls",
            &url,
        ])
        .args([
            "--listen-peer-urls",
            &format!("http://127.0.0.1:{}", free_port()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    let mut ready = false;
    for _ in 0..100 {
        if http
            .get(format!("{url}/health"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "etcd started");
    let (rate, median, p99) = measure_pairs(sizes.pairs_per_client, move |_| {
        let (http, url) = (http.clone(), url.clone());
        async move {
            let granted: Value = http
                .post(format!("{url}/v3/lease/grant"))
                .json(&json!({ "TTL": 45 }))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let id = granted["ID"].as_str().expect("a lease id").to_owned();
            let revoked = http
                .post(format!("{url}/v3/lease/revoke"))
                .json(&json!({ "ID": id }))
                .send()
                .await
                .unwrap();
            assert!(revoked.status().is_success());
        }
    })
    .await;
    let _ = child.kill();
    let _ = child.wait();
    let ours = LAST_HTTP_RATE.load(Ordering::SeqCst) as f64;
    let ratio = if ours > 0.0 {
        format!("; Leasedesk/etcd = {:.1}x", ours / rate)
    } else {
        String::new()
    };
    row(
        &format!("etcd 3.4 lease grant + revoke over its HTTP gateway, {CLIENTS} clients"),
        format!(
            "{rate:.0} pairs/s, median {}, p99 {}{ratio}",
            ms(median),
            ms(p99)
        ),
        "Leasedesk at least as fast",
    );
}

fn which(program: &str) -> Result<PathBuf, ()> {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map_err(|_| ())?;
    if out.status.success() {
        Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    } else {
        Err(())
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A check-in of a big file over loopback beside `cp` of it, and the server's
/// peak memory during the uploads.
async fn upload(work: &Path, sizes: &Sizes) {
    let source = work.join("big.bin");
    make_big_file(&source, sizes.big_file);
    let label = size_label(sizes.big_file);
    let quiet = || settle(&source);
    let server = Server::start(&work.join("upload"));
    let cli = |args: &[&str]| {
        let out = Command::new(bin())
            .args(["--server", &server.url])
            .args(args)
            .env("LEASEDESK_TOKEN", &server.token)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let small = work.join("small.bin");
    std::fs::write(&small, b"v1").unwrap();
    let copy = work.join("copy.bin");
    let (mut cp, mut checkin) = (vec![], vec![]);
    for rep in 0..5 {
        quiet();
        let started = Instant::now();
        assert!(Command::new("cp")
            .arg(&source)
            .arg(&copy)
            .status()
            .unwrap()
            .success());
        cp.push(started.elapsed());
        std::fs::remove_file(&copy).unwrap();

        let path = format!("big-{rep}.bin");
        cli(&["import", &path, small.to_str().unwrap()]);
        cli(&["checkout", &path]);
        quiet();
        let started = Instant::now();
        cli(&["checkin", &path, source.to_str().unwrap()]);
        checkin.push(started.elapsed());
    }
    let (cp, checkin) = (median(cp), median(checkin));
    row(
        &format!("cp of a page-cached {label} file, median of 5"),
        format!("{:.2} s", cp.as_secs_f64()),
        "baseline",
    );
    row(
        &format!(
            "check-in of the {label} file over loopback (CLI --server, streamed, hashed, fsynced)"
        ),
        format!(
            "**{:.2} s = {:.2}x cp**",
            checkin.as_secs_f64(),
            checkin.as_secs_f64() / cp.as_secs_f64()
        ),
        "at most 2x cp",
    );
    row(
        "server peak memory over those uploads",
        format!("**{:.1} MiB**", server.peak_memory() as f64 / 1048576.0),
        "under 48 MiB",
    );
}

/// Listing every artifact of a store that has many.
async fn list(work: &Path, sizes: &Sizes) {
    let data = work.join("list");
    {
        // Filled through the library, before the server starts.
        let store = leasedesk::Bundled::open(&data)
            .unwrap()
            .acting_as("user:bench".parse().unwrap());
        for i in 0..sizes.artifacts {
            let path: leasedesk::model::RepoPath = format!("projects/p{}/file-{i}.psd", i % 100)
                .parse()
                .unwrap();
            let bytes = format!("content {i}").into_bytes();
            leasedesk::Backend::import(
                &store,
                &path,
                leasedesk::Upload::stream(std::io::Cursor::new(bytes)),
            )
            .await
            .unwrap();
        }
    }
    let server = Server::start(&data);
    let http = reqwest::Client::new();
    let (mut at_server, mut with_parse) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let started = Instant::now();
        let response = http
            .get(format!("{}/v1/artifacts", server.url))
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap();
        // The server answers once the whole list is serialized: the headers'
        // arrival is the server's time (plus a loopback round trip).
        at_server.push(started.elapsed());
        let listed: Value = response.json().await.unwrap();
        with_parse.push(started.elapsed());
        assert_eq!(
            listed["artifacts"].as_array().unwrap().len(),
            sizes.artifacts
        );
    }
    row(
        &format!(
            "GET /v1/artifacts with {} artifacts, median of 20",
            sizes.artifacts
        ),
        format!(
            "**{} to the answer's headers**, {} with the 2.7 MB body read and parsed by the client",
            ms(median(at_server)),
            ms(median(with_parse))
        ),
        "under 50 ms at the server",
    );
}

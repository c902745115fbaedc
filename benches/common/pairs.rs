//! What the lease-pair figures share (`server.rs`, `team.rs`): `leasedesk
//! serve` processes over a store, the acquire + release pair over HTTP, etcd
//! as the baseline, and the timing of concurrent clients.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::WithEnvironment;

pub use crate::common::bin;

/// The `leasedesk` CLI (and its `serve`) on the store named by `store`
/// (`--data DIR`, and `--database URL` for PostgreSQL).
pub fn cli(store: &[OsString]) -> testkit::Cli {
    testkit::Cli::new(bin()).store_args(store)
}

/// Adds user `name` to the store named by `store` and returns its token.
pub fn add_user(store: &[OsString], name: &str) -> String {
    cli(store).add_user(name)
}

/// A real `leasedesk serve` on 127.0.0.1:0 over `store` with `extra` flags,
/// logging warnings only; its `url` is the one it printed.
pub fn serve(store: &[OsString], extra: &[&str]) -> testkit::ServeProcess {
    cli(store)
        .serve()
        .args(extra)
        .env("LEASEDESK_LOG", "warn")
        .spawn()
}

/// `count` new artifacts, `bench/0.psd`…, made through the server at `url`.
pub async fn make_artifacts(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    count: usize,
) -> Vec<String> {
    let mut artifacts = Vec::new();
    for n in 0..count {
        artifacts.push(import(http, url, token, &format!("bench/{n}.psd")).await);
    }
    artifacts
}

/// A new artifact at `path`, made through the server at `url`: its id.
pub async fn import(http: &reqwest::Client, url: &str, token: &str, path: &str) -> String {
    let created: Value = json(
        http.post(format!("{url}/v1/artifacts?path={path}"))
            .bearer_auth(token)
            .body("v1"),
    )
    .await;
    created["id"].as_str().expect("an artifact").to_owned()
}

/// One lease acquire + release: an agent's edit on `artifact`, then its release.
pub async fn edit_pair(http: &reqwest::Client, url: &str, token: &str, artifact: &str) {
    let edit: Value = json(
        http.post(format!("{url}/v1/artifacts/{artifact}/edits"))
            .bearer_auth(token),
    )
    .await;
    release_edit(http, url, token, edit["id"].as_str().expect("an edit")).await;
}

/// Releases the agent's edit `id` through the server at `url`.
pub async fn release_edit(http: &reqwest::Client, url: &str, token: &str, id: &str) {
    let release = http.delete(format!("{url}/v1/edits/{id}"));
    answered(release.bearer_auth(token), 204).await;
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// Runs `clients` concurrent loops of `pairs` acquire + release pairs and
/// reports pairs per second and the pair latency's median and p99.
pub async fn measure_pairs<F, Fut>(
    clients: usize,
    pairs: usize,
    pair: F,
) -> (f64, Duration, Duration)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let pair = Arc::new(pair);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..clients {
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

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

pub fn which(program: &str) -> Result<PathBuf, ()> {
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

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A single-member etcd on loopback, in `dir`, killed when dropped.
pub struct Etcd {
    pub child: Child,
    pub url: String,
}

impl Etcd {
    /// As `start`; when etcd is not installed, a row saying that `figure`
    /// was not measured.
    pub async fn start_or_report(dir: &Path, figure: &str) -> Option<Self> {
        let etcd = Self::start(dir).await;
        if etcd.is_none() {
            crate::common::row(
                figure,
                "not measured: etcd is not installed (apt-get install etcd-server)".into(),
                "",
            );
        }
        etcd
    }

    /// None when etcd is not installed (`apt-get install etcd-server`).
    pub async fn start(dir: &Path) -> Option<Self> {
        let etcd = which("etcd").ok()?;
        let url = format!("http://127.0.0.1:{}", free_port());
        let child = Command::new(etcd)
            .arg("--data-dir")
            .arg(dir)
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
        let etcd = Self { child, url };
        let http = reqwest::Client::new();
        for _ in 0..100 {
            if http
                .get(format!("{}/health", etcd.url))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return Some(etcd);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("etcd did not become healthy at {}", etcd.url);
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `request`, which must be answered with `status`: the answer.
pub async fn answered(request: reqwest::RequestBuilder, status: u16) -> reqwest::Response {
    let answer = request.send().await.unwrap();
    assert_eq!(answer.status(), status);
    answer
}

/// Sends `request` and reads its answer's JSON, both of which must work.
pub async fn json(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

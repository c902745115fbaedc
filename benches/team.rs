//! `cargo xtask bench`, the team server's lease figure (issue 11): lease
//! acquire + release from 16 clients split over two `leasedesk serve`
//! processes on one PostgreSQL database (fsync on), beside the same two
//! servers on one SQLite data folder, one server on SQLite, and etcd's lease
//! grant + revoke through its gRPC API, all in one run on this machine;
//! and PostgreSQL alone, pgbench running the fewest statements a pair can
//! take, the floor it sets here. Prints a Markdown report, then where
//! PostgreSQL's time goes (from a second cluster, with the profiler): statements,
//! transactions and WAL flushes per pair (pg_stat_statements, pg_stat_wal),
//! and CPU per pair of each process.
//! Then a request to a holder delivered to the holder's app, over the two
//! servers on PostgreSQL (`team/requests.rs`, issue 23).
//! `--quick` makes fewer pairs; `--only team` runs this alone (any other
//! `--only` skips it); `--only team-pg` runs only the two servers on
//! PostgreSQL, PostgreSQL alone and the profile of both (statements a pair);
//! `--only team-requests` only the request figure.

#[path = "team/alone.rs"]
mod alone;
#[path = "common/mod.rs"]
#[allow(dead_code)] // the big-file helpers are the lease bench's
mod common;
#[path = "common/figures.rs"]
mod figures;
#[path = "common/pairs.rs"]
mod pairs;
#[path = "team/requests.rs"]
mod requests;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use alone::{floor_profile, postgres_floor, PgProfile};
use figures::{row, value};
use pairs::{add_user, edit_pair, make_artifacts, measure_pairs, ms, serve, Etcd};
use testkit::postgres::PgCluster;

const CLIENTS: usize = 16;
/// Pairs each client makes before the timed run (connections, pools, caches).
const WARM_UP: usize = 20;

fn main() {
    let flags = common::Flags::from_args();
    let only_pg = flags.value("--only") == Some("team-pg");
    let only_requests = flags.value("--only") == Some("team-requests");
    if !flags.runs("team") && !only_pg && !only_requests {
        return;
    }
    let quick = flags.quick;
    let pairs_per_client = if quick { 100 } else { 1000 };
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-team");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();

    println!(
        "load average at start: {}, {} cores",
        load_average(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!("| figure | measured | baseline / target |");
    println!("|---|---|---|");
    let transport = Transport::choose(&work);
    // The figures on a cluster with nothing loaded; the profile of what
    // PostgreSQL ran, on a second one with pg_stat_statements (which costs
    // each statement a little).
    let cluster = PgCluster::start(&["max_connections=100"]);
    let idle_postgres = process_tree(cluster.pid()).len();
    if only_requests {
        request_figure(&cluster, &work, &runtime, quick);
        drop(cluster);
        let _ = std::fs::remove_dir_all(&work);
        return;
    }

    let on_postgres = {
        let store = on_database(&cluster, "bench", &work.join("team-pg"));
        let team = Team::start(&store, 2, &transport);
        let figure = runtime.block_on(team.measure(pairs_per_client, || {
            vec![("PostgreSQL", process_tree(cluster.pid()))]
        }));
        figure.report(
            &format!(
                "lease acquire + release, {CLIENTS} clients split over two servers on one PostgreSQL 15 database (fsync on), {}",
                transport.label()
            ),
            "at least 2,000 pairs/s, p99 under 20 ms".into(),
        );
        figure
    };
    let profile = {
        let profiled = PgCluster::start(&[
            "max_connections=100",
            "shared_preload_libraries=pg_stat_statements",
            "pg_stat_statements.track=all",
        ]);
        let store = on_database(&profiled, "bench", &work.join("profiled-pg"));
        profiled.sql("bench", "CREATE EXTENSION pg_stat_statements");
        let team = Team::start(&store, 2, &transport);
        let pairs = pairs_per_client.div_ceil(4);
        runtime.block_on(team.measure(pairs, || {
            profiled.sql("bench", alone::RESET);
            Vec::new()
        }));
        // Backends report their counters at most once a second.
        std::thread::sleep(Duration::from_millis(1500));
        let team = PgProfile::read(&profiled, "bench", (CLIENTS * pairs) as f64);
        // PostgreSQL alone, counted the same way.
        let floor = floor_profile(&profiled, 2, if quick { 2 } else { 5 });
        (team, floor)
    };

    if !only_pg {
        others_beside(
            &cluster,
            &work,
            &transport,
            &runtime,
            pairs_per_client,
            &on_postgres,
        );
        request_figure(&cluster, &work, &runtime, quick);
    }
    // The servers' backends gone, so none is counted in the floor's CPU
    // (an autovacuum worker may come and go: not for ever).
    let gone = Instant::now();
    while process_tree(cluster.pid()).len() > idle_postgres && gone.elapsed().as_secs() < 10 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut floors = Vec::new();
    for connections in [CLIENTS, 2] {
        floors.push((
            connections,
            postgres_floor(&cluster, connections, if quick { 5 } else { 15 }),
        ));
    }
    for (connections, floor) in floors {
        let name =
            format!("two servers on PostgreSQL / PostgreSQL alone with {connections} connections");
        println!("{name} = {:.2}", on_postgres.rate / floor);
        figures::numbers(&name, value(on_postgres.rate / floor, "x"));
    }
    println!();
    println!("Two servers on PostgreSQL (pg_stat_statements):");
    profile.0.print("two servers on PostgreSQL");
    println!();
    println!("PostgreSQL alone, pgbench with 2 connections (pg_stat_statements):");
    profile
        .1
        .print("PostgreSQL alone, pgbench with 2 connections");
    drop(cluster);
    let _ = std::fs::remove_dir_all(&work);
}

/// Beside the two servers on PostgreSQL: one server on PostgreSQL, the same
/// on SQLite (two and one), and etcd.
fn others_beside(
    cluster: &PgCluster,
    work: &Path,
    transport: &Transport,
    runtime: &tokio::runtime::Runtime,
    pairs_per_client: usize,
    on_postgres: &Figure,
) {
    // One server on a database of its own: what the two servers' turns on
    // the ledger's lock cost beside PostgreSQL itself.
    let one_on_postgres = {
        let store = on_database(cluster, "bench_one", &work.join("one-pg"));
        let team = Team::start(&store, 1, transport);
        runtime.block_on(team.measure(pairs_per_client, || {
            vec![("PostgreSQL", process_tree(cluster.pid()))]
        }))
    };
    one_on_postgres.report(
        "the same, one server on PostgreSQL",
        format!(
            "two servers / one on PostgreSQL = {:.2}x",
            on_postgres.rate / one_on_postgres.rate
        ),
    );
    let two_on_sqlite = {
        let store = [OsString::from("--data"), work.join("team-sqlite").into()];
        let team = Team::start(&store, 2, transport);
        runtime.block_on(team.measure(pairs_per_client, Vec::new))
    };
    let one_on_sqlite = {
        let store = [OsString::from("--data"), work.join("one-sqlite").into()];
        let team = Team::start(&store, 1, transport);
        runtime.block_on(team.measure(pairs_per_client, Vec::new))
    };
    let pg_rate = on_postgres.rate;
    two_on_sqlite.report(
        "the same, two servers on one SQLite data folder",
        format!("PostgreSQL / SQLite = {:.2}x", pg_rate / two_on_sqlite.rate),
    );
    one_on_sqlite.report(
        "the same, one server on SQLite",
        format!(
            "two on PostgreSQL / one on SQLite = {:.2}x",
            pg_rate / one_on_sqlite.rate
        ),
    );
    // etcd-client is a Linux-only dev-dependency: the Windows test leg need not build it.
    #[cfg(target_os = "linux")]
    runtime.block_on(etcd_grpc(work, pairs_per_client, pg_rate));
}

/// A request delivered to the holder's app (`requests`), two servers on a
/// database of its own.
fn request_figure(
    cluster: &PgCluster,
    work: &Path,
    runtime: &tokio::runtime::Runtime,
    quick: bool,
) {
    let store = on_database(cluster, "bench_requests", &work.join("requests-pg"));
    let samples = if quick { 50 } else { 400 };
    runtime
        .block_on(requests::delivered(&store, samples))
        .report();
}

/// A store's flags: rows in `database` of `cluster`, blobs in `data`.
fn on_database(cluster: &PgCluster, database: &str, data: &Path) -> [OsString; 4] {
    [
        "--database".into(),
        cluster.database_named(database).into(),
        "--data".into(),
        data.into(),
    ]
}

/// `leasedesk serve` processes over one store, with one user's token.
struct Team {
    servers: Vec<testkit::ServeProcess>,
    urls: Vec<String>,
    token: String,
    http: reqwest::Client,
}

impl Team {
    fn start(store: &[OsString], servers: usize, transport: &Transport) -> Self {
        let token = add_user(store, "bench");
        let servers: Vec<_> = (0..servers)
            .map(|_| serve(store, &transport.serve_flags()))
            .collect();
        Self {
            urls: servers.iter().map(|s| s.url.clone()).collect(),
            servers,
            token,
            http: transport.client(),
        }
    }

    /// Client `n` speaks to server `n % servers`, each on an artifact of its
    /// own (as `server.rs`'s `http_pairs`). `others` is called just before
    /// the timed run and names the other processes whose CPU counts.
    async fn measure(
        &self,
        pairs_per_client: usize,
        others: impl FnOnce() -> Vec<(&'static str, Vec<u32>)>,
    ) -> Figure {
        let http = self.http.clone();
        let artifacts = make_artifacts(&http, &self.urls[0], &self.token, CLIENTS).await;
        let pair = {
            let (urls, token) = (self.urls.clone(), self.token.clone());
            move |client: usize| {
                let (http, url, token, artifact) = (
                    http.clone(),
                    urls[client % urls.len()].clone(),
                    token.clone(),
                    artifacts[client].clone(),
                );
                async move { edit_pair(&http, &url, &token, &artifact).await }
            }
        };
        let pair = std::sync::Arc::new(pair);
        let warm = pair.clone();
        measure_pairs(CLIENTS, WARM_UP, move |c| warm(c)).await;
        let mut processes = vec![(
            "servers",
            self.servers
                .iter()
                .map(|s| s.child.id())
                .collect::<Vec<_>>(),
        )];
        processes.extend(others());
        processes.push(("bench clients", vec![std::process::id()]));
        let before = cpu_seconds(&processes);
        let (rate, median, p99) = measure_pairs(CLIENTS, pairs_per_client, move |c| pair(c)).await;
        let after = cpu_seconds(&processes);
        let pairs = (CLIENTS * pairs_per_client) as f64;
        let cpu = processes
            .iter()
            .zip(before.iter().zip(&after))
            .map(|((name, _), (b, a))| (*name, (a - b) / pairs))
            .collect();
        Figure {
            rate,
            median,
            p99,
            cpu,
        }
    }
}

struct Figure {
    rate: f64,
    median: Duration,
    p99: Duration,
    /// CPU seconds per pair, by process group.
    cpu: Vec<(&'static str, f64)>,
}

impl Figure {
    fn report(&self, figure: &str, target: String) {
        let cpu: Vec<String> = self
            .cpu
            .iter()
            .map(|(name, seconds)| format!("{name} {:.2} ms", seconds * 1e3))
            .collect();
        let mut data = value(self.rate, "pairs/s")
            .and("median", self.median.as_secs_f64() * 1e3, "ms")
            .and("p99", self.p99.as_secs_f64() * 1e3, "ms");
        for (name, seconds) in &self.cpu {
            data = data.and(&format!("CPU per pair, {name}"), seconds * 1e3, "ms");
        }
        row(
            figure,
            format!(
                "**{:.0} pairs/s**, median {}, p99 {}; CPU per pair: {}",
                self.rate,
                ms(self.median),
                ms(self.p99),
                cpu.join(", ")
            ),
            &target,
            data,
        );
    }
}

/// HTTPS with a certificate of the bench's own CA when `serve` has
/// `--tls-cert` (issue 11's TLS), else plain HTTP.
enum Transport {
    Http,
    Https {
        cert: PathBuf,
        key: PathBuf,
        ca: PathBuf,
    },
}

impl Transport {
    fn choose(work: &Path) -> Self {
        let help = std::process::Command::new(pairs::bin())
            .args(["serve", "--help"])
            .output()
            .unwrap();
        if !String::from_utf8_lossy(&help.stdout).contains("--tls-cert") {
            return Self::Http;
        }
        let dir = work.join("tls");
        std::fs::create_dir_all(&dir).unwrap();
        // A CA of our own and a leaf it signs: rustls refuses a CA
        // certificate as the server's own.
        std::fs::write(
            dir.join("leaf.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        let script = "set -e; EC='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'
            openssl req -x509 $EC -subj /CN=leasedesk-bench-ca -keyout ca.key -out ca.pem
            openssl req $EC -subj /CN=localhost -keyout key.pem -out leaf.csr
            openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
                -days 2 -extfile leaf.ext -out cert.pem";
        let out = std::process::Command::new("sh")
            .current_dir(&dir)
            .args(["-c", script])
            .output()
            .expect("sh runs");
        assert!(out.status.success(), "openssl: {out:?}");
        Self::Https {
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
            ca: dir.join("ca.pem"),
        }
    }

    fn serve_flags(&self) -> Vec<&str> {
        match self {
            Self::Http => Vec::new(),
            Self::Https { cert, key, .. } => vec![
                "--tls-cert",
                cert.to_str().unwrap(),
                "--tls-key",
                key.to_str().unwrap(),
            ],
        }
    }

    fn client(&self) -> reqwest::Client {
        match self {
            Self::Http => reqwest::Client::new(),
            Self::Https { ca, .. } => reqwest::Client::builder()
                .add_root_certificate(
                    reqwest::Certificate::from_pem(&std::fs::read(ca).unwrap()).unwrap(),
                )
                .build()
                .unwrap(),
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Self::Http => "plain HTTP keep-alive (this build has no TLS yet)",
            Self::Https { .. } => "HTTPS (rustls; HTTP/1.1 or 2 as ALPN settles)",
        }
    }
}

/// etcd's lease grant + revoke through its gRPC API, `CLIENTS` clients each
/// with a connection of its own.
#[cfg(target_os = "linux")]
async fn etcd_grpc(work: &Path, pairs_per_client: usize, pg_rate: f64) {
    let figure = "etcd lease grant + revoke over gRPC";
    let Some(etcd) = Etcd::start_or_report(&work.join("etcd"), figure).await else {
        return;
    };
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        clients.push(
            etcd_client::Client::connect([etcd.url.as_str()], None)
                .await
                .expect("etcd's gRPC API"),
        );
    }
    let pair = std::sync::Arc::new(move |client: usize| {
        let mut etcd = clients[client].clone();
        async move {
            let granted = etcd.lease_grant(45, None).await.expect("a lease");
            etcd.lease_revoke(granted.id()).await.expect("revoked");
        }
    });
    let warm = pair.clone();
    measure_pairs(CLIENTS, WARM_UP, move |c| warm(c)).await;
    let processes = [
        ("etcd", vec![etcd.child.id()]),
        ("bench clients", vec![std::process::id()]),
    ];
    let before = cpu_seconds(&processes);
    let (rate, median, p99) = measure_pairs(CLIENTS, pairs_per_client, move |c| pair(c)).await;
    let after = cpu_seconds(&processes);
    let pairs = (CLIENTS * pairs_per_client) as f64;
    let figure = Figure {
        rate,
        median,
        p99,
        cpu: processes
            .iter()
            .zip(before.iter().zip(&after))
            .map(|((name, _), (b, a))| (*name, (a - b) / pairs))
            .collect(),
    };
    figure.report(
        &format!("etcd 3.4 lease grant + revoke over gRPC (etcd-client), {CLIENTS} clients"),
        format!(
            "two Leasedesk servers on PostgreSQL / etcd = {:.2}x",
            pg_rate / rate
        ),
    );
}

/// The 1-minute load average (`/proc/loadavg`).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

/// `pid` and its children (PostgreSQL's backends are the postmaster's).
fn process_tree(pid: u32) -> Vec<u32> {
    let mut pids = vec![pid];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if stat_fields(child).is_some_and(|f| f.get(1).is_some_and(|p| *p == pid.to_string())) {
            pids.push(child);
        }
    }
    pids
}

/// The fields of `/proc/PID/stat` after the command's name (state first).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    Some(after_name.split_whitespace().map(str::to_owned).collect())
}

/// User + system CPU seconds of each group of processes so far, with
/// their children's that have ended (a backend that exits mid-run is then
/// its postmaster's).
fn cpu_seconds(groups: &[(&'static str, Vec<u32>)]) -> Vec<f64> {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    groups
        .iter()
        .map(|(_, pids)| {
            pids.iter()
                .filter_map(|pid| {
                    let f = stat_fields(*pid)?;
                    // utime, stime, cutime and cstime are stat's fields 14
                    // to 17 (11 to 14 here).
                    f[11..15]
                        .iter()
                        .map(|t| t.parse::<f64>().ok())
                        .sum::<Option<f64>>()
                })
                .sum::<f64>()
                / ticks
        })
        .collect()
}

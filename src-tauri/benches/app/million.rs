//! `--only app-million` (issue 25): the release app on a team server of
//! 1,000,000 files (`--quick`: 20,000), the server in this process behind a
//! proxy that counts the bytes the app is sent.
//!
//! - the first start, which fills the app's mirror by pages;
//! - later starts, launch to the first rows, and the memory of all the app's
//!   processes then;
//! - bob checks files out and in (by the store, in this process): the app's
//!   CPU time (its own process, and with WebKit's) and the bytes it is sent,
//!   per event, against a quiet stretch as long.

use std::future::pending;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use leasedesk::model::*;

use super::*;

#[path = "../../../benches/common/studio.rs"]
mod studio;

/// bob's check-outs and cancels: two events each.
const PAIRS: u64 = 50;
/// Between one event and the next, so each is the window's own reload.
const APART: Duration = Duration::from_millis(300);

pub async fn million(work: &Path, quick: bool) {
    let sizes = studio::Studio {
        files: if quick { 20_000 } else { 1_000_000 },
        folders: if quick { 20 } else { 1000 },
    };
    let home = work.join("million");
    let data = home.join("server");
    let started = Instant::now();
    studio::fill_sqlite(&data, &sizes);
    println!(
        "<!-- {} files filled in {:.1} s -->",
        sizes.files,
        started.elapsed().as_secs_f64()
    );
    let store = Bundled::open(&data).unwrap();
    let alice: Participant = "user:alice".parse().unwrap();
    let (_, token) = store.add_account(&alice, false).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = listener.local_addr().unwrap();
    tokio::spawn(leasedesk::server::run(listener, store.clone(), pending()));
    let sent = Arc::new(AtomicU64::new(0));
    let url = format!("http://{}", counting_proxy(server, sent.clone()).await);
    leasedesk_app::keychain::store(&url, &token).unwrap();
    std::fs::create_dir_all(home.join("config")).unwrap();
    std::fs::write(
        home.join("config/settings.json"),
        json!({ "backend": "remote", "server_url": url, "workspace": home.join("Leasedesk"), "display_name": "alice" })
            .to_string(),
    )
    .unwrap();

    let before = sent.load(Ordering::Relaxed);
    let (client, driver, took) = launch(&home).await;
    let first_sent = (sent.load(Ordering::Relaxed) - before) >> 20;
    row(
        &format!(
            "first start on {} files: the app's mirror filled by pages, to the first rows",
            sizes.files
        ),
        format!(
            "{:.1} s, {first_sent} MiB sent to the app",
            took.as_secs_f64(),
        ),
        "",
        value(took.as_secs_f64(), "s").and("sent to the app", first_sent as f64, "MiB"),
    );
    let _ = client.close().await;
    drop(driver);

    let (mut launches, mut memory) = (Vec::new(), Vec::new());
    for _ in 0..if quick { 2 } else { 5 } {
        let (client, driver, took) = launch(&home).await;
        launches.push(took.as_secs_f64());
        tokio::time::sleep(Duration::from_secs(5)).await;
        memory.push(tree_memory(app_pid().expect("the app runs")) as f64);
        let _ = client.close().await;
        drop(driver);
    }
    launch_row(
        &format!("release build, {} files in the mirror: from launch to the window showing rows (through WebDriver, median)", sizes.files),
        &launches,
    );
    let memory = median(memory) / 1048576.0;
    row(
        &format!("memory of all the app's processes with {} files in the mirror (PSS, median, 5 s after the rows show)", sizes.files),
        format!("**{memory:.0} MiB**"),
        "under 300 MiB",
        value(memory, "MiB"),
    );

    let (client, driver, _) = launch(&home).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let app = app_pid().expect("the app runs");
    let stretch = APART * 2 * PAIRS as u32 + Duration::from_secs(3);
    let quiet = measure(app, &sent, async { tokio::time::sleep(stretch).await }).await;
    let bob = store.acting_as("user:bob".parse().unwrap());
    let ledger_before = events_after(&bob, 0).await;
    // Files all over the studio, one in each of 50 folders, none of the
    // ones the fill has bob hold (1 in 100).
    let picks: Vec<u64> = (0..PAIRS)
        .map(|k| (k * 7919 + 1) % sizes.files)
        .map(|i| if i % 100 == 0 { i + 1 } else { i })
        .collect();
    let busy = measure(app, &sent, async {
        for &i in &picks {
            let id: ArtifactId = studio::artifact_id(i).parse().unwrap();
            let out = bob.check_out(id, CheckoutRequest::default()).await.unwrap();
            tokio::time::sleep(APART).await;
            bob.cancel(out.id).await.unwrap();
            tokio::time::sleep(APART).await;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    })
    .await;
    // Each check-out and cancel writes two events (the lease's and the
    // check-out's): the ledger counts them.
    let events = events_after(&bob, ledger_before).await - ledger_before;
    let actions = 2 * PAIRS;
    let per = |busy: f64, quiet: f64| (busy - quiet).max(0.0) / events as f64;
    row(
        &format!("one event in a studio of {} files (bob's check-outs and cancels anywhere in it, {actions} of them, {events} events): the app's CPU time, less a quiet stretch as long", sizes.files),
        format!(
            "**{:.2} ms** the app's process, **{:.2} ms** with WebKit's; a check-out or cancel (two events) {:.2} ms and {:.2} ms (busy {:.0} ms and {:.0} ms, quiet {:.0} ms and {:.0} ms)",
            per(busy.app_ms, quiet.app_ms),
            per(busy.all_ms, quiet.all_ms),
            per(busy.app_ms, quiet.app_ms) * events as f64 / actions as f64,
            per(busy.all_ms, quiet.all_ms) * events as f64 / actions as f64,
            busy.app_ms,
            busy.all_ms,
            quiet.app_ms,
            quiet.all_ms
        ),
        "under 5 ms",
        value(per(busy.app_ms, quiet.app_ms), "ms").and(
            "with WebKit's",
            per(busy.all_ms, quiet.all_ms),
            "ms",
        ),
    );
    row(
        "the same: bytes sent to the app per event (HTTP headers and bodies, less the quiet stretch)",
        format!(
            "**{:.0} B**; a check-out or cancel {:.0} B ({} B busy, {} B quiet)",
            per(busy.bytes as f64, quiet.bytes as f64),
            per(busy.bytes as f64, quiet.bytes as f64) * events as f64 / actions as f64,
            busy.bytes,
            quiet.bytes
        ),
        "under 2 KB",
        value(per(busy.bytes as f64, quiet.bytes as f64), "B"),
    );
    let _ = client.close().await;
    drop(driver);
}

/// The sequence number of the ledger's last event, read from `after` on.
async fn events_after(store: &impl Backend, mut after: u64) -> u64 {
    loop {
        let page = store.events(after, 1000).await.unwrap();
        if page.events.is_empty() && page.next <= after {
            return after;
        }
        after = page.next;
    }
}

/// What the app used while `work` ran.
struct Used {
    app_ms: f64,
    all_ms: f64,
    bytes: u64,
}

async fn measure(app: u32, sent: &AtomicU64, work: impl std::future::Future<Output = ()>) -> Used {
    let (app0, all0, bytes0) = (cpu_ms(app), tree_cpu_ms(app), sent.load(Ordering::Relaxed));
    work.await;
    Used {
        app_ms: cpu_ms(app) - app0,
        all_ms: tree_cpu_ms(app) - all0,
        bytes: sent.load(Ordering::Relaxed) - bytes0,
    }
}

/// User and system CPU time of process `pid` so far, in ms (clock ticks of 10 ms).
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's name, which may hold spaces: utime is the 12th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |n: usize| {
        fields
            .get(n)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) * 10.0
}

/// [`cpu_ms`] of `root` and every process beneath it (WebKit's).
fn tree_cpu_ms(root: u32) -> f64 {
    process_tree(root).into_iter().map(cpu_ms).sum()
}

/// A TCP proxy to `server` on 127.0.0.1:0 that adds each byte the server
/// sends back to `sent`; its address.
async fn counting_proxy(
    server: std::net::SocketAddr,
    sent: Arc<AtomicU64>,
) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let sent = sent.clone();
            tokio::spawn(async move {
                let Ok(upstream) = tokio::net::TcpStream::connect(server).await else {
                    return;
                };
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_server, mut to_server) = upstream.into_split();
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
                    let _ = to_server.shutdown().await;
                });
                let mut buffer = vec![0u8; 64 * 1024];
                loop {
                    match from_server.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            sent.fetch_add(n as u64, Ordering::Relaxed);
                            if to_client.write_all(&buffer[..n]).await.is_err() {
                                break;
                            }
                        }
                    }
                }
                let _ = to_client.shutdown().await;
                up.abort();
            });
        }
    });
    address
}

//! `cargo xtask bench --only review` (issue 41): review on the work.
//! - A file's threads: 1,000 threads, every other one answered, read by
//!   `GET /v1/artifacts/{id}/threads` from a real `leasedesk serve`; p50 and
//!   p99 to the answer's headers (the server's time: axum makes the whole
//!   JSON before it sends them) and to the whole body.
//! - An inbox of 100,000 items: its first page (`?limit=50`, oldest first)
//!   and the newest first (`?before=MAX&limit=50`), all unread, then all
//!   but the newest 50 read.
//!
//! Both on SQLite and on PostgreSQL 15 (fsync on). The stores are filled
//! through the rules: the bundled backend in this process, 64 writers at
//! once so group commit takes many writes a transaction, on SQLite; then
//! copied into PostgreSQL by `Bundled::migrate_into` (`leasedesk migrate`'s
//! copy) and analysed, as autovacuum would have by then.
//! - A mention reaching the mentioned person's app: two `leasedesk serve` on
//!   one PostgreSQL database; bob follows server B's ledger with the
//!   client's follower (`Remote::follow_events`, the app's), and on each
//!   `comment.added` reads his inbox after the newest item he has, as an app
//!   keeping its inbox would; alice comments "@bob ..." through server A,
//!   one comment every 20 ms. From sending the comment to the event, and to
//!   the new inbox item read from B: p50 and p99.
//!
//! `--quick`: 100 threads, 10,000 items, 50 mentions.

#[path = "common/mod.rs"]
#[allow(dead_code)] // the big-file helpers are the lease bench's
mod common;
#[path = "common/figures.rs"]
mod figures;
#[path = "common/pairs.rs"]
#[allow(dead_code)] // etcd and the lease pairs are other benches'
mod pairs;

use std::ffi::OsString;
use std::io::Cursor;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Location, Options, Remote, Upload};
use testkit::postgres::PgCluster;

use figures::{row, value};
use pairs::{ms, percentile};

/// Writers at once while filling: enough for group commit to batch them.
const WRITERS: usize = 64;
/// The inbox is filled by threads of this many writes that mention bob
/// (the opening comment and the answers), this many threads a file.
const ITEMS_PER_THREAD: usize = 100;
const THREADS_PER_FILE: usize = 100;
/// An inbox page, as the app asks for one.
const PAGE: u32 = 50;

struct Sizes {
    threads: usize,
    inbox: usize,
    mentions: usize,
    samples: usize,
}

fn main() {
    let Some(flags) = common::Flags::for_part("review") else {
        return;
    };
    let sizes = match flags.quick {
        true => Sizes {
            threads: 100,
            inbox: 10_000,
            mentions: 50,
            samples: 30,
        },
        false => Sizes {
            threads: 1_000,
            inbox: 100_000,
            mentions: 400,
            samples: 200,
        },
    };
    let work = common::work_dir("bench-review");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    println!(
        "load average at start: {}, {} cores",
        load_average(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    common::table_head();

    let cluster = PgCluster::start(&["fsync=on", "max_connections=100"]);
    let sqlite = work.join("sqlite");
    let filled = runtime.block_on(fill(&sqlite, &sizes));
    let pg_url = cluster.database_named("review");
    let pg_data = work.join("pg");
    runtime.block_on(copy_into_postgres(&sqlite, &pg_data, &pg_url));
    cluster.sql("review", "VACUUM ANALYZE");

    let on_sqlite: Vec<OsString> = vec!["--data".into(), sqlite.into()];
    let on_postgres: Vec<OsString> = vec![
        "--data".into(),
        pg_data.into(),
        "--database".into(),
        pg_url.into(),
    ];
    for (name, store) in [("SQLite", &on_sqlite), ("PostgreSQL", &on_postgres)] {
        let server = pairs::serve(store, &[]);
        runtime.block_on(reads(name, &server.url, &filled, &sizes));
    }

    let store = [
        OsString::from("--database"),
        cluster.database_named("mentions").into(),
        "--data".into(),
        work.join("mentions").into(),
    ];
    runtime.block_on(mentions(&store, sizes.mentions));
    drop(cluster);
    let _ = std::fs::remove_dir_all(&work);
}

/// What the fill made: the file of many threads, and the tokens.
struct Filled {
    file: ArtifactId,
    alice: String,
    bob: String,
}

fn participant(name: &str) -> Participant {
    name.parse().unwrap()
}

fn upload(data: &[u8]) -> Upload {
    Upload::stream(Cursor::new(data.to_vec()))
}

fn on_version_1(body: String, i: usize) -> NewThread {
    NewThread {
        version: Some(1),
        pin: Some(Pin {
            x: (i % 97) as f64 / 97.0,
            y: (i % 89) as f64 / 89.0,
            w: None,
            h: None,
        }),
        image: Some(ImageSize {
            width: 4000,
            height: 3000,
        }),
        body,
        ..NewThread::default()
    }
}

/// Runs `work(i)` for every `i` below `count`, [`WRITERS`] at once.
async fn at_once<F, Fut>(count: usize, work: F)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let (work, next) = (Arc::new(work), Arc::new(AtomicUsize::new(0)));
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            let (work, next) = (work.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    work(i).await;
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
}

/// An SQLite data folder filled through the rules: a file of
/// `sizes.threads` threads by alice, every other one answered by bob; and
/// `sizes.inbox` writes by alice that mention bob (threads of
/// [`ITEMS_PER_THREAD`], [`THREADS_PER_FILE`] a file), each one item of
/// bob's inbox.
async fn fill(data: &Path, sizes: &Sizes) -> Filled {
    let store = Bundled::open(data).unwrap();
    let (_, alice_token) = store
        .add_account(&participant("user:alice"), false)
        .unwrap();
    let (_, bob_token) = store.add_account(&participant("user:bob"), false).unwrap();
    let alice = store.acting_as(participant("user:alice"));
    let bob = store.acting_as(participant("user:bob"));

    let started = Instant::now();
    let file = alice
        .import(&"review/hero.psd".parse().unwrap(), upload(b"v1"))
        .await
        .unwrap()
        .id;
    {
        let (alice, bob) = (alice.clone(), bob.clone());
        at_once(sizes.threads, move |i| {
            let (alice, bob) = (alice.clone(), bob.clone());
            async move {
                let body = format!(
                    "Thread {i}: the logo sits 4 px off the grid here; move it to the line and keep the clear space the guide asks for."
                );
                let thread = alice.open_thread(file, on_version_1(body, i)).await.unwrap();
                if i % 2 == 0 {
                    let answer = "Moved it in the next version, and the shadow with it.";
                    bob.comment(thread.id, answer).await.unwrap();
                }
            }
        })
        .await;
    }
    let threads = alice.threads(file, ThreadQuery::default()).await.unwrap();
    assert_eq!(threads.len(), sizes.threads);
    println!(
        "<!-- {} threads filled in {:.1} s -->",
        sizes.threads,
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let threads = sizes.inbox / ITEMS_PER_THREAD;
    let mut files = Vec::new();
    for n in 0..threads.div_ceil(THREADS_PER_FILE) {
        let path = format!("review/inbox-{n:03}.psd").parse().unwrap();
        files.push(alice.import(&path, upload(b"v1")).await.unwrap().id);
    }
    {
        let alice = alice.clone();
        at_once(threads, move |i| {
            let (alice, file) = (alice.clone(), files[i / THREADS_PER_FILE]);
            async move {
                let opening =
                    format!("@bob the type on page {i} runs into the fold: can you pull it in?");
                let thread = alice
                    .open_thread(file, on_version_1(opening, i))
                    .await
                    .unwrap();
                for n in 1..ITEMS_PER_THREAD {
                    let body = format!("@bob and again at {n}, the same margin.");
                    alice.comment(thread.id, &body).await.unwrap();
                }
            }
        })
        .await;
    }
    // At least one item a write (numbers are the store's, the threads
    // file's items among them); the unread count stops at MAX_UNREAD_COUNTED.
    let newest = InboxQuery {
        before: Some(i64::MAX as u64),
        limit: Some(1),
        ..InboxQuery::default()
    };
    let page = bob.inbox(newest).await.unwrap();
    assert!(
        page.items[0].seq as usize >= sizes.inbox,
        "one item a write"
    );
    assert_eq!(page.unread, MAX_UNREAD_COUNTED.min(sizes.inbox as u64));
    println!(
        "<!-- {} inbox items filled in {:.1} s -->",
        sizes.inbox,
        started.elapsed().as_secs_f64()
    );
    Filled {
        file,
        alice: alice_token,
        bob: bob_token,
    }
}

/// The SQLite store's rows and blobs copied into the empty database `url`.
async fn copy_into_postgres(sqlite: &Path, data: &Path, url: &str) {
    let started = Instant::now();
    let source = Bundled::open(sqlite).unwrap();
    let location = Location {
        data: data.to_owned(),
        database: Some(url.to_owned()),
        blobs: None,
    };
    let studio =
        tokio::task::spawn_blocking(move || Bundled::open_at(&location, Options::default()))
            .await
            .unwrap()
            .unwrap();
    source.migrate_into(&studio, |_| {}).await.unwrap();
    println!(
        "<!-- copied into PostgreSQL in {:.1} s -->",
        started.elapsed().as_secs_f64()
    );
}

/// Times of `samples` GETs of `url`, after a few to warm up: to the
/// headers, and to the whole body; and the last body.
async fn timed_get(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    samples: usize,
) -> (Vec<Duration>, Vec<Duration>, bytes::Bytes) {
    let (mut headers, mut whole, mut last) = (Vec::new(), Vec::new(), bytes::Bytes::new());
    for n in 0..samples + 5 {
        let sent = Instant::now();
        let answer = http.get(url).bearer_auth(token).send().await.unwrap();
        let heard = sent.elapsed();
        assert_eq!(answer.status(), 200, "{url}");
        last = answer.bytes().await.unwrap();
        if n >= 5 {
            headers.push(heard);
            whole.push(sent.elapsed());
        }
    }
    headers.sort();
    whole.sort();
    (headers, whole, last)
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A row of p50 and p99 to the headers (the figure) and to the whole body.
fn spread_row(figure: &str, headers: &[Duration], whole: &[Duration], target: &str) {
    let (p50, p99) = (percentile(headers, 0.5), percentile(headers, 0.99));
    let (w50, w99) = (percentile(whole, 0.5), percentile(whole, 0.99));
    row(
        figure,
        format!(
            "**p50 {}, p99 {}** to the headers; whole body p50 {}, p99 {}",
            ms(p50),
            ms(p99),
            ms(w50),
            ms(w99)
        ),
        target,
        value(millis(p50), "ms")
            .and("p99", millis(p99), "ms")
            .and("whole body", millis(w50), "ms")
            .and("whole body, p99", millis(w99), "ms"),
    );
}

/// The threads and inbox figures from the server at `base`.
async fn reads(store: &str, base: &str, filled: &Filled, sizes: &Sizes) {
    let http = reqwest::Client::new();
    let url = format!("{base}/v1/artifacts/{}/threads", filled.file);
    let (headers, whole, body) = timed_get(&http, &url, &filled.alice, sizes.samples).await;
    let list: ThreadList = serde_json::from_slice(&body).unwrap();
    assert_eq!(list.threads.len(), sizes.threads);
    let comments: usize = list.threads.iter().map(|t| t.comments.len()).sum();
    assert_eq!(comments, sizes.threads + sizes.threads.div_ceil(2));
    spread_row(
        &format!(
            "`GET /v1/artifacts/{{id}}/threads`, {} threads, {comments} comments ({} KiB), {store}, {} requests",
            sizes.threads,
            body.len() / 1024,
            sizes.samples
        ),
        &headers,
        &whole,
        "p50 and p99 < 50 ms at the server",
    );

    let newest = format!("before={}", i64::MAX);
    let bob = Remote::new(base, &filled.bob).unwrap();
    for all_unread in [true, false] {
        if !all_unread {
            // All but the newest page read: the read mark just behind it.
            let page = bob
                .inbox(InboxQuery {
                    before: Some(i64::MAX as u64),
                    limit: Some(PAGE),
                    ..InboxQuery::default()
                })
                .await
                .unwrap();
            let oldest_of_page = page.items.last().unwrap().seq;
            assert_eq!(
                bob.mark_inbox_read(oldest_of_page - 1).await.unwrap(),
                PAGE as u64
            );
        }
        let unread = if all_unread {
            "all unread".to_owned()
        } else {
            format!("{PAGE} unread")
        };
        for (which, query) in [
            ("first page, oldest first", String::new()),
            ("newest first", format!("{newest}&")),
        ] {
            let url = format!("{base}/v1/inbox?{query}limit={PAGE}");
            let (headers, whole, body) = timed_get(&http, &url, &filled.bob, sizes.samples).await;
            let page: InboxPage = serde_json::from_slice(&body).unwrap();
            assert_eq!(page.items.len(), PAGE as usize);
            assert_eq!(
                page.unread,
                if all_unread {
                    MAX_UNREAD_COUNTED.min(sizes.inbox as u64)
                } else {
                    PAGE as u64
                }
            );
            spread_row(
                &format!(
                    "`GET /v1/inbox?{query}limit={PAGE}`, {which}, {} items, {unread}, {store}, {} requests",
                    sizes.inbox, sizes.samples
                ),
                &headers,
                &whole,
                "p50 and p99 < 20 ms",
            );
        }
    }
}

/// A mention delivered to bob's app after alice sends it, over two servers
/// on one PostgreSQL database: p50 and p99 to the event and to the item.
async fn mentions(store: &[OsString], samples: usize) {
    let (alice_token, bob_token) = (
        pairs::add_user(store, "alice"),
        pairs::add_user(store, "bob"),
    );
    let servers = [pairs::serve(store, &[]), pairs::serve(store, &[])];
    let (said_at, heard_at) = (&servers[0].url, &servers[1].url);
    let http = reqwest::Client::new();
    let file: ArtifactId = pairs::import(&http, said_at, &alice_token, "review/mention.psd")
        .await
        .parse()
        .unwrap();
    let alice = Remote::new(said_at, &alice_token).unwrap();
    let bob = Remote::new(heard_at, &bob_token).unwrap();
    // Several threads, so none grows past a conversation's size.
    let mut threads = Vec::new();
    for i in 0..samples.div_ceil(20) {
        let opening = on_version_1(format!("Thread {i} on the hero's colours."), i);
        threads.push(alice.open_thread(file, opening).await.unwrap().id);
    }

    // bob's app: each comment.added, then the inbox items after its newest.
    let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let mut newest = bob.inbox(InboxQuery::default()).await.unwrap().next;
    let following = bob.follow_events(0).await.unwrap();
    let app = tokio::spawn(async move {
        let mut events = Box::pin(following);
        while let Some(Ok(event)) = events.next().await {
            if event.kind != "comment.added" {
                continue;
            }
            let seen = Instant::now();
            let page = bob
                .inbox(InboxQuery {
                    after: Some(newest),
                    limit: Some(PAGE),
                    ..InboxQuery::default()
                })
                .await
                .unwrap();
            newest = page.next.max(newest);
            for item in page.items {
                let _ = heard_tx.send((item, event.data.clone(), seen, Instant::now()));
            }
        }
    });
    // The setup's events read first, so none is in the way of a sample.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let (mut to_event, mut to_item) = (Vec::new(), Vec::new());
    for n in 0..samples {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let thread = threads[n % threads.len()];
        let sent = Instant::now();
        let comment = alice
            .comment(
                thread,
                &format!("@bob can you look at the swatch, round {n}?"),
            )
            .await
            .unwrap();
        let (item, data, seen, ready) = tokio::time::timeout(Duration::from_secs(10), heard.recv())
            .await
            .expect("bob's app heard the mention within 10 s")
            .expect("the follower runs");
        assert_eq!(
            data["comment_id"],
            comment.id.to_string(),
            "the comment sent, heard"
        );
        assert_eq!(
            (item.kind, item.thread_id),
            (InboxKind::Mention, Some(thread)),
            "its inbox item"
        );
        to_event.push(seen - sent);
        to_item.push(ready - sent);
    }
    app.abort();
    to_event.sort();
    to_item.sort();
    let (e50, e99) = (percentile(&to_event, 0.5), percentile(&to_event, 0.99));
    let (i50, i99) = (percentile(&to_item, 0.5), percentile(&to_item, 0.99));
    row(
        &format!(
            "a mention delivered to the mentioned person's app: commented on one server, followed on the other, two servers on one PostgreSQL 15 database (fsync on), HTTP ({samples} mentions)"
        ),
        format!(
            "**p50 {}, p99 {}** to the inbox item read; to `comment.added` p50 {}, p99 {}",
            ms(i50),
            ms(i99),
            ms(e50),
            ms(e99)
        ),
        "p99 < 100 ms",
        value(millis(i50), "ms")
            .and("p99", millis(i99), "ms")
            .and("to the event", millis(e50), "ms")
            .and("to the event, p99", millis(e99), "ms"),
    );
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

//! `cargo xtask bench --only million` (issue 25): a studio of a million
//! files. A store of 1,000,000 artifacts in 1,000 folders (`f042/hero-0001234.psd`,
//! 1 in 100 held) is filled in bulk by SQL, so that the fill is not the
//! measure; then, on SQLite and on PostgreSQL, in-process (the bundled
//! backend) and over HTTP (a `Remote` client of `leasedesk::server::run` on
//! 127.0.0.1:0 in this process):
//! - the first page of 1,000 files;
//! - a search for a 4-letter text found in 1,000 paths (`kiwi`), and in
//!   52,000 (`hero`);
//! - the top folder listing with counts (1,000 folders);
//! - a full walk by pages of 1,000;
//! - a `leasedesk serve` process's peak memory above idle while 8 clients
//!   walk every page at once.
//!
//! Then `leasedesk status` on a data folder of 1,000,000 blobs (empty files
//! named by digests: an open must not look at them). `--quick`: 20,000
//! files in 20 folders.
//!
//! And the app's mirror of the same studio (issue 36), filled through its
//! own calls: a screen of 100 of the top folder's files sorted by size (the
//! first, and at place 900,000 with no place known, then the next screen
//! from there), by save time newest first, and a folder of 1,000 files
//! sorted by size. `--only million-sorted` runs this part alone.

#[path = "common/mod.rs"]
#[allow(dead_code)] // the big-file helpers are other benches'
mod common;
#[path = "common/figures.rs"]
mod figures;
#[path = "common/pairs.rs"]
#[allow(dead_code)] // etcd and the lease pairs are other benches'
mod pairs;
#[path = "common/studio.rs"]
#[allow(dead_code)] // the ids and paths are the app's bench's
mod studio;

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use leasedesk::bundled::Location;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Options, Remote};
use testkit::postgres::PgCluster;

use figures::{row, value, Data};
use pairs::{ms, percentile};
use studio::{fill_sqlite, RARE, WORDS};

const COMMON: &str = "hero";
const PAGE: u32 = 1000;
const WALKERS: usize = 8;

struct Sizes {
    files: u64,
    folders: u64,
    samples: usize,
}

impl Sizes {
    fn studio(&self) -> studio::Studio {
        studio::Studio {
            files: self.files,
            folders: self.folders,
        }
    }
}

/// The part of this bench that measures the app's mirror alone.
const SORTED: &str = "million-sorted";

fn main() {
    let flags = common::Flags::from_args();
    let sizes = sizes(&flags);
    if flags.runs("million") || flags.runs(SORTED) {
        sorted_mirror(&sizes);
    }
    if !flags.runs("million") {
        return;
    }
    store_and_server(&sizes);
}

fn sizes(flags: &common::Flags) -> Sizes {
    match flags.quick {
        true => Sizes {
            files: 20_000,
            folders: 20,
            samples: 30,
        },
        false => Sizes {
            files: 1_000_000,
            folders: 1_000,
            samples: 200,
        },
    }
}

/// The app's mirror of the studio (`f042/hero-0001234.psd`, sizes and save
/// times scattered, 1 in 100 held): screens of a folder's files in an
/// order other than by path.
fn sorted_mirror(sizes: &Sizes) {
    use leasedesk::workspace::{ListOrder, RowChange, SortKey, Table, Workspace};
    let work = common::work_dir("bench-million-sorted");
    let workspace = Workspace::open(
        &work.join("files"),
        &work.join("state"),
        leasedesk::clock::Clock::system(),
    )
    .unwrap();
    let mirror = workspace.mirror();
    let started = Instant::now();
    mirror.begin_filling().unwrap();
    let base = chrono::Utc::now().timestamp();
    let mut batch = Vec::with_capacity(2000);
    for i in 0..sizes.files {
        // Scattered, not in path order: a xorshift of the place.
        let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        x ^= x >> 29;
        x ^= x << 17;
        let word = if i % 1000 == 7 {
            RARE
        } else {
            WORDS[(i % 19) as usize]
        };
        let lease = (i % 100 == 0).then(|| {
            serde_json::json!({
                "holder": "edit:1", "participant": "user:bob", "kind": "edit",
                "checkout_id": null, "note": null,
                "acquired_at": "2026-12-01T00:00:00Z", "expires_at": "2026-12-31T00:00:00Z",
            })
        });
        let artifact: Artifact = serde_json::from_value(serde_json::json!({
            "id": studio::artifact_id(i),
            "path": format!("f{:03}/{word}-{i:07}.psd", i % sizes.folders),
            "head": {
                "version": 1 + x % 9,
                "digest": format!("blake3:{:064x}", i),
                // Many alike (to a KB), as a studio's sizes are.
                "size": (x % 200_000) * 1024,
                "author": "user:alice",
                "committed_at": chrono::DateTime::from_timestamp(base - (x % 31_536_000) as i64, 0).unwrap(),
            },
            "lease": lease,
        }))
        .unwrap();
        batch.push(RowChange::Put(Box::new(artifact)));
        if batch.len() == 2000 {
            mirror
                .apply_to_mirror(Table::Filling, &batch, None)
                .unwrap();
            batch.clear();
        }
    }
    mirror
        .apply_to_mirror(Table::Filling, &batch, None)
        .unwrap();
    mirror.finish_filling("bench", 0).unwrap();
    println!(
        "<!-- the mirror filled in {:.1} s, {} MiB -->",
        started.elapsed().as_secs_f64(),
        std::fs::metadata(work.join("state/workspace.db")).map_or(0, |m| m.len() >> 20)
    );
    let by_size = ListOrder {
        by: SortKey::Size,
        descending: false,
    };
    let newest = ListOrder {
        by: SortKey::Modified,
        descending: true,
    };
    let deep = sizes.files * 9 / 10;
    let small = format!("f{:03}/", 42 % sizes.folders);
    let in_small = sizes.files / sizes.folders;
    let screens: [(String, &str, ListOrder, u64); 5] = [
        ("first screen".into(), "", by_size, 0),
        (
            format!("screen at place {deep}, no place known"),
            "",
            by_size,
            deep,
        ),
        (
            format!("screen at place {deep}, newest first"),
            "",
            newest,
            deep,
        ),
        (
            format!("first screen of a folder of {in_small}"),
            &small,
            by_size,
            0,
        ),
        (
            format!(
                "screen at place {} of a folder of {in_small}",
                in_small * 9 / 10
            ),
            &small,
            by_size,
            in_small * 9 / 10,
        ),
    ];
    let samples = sizes.samples / 10;
    let mut last = Vec::new();
    for (what, folder, order, offset) in &screens {
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples + 2 {
            let started = Instant::now();
            let cursor = mirror
                .mirror_cursor_at(folder, *order, None, *offset)
                .unwrap();
            let rows = mirror
                .mirror_rows_in(folder, *order, cursor.as_ref(), 100)
                .unwrap();
            times.push(started.elapsed());
            assert_eq!(rows.len(), 100, "{what}");
            last = rows;
        }
        times.drain(..2);
        times.sort();
        row(
            &format!(
                "the app's mirror of {} files, a screen of 100 by {}: {what}",
                sizes.files,
                if order.by == SortKey::Size {
                    "size"
                } else {
                    "save time"
                }
            ),
            spread(&times),
            "p99 < 100 ms (a place never read)",
            spread_data(&times),
        );
    }
    // The next screen from a place known (as the window scrolls on): a
    // walk from the cursor of the last screen read.
    let known = last.last().unwrap();
    let cursor = mirror
        .mirror_cursor_at(&small, by_size, None, in_small * 9 / 10 + 99)
        .unwrap();
    assert_eq!(
        cursor.as_ref().map(|c| c.path.as_str()),
        Some(known.path.as_str())
    );
    let at_deep = mirror.mirror_cursor_at("", by_size, None, deep).unwrap();
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        let next = mirror
            .mirror_cursor_at("", by_size, at_deep.as_ref(), 100)
            .unwrap();
        let rows = mirror
            .mirror_rows_in("", by_size, next.as_ref(), 100)
            .unwrap();
        times.push(started.elapsed());
        assert_eq!(rows.len(), 100);
    }
    times.sort();
    row(
        &format!("the same, the next screen after place {deep} (its place known)"),
        spread(&times),
        "p99 < 16 ms (a frame)",
        spread_data(&times),
    );
    drop(workspace);
    let _ = std::fs::remove_dir_all(&work);
}

/// The store's figures, in-process and over HTTP, on SQLite and PostgreSQL.
fn store_and_server(sizes: &Sizes) {
    let work = common::work_dir("bench-million");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    println!(
        "{} files in {} folders; load average at start {}",
        sizes.files,
        sizes.folders,
        load_average()
    );
    println!();
    common::table_head();

    let data = work.join("sqlite");
    let started = Instant::now();
    fill_sqlite(&data, &sizes.studio());
    println!(
        "<!-- SQLite filled in {:.1} s -->",
        started.elapsed().as_secs_f64()
    );
    let store_args: Vec<OsString> = vec!["--data".into(), data.clone().into()];
    runtime.block_on(measure(
        "SQLite",
        &Location::folder(&data),
        &store_args,
        sizes,
    ));

    let cluster = PgCluster::start(&["fsync=on"]);
    let url = cluster.database();
    let database = url.rsplit('/').next().unwrap().to_owned();
    let pg_data = work.join("postgres");
    let location = Location {
        data: pg_data.clone(),
        database: Some(url.clone()),
        blobs: None,
    };
    drop(Bundled::open_at(&location, Options::default()).expect("migrate PostgreSQL"));
    let started = Instant::now();
    fill_postgres(&cluster, &database, sizes);
    println!(
        "<!-- PostgreSQL filled in {:.1} s -->",
        started.elapsed().as_secs_f64()
    );
    let store_args: Vec<OsString> = vec![
        "--data".into(),
        pg_data.into(),
        "--database".into(),
        url.into(),
    ];
    runtime.block_on(measure("PostgreSQL", &location, &store_args, sizes));
    drop(cluster);

    status_on_many_blobs(&work.join("blobs"), sizes.files);
    let _ = std::fs::remove_dir_all(&work);
}

/// The figures of one store, in-process and over HTTP, then a server
/// process's memory under 8 walks.
async fn measure(store_name: &str, location: &Location, store_args: &[OsString], sizes: &Sizes) {
    let location = location.clone();
    let store =
        tokio::task::spawn_blocking(move || Bundled::open_at(&location, Options::default()))
            .await
            .unwrap()
            .expect("open the store");
    let bench = "user:bench".parse::<Participant>().unwrap();
    let (_, token) = store.add_account(&bench, false).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(leasedesk::server::run(listener, store.clone(), async {
        let _ = stopped.await;
    }));
    let backends: [(&str, Arc<dyn Backend>); 2] = [
        ("bundled", Arc::new(store.acting_as(bench))),
        ("HTTP", Arc::new(Remote::new(&base, &token).unwrap())),
    ];
    for (how, backend) in &backends {
        let on = format!("{store_name}, {how}");
        let first = timed(sizes.samples, || {
            backend.artifact_page(ArtifactQuery::page(PAGE))
        })
        .await;
        assert_eq!(first.1.artifacts.len(), PAGE as usize);
        row(
            &format!("first page of 1,000 files ({on})"),
            spread(&first.0),
            "p50 and p99 < 20 ms",
            spread_data(&first.0),
        );
        for (text, found) in [(RARE, sizes.files / 1000), (COMMON, sizes.files / 19)] {
            let search = || {
                backend.artifact_page(ArtifactQuery {
                    text: Some(text.into()),
                    ..ArtifactQuery::page(PAGE)
                })
            };
            let (times, page) = timed(sizes.samples / 2, search).await;
            assert_eq!(
                page.artifacts.len() as u64,
                found.min(PAGE as u64),
                "{text}"
            );
            row(
                &format!("search for `{text}` (in about {found} paths), first page ({on})"),
                spread(&times),
                "p50 and p99 < 50 ms",
                spread_data(&times),
            );
        }
        let (times, top) = timed(sizes.samples / 2, || backend.folders("")).await;
        assert_eq!(top.folders.len() as u64, sizes.folders);
        assert_eq!(
            top.folders.iter().map(|f| f.files).sum::<u64>(),
            sizes.files
        );
        row(
            &format!(
                "top folder listing, {} folders with counts ({on})",
                sizes.folders
            ),
            spread(&times),
            "< 20 ms",
            spread_data(&times),
        );
        let started = Instant::now();
        let walked = walk(backend.as_ref(), PAGE).await;
        assert_eq!(walked, sizes.files);
        let took = started.elapsed().as_secs_f64();
        row(
            &format!("full walk by pages of 1,000 ({on})"),
            format!("{took:.2} s"),
            "",
            value(took, "s"),
        );
    }
    let _ = stop.send(());
    let _ = server.await;
    drop(backends);
    drop(store);

    let token = pairs::add_user(store_args, "walker");
    let serve = pairs::serve(store_args, &[]);
    let pid = serve.child.id();
    let client = Remote::new(&serve.url, &token).unwrap();
    client
        .artifact_page(ArtifactQuery::page(PAGE))
        .await
        .unwrap();
    let idle = resident_memory(pid);
    // The high-water mark from here on (Linux: clear_refs 5 resets VmHWM).
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("reset the peak");
    let started = Instant::now();
    let walks: Vec<_> = (0..WALKERS)
        .map(|_| {
            let client = Remote::new(&serve.url, &token).unwrap();
            // The largest page the API allows: what a walk holds at once.
            tokio::spawn(async move { walk(&client, leasedesk::model::MAX_PAGE).await })
        })
        .collect();
    for walk in walks {
        assert_eq!(walk.await.unwrap(), sizes.files);
    }
    let took = started.elapsed();
    let peak = common::peak_memory(pid);
    row(
        &format!(
            "`leasedesk serve` peak memory during 8 concurrent walks by pages of 10,000 ({store_name})"
        ),
        format!(
            "{} MiB above idle ({} MiB idle, walks done in {:.1} s)",
            peak.saturating_sub(idle) >> 20,
            idle >> 20,
            took.as_secs_f64()
        ),
        "< 64 MiB above idle",
        value((peak.saturating_sub(idle) >> 20) as f64, "MiB above idle")
            .and("idle", (idle >> 20) as f64, "MiB")
            .and("walks", took.as_secs_f64(), "s"),
    );
}

/// Runs `call` `samples` times (after 3 to warm up): the times, and the last answer.
async fn timed<T, F, Fut>(samples: usize, call: F) -> (Vec<Duration>, T)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = leasedesk::Result<T>>,
{
    for _ in 0..3 {
        call().await.unwrap();
    }
    let mut times = Vec::with_capacity(samples);
    let mut last = None;
    for _ in 0..samples {
        let started = Instant::now();
        last = Some(call().await.unwrap());
        times.push(started.elapsed());
    }
    times.sort();
    (times, last.unwrap())
}

fn spread(sorted: &[Duration]) -> String {
    format!(
        "p50 {}, p99 {}",
        ms(percentile(sorted, 0.50)),
        ms(percentile(sorted, 0.99))
    )
}

/// The figures of [`spread`]: p50, then p99, in ms.
fn spread_data(sorted: &[Duration]) -> Data {
    let millis = |p: f64| percentile(sorted, p).as_secs_f64() * 1e3;
    value(millis(0.50), "ms").and("p99", millis(0.99), "ms")
}

/// Walks every page of the store: how many files.
async fn walk(backend: &dyn Backend, page: u32) -> u64 {
    let mut query = ArtifactQuery::page(page);
    let mut files = 0;
    loop {
        let page = backend.artifact_page(query.clone()).await.unwrap();
        files += page.artifacts.len() as u64;
        match page.next {
            Some(next) => query.after = Some(next),
            None => return files,
        }
    }
}

/// The path of file `i` in PostgreSQL's SQL, as SQLite's `printf` makes it.
fn pg_path_sql(folders: u64) -> String {
    let words: Vec<String> = WORDS.iter().map(|w| format!("'{w}'")).collect();
    format!(
        "'f' || lpad((i % {folders})::text, 3, '0') || '/'
         || CASE WHEN i % 1000 = 7 THEN '{RARE}' ELSE (ARRAY[{}])[i % 19 + 1] END
         || '-' || lpad(i::text, 7, '0') || '.psd'",
        words.join(",")
    )
}

/// A PostgreSQL database made by the program (its schema), then filled in
/// bulk, its search index made after the rows.
fn fill_postgres(cluster: &PgCluster, database: &str, sizes: &Sizes) {
    let now = chrono::Utc::now().timestamp_millis();
    let far = now + 86_400_000;
    let name = pg_path_sql(sizes.folders);
    let n = sizes.files;
    cluster.sql(
        database,
        &format!(
            "BEGIN;
             DROP INDEX artifacts_search;
             INSERT INTO artifacts (id, path, path_key, head_version, lease_epoch, created_at)
             SELECT lpad(to_hex(i), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0'),
                    p, upper(p), 1, 0, {now}
             FROM (SELECT i, {name} AS p FROM generate_series(0, {n} - 1) AS i) s;
             INSERT INTO versions (artifact_id, version, digest, size, author, committed_at)
             SELECT id, 1, 'blake3:' || lpad(replace(id, '-', ''), 64, '0'), 1000, 'user:alice', {now}
             FROM artifacts;
             INSERT INTO folders (path, parent, key, files, direct)
             SELECT substr(path, 1, 5), '', upper(substr(path, 1, 4)), count(*), count(*)
             FROM artifacts GROUP BY 1, 3;
             INSERT INTO folders VALUES ('', NULL, '', {n}, 0);
             INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at)
             SELECT id, 'user:bob', 'user:bob', 'edit', NULL, NULL, {now}, {far}
             FROM artifacts WHERE path LIKE '%00.psd';
             CREATE INDEX artifacts_search ON artifacts USING gin (path_key gin_trgm_ops);
             COMMIT;"
        ),
    );
    // What autovacuum would find in time: the planner's statistics.
    cluster.sql(database, "VACUUM ANALYZE");
}

/// `leasedesk status` on a data folder whose blob folder holds `count`
/// files named by digests: the median of 20 runs.
fn status_on_many_blobs(data: &Path, count: u64) {
    drop(Bundled::open(data).expect("make the data folder"));
    let blobs = data.join("blobs");
    for i in 0..count {
        let hex = blake3::hash(&i.to_le_bytes()).to_hex();
        let shard = blobs.join(&hex[..2]);
        std::fs::File::create(shard.join(hex.as_str())).unwrap();
    }
    let cli = pairs::cli(&["--data".into(), data.into()]);
    let mut times = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        cli.ok(&["status"]);
        times.push(started.elapsed());
    }
    let median = common::median(times);
    row(
        &format!("`leasedesk status` on a data folder of {count} blobs"),
        format!("median {}", ms(median)),
        "< 100 ms",
        value(median.as_secs_f64() * 1e3, "ms"),
    );
}

/// The resident memory of process `pid` now (VmRSS), in bytes.
fn resident_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb << 10)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

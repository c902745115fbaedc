//! `cargo xtask bench`: the lease core's figures, each beside the baseline it is
//! judged against, measured in one run on this machine. Prints a Markdown report.
//! `--quick` uses small sizes, to check that the benchmark itself works;
//! `--only sqlite|pairs|cycles|big` runs one part; `--big-mib N` sets the big
//! file's size. It builds and runs for Windows too (`cargo xtask bench --only
//! windows`, under Wine), with its files in `LEASEDESK_BENCH_TMP`.

#[path = "common/mod.rs"]
#[allow(dead_code)] // a served store is the server benches'
mod common;
#[path = "common/figures.rs"]
mod figures;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{make_big_file, median, peak_memory, settle, size_label};
use figures::{row, value, Data};
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Upload};

struct Sizes {
    pairs: u32,
    cycles: u32,
    big_file: u64,
    repeats: usize,
}

fn main() {
    let flags = common::Flags::from_args();
    let mut sizes = if flags.quick {
        Sizes {
            pairs: 500,
            cycles: 200,
            big_file: 64 << 20,
            repeats: 1,
        }
    } else {
        Sizes {
            pairs: 20_000,
            cycles: 5_000,
            big_file: 1 << 30,
            repeats: 7,
        }
    };
    if let Some(mib) = flags.value("--big-mib") {
        sizes.big_file = mib.parse::<u64>().expect("--big-mib N") << 20;
    }
    let work = common::work_dir("bench");
    let runtime = tokio::runtime::Runtime::new().unwrap();

    // `--only NAME` runs one part: sqlite, pairs, cycles or big.
    let runs = |part: &str| flags.runs(part);
    common::table_head();
    if runs("sqlite") {
        sqlite_baseline(&work, sizes.pairs);
    }
    if runs("pairs") {
        runtime.block_on(lease_pairs(&work, sizes.pairs));
    }
    if runs("cycles") {
        runtime.block_on(cycles(&work, sizes.cycles));
    }
    if runs("big") {
        big_file(&work, &sizes);
    }
    let _ = std::fs::remove_dir_all(&work);
}

fn per_second(n: u32, elapsed: Duration) -> f64 {
    f64::from(n) / elapsed.as_secs_f64()
}

/// The row of `figure`: `n` rounds since `start`, as `unit` (`pairs/s`),
/// against `target`.
fn rate_row(figure: &str, n: u32, start: Instant, unit: &str, target: &str) {
    let rate = per_second(n, start.elapsed());
    row(
        figure,
        format!("{rate:.0} {unit}"),
        target,
        value(rate, unit),
    );
}

/// The store's floor: the smallest transaction a lease change needs (read the
/// lease row, upsert it, insert an event), straight on rusqlite.
fn sqlite_baseline(work: &Path, n: u32) {
    for synchronous in ["NORMAL", "FULL"] {
        let db =
            rusqlite::Connection::open(work.join(format!("baseline-{synchronous}.db"))).unwrap();
        db.pragma_update(None, "journal_mode", "WAL").unwrap();
        db.pragma_update(None, "synchronous", synchronous).unwrap();
        db.execute_batch(
            "CREATE TABLE lease (id INTEGER PRIMARY KEY, holder TEXT, expires INTEGER);
             CREATE TABLE event (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT, at INTEGER);",
        )
        .unwrap();
        let n = if synchronous == "FULL" { n / 20 } else { n };
        let start = Instant::now();
        for i in 0..n {
            let tx = db.unchecked_transaction().unwrap();
            let _: Option<i64> = tx
                .query_row("SELECT expires FROM lease WHERE id = 1", [], |r| r.get(0))
                .ok();
            tx.execute(
                "INSERT INTO lease VALUES (1, 'h', ?1) ON CONFLICT (id) DO UPDATE SET expires = ?1",
                [i],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO event (kind, at) VALUES ('lease.acquired', ?1)",
                [i],
            )
            .unwrap();
            tx.commit().unwrap();
        }
        let rate = per_second(n, start.elapsed());
        row(
            &format!("minimal SQLite WAL transaction, synchronous={synchronous}"),
            format!("{rate:.0}/s"),
            if synchronous == "NORMAL" {
                "about 17,000/s (issue)"
            } else {
                "under 900/s (issue)"
            },
            value(rate, "/s"),
        );
    }
}

async fn store_with_artifact(dir: &Path, content: &[u8]) -> (Bundled, ArtifactId) {
    let store = Bundled::open(dir)
        .unwrap()
        .acting_as("user:bench".parse().unwrap());
    let a = store
        .import(
            &"bench.psd".parse().unwrap(),
            Upload::stream(std::io::Cursor::new(content.to_vec())),
        )
        .await
        .unwrap();
    (store, a.id)
}

async fn lease_pairs(work: &Path, n: u32) {
    let (store, id) = store_with_artifact(&work.join("pairs"), b"v1").await;
    let start = Instant::now();
    for _ in 0..n {
        let edit = store.begin_edit(id, None).await.unwrap();
        store.release_edit(edit.id).await.unwrap();
    }
    rate_row(
        "lease acquire + release pairs, bundled (agent edit begin + release)",
        n,
        start,
        "pairs/s",
        "at least 5,000 pairs/s",
    );
    let start = Instant::now();
    for _ in 0..n {
        let c = store
            .check_out(id, CheckoutRequest::default())
            .await
            .unwrap();
        store.cancel(c.id).await.unwrap();
    }
    rate_row(
        "check-out + cancel pairs, bundled",
        n,
        start,
        "pairs/s",
        "(same lease, plus the record)",
    );
}

async fn cycles(work: &Path, n: u32) {
    let content = vec![42u8; 4096];
    let (store, id) = store_with_artifact(&work.join("cycles"), &content).await;
    let start = Instant::now();
    for _ in 0..n {
        let done = cycle(&store, id, content.clone()).await;
        assert!(matches!(done, Some(CheckinResult::Unchanged { .. })));
    }
    rate_row(
        "whole cycle: check out, check in an unchanged 4 KiB file",
        n,
        start,
        "cycles/s",
        "at least 1,000 cycles/s",
    );
    let n = n / 10;
    let start = Instant::now();
    for i in 0..n {
        let done = cycle(&store, id, format!("version {i}").into_bytes()).await;
        assert!(matches!(done, Some(CheckinResult::Committed { .. })));
    }
    rate_row(
        "durable cycle: check out, check in a changed file (blob and WAL fsynced)",
        n,
        start,
        "cycles/s",
        "bounded by fsync; compare synchronous=FULL above",
    );
}

/// One check-out of `id` on `store`, checked in with `content`: its result.
async fn cycle(store: &Bundled, id: ArtifactId, content: Vec<u8>) -> Option<CheckinResult> {
    let c = store
        .check_out(id, CheckoutRequest::default())
        .await
        .unwrap();
    store
        .check_in(c.id, Upload::stream(std::io::Cursor::new(content)))
        .await
        .unwrap()
        .result
}

/// Wall time and peak resident memory of a child process. The peak is read
/// from /proc while it runs: the kernel's own maxrss of a child also counts the
/// memory of this process at the moment it forked.
fn measure(cmd: &mut Command) -> (Duration, u64) {
    let start = Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start");
    let mut peak = 0u64;
    let status = loop {
        peak = peak.max(peak_memory(child.id()));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    assert!(status.success(), "{cmd:?} failed: {status}");
    (elapsed, peak)
}

/// "median (fastest)": this machine's disk is shared, and one run can take
/// twice another, so both are shown.
fn spread(times: &[Duration]) -> String {
    let fastest = times.iter().min().unwrap();
    format!(
        "{:.3} s ({:.3} s)",
        median(times.to_vec()).as_secs_f64(),
        fastest.as_secs_f64()
    )
}

fn ratio(a: &[Duration], b: &[Duration]) -> f64 {
    median(a.to_vec()).as_secs_f64() / median(b.to_vec()).as_secs_f64()
}

/// The figures of [`spread`]: the median, and the fastest beside it.
fn timed(times: &[Duration]) -> Data {
    let fastest = times.iter().min().unwrap().as_secs_f64();
    value(secs(times), "s").and("fastest", fastest, "s")
}

fn secs(times: &[Duration]) -> f64 {
    median(times.to_vec()).as_secs_f64()
}

fn big_file(work: &Path, sizes: &Sizes) {
    let bin = common::bin();
    let source = work.join("big.bin");
    make_big_file(&source, sizes.big_file);
    let label = size_label(sizes.big_file);
    let quiet = || settle(&source);
    let copy = work.join("copy.bin");
    let (mut std_copy, mut cp, mut cp_sync) = (vec![], vec![], vec![]);
    let (mut checkin, mut start, mut peak) = (vec![], vec![], 0);
    for rep in 0..sizes.repeats {
        // The baseline on every platform: copy_file_range on Linux, CopyFileW
        // on Windows.
        quiet();
        let copied = Instant::now();
        std::fs::copy(&source, &copy).unwrap();
        std_copy.push(copied.elapsed());
        std::fs::remove_file(&copy).unwrap();
        if cfg!(target_os = "linux") {
            quiet();
            cp.push(common::timed_cp(&source, &copy));
            quiet();
            let cp_then_sync = format!("cp {0} {1} && sync {1}", source.display(), copy.display());
            cp_sync.push(measure(Command::new("sh").arg("-c").arg(cp_then_sync)).0);
            std::fs::remove_file(&copy).unwrap();
        }
        // What starting a process costs, inside the check-in's time.
        start.push(measure(Command::new(&bin).arg("--version")).0);

        let data = work.join(format!("checkin-{rep}"));
        let cli = testkit::Cli::new(&bin)
            .data(&data)
            .as_participant("user:bench");
        let small = work.join("small.psd");
        std::fs::write(&small, b"v1").unwrap();
        cli.ok(&["import", "big.psd", small.to_str().unwrap()]);
        cli.ok(&["checkout", "big.psd"]);
        quiet();
        let (elapsed, rss) = measure(cli.command().args(["checkin", "big.psd"]).arg(&source));
        checkin.push(elapsed);
        peak = peak.max(rss);
        std::fs::remove_dir_all(&data).unwrap();
    }
    eprintln!("copy {std_copy:?}\ncp {cp:?}\ncp+fsync {cp_sync:?}\ncheck-in {checkin:?}");
    let runs = checkin.len();
    let copy_name = format!(
        "std::fs::copy of a page-cached {label} file, same disk: median (fastest) of {runs}"
    );
    row(&copy_name, spread(&std_copy), "baseline", timed(&std_copy));
    let mut against = format!("{:.2}x copy", ratio(&checkin, &std_copy));
    if cfg!(target_os = "linux") {
        row(
            &format!("cp of the {label} file"),
            spread(&cp),
            "baseline",
            timed(&cp),
        );
        row(
            &format!("cp, then fsync of the copy ({label})"),
            spread(&cp_sync),
            "baseline with durability",
            timed(&cp_sync),
        );
        against += &format!(
            ", {:.2}x cp, {:.2}x cp+fsync",
            ratio(&checkin, &cp),
            ratio(&checkin, &cp_sync)
        );
    }
    let (baseline, times) = if cfg!(target_os = "linux") {
        (format!("cp of the {label} file"), &cp)
    } else {
        (copy_name, &std_copy)
    };
    row(
        &format!("check-in of the {label} file (hash while copying, fsync, commit)"),
        format!("{} = {against}", spread(&checkin)),
        "at most 1.5x cp",
        value(secs(&checkin), "s")
            .against(&baseline, secs(times), "s")
            .and("fastest", checkin.iter().min().unwrap().as_secs_f64(), "s"),
    );
    row(
        "start and exit of the CLI (`leasedesk --version`), part of the check-in's time",
        spread(&start),
        "",
        timed(&start),
    );
    if cfg!(target_os = "linux") {
        let mib = peak as f64 / 1048576.0;
        row(
            &format!("peak memory of the check-in process ({label})"),
            format!("{mib:.1} MiB"),
            "under 64 MiB",
            value(mib, "MiB"),
        );
    }

    // The digest against b3sum: Linux, through `cargo xtask bench` (the
    // Windows figures, `--only windows`, leave it out).
    let Some(b3sum) = std::env::var_os("B3SUM").map(PathBuf::from) else {
        return;
    };
    quiet();
    let (mut mapped, mut b3, mut b3_one, mut read) = (vec![], vec![], vec![], vec![]);
    for _ in 0..5 {
        mapped.push(measure(Command::new(&bin).arg("digest").arg(&source)).0);
        b3.push(measure(Command::new(&b3sum).arg(&source)).0);
        b3_one.push(
            measure(
                Command::new(&b3sum)
                    .args(["--num-threads", "1"])
                    .arg(&source),
            )
            .0,
        );
        let start = Instant::now();
        let (_, size) = leasedesk::blobs::digest_file(&source).unwrap();
        read.push(start.elapsed());
        assert_eq!(size, sizes.big_file);
    }
    let (b3_name, b3_one_name) = (
        format!("b3sum of the {label} file (all cores)"),
        format!("b3sum --num-threads 1 ({label})"),
    );
    row(&b3_name, spread(&b3), "baseline", timed(&b3));
    row(
        &b3_one_name,
        spread(&b3_one),
        "baseline, one thread",
        timed(&b3_one),
    );
    row(
        &format!("leasedesk digest of the {label} file (mapped, all cores)"),
        format!("{} = {:.2}x b3sum", spread(&mapped), ratio(&mapped, &b3)),
        "within 10% of b3sum",
        value(secs(&mapped), "s").against(&b3_name, secs(&b3), "s"),
    );
    row(
        &format!("digest_file of the {label} file (read, one core: for long-running processes)"),
        format!(
            "{} = {:.2}x b3sum --num-threads 1",
            spread(&read),
            ratio(&read, &b3_one)
        ),
        "no SIGBUS if truncated meanwhile",
        value(secs(&read), "s").against(&b3_one_name, secs(&b3_one), "s"),
    );
}

//! `cargo xtask bench --only lfs` (issue 38): Git LFS against a real
//! `leasedesk serve` (release, SQLite, blobs in its data folder) on
//! loopback, driven by the real `git lfs` client:
//! - `git lfs lock` + `git lfs unlock` of one file, whole commands, median
//!   of 20, and the server's own time for each (from its request log);
//! - `git lfs locks` with 10,000 locks in the folder, median of 5;
//! - a push of 1 GiB of LFS objects to a bare repository, beside `cp` of
//!   the same file followed by `sync`, and the server's peak memory.
//!
//! `--quick`: 5 pairs, 1,000 locks, 64 MiB.

#[path = "common/mod.rs"]
#[allow(dead_code)] // the other benches' helpers
mod common;
#[path = "common/figures.rs"]
mod figures;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::median;
use figures::{row, value};

struct Sizes {
    pairs: usize,
    locks: usize,
    push_bytes: u64,
}

fn main() {
    let Some(flags) = common::Flags::for_part("lfs") else {
        return;
    };
    let sizes = if flags.quick {
        Sizes {
            pairs: 5,
            locks: 1_000,
            push_bytes: 64 << 20,
        }
    } else {
        Sizes {
            pairs: 20,
            locks: 10_000,
            push_bytes: 1 << 30,
        }
    };
    let work = common::work_dir("bench-lfs");
    let cli = testkit::Cli::new(common::bin()).data(work.join("data"));
    let token = cli.add_user("bench");
    // The file the pairs lock: a real check-out, not a path held.
    let hero = work.join("hero.psd");
    std::fs::write(&hero, b"8BPS layers").unwrap();
    cli.ok(&["import", "art/hero.psd", hero.to_str().unwrap()]);
    // Its request log gives the server's own time of each request.
    let server = cli.serve().log_to(work.join("serve.log")).spawn();
    common::table_head();
    lock_pairs(&work, &server, &token, sizes.pairs);
    many_locks(&work, &server, &token, sizes.locks);
    push(&work, &server, &token, sizes.push_bytes);
    drop(server);
    let _ = std::fs::remove_dir_all(&work);
}

/// A repository whose `lfs.url` is the server's `/lfs/art`, with the
/// token given by a credential helper.
struct Repo {
    work: PathBuf,
    home: PathBuf,
}

impl Repo {
    fn new(root: &Path, url: &str, token: &str) -> Repo {
        let repo = Repo {
            work: root.join("work"),
            home: root.join("home"),
        };
        std::fs::create_dir_all(&repo.work).unwrap();
        std::fs::create_dir_all(&repo.home).unwrap();
        repo.ok(&["init", "-q", "--initial-branch=main"]);
        repo.ok(&["lfs", "install", "--local"]);
        repo.ok(&["config", "user.email", "bench@example.com"]);
        repo.ok(&["config", "user.name", "bench"]);
        let helper = format!("!f() {{ echo username=x; echo password={token}; }}; f");
        repo.ok(&["config", "credential.helper", &helper]);
        std::fs::write(
            repo.work.join(".lfsconfig"),
            format!("[lfs]\n\turl = {url}/lfs/art\n"),
        )
        .unwrap();
        std::fs::write(
            repo.work.join(".gitattributes"),
            "*.psd filter=lfs diff=lfs merge=lfs -text lockable\n*.bin filter=lfs diff=lfs merge=lfs -text\n",
        )
        .unwrap();
        repo
    }

    fn ok(&self, args: &[&str]) -> String {
        testkit::git::git_ok(&self.work, &self.home, args)
    }
}

/// The milliseconds the server's request log gives requests of `method`
/// to paths that `path_is` likes, answered with `status`.
fn logged_ms(log: &str, method: &str, path_is: impl Fn(&str) -> bool, status: u16) -> Vec<f64> {
    log.lines()
        .filter(|line| line.contains(&format!("method={method} ")))
        .filter(|line| line.contains(&format!("status={status} ")))
        .filter(|line| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix("path="))
                .is_some_and(&path_is)
        })
        .filter_map(|line| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix("ms="))
                .and_then(|ms| ms.parse().ok())
        })
        .collect()
}

fn median_ms(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn lock_pairs(work: &Path, server: &testkit::ServeProcess, token: &str, pairs: usize) {
    let repo = Repo::new(&work.join("pairs"), &server.url, token);
    std::fs::write(repo.work.join("hero.psd"), b"8BPS layers").unwrap();
    // git lfs unlocks only a file with no uncommitted change.
    repo.ok(&["add", "."]);
    repo.ok(&["commit", "-qm", "hero"]);
    let (mut locks, mut unlocks) = (Vec::new(), Vec::new());
    for _ in 0..pairs {
        let started = Instant::now();
        repo.ok(&["lfs", "lock", "hero.psd"]);
        locks.push(started.elapsed());
        let started = Instant::now();
        repo.ok(&["lfs", "unlock", "hero.psd"]);
        unlocks.push(started.elapsed());
    }
    let log = server.log_text();
    let server_lock = median_ms(logged_ms(&log, "POST", |p| p == "/lfs/art/locks", 201));
    let server_unlock = median_ms(logged_ms(&log, "POST", |p| p.ends_with("/unlock"), 200));
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
    let (lock, unlock) = (median(locks), median(unlocks));
    let millis = |d: Duration| d.as_secs_f64() * 1e3;
    row(
        &format!("`git lfs lock`, whole command (median of {pairs})"),
        format!("{} (server {server_lock:.2} ms)", ms(lock)),
        "< 100 ms, server < 5 ms (hosted: 1.5-5.5 s)",
        value(millis(lock), "ms").and("the server's own time", server_lock, "ms"),
    );
    row(
        &format!("`git lfs unlock`, whole command (median of {pairs})"),
        format!("{} (server {server_unlock:.2} ms)", ms(unlock)),
        "< 100 ms, server < 5 ms",
        value(millis(unlock), "ms").and("the server's own time", server_unlock, "ms"),
    );
}

fn many_locks(work: &Path, server: &testkit::ServeProcess, token: &str, count: usize) {
    // Taken over HTTP as Git takes them: paths with no file yet, held.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let http = reqwest::Client::new();
        let url = format!("{}/lfs/art/locks", server.url);
        for n in 0..count {
            let answer = http
                .post(&url)
                .bearer_auth(token)
                .header("Content-Type", "application/vnd.git-lfs+json")
                .body(format!(r#"{{"path":"many/{n:05}.psd"}}"#))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 201);
        }
    });
    let repo = Repo::new(&work.join("many"), &server.url, token);
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let listed = repo.ok(&["lfs", "locks", "--json"]);
        times.push(started.elapsed());
        let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
        assert_eq!(listed.as_array().unwrap().len(), count);
    }
    let listed = median(times).as_secs_f64() * 1e3;
    row(
        &format!("`git lfs locks` with {count} locks (median of 5)"),
        format!("{listed:.0} ms"),
        "< 1 s",
        value(listed, "ms"),
    );
}

fn push(work: &Path, server: &testkit::ServeProcess, token: &str, bytes: u64) {
    let root = work.join("push");
    let repo = Repo::new(&root, &server.url, token);
    let origin = root.join("origin.git");
    let out = Command::new("git")
        .args(["init", "-q", "--bare", "--initial-branch=main"])
        .arg(&origin)
        .output()
        .unwrap();
    assert!(out.status.success());
    repo.ok(&["remote", "add", "origin", origin.to_str().unwrap()]);
    let big = repo.work.join("big.bin");
    common::make_big_file(&big, bytes);
    repo.ok(&["add", "."]);
    repo.ok(&["commit", "-qm", "big"]);

    // The baseline: the same bytes copied beside them, then written out.
    common::settle(&big);
    let started = Instant::now();
    let copy = root.join("copy.bin");
    let status = Command::new("cp").arg(&big).arg(&copy).status().unwrap();
    assert!(status.success());
    assert!(Command::new("sync").status().unwrap().success());
    let cp_sync = started.elapsed();
    std::fs::remove_file(&copy).unwrap();

    common::settle(&big);
    let started = Instant::now();
    repo.ok(&["push", "-q", "origin", "HEAD:main"]);
    let pushed = started.elapsed();
    let peak = server.peak_memory().unwrap_or(0);
    let s = |d: Duration| format!("{:.2} s", d.as_secs_f64());
    row(
        &format!("push of {} of LFS objects", common::size_label(bytes)),
        format!(
            "{} ({:.2}x `cp` + `sync`, {}), server peak {} MiB",
            s(pushed),
            pushed.as_secs_f64() / cp_sync.as_secs_f64(),
            s(cp_sync),
            peak >> 20
        ),
        "≤ 2x `cp` + `sync`, server < 64 MiB",
        value(pushed.as_secs_f64(), "s")
            .against(
                "`cp` + `sync` of the same bytes",
                cp_sync.as_secs_f64(),
                "s",
            )
            .and("server peak memory", (peak >> 20) as f64, "MiB"),
    );
}

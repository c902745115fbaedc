//! Issue 23: a change of several files (one check-out of them all, each file
//! staged, one commit) beside the same files checked out and in one by one,
//! in the same run, on the bundled backend and over HTTP.

use leasedesk::model::{
    ArtifactId, ChangeOutcome, ChangeRequest, CheckinResult, CheckoutRequest, CheckoutsRequest,
};
use leasedesk::{Backend, Bundled, Remote, Upload};

use super::*;

struct ChangeSizes {
    files: usize,
    rounds: usize,
}

/// Each file's size, in a quick run too.
const FILE_SIZE: usize = 1 << 20;

/// The medians of one backend's rounds, each split into its phases.
#[derive(Default)]
struct Times {
    /// Singles: the check-outs, the check-ins, the whole.
    out: Vec<Duration>,
    r#in: Vec<Duration>,
    singles: Vec<Duration>,
    /// The change: `check_out_many`, the stages, `commit_change`, the whole.
    many: Vec<Duration>,
    stage: Vec<Duration>,
    commit: Vec<Duration>,
    change: Vec<Duration>,
}

pub(crate) async fn run(work: &Path, quick: bool) {
    let sizes = if quick {
        ChangeSizes {
            files: 10,
            rounds: 2,
        }
    } else {
        ChangeSizes {
            files: 50,
            rounds: 7,
        }
    };
    let bundled = Bundled::open(&work.join("changes-bundled"))
        .unwrap()
        .acting_as("user:bench".parse().unwrap());
    let times = measure(&bundled, &work.join("changes-bundled-files"), &sizes).await;
    report("bundled", &times, &sizes);
    drop(bundled);

    let server = Server::start(&work.join("changes-http"));
    let remote = Remote::new(&server.url, &server.token).unwrap();
    let times = measure(&remote, &work.join("changes-http-files"), &sizes).await;
    report(
        "over HTTP (remote client, `leasedesk serve` on loopback)",
        &times,
        &sizes,
    );
    let mib = server.peak_memory() as f64 / 1048576.0;
    row(
        "server peak memory over those check-ins and changes",
        format!("{mib:.1} MiB"),
        "",
        value(mib, "MiB"),
    );
}

/// Imports `sizes.files` files, then runs the rounds: each checks in new
/// bytes for every file once one by one and once as a change, the two
/// taking turns at going first.
async fn measure(backend: &dyn Backend, files: &Path, sizes: &ChangeSizes) -> Times {
    std::fs::create_dir_all(files).unwrap();
    let mut artifacts = Vec::new();
    for n in 0..sizes.files {
        let path = files.join(format!("import-{n}.bin"));
        write_distinct(&path, FILE_SIZE, seed(0, 0, n));
        let repo_path = format!("changes/{n}.psd").parse().unwrap();
        let artifact = backend
            .import(&repo_path, Upload::file(&path))
            .await
            .unwrap();
        artifacts.push(artifact.id);
        std::fs::remove_file(&path).unwrap();
    }
    let mut times = Times::default();
    for round in 0..sizes.rounds {
        let singles_first = round % 2 == 0;
        for turn in 0..2 {
            let singles = (turn == 0) == singles_first;
            let sources: Vec<PathBuf> = (0..sizes.files)
                .map(|n| {
                    let path = files.join(format!("r{round}-{turn}-{n}.bin"));
                    write_distinct(&path, FILE_SIZE, seed(round + 1, turn + 1, n));
                    path
                })
                .collect();
            quiet();
            if singles {
                one_by_one(backend, &artifacts, &sources, &mut times).await;
            } else {
                as_change(backend, &artifacts, &sources, &mut times).await;
            }
            for source in sources {
                std::fs::remove_file(source).unwrap();
            }
        }
    }
    times
}

/// 50 single check-outs, then 50 single check-ins.
async fn one_by_one(
    backend: &dyn Backend,
    artifacts: &[ArtifactId],
    sources: &[PathBuf],
    times: &mut Times,
) {
    let started = Instant::now();
    let mut checkouts = Vec::new();
    for &artifact in artifacts {
        let checkout = backend
            .check_out(artifact, CheckoutRequest::default())
            .await
            .unwrap();
        checkouts.push(checkout.id);
    }
    let out = started.elapsed();
    for (checkout, source) in checkouts.into_iter().zip(sources) {
        let done = backend
            .check_in(checkout, Upload::file(source))
            .await
            .unwrap();
        assert!(matches!(done.result, Some(CheckinResult::Committed { .. })));
    }
    let whole = started.elapsed();
    times.out.push(out);
    times.r#in.push(whole - out);
    times.singles.push(whole);
}

/// One check-out of every file, each file staged, one commit.
async fn as_change(
    backend: &dyn Backend,
    artifacts: &[ArtifactId],
    sources: &[PathBuf],
    times: &mut Times,
) {
    let started = Instant::now();
    let checkouts = backend
        .check_out_many(CheckoutsRequest {
            artifact_ids: artifacts.to_vec(),
            ttl_seconds: None,
            note: None,
        })
        .await
        .unwrap();
    let many = started.elapsed();
    for (checkout, source) in checkouts.iter().zip(sources) {
        backend
            .stage(checkout.id, Upload::file(source))
            .await
            .unwrap();
    }
    let staged = started.elapsed();
    let change = backend
        .commit_change(ChangeRequest {
            checkouts: checkouts.iter().map(|c| c.id).collect(),
            message: Some("bench".into()),
        })
        .await
        .unwrap();
    let whole = started.elapsed();
    assert_eq!(change.outcome, ChangeOutcome::Committed);
    assert_eq!(change.files.len(), artifacts.len());
    times.many.push(many);
    times.stage.push(staged - many);
    times.commit.push(whole - staged);
    times.change.push(whole);
}

fn report(how: &str, times: &Times, sizes: &ChangeSizes) {
    let (n, mib, rounds) = (sizes.files, FILE_SIZE >> 20, sizes.rounds);
    let s = |d: Duration| format!("{:.3} s", d.as_secs_f64());
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let ratios: Vec<f64> = times
        .change
        .iter()
        .zip(&times.singles)
        .map(|(change, singles)| change.as_secs_f64() / singles.as_secs_f64())
        .collect();
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(0.0, f64::max);
    let (singles, change) = (median(times.singles.clone()), median(times.change.clone()));
    let singles_name = format!("{n} single check-outs, then {n} check-ins of new {mib} MiB files, {how}, median of {rounds}");
    row(
        &singles_name,
        format!(
            "{} (fastest {}): check-outs {}, check-ins {}",
            s(singles),
            s(*times.singles.iter().min().unwrap()),
            ms(median(times.out.clone())),
            s(median(times.r#in.clone())),
        ),
        "baseline",
        value(singles.as_secs_f64(), "s"),
    );
    row(
        &format!("a {n}-file check-out and a {n}-file change of new {mib} MiB files (check_out_many, {n} stages, commit_change), {how}, median of {rounds}"),
        format!(
            "**{} = {:.2}x the singles** (rounds {:.2}x–{:.2}x; fastest {}): check-out {}, stages {}, commit {}",
            s(change),
            change.as_secs_f64() / singles.as_secs_f64(),
            low,
            high,
            s(*times.change.iter().min().unwrap()),
            ms(median(times.many.clone())),
            s(median(times.stage.clone())),
            ms(median(times.commit.clone())),
        ),
        &format!("no slower than {n} singles"),
        value(change.as_secs_f64(), "s").against(&singles_name, singles.as_secs_f64(), "s"),
    );
}

/// Nothing left to write back from the files just written or the last round.
fn quiet() {
    if cfg!(unix) {
        assert!(Command::new("sync").status().unwrap().success());
    }
}

fn seed(round: usize, turn: usize, file: usize) -> u64 {
    0x9E37_79B9_7F4A_7C15 ^ ((round as u64) << 40 | (turn as u64) << 32 | file as u64)
}

/// `size` bytes of xorshift from `seed` (not 0): every file of the run distinct.
fn write_distinct(path: &Path, size: usize, seed: u64) {
    let mut bytes = vec![0u8; size];
    testkit::noise::Xorshift::new(seed).fill(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

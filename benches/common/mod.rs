//! What the benchmarks share: their flags, a report row, a big file, medians,
//! and the peak memory of a process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The flags `cargo xtask bench` passes to every bench: `--quick` (small
/// sizes, to check the bench itself works) and `--only PART`.
pub struct Flags {
    pub quick: bool,
    args: Vec<String>,
}

impl Flags {
    pub fn from_args() -> Self {
        let args: Vec<String> = std::env::args().collect();
        Self {
            quick: args.iter().any(|a| a == "--quick"),
            args,
        }
    }

    /// The flags, if the bench's one part `part` is to run (see [`Flags::runs`]).
    #[allow(dead_code)] // the lease and server benches run several parts
    pub fn for_part(part: &str) -> Option<Self> {
        Some(Self::from_args()).filter(|flags| flags.runs(part))
    }

    /// The value given after `flag`, if any.
    pub fn value(&self, flag: &str) -> Option<&str> {
        let at = self.args.iter().position(|a| a == flag)?;
        self.args.get(at + 1).map(String::as_str)
    }

    /// Whether `part` is measured: every part when no `--only` is given.
    pub fn runs(&self, part: &str) -> bool {
        self.value("--only").is_none_or(|only| only == part)
    }
}

/// The `leasedesk` binary `cargo xtask bench` built (release) and names.
pub fn bin() -> PathBuf {
    PathBuf::from(std::env::var("LEASEDESK_BIN").expect("run through cargo xtask bench"))
}

/// A real `leasedesk serve` on 127.0.0.1:0 over `cli`'s store, logging
/// warnings only, with the token of a new user.
pub struct Server {
    pub process: testkit::ServeProcess,
    pub url: String,
    pub token: String,
}

impl Server {
    pub fn on(cli: testkit::Cli) -> Self {
        use testkit::WithEnvironment;
        let token = cli.add_user("bench");
        let process = cli.serve().env("LEASEDESK_LOG", "warn").spawn();
        Self {
            url: process.url.clone(),
            process,
            token,
        }
    }
}

/// A fresh folder `name` for a bench's files, under cargo's temp folder for
/// benches (or `LEASEDESK_BENCH_TMP`, where a bench wants another disk).
pub fn work_dir(name: &str) -> PathBuf {
    let tmp = std::env::var_os("LEASEDESK_BENCH_TMP")
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from);
    let work = tmp.join(name);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    work
}

/// The head of the report's table: a figure, what was measured, what it is held to.
pub fn table_head() {
    println!("| figure | measured | baseline / target |");
    println!("|---|---|---|");
}

/// How long `cp SOURCE COPY` takes (the baseline of a copy); the copy is
/// deleted after.
pub fn timed_cp(source: &Path, copy: &Path) -> Duration {
    let started = std::time::Instant::now();
    let status = std::process::Command::new("cp")
        .arg(source)
        .arg(copy)
        .status()
        .unwrap();
    let took = started.elapsed();
    assert!(status.success(), "cp: {status}");
    std::fs::remove_file(copy).unwrap();
    took
}

/// How long `cp SOURCE COPY` and then `sync COPY` take together: a copy made
/// durable, the floor of a check-in that keeps its file (the copy is
/// deleted after).
#[allow(dead_code)] // the server bench's
pub fn timed_cp_sync(source: &Path, copy: &Path) -> Duration {
    let started = std::time::Instant::now();
    for (program, args) in [("cp", vec![source, copy]), ("sync", vec![copy])] {
        let status = std::process::Command::new(program)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "{program}: {status}");
    }
    let took = started.elapsed();
    std::fs::remove_file(copy).unwrap();
    took
}

pub fn row(figure: &str, measured: String, target: &str) {
    println!("| {figure} | {measured} | {target} |");
    std::io::stdout().flush().unwrap();
}

/// A file of `size` bytes that does not compress (xorshift).
pub fn make_big_file(path: &Path, size: u64) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut noise = testkit::noise::Xorshift::new(0x9E37_79B9_7F4A_7C15);
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..size / block.len() as u64 {
        noise.fill(&mut block);
        file.write_all(&block).unwrap();
    }
}

pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The most memory process `pid` has held so far (VmHWM), in bytes; 0 where
/// there is no /proc (Windows, where `pid` is not Linux's even under Wine).
pub fn peak_memory(pid: u32) -> u64 {
    testkit::peak_memory(pid).unwrap_or(0)
}

/// "1 GiB", or "64 MiB" for the quick sizes.
pub fn size_label(bytes: u64) -> String {
    if bytes == 1 << 30 {
        "1 GiB".to_owned()
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

/// Lets a timed run start with nothing left to write back and `source` in the
/// page cache, so one run's writeback does not slow the next. Windows has no
/// `sync`: there it only reads `source`.
pub fn settle(source: &Path) {
    if cfg!(unix) {
        assert!(std::process::Command::new("sync")
            .status()
            .unwrap()
            .success());
    }
    std::io::copy(
        &mut std::fs::File::open(source).unwrap(),
        &mut std::io::sink(),
    )
    .unwrap();
}

/// A Python with psd-tools: the tests' (`target/test-python`, from the same
/// requirements), made by testkit if it is not there yet.
#[allow(dead_code)] // the preview and link benches'
pub fn bench_python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    testkit::python::venv(
        &root.join("tests/fixtures/requirements.txt"),
        &root.join("target/test-python"),
    )
    .join("bin/python")
}

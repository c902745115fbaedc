//! `cargo xtask bench`, part `preview`, in three rows of figures:
//!
//! - a 512 px preview of a 1 GiB PSB with a composite (16000×16000 RGB with
//!   its transparency, 8-bit, RLE, noise so RLE cannot shrink it), read by
//!   our reader and by psd-tools (`PSDImage.open(f).topil()`, then Pillow's
//!   `thumbnail`);
//! - the same of a 1 GiB PSB saved without its composite (8000×8000, 20
//!   layers of about 3650×3650 RGBA in six blend modes, "maximize
//!   compatibility" off), ours composited from its layers, psd-tools'
//!   `composite(force=True)`;
//! - what colour management costs: 8000×8000 RGB and CMYK documents with and
//!   without an embedded profile (Debian's icc-profiles-free and
//!   ghostscript's SWOP profile, when installed).
//!
//! Part `psd-corpus` (`corpus.rs`) compares our previews with psd-tools'
//! on psd-tools' own corpus of real documents, when `LEASEDESK_PSD_CORPUS`
//! names it (its `tests/psd_files`); without it the part says it is skipped.
//!
//! Every file of the first three rows is written by our own small writer.
//! Each reader runs in its own process, which reports its time and peak
//! memory, and its CPU time (on a loaded machine the wall time is mostly
//! waiting for a core). `--quick` uses small files; `--only preview` runs those three rows alone,
//! `--only psd-corpus` the corpus alone (any other `--only` skips both);
//! `--without-baseline` skips psd-tools in the first two rows (minutes, and
//! 10 GiB or more here).

#[path = "common/mod.rs"]
#[allow(dead_code)] // the big-file helpers are the lease bench's
mod common;
#[path = "preview/corpus.rs"]
mod corpus;
#[path = "common/figures.rs"]
mod figures;
#[path = "preview/psd_writer.rs"]
mod psd_writer;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{median, settle};
use figures::{row, value};
use psd_writer::{write_flat, write_layered_psb, write_psb};

const SIZE: u32 = 512;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--render-one") {
        render_one(Path::new(&args[i + 1]), Path::new(&args[i + 2]));
        return;
    }
    let flags = common::Flags::from_args();
    let (preview, psd_corpus) = (flags.runs("preview"), flags.runs("psd-corpus"));
    if !preview && !psd_corpus {
        return;
    }
    common::table_head();
    if preview {
        let baseline = !args.iter().any(|a| a == "--without-baseline");
        let work = common::work_dir("bench-preview");
        composite(flags.quick, baseline, &work);
        layers(flags.quick, baseline, &work);
        colour_management(flags.quick, &work);
    }
    if psd_corpus {
        corpus::measure();
    }
}

fn composite(quick: bool, baseline: bool, work: &Path) {
    let (side, repeats) = if quick { (4000, 3) } else { (16000, 5) };
    let psb = work.join("big.psb");
    let size = written(&psb, |psb| write_psb(psb, side, side));
    let what = format!("{size} PSB ({side}×{side} RGB + transparency, 8-bit, RLE)");
    measure_psb(
        &psb,
        repeats,
        &what,
        "`preview::psd::render`",
        baseline.then_some(PsdTools {
            script: PSD_TOOLS_COMPOSITE,
            how: "`PSDImage.open(f).topil()`, Pillow `thumbnail`",
            difference: "box filter vs Pillow's reduce + bicubic",
        }),
    );
}

fn layers(quick: bool, baseline: bool, work: &Path) {
    let (side, layer_side, repeats) = if quick {
        (2000, 900, 3)
    } else {
        (8000, 3650, 5)
    };
    let psb = work.join("layers.psb");
    let size = written(&psb, |psb| write_layered_psb(psb, side, 20, layer_side));
    let what = format!(
        "{size} PSB without a composite ({side}×{side}, 20 layers of {layer_side}×{layer_side} RGBA, 8-bit, RLE, six blend modes)"
    );
    measure_psb(
        &psb,
        repeats,
        &what,
        "composited from its layers",
        baseline.then_some(PsdTools {
            script: PSD_TOOLS_LAYERS,
            how: "`PSDImage.open(f).composite(force=True)`, Pillow `thumbnail`",
            difference: "ours blended at the preview's scale, psd-tools' at the document's, then shrunk: pixel noise in five non-normal modes is the worst case for that",
        }),
    );
}

/// How psd-tools makes the same preview: its `script`, described (`how`),
/// and why the two may differ (`difference`).
struct PsdTools {
    script: &'static str,
    how: &'static str,
    difference: &'static str,
}

/// Our preview of `psb` (`what`, made `how`), psd-tools' beside it if given
/// and the two compared; then `psb` is deleted.
fn measure_psb(psb: &Path, repeats: usize, what: &str, how: &str, baseline: Option<PsdTools>) {
    let ours = ours(psb, repeats, what, how);
    if let Some(psd_tools) = baseline {
        against_psd_tools(&ours, &psd_tools);
    }
    std::fs::remove_file(psb).unwrap();
}

/// Previews of RGB and CMYK documents with and without their profile.
fn colour_management(quick: bool, work: &Path) {
    let (side, repeats) = if quick { (2000, 3) } else { (8000, 5) };
    let profiles = [
        (3, "RGB", None, "untagged: shown as sRGB"),
        (
            3,
            "RGB",
            Some("/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"),
            "with an Adobe RGB (1998) profile",
        ),
        (4, "CMYK", None, "untagged: the SWOP-like default"),
        (
            4,
            "CMYK",
            Some("/usr/share/color/icc/ghostscript/default_cmyk.icc"),
            "with ghostscript's SWOP profile (a 33-point LUT)",
        ),
    ];
    for (mode, name, profile, how) in profiles {
        let icc = match profile.map(std::fs::read) {
            None => None,
            Some(Ok(icc)) => Some(icc),
            Some(Err(e)) => {
                common::row(&format!("{name} {how}"), format!("not measured: {e}"), "");
                continue;
            }
        };
        let psd = work.join(format!("{name}-{}.psd", icc.is_some()));
        write_flat(&psd, side, mode, icc.as_deref());
        let what = format!("{side}×{side} {name} PSD (8-bit, RLE), {how}");
        ours(&psd, repeats, &what, "`preview::psd::render`");
        std::fs::remove_file(&psd).unwrap();
    }
}

/// Writes `file` by `write` and answers its size in GiB ("1.00 GiB").
fn written(file: &Path, write: impl FnOnce(&Path)) -> String {
    let started = Instant::now();
    write(file);
    let len = std::fs::metadata(file).unwrap().len();
    eprintln!(
        "wrote {} ({} MiB) in {:.1?}",
        file.display(),
        len >> 20,
        started.elapsed()
    );
    format!("{:.2} GiB", len as f64 / (1u64 << 30) as f64)
}

/// Our preview's figures: rows for its time, CPU time and peak memory.
struct Measured {
    file: PathBuf,
    time: Duration,
    png: PathBuf,
}

fn ours(file: &Path, repeats: usize, what: &str, how: &str) -> Measured {
    let png = file.with_extension("ours.png");
    let (mut times, mut cpu, mut peak) = (vec![], vec![], 0);
    for _ in 0..repeats {
        settle(file);
        let report = report_of(
            Command::new(std::env::current_exe().unwrap())
                .arg("--render-one")
                .arg(file)
                .arg(&png),
        );
        let (elapsed, rss) = parse_report(&report);
        times.push(elapsed);
        cpu.push(parse_cpu(&report));
        peak = peak.max(rss);
    }
    let fastest = *times.iter().min().unwrap();
    let time = median(times);
    let (cpu, mib) = (median(cpu), peak as f64 / (1 << 20) as f64);
    row(
        &format!("**{SIZE} px preview of a {what}**, {how} (release, one process each)"),
        format!(
            "**{:.2} s** ({:.2} s fastest), median of {repeats}; CPU {:.2} s; peak **{:.1} MiB**",
            secs(time),
            secs(fastest),
            secs(cpu),
            mib
        ),
        "at most 1 s, 256 MiB",
        value(secs(time), "s")
            .and("fastest", secs(fastest), "s")
            .and("CPU", secs(cpu), "s")
            .and("peak memory", mib, "MiB"),
    );
    Measured {
        file: file.to_path_buf(),
        time,
        png,
    }
}

/// psd-tools' preview of the file `ours` measured, and the two compared.
fn against_psd_tools(ours: &Measured, psd_tools: &PsdTools) {
    let theirs = run_psd_tools(psd_tools.script, &ours.file, psd_tools.how);
    compare(ours, &theirs, psd_tools.difference);
}

/// psd-tools' preview of `file` by `script`, in the same run.
fn run_psd_tools(script: &str, file: &Path, how: &str) -> Measured {
    let python = common::bench_python();
    let png = file.with_extension("theirs.png");
    settle(file);
    let report = report_of(
        Command::new(&python)
            // psd-tools 1.26 refuses a decode over 4 GiB by default; these need more.
            .env("PSD_TOOLS_MAX_ALLOC_BYTES", "unlimited")
            .arg("-c")
            .arg(script)
            .arg(file)
            .arg(&png)
            .arg(SIZE.to_string()),
    );
    let (time, peak) = parse_report(&report);
    let mib = peak as f64 / (1 << 20) as f64;
    row(
        &format!("the same preview by psd-tools 1.26 ({how})"),
        format!("{:.2} s, peak {mib:.0} MiB", secs(time)),
        "baseline",
        value(secs(time), "s").and("peak memory", mib, "MiB"),
    );
    Measured {
        file: file.to_path_buf(),
        time,
        png,
    }
}

fn compare(ours: &Measured, theirs: &Measured, how: &str) {
    let speed_up = secs(theirs.time) / secs(ours.time);
    // Named by the file: the composite's and the layers' rows are alike.
    let file = ours.file.file_name().unwrap().to_string_lossy();
    row(
        &format!("**speed-up over psd-tools** ({file})"),
        format!("**{speed_up:.1}x**"),
        "at least 5x",
        value(speed_up, "x"),
    );
    let (a, b) = (
        image::open(&ours.png).unwrap().to_rgba8(),
        image::open(&theirs.png).unwrap().to_rgba8(),
    );
    assert_eq!(
        a.dimensions(),
        b.dimensions(),
        "both previews have one size"
    );
    let difference: u64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| x.abs_diff(*y) as u64)
        .sum();
    let mean = difference as f64 / a.as_raw().len() as f64;
    row(
        &format!("mean difference between the two previews of {file} ({how})"),
        format!("{mean:.2} levels of 255"),
        "the same picture",
        value(mean, "levels of 255"),
    );
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Runs a reader's process, which must succeed, and answers its report (stdout).
fn report_of(command: &mut Command) -> Vec<u8> {
    testkit::tool::run_ok(command, "a reader").stdout
}

/// The child's report: "SECONDS PEAK_BYTES".
fn parse_report(stdout: &[u8]) -> (Duration, u64) {
    let text = String::from_utf8_lossy(stdout);
    let mut words = text.split_whitespace();
    let seconds: f64 = words.next().unwrap().parse().unwrap();
    let peak: u64 = words.next().unwrap().parse().unwrap();
    (Duration::from_secs_f64(seconds), peak)
}

/// The third word of our child's report: its CPU seconds.
fn parse_cpu(stdout: &[u8]) -> Duration {
    let text = String::from_utf8_lossy(stdout);
    Duration::from_secs_f64(text.split_whitespace().nth(2).unwrap().parse().unwrap())
}

/// User + system time of this process so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// In a process of its own: renders `psb`, saves the PNG, prints the report.
fn render_one(psb: &Path, png: &Path) {
    let started = Instant::now();
    let image = leasedesk::preview::render_file(psb, SIZE, &leasedesk::preview::Limits::standard())
        .unwrap();
    let elapsed = started.elapsed();
    let cpu = cpu_time();
    image.save(png).unwrap();
    println!(
        "{} {} {}",
        elapsed.as_secs_f64(),
        common::peak_memory(std::process::id()),
        cpu.as_secs_f64()
    );
}

const PSD_TOOLS_COMPOSITE: &str = r#"
import resource, sys, time
from psd_tools import PSDImage
started = time.perf_counter()
# Its default budget (4 GiB) refuses this file: it needs about 12 GB.
image = PSDImage.open(sys.argv[1], max_alloc_bytes='unlimited').topil()
image.thumbnail((int(sys.argv[3]), int(sys.argv[3])))
elapsed = time.perf_counter() - started
image.convert('RGBA').save(sys.argv[2])
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"#;

const PSD_TOOLS_LAYERS: &str = r#"
import resource, sys, time
from psd_tools import PSDImage
started = time.perf_counter()
image = PSDImage.open(sys.argv[1], max_alloc_bytes='unlimited').composite(force=True)
image.thumbnail((int(sys.argv[3]), int(sys.argv[3])))
elapsed = time.perf_counter() - started
image.convert('RGBA').save(sys.argv[2])
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"#;

//! `cargo xtask bench`, part `preview`: a 512 px preview of a 1 GiB PSB
//! (16000×16000 RGB with transparency, 8-bit, RLE, noise so RLE cannot shrink
//! it), written by our own small writer, read by our reader and by psd-tools
//! (`PSDImage.open(f).topil()`, then Pillow's `thumbnail`) in the same run.
//! Each reader runs in its own process, which reports its time and peak
//! memory, and its CPU time (on a loaded machine the wall time is mostly
//! waiting for a core). `--quick` uses a 4000×4000 file; `--only preview`
//! runs this part alone (any other `--only` skips it); `--without-baseline`
//! skips psd-tools (about 400 s and 10 GiB here).

#[path = "common/mod.rs"]
#[allow(dead_code)] // the big-file helpers are the lease bench's
mod common;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{median, row, settle};

const SIZE: u32 = 512;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--render-one") {
        render_one(Path::new(&args[i + 1]), Path::new(&args[i + 2]));
        return;
    }
    let flags = common::Flags::from_args();
    if !flags.runs("preview") {
        return;
    }
    let quick = flags.quick;
    let (side, repeats) = if quick { (4000, 3) } else { (16000, 5) };
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-preview");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();

    let psb = work.join("big.psb");
    let started = Instant::now();
    write_psb(&psb, side, side);
    let file_len = std::fs::metadata(&psb).unwrap().len();
    eprintln!(
        "wrote {} ({} MiB) in {:.1?}",
        psb.display(),
        file_len >> 20,
        started.elapsed()
    );
    let what = format!(
        "{:.2} GiB PSB ({side}×{side} RGB + transparency, 8-bit, RLE)",
        file_len as f64 / (1u64 << 30) as f64
    );

    println!("| figure | measured | baseline / target |");
    println!("|---|---|---|");
    let ours_png = work.join("ours.png");
    let (mut times, mut cpu, mut peak) = (vec![], vec![], 0);
    for _ in 0..repeats {
        settle(&psb);
        let out = Command::new(std::env::current_exe().unwrap())
            .arg("--render-one")
            .arg(&psb)
            .arg(&ours_png)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (elapsed, rss) = parse_report(&out.stdout);
        times.push(elapsed);
        cpu.push(parse_cpu(&out.stdout));
        peak = peak.max(rss);
    }
    let fastest = *times.iter().min().unwrap();
    let ours = median(times);
    row(
        &format!(
            "**{SIZE} px preview of a {what}**, `preview::psd::render` (release, one process each)"
        ),
        format!(
            "**{:.2} s** ({:.2} s), median of {repeats}",
            secs(ours),
            secs(fastest)
        ),
        "at most 2 s",
    );
    row(
        "its CPU time (user + system)",
        format!("{:.2} s, median", secs(median(cpu))),
        "",
    );
    row(
        "peak memory (VmHWM) of that process",
        format!("**{:.1} MiB**", peak as f64 / (1 << 20) as f64),
        "at most 256 MiB",
    );

    if args.iter().any(|a| a == "--without-baseline") {
        return;
    }
    let python = bench_python();
    let theirs_png = work.join("theirs.png");
    settle(&psb);
    let out = Command::new(&python)
        // psd-tools 1.26 refuses a decode over 4 GiB by default; this one
        // needs about 12 GB (16000×16000×4 as float planes).
        .env("PSD_TOOLS_MAX_ALLOC_BYTES", "unlimited")
        .arg("-c")
        .arg(PSD_TOOLS)
        .arg(&psb)
        .arg(&theirs_png)
        .arg(SIZE.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "psd-tools: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (theirs, their_peak) = parse_report(&out.stdout);
    row(
        "the same preview by psd-tools 1.26 (`PSDImage.open(f).topil()`, Pillow `thumbnail`)",
        format!(
            "{:.2} s, peak {:.0} MiB",
            secs(theirs),
            their_peak as f64 / (1 << 20) as f64
        ),
        "baseline",
    );
    row(
        "**speed-up over psd-tools**",
        format!("**{:.1}x**", secs(theirs) / secs(ours)),
        "at least 5x",
    );
    let (a, b) = (
        image::open(&ours_png).unwrap().to_rgba8(),
        image::open(&theirs_png).unwrap().to_rgba8(),
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
    row(
        "mean difference between the two previews (box filter vs Pillow's reduce + bicubic)",
        format!(
            "{:.2} levels of 255",
            difference as f64 / a.as_raw().len() as f64
        ),
        "the same picture",
    );
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
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

const PSD_TOOLS: &str = r#"
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

/// A Python with psd-tools: the tests' (target/test-python) if made, or one
/// made here from the same requirements.
fn bench_python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let requirements = root.join("tests/fixtures/requirements.txt");
    let wanted = std::fs::read_to_string(&requirements).unwrap();
    for venv in ["target/test-python", "target/bench-python"] {
        let venv = root.join(venv);
        if std::fs::read_to_string(venv.join("installed.txt")).ok() == Some(wanted.clone()) {
            return venv.join("bin/python");
        }
    }
    let venv = root.join("target/bench-python");
    let run = |cmd: &mut Command| assert!(cmd.status().unwrap().success(), "{cmd:?} failed");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements));
    std::fs::write(venv.join("installed.txt"), wanted).unwrap();
    venv.join("bin/python")
}

/// Writes a PSB of `width`×`height` RGB with transparency, 8-bit, RLE, every
/// channel noise (xorshift), with no layers and no resources.
fn write_psb(path: &Path, width: u32, height: u32) {
    const CHANNELS: u16 = 4;
    let mut file = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(path).unwrap());
    file.write_all(b"8BPS").unwrap();
    file.write_all(&2u16.to_be_bytes()).unwrap();
    file.write_all(&[0; 6]).unwrap();
    file.write_all(&CHANNELS.to_be_bytes()).unwrap();
    file.write_all(&height.to_be_bytes()).unwrap();
    file.write_all(&width.to_be_bytes()).unwrap();
    file.write_all(&8u16.to_be_bytes()).unwrap();
    file.write_all(&3u16.to_be_bytes()).unwrap(); // RGB
    file.write_all(&0u32.to_be_bytes()).unwrap(); // colour mode data
    file.write_all(&0u32.to_be_bytes()).unwrap(); // image resources
    file.write_all(&0u64.to_be_bytes()).unwrap(); // layer and mask information (PSB: 8 bytes)
    file.write_all(&1u16.to_be_bytes()).unwrap(); // RLE
    let table_at = file.stream_position().unwrap();
    let rows = CHANNELS as usize * height as usize;
    file.write_all(&vec![0u8; rows * 4]).unwrap();
    let mut counts = Vec::with_capacity(rows);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut pixels = vec![0u8; width as usize];
    let mut packed = Vec::with_capacity(width as usize * 2);
    for channel in 0..CHANNELS {
        for _ in 0..height {
            for word in pixels.chunks_mut(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                word.copy_from_slice(&state.to_le_bytes()[..word.len()]);
            }
            if channel == 3 {
                // Transparency mostly opaque, noise in its low bits.
                for p in &mut pixels {
                    *p |= 0xf0;
                }
            }
            packed.clear();
            pack_bits(&pixels, &mut packed);
            counts.push(packed.len() as u32);
            file.write_all(&packed).unwrap();
        }
    }
    file.seek(SeekFrom::Start(table_at)).unwrap();
    for count in counts {
        file.write_all(&count.to_be_bytes()).unwrap();
    }
    file.flush().unwrap();
}

/// PackBits: runs of 3 to 128 equal bytes, literals of up to 128 otherwise.
fn pack_bits(row: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    let mut literal_start = 0;
    let flush_literal = |out: &mut Vec<u8>, from: usize, to: usize| {
        for chunk in row[from..to].chunks(128) {
            out.push((chunk.len() - 1) as u8);
            out.extend_from_slice(chunk);
        }
    };
    while i < row.len() {
        let mut run = 1;
        while i + run < row.len() && run < 128 && row[i + run] == row[i] {
            run += 1;
        }
        if run >= 3 {
            flush_literal(out, literal_start, i);
            out.push((257 - run) as u8);
            out.push(row[i]);
            i += run;
            literal_start = i;
        } else {
            i += run;
        }
    }
    flush_literal(out, literal_start, row.len());
}

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
//! Every file is written by our own small writer. Each reader runs in its
//! own process, which reports its time and peak memory, and its CPU time (on
//! a loaded machine the wall time is mostly waiting for a core). `--quick`
//! uses small files; `--only preview` runs this bench alone (any other
//! `--only` skips it); `--without-baseline` skips psd-tools (minutes, and
//! 10 GiB or more here).

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
    let baseline = !args.iter().any(|a| a == "--without-baseline");
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-preview");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    println!("| figure | measured | baseline / target |");
    println!("|---|---|---|");
    composite(flags.quick, baseline, &work);
    layers(flags.quick, baseline, &work);
    colour_management(flags.quick, &work);
}

fn composite(quick: bool, baseline: bool, work: &Path) {
    let (side, repeats) = if quick { (4000, 3) } else { (16000, 5) };
    let psb = work.join("big.psb");
    let started = Instant::now();
    write_psb(&psb, side, side);
    let what = format!(
        "{} PSB ({side}×{side} RGB + transparency, 8-bit, RLE)",
        gib(&psb, started)
    );
    let ours = ours(&psb, repeats, &what, "`preview::psd::render`");
    if baseline {
        against_psd_tools(
            &ours,
            PSD_TOOLS_COMPOSITE,
            "`PSDImage.open(f).topil()`, Pillow `thumbnail`",
            "box filter vs Pillow's reduce + bicubic",
        );
    }
    std::fs::remove_file(&psb).unwrap();
}

fn layers(quick: bool, baseline: bool, work: &Path) {
    let (side, layer_side, repeats) = if quick {
        (2000, 900, 3)
    } else {
        (8000, 3650, 5)
    };
    let psb = work.join("layers.psb");
    let started = Instant::now();
    write_layered_psb(&psb, side, 20, layer_side);
    let what = format!(
        "{} PSB without a composite ({side}×{side}, 20 layers of {layer_side}×{layer_side} RGBA, 8-bit, RLE, six blend modes)",
        gib(&psb, started)
    );
    let ours = ours(&psb, repeats, &what, "composited from its layers");
    if baseline {
        against_psd_tools(
            &ours,
            PSD_TOOLS_LAYERS,
            "`PSDImage.open(f).composite(force=True)`, Pillow `thumbnail`",
            "ours blended at the preview's scale, psd-tools' at the document's, then shrunk: pixel noise in five non-normal modes is the worst case for that",
        );
    }
    std::fs::remove_file(&psb).unwrap();
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
                row(&format!("{name} {how}"), format!("not measured: {e}"), "");
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

fn gib(file: &Path, started: Instant) -> String {
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
        let out = Command::new(std::env::current_exe().unwrap())
            .arg("--render-one")
            .arg(file)
            .arg(&png)
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
    let time = median(times);
    row(
        &format!("**{SIZE} px preview of a {what}**, {how} (release, one process each)"),
        format!(
            "**{:.2} s** ({:.2} s fastest), median of {repeats}; CPU {:.2} s; peak **{:.1} MiB**",
            secs(time),
            secs(fastest),
            secs(median(cpu)),
            peak as f64 / (1 << 20) as f64
        ),
        "at most 1 s, 256 MiB",
    );
    Measured {
        file: file.to_path_buf(),
        time,
        png,
    }
}

/// psd-tools' preview of the file `ours` measured, by `script` (`how`), and
/// the two compared (`difference` says why they may differ).
fn against_psd_tools(ours: &Measured, script: &str, how: &str, difference: &str) {
    let theirs = psd_tools(script, &ours.file, how);
    compare(ours, &theirs, difference);
}

/// psd-tools' preview of `file` by `script`, in the same run.
fn psd_tools(script: &str, file: &Path, how: &str) -> Measured {
    let python = bench_python();
    let png = file.with_extension("theirs.png");
    settle(file);
    let out = Command::new(&python)
        // psd-tools 1.26 refuses a decode over 4 GiB by default; these need more.
        .env("PSD_TOOLS_MAX_ALLOC_BYTES", "unlimited")
        .arg("-c")
        .arg(script)
        .arg(file)
        .arg(&png)
        .arg(SIZE.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "psd-tools: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (time, peak) = parse_report(&out.stdout);
    row(
        &format!("the same preview by psd-tools 1.26 ({how})"),
        format!(
            "{:.2} s, peak {:.0} MiB",
            secs(time),
            peak as f64 / (1 << 20) as f64
        ),
        "baseline",
    );
    Measured {
        file: file.to_path_buf(),
        time,
        png,
    }
}

fn compare(ours: &Measured, theirs: &Measured, how: &str) {
    row(
        "**speed-up over psd-tools**",
        format!("**{:.1}x**", secs(theirs.time) / secs(ours.time)),
        "at least 5x",
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
    row(
        &format!("mean difference between the two previews ({how})"),
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

/// Rows of noise (xorshift), so RLE cannot shrink them.
struct Noise(u64);

impl Noise {
    fn fill(&mut self, row: &mut [u8]) {
        for word in row.chunks_mut(8) {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            word.copy_from_slice(&self.0.to_le_bytes()[..word.len()]);
        }
    }
}

/// The file's header: version 2 (PSB) or 1, channels, size, 8-bit, `mode`.
fn header(file: &mut impl Write, version: u16, channels: u16, side: u32, mode: u16) {
    file.write_all(b"8BPS").unwrap();
    file.write_all(&version.to_be_bytes()).unwrap();
    file.write_all(&[0; 6]).unwrap();
    file.write_all(&channels.to_be_bytes()).unwrap();
    file.write_all(&side.to_be_bytes()).unwrap();
    file.write_all(&side.to_be_bytes()).unwrap();
    file.write_all(&8u16.to_be_bytes()).unwrap();
    file.write_all(&mode.to_be_bytes()).unwrap();
    file.write_all(&0u32.to_be_bytes()).unwrap(); // colour mode data
}

/// One image resource block.
fn resource(id: u16, data: &[u8]) -> Vec<u8> {
    let mut block = b"8BIM".to_vec();
    block.extend(id.to_be_bytes());
    block.extend([0, 0]); // an empty name, padded
    block.extend((data.len() as u32).to_be_bytes());
    block.extend(data);
    if data.len() % 2 == 1 {
        block.push(0);
    }
    block
}

/// `channels` channels of `height` rows of `width`, RLE, every row from
/// `row_of(channel, row)`: the row lengths (`count_bytes` each) then the
/// rows, written at the file's position. Returns the bytes written.
fn rle_channels(
    file: &mut (impl Write + Seek),
    channels: usize,
    width: u32,
    height: u32,
    count_bytes: usize,
    per_channel_table: bool,
    mut row_of: impl FnMut(usize, &mut [u8]),
) -> Vec<u64> {
    let mut written = Vec::with_capacity(channels);
    let (mut pixels, mut packed) = (
        vec![0u8; width as usize],
        Vec::with_capacity(width as usize * 2),
    );
    // A composite keeps one table for every channel; a layer one per channel.
    let mut table_at = file.stream_position().unwrap();
    if !per_channel_table {
        file.write_all(&vec![0u8; channels * height as usize * count_bytes])
            .unwrap();
    }
    let mut all_counts = Vec::new();
    for channel in 0..channels {
        let start = file.stream_position().unwrap();
        if per_channel_table {
            table_at = start;
            file.write_all(&vec![0u8; height as usize * count_bytes])
                .unwrap();
        }
        let mut counts = Vec::with_capacity(height as usize);
        for _ in 0..height {
            row_of(channel, &mut pixels);
            packed.clear();
            pack_bits(&pixels, &mut packed);
            counts.push(packed.len() as u32);
            file.write_all(&packed).unwrap();
        }
        let end = file.stream_position().unwrap();
        if per_channel_table {
            write_at(file, table_at, &table(&counts, count_bytes));
        } else {
            all_counts.extend(counts);
        }
        written.push(end - start);
    }
    if !per_channel_table {
        write_at(file, table_at, &table(&all_counts, count_bytes));
    }
    written
}

/// Row lengths of `count_bytes` each.
fn table(counts: &[u32], count_bytes: usize) -> Vec<u8> {
    counts
        .iter()
        .flat_map(|count| count.to_be_bytes()[4 - count_bytes..].to_vec())
        .collect()
}

/// Writes `bytes` over what was written at `at`, and goes back to the end.
fn write_at(file: &mut (impl Write + Seek), at: u64, bytes: &[u8]) {
    let end = file.stream_position().unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(bytes).unwrap();
    file.seek(SeekFrom::Start(end)).unwrap();
}

/// The image resources section: its length, then `resources`.
fn write_resources(file: &mut impl Write, resources: &[u8]) {
    file.write_all(&(resources.len() as u32).to_be_bytes())
        .unwrap();
    file.write_all(resources).unwrap();
}

/// Writes a PSB of `width`×`height` RGB with transparency, 8-bit, RLE, every
/// channel noise, no layers; a "merged transparency" block says the fourth
/// channel is the composite's transparency.
fn write_psb(path: &Path, width: u32, height: u32) {
    assert_eq!(width, height);
    let mut file = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(path).unwrap());
    header(&mut file, 2, 4, width, 3);
    file.write_all(&0u32.to_be_bytes()).unwrap(); // image resources
                                                  // Layer and mask information (PSB: 8-byte lengths): no layers, no
                                                  // global mask, one tagged block `Mtrn` of no bytes.
    file.write_all(&28u64.to_be_bytes()).unwrap();
    file.write_all(&0u64.to_be_bytes()).unwrap();
    file.write_all(&0u32.to_be_bytes()).unwrap();
    file.write_all(b"8BIMMtrn").unwrap();
    file.write_all(&0u64.to_be_bytes()).unwrap();
    file.write_all(&1u16.to_be_bytes()).unwrap(); // RLE
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    rle_channels(&mut file, 4, width, height, 4, false, |channel, row| {
        noise.fill(row);
        if channel == 3 {
            // Transparency mostly opaque, noise in its low bits.
            row.iter_mut().for_each(|p| *p |= 0xf0);
        }
    });
    file.flush().unwrap();
}

/// Version info (resource 1057) saying the composite is not the real one:
/// "maximize compatibility" off.
fn without_composite() -> Vec<u8> {
    let unicode = |text: &str| {
        let mut bytes = (text.len() as u32).to_be_bytes().to_vec();
        text.encode_utf16()
            .for_each(|u| bytes.extend(u.to_be_bytes()));
        bytes
    };
    let mut info = 1u32.to_be_bytes().to_vec();
    info.push(0);
    info.extend(unicode("Adobe Photoshop"));
    info.extend(unicode("Adobe Photoshop 2026"));
    info.extend(1u32.to_be_bytes());
    resource(1057, &info)
}

/// Writes a PSB of `side`×`side` RGB saved without its composite (a white
/// one stands in, as Photoshop writes), with `count` layers of
/// `layer_side`² RGBA noise, spread over the canvas, in six blend modes.
fn write_layered_psb(path: &Path, side: u32, count: u16, layer_side: u32) {
    let mut file = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(path).unwrap());
    header(&mut file, 2, 3, side, 3);
    write_resources(&mut file, &without_composite());
    let section_at = file.stream_position().unwrap();
    file.write_all(&[0; 16]).unwrap(); // the section's and the layer info's lengths
    file.write_all(&(count as i16).to_be_bytes()).unwrap();
    let modes: [&[u8; 4]; 6] = [b"norm", b"mul ", b"scrn", b"over", b"dark", b"lite"];
    let mut length_at = Vec::new();
    let place = |i: u32, step: u32| (i * step) % (side - layer_side);
    for i in 0..count as u32 {
        let (top, left) = (place(i, 379), place(i, 613));
        for v in [top, left, top + layer_side, left + layer_side] {
            file.write_all(&v.to_be_bytes()).unwrap();
        }
        file.write_all(&4u16.to_be_bytes()).unwrap();
        let mut at = Vec::new();
        for id in [-1i16, 0, 1, 2] {
            file.write_all(&id.to_be_bytes()).unwrap();
            at.push(file.stream_position().unwrap());
            file.write_all(&0u64.to_be_bytes()).unwrap();
        }
        length_at.push(at);
        file.write_all(b"8BIM").unwrap();
        file.write_all(modes[i as usize % modes.len()]).unwrap();
        let opacity = if i == 0 {
            255
        } else {
            255 - (i * 7 % 128) as u8
        };
        file.write_all(&[opacity, 0, 0, 0]).unwrap();
        // Extra data: no mask, no blending ranges, an empty name padded to 4.
        file.write_all(&12u32.to_be_bytes()).unwrap();
        file.write_all(&[0; 12]).unwrap();
    }
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    for at in &length_at {
        for &offset in at {
            let start = file.stream_position().unwrap();
            file.write_all(&1u16.to_be_bytes()).unwrap();
            rle_channels(&mut file, 1, layer_side, layer_side, 4, true, |_, row| {
                noise.fill(row);
            });
            let end = file.stream_position().unwrap();
            write_at(&mut file, offset, &(end - start).to_be_bytes());
        }
    }
    let info_end = file.stream_position().unwrap();
    if (info_end - section_at) % 2 == 1 {
        file.write_all(&[0]).unwrap();
    }
    let info_len = file.stream_position().unwrap() - section_at - 16;
    file.write_all(&0u32.to_be_bytes()).unwrap(); // global layer mask info
    let section_end = file.stream_position().unwrap();
    let lengths = [(section_end - section_at - 8), info_len].map(u64::to_be_bytes);
    write_at(&mut file, section_at, &lengths.concat());
    file.write_all(&1u16.to_be_bytes()).unwrap(); // RLE
    rle_channels(&mut file, 3, side, side, 4, false, |_, row| row.fill(255));
    file.flush().unwrap();
}

/// Writes a PSD of `side`×`side` RGB (`mode` 3) or CMYK (4), 8-bit, RLE,
/// noise, with `icc` embedded if given.
fn write_flat(path: &Path, side: u32, mode: u16, icc: Option<&[u8]>) {
    let channels = if mode == 4 { 4 } else { 3 };
    let mut file = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(path).unwrap());
    header(&mut file, 1, channels, side, mode);
    let resources = icc.map(|icc| resource(1039, icc)).unwrap_or_default();
    write_resources(&mut file, &resources);
    file.write_all(&0u32.to_be_bytes()).unwrap(); // layer and mask information
    file.write_all(&1u16.to_be_bytes()).unwrap(); // RLE
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    rle_channels(
        &mut file,
        channels as usize,
        side,
        side,
        2,
        false,
        |_, row| noise.fill(row),
    );
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

//! `cargo xtask bench`, part `formats`: a 256 px preview of the largest file
//! of each design format, its time and peak memory, each in a process of its
//! own (a PDF's in the worker the server and the app use, whose peak counts);
//! and PDF against poppler's `pdftoppm` in the same run.
//!
//! The files: a large PDF Inkscape writes from an SVG of 20,000 shapes and a
//! 3000×2000 photo; the documents `tests/fixtures/make_design.py` lays out;
//! the repository's real ones (`tests/fixtures/previews`); and, when
//! `LEASEDESK_DESIGN_FILES` names a folder, every file under it (real files
//! that cannot be kept in the repository).

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;
#[path = "common/figures.rs"]
mod figures;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::median;
use figures::{row, value};

const SIZE: u32 = 256;
const REPEATS: usize = 5;

fn main() {
    // Started as a PDF worker by `render_one`: serve, and exit.
    leasedesk::preview::isolated::serve_or_enable();
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--render-one") {
        render_one(Path::new(&args[i + 1]));
        return;
    }
    let Some(_flags) = common::Flags::for_part("formats") else {
        return;
    };
    let work = common::work_dir("bench-formats");
    common::table_head();
    let mut largest: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in files(&work) {
        let Some(format) = format_of(&file) else {
            continue;
        };
        let size = |f: &Path| std::fs::metadata(f).map_or(0, |m| m.len());
        let entry = largest.entry(format).or_insert_with(|| file.clone());
        if size(&file) > size(entry) {
            *entry = file;
        }
    }
    for (format, file) in &largest {
        let ours = measure(format, file);
        if format.starts_with("PDF") && format != "PDF/X" {
            against_pdftoppm(file, ours);
        }
    }
}

/// Every file the bench previews.
fn files(work: &Path) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![big_pdf(work, false), big_pdf(work, true)];
    let python = common::bench_python();
    for kind in [
        "sketch",
        "xd",
        "procreate",
        "cdr-zip",
        "ora-mypaint",
        "clip",
        "affinity",
        "cdr",
        "indd",
        "ai-postscript",
        "ai-without-pdf",
        "eps-palette-alpha",
        "pdfx",
    ] {
        let file = work.join(format!("made-{kind}"));
        testkit::tool::run_ok(
            Command::new(&python)
                .current_dir(root.join("tests/fixtures"))
                .arg("make_design.py")
                .arg(kind)
                .arg(&file)
                .arg(work.join("expected.rgba")),
            "make_design.py",
        );
        files.push(file);
    }
    let mut folders = vec![root.join("tests/fixtures/previews")];
    folders.extend(std::env::var_os("LEASEDESK_DESIGN_FILES").map(PathBuf::from));
    for folder in folders {
        walk(&folder, &mut files);
    }
    files
}

fn walk(folder: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// The format a file is, by its first bytes (and, for ZIP-based documents,
/// by the preview's own naming); `None` for files outside this bench.
fn format_of(file: &Path) -> Option<String> {
    let mut head = vec![0u8; 4096];
    let n = std::io::Read::read(&mut std::fs::File::open(file).ok()?, &mut head).ok()?;
    head.truncate(n);
    let seems = leasedesk::preview::seems_to_be(&head);
    let name = file.file_name()?.to_string_lossy().to_lowercase();
    let extension = name.rsplit('.').next().unwrap_or_default();
    let by_name = |kind: &str| name.contains(kind) || extension == kind;
    Some(
        match seems.as_str() {
            "a PDF document" if by_name("pdfx") => "PDF/X",
            "a PDF document" if by_name("masks") => "PDF with 6,667 soft masks",
            "a PDF document" => "PDF",
            "an Adobe Illustrator document" => "Illustrator",
            "an InDesign document" => "InDesign",
            "an Affinity document" => "Affinity",
            "a Clip Studio Paint document" => "Clip Studio Paint",
            "a PostScript document" if by_name("ai") => "Illustrator",
            "a PostScript document" => "EPS",
            _ if head.starts_with(&[0xC5, 0xD0, 0xD3, 0xC6]) => "EPS",
            _ if head.starts_with(b"RIFF") && head.get(8..11) == Some(b"CDR") => "CorelDRAW",
            _ if head.starts_with(b"PK\x03\x04") => ["sketch", "xd", "procreate", "ora", "cdr"]
                .into_iter()
                .find(|kind| by_name(kind))
                .map(|kind| match kind {
                    "sketch" => "Sketch",
                    "xd" => "Adobe XD",
                    "procreate" => "Procreate",
                    "ora" => "OpenRaster",
                    _ => "CorelDRAW",
                })?,
            _ => return None,
        }
        .to_owned(),
    )
}

/// Inkscape's PDF of an SVG with 20,000 shapes (gradients, transparency,
/// strokes) over a 3000×2000 photo-like image; with `soft_masks`, the
/// 6,667 gradient-filled shapes are translucent and fade out, which a PDF
/// writes as a soft mask for each.
fn big_pdf(work: &Path, soft_masks: bool) -> PathBuf {
    let name = if soft_masks {
        "big-inkscape-masks"
    } else {
        "big-inkscape"
    };
    let svg = work.join(format!("{name}.svg"));
    let photo = work.join("photo.png");
    let mut image = image::RgbImage::new(3000, 2000);
    let mut seed = 7u32;
    for (x, y, pixel) in image.enumerate_pixels_mut() {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let noise = (seed >> 28) as u8;
        *pixel = image::Rgb([
            (x / 12) as u8 ^ noise,
            (y / 8) as u8 ^ noise,
            ((x + y) / 20) as u8 ^ noise,
        ]);
    }
    image.save(&photo).unwrap();
    let mut text = String::from(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"3000\" height=\"2000\">\n<defs><linearGradient id=\"g\"><stop offset=\"0\" stop-color=\"#f80\"/><stop offset=\"1\" stop-color=\"#08f\" stop-opacity=\"OPACITY\"/></linearGradient></defs>\n",
    )
    .replace("OPACITY", if soft_masks { "0.5" } else { "1" });
    text.push_str(&format!(
        "<image x=\"0\" y=\"0\" width=\"3000\" height=\"2000\" xlink:href=\"{}\"/>\n",
        photo.display()
    ));
    for i in 0..20_000u32 {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let (x, y) = (seed % 3000, (seed >> 12) % 2000);
        // A translucent gradient is a soft mask in PDF; a translucent flat
        // colour is not.
        let (fill, opacity) = if i % 3 == 0 {
            ("url(#g)".to_owned(), if soft_masks { 0.7 } else { 1.0 })
        } else {
            (format!("#{:06x}", seed & 0xFF_FFFF), 0.7)
        };
        text.push_str(&format!(
            "<path d=\"M{x} {y} c 40 -60 90 30 120 0 s -30 80 -70 60 z\" fill=\"{fill}\" fill-opacity=\"{opacity}\" stroke=\"#222\" stroke-width=\"1.5\"/>\n"
        ));
    }
    text.push_str("</svg>\n");
    std::fs::write(&svg, text).unwrap();
    let pdf = work.join(format!("{name}.pdf"));
    testkit::tool::run_ok(
        Command::new("inkscape")
            .arg(&svg)
            .arg("--export-type=pdf")
            .arg(format!("--export-filename={}", pdf.display())),
        "inkscape",
    );
    pdf
}

/// Our preview of `file`, `REPEATS` times, each in a process of its own;
/// the median time.
fn measure(format: &str, file: &Path) -> Duration {
    let (mut times, mut peak, mut fidelity) = (Vec::new(), 0u64, String::new());
    for _ in 0..REPEATS {
        common::settle(file);
        let output = testkit::tool::run_ok(
            Command::new(std::env::current_exe().unwrap())
                .arg("--render-one")
                .arg(file),
            "a preview",
        );
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let mut words = text.split_whitespace();
        times.push(Duration::from_secs_f64(
            words.next().unwrap().parse().unwrap(),
        ));
        peak = peak.max(words.next().unwrap().parse().unwrap());
        fidelity = words.collect::<Vec<_>>().join(" ");
    }
    let time = median(times);
    let (kib, mib) = (
        std::fs::metadata(file).unwrap().len() >> 10,
        peak as f64 / (1 << 20) as f64,
    );
    let name = file.file_name().unwrap().to_string_lossy();
    row(
        &format!("**{SIZE} px preview of {format}**: `{name}`, {kib} KiB ({fidelity})"),
        format!(
            "**{:.1} ms**, median of {REPEATS}; peak **{mib:.1} MiB**",
            time.as_secs_f64() * 1e3
        ),
        "within the preview budget (10 s, 512 MiB)",
        value(time.as_secs_f64() * 1e3, "ms").and("peak memory", mib, "MiB"),
    );
    time
}

/// `pdftoppm` of the same page at the same size, and how our time compares.
fn against_pdftoppm(file: &Path, ours: Duration) {
    let out = file.with_extension("poppler");
    let mut times = Vec::new();
    for _ in 0..REPEATS {
        common::settle(file);
        let started = Instant::now();
        testkit::tool::run_ok(
            Command::new("pdftoppm")
                .args(["-png", "-singlefile", "-f", "1", "-l", "1", "-scale-to"])
                .arg(SIZE.to_string())
                .arg(file)
                .arg(&out),
            "pdftoppm",
        );
        times.push(started.elapsed());
    }
    let theirs = median(times);
    row(
        "the same page by poppler's `pdftoppm -scale-to 256` (its own process)",
        format!("{:.1} ms, median of {REPEATS}", theirs.as_secs_f64() * 1e3),
        "baseline",
        value(theirs.as_secs_f64() * 1e3, "ms"),
    );
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    row(
        "**PDF preview against `pdftoppm`**",
        format!("**{ratio:.2}x** its time"),
        "at most 1x",
        value(ratio, "x"),
    );
}

/// In a process of its own: previews `file` as the server does (a PDF in
/// the isolated worker), prints "SECONDS PEAK_BYTES FIDELITY"; the peak is
/// this process's or the worker's, the larger.
fn render_one(file: &Path) {
    let started = Instant::now();
    let preview =
        leasedesk::preview::preview_file(file, SIZE, &leasedesk::preview::Limits::standard())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let elapsed = started.elapsed();
    // SAFETY: getrusage only writes the struct it is given.
    let mut children: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut children) },
        0
    );
    let worker = children.ru_maxrss as u64 * 1024;
    let peak = common::peak_memory(std::process::id()).max(worker);
    println!("{} {peak} {}", elapsed.as_secs_f64(), preview.fidelity());
}

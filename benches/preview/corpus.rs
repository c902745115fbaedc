//! Part `psd-corpus`: our PSD reader against psd-tools' own corpus of real
//! documents (its `tests/psd_files`, checked out anywhere and named by
//! `LEASEDESK_PSD_CORPUS`; nothing of it is kept here). Two figures:
//!
//! - its 40 reference renderings (Photoshop's own views, which psd-tools'
//!   tests compare `composite()` with: the 39 `adjustments/NAME.png` beside
//!   their `NAME.psd`, and `group-clipping/group-clipping-photoshop.png`):
//!   ours at full size against each, its mean and largest difference, and
//!   how many are within 2 of 255 (mean difference);
//! - psd-tools' `layers-minimal` documents (seven layers saved without their
//!   pixels): ours against Photoshop's composite of the same layers;
//! - every document psd-tools can open: our 256 px preview against
//!   psd-tools' colour-managed reading of it, and the share that agree.
//!
//! psd-tools' colour-managed reading: `PSDImage.open(f).composite()` (its
//! embedded profile applied by Little CMS with psd-tools' own intent,
//! perceptual, no black-point compensation); what that leaves unmanaged goes
//! to sRGB as our reader's defaults do (grey without a profile under
//! Photoshop's "Dot Gain 20%", CMYK without one SWOP-like, Lab through
//! Little CMS's D50 Lab); then flattened over white and shrunk (area
//! average) to our preview's size.
//!
//! Agreeing: over every pixel's colour flattened over white and its alpha,
//! the mean absolute difference is at most 2 of 255 and the 99th percentile
//! at most 10. Each document that does not agree is listed with why; for a
//! CMYK (or grey) document with its own profile, also whether Photoshop's
//! default intent (relative colorimetric with black-point compensation)
//! explains the difference, by comparing ours with that reading too.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::figures::{row, value};

/// The preview size the corpus is compared at.
const CORPUS_SIZE: u32 = 256;
/// Agreeing: mean and 99th-percentile differences at most these (of 255).
const AGREE_MEAN: f64 = 2.0;
const AGREE_P99: u8 = 10;
/// A reference rendering is matched when the mean difference is at most this.
const REFERENCE_MEAN: f64 = 2.0;

/// Why a document differs, where the difference is known and not a bug of
/// ours in what it sets out to render.
const NOTES: &[(&str, &str)] = &[
    (
        "group-clipping/group-clipping.psd",
        "its composite was written by Clip Studio Paint, which clips a layer to a group its own way; Photoshop's view re-renders the layers (psd-tools does too, in its Photoshop mode); ours shows the composite",
    ),
    (
        "blend-modes/cmyk-blend-modes.psd",
        "psd-tools drops a CMYK composite's transparency (Pillow has no CMYK with alpha) and shows its transparent areas opaque; ours keeps them transparent. Where both are opaque (6 of 255 on average), ours averages the inks into the 256 px preview before converting them, psd-tools converts each pixel first: the SWOP-like conversion is not linear",
    ),
    (
        "colormodes/4x4_8bit_lab.psd",
        "Little CMS's 8-bit Lab transform interpolates a table across sRGB's gamut edge (18 of 255 on one out-of-gamut blue); ours converts each colour exactly",
    ),
];

pub fn measure() {
    let Some(corpus) = std::env::var_os("LEASEDESK_PSD_CORPUS").map(PathBuf::from) else {
        // A row without figures: nothing was measured.
        common::row(
            "psd-tools' corpus (reference renderings, agreement)",
            "skipped: set LEASEDESK_PSD_CORPUS to psd-tools' tests/psd_files".into(),
            "40 of 40 within 2 of 255; at least 97 % agree",
        );
        return;
    };
    let mut files = Vec::new();
    documents_in(&corpus, &mut files);
    files.sort();
    let work = common::work_dir("bench-psd-corpus");
    let theirs = psd_tools_readings(&files, &work);
    references(&corpus);
    minimal(&corpus);
    agreement(&corpus, &files, &theirs, &work);
}

/// The layers psd-tools' `test_composite_minimal` checks: each saved
/// without its pixels or a composite (`layers-minimal/NAME.psd`), ours
/// rendered from what the layers say, against Photoshop's composite of the
/// same layers (`layers/NAME.psd`, read by ours too).
fn minimal(corpus: &Path) {
    const NAMES: [&str; 7] = [
        "smartobject-layer",
        "type-layer",
        "gradient-fill",
        "shape-layer",
        "pixel-layer",
        "solid-color-fill",
        "pattern-fill",
    ];
    println!();
    println!("| layers without their pixels | mean difference | p99 | largest | within 2 of 255 | approximate |");
    println!("|---|---|---|---|---|---|");
    let limits = leasedesk::preview::Limits::standard;
    let size = leasedesk::preview::MAX_SIZE;
    let mut within = 0;
    for name in NAMES {
        let (bare, full) = (
            corpus.join(format!("layers-minimal/{name}.psd")),
            corpus.join(format!("layers/{name}.psd")),
        );
        let (ours, photoshop) = match (
            leasedesk::preview::preview_file(&bare, size, &limits()),
            leasedesk::preview::preview_file(&full, size, &limits()),
        ) {
            (Ok(ours), Ok(photoshop)) => (ours, photoshop.image),
            (ours, photoshop) => {
                let e = ours.err().or(photoshop.err()).unwrap();
                println!("| {name} | {e} | | | no | |");
                continue;
            }
        };
        let Some(photoshop) = shrunk(&photoshop, ours.image.dimensions()) else {
            println!("| {name} | sizes differ | | | no | |");
            continue;
        };
        let d = difference(&ours.image, &photoshop);
        let ok = d.mean <= REFERENCE_MEAN;
        within += ok as u32;
        println!(
            "| {name} | {:.2} | {} | {} | {} | {} |",
            d.mean,
            d.p99,
            d.max,
            if ok { "yes" } else { "no" },
            if ours.approximate { "yes" } else { "no" }
        );
    }
    println!();
    row(
        "**layers saved without their pixels** (psd-tools' `layers-minimal`) against Photoshop's composite of the same layers, within 2 of 255",
        format!("**{within} of {}**", NAMES.len()),
        "—",
        value(within as f64, "files").and("of", NAMES.len() as f64, "files"),
    );
}

/// Every `.psd` and `.psb` under `dir`.
fn documents_in(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            documents_in(&path, found);
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("psd") || e.eq_ignore_ascii_case("psb"))
        {
            found.push(path);
        }
    }
}

/// What psd-tools made of one document.
struct Theirs {
    /// Its error, if it could not open or composite it.
    error: Option<String>,
    mode: String,
    depth: u32,
    profile: bool,
    composite: bool,
}

/// Runs psd-tools once over every file: `work/N.png` its colour-managed
/// reading of file N, `work/N-ps.png` the reading with Photoshop's default
/// intent for a document with a profile.
fn psd_tools_readings(files: &[PathBuf], work: &Path) -> Vec<Theirs> {
    let list = work.join("files.txt");
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    std::fs::write(&list, names.join("\n")).unwrap();
    let output = Command::new(common::bench_python())
        .arg("-c")
        .arg(PSD_TOOLS_READING)
        .arg(&list)
        .arg(work)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "psd-tools failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let mut theirs: Vec<Theirs> = files
        .iter()
        .map(|_| Theirs {
            error: Some("psd-tools gave nothing".into()),
            mode: String::new(),
            depth: 0,
            profile: false,
            composite: false,
        })
        .collect();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(i) = v["i"].as_u64() else { continue };
        let Some(t) = theirs.get_mut(i as usize) else {
            continue;
        };
        *t = Theirs {
            error: v["error"].as_str().map(str::to_owned),
            mode: v["mode"].as_str().unwrap_or("").to_owned(),
            depth: v["depth"].as_u64().unwrap_or(0) as u32,
            profile: v["icc"].as_bool().unwrap_or(false),
            composite: v["preview"].as_bool().unwrap_or(false),
        };
    }
    theirs
}

/// Differences between two images of one size: the mean, 99th percentile
/// and largest, over each pixel's colour flattened over white and its alpha.
#[derive(Clone, Copy)]
struct Difference {
    mean: f64,
    p99: u8,
    max: u8,
}

impl Difference {
    fn agrees(&self) -> bool {
        self.mean <= AGREE_MEAN && self.p99 <= AGREE_P99
    }
}

fn flattened(pixel: [u8; 4]) -> [u8; 4] {
    let a = pixel[3] as u32;
    let over = |c: u8| ((c as u32 * a + 255 * (255 - a) + 127) / 255) as u8;
    [over(pixel[0]), over(pixel[1]), over(pixel[2]), pixel[3]]
}

fn difference(ours: &image::RgbaImage, theirs: &image::RgbaImage) -> Difference {
    let mut all: Vec<u8> = ours
        .pixels()
        .zip(theirs.pixels())
        .flat_map(|(p, q)| {
            let (p, q) = (flattened(p.0), flattened(q.0));
            (0..4).map(move |c| p[c].abs_diff(q[c]))
        })
        .collect();
    let mean = all.iter().map(|&d| d as f64).sum::<f64>() / all.len().max(1) as f64;
    all.sort_unstable();
    Difference {
        mean,
        p99: all.get(all.len() * 99 / 100).copied().unwrap_or(0),
        max: all.last().copied().unwrap_or(0),
    }
}

/// `image` flattened over white (its alpha kept) and shrunk by area
/// average to `width`×`height`, as our reader shrinks.
fn shrunk(image: &image::RgbaImage, (width, height): (u32, u32)) -> Option<image::RgbaImage> {
    if image.dimensions() == (width, height) {
        return Some(image.clone());
    }
    if width > image.width() || height > image.height() {
        return None;
    }
    // Premultiplied over white, so averaging is right; undone after.
    let flat: Vec<u8> = image.pixels().flat_map(|p| flattened(p.0)).collect();
    let planes = leasedesk::preview::scale::shrink_interleaved(
        &flat,
        4,
        image.dimensions(),
        (width, height),
        &leasedesk::preview::Limits::standard(),
        "a psd-tools reading",
    )
    .ok()?;
    Some(image::RgbaImage::from_fn(width, height, |x, y| {
        let i = (y * width + x) as usize;
        let a = planes[3][i] as i32;
        let unflat = |c: u8| match a {
            0 => 255,
            a => (((c as i32 - (255 - a)) * 255 + a / 2) / a).clamp(0, 255) as u8,
        };
        image::Rgba([
            unflat(planes[0][i]),
            unflat(planes[1][i]),
            unflat(planes[2][i]),
            a as u8,
        ])
    }))
}

fn relative(corpus: &Path, file: &Path) -> String {
    file.strip_prefix(corpus)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Ours at full size against the reference rendering `png` of `psd`.
fn against_reference(psd: &Path, png: &Path) -> Result<Difference, String> {
    let reference = image::open(png)
        .map(|i| i.to_rgba8())
        .map_err(|_| "reference missing".to_string())?;
    let ours = leasedesk::preview::preview_file(
        psd,
        leasedesk::preview::MAX_SIZE,
        &leasedesk::preview::Limits::standard(),
    )
    .map_err(|e| format!("ours: {e}"))?
    .image;
    let reference = shrunk(&reference, ours.dimensions()).ok_or("sizes differ")?;
    Ok(difference(&ours, &reference))
}

/// Ours at full size against each of the 40 reference renderings.
fn references(corpus: &Path) {
    let mut pairs: Vec<(PathBuf, PathBuf)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(corpus.join("adjustments")) {
        for entry in entries.flatten() {
            let png = entry.path();
            let psd = png.with_extension("psd");
            if png.extension().is_some_and(|e| e == "png") && psd.exists() {
                pairs.push((psd, png));
            }
        }
    }
    pairs.sort();
    pairs.push((
        corpus.join("group-clipping/group-clipping.psd"),
        corpus.join("group-clipping/group-clipping-photoshop.png"),
    ));
    // The same document as Clip Studio Paint, which wrote it, shows it:
    // reported beside the 40, not counted in them.
    let writers_view = (
        corpus.join("group-clipping/group-clipping.psd"),
        corpus.join("group-clipping/group-clipping-clip-studio.png"),
    );
    println!();
    println!("| reference rendering | mean difference | p99 | largest | within 2 of 255 |");
    println!("|---|---|---|---|---|");
    let (mut within, mut total, mut worst_mean) = (0, 0, 0f64);
    for (psd, png) in &pairs {
        total += 1;
        let name = relative(corpus, psd);
        let d = match against_reference(psd, png) {
            Ok(d) => d,
            Err(why) => {
                println!("| {name} | {why} | | | no |");
                continue;
            }
        };
        let ok = d.mean <= REFERENCE_MEAN;
        within += ok as u32;
        worst_mean = worst_mean.max(d.mean);
        let note = NOTES
            .iter()
            .find(|(f, _)| *f == name && !ok)
            .map_or(String::new(), |(_, note)| format!(": {note}"));
        println!(
            "| {name} | {:.2} | {} | {} | {}{note} |",
            d.mean,
            d.p99,
            d.max,
            if ok { "yes" } else { "no" }
        );
    }
    let (psd, png) = writers_view;
    match against_reference(&psd, &png) {
        Ok(d) => println!(
            "| {} against Clip Studio Paint's own view (not counted) | {:.2} | {} | {} | {} |",
            relative(corpus, &psd),
            d.mean,
            d.p99,
            d.max,
            if d.mean <= REFERENCE_MEAN {
                "yes"
            } else {
                "no"
            }
        ),
        Err(why) => println!(
            "| {} against Clip Studio Paint's view | {why} | | | |",
            relative(corpus, &psd)
        ),
    }
    println!();
    row(
        "**psd-tools' reference renderings** (Photoshop's own views) matched by our full-size preview (mean difference within 2 of 255)",
        format!("**{within} of {total}**; worst mean {worst_mean:.2} of 255"),
        "40 of 40",
        value(within as f64, "files")
            .and("of", total as f64, "files")
            .and("worst mean", worst_mean, "levels of 255"),
    );
}

/// Ours at 256 px against psd-tools' reading of every document it opens.
fn agreement(corpus: &Path, files: &[PathBuf], theirs: &[Theirs], work: &Path) {
    let (mut opened, mut agreeing) = (0u32, 0u32);
    let mut refused = Vec::new();
    let mut disagreeing = Vec::new();
    for (i, (file, t)) in files.iter().zip(theirs).enumerate() {
        let name = relative(corpus, file);
        if let Some(e) = &t.error {
            refused.push(format!("{name} ({})", e.lines().next().unwrap_or("")));
            continue;
        }
        opened += 1;
        let what = format!(
            "{} {}-bit{}{}",
            t.mode,
            t.depth,
            if t.profile { ", profile" } else { "" },
            if t.composite { "" } else { ", no composite" }
        );
        let ours = match leasedesk::preview::preview_file(
            file,
            CORPUS_SIZE,
            &leasedesk::preview::Limits::standard(),
        ) {
            Ok(preview) => preview,
            Err(e) => {
                disagreeing.push((name, what, "–".into(), format!("ours: no preview ({e})")));
                continue;
            }
        };
        let reading = |suffix: &str| {
            image::open(work.join(format!("{i}{suffix}.png")))
                .ok()
                .map(|image| image.to_rgba8())
                .and_then(|image| shrunk(&image, ours.image.dimensions()))
        };
        let Some(managed) = reading("") else {
            disagreeing.push((
                name,
                what,
                "–".into(),
                "psd-tools' reading is of another size".into(),
            ));
            continue;
        };
        // Kept beside psd-tools' reading, to look at.
        let _ = ours.image.save(work.join(format!("{i}-ours.png")));
        let d = difference(&ours.image, &managed);
        if d.agrees() {
            agreeing += 1;
            continue;
        }
        let mut why = Vec::new();
        let note = NOTES.iter().find(|(f, _)| *f == name);
        if let Some((_, note)) = note {
            why.push((*note).to_owned());
        }
        // Photoshop's default intent differs from psd-tools' only through a
        // print profile's tables: CMYK's (and grey's) matter here.
        let print = matches!(t.mode.as_str(), "CMYK" | "GRAYSCALE");
        if let Some(photoshop) = reading("-ps").filter(|_| print) {
            let p = difference(&ours.image, &photoshop);
            if p.agrees() {
                why.push(format!(
                    "Photoshop's default intent (relative colorimetric + BPC) explains it: against that reading mean {:.2}, p99 {}",
                    p.mean, p.p99
                ));
            } else {
                why.push(format!(
                    "not the intent: against relative colorimetric + BPC too, mean {:.2}, p99 {}",
                    p.mean, p.p99
                ));
            }
        }
        if ours.approximate && note.is_none() {
            why.push("ours approximate (layers with what we do not render)".into());
        }
        if why.is_empty() {
            why.push("unexplained".into());
        }
        disagreeing.push((
            name,
            what,
            format!("{:.2} / {} / {}", d.mean, d.p99, d.max),
            why.join("; "),
        ));
    }
    let share = 100.0 * agreeing as f64 / opened.max(1) as f64;
    println!();
    println!(
        "Documents that do not agree with psd-tools' colour-managed reading ({} of {opened}):",
        disagreeing.len()
    );
    println!();
    println!("| document | mode | mean / p99 / max | why |");
    println!("|---|---|---|---|");
    for (name, what, d, why) in &disagreeing {
        println!("| {name} | {what} | {d} | {why} |");
    }
    println!();
    println!(
        "psd-tools cannot open {} of the {} documents: {}",
        refused.len(),
        files.len(),
        refused.join(", ")
    );
    println!();
    row(
        &format!(
            "**psd-tools' corpus: documents agreeing with psd-tools' colour-managed reading** ({CORPUS_SIZE} px; mean ≤ {AGREE_MEAN} and p99 ≤ {AGREE_P99} of 255)"
        ),
        format!("**{share:.1} %** ({agreeing} of {opened})"),
        "at least 97 %",
        value(share, "%")
            .and("agreeing", agreeing as f64, "files")
            .and("opened by psd-tools", opened as f64, "files"),
    );
}

/// psd-tools' readings of the files listed in argv[1], into argv[2]: one
/// JSON line per file.
const PSD_TOOLS_READING: &str = r#"
import io, json, sys, logging
import numpy as np
from PIL import Image, ImageCms
from psd_tools import PSDImage
from psd_tools.constants import ColorMode, Resource
logging.disable(logging.CRITICAL)
files = [f for f in open(sys.argv[1]).read().split('\n') if f]
out = sys.argv[2]
SRGB = ImageCms.createProfile('sRGB')

def encode(linear):
    linear = np.clip(linear, 0, 1)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)

def dot_gain(grey):
    """Grey (1 white) under Photoshop's "Dot Gain 20%", as sRGB (ours without a profile)."""
    ink = 1 - grey
    return encode(1 - (ink + 0.8 * ink * (1 - ink)))

def swop_like(ink):
    """Ours for CMYK without a profile (crates/preview/src/colour.rs)."""
    def xyz(l, a, b):
        fy = (l + 16) / 116
        f = np.array([fy + a / 500, fy, fy - b / 200])
        return np.where(f > 6 / 29, f ** 3, 3 * (6 / 29) ** 2 * (f - 4 / 29))
    solids = [xyz(55, -37, -50), xyz(48, 74, -3), xyz(89, -5, 93), xyz(18, 0, 0)]
    covered = ink + 0.8 * ink * (1 - ink)
    light = np.ones(ink.shape[:2] + (3,))
    for i, solid in enumerate(solids):
        light *= 1 - covered[:, :, i:i + 1] * (1 - solid)
    x, y, z = light[:, :, 0] * 0.9642, light[:, :, 1], light[:, :, 2] * 0.8249
    return encode(np.stack([3.1339 * x - 1.6169 * y - 0.4906 * z, -0.9788 * x + 1.9161 * y + 0.0335 * z, 0.0719 * x - 0.2290 * y + 1.4052 * z], 2))

def to_srgba(image):
    """What composite() gave, as sRGB RGBA: what its profile left unmanaged by our defaults."""
    alpha = image.getchannel('A') if image.mode in ('RGBA', 'LA', 'PA') else None
    mode = image.mode.replace('A', '') if image.mode in ('RGBA', 'LA') else image.mode
    base = image.convert(mode) if alpha is not None else image
    if mode in ('RGB',):
        rgb = np.asarray(base.convert('RGB')).astype(np.float64) / 255
    elif mode in ('1', 'P', 'RGBX'):
        return np.asarray(image.convert('RGBA'))
    elif mode == 'L':
        rgb = np.repeat(dot_gain(np.asarray(base).astype(np.float64)[:, :, None] / 255), 3, 2)
    elif mode == 'CMYK':
        rgb = swop_like(np.asarray(base).astype(np.float64) / 255)
    elif mode == 'LAB':
        rgb = np.asarray(ImageCms.profileToProfile(base, ImageCms.createProfile('LAB'), SRGB, outputMode='RGB')).astype(np.float64) / 255
    else:
        rgb = np.asarray(base.convert('RGB')).astype(np.float64) / 255
    a = np.asarray(alpha).astype(np.float64)[:, :, None] / 255 if alpha is not None else np.ones(rgb.shape[:2] + (1,))
    return (np.concatenate([rgb, a], 2) * 255 + 0.5).astype(np.uint8)

for i, path in enumerate(files):
    info = {'i': i}
    try:
        psd = PSDImage.open(path)
        icc = psd.image_resources.get_data(Resource.ICC_PROFILE)
        info.update(mode=psd.color_mode.name, depth=psd.depth, icc=bool(icc), preview=bool(psd.has_preview()))
        image = psd.composite()
        Image.fromarray(to_srgba(image), 'RGBA').save(f'{out}/{i}.png')
        if icc:
            # Photoshop's default intent: relative colorimetric with black-point compensation.
            raw = psd.composite(apply_icc=False)
            alpha = raw.getchannel('A') if raw.mode in ('RGBA', 'LA') else None
            base = raw.convert(raw.mode.replace('A', '')) if alpha is not None else raw
            try:
                rgb = ImageCms.profileToProfile(base, ImageCms.ImageCmsProfile(io.BytesIO(icc)), SRGB, renderingIntent=1, outputMode='RGB', flags=ImageCms.Flags.BLACKPOINTCOMPENSATION)
                if alpha is not None:
                    rgb.putalpha(alpha)
                Image.fromarray(to_srgba(rgb), 'RGBA').save(f'{out}/{i}-ps.png')
            except Exception:
                pass
    except Exception as e:
        info['error'] = f'{type(e).__name__}: {e}'
    print(json.dumps(info), flush=True)
"#;

//! Previews of every format but PSD, from files that real tools write in the
//! test (Pillow, Python's zipfile, Blender), checked against what those tools
//! say the image is; and every kind of bad input (bombs, truncations, random
//! bytes, entity tricks) answered `NoPreview` within the time budget.

use std::path::{Path, PathBuf};
use std::time::Instant;

use leasedesk::preview::{render_bytes, render_file, Limits, NoPreview, TIME_BUDGET};
use tempfile::TempDir;

use crate::harness;

/// An image a tool wrote, and the pixels the tool decodes from it.
pub struct Made {
    _dir: TempDir,
    pub file: PathBuf,
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// Runs `tests/fixtures/make_image.py KIND` in the test venv.
pub fn make(kind: &str) -> Made {
    make_fitted(kind, None)
}

/// The same, with the expected pixels as Pillow fits them into `fit`.
fn make_fitted(kind: &str, fit: Option<u32>) -> Made {
    made_by("make_image.py", kind, fit)
}

/// Runs `tests/fixtures/SCRIPT KIND OUT EXPECTED [FIT]` in the test venv:
/// the file it writes, and the pixels it says the file holds (none when it
/// prints `none`).
pub fn made_by(script: &str, kind: &str, fit: Option<u32>) -> Made {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("image.{kind}"));
    let expected = dir.path().join("expected.rgba");
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(script);
    let output = testkit::tool::run_ok(
        harness::python()
            .arg(&script)
            .arg(kind)
            .arg(&file)
            .arg(&expected)
            .args(fit.map(|size| size.to_string())),
        &format!("{} {kind}", script.display()),
    );
    let (width, height) = dimensions(&output.stdout);
    let rgba = std::fs::read(&expected).unwrap_or_default();
    Made {
        _dir: dir,
        file,
        width,
        height,
        rgba,
    }
}

fn dimensions(stdout: &[u8]) -> (u32, u32) {
    let text = String::from_utf8_lossy(stdout);
    if text.trim() == "none" {
        return (0, 0);
    }
    let mut numbers = text
        .split_whitespace()
        .map(|n| n.parse::<u32>().expect("a number"));
    (numbers.next().unwrap(), numbers.next().unwrap())
}

/// Each of `kinds`, made and previewed at 512 px, is the pixels made within
/// `mean` and `worst` (see [`assert_close`]).
fn assert_kinds_close(kinds: &[&str], mean: f64, worst: u8) {
    for kind in kinds {
        let made = make(kind);
        let image = preview(&made.file, 512).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_close(&image, &made, mean, worst, kind);
    }
}

/// Compares a preview with the expected pixels: mean absolute difference
/// per channel at most `mean`, and no channel off by more than `worst`.
pub fn assert_close(actual: &image::RgbaImage, made: &Made, mean: f64, worst: u8, what: &str) {
    assert_eq!(
        (actual.width(), actual.height()),
        (made.width, made.height),
        "{what}: the preview's dimensions"
    );
    let actual = actual.as_raw();
    assert_eq!(actual.len(), made.rgba.len(), "{what}: pixel count");
    let mut sum = 0u64;
    let mut max = 0u8;
    for (a, e) in actual.iter().zip(&made.rgba) {
        let d = a.abs_diff(*e);
        sum += u64::from(d);
        max = max.max(d);
    }
    let avg = sum as f64 / actual.len() as f64;
    assert!(
        avg <= mean && max <= worst,
        "{what}: mean difference {avg:.2} (at most {mean}), worst {max} (at most {worst})"
    );
}

fn preview(file: &Path, size: u32) -> Result<image::RgbaImage, NoPreview> {
    render_file(file, size, &Limits::standard())
}

fn no_preview(result: Result<image::RgbaImage, NoPreview>, what: &str) -> String {
    match result {
        Ok(image) => panic!(
            "{what}: expected no preview, got {}×{}",
            image.width(),
            image.height()
        ),
        Err(NoPreview(message)) => message,
    }
}

/// Lossless formats: exactly Pillow's pixels.
#[test]
fn lossless_rasters_match_pillows_pixels() {
    assert_kinds_close(
        &[
            "png-rgb",
            "png-rgba",
            "png-palette",
            "gif-animated",
            "webp",
            "tiff-lzw",
            "bmp",
        ],
        0.0,
        0,
    );
}

/// 16-bit grey PNG and TIFF come out as their high byte (within rounding).
#[test]
fn sixteen_bit_rasters_keep_their_values() {
    assert_kinds_close(&["png-gray16", "tiff-gray16"], 0.6, 1);
}

/// JPEG (lossy: decoders differ by a little) and CMYK JPEG and TIFF with
/// SWOP's profile, which Pillow converts through Little CMS: two engines
/// through one LUT agree within a few levels.
#[test]
fn jpegs_and_cmyk_match_pillow_within_a_tolerance() {
    for (kind, mean, worst) in [
        ("jpeg", 1.5, 40),
        ("jpeg-cmyk", 3.0, 60),
        ("tiff-cmyk", 1.0, 8),
    ] {
        let made = make(kind);
        let image = preview(&made.file, 512).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_close(&image, &made, mean, worst, kind);
    }
}

/// Orientation 6 (turn 90° clockwise): the 96×64 picture is shown 64×96,
/// its black bar (top left in the file) on the right.
#[test]
fn jpeg_exif_orientation_is_applied() {
    let made = make("jpeg-exif6");
    assert_eq!(
        (made.width, made.height),
        (64, 96),
        "Pillow's own transpose"
    );
    let image = preview(&made.file, 512).unwrap();
    assert_close(&image, &made, 1.5, 40, "jpeg-exif6");
    let bar = image.get_pixel(60, 10);
    assert!(
        bar[0] < 40 && bar[1] < 40 && bar[2] < 40,
        "the bar turned to the right: {bar:?}"
    );
}

/// A 480×320 PNG fitted into 64: 64×43, close to Pillow's own antialiased
/// downscale of the same file.
#[test]
fn a_large_raster_is_fitted_and_resampled() {
    let made = make_fitted("png-large", Some(64));
    assert_eq!((made.width, made.height), (64, 43), "Pillow's fit");
    let image = preview(&made.file, 64).unwrap();
    assert_close(&image, &made, 0.1, 2, "png-large at 64");
    // The quadrants' centres keep their colours.
    assert_eq!(image.get_pixel(8, 32).0, [0, 0, 255, 255]);
    assert_eq!(image.get_pixel(56, 10).0, [0, 255, 0, 255]);
}

#[test]
fn krita_and_openraster_show_their_merged_image() {
    assert_kinds_close(&["kra", "ora"], 0.0, 0);
    let unmerged = make("kra-unmerged");
    let message = no_preview(preview(&unmerged.file, 512), "kra without merged image");
    assert!(
        message.contains("Krita document without a merged image"),
        "{message}"
    );
}

/// A KRA whose merged image is 300 MiB of zeros, its headers claiming
/// 1000 bytes: refused at the bound, quickly.
#[test]
fn a_zip_bomb_krita_file_is_refused() {
    let bomb = make("kra-bomb");
    let started = Instant::now();
    let message = no_preview(preview(&bomb.file, 512), "zip bomb");
    assert!(message.contains("Krita document"), "{message}");
    assert!(
        message.contains("over the budget") || message.contains("damaged"),
        "{message}"
    );
    assert!(
        started.elapsed() < TIME_BUDGET,
        "took {:?}",
        started.elapsed()
    );
}

/// 100000×100000 RGBA in a file of a few hundred bytes: refused from the
/// header, before any pixel is decoded.
#[test]
fn a_decompression_bomb_png_is_refused_from_its_header() {
    let bomb = make("png-bomb");
    assert!(std::fs::metadata(&bomb.file).unwrap().len() < 1 << 20);
    let started = Instant::now();
    let message = no_preview(preview(&bomb.file, 512), "png bomb");
    assert!(
        message.starts_with("a PNG image of 100000×100000 pixels"),
        "{message}"
    );
    assert!(message.contains("over the budget"), "{message}");
    assert!(
        started.elapsed().as_secs() < 2,
        "took {:?}",
        started.elapsed()
    );
}

/// Two rectangles, 40×30 user units: red on the left, blue on the right.
pub const TWO_RECTS: &str = r##"<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30" viewBox="0 0 40 30">
  <rect x="0" y="0" width="20" height="30" fill="#ff0000"/>
  <rect x="20" y="0" width="20" height="30" fill="#0000ff"/>
</svg>"##;

#[test]
fn svg_is_rendered_at_its_size_and_fitted() {
    let image = render_bytes(TWO_RECTS.as_bytes(), 512, &Limits::standard()).unwrap();
    assert_eq!((image.width(), image.height()), (40, 30));
    assert_eq!(image.get_pixel(5, 15).0, [255, 0, 0, 255]);
    assert_eq!(image.get_pixel(35, 15).0, [0, 0, 255, 255]);
    let big = TWO_RECTS.replace(r#"width="40" height="30""#, r#"width="400" height="300""#);
    let image = render_bytes(big.as_bytes(), 100, &Limits::standard()).unwrap();
    assert_eq!((image.width(), image.height()), (100, 75));
    assert_eq!(image.get_pixel(10, 40).0, [255, 0, 0, 255]);
    assert_eq!(image.get_pixel(90, 40).0, [0, 0, 255, 255]);
}

/// An `.svgz` (the SVG gzipped, by Python's gzip) renders as the SVG does.
#[test]
fn svgz_is_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rects.svgz");
    let script = format!(
        "import gzip, sys\ngzip.open({path:?}, 'wb').write(sys.stdin.buffer.read())",
        path = file.display().to_string()
    );
    let mut child = harness::python()
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(TWO_RECTS.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(std::fs::read(&file).unwrap().starts_with(&[0x1F, 0x8B]));
    let image = preview(&file, 512).unwrap();
    assert_eq!((image.width(), image.height()), (40, 30));
    assert_eq!(image.get_pixel(5, 15).0, [255, 0, 0, 255]);
    assert_eq!(image.get_pixel(35, 15).0, [0, 0, 255, 255]);
}

/// An Illustrator-style DTD of plain entities still renders.
#[test]
fn svg_with_plain_entities_renders() {
    let svg = r##"<?xml version="1.0"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [
  <!ENTITY ns_svg "http://www.w3.org/2000/svg">
  <!ENTITY red "#ff0000">
]>
<svg xmlns="&ns_svg;" width="10" height="10"><rect width="10" height="10" fill="&red;"/></svg>"##;
    let image = render_bytes(svg.as_bytes(), 512, &Limits::standard()).unwrap();
    assert_eq!(image.get_pixel(5, 5).0, [255, 0, 0, 255]);
}

/// An `<image>` naming a real PNG on disk (and one over the network) is not
/// loaded: its area stays transparent.
#[test]
fn svg_never_loads_external_images() {
    let red = make("png-rgb");
    let url = format!("file://{}", red.file.display());
    for href in [
        red.file.display().to_string(),
        url,
        "http://127.0.0.1:9/x.png".into(),
    ] {
        let svg = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="96" height="64">
  <image x="0" y="0" width="96" height="64" xlink:href="{href}" href="{href}"/>
</svg>"#
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("external.svg");
        std::fs::write(&file, svg).unwrap();
        let image = preview(&file, 512).unwrap();
        assert!(
            image.pixels().all(|p| p[3] == 0),
            "{href}: the external image was drawn"
        );
    }
}

#[test]
fn svg_entity_bombs_and_oversized_text_are_refused() {
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE svg [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&lol3;</text></svg>"#;
    let wide = format!(
        r#"<?xml version="1.0"?>
<!DOCTYPE svg [ <!ENTITY big "{}"> ]>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><desc>{}</desc></svg>"#,
        "x".repeat(100_000),
        "&big;".repeat(100_000)
    );
    let huge = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><!--{}--></svg>"#,
        " ".repeat(33 << 20)
    );
    for (what, svg) in [
        ("billion laughs", laughs.to_string()),
        ("wide entity", wide),
        ("33 MiB", huge),
    ] {
        let started = Instant::now();
        let message = no_preview(render_bytes(svg.as_bytes(), 512, &Limits::standard()), what);
        assert!(message.starts_with("an SVG image"), "{what}: {message}");
        assert!(
            started.elapsed().as_secs() < 2,
            "{what} took {:?}",
            started.elapsed()
        );
    }
}

/// Files we do not preview are named by what they seem to be.
#[test]
fn other_formats_are_named() {
    // Pillow's PDF is drawn (preview_design has the PDF reader's tests).
    let pdf = make("pdf");
    assert!(preview(&pdf.file, 512).is_ok());
    // An InDesign or Illustrator file's start alone: what it is, and damaged.
    for (start, seems) in [
        (
            &b"\x06\x06\xED\xF5\xD8\x1D\x46\xE5\xBD\x31\xEF\xE7\xFE\x74\xB7\x1D rest"[..],
            "an InDesign document, damaged or truncated",
        ),
        (
            b"%PDF-1.6\n%\xE2\xE3\xCF\xD3\n1 0 obj <</Creator (Adobe Illustrator 27.0)>>",
            "an Adobe Illustrator document, damaged or truncated",
        ),
    ] {
        let message = no_preview(render_bytes(start, 512, &Limits::standard()), seems);
        assert!(message.starts_with(seems), "{message}");
    }
    let zip = make("zip");
    assert_eq!(
        no_preview(preview(&zip.file, 512), "zip"),
        "a ZIP archive: no preview for it"
    );
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    assert_eq!(
        no_preview(
            render_bytes(&exe[..64 << 10], 512, &Limits::standard()),
            "elf"
        ),
        "a program (ELF): no preview for it"
    );
    let gzip = {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(b"just some text").unwrap();
        encoder.finish().unwrap()
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (Vec::new(), "an empty file"),
        (
            b"Dear reader,\nthis is plain text.\n".to_vec(),
            "a plain text file",
        ),
        (b"fig-kiwi\x0f\x00\x00\x00".to_vec(), "a Figma file"),
        (
            b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic".to_vec(),
            "a HEIC image",
        ),
        (
            b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1".to_vec(),
            "an AVIF image",
        ),
        (
            b"v/1\x01\x02\x00\x00\x00channels".to_vec(),
            "an OpenEXR image",
        ),
        (
            zstd::encode_all(&b"text"[..], 3).unwrap(),
            "a zstd-compressed file, not a Blender file",
        ),
        (gzip, "a gzip-compressed file, not a Blender file"),
    ];
    for (bytes, seems) in cases {
        let message = no_preview(render_bytes(&bytes, 512, &Limits::standard()), seems);
        assert_eq!(message, format!("{seems}: no preview for it"));
    }
}

/// Asserts a bad input is refused in words, not by a caught panic, within
/// the time budget.
fn assert_refused_calmly(bytes: &[u8], what: &str) {
    let started = Instant::now();
    let result = render_bytes(bytes, 256, &Limits::standard());
    let elapsed = started.elapsed();
    assert!(elapsed < TIME_BUDGET, "{what}: took {elapsed:?}");
    if let Err(NoPreview(message)) = result {
        assert!(
            !message.contains("reader failed"),
            "{what}: a reader panicked"
        );
    } else {
        panic!("{what}: a preview of a damaged file");
    }
}

/// Every format cut short at several offsets: refused, and no reader
/// panics. Where a preview reads only the start of the file (a GIF's first
/// frame, a Blender file's thumbnail near its start), a cut past that part
/// may still show it, but then exactly as the whole file does.
#[test]
fn truncated_files_of_every_format_are_refused() {
    let blend = blender_files();
    let mut files: Vec<(String, Vec<u8>, bool)> = [
        ("png-rgb", true),
        ("png-gray16", true),
        ("jpeg", true),
        ("jpeg-cmyk", true),
        ("gif-animated", false),
        ("webp", true),
        ("tiff-lzw", true),
        ("tiff-cmyk", true),
        ("bmp", true),
        ("kra", true),
        ("ora", true),
    ]
    .iter()
    .map(|(kind, whole)| {
        (
            kind.to_string(),
            std::fs::read(make(kind).file).unwrap(),
            *whole,
        )
    })
    .collect();
    for name in ["plain.blend", "zstd.blend", "gzip.blend"] {
        files.push((
            name.into(),
            std::fs::read(blend.dir.path().join(name)).unwrap(),
            false,
        ));
    }
    files.push(("svg".into(), TWO_RECTS.as_bytes().to_vec(), true));
    for (kind, bytes, needs_whole_file) in &files {
        let intact = render_bytes(bytes, 256, &Limits::standard()).unwrap();
        let len = bytes.len();
        for cut in [1, 4, 12, 40, 100, len / 3, len / 2, len * 9 / 10, len - 20] {
            if cut >= len {
                continue;
            }
            let what = format!("{kind} cut at {cut} of {len}");
            let cut_short = &bytes[..cut];
            if *needs_whole_file {
                assert_refused_calmly(cut_short, &what);
            } else if let Ok(image) = render_bytes(cut_short, 256, &Limits::standard()) {
                assert!(image == intact, "{what}: a preview unlike the whole file's");
            } else {
                assert_refused_calmly(cut_short, &what);
            }
        }
    }
}

/// Random bytes, and random bytes behind each format's magic number.
#[test]
fn random_bytes_are_refused() {
    let magics: [&[u8]; 12] = [
        b"",
        b"\x89PNG\r\n\x1a\n",
        b"\xFF\xD8\xFF",
        b"GIF89a",
        b"RIFF\x00\x10\x00\x00WEBP",
        b"II*\x00",
        b"BM\x00\x10\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00",
        b"BLENDER-v300",
        b"BLENDER17-01v0500",
        b"\x28\xB5\x2F\xFD",
        b"PK\x03\x04",
        b"<svg ",
    ];
    for (m, magic) in magics.iter().enumerate() {
        for seed in 0..40u64 {
            let len = 1 + (seed as usize * 977) % 20_000;
            let mut bytes = magic.to_vec();
            bytes.extend(harness::noise(seed + 1000 * m as u64, len));
            assert_refused_calmly(&bytes, &format!("magic {m}, seed {seed}"));
        }
    }
}

/// Files Blender 3.4 (Debian's `blender`) saves in background mode, with the
/// thumbnail it renders from the camera, and that thumbnail as Blender's own
/// `blender-thumbnailer` extracts it.
pub struct BlenderFiles {
    pub dir: TempDir,
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

pub fn blender_files() -> &'static BlenderFiles {
    static FILES: std::sync::OnceLock<BlenderFiles> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let script = format!(
            "import bpy\n\
             d = {dir:?}\n\
             bpy.ops.wm.save_as_mainfile(filepath=d + '/plain.blend', compress=False)\n\
             bpy.ops.wm.save_as_mainfile(filepath=d + '/zstd.blend', compress=True)\n\
             bpy.context.preferences.filepaths.file_preview_type = 'NONE'\n\
             bpy.ops.wm.save_as_mainfile(filepath=d + '/nothumb.blend', compress=False)\n",
            dir = dir.path().display().to_string()
        );
        testkit::tool::run_ok(
            std::process::Command::new("blender").args([
                "-b",
                "--factory-startup",
                "--python-expr",
                &script,
            ]),
            "blender (cargo xtask test installs Debian's blender)",
        );
        let status = std::process::Command::new("blender-thumbnailer")
            .arg(dir.path().join("plain.blend"))
            .arg(dir.path().join("thumb.png"))
            .status()
            .unwrap();
        assert!(status.success());
        let convert = format!(
            "from PIL import Image\n\
             im = Image.open({png:?}).convert('RGBA')\n\
             open({raw:?}, 'wb').write(im.tobytes())\n\
             import gzip, shutil\n\
             shutil.copyfileobj(open({plain:?}, 'rb'), gzip.open({gz:?}, 'wb'))\n\
             print(im.width, im.height)",
            png = dir.path().join("thumb.png").display().to_string(),
            raw = dir.path().join("thumb.rgba").display().to_string(),
            plain = dir.path().join("plain.blend").display().to_string(),
            gz = dir.path().join("gzip.blend").display().to_string(),
        );
        let output = harness::python().args(["-c", &convert]).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let (width, height) = dimensions(&output.stdout);
        let rgba = std::fs::read(dir.path().join("thumb.rgba")).unwrap();
        BlenderFiles {
            dir,
            width,
            height,
            rgba,
        }
    })
}

fn assert_blender_thumbnail(image: &image::RgbaImage, what: &str) {
    let files = blender_files();
    assert_eq!(
        (image.width(), image.height()),
        (files.width, files.height),
        "{what}"
    );
    assert!(
        image.as_raw() == &files.rgba,
        "{what}: not blender-thumbnailer's pixels"
    );
    assert!(
        files
            .rgba
            .chunks(4)
            .any(|p| p[3] > 0 && p[..3] != [0, 0, 0]),
        "the thumbnail shows something"
    );
}

#[test]
fn blender_thumbnails_plain_zstd_and_gzip() {
    let files = blender_files();
    let plain = std::fs::read(files.dir.path().join("plain.blend")).unwrap();
    assert!(plain.starts_with(b"BLENDER-v"), "Blender 3.4's header");
    let zstd = std::fs::read(files.dir.path().join("zstd.blend")).unwrap();
    assert!(
        zstd.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]),
        "compress=True writes zstd"
    );
    for name in ["plain.blend", "zstd.blend", "gzip.blend"] {
        let image =
            preview(&files.dir.path().join(name), 512).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_blender_thumbnail(&image, name);
    }
    let small = preview(&files.dir.path().join("plain.blend"), 64).unwrap();
    assert_eq!((small.width(), small.height()), (64, 64));
    let message = no_preview(
        preview(&files.dir.path().join("nothumb.blend"), 512),
        "no thumbnail",
    );
    assert!(
        message.starts_with("a Blender file without a thumbnail"),
        "{message}"
    );
}

/// Blender 5's header (`BLENDER17-01v0500`) and 32-byte block headers, which
/// Debian's Blender 3.4 cannot write: the 3.4 file's blocks rewritten in that
/// layout by the writer below (code, SDNA index, old pointer, len and count as
/// i64), up to and including the thumbnail, then `ENDB`.
#[test]
fn blender_5_header_layout_is_read() {
    let files = blender_files();
    let plain = std::fs::read(files.dir.path().join("plain.blend")).unwrap();
    assert_eq!(&plain[7..9], b"-v", "8-byte pointers, little-endian");
    let mut out = b"BLENDER17-01v0500".to_vec();
    let mut at = 12;
    loop {
        let code = &plain[at..at + 4];
        let len = i32::from_le_bytes(plain[at + 4..at + 8].try_into().unwrap());
        let old = &plain[at + 8..at + 16];
        let sdna = &plain[at + 16..at + 20];
        let count = i32::from_le_bytes(plain[at + 20..at + 24].try_into().unwrap());
        out.extend_from_slice(code);
        out.extend_from_slice(sdna);
        out.extend_from_slice(old);
        out.extend_from_slice(&i64::from(len).to_le_bytes());
        out.extend_from_slice(&i64::from(count).to_le_bytes());
        out.extend_from_slice(&plain[at + 24..at + 24 + len as usize]);
        at += 24 + len as usize;
        if code == b"TEST" {
            break;
        }
    }
    out.extend_from_slice(b"ENDB");
    out.extend_from_slice(&[0; 28]);
    let image = render_bytes(&out, 512, &Limits::standard()).unwrap();
    assert_blender_thumbnail(&image, "Blender 5 layout");
}

//! Previews of the documents designers save beyond images and PSD: PDF and
//! PDF/X drawn by hayro, and the thumbnails Illustrator, InDesign, EPS
//! writers, Affinity, Clip Studio Paint, CorelDRAW, Sketch, XD, Procreate and
//! MyPaint save. The files are real ones (`tests/fixtures/previews`) or laid
//! out by `make_design.py` as those applications lay them out; the expected
//! pixels come from the script's own reading (Pillow, Little CMS), never from
//! the previewer. Then the same files cut, bombed and corrupted.

use std::path::Path;
use std::time::Instant;

use leasedesk::preview::{preview_bytes, Limits, NoPreview, Preview, TIME_BUDGET};

use crate::preview_formats::{assert_close, made_by, Made};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/previews")
            .join(name),
    )
    .unwrap()
}

fn design(kind: &str) -> Made {
    made_by("make_design.py", kind, None)
}

fn preview(bytes: &[u8], size: u32, what: &str) -> Preview {
    preview_bytes(bytes, size, &Limits::standard()).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// (kind, who saved the thumbnail, worst channel difference allowed: a
/// JPEG's decoders differ by a few levels, a PNG's or a bitmap's not at all).
const SAVED: &[(&str, &str, u8)] = &[
    ("sketch", "Sketch", 0),
    ("xd", "Adobe XD", 0),
    ("procreate", "Procreate", 0),
    ("cdr-zip", "CorelDRAW", 0),
    ("cdr-zip-bitmap", "CorelDRAW", 0),
    ("clip", "Clip Studio Paint", 0),
    ("affinity", "Affinity", 0),
    ("cdr", "CorelDRAW", 0),
    ("ora-mypaint", "its OpenRaster writer", 0),
    ("eps-palette-alpha", "Adobe Illustrator(R) 16.0", 0),
    ("indd", "InDesign", 40),
    ("ai-postscript", "Illustrator", 40),
    ("ai-without-pdf", "Illustrator", 40),
];

#[test]
fn saved_thumbnails_are_the_pictures_their_applications_saved() {
    for &(kind, by, worst) in SAVED {
        let made = design(kind);
        let bytes = std::fs::read(&made.file).unwrap();
        // Large enough that nothing is scaled: the thumbnail's own pixels.
        let shown = preview(&bytes, 4096, kind);
        assert_close(&shown.image, &made, 1.5, worst, kind);
        assert_eq!(
            shown.fidelity(),
            format!("saved; by=\"{by}\"; size={}", made.width.max(made.height)),
            "{kind}"
        );
        // Fitted like any preview, the aspect kept.
        let small = preview(&bytes, 64, kind).image;
        assert_eq!(small.width().max(small.height()), 64, "{kind}");
    }
}

#[test]
fn the_stale_copies_and_decoys_before_a_thumbnail_are_passed_over() {
    // InDesign's database pages hold an older XMP (a black-backed picture),
    // Affinity's file a placed PNG and a stale Thmb block (black 64×64):
    // the previews are the thumbnails, white-backed.
    for kind in ["indd", "affinity"] {
        let made = design(kind);
        let shown = preview(&std::fs::read(&made.file).unwrap(), 4096, kind).image;
        assert_eq!(shown.dimensions(), (240, 160), "{kind}");
        let corner = shown.get_pixel(2, 2).0;
        assert!(corner[..3].iter().all(|&v| v > 230), "{kind}: {corner:?}");
    }
}

#[test]
fn a_mypaint_canvas_keeps_its_shape_though_its_merged_image_is_square() {
    // 3456×3008, merged image 64×64: the preview is the thumbnail, 256×223.
    let made = design("ora-mypaint");
    let shown = preview(&std::fs::read(&made.file).unwrap(), 512, "ora");
    assert_eq!(shown.image.dimensions(), (256, 223));
    let small = preview(&std::fs::read(&made.file).unwrap(), 128, "ora").image;
    assert_eq!(small.dimensions(), (128, 111));
}

#[test]
fn a_pdf_shows_its_first_page_as_its_drawing_does() {
    // Inkscape's PDF of poster.svg (300×200 px, 225×150 pt), against the
    // SVG drawn by resvg.
    let pdf = preview(&fixture("poster.pdf"), 512, "poster.pdf");
    assert_eq!(pdf.image.dimensions(), (225, 150));
    assert_eq!(pdf.fidelity(), "exact");
    let svg = preview(&fixture("poster.svg"), 225, "poster.svg").image;
    assert_eq!(svg.dimensions(), (225, 150));
    let (mut sum, mut far) = (0u64, 0usize);
    for (a, b) in pdf.image.pixels().zip(svg.pixels()) {
        let d: u32 = (0..3).map(|c| u32::from(a.0[c].abs_diff(b.0[c]))).sum();
        sum += u64::from(d);
        far += usize::from(d > 96);
    }
    let mean = sum as f64 / (225.0 * 150.0 * 3.0);
    assert!(mean < 3.0, "mean difference {mean:.2}");
    // Only the shapes' anti-aliased edges differ much.
    assert!(far < 225 * 150 / 50, "{far} pixels far apart");
    // Fitted and never enlarged.
    assert_eq!(
        preview(&fixture("poster.pdf"), 100, "small")
            .image
            .dimensions(),
        (100, 67)
    );
}

#[test]
fn a_pdfx_shows_through_its_output_intent() {
    // Cyan ink on a press whose profile prints cyan as red.
    let made = design("pdfx");
    let shown = preview(&std::fs::read(&made.file).unwrap(), 512, "pdfx").image;
    assert_eq!(shown.dimensions(), (140, 100));
    let square = shown.get_pixel(70, 50).0;
    let expected = &made.rgba[..3];
    for c in 0..3 {
        assert!(
            square[c].abs_diff(expected[c]) <= 40,
            "the square is {square:?}; Little CMS prints {expected:?}"
        );
    }
    // Without the intent it would be cyan (0, 174, 239).
    assert!(square[0] > 200 && square[2] < 80, "{square:?}");
    // The paper stays white.
    assert!(shown.get_pixel(2, 2).0[..3].iter().all(|&v| v > 245));
}

/// A DOS EPS's TIFF, found by the test's own reading of the header.
fn eps_tiff(eps: &[u8]) -> image::RgbaImage {
    let field = |at: usize| u32::from_le_bytes(eps[at..at + 4].try_into().unwrap()) as usize;
    let (offset, len) = (field(20), field(24));
    image::load_from_memory_with_format(&eps[offset..offset + len], image::ImageFormat::Tiff)
        .unwrap()
        .into_rgba8()
}

#[test]
fn an_eps_shows_its_tiff_preview_and_says_who_saved_it() {
    for (name, by) in [
        ("illustrator-cs6-preview.eps", "Adobe Illustrator(R) 16.0"),
        ("poster-tiff.eps", "cairo 1.16.0"),
    ] {
        let eps = fixture(name);
        let tiff = eps_tiff(&eps);
        let shown = preview(&eps, 4096, name);
        assert_eq!(shown.image.dimensions(), tiff.dimensions(), "{name}");
        let differ = shown
            .image
            .pixels()
            .zip(tiff.pixels())
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(differ, 0, "{name}: {differ} pixels differ");
        let longer = tiff.width().max(tiff.height());
        assert_eq!(
            shown.fidelity(),
            format!("saved; by=\"{by}\"; size={longer}"),
            "{name}"
        );
    }
    // Illustrator's EPS without its binary header: the XMP thumbnail (44×256).
    let eps = fixture("illustrator-cs6-preview.eps");
    let field = |at: usize| u32::from_le_bytes(eps[at..at + 4].try_into().unwrap()) as usize;
    let postscript = &eps[field(4)..field(4) + field(8)];
    let shown = preview(postscript, 4096, "PostScript");
    assert_eq!(shown.image.dimensions(), (44, 256));
    assert_eq!(shown.fidelity(), "saved; by=\"Illustrator\"; size=256");
}

#[test]
fn documents_without_a_saved_picture_say_what_they_are() {
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "poster.eps",
            fixture("poster.eps"),
            "an EPS file without a saved preview",
        ),
        (
            "clip-corrupt",
            bytes_of(&design("clip-corrupt")),
            "its database",
        ),
        (
            "indd-not-jpeg",
            bytes_of(&design("indd-not-jpeg")),
            "is not a JPEG",
        ),
        (
            "bomb-sketch",
            bytes_of(&design("bomb-sketch")),
            "a Sketch document",
        ),
    ];
    for (what, bytes, says) in cases {
        let started = Instant::now();
        match preview_bytes(&bytes, 256, &Limits::standard()) {
            Ok(p) => panic!("{what}: a preview of {:?}", p.image.dimensions()),
            Err(NoPreview(message)) => assert!(message.contains(says), "{what}: {message}"),
        }
        assert!(started.elapsed() < TIME_BUDGET, "{what}");
    }
}

fn bytes_of(made: &Made) -> Vec<u8> {
    std::fs::read(&made.file).unwrap()
}

#[test]
fn zip_bombs_in_sketch_xd_and_procreate_files_stop_at_the_bound() {
    for kind in ["sketch", "xd", "procreate"] {
        let made = design(&format!("bomb-{kind}"));
        let bytes = bytes_of(&made);
        let started = Instant::now();
        let result = preview_bytes(&bytes, 256, &Limits::standard());
        assert!(result.is_err(), "{kind}: a bomb gave a preview");
        assert!(started.elapsed() < TIME_BUDGET, "{kind}");
    }
}

/// Every document cut at each 64th of its length: a preview or a clear
/// `NoPreview`, never a panic (the guard's message) or a hang.
#[test]
fn cut_design_documents_get_no_preview_or_a_bounded_one() {
    let mut documents: Vec<(String, Vec<u8>)> = SAVED
        .iter()
        .map(|(kind, _, _)| (kind.to_string(), bytes_of(&design(kind))))
        .collect();
    for name in [
        "poster.pdf",
        "poster-tiff.eps",
        "illustrator-cs6-preview.eps",
    ] {
        documents.push((name.into(), fixture(name)));
    }
    documents.push(("pdfx".into(), bytes_of(&design("pdfx"))));
    for (what, bytes) in &documents {
        for part in 1..64 {
            let cut = &bytes[..bytes.len() * part / 64];
            let started = Instant::now();
            match preview_bytes(cut, 128, &Limits::standard()) {
                Ok(p) => assert!(p.image.width().max(p.image.height()) <= 128),
                Err(NoPreview(message)) => assert!(
                    !message.contains("reader failed"),
                    "{what} cut at {part}/64 panicked: {message}"
                ),
            }
            assert!(started.elapsed() < TIME_BUDGET, "{what} cut at {part}/64");
        }
    }
}

//! Previews true to the document's colours: CMYK and grey PSD, TIFF and
//! JPEG files written by ImageMagick with an embedded ICC profile (Debian's
//! ghostscript and icc-profiles-free profiles), each compared with what
//! ImageMagick itself (Little CMS) makes of the same file through that
//! profile. Two colour engines round and interpolate their LUTs differently,
//! so each test bounds the mean difference per channel (of 255), and its
//! 99th percentile; the naive conversions these replaced were 10 to 20 off.

use std::path::{Path, PathBuf};
use std::process::Command;

use leasedesk::preview::{render_file, Limits};

/// Debian's libgs-common: Artifex's SWOP CMYK profile (LUT-based, as print
/// profiles are), a simpler PostScript CMYK one, and sRGB.
const GHOSTSCRIPT: &str = "/usr/share/color/icc/ghostscript";
/// Debian's icc-profiles-free: a grey profile (gamma 2.2).
const GRAY_ICC: &str = "/usr/share/color/icc/Gray.icc";

fn srgb_icc() -> PathBuf {
    Path::new(GHOSTSCRIPT).join("srgb.icc")
}

/// ImageMagick's `convert`, with `args`.
pub fn convert(args: &[&str]) {
    testkit::tool::run_ok(Command::new("convert").args(args), "ImageMagick's convert");
}

/// That `ours`, our preview of `file`, is ImageMagick's within a mean
/// difference under `mean_below` and a 99th percentile of `p99_at_most` levels.
fn assert_like_imagemagick(file: &Path, ours: &image::RgbaImage, mean_below: f64, p99_at_most: u8) {
    let (mean, p99) = difference(ours, &imagemagick_view(file));
    assert!(
        mean < mean_below && p99 <= p99_at_most,
        "{}: mean {mean:.2}, 99th percentile {p99}",
        file.display()
    );
}

/// What ImageMagick shows of `file` (its first image: a PSD's composite)
/// through its embedded profile, as 8-bit sRGB: relative colorimetric, and
/// for CMYK with black-point compensation, as Photoshop shows it by default.
fn imagemagick_view(file: &Path) -> image::RgbaImage {
    let png = file.with_extension(format!(
        "{}.reference.png",
        file.extension().unwrap().to_str().unwrap()
    ));
    // ImageMagick names the colour space it read.
    let space = Command::new("identify")
        .args(["-format", "%[colorspace]"])
        .arg(format!("{}[0]", file.display()))
        .output()
        .unwrap();
    let cmyk = String::from_utf8_lossy(&space.stdout).contains("CMYK");
    convert(&[
        &format!("{}[0]", file.display()),
        if cmyk {
            "-black-point-compensation"
        } else {
            "+black-point-compensation"
        },
        "-intent",
        "Relative",
        "-profile",
        srgb_icc().to_str().unwrap(),
        "-depth",
        "8",
        png.to_str().unwrap(),
    ]);
    image::open(&png).unwrap().to_rgba8()
}

/// The mean difference of the colour channels (of 255), and the 99th
/// percentile of the channels' differences.
pub fn difference(ours: &image::RgbaImage, theirs: &image::RgbaImage) -> (f64, u8) {
    assert_eq!(ours.dimensions(), theirs.dimensions());
    let mut differences: Vec<u8> = ours
        .pixels()
        .zip(theirs.pixels())
        .flat_map(|(p, q)| (0..3).map(move |c| p.0[c].abs_diff(q.0[c])))
        .collect();
    let mean = differences.iter().map(|&d| d as f64).sum::<f64>() / differences.len() as f64;
    differences.sort_unstable();
    (mean, differences[differences.len() * 99 / 100])
}

fn preview(file: &Path) -> image::RgbaImage {
    render_file(file, 4096, &Limits::standard()).unwrap_or_else(|e| panic!("{file:?}: {e}"))
}

/// A photograph (ImageMagick's rose, widened) with a grey ramp beside it:
/// skin, reds, greens and every level of grey.
fn source(dir: &Path) -> PathBuf {
    let path = dir.join("source.png");
    convert(&[
        "rose:",
        "-resize",
        "96x64!",
        "(",
        "-size",
        "64x32",
        "gradient:white-black",
        "-rotate",
        "90",
        ")",
        "+append",
        "-profile",
        srgb_icc().to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    path
}

/// `source` converted to CMYK through `profile`, saved as `name` (its
/// extension says the format), with the profile embedded.
fn cmyk(dir: &Path, source: &Path, profile: &str, name: &str) -> PathBuf {
    let path = dir.join(name);
    convert(&[
        source.to_str().unwrap(),
        "-intent",
        "Relative",
        "-profile",
        &format!("{GHOSTSCRIPT}/{profile}"),
        "-quality",
        "100",
        path.to_str().unwrap(),
    ]);
    path
}

#[test]
fn cmyk_psd_tiff_and_jpeg_previews_go_through_their_profile() {
    let dir = tempfile::tempdir().unwrap();
    let source = source(dir.path());
    for name in ["swop.psd", "swop.tif", "swop.jpg"] {
        let file = cmyk(dir.path(), &source, "default_cmyk.icc", name);
        // Two engines interpolating one 33-point LUT: within 2 on average.
        assert_like_imagemagick(&file, &preview(&file), 2.0, 4);
    }
}

#[test]
fn the_profile_decides_the_colours_of_the_same_inks() {
    // One set of inks under two profiles: each preview follows its own.
    let dir = tempfile::tempdir().unwrap();
    let source = source(dir.path());
    let swop = cmyk(dir.path(), &source, "default_cmyk.icc", "swop.tif");
    let other = dir.path().join("other.tif");
    // The same CMYK values, the other profile embedded in place of SWOP's.
    convert(&[
        swop.to_str().unwrap(),
        "+profile",
        "icc",
        "-profile",
        &format!("{GHOSTSCRIPT}/ps_cmyk.icc"),
        other.to_str().unwrap(),
    ]);
    let (ours_swop, ours_other) = (preview(&swop), preview(&other));
    let (between, _) = difference(&ours_swop, &ours_other);
    assert!(
        between > 5.0,
        "two profiles gave nearly one preview: {between:.2}"
    );
    // A 5-point LUT in four dimensions: the engines part more, most of all
    // in the rose's saturated reds, which sRGB cannot show (blue clipped to
    // 0), where each clips in its own way.
    assert_like_imagemagick(&other, &ours_other, 3.0, 32);
}

#[test]
fn grey_psd_tiff_and_jpeg_previews_go_through_their_profile() {
    let dir = tempfile::tempdir().unwrap();
    let source = source(dir.path());
    // ImageMagick 6 writes a grey PSD whose header claims 3 channels: its
    // grey PSD is psd-tools', below.
    for name in ["grey.tif", "grey.jpg"] {
        let file = dir.path().join(name);
        convert(&[
            source.to_str().unwrap(),
            "-colorspace",
            "Gray",
            "+profile",
            "icc",
            "-profile",
            GRAY_ICC,
            "-quality",
            "100",
            file.to_str().unwrap(),
        ]);
        // A curve, no LUT: within a level.
        assert_like_imagemagick(&file, &preview(&file), 1.0, 2);
    }
}

#[test]
fn png_and_webp_previews_go_through_their_profile() {
    // Converted to Adobe RGB (1998) and tagged so: shown through sRGB as
    // it is, the greens and reds would be dull.
    let dir = tempfile::tempdir().unwrap();
    let source = source(dir.path());
    let adobe = "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc";
    let png = dir.path().join("adobe.png");
    convert(&[
        source.to_str().unwrap(),
        "-profile",
        adobe,
        png.to_str().unwrap(),
    ]);
    let webp = dir.path().join("adobe.webp");
    convert(&[
        png.to_str().unwrap(),
        "-define",
        "webp:lossless=true",
        webp.to_str().unwrap(),
    ]);
    let untagged = image::open(&png).unwrap().to_rgba8();
    for file in [png, webp] {
        let ours = preview(&file);
        // A matrix and curves, no LUT: within a level.
        assert_like_imagemagick(&file, &ours, 1.0, 2);
        let (apart, _) = difference(&ours, &untagged);
        assert!(
            apart > 2.0,
            "{file:?}: the profile changed nothing ({apart:.2})"
        );
    }
}

#[test]
fn a_tiffs_extra_sample_is_transparency_only_when_it_says_so() {
    // Half-transparent everywhere, written three ways (ExtraSamples 0, 1, 2).
    let dir = tempfile::tempdir().unwrap();
    let source = source(dir.path());
    let made = |kind: &str, compression: &str| {
        let file = dir.path().join(format!("{kind}-{compression}.tif"));
        convert(&[
            source.to_str().unwrap(),
            "-alpha",
            "set",
            "-channel",
            "A",
            "-evaluate",
            "set",
            "50%",
            "+channel",
            "-define",
            &format!("tiff:alpha={kind}"),
            // LZW with horizontal prediction, as ImageMagick writes it.
            "-compress",
            compression,
            file.to_str().unwrap(),
        ]);
        preview(&file)
    };
    let opaque = image::open(&source).unwrap().to_rgba8();
    // Unspecified: a mask or a selection, not transparency.
    for compression in ["None", "LZW"] {
        let unspecified = made("unspecified", compression);
        assert!(unspecified.pixels().all(|p| p.0[3] == 255), "{compression}");
        let (mean, p99) = difference(&unspecified, &opaque);
        assert!(
            mean < 0.5 && p99 <= 1,
            "{compression}: mean {mean:.2}, 99th percentile {p99}"
        );
    }
    // Unassociated: transparency, the colours as they are; associated: the
    // colours were multiplied by it, and are divided back.
    for kind in ["unassociated", "associated"] {
        let image = made(kind, "LZW");
        assert!(image.pixels().all(|p| p.0[3].abs_diff(128) <= 1), "{kind}");
        let (mean, p99) = difference(&image, &opaque);
        assert!(
            mean < 1.0 && p99 <= 2,
            "{kind}: mean {mean:.2}, 99th percentile {p99}"
        );
    }
}

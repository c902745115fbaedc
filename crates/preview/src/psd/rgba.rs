//! The scaled planes of a composite or of the composited layers as RGBA,
//! converted to sRGB through the document's profile (resource 1039) or the
//! defaults ([`crate::colour`]). It sees only preview-sized planes,
//! never the document's.
//!
//! CMYK is stored inverted (255 = no ink); Lab goes through D50 XYZ to sRGB.
//! A duotone shows its first ink without its curves (Photoshop keeps the one
//! channel of that ink): black as grey is shown, another colour as that ink
//! printed on white paper; a multichannel document shows its first channel.
//! Photoshop stores the colours of a transparent composite matted against
//! white, so averaging them and the alpha separately and removing the matte
//! at the end averages premultiplied colour, as a correct downscale does.

use super::document::{Document, Mode};
use crate::colour::{self, Samples};

/// The scaled planes (colours, then alpha if any) as RGBA, converted to
/// sRGB through the document's profile (Lab needs none). Photoshop writes
/// a transparent composite's colours `matted` against white.
pub(super) fn to_rgba(
    doc: &Document,
    planes: &[Vec<u8>],
    count: usize,
    width: u32,
    height: u32,
    matted: bool,
) -> image::RgbaImage {
    let mode = doc.mode;
    let colors = match mode {
        Mode::Indexed => 3,
        _ => mode.colors() as usize,
    };
    let alpha = (count > colors).then(|| &planes[colors]);
    // Photoshop mattes only these modes' transparent composites (as psd-tools reads them).
    let matted = matted && matches!(mode, Mode::Rgb | Mode::Grayscale);
    let samples = match mode {
        Mode::Rgb | Mode::Indexed | Mode::Lab => Samples::Rgb,
        Mode::Grayscale | Mode::Duotone | Mode::Bitmap | Mode::Multichannel => Samples::Gray,
        Mode::Cmyk => Samples::Cmyk,
    };
    // A duotone of a coloured first ink: that ink over white paper.
    let ink = doc.duotone_ink.filter(|_| mode == Mode::Duotone);
    let convert = doc.to_srgb(samples);
    let n = samples.per_pixel();
    let mut image = image::RgbaImage::new(width, height);
    let (w, mut row, mut rgb) = (width as usize, Vec::new(), vec![0u8; width as usize * 3]);
    for (y, out) in image.chunks_exact_mut(w * 4).enumerate() {
        row.clear();
        for i in y * w..(y + 1) * w {
            let a = alpha.map_or(255, |a| a[i]);
            match mode {
                Mode::Lab => row.extend(lab_to_srgb(planes[0][i], planes[1][i], planes[2][i])),
                // Stored inverted (255 no ink); ICC's inks are the other way.
                Mode::Cmyk => row.extend((0..4).map(|c| 255 - planes[c][i])),
                _ => row.extend((0..n).map(|c| {
                    let v = planes[c][i];
                    if matted {
                        unmatte(v, a)
                    } else {
                        v
                    }
                })),
            }
        }
        if mode == Mode::Lab {
            rgb.copy_from_slice(&row);
        } else if let Some(ink) = ink {
            for (&v, out) in row.iter().zip(rgb.chunks_exact_mut(3)) {
                out.copy_from_slice(&colour::ink_on_paper(ink, v));
            }
        } else {
            convert.convert(&row, &mut rgb);
        }
        for (x, pixel) in out.chunks_exact_mut(4).enumerate() {
            pixel[..3].copy_from_slice(&rgb[x * 3..x * 3 + 3]);
            pixel[3] = alpha.map_or(255, |a| a[y * w + x]);
        }
    }
    image
}

/// A colour matted against white, `c = a·colour + (1 − a)·255`, back to the colour.
fn unmatte(c: u8, a: u8) -> u8 {
    match a {
        255 => c,
        0 => 0,
        a => {
            let white = 255 - a as i32;
            let colour = ((c as i32 - white) * 255 + a as i32 / 2) / a as i32;
            colour.clamp(0, 255) as u8
        }
    }
}

/// 8-bit Photoshop Lab (L 0..255 for 0..100, a and b offset by 128) to sRGB.
fn lab_to_srgb(l: u8, a: u8, b: u8) -> [u8; 3] {
    let [x, y, z] =
        colour::lab_to_xyz_d50(l as f32 * 100.0 / 255.0, a as f32 - 128.0, b as f32 - 128.0);
    colour::xyz_d50_to_srgb(x, y, z)
}

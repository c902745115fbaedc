//! PDF, and Illustrator files saved PDF-compatible: page 1 drawn by `hayro`
//! (a maintained PDF rasterizer in Rust) on white paper, fitted into the
//! size asked as a page of one pixel a point would be. A PDF/X is shown as
//! printed on its output intent's press: hayro reads DeviceCMYK through a
//! SWOP-like profile of its own, which is undone and replaced by the intent's
//! profile.
//!
//! hayro needs the whole file at hand and cannot be interrupted, so the file
//! is read into memory only under [`MAX_PDF_BYTES`], and [`isolated`](super::isolated)
//! runs this reader in a child process that is killed at the deadline and
//! denied memory past the budget.

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::object::dict::keys;
use hayro::hayro_syntax::object::{Array, Dict, Name, Stream};
use hayro::hayro_syntax::{LoadPdfError, Pdf};
use hayro::vello_cpu::color::palette::css::WHITE;
use moxcms::{ColorProfile, DataColorSpace, Layout, RenderingIntent, TransformOptions};

use super::{damaged, fitted, Limits, NoPreview};

/// The largest PDF read: hayro holds the whole file.
pub const MAX_PDF_BYTES: u64 = 256 << 20;

/// The profile hayro converts DeviceCMYK with (see `assets/README.md`).
const HAYRO_CMYK: &[u8] = include_bytes!("../assets/CGATS001Compat-v2-micro.icc");

/// The largest ICC profile taken from an output intent.
const MAX_PROFILE_BYTES: usize = 4 << 20;

/// Page 1 of the PDF in `bytes`, fitted into `size`. `name` says what the
/// file is ("a PDF document", "an Adobe Illustrator document"); `None` for an
/// Illustrator document saved without PDF content, whose page 1 only says so.
pub fn render(
    bytes: Vec<u8>,
    size: u32,
    limits: &Limits,
    name: &str,
) -> Result<Option<image::RgbaImage>, NoPreview> {
    let pdf = match Pdf::new(bytes) {
        Ok(pdf) => pdf,
        Err(LoadPdfError::Decryption(_)) => {
            return Err(NoPreview(format!(
                "{name} protected by a password: no preview for it"
            )))
        }
        Err(LoadPdfError::Invalid) => {
            return Err(damaged(name, "its objects and pages cannot be found"))
        }
    };
    limits.check_time()?;
    let Some(page) = pdf.pages().first() else {
        return Err(NoPreview(format!(
            "{name} without pages: no preview for it"
        )));
    };
    if name == "an Adobe Illustrator document" && says_saved_without_pdf(page) {
        return Ok(None);
    }
    let (page_w, page_h) = page.render_dimensions();
    if !(page_w.is_finite() && page_h.is_finite() && page_w >= 1.0 && page_h >= 1.0) {
        return Err(damaged(name, "its first page has no size"));
    }
    // A point a pixel, never enlarged; a side rounds up to one pixel.
    let (width, height) = fitted(page_w.ceil() as u32, page_h.ceil() as u32, size);
    let pixmap = hayro::render(
        page,
        &hayro::RenderCache::new(),
        &InterpreterSettings::default(),
        &hayro::RenderSettings::default(),
        &hayro::PixmapSettings {
            x_scale: width as f32 / page_w,
            y_scale: height as f32 / page_h,
            bg_color: WHITE,
        },
    );
    limits.check_time()?;
    let (w, h) = (pixmap.width() as u32, pixmap.height() as u32);
    // On white paper every pixel is opaque: premultiplied is straight.
    let rgba = pixmap.data_as_u8_slice().to_vec();
    let mut image = image::RgbaImage::from_raw(w, h, rgba)
        .ok_or_else(|| damaged(name, "its page drew to a picture of the wrong size"))?;
    if let Some(intent) = output_intent_profile(&pdf) {
        through_output_intent(&mut image, &intent);
    }
    Ok(Some(image))
}

/// Whether the page is Illustrator's notice that the file was "saved
/// without PDF Content": the text of its strings, kerning left out.
fn says_saved_without_pdf(page: &hayro::hayro_syntax::page::Page<'_>) -> bool {
    let Some(content) = page.page_stream() else {
        return false;
    };
    let mut text = Vec::new();
    let mut depth = 0usize;
    for &byte in content.iter().take(64 << 10) {
        match byte {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ if depth > 0 => text.push(byte),
            _ => {}
        }
    }
    super::saved::contains(&text, b"without PDF Content")
        || super::saved::contains(&text, b"PDF Compatible File")
}

/// The ICC profile of the first output intent that has one: a PDF/X's
/// printing condition.
fn output_intent_profile(pdf: &Pdf) -> Option<Vec<u8>> {
    let catalog: Dict<'_> = pdf.xref().get(pdf.xref().root_id())?;
    let intents: Array<'_> = catalog.get(keys::OUTPUT_INTENTS)?;
    intents.iter::<Dict<'_>>().find_map(|intent| {
        let kind: Name<'_> = intent.get(keys::S)?;
        if !kind.as_ref().starts_with(b"GTS_PDFX") {
            return None;
        }
        let profile: Stream<'_> = intent.get(keys::DEST_OUTPUT_PROFILE)?;
        let data = profile.decoded().ok()?;
        (data.len() <= MAX_PROFILE_BYTES).then(|| data.into_owned())
    })
}

/// Re-reads the page's colours as printed under `intent`, a CMYK profile:
/// each sRGB colour hayro made through its own CMYK profile is taken back to
/// inks and through the intent's profile to sRGB. hayro's profile has no
/// table back to inks, so the way back is sampled: inks on a grid, both
/// profiles' colours for each, and a table over sRGB (17 points a channel)
/// whose every point takes the intent's colour of the inks that came
/// nearest it through hayro's. A profile that is not CMYK, or does not read,
/// leaves the image as it is. Colours no ink makes (an RGB photo's) are
/// shown as the press would come nearest them: a soft proof.
fn through_output_intent(image: &mut image::RgbaImage, intent: &[u8]) {
    let Some(table) = IntentTable::new(intent) else {
        return;
    };
    for pixel in image.pixels_mut() {
        let [r, g, b, _] = pixel.0;
        pixel.0[..3].copy_from_slice(&table.look_up([r, g, b]));
    }
}

/// Points a channel of the sRGB table.
const TABLE_POINTS: usize = 17;
/// Ink levels a channel sampled (0 to 255).
const INK_LEVELS: usize = 9;
/// Samples averaged for a table point.
const NEAREST: usize = 4;

/// sRGB as hayro shows DeviceCMYK, to sRGB as the intent prints it.
struct IntentTable {
    points: Vec<[f32; 3]>,
}

impl IntentTable {
    fn new(intent: &[u8]) -> Option<Self> {
        let intent = ColorProfile::new_from_slice(intent).ok()?;
        if intent.color_space != DataColorSpace::Cmyk {
            return None;
        }
        let hayros = ColorProfile::new_from_slice(HAYRO_CMYK).ok()?;
        let inks: Vec<u8> = (0..INK_LEVELS.pow(4))
            .flat_map(|i| {
                [0, 1, 2, 3].map(|channel| {
                    let level = i / INK_LEVELS.pow(channel) % INK_LEVELS;
                    (level * 255 / (INK_LEVELS - 1)) as u8
                })
            })
            .collect();
        let shown = to_srgb(&hayros, &inks)?;
        let printed = to_srgb(&intent, &inks)?;
        let step = 255.0 / (TABLE_POINTS - 1) as f32;
        let mut points = Vec::with_capacity(TABLE_POINTS.pow(3));
        let mut nearest: Vec<(u32, usize)> = Vec::with_capacity(NEAREST + 1);
        for i in 0..TABLE_POINTS.pow(3) {
            let at = [
                i / TABLE_POINTS.pow(2),
                i / TABLE_POINTS % TABLE_POINTS,
                i % TABLE_POINTS,
            ]
            .map(|n| (n as f32 * step).round() as i32);
            nearest.clear();
            for (sample, colour) in shown.chunks_exact(3).enumerate() {
                let distance: u32 = (0..3)
                    .map(|c| (i32::from(colour[c]) - at[c]).pow(2) as u32)
                    .sum();
                if nearest.len() < NEAREST || distance < nearest[NEAREST - 1].0 {
                    let place = nearest.partition_point(|&(d, _)| d <= distance);
                    nearest.insert(place, (distance, sample));
                    nearest.truncate(NEAREST);
                }
            }
            let (mut sum, mut weights) = ([0f32; 3], 0f32);
            for &(distance, sample) in &nearest {
                let weight = 1.0 / (1.0 + (distance as f32).sqrt());
                for (c, total) in sum.iter_mut().enumerate() {
                    *total += weight * f32::from(printed[sample * 3 + c]);
                }
                weights += weight;
            }
            points.push(sum.map(|total| total / weights));
        }
        Some(Self { points })
    }

    /// Trilinear between the eight points around `rgb`.
    fn look_up(&self, rgb: [u8; 3]) -> [u8; 3] {
        let scaled = rgb.map(|v| f32::from(v) * (TABLE_POINTS - 1) as f32 / 255.0);
        let low = scaled.map(|v| (v as usize).min(TABLE_POINTS - 2));
        let fraction = [0, 1, 2].map(|c| scaled[c] - low[c] as f32);
        let mut out = [0f32; 3];
        for corner in 0..8 {
            let offset = [corner >> 2 & 1, corner >> 1 & 1, corner & 1];
            let weight: f32 = (0..3)
                .map(|c| {
                    if offset[c] == 1 {
                        fraction[c]
                    } else {
                        1.0 - fraction[c]
                    }
                })
                .product();
            let index = (low[0] + offset[0]) * TABLE_POINTS.pow(2)
                + (low[1] + offset[1]) * TABLE_POINTS
                + low[2]
                + offset[2];
            for (c, value) in out.iter_mut().enumerate() {
                *value += weight * self.points[index][c];
            }
        }
        out.map(|v| v.round().clamp(0.0, 255.0) as u8)
    }
}

/// Inks (four a pixel) to sRGB through `profile`, relative colorimetric (a
/// LUT profile without that table has its perceptual one stand in, ICC.1's
/// rule).
fn to_srgb(profile: &ColorProfile, inks: &[u8]) -> Option<Vec<u8>> {
    let rendering_intent =
        if profile.lut_a_to_b_perceptual.is_some() && profile.lut_a_to_b_colorimetric.is_none() {
            RenderingIntent::Perceptual
        } else {
            RenderingIntent::RelativeColorimetric
        };
    // moxcms lays out four inks as it does RGBA.
    let transform = profile
        .create_transform_8bit(
            Layout::Rgba,
            &ColorProfile::new_srgb(),
            Layout::Rgb,
            TransformOptions {
                rendering_intent,
                ..TransformOptions::default()
            },
        )
        .ok()?;
    let mut rgb = vec![0u8; inks.len() / 4 * 3];
    transform.transform(inks, &mut rgb).ok()?;
    Some(rgb)
}

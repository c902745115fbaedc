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

use std::sync::Arc;

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
/// file is ("a PDF document", "an Illustrator document"); `None` for an
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
    if name == "an Illustrator document" && says_saved_without_pdf(page) {
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
/// those inks, then through the intent's profile to sRGB. A profile that is
/// not CMYK, or does not read, leaves the image as it is.
fn through_output_intent(image: &mut image::RgbaImage, intent: &[u8]) {
    let Some((to_inks, to_srgb)) = intent_transforms(intent) else {
        return;
    };
    let (mut rgb, mut inks, mut shown) = (Vec::new(), Vec::new(), Vec::new());
    let row_len = image.width() as usize * 4;
    for row in image.chunks_mut(row_len) {
        rgb.clear();
        rgb.extend(row.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]));
        inks.resize(rgb.len() / 3 * 4, 0);
        shown.resize(rgb.len(), 0);
        if to_inks.transform(&rgb, &mut inks).is_err()
            || to_srgb.transform(&inks, &mut shown).is_err()
        {
            return;
        }
        for (pixel, colour) in row.chunks_exact_mut(4).zip(shown.chunks_exact(3)) {
            pixel[..3].copy_from_slice(colour);
        }
    }
}

type Transform = Arc<moxcms::Transform8BitExecutor>;

fn intent_transforms(intent: &[u8]) -> Option<(Transform, Transform)> {
    let intent = ColorProfile::new_from_slice(intent).ok()?;
    if intent.color_space != DataColorSpace::Cmyk {
        return None;
    }
    let hayros = ColorProfile::new_from_slice(HAYRO_CMYK).ok()?;
    let srgb = ColorProfile::new_srgb();
    let options = TransformOptions {
        rendering_intent: RenderingIntent::RelativeColorimetric,
        ..TransformOptions::default()
    };
    // moxcms lays out four inks as it does RGBA.
    let to_inks = srgb
        .create_transform_8bit(Layout::Rgb, &hayros, Layout::Rgba, options)
        .ok()?;
    let to_srgb = intent
        .create_transform_8bit(Layout::Rgba, &srgb, Layout::Rgb, options)
        .ok()?;
    Some((to_inks, to_srgb))
}

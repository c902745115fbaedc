//! The raster formats the `image` crate decodes: PNG, JPEG, GIF (its first
//! frame), WebP, TIFF and BMP. The decoder's header gives the dimensions and
//! the pixel type, so a decode over the budget is refused before any pixel is
//! read; `image::Limits` bounds the decoder's own allocations as well. These
//! decoders cannot be interrupted: the memory bound is what bounds their time.
//! CMYK, and a TIFF's extra sample, are `cmyk`'s: this module never reads inks.

use std::io::{BufRead, Seek};

use image::{DynamicImage, ImageDecoder, ImageFormat};

use super::cmyk::{self, ExtraSample};
use super::colour::rgba_to_srgb;
use super::scale::{shrink, RESIZE_SCRATCH};
use super::{damaged, fitted, Limits, NoPreview};

/// No side may exceed this, whatever the budget: PSB's own maximum.
const MAX_SIDE: u32 = 300_000;

/// The raster format a file's first bytes announce.
pub fn format_of(head: &[u8]) -> Option<ImageFormat> {
    let riff_webp = head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP";
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageFormat::Png)
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageFormat::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(ImageFormat::Gif)
    } else if riff_webp {
        Some(ImageFormat::WebP)
    } else if is_tiff(head) && !super::sniff::is_tiff_raw(head) {
        Some(ImageFormat::Tiff)
    } else if head.starts_with(b"BM") && head.len() >= 18 && bmp_header_plausible(head) {
        Some(ImageFormat::Bmp)
    } else {
        None
    }
}

/// Classic and BigTIFF, either byte order.
pub fn is_tiff(head: &[u8]) -> bool {
    head.starts_with(b"II*\0")
        || head.starts_with(b"MM\0*")
        || head.starts_with(b"II+\0")
        || head.starts_with(b"MM\0+")
}

/// "BM" alone starts too many text files; a BMP's info header has one of a
/// few known sizes.
fn bmp_header_plausible(head: &[u8]) -> bool {
    let info_size = u32::from_le_bytes([head[14], head[15], head[16], head[17]]);
    matches!(info_size, 12 | 16 | 40 | 52 | 56 | 64 | 108 | 124)
}

/// The format's name as the messages say it.
pub fn name_of(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "a PNG image",
        ImageFormat::Jpeg => "a JPEG image",
        ImageFormat::Gif => "a GIF image",
        ImageFormat::WebP => "a WebP image",
        ImageFormat::Tiff => "a TIFF image",
        ImageFormat::Bmp => "a BMP image",
        _ => "an image",
    }
}

/// Decodes `reader` (at its start) as `format` and fits it into `size`.
pub fn render<R: BufRead + Seek>(
    mut reader: R,
    format: ImageFormat,
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    if format == ImageFormat::Jpeg && !jpeg_is_whole(&mut reader, limits)? {
        return Err(NoPreview(
            "a JPEG image, damaged or truncated: its last scan has no end marker".into(),
        ));
    }
    let mut extra = ExtraSample::Straight;
    match format {
        ImageFormat::Jpeg => {
            if let Some(image) = cmyk::jpeg(&mut reader, size, limits)? {
                return Ok(image);
            }
        }
        ImageFormat::Tiff => {
            let (image, extra_sample) = cmyk::tiff(&mut reader, size, limits)?;
            if let Some(image) = image {
                return Ok(image);
            }
            extra = extra_sample;
        }
        _ => {}
    }
    let (image, icc) = decode_with_profile(reader, format, size, limits)?;
    let (width, height) = fitted(image.width(), image.height(), size);
    let image = shrink(image, width, height);
    let grey = !image.color().has_color();
    let mut rgba = image.into_rgba8();
    match extra {
        ExtraSample::Straight => {}
        ExtraSample::NotAlpha => rgba.pixels_mut().for_each(|p| p.0[3] = 255),
        ExtraSample::Premultiplied => rgba.pixels_mut().for_each(|p| {
            let a = p.0[3] as u32;
            for c in 0..3 {
                if let Some(colour) = (p.0[c] as u32 * 255 + a / 2).checked_div(a) {
                    p.0[c] = colour.min(255) as u8;
                }
            }
        }),
    }
    if let Some(icc) = icc {
        rgba_to_srgb(&mut rgba, grey, &icc);
    }
    Ok(rgba)
}

/// Decodes `reader` as `format`, shrunk to fit into `size`, and the
/// image's embedded ICC profile.
fn decode_with_profile<R: BufRead + Seek>(
    reader: R,
    format: ImageFormat,
    size: u32,
    limits: &Limits,
) -> Result<(DynamicImage, Option<Vec<u8>>), NoPreview> {
    let name = name_of(format);
    let damaged = |e: image::ImageError| describe(name, e);
    let mut image_reader = image::ImageReader::with_format(reader, format);
    let mut decoder_limits = image::Limits::default();
    decoder_limits.max_alloc = Some(limits.memory);
    decoder_limits.max_image_width = Some(MAX_SIDE);
    decoder_limits.max_image_height = Some(MAX_SIDE);
    // into_decoder hands these to the decoder.
    image_reader.limits(decoder_limits);
    let mut decoder = image_reader.into_decoder().map_err(damaged)?;
    let (width, height) = decoder.dimensions();
    if width == 0 || height == 0 {
        return Err(NoPreview(format!(
            "{name} of {width}×{height} pixels: nothing to show"
        )));
    }
    let pixel_bytes = u64::from(decoder.color_type().bytes_per_pixel());
    // The decoded image, then the preview and a resize's scratch beside it.
    let (fit_w, fit_h) = fitted(width, height, size);
    let decoded = u64::from(width) * u64::from(height) * pixel_bytes;
    let beside = u64::from(fit_w) * u64::from(fit_h) * 8 + RESIZE_SCRATCH;
    limits.claim(
        decoded.saturating_add(beside),
        &format!("{name} of {width}×{height} pixels"),
    )?;
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    // A profile that cannot be read is as good as none.
    let icc = decoder.icc_profile().ok().flatten();
    let image = DynamicImage::from_decoder(decoder).map_err(damaged)?;
    limits.check_time()?;
    // Shrink first and turn after: turning the small image is cheaper.
    let mut image = shrink(image, fit_w, fit_h);
    image.apply_orientation(orientation);
    Ok((image, icc))
}

/// The JPEG decoder fills a cut-off scan with grey rather than failing, so a
/// truncated JPEG is caught here: its last start-of-scan marker (FF DA) must
/// be followed by an end-of-image marker (FF D9). Inside scan data an FF is
/// always followed by 00 or a restart marker, so neither pair appears there
/// by chance; an EXIF thumbnail's own markers come before the main scan.
/// Streams the file once, then rewinds it.
fn jpeg_is_whole(reader: &mut (impl BufRead + Seek), limits: &Limits) -> Result<bool, NoPreview> {
    let (mut position, mut last_scan, mut last_end) = (0u64, None, None);
    let mut previous_ff = false;
    loop {
        limits.check_time()?;
        let chunk = reader.fill_buf().map_err(super::unreadable)?;
        if chunk.is_empty() {
            break;
        }
        for (i, byte) in chunk.iter().enumerate() {
            if previous_ff {
                match byte {
                    0xDA => last_scan = Some(position + i as u64),
                    0xD9 => last_end = Some(position + i as u64),
                    _ => {}
                }
            }
            previous_ff = *byte == 0xFF;
        }
        let n = chunk.len();
        reader.consume(n);
        position += n as u64;
    }
    reader.rewind().map_err(super::unreadable)?;
    Ok(match (last_scan, last_end) {
        (Some(scan), Some(end)) => end > scan,
        _ => false,
    })
}

/// A decoder's error in the API's words, naming the format.
pub fn describe(name: &str, error: image::ImageError) -> NoPreview {
    match error {
        image::ImageError::Limits(e) => NoPreview(format!(
            "{name} too large to decode within the memory budget: {e}"
        )),
        image::ImageError::Unsupported(e) => {
            NoPreview(format!("{name} of a kind that cannot be previewed: {e}"))
        }
        image::ImageError::IoError(e) if e.kind() != std::io::ErrorKind::UnexpectedEof => {
            super::unreadable(e)
        }
        other => damaged(name, other),
    }
}

//! CMYK JPEG and TIFF, which the `image` crate turns into RGB by a formula
//! that ignores the file's profile: read here as inks, scaled, then
//! converted through the embedded profile (or a SWOP-like default). Also a
//! TIFF's extra sample, which is transparency only when `ExtraSamples` says
//! so.

use std::io::{BufRead, Seek};

use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;

use super::colour::{Samples, ToSrgb};
use super::scale::BoxPlane;
use super::{fitted, unreadable, Limits, NoPreview};

/// The largest side of a JPEG or TIFF read here (PSB's own maximum).
const MAX_SIDE: u32 = 300_000;

/// Inks (ICC's convention: 0 is none), four interleaved a pixel, scaled into
/// `size` and converted to sRGB.
fn inks_to_rgba(
    inks: &[u8],
    width: u32,
    height: u32,
    icc: Option<&[u8]>,
    size: u32,
    limits: &Limits,
    what: &str,
) -> Result<image::RgbaImage, NoPreview> {
    let (out_w, out_h) = fitted(width, height, size);
    let mut planes = (0..4)
        .map(|_| BoxPlane::new(width, height, out_w, out_h, limits, what))
        .collect::<Result<Vec<_>, _>>()?;
    let mut row = vec![0u8; width as usize];
    for (y, source) in inks.chunks_exact(width as usize * 4).enumerate() {
        if y % 256 == 0 {
            limits.check_time()?;
        }
        for (c, plane) in planes.iter_mut().enumerate() {
            for (o, pixel) in row.iter_mut().zip(source.chunks_exact(4)) {
                *o = pixel[c];
            }
            plane.push_row(&row);
        }
    }
    let planes: Vec<Vec<u8>> = planes.into_iter().map(BoxPlane::finish).collect();
    let convert = ToSrgb::new(Samples::Cmyk, icc);
    let mut image = image::RgbaImage::new(out_w, out_h);
    let (w, mut cmyk, mut rgb) = (out_w as usize, Vec::new(), vec![0u8; out_w as usize * 3]);
    for (y, out) in image.chunks_exact_mut(w * 4).enumerate() {
        cmyk.clear();
        for i in y * w..(y + 1) * w {
            cmyk.extend(planes.iter().map(|p| p[i]));
        }
        convert.convert(&cmyk, &mut rgb);
        for (pixel, colour) in out.chunks_exact_mut(4).zip(rgb.chunks_exact(3)) {
            pixel[..3].copy_from_slice(colour);
            pixel[3] = 255;
        }
    }
    Ok(image)
}

/// A CMYK (or YCCK) JPEG's preview; `None` for any other JPEG.
pub fn jpeg<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Option<image::RgbaImage>, NoPreview> {
    let what = "a CMYK JPEG image";
    let len = reader.seek(std::io::SeekFrom::End(0)).map_err(unreadable)?;
    reader.rewind().map_err(unreadable)?;
    limits.claim(len, what)?;
    let mut bytes = Vec::with_capacity(len as usize);
    reader.read_to_end(&mut bytes).map_err(unreadable)?;
    reader.rewind().map_err(unreadable)?;
    let options = DecoderOptions::default()
        .set_strict_mode(false)
        .set_max_width(MAX_SIDE as usize)
        .set_max_height(MAX_SIDE as usize);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(&bytes), options);
    if decoder.decode_headers().is_err() {
        // The image crate's decoder says what is wrong.
        return Ok(None);
    }
    let space = match decoder.input_colorspace() {
        Some(space @ (ColorSpace::CMYK | ColorSpace::YCCK)) => space,
        _ => return Ok(None),
    };
    let (width, height) = decoder.dimensions().unwrap_or((0, 0));
    let (width, height) = (width as u32, height as u32);
    if width == 0 || height == 0 {
        return Err(NoPreview(format!(
            "{what} of {width}×{height} pixels: nothing to show"
        )));
    }
    let (out_w, out_h) = fitted(width, height, size);
    limits.claim(
        len + u64::from(width) * u64::from(height) * 4 + u64::from(out_w) * u64::from(out_h) * 8,
        &format!("{what} of {width}×{height} pixels"),
    )?;
    // Asked for what it holds, the decoder hands the samples over as they are.
    decoder.set_options(decoder.options().jpeg_set_out_colorspace(space));
    let mut samples = decoder
        .decode()
        .map_err(|e| NoPreview(format!("{what}, damaged or truncated: {e}")))?;
    limits.check_time()?;
    let icc = decoder.icc_profile();
    let inverted = has_adobe_marker(&bytes);
    drop(bytes);
    for pixel in samples.chunks_exact_mut(4) {
        if space == ColorSpace::YCCK {
            // YCC holds the inverted C, M and Y: decoded to "RGB", they are the inks.
            let [r, g, b] = ycc_to_rgb(pixel[0], pixel[1], pixel[2]);
            pixel[..3].copy_from_slice(&[r, g, b]);
            pixel[3] = 255 - pixel[3];
        } else if inverted {
            // Photoshop writes CMYK JPEGs inverted (Adobe's APP14 marker).
            for v in pixel.iter_mut() {
                *v = 255 - *v;
            }
        }
    }
    inks_to_rgba(&samples, width, height, icc.as_deref(), size, limits, what).map(Some)
}

/// JFIF's YCbCr to RGB.
fn ycc_to_rgb(y: u8, cb: u8, cr: u8) -> [u8; 3] {
    let (y, cb, cr) = (y as f32, cb as f32 - 128.0, cr as f32 - 128.0);
    [
        y + 1.402 * cr,
        y - 0.344_136 * cb - 0.714_136 * cr,
        y + 1.772 * cb,
    ]
    .map(|v| (v + 0.5).clamp(0.0, 255.0) as u8)
}

/// Whether the JPEG has Adobe's APP14 marker, among the markers before its
/// first scan.
fn has_adobe_marker(jpeg: &[u8]) -> bool {
    let mut at = 2;
    while at + 4 <= jpeg.len() && jpeg[at] == 0xFF {
        let marker = jpeg[at + 1];
        if marker == 0xDA {
            break;
        }
        let len = u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]) as usize;
        if marker == 0xEE && jpeg.get(at + 4..at + 9) == Some(b"Adobe") {
            return true;
        }
        at += 2 + len;
    }
    false
}

/// What a TIFF's extra sample is, from `ExtraSamples`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraSample {
    /// No extra sample, or one that is transparency, unassociated.
    Straight,
    /// Transparency that the colours were multiplied by.
    Premultiplied,
    /// Unspecified data (a mask, a saved selection): not transparency.
    NotAlpha,
}

/// A CMYK TIFF's preview (`Ok(Some)`); for any other TIFF, what its extra
/// sample is, for the `image` crate's decode to follow (`Ok(None)` and the
/// second value).
pub fn tiff<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<(Option<image::RgbaImage>, ExtraSample), NoPreview> {
    let what = "a CMYK TIFF image";
    let result = (|| {
        let mut tiff_limits = tiff::decoder::Limits::default();
        tiff_limits.decoding_buffer_size = limits.memory as usize;
        tiff_limits.intermediate_buffer_size = limits.memory as usize;
        // Room for print profiles, which run to a few MiB.
        tiff_limits.ifd_value_size = 10 << 20;
        let mut decoder = match tiff::decoder::Decoder::new(&mut *reader) {
            Ok(decoder) => decoder.with_limits(tiff_limits),
            // The image crate's decoder says what is wrong.
            Err(_) => return Ok((None, ExtraSample::Straight)),
        };
        let extra = match decoder.get_tag_u16_vec(tiff::tags::Tag::ExtraSamples) {
            Ok(kinds) => match kinds.first() {
                Some(1) => ExtraSample::Premultiplied,
                Some(2) => ExtraSample::Straight,
                Some(_) => ExtraSample::NotAlpha,
                None => ExtraSample::Straight,
            },
            Err(_) => ExtraSample::Straight,
        };
        let bytes_per_ink: u64 = match decoder.colortype() {
            Ok(tiff::ColorType::CMYK(8)) => 1,
            Ok(tiff::ColorType::CMYK(16)) => 2,
            _ => return Ok((None, extra)),
        };
        let (width, height) = decoder
            .dimensions()
            .map_err(|e| NoPreview(format!("{what}, damaged: {e}")))?;
        if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
            return Err(NoPreview(format!(
                "{what} of {width}×{height} pixels: nothing to show"
            )));
        }
        let (out_w, out_h) = fitted(width, height, size);
        let samples = u64::from(width) * u64::from(height) * 4;
        // 16-bit inks, then their 8-bit copy.
        let decoded = samples * bytes_per_ink + if bytes_per_ink == 2 { samples } else { 0 };
        limits.claim(
            decoded + u64::from(out_w) * u64::from(out_h) * 8,
            &format!("{what} of {width}×{height} pixels"),
        )?;
        // A profile the file names but cannot give is a cut file.
        let icc = match decoder.find_tag(tiff::tags::Tag::IccProfile) {
            Ok(None) => None,
            Ok(Some(value)) => Some(
                value
                    .into_u8_vec()
                    .map_err(|e| NoPreview(format!("{what}, damaged: its colour profile: {e}")))?,
            ),
            Err(e) => {
                return Err(NoPreview(format!(
                    "{what}, damaged: its colour profile: {e}"
                )))
            }
        };
        let inks = match decoder.read_image() {
            Ok(tiff::decoder::DecodingResult::U8(inks)) if inks.len() as u64 == samples => inks,
            Ok(tiff::decoder::DecodingResult::U16(inks)) if inks.len() as u64 == samples => inks
                .into_iter()
                .map(|v| ((v as u32 * 255 + 32767) / 65535) as u8)
                .collect(),
            Ok(_) => {
                return Err(NoPreview(format!(
                    "{what} of a layout that cannot be previewed (planar)"
                )))
            }
            Err(e) => return Err(NoPreview(format!("{what}, damaged or truncated: {e}"))),
        };
        limits.check_time()?;
        inks_to_rgba(&inks, width, height, icc.as_deref(), size, limits, what)
            .map(|image| (Some(image), extra))
    })();
    reader.rewind().map_err(unreadable)?;
    result
}

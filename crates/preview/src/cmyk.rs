//! CMYK JPEG and TIFF, which the `image` crate turns into RGB by a formula
//! that ignores the file's profile: read here as inks, scaled, then
//! converted through the embedded profile (or a SWOP-like default). Also a
//! TIFF's extra sample, which is transparency only when `ExtraSamples` says
//! so. Any other JPEG or TIFF it hands back to `raster` undecoded.

use std::io::{BufRead, Seek};

use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;

use super::colour::{rgba_to_srgb, Samples, ToSrgb};
use super::scale::{eight_bits, shrink, shrink_interleaved};
use super::{damaged, fitted, unreadable, Limits, NoPreview};

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
    let planes = shrink_interleaved(inks, 4, (width, height), (out_w, out_h), limits, what)?;
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
    // Only a JPEG of four components is read whole here.
    let four = frame_components(reader).map_err(unreadable)? == Some(4);
    reader.rewind().map_err(unreadable)?;
    if !four {
        return Ok(None);
    }
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
    // The file, the decoder's coefficients (a progressive one keeps two
    // bytes for each of the four components of every pixel) and its output.
    limits.claim(
        len + u64::from(width) * u64::from(height) * (8 + 4)
            + u64::from(out_w) * u64::from(out_h) * 8,
        &format!("{what} of {width}×{height} pixels"),
    )?;
    // Asked for what it holds, the decoder hands the samples over as they are.
    decoder.set_options(decoder.options().jpeg_set_out_colorspace(space));
    let mut samples = decoder.decode().map_err(|e| damaged(what, e))?;
    limits.check_time()?;
    let icc = decoder.icc_profile();
    let orientation = decoder
        .exif()
        .and_then(|exif| image::metadata::Orientation::from_exif_chunk(exif))
        .unwrap_or(image::metadata::Orientation::NoTransforms);
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
    let image = inks_to_rgba(&samples, width, height, icc.as_deref(), size, limits, what)?;
    let mut image = image::DynamicImage::ImageRgba8(image);
    image.apply_orientation(orientation);
    Ok(Some(image.into_rgba8()))
}

/// The number of components of a JPEG's frame (its SOF marker), read from
/// its markers in turn; `None` if there is none before the first scan.
fn frame_components<R: std::io::Read>(reader: &mut R) -> std::io::Result<Option<u8>> {
    let mut marker = [0u8; 4];
    reader.read_exact(&mut marker[..2])?;
    loop {
        if reader.read_exact(&mut marker).is_err() || marker[0] != 0xFF {
            return Ok(None);
        }
        let len = u16::from_be_bytes([marker[2], marker[3]]) as u64;
        match marker[1] {
            // Start of frame (every kind but DHT, JPG and DAC): the
            // precision, the height and the width come before the count.
            0xC0..=0xCF if !matches!(marker[1], 0xC4 | 0xC8 | 0xCC) => {
                let mut frame = [0u8; 6];
                return Ok(reader.read_exact(&mut frame).ok().map(|_| frame[5]));
            }
            0xDA | 0xD9 => return Ok(None),
            _ => {
                let skip = len.saturating_sub(2);
                let mut segment = <&mut R as std::io::Read>::take(&mut *reader, skip);
                if std::io::copy(&mut segment, &mut std::io::sink())? < skip {
                    return Ok(None);
                }
            }
        }
    }
}

/// A TIFF's size, refused when empty or past the largest side.
fn tiff_dimensions<R: std::io::Read + Seek>(
    decoder: &mut tiff::decoder::Decoder<R>,
    what: &str,
) -> Result<(u32, u32), NoPreview> {
    let (width, height) = decoder
        .dimensions()
        .map_err(|e| NoPreview(format!("{what}, damaged: {e}")))?;
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(NoPreview(format!(
            "{what} of {width}×{height} pixels: nothing to show"
        )));
    }
    Ok((width, height))
}

/// A TIFF's ICC profile (tag 34675), if it has one. A profile the file
/// names but cannot give is a cut file.
fn tiff_profile<R: std::io::Read + Seek>(
    decoder: &mut tiff::decoder::Decoder<R>,
    what: &str,
) -> Result<Option<Vec<u8>>, NoPreview> {
    let damaged =
        |e: tiff::TiffError| NoPreview(format!("{what}, damaged: its colour profile: {e}"));
    match decoder
        .find_tag(tiff::tags::Tag::IccProfile)
        .map_err(damaged)?
    {
        None => Ok(None),
        Some(value) => value.into_u8_vec().map(Some).map_err(damaged),
    }
}

/// A decoded TIFF's samples, in the two depths previewed.
enum TiffSamples {
    Eight(Vec<u8>),
    Sixteen(Vec<u16>),
}

impl TiffSamples {
    fn len(&self) -> usize {
        match self {
            TiffSamples::Eight(samples) => samples.len(),
            TiffSamples::Sixteen(samples) => samples.len(),
        }
    }
}

/// The image `decoder` reads, as 8- or 16-bit samples; another kind is
/// refused as `what` of `refused`, a decoding error as damage.
fn tiff_samples<R: std::io::Read + Seek>(
    decoder: &mut tiff::decoder::Decoder<R>,
    what: &str,
    refused: &str,
) -> Result<TiffSamples, NoPreview> {
    match decoder.read_image() {
        Ok(tiff::decoder::DecodingResult::U8(samples)) => Ok(TiffSamples::Eight(samples)),
        Ok(tiff::decoder::DecodingResult::U16(samples)) => Ok(TiffSamples::Sixteen(samples)),
        Ok(_) => Err(NoPreview(format!("{what} of {refused}"))),
        Err(e) => Err(damaged(what, e)),
    }
}

/// A grey or RGB TIFF whose extra sample is not transparency: its colours,
/// opaque, scaled into `size` and converted through its profile.
fn without_extra_sample<R: std::io::Read + Seek>(
    decoder: &mut tiff::decoder::Decoder<R>,
    colours: tiff::ColorType,
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let what = "a TIFF image";
    let (width, height) = tiff_dimensions(decoder, what)?;
    let (grey, bytes) = match colours {
        tiff::ColorType::Gray(depth) => (true, depth as u64 / 8),
        tiff::ColorType::RGB(depth) => (false, depth as u64 / 8),
        _ => unreachable!("only grey and RGB come here"),
    };
    let pixels = u64::from(width) * u64::from(height);
    let kept = if grey { 1 } else { 3 };
    // The decoded samples (the extra one too), then the colours kept.
    limits.claim(
        pixels * (kept + 1) * bytes + pixels * 4,
        &format!("{what} of {width}×{height} pixels"),
    )?;
    let icc = tiff_profile(decoder, what)?;
    // tiff 0.11 drops the extra sample before it undoes horizontal
    // prediction, then undoes it a whole pixel (extra sample included) back:
    // each row is redone here, a pixel of the colours alone back.
    let predicted = decoder
        .find_tag_unsigned::<u16>(tiff::tags::Tag::Predictor)
        .ok()
        .flatten()
        == Some(2);
    let stored = decoder
        .find_tag_unsigned::<u16>(tiff::tags::Tag::SamplesPerPixel)
        .ok()
        .flatten()
        .unwrap_or(kept as u16 + 1) as usize;
    // Prediction starts afresh at each chunk's row: a strip's is the
    // image's row, a tile's a part of it.
    let chunk_width = match decoder.get_chunk_type() {
        tiff::decoder::ChunkType::Strip => width,
        tiff::decoder::ChunkType::Tile => decoder.chunk_dimensions().0.max(1),
    } as usize;
    let layout = (width as usize, chunk_width, stored, kept as usize);
    // Redone only when the decoder gave the colours alone, as 0.11.3 does.
    let redo = |len: usize| predicted && len as u64 == pixels * kept;
    let samples: Vec<u8> = match tiff_samples(decoder, what, "a kind that cannot be previewed")? {
        TiffSamples::Eight(mut samples) => {
            if redo(samples.len()) {
                redo_prediction(&mut samples, layout);
            }
            samples
        }
        TiffSamples::Sixteen(mut samples) => {
            if redo(samples.len()) {
                redo_prediction(&mut samples, layout);
            }
            samples.into_iter().map(eight_bits).collect()
        }
    };
    limits.check_time()?;
    // The tiff crate gives the colours alone, or (another version) every sample.
    let per_pixel = samples.len() as u64 / pixels;
    if per_pixel < kept || samples.len() as u64 != pixels * per_pixel {
        return Err(NoPreview(format!(
            "{what}, damaged: its samples do not fill its pixels"
        )));
    }
    let image = image::RgbaImage::from_fn(width, height, |x, y| {
        let at = ((y as u64 * width as u64 + x as u64) * per_pixel) as usize;
        let p = &samples[at..at + kept as usize];
        if grey {
            image::Rgba([p[0], p[0], p[0], 255])
        } else {
            image::Rgba([p[0], p[1], p[2], 255])
        }
    });
    drop(samples);
    let (w, h) = fitted(width, height, size);
    let mut image = shrink(image::DynamicImage::ImageRgba8(image), w, h).into_rgba8();
    if let Some(icc) = icc {
        rgba_to_srgb(&mut image, grey, &icc);
    }
    Ok(image)
}

/// Each chunk row (`chunk_width` pixels of `right` samples, within image
/// rows of `width` pixels) summed `wrong` samples back where it should have
/// been summed `right` back: the differences recovered, then summed again.
fn redo_prediction<T: Copy + WrappingSample>(
    samples: &mut [T],
    (width, chunk_width, wrong, right): (usize, usize, usize, usize),
) {
    if width == 0 || chunk_width == 0 {
        return;
    }
    for image_row in samples.chunks_exact_mut(width * right) {
        for row in image_row.chunks_mut(chunk_width * right) {
            for j in (wrong..row.len()).rev() {
                row[j] = row[j].minus(row[j - wrong]);
            }
            for j in right..row.len() {
                row[j] = row[j].plus(row[j - right]);
            }
        }
    }
}

/// A sample that wraps as TIFF's horizontal prediction does.
trait WrappingSample {
    fn plus(self, other: Self) -> Self;
    fn minus(self, other: Self) -> Self;
}

impl WrappingSample for u8 {
    fn plus(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    fn minus(self, other: Self) -> Self {
        self.wrapping_sub(other)
    }
}

impl WrappingSample for u16 {
    fn plus(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    fn minus(self, other: Self) -> Self {
        self.wrapping_sub(other)
    }
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
            // The tiff crate names such a file by its colours alone, and the
            // image crate then reads its samples out of step: read here.
            Ok(colours @ (tiff::ColorType::RGB(8 | 16) | tiff::ColorType::Gray(8 | 16)))
                if extra == ExtraSample::NotAlpha =>
            {
                return without_extra_sample(&mut decoder, colours, size, limits)
                    .map(|image| (Some(image), extra));
            }
            _ => return Ok((None, extra)),
        };
        let (width, height) = tiff_dimensions(&mut decoder, what)?;
        let (out_w, out_h) = fitted(width, height, size);
        let samples = u64::from(width) * u64::from(height) * 4;
        // 16-bit inks, then their 8-bit copy.
        let decoded = samples * bytes_per_ink + if bytes_per_ink == 2 { samples } else { 0 };
        limits.claim(
            decoded + u64::from(out_w) * u64::from(out_h) * 8,
            &format!("{what} of {width}×{height} pixels"),
        )?;
        let icc = tiff_profile(&mut decoder, what)?;
        let planar = "a layout that cannot be previewed (planar)";
        let read = tiff_samples(&mut decoder, what, planar)?;
        if read.len() as u64 != samples {
            return Err(NoPreview(format!("{what} of {planar}")));
        }
        let inks: Vec<u8> = match read {
            TiffSamples::Eight(inks) => inks,
            TiffSamples::Sixteen(inks) => inks.into_iter().map(eight_bits).collect(),
        };
        limits.check_time()?;
        inks_to_rgba(&inks, width, height, icc.as_deref(), size, limits, what)
            .map(|image| (Some(image), extra))
    })();
    reader.rewind().map_err(unreadable)?;
    result
}

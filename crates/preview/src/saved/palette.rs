//! A TIFF of palette indices with a transparency sample beside each (what
//! Illustrator and ImageMagick write as an EPS preview), which the TIFF
//! readers refuse: its strips are read and unpacked here (none, PackBits,
//! LZW or Deflate) and looked up in the colour map. Only small images (a
//! preview's) are read this way.

use std::io::{Cursor, Read};

use tiff::decoder::Decoder;
use tiff::tags::Tag;

/// The most pixels such a TIFF may have here.
const MAX_PIXELS: u64 = 4096 * 4096;

/// The image, if `tiff` is a palette TIFF (one index, maybe one extra
/// sample, of 1, 2, 4 or 8 bits) that reads; `None` otherwise.
pub fn decode(tiff: &[u8]) -> Option<image::RgbaImage> {
    let mut decoder = Decoder::new(Cursor::new(tiff)).ok()?;
    if decoder
        .find_tag_unsigned::<u16>(Tag::PhotometricInterpretation)
        .ok()??
        != 3
    {
        return None;
    }
    let (width, height) = decoder.dimensions().ok()?;
    if width == 0 || height == 0 || u64::from(width) * u64::from(height) > MAX_PIXELS {
        return None;
    }
    let samples = decoder
        .find_tag_unsigned::<u16>(Tag::SamplesPerPixel)
        .ok()?
        .unwrap_or(1);
    let bits = *decoder.get_tag_u16_vec(Tag::BitsPerSample).ok()?.first()?;
    if !matches!(samples, 1 | 2) || !matches!(bits, 1 | 2 | 4 | 8) {
        return None;
    }
    let map = decoder.get_tag_u16_vec(Tag::ColorMap).ok()?;
    let entries = 1usize << bits;
    if map.len() < entries * 3 {
        return None;
    }
    let colour = |index: usize| {
        [map[index], map[entries + index], map[2 * entries + index]].map(|v| (v >> 8) as u8)
    };
    let rows_per_strip = decoder
        .find_tag_unsigned::<u32>(Tag::RowsPerStrip)
        .ok()?
        .unwrap_or(height)
        .clamp(1, height);
    let compression = decoder
        .find_tag_unsigned::<u16>(Tag::Compression)
        .ok()?
        .unwrap_or(1);
    let offsets = decoder.get_tag_u64_vec(Tag::StripOffsets).ok()?;
    let counts = decoder.get_tag_u64_vec(Tag::StripByteCounts).ok()?;
    let mut image = image::RgbaImage::new(width, height);
    let row_bits = width as usize * samples as usize * bits as usize;
    let row_bytes = row_bits.div_ceil(8);
    for (strip, (&offset, &count)) in (0u32..).zip(offsets.iter().zip(&counts)) {
        let packed = tiff.get(
            usize::try_from(offset).ok()?..usize::try_from(offset.checked_add(count)?).ok()?,
        )?;
        let rows = rows_per_strip.min(height.saturating_sub(strip * rows_per_strip));
        let bytes = unpack(packed, compression, rows as usize * row_bytes)?;
        let first_row = strip * rows_per_strip;
        for (r, row) in bytes.chunks(row_bytes).enumerate() {
            let y = first_row + r as u32;
            if y >= height {
                break;
            }
            for x in 0..width as usize {
                let sample = |s: usize| {
                    let bit = (x * samples as usize + s) * bits as usize;
                    let byte = row.get(bit / 8).copied().unwrap_or(0);
                    let shift = 8 - bits as usize - bit % 8;
                    ((byte >> shift) & ((1u16 << bits) - 1) as u8) as usize
                };
                let [r, g, b] = colour(sample(0));
                let alpha = if samples == 2 {
                    (sample(1) * 255 / ((1 << bits) - 1)) as u8
                } else {
                    255
                };
                image.put_pixel(x as u32, y, image::Rgba([r, g, b, alpha]));
            }
        }
    }
    Some(image)
}

/// A strip's bytes, unpacked to at most `expected` bytes.
fn unpack(packed: &[u8], compression: u16, expected: usize) -> Option<Vec<u8>> {
    match compression {
        1 => Some(packed[..packed.len().min(expected)].to_vec()),
        5 => {
            let mut decoder =
                weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
            let mut out = Vec::with_capacity(expected);
            let result = decoder.into_vec(&mut out).decode(packed);
            result.status.ok()?;
            out.truncate(expected);
            Some(out)
        }
        8 | 32946 => {
            let mut out = Vec::with_capacity(expected);
            flate2::read::ZlibDecoder::new(packed)
                .take(expected as u64)
                .read_to_end(&mut out)
                .ok()?;
            Some(out)
        }
        32773 => {
            let mut out = Vec::with_capacity(expected);
            let mut i = 0;
            while i < packed.len() && out.len() < expected {
                let n = packed[i] as i8;
                i += 1;
                if n >= 0 {
                    let run = packed.get(i..i + n as usize + 1)?;
                    out.extend_from_slice(run);
                    i += run.len();
                } else if n != -128 {
                    out.extend(std::iter::repeat_n(
                        *packed.get(i)?,
                        (1 - isize::from(n)) as usize,
                    ));
                    i += 1;
                }
            }
            out.truncate(expected);
            Some(out)
        }
        _ => None,
    }
}

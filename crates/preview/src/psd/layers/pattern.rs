//! The patterns a pattern fill (`PtFl`) tiles: read from the document's
//! `Patt` blocks (after its layers) by their ID, each channel of the
//! pattern's image raw or RLE, into a tile of the document's samples.
//! Only what is needed is read, and a tile is bounded by the budget.

use std::io::{Read, Seek};

use crate::psd::cursor::{be16, be32, Cursor};
use crate::psd::document::Mode;
use crate::{Limits, NoPreview};

/// A pattern's image: `colors` samples and then alpha for each pixel
/// (0..1, as the document stores its colours).
pub(super) struct Tile {
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) samples: Vec<f32>,
}

/// The largest side of a pattern read.
const MAX_SIDE: u32 = 4096;

/// The pattern `id` from the blocks at `ranges`, as samples of a document
/// of `mode` with `colors` colour channels; `None` if it is not there, is
/// damaged, or is of another colour mode.
pub(super) fn find(
    file: &mut (impl Read + Seek),
    ranges: &[std::ops::Range<u64>],
    id: &str,
    mode: Mode,
    colors: usize,
    limits: &Limits,
) -> Result<Option<Tile>, NoPreview> {
    for range in ranges {
        let mut at = Cursor::new(range.start, range.end, 4096);
        while range.end.saturating_sub(at.pos()) >= 4 {
            limits.check_time()?;
            let Ok(len) = at.take(file, 4).map(be32) else {
                break;
            };
            let start = at.pos();
            let next = start + (len as u64).next_multiple_of(4);
            if let Some(tile) =
                read_pattern(&mut at, file, id, mode, colors, limits, start + len as u64)?
            {
                return Ok(Some(tile));
            }
            at.seek_to(next);
        }
    }
    Ok(None)
}

/// The pattern at `at` (its version first), if it is `id`.
fn read_pattern(
    at: &mut Cursor,
    file: &mut (impl Read + Seek),
    id: &str,
    mode: Mode,
    colors: usize,
    limits: &Limits,
    end: u64,
) -> Result<Option<Tile>, NoPreview> {
    let Ok(head) = at.take(file, 12).map(|b| b.to_vec()) else {
        return Ok(None);
    };
    if be32(&head) != 1 {
        return Ok(None);
    }
    let pattern_mode = be32(&head[4..]);
    // The name (UTF-16), then the ID (a Pascal string).
    let Ok(units) = at.take(file, 4).map(be32) else {
        return Ok(None);
    };
    at.seek_to(at.pos() + units as u64 * 2);
    let Ok(id_len) = at.take(file, 1).map(|b| b[0] as usize) else {
        return Ok(None);
    };
    let Ok(found) = at.take(file, id_len).map(|b| b.to_vec()) else {
        return Ok(None);
    };
    if String::from_utf8_lossy(&found).trim_end_matches('\0') != id.trim_end_matches('\0') {
        return Ok(None);
    }
    // Only a pattern of the document's own colours is tiled.
    let same = matches!(
        (pattern_mode, mode),
        (1, Mode::Grayscale | Mode::Duotone) | (3, Mode::Rgb) | (4, Mode::Cmyk) | (9, Mode::Lab)
    );
    if !same {
        return Ok(None);
    }
    // The virtual memory array list: version, length, rectangle, channels.
    let Ok(list) = at.take(file, 28).map(|b| b.to_vec()) else {
        return Ok(None);
    };
    let (top, left, bottom, right) = (
        be32(&list[8..]),
        be32(&list[12..]),
        be32(&list[16..]),
        be32(&list[20..]),
    );
    let slots = be32(&list[24..]) as usize + 2;
    let (height, width) = (bottom.saturating_sub(top), right.saturating_sub(left));
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE || slots > 60 {
        return Ok(None);
    }
    let (w, h) = (width as usize, height as usize);
    limits.claim(
        (w * h) as u64 * (colors as u64 + 1) * 4 + (w * h) as u64 * 2,
        "a pattern of a Photoshop document",
    )?;
    let mut samples = vec![1f32; w * h * (colors + 1)];
    let mut colour = 0;
    for slot in 0..slots {
        limits.check_time()?;
        let Ok(written) = at.take(file, 4).map(be32) else {
            return Ok(None);
        };
        if written == 0 {
            continue;
        }
        let Ok(len) = at.take(file, 4).map(be32) else {
            return Ok(None);
        };
        if len == 0 {
            continue;
        }
        let data_end = at.pos() + len as u64;
        if len < 23 || data_end > end {
            return Ok(None);
        }
        let Ok(b) = at.take(file, 23).map(|b| b.to_vec()) else {
            return Ok(None);
        };
        let (depth, compression) = (be16(&b[20..]), b[22]);
        if depth != 8 {
            return Ok(None);
        }
        let Some(plane) = plane(at, file, compression, w, h, data_end) else {
            return Ok(None);
        };
        // The colour slots, then two more, the last transparency.
        let channel = if slot == slots - 1 {
            colors
        } else if colour < colors {
            colour += 1;
            colour - 1
        } else {
            at.seek_to(data_end);
            continue;
        };
        for (i, &v) in plane.iter().enumerate() {
            samples[i * (colors + 1) + channel] = v as f32 / 255.0;
        }
        at.seek_to(data_end);
    }
    if colour < colors {
        return Ok(None);
    }
    Ok(Some(Tile {
        width: w,
        height: h,
        samples,
    }))
}

/// One channel's `width`×`height` samples, raw (0) or RLE (1).
fn plane(
    at: &mut Cursor,
    file: &mut (impl Read + Seek),
    compression: u8,
    width: usize,
    height: usize,
    end: u64,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(width * height);
    match compression {
        0 => {
            for _ in 0..height {
                out.extend_from_slice(at.take(file, width).ok()?);
            }
        }
        1 => {
            let mut counts = Vec::with_capacity(height);
            for _ in 0..height {
                counts.push(be16(at.take(file, 2).ok()?) as usize);
            }
            for count in counts {
                if count > 2 * width + 2 || at.pos() + count as u64 > end {
                    return None;
                }
                let packed = at.take(file, count).ok()?.to_vec();
                let row_start = out.len();
                let mut i = 0;
                while i < packed.len() && out.len() - row_start < width {
                    let n = packed[i] as i8;
                    i += 1;
                    if n >= 0 {
                        let run = packed.get(i..i + n as usize + 1)?;
                        out.extend_from_slice(run);
                        i += n as usize + 1;
                    } else if n != -128 {
                        let v = *packed.get(i)?;
                        out.extend(std::iter::repeat_n(v, (1 - n as isize) as usize));
                        i += 1;
                    }
                }
                out.resize(row_start + width, 0);
            }
        }
        _ => return None,
    }
    Some(out)
}

impl Tile {
    /// The samples at document pixel (`x`, `y`), the tile's corner at the
    /// canvas's, scaled by `scale`.
    pub(super) fn at(&self, x: f64, y: f64, scale: f64) -> &[f32] {
        let n = self.samples.len() / (self.width * self.height);
        let tx = ((x / scale).floor() as i64).rem_euclid(self.width as i64) as usize;
        let ty = ((y / scale).floor() as i64).rem_euclid(self.height as i64) as usize;
        let i = (ty * self.width + tx) * n;
        &self.samples[i..i + n]
    }
}

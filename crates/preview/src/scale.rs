//! Scaling down: as rows arrive, a box filter over source rows, so a reader
//! of a 16000×16000 image holds only one output row of sums at a time; and
//! an image already decoded whole, shrunk by the `image` crate ([`shrink`]).
//! It never scales up and never converts colours (that is `colour`'s).
//!
//! Each output pixel of a [`BoxPlane`] is the mean of the source pixels that
//! map onto it (`x * out_width / width`, the same for rows): whole source
//! pixels, no fractional weights, which is what a preview needs and keeps
//! the inner loop a plain sum the compiler vectorises.

use image::DynamicImage;

use super::{Limits, NoPreview};

/// A resize's intermediate image (full width × new height, in f32 RGBA) may
/// take this much; past it the area-averaging `thumbnail` is used, which
/// needs none and is just as good when shrinking by a large factor.
pub const RESIZE_SCRATCH: u64 = 64 << 20;

/// Scales `image` to exactly `width`×`height` (never larger than it is).
pub fn shrink(image: DynamicImage, width: u32, height: u32) -> DynamicImage {
    if image.width() == width && image.height() == height {
        return image;
    }
    let scratch = u64::from(image.width()) * u64::from(height) * 16;
    if scratch <= RESIZE_SCRATCH {
        image.resize_exact(width, height, image::imageops::FilterType::Triangle)
    } else {
        image.thumbnail_exact(width, height)
    }
}

/// One plane (one channel) scaled from `width`×`height` to
/// `out_width`×`out_height` (each no larger than its source side).
pub struct BoxPlane {
    width: u32,
    height: u32,
    out_width: u32,
    out_height: u32,
    /// Where each output column's source columns start; `out_width + 1`
    /// entries, the last being `width`.
    column_starts: Vec<u32>,
    /// Sums of the output row being gathered.
    sums: Vec<u64>,
    /// Source rows given so far.
    rows_in: u32,
    /// Source rows gathered into `sums`.
    rows_in_sums: u32,
    /// The finished output, `out_width`×`out_height`, row after row.
    out: Vec<u8>,
}

impl BoxPlane {
    /// A plane ready for `height` rows of `width` samples. Claims its memory
    /// (a few bytes per output pixel and per column) from `limits`.
    pub fn new(
        width: u32,
        height: u32,
        out_width: u32,
        out_height: u32,
        limits: &Limits,
        what: &str,
    ) -> Result<Self, NoPreview> {
        assert!(out_width >= 1 && out_width <= width.max(1));
        assert!(out_height >= 1 && out_height <= height.max(1));
        let bytes = (out_width as u64 + 1) * (4 + 8) + out_width as u64 * out_height as u64;
        limits.claim(bytes, what)?;
        let column_starts = (0..=out_width)
            .map(|ox| first_source_of(ox, width, out_width))
            .collect();
        Ok(Self {
            width,
            height,
            out_width,
            out_height,
            column_starts,
            sums: vec![0; out_width as usize],
            rows_in: 0,
            rows_in_sums: 0,
            out: Vec::with_capacity(out_width as usize * out_height as usize),
        })
    }

    /// Adds the next source row (`width` samples).
    pub fn push_row(&mut self, row: &[u8]) {
        debug_assert_eq!(row.len(), self.width as usize);
        if self.rows_in >= self.height {
            return;
        }
        for (ox, sum) in self.sums.iter_mut().enumerate() {
            let start = self.column_starts[ox] as usize;
            let end = self.column_starts[ox + 1] as usize;
            *sum += row[start..end].iter().map(|&v| v as u32).sum::<u32>() as u64;
        }
        self.rows_in += 1;
        self.rows_in_sums += 1;
        let oy = self.out.len() as u32 / self.out_width;
        if self.rows_in == first_source_of(oy + 1, self.height, self.out_height) {
            self.emit_row();
        }
    }

    fn emit_row(&mut self) {
        let rows = self.rows_in_sums as u64;
        for (ox, sum) in self.sums.iter_mut().enumerate() {
            let columns = (self.column_starts[ox + 1] - self.column_starts[ox]) as u64;
            let count = (columns * rows).max(1);
            self.out.push(((*sum + count / 2) / count) as u8);
            *sum = 0;
        }
        self.rows_in_sums = 0;
    }

    /// Whether every source row has been given.
    pub fn is_complete(&self) -> bool {
        self.rows_in >= self.height
    }

    /// The scaled plane, `out_width`×`out_height` samples, row after row.
    pub fn finish(self) -> Vec<u8> {
        debug_assert_eq!(
            self.out.len(),
            self.out_width as usize * self.out_height as usize
        );
        self.out
    }
}

/// Interleaved 8-bit pixels of `channels` samples each, `width`×`height`
/// of them, scaled into `out_width`×`out_height`: one plane a channel.
pub fn shrink_interleaved(
    pixels: &[u8],
    channels: usize,
    (width, height): (u32, u32),
    (out_width, out_height): (u32, u32),
    limits: &Limits,
    what: &str,
) -> Result<Vec<Vec<u8>>, NoPreview> {
    let mut planes = (0..channels)
        .map(|_| BoxPlane::new(width, height, out_width, out_height, limits, what))
        .collect::<Result<Vec<_>, _>>()?;
    let mut row = vec![0u8; width as usize];
    for (y, source) in pixels.chunks_exact(width as usize * channels).enumerate() {
        if y % 256 == 0 {
            limits.check_time()?;
        }
        for (c, plane) in planes.iter_mut().enumerate() {
            for (o, pixel) in row.iter_mut().zip(source.chunks_exact(channels)) {
                *o = pixel[c];
            }
            plane.push_row(&row);
        }
    }
    Ok(planes.into_iter().map(BoxPlane::finish).collect())
}

/// A 16-bit sample as 8 bits, rounded.
pub fn eight_bits(v: u16) -> u8 {
    ((v as u32 * 255 + 32767) / 65535) as u8
}

/// The first source index (of `len`) that maps onto output index `out`
/// (of `out_len`): the smallest `x` with `x * out_len / len >= out`.
fn first_source_of(out: u32, len: u32, out_len: u32) -> u32 {
    ((out as u64 * len as u64).div_ceil(out_len as u64)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaled(
        width: u32,
        height: u32,
        ow: u32,
        oh: u32,
        pixel: impl Fn(u32, u32) -> u8,
    ) -> Vec<u8> {
        let mut plane = BoxPlane::new(width, height, ow, oh, &Limits::standard(), "test").unwrap();
        for y in 0..height {
            let row: Vec<u8> = (0..width).map(|x| pixel(x, y)).collect();
            plane.push_row(&row);
        }
        assert!(plane.is_complete());
        plane.finish()
    }

    #[test]
    fn same_size_is_the_identity() {
        let out = scaled(5, 3, 5, 3, |x, y| (x * 10 + y) as u8);
        assert_eq!(
            out,
            [0, 10, 20, 30, 40, 1, 11, 21, 31, 41, 2, 12, 22, 32, 42]
        );
    }

    #[test]
    fn whole_blocks_average_exactly() {
        // 4×4 blocks of one value each, and a block of alternating 0/255.
        let out = scaled(8, 4, 2, 1, |x, y| {
            if x < 4 {
                100
            } else if (x + y) % 2 == 0 {
                0
            } else {
                255
            }
        });
        assert_eq!(out, [100, 128]);
    }

    #[test]
    fn uneven_factors_cover_every_source_pixel_once() {
        // 7 → 3 columns, 5 → 2 rows: each output a mean of whole pixels.
        let out = scaled(7, 5, 3, 2, |_, _| 200);
        assert_eq!(out, [200; 6]);
        let starts: Vec<u32> = (0..=3).map(|o| first_source_of(o, 7, 3)).collect();
        assert_eq!(starts, [0, 3, 5, 7]);
    }
}

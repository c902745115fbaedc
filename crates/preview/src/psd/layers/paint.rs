//! One layer's (or mask's) pixels read row by row, premultiplied by their
//! transparency and mask, averaged into the preview's grid and blended onto
//! a canvas as each preview row completes. It never holds a layer's rows
//! beyond the one being read.

use std::io::{Read, Seek};

use super::blend::{blend_pixel, Blend};
use super::fill::{Fill, Overlay};
use super::pattern::{self, Tile};
use super::records::Mask;
use super::vector::Grid;
use super::{Canvas, Compositor};
use crate::psd::channel::{to_8bit, ChannelRows, Compression, LINEAR_32};
use crate::psd::cursor::{be16, Cursor};
use crate::psd::{damaged, CHUNK, ROWS_PER_TIME_CHECK};
use crate::NoPreview;

impl<F: Read + Seek> Compositor<'_, F> {
    /// A mask's mean value over each preview pixel (0..1): `outside` where
    /// its rectangle does not reach.
    pub(super) fn mask_coverage(&mut self, l: usize, mask: Mask) -> Result<Vec<f32>, NoPreview> {
        let (w, h) = (self.out_width as usize, self.out_height as usize);
        let mut sums = vec![0f64; w * h];
        let mut counted = vec![0u32; w * h];
        let channel = self.layers[l].channels.iter().position(|c| c.id == mask.id);
        if let Some(channel) = channel {
            let rect = mask.rect;
            let mut reader = self.channel_reader(l, channel, rect.width(), rect.height())?;
            let mut samples = vec![0u8; rect.width() as usize];
            for row in 0..rect.height() {
                if row % ROWS_PER_TIME_CHECK as u64 == 0 {
                    self.limits.check_time()?;
                }
                let y = rect.top + row as i64;
                if y >= self.height as i64 {
                    break;
                }
                self.read_samples(&mut reader, &mut samples, true, l, row)?;
                if y < 0 {
                    continue;
                }
                let oy = (y as u64 * self.out_height as u64 / self.height as u64) as usize;
                for (x, &m) in (rect.left..).zip(&samples) {
                    if x < 0 || x >= self.width as i64 {
                        continue;
                    }
                    let o = oy * w + self.column_of[x as usize] as usize;
                    sums[o] += mask.applied(m) as f64;
                    counted[o] += 1;
                }
            }
        }
        Ok((0..w * h)
            .map(|o| {
                let cell = self.columns_in[o % w] as f64 * self.rows_in[o / w] as f64;
                let outside = (cell - counted[o] as f64) * mask.applied(mask.outside) as f64;
                ((sums[o] + outside) / cell / 255.0) as f32
            })
            .collect())
    }

    /// A reader of channel `c` of layer `l`, whose rows are `width` wide.
    fn channel_reader(
        &mut self,
        l: usize,
        c: usize,
        width: u64,
        height: u64,
    ) -> Result<ChannelRows, NoPreview> {
        let kind = self.doc.kind();
        let channel = &self.layers[l].channels[c];
        let row_bytes = (width * self.doc.depth as u64).div_ceil(8);
        self.limits
            .claim(row_bytes * 4 + CHUNK as u64 * 2, &self.what)?;
        let end = channel.offset + channel.len;
        if channel.len < 2 {
            return Err(damaged(kind, "a layer's channel without its compression"));
        }
        let mut at = Cursor::new(channel.offset, end, 16);
        let code = be16(
            at.take(self.file, 2)
                .map_err(|e| e.in_section(kind, "its layers"))?,
        );
        let start = channel.offset + 2;
        let count_bytes = if self.doc.psb { 4 } else { 2 };
        let depth = self.doc.depth;
        Ok(match Compression::of(code) {
            Some(Compression::Raw) => ChannelRows::raw(Cursor::new(start, end, CHUNK), row_bytes),
            Some(Compression::Rle) => {
                let table = height * count_bytes;
                if start + table > end {
                    return Err(damaged(kind, "a layer's table of row lengths is cut short"));
                }
                let counts = Cursor::new(start, start + table, CHUNK.min(table.max(1) as usize));
                ChannelRows::rle(
                    Cursor::new(start + table, end, CHUNK.max(2 * row_bytes as usize + 2)),
                    counts,
                    row_bytes,
                )
            }
            Some(Compression::Zip { predicted }) => ChannelRows::zip(
                Cursor::new(start, end, CHUNK),
                0,
                predicted,
                depth,
                row_bytes,
            ),
            None => {
                return Err(damaged(
                    kind,
                    format_args!("unknown compression {code} of a layer"),
                ))
            }
        })
    }

    /// The next row of `reader` as 8-bit samples; `linear` for
    /// transparency and masks (32-bit ones are not light).
    fn read_samples(
        &mut self,
        reader: &mut ChannelRows,
        out: &mut [u8],
        linear: bool,
        l: usize,
        row: u64,
    ) -> Result<(), NoPreview> {
        reader.read_row(self.file, self.doc, row as u32, l, self.limits)?;
        if self.doc.depth == 8 {
            out.copy_from_slice(&reader.row);
        } else {
            let depth = if linear && self.doc.depth == 32 {
                LINEAR_32
            } else {
                self.doc.depth
            };
            to_8bit(&reader.row, depth, out);
        }
        Ok(())
    }

    /// The share of each preview pixel layer (or group) `l`'s vector mask
    /// reveals, where it applies: always to a layer without pixels of its
    /// own (a fill or shape layer), to one with pixels only when they were
    /// stored without it ([`super::records::Layer::vector_over_pixels`]).
    pub(super) fn vector_coverage(&mut self, l: usize) -> Result<Option<Vec<f32>>, NoPreview> {
        let layer = &self.layers[l];
        let Some(mask) = &layer.vector_mask else {
            return Ok(None);
        };
        if layer.has_pixels() && !layer.vector_over_pixels {
            return Ok(None);
        }
        let (w, h) = (self.out_width as u64, self.out_height as u64);
        // The mask and the rows it is summed from.
        self.limits.claim(w * h * 8 + h * 8, &self.what)?;
        let rows: Vec<u32> = std::iter::once(0)
            .chain(self.rows_in.iter().scan(0u32, |at, n| {
                *at += n;
                Some(*at)
            }))
            .collect();
        let grid = Grid {
            columns: &self.column_starts,
            rows: &rows,
        };
        let limits = self.limits;
        let mut coverage = mask.coverage(grid, || limits.check_time())?;
        let density = layer.vector_density as f32 / 255.0;
        if density < 1.0 {
            coverage
                .iter_mut()
                .for_each(|c| *c = *c * density + 1.0 - density);
        }
        Ok(Some(coverage))
    }

    /// Paints layer `l` onto `target` with `opacity` and `blend` (`atop`
    /// keeps `target`'s transparency: a clipped layer): its pixels, or its
    /// fill where it has none, within its vector mask where that applies.
    pub(super) fn paint_layer(
        &mut self,
        l: usize,
        target: &mut Canvas,
        opacity: f32,
        blend: Blend,
        atop: bool,
    ) -> Result<(), NoPreview> {
        if opacity <= 0.0 {
            return Ok(());
        }
        let vector = self.vector_coverage(l)?;
        let layer = &self.layers[l];
        if !layer.has_pixels() && layer.fill_content.is_some() {
            return self.paint_fill(l, target, opacity, blend, atop, vector.as_deref());
        }
        self.paint(l, target, opacity, blend, atop, vector.as_deref())
    }

    /// A fill layer without pixels: its content over the whole canvas,
    /// within its mask and `vector` mask.
    fn paint_fill(
        &mut self,
        l: usize,
        target: &mut Canvas,
        opacity: f32,
        blend: Blend,
        atop: bool,
        vector: Option<&[f32]>,
    ) -> Result<(), NoPreview> {
        let coverage = match self.layers[l].mask {
            Some(mask) => Some(self.mask_coverage(l, mask)?),
            None => None,
        };
        let layers = self.layers;
        let Some(content) = layers[l].fill_content.as_ref() else {
            return Ok(());
        };
        let (colors, n) = (self.colors, self.colors + 1);
        let tile = match content {
            Fill::Pattern(id, _) => {
                let found = pattern::find(
                    self.file,
                    &self.doc.patterns,
                    id,
                    self.doc.mode,
                    colors,
                    self.limits,
                )?;
                // A pattern not found (or of other colours) is left out.
                let Some(tile) = found else {
                    self.approximate = true;
                    return Ok(());
                };
                Some(tile)
            }
            _ => None,
        };
        let (out_w, out_h) = (self.out_width as usize, self.out_height as usize);
        let (mut source, mut sample) = (vec![0f32; n], vec![0f32; n]);
        if let Fill::Solid(colour) = content {
            for (s, &c) in sample[..colors].iter_mut().zip(colour) {
                *s = c;
            }
            sample[colors] = 1.0;
        }
        let mut row_start = 0u32;
        for oy in 0..out_h {
            if oy % ROWS_PER_TIME_CHECK as usize == 0 {
                self.limits.check_time()?;
            }
            // The middle of the document pixels this preview row covers.
            let y = row_start as f64 + (self.rows_in[oy] as f64 - 1.0) / 2.0;
            let rows = (row_start, self.rows_in[oy]);
            row_start += self.rows_in[oy];
            for ox in 0..out_w {
                let i = oy * out_w + ox;
                let share = coverage.as_ref().map_or(1.0, |c| c[i]) * vector.map_or(1.0, |v| v[i]);
                if share <= 0.0 {
                    continue;
                }
                if let Fill::Gradient(gradient) = content {
                    let x =
                        self.column_starts[ox] as f64 + (self.columns_in[ox] as f64 - 1.0) / 2.0;
                    gradient.at(x, y, self.width, self.height, &mut sample);
                }
                if let (Some(tile), Fill::Pattern(_, scale)) = (&tile, content) {
                    let columns = (self.column_starts[ox], self.columns_in[ox]);
                    tile_mean(tile, *scale, columns, rows, &mut sample);
                }
                let alpha = sample[colors] * share;
                source[..colors].copy_from_slice(&sample[..colors]);
                if let Some(overlay) = layers[l].overlay.as_ref() {
                    if self.overlay_later != Some(l) {
                        overlay.apply(&mut source[..colors]);
                    }
                }
                for s in &mut source[..colors] {
                    *s *= alpha;
                }
                source[colors] = alpha;
                blend_pixel(
                    &mut target.samples[i * n..(i + 1) * n],
                    &source,
                    opacity,
                    blend,
                    atop,
                );
            }
        }
        Ok(())
    }

    /// Paints layer `l`'s pixels onto `target` with `opacity` and `blend`,
    /// within `vector` where given; `atop` keeps `target`'s transparency (a
    /// clipped layer).
    fn paint(
        &mut self,
        l: usize,
        target: &mut Canvas,
        opacity: f32,
        blend: Blend,
        atop: bool,
        vector: Option<&[f32]>,
    ) -> Result<(), NoPreview> {
        let layers = self.layers;
        let overlay = layers[l]
            .overlay
            .as_ref()
            .filter(|_| self.overlay_later != Some(l));
        let layer = &self.layers[l];
        let rect = layer.rect;
        let (top, bottom) = (rect.top.max(0), rect.bottom.min(self.height as i64));
        let (left, right) = (rect.left.max(0), rect.right.min(self.width as i64));
        if top >= bottom || left >= right || opacity <= 0.0 {
            return Ok(());
        }
        let colors = self.colors;
        // Every reader at once (colours, transparency, mask) and the rows
        // beside them, claimed together.
        let row_bytes = (rect.width() * self.doc.depth as u64).div_ceil(8);
        let mask_width = layer.mask.map_or(0, |m| m.rect.width());
        self.limits.claim(
            (colors as u64 + 2) * (row_bytes.max(mask_width) * 6 + CHUNK as u64 * 2)
                + rect.width() * (colors as u64 + 3),
            &self.what,
        )?;
        let find = |id: i16| layer.channels.iter().position(|c| c.id == id);
        let mut readers = Vec::with_capacity(colors + 2);
        for id in 0..colors as i16 {
            let Some(c) = find(id) else {
                return Err(damaged(
                    self.doc.kind(),
                    format_args!("a layer without its channel {id}"),
                ));
            };
            readers.push(self.channel_reader(l, c, rect.width(), rect.height())?);
        }
        let alpha = match find(-1) {
            Some(c) => Some(self.channel_reader(l, c, rect.width(), rect.height())?),
            None => None,
        };
        let mask = match layer.mask {
            Some(mask) => match find(mask.id) {
                Some(c) => Some((
                    mask,
                    self.channel_reader(l, c, mask.rect.width(), mask.rect.height())?,
                    0u64,
                )),
                None => None,
            },
            None => None,
        };
        let (mut alpha, mut mask) = (alpha, mask);
        let layer_width = rect.width() as usize;
        let n = colors + 1;
        let out_w = self.out_width as usize;
        let mut samples = vec![vec![0u8; layer_width]; colors];
        let mut alpha_row = vec![255u8; layer_width];
        let mut coverage = vec![0u8; layer_width];
        let mut mask_row = Vec::new();
        // Premultiplied sums over the preview row being gathered.
        let mut sums = vec![0u64; out_w * n];
        let mut gathering: Option<usize> = None;
        let first_column = self.column_of[left as usize] as usize;
        let last_column = self.column_of[right as usize - 1] as usize;
        for row in 0..(bottom - rect.top) as u64 {
            if row % ROWS_PER_TIME_CHECK as u64 == 0 {
                self.limits.check_time()?;
            }
            let y = rect.top + row as i64;
            for (c, reader) in readers.iter_mut().enumerate() {
                let mut out = std::mem::take(&mut samples[c]);
                self.read_samples(reader, &mut out, false, l, row)?;
                samples[c] = out;
            }
            if let Some(reader) = alpha.as_mut() {
                self.read_samples(reader, &mut alpha_row, true, l, row)?;
            }
            // The mask's value at each of this row's pixels.
            let mask_here = match mask.as_mut() {
                Some((m, reader, next)) => {
                    let (mw, inside) = (
                        m.rect.width() as usize,
                        y >= m.rect.top && y < m.rect.bottom,
                    );
                    mask_row.resize(mw, 0);
                    if inside {
                        // Rows of the mask above this one are read past.
                        let wanted = (y - m.rect.top) as u64;
                        while *next <= wanted {
                            if *next % ROWS_PER_TIME_CHECK as u64 == 0 {
                                self.limits.check_time()?;
                            }
                            self.read_samples(reader, &mut mask_row, true, l, *next)?;
                            *next += 1;
                        }
                    }
                    Some((*m, inside))
                }
                None => None,
            };
            if y < 0 {
                continue;
            }
            let oy = (y as u64 * self.out_height as u64 / self.height as u64) as usize;
            if gathering.is_some_and(|g| g != oy) {
                self.emit(
                    &mut sums,
                    gathering.take().expect("a row"),
                    first_column..=last_column,
                    target,
                    (opacity, blend, atop),
                    (vector, overlay),
                );
            }
            gathering = Some(oy);
            // Each pixel's share: its transparency, times the mask's value.
            let shares: &[u8] = match mask_here {
                Some((m, inside)) => {
                    for (i, (share, &a)) in coverage.iter_mut().zip(&alpha_row).enumerate() {
                        let x = rect.left + i as i64;
                        let value = m.applied(if inside && x >= m.rect.left && x < m.rect.right {
                            mask_row[(x - m.rect.left) as usize]
                        } else {
                            m.outside
                        });
                        *share = ((a as u32 * value as u32 + 127) / 255) as u8;
                    }
                    &coverage
                }
                None => &alpha_row,
            };
            // Whole source pixels into each preview column they fall in.
            for ox in first_column..=last_column {
                let start = (self.column_starts[ox] as i64).max(left) - rect.left;
                let end = (self.column_starts[ox + 1] as i64).min(right) - rect.left;
                if start >= end {
                    continue;
                }
                let (start, end) = (start as usize, end as usize);
                let sum = &mut sums[ox * n..(ox + 1) * n];
                let shares = &shares[start..end];
                match colors {
                    1 => gather([&samples[0][start..end]], shares, sum),
                    3 => gather(
                        [
                            &samples[0][start..end],
                            &samples[1][start..end],
                            &samples[2][start..end],
                        ],
                        shares,
                        sum,
                    ),
                    _ => gather(
                        [
                            &samples[0][start..end],
                            &samples[1][start..end],
                            &samples[2][start..end],
                            &samples[3][start..end],
                        ],
                        shares,
                        sum,
                    ),
                }
            }
        }
        if let Some(oy) = gathering {
            self.emit(
                &mut sums,
                oy,
                first_column..=last_column,
                target,
                (opacity, blend, atop),
                (vector, overlay),
            );
        }
        Ok(())
    }

    /// Blends a gathered preview row into `target` (with its opacity,
    /// blend mode and whether atop), within `vector`, and clears the sums.
    fn emit(
        &self,
        sums: &mut [u64],
        oy: usize,
        columns: std::ops::RangeInclusive<usize>,
        target: &mut Canvas,
        (opacity, blend, atop): (f32, Blend, bool),
        (vector, overlay): (Option<&[f32]>, Option<&Overlay>),
    ) {
        let n = self.colors + 1;
        let out_w = self.out_width as usize;
        let mut source = vec![0f32; n];
        for ox in columns {
            let sum = &mut sums[ox * n..(ox + 1) * n];
            if sum[self.colors] == 0 {
                continue;
            }
            let cell = self.columns_in[ox] as f32 * self.rows_in[oy] as f32 * 255.0;
            for c in 0..self.colors {
                source[c] = sum[c] as f32 / (cell * 255.0);
            }
            source[self.colors] = sum[self.colors] as f32 / cell;
            sum.fill(0);
            if let Some(overlay) = overlay {
                let alpha = source[self.colors];
                let straight = &mut source[..self.colors];
                straight.iter_mut().for_each(|c| *c /= alpha);
                overlay.apply(straight);
                straight.iter_mut().for_each(|c| *c *= alpha);
            }
            if let Some(vector) = vector {
                let share = vector[oy * out_w + ox];
                source.iter_mut().for_each(|s| *s *= share);
            }
            let at = (oy * out_w + ox) * n;
            blend_pixel(
                &mut target.samples[at..at + n],
                &source,
                opacity,
                blend,
                atop,
            );
        }
    }
}

/// The mean of `tile` (at `scale`) over the document's columns and rows
/// (each a start and a count) a preview pixel covers, from up to 4×4 of
/// them: colours straight, then alpha, into `out`.
fn tile_mean(tile: &Tile, scale: f64, columns: (u32, u32), rows: (u32, u32), out: &mut [f32]) {
    let colors = out.len() - 1;
    let (kx, ky) = (columns.1.clamp(1, 4), rows.1.clamp(1, 4));
    out.fill(0.0);
    for j in 0..ky {
        let y = rows.0 as f64 + ((j as f64 + 0.5) * rows.1 as f64 / ky as f64).floor();
        for i in 0..kx {
            let x = columns.0 as f64 + ((i as f64 + 0.5) * columns.1 as f64 / kx as f64).floor();
            let s = tile.at(x, y, scale);
            let a = s[colors];
            for c in 0..colors {
                out[c] += s[c] * a;
            }
            out[colors] += a;
        }
    }
    let alpha = out[colors];
    for v in out[..colors].iter_mut() {
        *v = if alpha > 0.0 { *v / alpha } else { 0.0 };
    }
    out[colors] = alpha / (kx * ky) as f32;
}

/// Adds `colours` premultiplied by `shares`, and the shares, to `sum`.
fn gather<const N: usize>(colours: [&[u8]; N], shares: &[u8], sum: &mut [u64]) {
    // Slices of the shares' length: the loop then needs no bounds checks.
    let colours = colours.map(|c| &c[..shares.len()]);
    let mut totals = [0u64; N];
    let mut share_total = 0u64;
    for (i, &share) in shares.iter().enumerate() {
        let share = share as u64;
        for (total, colour) in totals.iter_mut().zip(&colours) {
            *total += colour[i] as u64 * share;
        }
        share_total += share;
    }
    for (s, total) in sum.iter_mut().zip(totals) {
        *s += total;
    }
    sum[N] += share_total;
}

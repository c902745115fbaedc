//! Vector masks (`vmsk`, `vsms`): a shape layer's outline or any layer's
//! vector mask, read from its path records and rasterised with
//! anti-aliasing straight onto the preview's grid (each pixel the share of
//! it the path covers, from the signed area its edges sweep), so a shape
//! never costs more than a canvas of the preview's size. Subpaths merged
//! into one component are filled by the even-odd rule; components combine
//! by their operation (union, subtract, intersect, exclude), as psd-tools
//! and Photoshop do.

/// A vector mask's knots, one list per subpath, in document pixels.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct VectorMask {
    pub(super) invert: bool,
    pub(super) disabled: bool,
    /// With no path, whether it reveals all.
    pub(super) fill_all: bool,
    pub(super) subpaths: Vec<Subpath>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Subpath {
    /// How it combines with what came before: 0 exclude, 1 union, 2
    /// subtract, 3 intersect; -1 merges it into the component before.
    pub(super) operation: i16,
    /// Each knot: the control point before, the anchor, the one after (x, y).
    pub(super) knots: Vec<[(f64, f64); 3]>,
}

/// Subpaths beyond this many are ignored (the preview then approximate).
const MAX_SUBPATHS: usize = 4096;

/// Reads a `vmsk`/`vsms` block of a document `width`×`height`: `None` when
/// damaged.
pub(super) fn read(data: &[u8], width: u32, height: u32) -> Option<VectorMask> {
    let header = data.get(..8)?;
    let flags = u32::from_be_bytes(header[4..8].try_into().ok()?);
    let mut mask = VectorMask {
        invert: flags & 1 != 0,
        disabled: flags & 4 != 0,
        ..VectorMask::default()
    };
    // Points are fractions of the document's sides, in 8.24 fixed point.
    let point = |b: &[u8]| {
        let fixed =
            |b: &[u8]| i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as f64 / (1 << 24) as f64;
        (
            fixed(&b[4..8]) * width as f64,
            fixed(&b[0..4]) * height as f64,
        )
    };
    let mut left_in_subpath = 0usize;
    for record in data[8..].chunks_exact(26) {
        let selector = u16::from_be_bytes([record[0], record[1]]);
        match selector {
            0 | 3 => {
                if mask.subpaths.len() >= MAX_SUBPATHS {
                    return None;
                }
                left_in_subpath = u16::from_be_bytes([record[2], record[3]]) as usize;
                mask.subpaths.push(Subpath {
                    operation: i16::from_be_bytes([record[4], record[5]]),
                    knots: Vec::new(),
                });
            }
            1 | 2 | 4 | 5 if left_in_subpath > 0 => {
                left_in_subpath -= 1;
                let knot = [
                    point(&record[2..10]),
                    point(&record[10..18]),
                    point(&record[18..26]),
                ];
                mask.subpaths.last_mut()?.knots.push(knot);
            }
            8 => mask.fill_all = u16::from_be_bytes([record[2], record[3]]) != 0,
            _ => {}
        }
    }
    Some(mask)
}

/// Where a document's pixels fall on the preview's grid: each preview
/// column (row) gathers whole document columns (rows), from its start to
/// the next one's (the last start is the document's side).
#[derive(Clone, Copy)]
pub(super) struct Grid<'a> {
    pub(super) columns: &'a [u32],
    pub(super) rows: &'a [u32],
}

impl Grid<'_> {
    fn out_width(&self) -> usize {
        self.columns.len().saturating_sub(1)
    }

    fn out_height(&self) -> usize {
        self.rows.len().saturating_sub(1)
    }

    /// A document coordinate on the grid: within each preview pixel, the
    /// document pixels it gathers spread evenly, so a shape covers each
    /// preview pixel by the mean of what it covers of those.
    fn place(v: f64, starts: &[u32]) -> f64 {
        let (out, side) = (starts.len() - 1, starts[starts.len() - 1] as f64);
        let scale = out as f64 / side.max(1.0);
        if v <= 0.0 {
            return v * scale;
        }
        if v >= side {
            return out as f64 + (v - side) * scale;
        }
        let cell = starts.partition_point(|&s| s as f64 <= v).clamp(1, out) - 1;
        let (from, to) = (starts[cell] as f64, starts[cell + 1] as f64);
        cell as f64 + (v - from) / (to - from).max(1.0)
    }

    fn at(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (Self::place(x, self.columns), Self::place(y, self.rows))
    }

    /// Preview pixels per document pixel, across and down.
    fn scale(&self) -> (f64, f64) {
        let side = |starts: &[u32]| starts[starts.len() - 1].max(1) as f64;
        (
            self.out_width() as f64 / side(self.columns),
            self.out_height() as f64 / side(self.rows),
        )
    }
}

impl VectorMask {
    /// The share of each preview pixel the mask reveals (0..1), row after row.
    /// `check` is called now and then (the deadline).
    pub(super) fn coverage<E>(
        &self,
        grid: Grid,
        mut check: impl FnMut() -> Result<(), E>,
    ) -> Result<Vec<f32>, E> {
        let (w, h) = (grid.out_width(), grid.out_height());
        let start = if self.subpaths.is_empty() && self.fill_all {
            1.0
        } else {
            0.0
        };
        let mut mask = vec![start; w * h];
        let mut raster = Raster::new(w, h);
        let mut first = true;
        let mut i = 0;
        while i < self.subpaths.len() {
            check()?;
            // A component: this subpath and those merged into it (-1).
            let mut end = i + 1;
            while self.subpaths.get(end).is_some_and(|s| s.operation == -1) {
                end += 1;
            }
            raster.clear();
            for subpath in &self.subpaths[i..end] {
                raster.subpath(subpath, grid, &mut check)?;
            }
            let operation = self.subpaths[i].operation;
            if first && matches!(operation, 2 | 3) {
                mask.iter_mut().for_each(|m| *m = 1.0 - *m);
            }
            raster.combine(&mut mask, operation);
            first = false;
            i = end;
        }
        if self.invert {
            mask.iter_mut().for_each(|m| *m = 1.0 - *m);
        }
        Ok(mask)
    }
}

/// Signed areas accumulated over a canvas, a row at a time summed into
/// coverage (the accumulation rasteriser of font-rs).
struct Raster {
    width: usize,
    height: usize,
    /// Rows of `width + 2`: room for what edges at the right border leave.
    acc: Vec<f32>,
}

impl Raster {
    fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            acc: vec![0.0; (width + 2) * height],
        }
    }

    fn clear(&mut self) {
        self.acc.fill(0.0);
    }

    /// Adds a closed subpath (an open one is closed), placed on `grid`.
    fn subpath<E>(
        &mut self,
        subpath: &Subpath,
        grid: Grid,
        check: &mut impl FnMut() -> Result<(), E>,
    ) -> Result<(), E> {
        let knots = &subpath.knots;
        if knots.len() < 2 {
            return Ok(());
        }
        let (sx, sy) = grid.scale();
        let on_grid = |(x, y): (f64, f64)| (x * sx, y * sy);
        for (k, knot) in knots.iter().enumerate() {
            check()?;
            let next = &knots[(k + 1) % knots.len()];
            // The curve in document pixels, its chords placed on the grid.
            let (p0, p1, p2, p3) = (knot[1], knot[2], next[0], next[1]);
            // Enough chords that none strays a fraction of a pixel from the curve.
            let (q0, q1, q2, q3) = (on_grid(p0), on_grid(p1), on_grid(p2), on_grid(p3));
            let length = dist(q0, q1) + dist(q1, q2) + dist(q2, q3);
            let steps = (length.sqrt().ceil() as usize).clamp(1, 128);
            let mut from = p0;
            for s in 1..=steps {
                let t = s as f64 / steps as f64;
                let u = 1.0 - t;
                let to = (
                    u * u * u * p0.0
                        + 3.0 * u * u * t * p1.0
                        + 3.0 * u * t * t * p2.0
                        + t * t * t * p3.0,
                    u * u * u * p0.1
                        + 3.0 * u * u * t * p1.1
                        + 3.0 * u * t * t * p2.1
                        + t * t * t * p3.1,
                );
                self.chord(grid, from, to);
                from = to;
            }
        }
        Ok(())
    }

    /// A chord between document points, in pieces of about a preview pixel
    /// each placed on the grid (whose cells need not be even).
    fn chord(&mut self, grid: Grid, from: (f64, f64), to: (f64, f64)) {
        let (sx, sy) = grid.scale();
        let span = ((to.0 - from.0).abs() * sx).max((to.1 - from.1).abs() * sy);
        if !span.is_finite() {
            return;
        }
        // A preview is at most 4096 pixels a side.
        let pieces = (span.ceil() as usize).clamp(1, 1 << 12);
        let mut start = grid.at(from);
        for p in 1..=pieces {
            let t = p as f64 / pieces as f64;
            let end = grid.at((from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t));
            self.line(start, end);
            start = end;
        }
    }

    /// A line, split where it crosses the canvas's left or right border and
    /// held within it there (what lies left of the canvas still covers its
    /// first column; what lies right of it covers nothing).
    fn line(&mut self, p0: (f64, f64), p1: (f64, f64)) {
        if !(p0.0.is_finite() && p0.1.is_finite() && p1.0.is_finite() && p1.1.is_finite()) {
            return;
        }
        let right = self.width as f64;
        // At most two borders crossed: four cuts, in order.
        let mut cuts = [0.0, 1.0, 1.0, 1.0];
        let mut n = 1;
        for border in [0.0, right] {
            if (p0.0 - border) * (p1.0 - border) < 0.0 {
                cuts[n] = (border - p0.0) / (p1.0 - p0.0);
                n += 1;
            }
        }
        cuts[n] = 1.0;
        cuts[..=n].sort_by(f64::total_cmp);
        let lerp = |t: f64| (p0.0 + (p1.0 - p0.0) * t, p0.1 + (p1.1 - p0.1) * t);
        for pair in cuts[..=n].windows(2) {
            let (a, b) = (lerp(pair[0]), lerp(pair[1]));
            self.clipped_line(
                (a.0.clamp(0.0, right) as f32, a.1 as f32),
                (b.0.clamp(0.0, right) as f32, b.1 as f32),
            );
        }
    }

    /// font-rs's line: x within 0..=width.
    fn clipped_line(&mut self, p0: (f32, f32), p1: (f32, f32)) {
        if p0.1 == p1.1 {
            return;
        }
        let (dir, p0, p1) = if p0.1 < p1.1 {
            (1.0, p0, p1)
        } else {
            (-1.0, p1, p0)
        };
        let dxdy = (p1.0 - p0.0) / (p1.1 - p0.1);
        let mut x = p0.0;
        if p0.1 < 0.0 {
            x -= p0.1 * dxdy;
        }
        let stride = self.width + 2;
        let y_start = p0.1.max(0.0) as usize;
        let y_end = (p1.1.ceil().max(0.0) as usize).min(self.height);
        for y in y_start..y_end {
            let row = y * stride;
            let dy = ((y + 1) as f32).min(p1.1) - (y as f32).max(p0.1);
            let xnext = x + dxdy * dy;
            let d = dy * dir;
            let (x0, x1) = if x < xnext { (x, xnext) } else { (xnext, x) };
            let x0floor = x0.floor();
            let x0i = x0floor as usize;
            let x1ceil = x1.ceil();
            let x1i = x1ceil as usize;
            let at = |i: usize| row + i.min(stride - 1);
            if x1i <= x0i + 1 {
                let xmf = 0.5 * (x + xnext) - x0floor;
                self.acc[at(x0i)] += d - d * xmf;
                self.acc[at(x0i + 1)] += d * xmf;
            } else {
                let s = (x1 - x0).recip();
                let x0f = x0 - x0floor;
                let a0 = 0.5 * s * (1.0 - x0f) * (1.0 - x0f);
                let x1f = x1 - x1ceil + 1.0;
                let am = 0.5 * s * x1f * x1f;
                self.acc[at(x0i)] += d * a0;
                if x1i == x0i + 2 {
                    self.acc[at(x0i + 1)] += d * (1.0 - a0 - am);
                } else {
                    let a1 = s * (1.5 - x0f);
                    self.acc[at(x0i + 1)] += d * (a1 - a0);
                    for xi in x0i + 2..x1i - 1 {
                        self.acc[at(xi)] += d * s;
                    }
                    let a2 = a1 + (x1i - x0i - 3) as f32 * s;
                    self.acc[at(x1i - 1)] += d * (1.0 - a2 - am);
                }
                self.acc[at(x1i)] += d * am;
            }
            x = xnext;
        }
    }

    /// Sums the rows into coverage (even-odd) and combines it into `mask`
    /// by `operation`.
    fn combine(&self, mask: &mut [f32], operation: i16) {
        let stride = self.width + 2;
        for y in 0..self.height {
            let mut sum = 0.0f32;
            for x in 0..self.width {
                sum += self.acc[y * stride + x];
                let wound = sum.abs() % 2.0;
                let plane = if wound > 1.0 { 2.0 - wound } else { wound };
                let m = &mut mask[y * self.width + x];
                *m = match operation {
                    0 => *m + plane - 2.0 * *m * plane,
                    2 => (*m - plane).max(0.0),
                    3 => *m * plane,
                    _ => *m + plane - *m * plane,
                }
                .clamp(0.0, 1.0);
            }
        }
    }
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

#[cfg(test)]
pub(in crate::psd) mod tests {
    use super::*;

    /// A `vmsk` block of one closed polygon (`points` in document pixels of
    /// a `width`×`height` document), its corners sharp.
    pub(in crate::psd) fn polygon_block(points: &[(f64, f64)], width: u32, height: u32) -> Vec<u8> {
        let mut out = [3u32.to_be_bytes(), 0u32.to_be_bytes()].concat();
        let mut record = vec![0u8; 26];
        record[1] = 6; // the path fill rule record
        out.extend(&record);
        let mut record = vec![0u8; 26];
        record[3] = points.len() as u8;
        record[5] = 1; // union
        out.extend(&record);
        let fixed = |v: f64| ((v * (1 << 24) as f64) as i32).to_be_bytes();
        for &(x, y) in points {
            let mut record = vec![0u8; 26];
            record[1] = 2;
            for at in [2, 10, 18] {
                record[at..at + 4].copy_from_slice(&fixed(y / height as f64));
                record[at + 4..at + 8].copy_from_slice(&fixed(x / width as f64));
            }
            out.extend(&record);
        }
        out
    }

    fn cover(mask: &VectorMask, w: u32, h: u32, out: (u32, u32)) -> Vec<f32> {
        // As the compositor groups them: document pixel x in preview
        // column x · out / side.
        let starts = |side: u32, out: u32| -> Vec<u32> {
            (0..=out)
                .map(|o| ((o as u64 * side as u64).div_ceil(out as u64)) as u32)
                .collect()
        };
        let (columns, rows) = (starts(w, out.0), starts(h, out.1));
        let grid = Grid {
            columns: &columns,
            rows: &rows,
        };
        mask.coverage(grid, || Ok::<(), ()>(())).unwrap()
    }

    #[test]
    fn a_rectangle_covers_its_pixels_and_shares_of_its_edges() {
        let block = polygon_block(&[(2.0, 1.0), (6.5, 1.0), (6.5, 3.0), (2.0, 3.0)], 8, 4);
        let mask = read(&block, 8, 4).unwrap();
        let c = cover(&mask, 8, 4, (8, 4));
        let at = |x: usize, y: usize| c[y * 8 + x];
        assert_eq!(at(1, 1), 0.0);
        assert!((at(2, 1) - 1.0).abs() < 1e-4);
        assert!((at(5, 2) - 1.0).abs() < 1e-4);
        assert!((at(6, 2) - 0.5).abs() < 1e-4, "{}", at(6, 2));
        assert_eq!(at(7, 2), 0.0);
        assert_eq!(at(3, 0), 0.0);
        // Shrunk to half: the mean of each 2×2 block.
        let half = cover(&mask, 8, 4, (4, 2));
        assert!((half[1] - 0.5).abs() < 1e-4, "{}", half[1]);
        assert!((half[3] - 0.125).abs() < 1e-4, "{}", half[3]);
    }

    #[test]
    fn uneven_cells_cover_as_the_document_pixels_they_gather() {
        // Three columns into two: the first preview column gathers two.
        let block = polygon_block(&[(1.5, 0.0), (3.0, 0.0), (3.0, 1.0), (1.5, 1.0)], 3, 1);
        let mask = read(&block, 3, 1).unwrap();
        let c = cover(&mask, 3, 1, (2, 1));
        assert!(
            (c[0] - 0.25).abs() < 1e-4 && (c[1] - 1.0).abs() < 1e-4,
            "{c:?}"
        );
    }

    #[test]
    fn shapes_beyond_the_canvas_are_held_to_it_and_operations_combine() {
        let block = polygon_block(&[(-5.0, -5.0), (3.0, -5.0), (3.0, 9.0), (-5.0, 9.0)], 8, 4);
        let mut mask = read(&block, 8, 4).unwrap();
        let c = cover(&mask, 8, 4, (8, 4));
        assert!(c.iter().enumerate().all(|(i, &v)| {
            let want = if i % 8 < 3 { 1.0 } else { 0.0 };
            (v - want).abs() < 1e-4
        }));
        // Subtracting it first: everything else.
        mask.subpaths[0].operation = 2;
        let c = cover(&mask, 8, 4, (8, 4));
        assert!((c[0]).abs() < 1e-4 && (c[7] - 1.0).abs() < 1e-4);
        mask.invert = true;
        let c = cover(&mask, 8, 4, (8, 4));
        assert!((c[0] - 1.0).abs() < 1e-4 && c[7].abs() < 1e-4);
        // Damaged: a header cut short.
        assert!(read(&block[..5], 8, 4).is_none());
    }
}

//! A document's layers composited, for a PSD saved without its composite
//! ("maximize compatibility" off) or with a blank one.
//!
//! Layers are read in the file's order (bottom first), one at a time, each
//! channel's rows side by side as the composite's are; each row is scaled
//! down as it arrives (whole source pixels averaged into the preview's
//! grid, colours premultiplied by transparency and mask) and blended at
//! once into a canvas of the preview's size. So memory is a few canvases of
//! the preview's size (one per open group), never a layer at full size, and
//! blending happens at the preview's scale: exact when it is the document's
//! size, a close approximation when shrinking.
//!
//! Rendered: pixel layers with opacity and fill, visibility, layer masks,
//! groups (pass-through and normal, with opacity and mask), clipping, and
//! the blend modes normal, multiply, screen, overlay, darken and lighten.
//! Text and smart objects show the pixels Photoshop stored for them. What
//! needs more (adjustment and fill layers, effects, vector masks, other
//! blend modes, clipping to a group) makes the preview approximate.

use std::io::{Read, Seek};

use super::{
    be16, be32, be64, damaged, has_long_length, to_8bit, ChannelRows, Cursor, Document, Mode,
    Stored, CHUNK, LINEAR_32, ROWS_PER_TIME_CHECK,
};
use crate::preview::{fitted, Limits, NoPreview};

/// Groups nested deeper than this are refused (each holds a canvas).
const MAX_DEPTH: usize = 32;
/// The smallest size layers are composited at when a larger one would not
/// fit the memory budget.
const MIN_WORKING_SIZE: u32 = 256;

/// The layers' composite, and whether it leaves out something the document shows.
pub struct Composited {
    pub planes: Vec<Vec<u8>>,
    pub width: u32,
    pub height: u32,
    pub approximate: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blend {
    Normal,
    Multiply,
    Screen,
    Overlay,
    Darken,
    Lighten,
    PassThrough,
    /// One we do not render: drawn as normal, the preview approximate.
    Other,
}

impl Blend {
    fn of(key: &[u8]) -> Self {
        match key {
            b"norm" => Blend::Normal,
            b"mul " => Blend::Multiply,
            b"scrn" => Blend::Screen,
            b"over" => Blend::Overlay,
            b"dark" => Blend::Darken,
            b"lite" => Blend::Lighten,
            b"pass" => Blend::PassThrough,
            _ => Blend::Other,
        }
    }

    /// The blended colour of backdrop `b` and source `s` (0..1).
    fn apply(self, b: f32, s: f32) -> f32 {
        match self {
            Blend::Multiply => b * s,
            Blend::Screen => b + s - b * s,
            Blend::Overlay => {
                if b <= 0.5 {
                    2.0 * b * s
                } else {
                    1.0 - 2.0 * (1.0 - b) * (1.0 - s)
                }
            }
            Blend::Darken => b.min(s),
            Blend::Lighten => b.max(s),
            Blend::Normal | Blend::PassThrough | Blend::Other => s,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Rect {
    top: i64,
    left: i64,
    bottom: i64,
    right: i64,
}

impl Rect {
    fn read(b: &[u8]) -> Self {
        let at = |i: usize| be32(&b[i..]) as i32 as i64;
        Self {
            top: at(0),
            left: at(4),
            bottom: at(8),
            right: at(12),
        }
    }

    fn width(&self) -> u64 {
        (self.right - self.left).max(0) as u64
    }

    fn height(&self) -> u64 {
        (self.bottom - self.top).max(0) as u64
    }
}

#[derive(Debug, Clone, Copy)]
struct Mask {
    rect: Rect,
    /// The mask's value outside its rectangle.
    outside: u8,
    /// The channel holding it: -2, or -3 for the user mask beside a vector one.
    id: i16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pixels,
    /// A group's own record (open or closed folder): it comes after its members.
    GroupTop,
    /// The hidden divider before a group's members.
    GroupBottom,
}

struct ChannelData {
    id: i16,
    /// Where its compression code is, and its length with it.
    offset: u64,
    len: u64,
}

struct Layer {
    rect: Rect,
    channels: Vec<ChannelData>,
    blend: Blend,
    opacity: u8,
    fill: u8,
    clipped: bool,
    hidden: bool,
    mask: Option<Mask>,
    kind: Kind,
    /// Shows something we do not render (an adjustment, effects...).
    unrendered: bool,
}

/// A layer's or mask's rectangle may reach past the canvas, but no side may
/// be longer than the format allows a document's.
fn check_side(doc: &Document, rect: Rect) -> Result<(), NoPreview> {
    let most = if doc.psb {
        super::PSB_MAX_SIDE
    } else {
        super::PSD_MAX_SIDE
    } as u64;
    if rect.width() > most || rect.height() > most {
        return Err(damaged(
            doc.kind(),
            format_args!(
                "a layer of {}×{} pixels (at most {most} a side)",
                rect.width(),
                rect.height()
            ),
        ));
    }
    Ok(())
}

/// The tagged blocks that make a layer show what its pixels alone do not.
fn unrendered(key: &[u8; 4]) -> bool {
    matches!(
        key,
        // Adjustment layers.
        b"levl" | b"curv" | b"brit" | b"blnc" | b"hue " | b"hue2" | b"selc" | b"thrs" | b"nvrt"
            | b"post" | b"mixr" | b"grdm" | b"phfl" | b"expA" | b"vibA" | b"clrL" | b"blwh"
            | b"CgEd"
            // Fill layers, effects, vector masks.
            | b"SoCo" | b"GdFl" | b"PtFl" | b"lfx2" | b"lrFX" | b"lmfx" | b"vmsk" | b"vsms"
    )
}

/// Reads every layer record in `records` (from the layer count), and where
/// each channel's data is.
fn read_records(
    doc: &Document,
    file: &mut (impl Read + Seek),
    records: std::ops::Range<u64>,
    limits: &Limits,
) -> Result<Vec<Layer>, NoPreview> {
    let kind = doc.kind();
    let short = |e: super::Short| e.in_section(kind, "its layers");
    let mut at = Cursor::new(records.start, records.end, 4096);
    // At most 32768: the count is an i16, negative when the composite has transparency.
    let count = (be16(at.take(file, 2).map_err(short)?) as i16).unsigned_abs() as usize;
    let length_bytes = if doc.psb { 8 } else { 4 };
    let mut layers = Vec::with_capacity(count);
    for _ in 0..count {
        limits.check_time()?;
        let rect = Rect::read(at.take(file, 16).map_err(short)?);
        check_side(doc, rect)?;
        let n = be16(at.take(file, 2).map_err(short)?);
        if n > 56 {
            return Err(damaged(kind, format_args!("a layer of {n} channels")));
        }
        let mut channels = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let b = at.take(file, 2 + length_bytes).map_err(short)?;
            let id = be16(b) as i16;
            let len = if doc.psb {
                be64(&b[2..])
            } else {
                be32(&b[2..]) as u64
            };
            channels.push(ChannelData { id, offset: 0, len });
        }
        let b = at.take(file, 16).map_err(short)?;
        if &b[0..4] != b"8BIM" {
            return Err(damaged(kind, "a layer record without its signature"));
        }
        let mut blend = Blend::of(&b[4..8]);
        let (opacity, clipped, flags) = (b[8], b[9] != 0, b[10]);
        let extra_len = be32(&b[12..]) as u64;
        let extra_start = at.pos();
        let extra_end = extra_start + extra_len;
        if extra_end > records.end {
            return Err(damaged(kind, "a layer record runs past its section"));
        }
        // Layer mask data.
        let mask_len = be32(at.take(file, 4).map_err(short)?) as u64;
        let mask_start = at.pos();
        let mut masks = (None, None);
        let mut mask_parameters = false;
        if mask_len >= 20 {
            let b = at.take(file, 18).map_err(short)?;
            let (rect, outside, mask_flags) = (Rect::read(b), b[16], b[17]);
            check_side(doc, rect)?;
            // Bit 1: disabled.
            // Bit 1: disabled, for the user mask and the real one alike.
            let enabled = mask_flags & 2 == 0;
            masks.0 = enabled.then_some(Mask {
                rect,
                outside,
                id: -2,
            });
            // The real user mask's header comes first (as psd-tools reads
            // Photoshop's files, not as the specification says), and only
            // when the layer has its channel (-3).
            if mask_len >= 36 && channels.iter().any(|c| c.id == -3) {
                let b = at.take(file, 18).map_err(short)?;
                check_side(doc, Rect::read(&b[2..]))?;
                masks.1 = enabled.then_some(Mask {
                    rect: Rect::read(&b[2..]),
                    outside: b[1],
                    id: -3,
                });
            }
            // Bit 4: density or feather applied, which we do not render.
            mask_parameters = enabled && mask_flags & 0x10 != 0;
        }
        at.seek_to(mask_start + mask_len);
        // Blending ranges, then the name (padded to four bytes).
        let ranges = be32(at.take(file, 4).map_err(short)?) as u64;
        at.seek_to(at.pos() + ranges);
        let name_len = at.take(file, 1).map_err(short)?[0] as u64;
        at.seek_to(at.pos() + (name_len + 1).next_multiple_of(4) - 1);
        let (mut layer_kind, mut fill, mut needs_more) = (Kind::Pixels, 255u8, false);
        while extra_end.saturating_sub(at.pos()) >= 12 {
            let head = at.take(file, 8).map_err(short)?;
            if &head[0..4] != b"8BIM" && &head[0..4] != b"8B64" {
                break;
            }
            let key: [u8; 4] = head[4..8].try_into().expect("4 bytes");
            let len = if doc.psb && has_long_length(&key) {
                be64(at.take(file, 8).map_err(short)?)
            } else {
                be32(at.take(file, 4).map_err(short)?) as u64
            };
            let start = at.pos();
            if start.checked_add(len).is_none_or(|end| end > extra_end) {
                return Err(damaged(kind, "a layer's tagged block runs past its record"));
            }
            match &key {
                b"lsct" | b"lsdk" if len >= 4 => {
                    let b = at.take(file, len.min(12) as usize).map_err(short)?;
                    layer_kind = match be32(b) {
                        1 | 2 => Kind::GroupTop,
                        3 => Kind::GroupBottom,
                        _ => Kind::Pixels,
                    };
                    if b.len() >= 12 && &b[4..8] == b"8BIM" {
                        blend = Blend::of(&b[8..12]);
                    }
                }
                b"iOpa" if len >= 1 => fill = at.take(file, 1).map_err(short)?[0],
                key if unrendered(key) => needs_more = true,
                _ => {}
            }
            at.seek_to(start + len);
        }
        at.seek_to(extra_end);
        let has = |id| channels.iter().any(|c| c.id == id);
        let mask = match masks {
            (_, Some(real)) if has(-3) => Some(real),
            (Some(user), _) if has(-2) => Some(user),
            _ => None,
        };
        layers.push(Layer {
            rect,
            channels,
            blend,
            opacity,
            fill,
            clipped,
            hidden: flags & 2 != 0,
            mask,
            kind: layer_kind,
            unrendered: needs_more || mask_parameters,
        });
    }
    // The channels' data follows the records, layer after layer.
    let mut offset = at.pos();
    for layer in &mut layers {
        for channel in &mut layer.channels {
            channel.offset = offset;
            offset = offset
                .checked_add(channel.len)
                .filter(|&end| end <= records.end)
                .ok_or_else(|| damaged(kind, "its layers' pixels run past their section"))?;
        }
    }
    Ok(layers)
}

/// A group or a layer, in drawing order (bottom first).
enum Node {
    Layer(usize),
    Group { top: usize, members: Vec<Node> },
}

/// The layers as a tree: a divider opens a group, its top record closes it.
fn tree(layers: &[Layer]) -> Result<Vec<Node>, NoPreview> {
    let mut open: Vec<Vec<Node>> = vec![Vec::new()];
    for (i, layer) in layers.iter().enumerate() {
        match layer.kind {
            Kind::GroupBottom => {
                if open.len() > MAX_DEPTH {
                    return Err(NoPreview(format!(
                        "a Photoshop document whose groups nest more than {MAX_DEPTH} deep"
                    )));
                }
                open.push(Vec::new());
            }
            Kind::GroupTop if open.len() > 1 => {
                let members = open.pop().expect("an open group");
                open.last_mut()
                    .expect("the document")
                    .push(Node::Group { top: i, members });
            }
            // A group's top without its divider: nothing to group.
            Kind::GroupTop => {}
            Kind::Pixels => open.last_mut().expect("the document").push(Node::Layer(i)),
        }
    }
    // Dividers never closed: their members belong to the document.
    while open.len() > 1 {
        let members = open.pop().expect("an open group");
        open.last_mut().expect("the document").extend(members);
    }
    Ok(open.pop().expect("the document"))
}

/// Premultiplied colours and transparency of the preview's pixels: `colors`
/// samples and then alpha for each, 0..1.
#[derive(Clone)]
struct Canvas {
    samples: Vec<f32>,
}

struct Compositor<'a, F> {
    doc: &'a Document,
    file: &'a mut F,
    layers: &'a [Layer],
    limits: &'a Limits,
    /// Colour channels.
    colors: usize,
    width: u32,
    height: u32,
    out_width: u32,
    out_height: u32,
    /// The preview's column of each document column.
    column_of: Vec<u32>,
    /// The first document column of each preview column, and the width last.
    column_starts: Vec<u32>,
    /// Document pixels in each preview column and row.
    columns_in: Vec<u32>,
    rows_in: Vec<u32>,
    approximate: bool,
    what: String,
}

/// Composites `doc`'s layers into `size`, or says why it cannot.
pub fn composite(
    doc: &Document,
    file: &mut (impl Read + Seek),
    size: u32,
    limits: &Limits,
) -> Result<Composited, NoPreview> {
    let records = doc
        .layer_info
        .clone()
        .ok_or_else(|| NoPreview("no layers".into()))?;
    let layers = read_records(doc, file, records, limits)?;
    let nodes = tree(&layers)?;
    let colors = match doc.mode {
        Mode::Rgb | Mode::Lab => 3,
        Mode::Cmyk => 4,
        Mode::Grayscale | Mode::Duotone => 1,
        _ => {
            return Err(NoPreview(format!(
                "{}: layers of this colour mode",
                doc.kind()
            )))
        }
    };
    let (width, height) = (doc.width, doc.height);
    let what = format!("{} of {width}×{height} pixels", doc.kind());
    // The document's canvas, and for each open group its own, a clipping
    // base's and its mask's coverage: within half the budget (the rest is
    // the readers'), else composited smaller (and enlarged by the caller).
    let depth = max_depth(&nodes) as u64;
    let canvases = |(w, h): (u32, u32)| {
        let pixels = w as u64 * h as u64;
        pixels * (colors as u64 + 1) * 4 * (2 * depth + 2) + pixels * 12 * depth
    };
    let mut working = size;
    while canvases(fitted(width, height, working)) > limits.memory / 2 && working > MIN_WORKING_SIZE
    {
        working = (working * 3 / 4).max(MIN_WORKING_SIZE);
    }
    let (out_width, out_height) = fitted(width, height, working);
    limits.claim(canvases((out_width, out_height)) + width as u64 * 16, &what)?;
    let grid = |len: u32, out: u32| -> Vec<u32> {
        (0..len)
            .map(|x| (x as u64 * out as u64 / len as u64) as u32)
            .collect()
    };
    let column_of = grid(width, out_width);
    let count = |map: &[u32], out: u32| {
        let mut n = vec![0u32; out as usize];
        map.iter().for_each(|&o| n[o as usize] += 1);
        n
    };
    let columns_in = count(&column_of, out_width);
    let column_starts = std::iter::once(0)
        .chain(columns_in.iter().scan(0u32, |at, n| {
            *at += n;
            Some(*at)
        }))
        .collect();
    let rows_in = count(&grid(height, out_height), out_height);
    let mut compositor = Compositor {
        doc,
        file,
        layers: &layers,
        limits,
        colors,
        width,
        height,
        out_width,
        out_height,
        column_of,
        column_starts,
        columns_in,
        rows_in,
        approximate: false,
        what,
    };
    let mut canvas = compositor.blank();
    compositor.draw(&nodes, &mut canvas)?;
    // Photoshop blends 32-bit layers in linear light; these were blended
    // as they are shown (sRGB-encoded).
    compositor.approximate |= doc.depth == 32;
    let pixels = out_width as usize * out_height as usize;
    let mut planes = vec![vec![0u8; pixels]; colors + 1];
    for (i, pixel) in canvas.samples.chunks_exact(colors + 1).enumerate() {
        let alpha = pixel[colors];
        for c in 0..colors {
            let straight = if alpha > 0.0 { pixel[c] / alpha } else { 0.0 };
            planes[c][i] = (straight.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
        }
        planes[colors][i] = (alpha.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
    }
    Ok(Composited {
        planes,
        width: out_width,
        height: out_height,
        approximate: compositor.approximate,
    })
}

fn max_depth(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|node| match node {
            Node::Layer(_) => 0,
            Node::Group { members, .. } => 1 + max_depth(members),
        })
        .max()
        .unwrap_or(0)
}

impl<F: Read + Seek> Compositor<'_, F> {
    fn blank(&self) -> Canvas {
        Canvas {
            samples: vec![
                0.0;
                self.out_width as usize * self.out_height as usize * (self.colors + 1)
            ],
        }
    }

    /// Draws `nodes` (bottom first) onto `canvas`.
    fn draw(&mut self, nodes: &[Node], canvas: &mut Canvas) -> Result<(), NoPreview> {
        let mut i = 0;
        while i < nodes.len() {
            // Each node may blend a whole canvas, however little it holds.
            self.limits.check_time()?;
            // The layers clipped to this one follow it.
            let mut end = i + 1;
            while let Some(Node::Layer(l)) = nodes.get(end) {
                if !self.layers[*l].clipped {
                    break;
                }
                end += 1;
            }
            // A group clipped to what is below it is drawn unclipped.
            if let Some(Node::Group { top, .. }) = nodes.get(end) {
                self.approximate |= self.layers[*top].clipped && !self.layers[*top].hidden;
            }
            let clipped = &nodes[i + 1..end];
            match &nodes[i] {
                Node::Layer(l) => self.draw_layer(*l, clipped, canvas)?,
                Node::Group { top, members } => {
                    if !clipped.is_empty() {
                        // Clipping to a group is not rendered.
                        self.approximate = true;
                    }
                    self.draw_group(*top, members, canvas)?;
                }
            }
            i = end;
        }
        Ok(())
    }

    fn draw_layer(
        &mut self,
        l: usize,
        clipped: &[Node],
        canvas: &mut Canvas,
    ) -> Result<(), NoPreview> {
        let layer = &self.layers[l];
        if layer.hidden {
            return Ok(());
        }
        self.approximate |= layer.unrendered || layer.blend == Blend::Other;
        let visible: Vec<usize> = clipped
            .iter()
            .filter_map(|node| match node {
                Node::Layer(c) if !self.layers[*c].hidden => Some(*c),
                _ => None,
            })
            .collect();
        if visible.is_empty() {
            let opacity = share(layer.opacity) * share(layer.fill);
            return self.paint(l, canvas, opacity, layer.blend, false);
        }
        // A clipping group: the base, then each clipped layer atop it, then
        // the whole onto the canvas with the base's opacity and mode.
        let mut base = self.blank();
        self.paint(l, &mut base, share(layer.fill), Blend::Normal, false)?;
        for c in visible {
            let clip = &self.layers[c];
            self.approximate |= clip.unrendered || clip.blend == Blend::Other;
            let opacity = share(clip.opacity) * share(clip.fill);
            self.paint(c, &mut base, opacity, clip.blend, true)?;
        }
        let layer = &self.layers[l];
        self.blend_canvas(&base, canvas, share(layer.opacity), layer.blend, None);
        Ok(())
    }

    fn draw_group(
        &mut self,
        top: usize,
        members: &[Node],
        canvas: &mut Canvas,
    ) -> Result<(), NoPreview> {
        let group = &self.layers[top];
        if group.hidden {
            return Ok(());
        }
        self.approximate |= group.unrendered || group.blend == Blend::Other;
        let (blend, opacity) = (group.blend, share(group.opacity) * share(group.fill));
        let coverage = match group.mask {
            Some(mask) => Some(self.mask_coverage(top, mask)?),
            None => None,
        };
        if blend == Blend::PassThrough {
            // Members blend onto what is below; the group's opacity and
            // mask then mix that with what was there.
            let mut through = canvas.clone();
            self.draw(members, &mut through)?;
            let n = self.colors + 1;
            for (i, (below, above)) in canvas
                .samples
                .chunks_exact_mut(n)
                .zip(through.samples.chunks_exact(n))
                .enumerate()
            {
                let k = opacity * coverage.as_ref().map_or(1.0, |c| c[i]);
                for (b, a) in below.iter_mut().zip(above) {
                    *b += (a - *b) * k;
                }
            }
        } else {
            let mut own = self.blank();
            self.draw(members, &mut own)?;
            self.blend_canvas(&own, canvas, opacity, blend, coverage.as_deref());
        }
        Ok(())
    }

    /// Blends `source` onto `target`, pixel by pixel.
    fn blend_canvas(
        &self,
        source: &Canvas,
        target: &mut Canvas,
        opacity: f32,
        blend: Blend,
        coverage: Option<&[f32]>,
    ) {
        let n = self.colors + 1;
        for (i, (t, s)) in target
            .samples
            .chunks_exact_mut(n)
            .zip(source.samples.chunks_exact(n))
            .enumerate()
        {
            let k = opacity * coverage.map_or(1.0, |c| c[i]);
            blend_pixel(t, s, k, blend, false);
        }
    }

    /// A mask's mean value over each preview pixel (0..1): `outside` where
    /// its rectangle does not reach.
    fn mask_coverage(&mut self, l: usize, mask: Mask) -> Result<Vec<f32>, NoPreview> {
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
                    sums[o] += m as f64;
                    counted[o] += 1;
                }
            }
        }
        Ok((0..w * h)
            .map(|o| {
                let cell = self.columns_in[o % w] as f64 * self.rows_in[o / w] as f64;
                let outside = (cell - counted[o] as f64) * mask.outside as f64;
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
        let stored = match code {
            0 => Stored::Raw,
            1 => {
                let table = height * count_bytes;
                if start + table > end {
                    return Err(damaged(kind, "a layer's table of row lengths is cut short"));
                }
                let counts = Cursor::new(start, start + table, CHUNK.min(table.max(1) as usize));
                return Ok(ChannelRows {
                    data: Cursor::new(start + table, end, CHUNK.max(2 * row_bytes as usize + 2)),
                    stored: Stored::Rle { counts },
                    row: vec![0; row_bytes as usize],
                    scratch: Vec::new(),
                });
            }
            2 | 3 => Stored::Zip {
                inflate: Box::new(flate2::Decompress::new(true)),
                rows_to_skip: 0,
                predicted: code == 3,
            },
            c => {
                return Err(damaged(
                    kind,
                    format_args!("unknown compression {c} of a layer"),
                ))
            }
        };
        let scratch = if code == 3 && self.doc.depth == 32 {
            vec![0; row_bytes as usize]
        } else {
            Vec::new()
        };
        Ok(ChannelRows {
            data: Cursor::new(start, end, CHUNK),
            stored,
            row: vec![0; row_bytes as usize],
            scratch,
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

    /// Paints layer `l`'s pixels onto `target` with `opacity` and `blend`;
    /// `atop` keeps `target`'s transparency (a clipped layer).
    fn paint(
        &mut self,
        l: usize,
        target: &mut Canvas,
        opacity: f32,
        blend: Blend,
        atop: bool,
    ) -> Result<(), NoPreview> {
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
                    opacity,
                    blend,
                    atop,
                );
            }
            gathering = Some(oy);
            // Each pixel's share: its transparency, times the mask's value.
            let shares: &[u8] = match mask_here {
                Some((m, inside)) => {
                    for (i, (share, &a)) in coverage.iter_mut().zip(&alpha_row).enumerate() {
                        let x = rect.left + i as i64;
                        let value = if inside && x >= m.rect.left && x < m.rect.right {
                            mask_row[(x - m.rect.left) as usize]
                        } else {
                            m.outside
                        };
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
                opacity,
                blend,
                atop,
            );
        }
        Ok(())
    }

    /// Blends a gathered preview row into `target`, and clears the sums.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        sums: &mut [u64],
        oy: usize,
        columns: std::ops::RangeInclusive<usize>,
        target: &mut Canvas,
        opacity: f32,
        blend: Blend,
        atop: bool,
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

fn share(v: u8) -> f32 {
    v as f32 / 255.0
}

/// Blends premultiplied `source` (scaled by `opacity`) onto premultiplied
/// `target`: the separable blend modes of Photoshop (and W3C compositing);
/// `atop` keeps the target's transparency.
fn blend_pixel(target: &mut [f32], source: &[f32], opacity: f32, blend: Blend, atop: bool) {
    let colors = target.len() - 1;
    let sa = source[colors] * opacity;
    if sa <= 0.0 {
        return;
    }
    let ba = target[colors];
    for c in 0..colors {
        let s = source[c] * opacity;
        let b = target[c];
        let mixed = if ba > 0.0 {
            blend.apply(b / ba, s / sa) * sa * ba
        } else {
            0.0
        };
        // Where the backdrop is clear the source shows as it is, and where
        // the source is clear the backdrop does.
        target[c] = if atop {
            mixed + b * (1.0 - sa)
        } else {
            mixed + s * (1.0 - ba) + b * (1.0 - sa)
        };
    }
    if !atop {
        target[colors] = sa + ba * (1.0 - sa);
    }
}

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
//! Rendered: pixel layers with opacity and fill, visibility, layer masks
//! (with their density), vector masks, groups (pass-through and normal,
//! with opacity and mask), clipping, the blend modes normal, multiply,
//! screen, overlay, darken and lighten, and the colour overlay effect; fill
//! layers (solid colour, gradient and pattern) and shape layers saved
//! without their pixels. Text and smart objects show the pixels Photoshop
//! stored for them. What needs more (adjustment layers, other effects, a
//! shape's stroke, a mask's feather, other blend modes, clipping to a
//! group) makes the preview approximate.
//!
//! `records` reads the layer records (`descriptor`, `fill`, `pattern` and
//! `vector` what fill and shape layers and effects hold), `tree` groups them, `draw` walks the
//! tree onto canvases, `paint` gathers one layer's rows into the preview's
//! grid and `blend` mixes pixels; here the working size is chosen, within
//! half the memory budget.

use std::io::{Read, Seek};

use super::document::{Document, Mode};
use crate::{fitted, Limits, NoPreview};

mod blend;
pub(super) mod descriptor;
mod draw;
mod fill;
mod paint;
mod pattern;
mod records;
mod tree;
pub(super) mod vector;

use records::{read_records, Layer};
use tree::{max_depth, tree};

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
    /// The layer whose colour overlay waits for the layers clipped to it
    /// (its interior effects apply to the clipping group as a whole).
    overlay_later: Option<usize>,
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
        overlay_later: None,
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

//! Drawing the tree onto canvases of the preview's size: each layer with
//! the layers clipped to it, groups (pass-through or blended as one) with
//! their opacity and mask, and what marks the preview approximate. It leaves
//! reading and scaling a layer's pixels to [`super::paint`].

use std::io::{Read, Seek};

use super::blend::{blend_pixel, share, Blend};
use super::tree::Node;
use super::{Canvas, Compositor};
use crate::NoPreview;

impl<F: Read + Seek> Compositor<'_, F> {
    pub(super) fn blank(&self) -> Canvas {
        Canvas {
            samples: vec![
                0.0;
                self.out_width as usize * self.out_height as usize * (self.colors + 1)
            ],
        }
    }

    /// Draws `nodes` (bottom first) onto `canvas`.
    pub(super) fn draw(&mut self, nodes: &[Node], canvas: &mut Canvas) -> Result<(), NoPreview> {
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
                Node::Layer(l) if self.shows(*l) => self.draw_layer(*l, clipped, canvas)?,
                Node::Layer(_) => {}
                Node::Group { top, members } => {
                    if !clipped.is_empty() {
                        // Clipping to a group is not rendered.
                        self.approximate = true;
                    }
                    if self.shows(*top) {
                        self.draw_group(*top, members, canvas)?;
                    }
                }
            }
            i = end;
        }
        Ok(())
    }

    /// Layer `l`, which shows (see [`Self::shows`]), with the layers
    /// `clipped` to it.
    fn draw_layer(
        &mut self,
        l: usize,
        clipped: &[Node],
        canvas: &mut Canvas,
    ) -> Result<(), NoPreview> {
        let visible: Vec<usize> = clipped
            .iter()
            .filter_map(|node| match node {
                Node::Layer(c) if !self.layers[*c].hidden => Some(*c),
                _ => None,
            })
            .collect();
        let layer = &self.layers[l];
        if visible.is_empty() {
            return self.paint_layer(l, canvas, layer.strength(), layer.blend, false);
        }
        // A clipping group: the base, then each clipped layer atop it, then
        // the whole onto the canvas with the base's opacity and mode.
        let mut base = self.blank();
        self.overlay_later = Some(l);
        let painted = self.paint_layer(l, &mut base, share(layer.fill), Blend::Normal, false);
        self.overlay_later = None;
        painted?;
        for c in visible {
            let clip = &self.layers[c];
            self.approximate |= clip.approximate();
            self.paint_layer(c, &mut base, clip.strength(), clip.blend, true)?;
        }
        let layer = &self.layers[l];
        // The base's colour overlay covers what is clipped to it too.
        if let Some(overlay) = &layer.overlay {
            let colors = self.colors;
            for pixel in base.samples.chunks_exact_mut(colors + 1) {
                let alpha = pixel[colors];
                if alpha > 0.0 {
                    pixel[..colors].iter_mut().for_each(|c| *c /= alpha);
                    overlay.apply(&mut pixel[..colors]);
                    pixel[..colors].iter_mut().for_each(|c| *c *= alpha);
                }
            }
        }
        self.blend_canvas(&base, canvas, share(layer.opacity), layer.blend, None);
        Ok(())
    }

    /// Group `top`, which shows, with its `members`.
    fn draw_group(
        &mut self,
        top: usize,
        members: &[Node],
        canvas: &mut Canvas,
    ) -> Result<(), NoPreview> {
        let group = &self.layers[top];
        let (blend, opacity) = (group.blend, group.strength());
        let mut coverage = match group.mask {
            Some(mask) => Some(self.mask_coverage(top, mask)?),
            None => None,
        };
        if let Some(vector) = self.vector_coverage(top)? {
            coverage = Some(match coverage {
                Some(mask) => mask.iter().zip(&vector).map(|(m, v)| m * v).collect(),
                None => vector,
            });
        }
        if blend == Blend::PassThrough {
            // Members blend onto what is below; the group's opacity and
            // mask then mix that with what was there.
            let mut through = canvas.clone();
            self.draw(members, &mut through)?;
            self.each_pixel(
                &through,
                canvas,
                opacity,
                coverage.as_deref(),
                |below, above, k| {
                    for (b, a) in below.iter_mut().zip(above) {
                        *b += (a - *b) * k;
                    }
                },
            );
        } else {
            let mut own = self.blank();
            self.draw(members, &mut own)?;
            self.blend_canvas(&own, canvas, opacity, blend, coverage.as_deref());
        }
        Ok(())
    }

    /// Whether layer (or group) `l` shows; if it does, what it leaves out
    /// makes the preview approximate.
    fn shows(&mut self, l: usize) -> bool {
        let layer = &self.layers[l];
        if layer.hidden {
            return false;
        }
        self.approximate |= layer.approximate();
        true
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
        self.each_pixel(source, target, opacity, coverage, |t, s, k| {
            blend_pixel(t, s, k, blend, false)
        });
    }

    /// Calls `mix` with each pixel of `target`, the same pixel of `source`,
    /// and how much of it to take there: `opacity` times the `coverage`.
    fn each_pixel(
        &self,
        source: &Canvas,
        target: &mut Canvas,
        opacity: f32,
        coverage: Option<&[f32]>,
        mut mix: impl FnMut(&mut [f32], &[f32], f32),
    ) {
        let n = self.colors + 1;
        for (i, (t, s)) in target
            .samples
            .chunks_exact_mut(n)
            .zip(source.samples.chunks_exact(n))
            .enumerate()
        {
            mix(t, s, opacity * coverage.map_or(1.0, |c| c[i]));
        }
    }
}

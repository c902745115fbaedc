//! The blend modes rendered, and blending one premultiplied pixel onto
//! another (Photoshop's separable modes, as W3C compositing defines them).
//! Pure arithmetic on preview pixels: it never reads the file.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Blend {
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
    pub(super) fn of(key: &[u8]) -> Self {
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
    pub(super) fn apply(self, b: f32, s: f32) -> f32 {
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

pub(super) fn share(v: u8) -> f32 {
    v as f32 / 255.0
}

/// Blends premultiplied `source` (scaled by `opacity`) onto premultiplied
/// `target`: the separable blend modes of Photoshop (and W3C compositing);
/// `atop` keeps the target's transparency.
pub(super) fn blend_pixel(
    target: &mut [f32],
    source: &[f32],
    opacity: f32,
    blend: Blend,
    atop: bool,
) {
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

//! Fill layers' content: a solid colour (`SoCo`) or a gradient (`GdFl`,
//! with its stops, transparency and five styles), from their descriptors,
//! as the document's stored samples (0..1; CMYK inverted, as the file keeps
//! it). The gradient's geometry is psd-tools' (a ramp across the canvas at
//! the fill's angle and scale), its ends and the easing between its stops
//! as Photoshop's own composites show them. A pattern fill
//! (`PtFl`) names a pattern of the document's (see [`super::pattern`]),
//! tiled from the canvas's corner at its scale.

use super::blend::Blend;
use super::descriptor::{Descriptor, Value};
use crate::psd::document::Mode;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fill {
    Solid(Vec<f32>),
    Gradient(Gradient),
    /// The ID of a pattern of the document's, and its scale.
    Pattern(String, f64),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Gradient {
    style: Style,
    angle: f64,
    scale: f64,
    reverse: bool,
    /// How smoothly it passes each stop (its "smoothness", 0..1).
    smoothness: f64,
    /// (location 0..1, samples), in order.
    colours: Vec<(f64, Vec<f32>)>,
    /// (location 0..1, opacity 0..1), in order.
    opacities: Vec<(f64, f32)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    Linear,
    Radial,
    Angle,
    Reflected,
    Diamond,
}

/// A colour descriptor (`RGBC`, `CMYC`, `Grsc`, `LbCl`, `HSBC`) as the
/// samples of a document of `mode`, and whether that needed a conversion
/// Photoshop would make through the document's profile (approximate here).
pub(super) fn colour(d: &Descriptor, mode: Mode) -> Option<(Vec<f32>, bool)> {
    let n = |key: &[u8]| d.number(key);
    let rgb = |r: f64, g: f64, b: f64| [r, g, b].map(|v| (v / 255.0).clamp(0.0, 1.0));
    let (native, rgb): (Option<Vec<f32>>, [f64; 3]) = match &d.class[..] {
        b"RGBC" => {
            let c = rgb(n(b"Rd  ")?, n(b"Grn ")?, n(b"Bl  ")?);
            let native = (mode == Mode::Rgb).then(|| c.iter().map(|&v| v as f32).collect());
            (native, c)
        }
        b"HSBC" => {
            let c = hsb_to_rgb(n(b"H   ")?, n(b"Strt")? / 100.0, n(b"Brgh")? / 100.0);
            let native = (mode == Mode::Rgb).then(|| c.iter().map(|&v| v as f32).collect());
            (native, c)
        }
        b"Grsc" => {
            let grey = 1.0 - (n(b"Gry ")? / 100.0).clamp(0.0, 1.0);
            let native = matches!(mode, Mode::Grayscale | Mode::Duotone).then(|| vec![grey as f32]);
            (native, [grey; 3])
        }
        b"CMYC" => {
            let inks = [n(b"Cyn ")?, n(b"Mgnt")?, n(b"Ylw ")?, n(b"Blck")?]
                .map(|v| (v / 100.0).clamp(0.0, 1.0));
            let native =
                (mode == Mode::Cmyk).then(|| inks.iter().map(|&v| (1.0 - v) as f32).collect());
            let k = 1.0 - inks[3];
            (native, [0, 1, 2].map(|i| (1.0 - inks[i]) * k))
        }
        b"LbCl" => {
            let (l, a, b) = (n(b"Lmnc")?, n(b"A   ")?, n(b"B   ")?);
            let native = (mode == Mode::Lab).then(|| {
                vec![
                    (l / 100.0).clamp(0.0, 1.0) as f32,
                    ((a + 128.0) / 255.0).clamp(0.0, 1.0) as f32,
                    ((b + 128.0) / 255.0).clamp(0.0, 1.0) as f32,
                ]
            });
            let [x, y, z] = crate::colour::lab_to_xyz_d50(l as f32, a as f32, b as f32);
            let srgb = crate::colour::xyz_d50_to_srgb(x, y, z);
            (native, srgb.map(|v| v as f64 / 255.0))
        }
        _ => return None,
    };
    if let Some(native) = native {
        return Some((native, false));
    }
    Some((from_rgb(rgb, mode)?, true))
}

/// sRGB (0..1) as a document's samples, naively: what Photoshop would
/// convert through its profiles.
fn from_rgb([r, g, b]: [f64; 3], mode: Mode) -> Option<Vec<f32>> {
    Some(match mode {
        Mode::Rgb => vec![r as f32, g as f32, b as f32],
        Mode::Grayscale | Mode::Duotone => vec![(0.299 * r + 0.587 * g + 0.114 * b) as f32],
        Mode::Cmyk => {
            let k = 1.0 - r.max(g).max(b);
            let ink = |c: f64| {
                if k < 1.0 {
                    (1.0 - c - k) / (1.0 - k)
                } else {
                    0.0
                }
            };
            [ink(r), ink(g), ink(b), k]
                .iter()
                .map(|&v| (1.0 - v) as f32)
                .collect()
        }
        Mode::Lab => {
            let linear = |v: f64| {
                if v <= 0.04045 {
                    v / 12.92
                } else {
                    ((v + 0.055) / 1.055).powf(2.4)
                }
            };
            let (r, g, b) = (linear(r), linear(g), linear(b));
            // Linear sRGB to D50 XYZ (Bradford-adapted), relative to white.
            let x = (0.4360747 * r + 0.3850649 * g + 0.1430804 * b) / 0.9642;
            let y = 0.2225045 * r + 0.7168786 * g + 0.0606169 * b;
            let z = (0.0139322 * r + 0.0971045 * g + 0.7141733 * b) / 0.8249;
            let f = |t: f64| {
                if t > (6.0f64 / 29.0).powi(3) {
                    t.cbrt()
                } else {
                    t / (3.0 * (6.0f64 / 29.0).powi(2)) + 4.0 / 29.0
                }
            };
            let (fx, fy, fz) = (f(x), f(y), f(z));
            vec![
                ((116.0 * fy - 16.0) / 100.0) as f32,
                ((500.0 * (fx - fy) + 128.0) / 255.0) as f32,
                ((200.0 * (fy - fz) + 128.0) / 255.0) as f32,
            ]
        }
        _ => return None,
    })
}

fn hsb_to_rgb(hue: f64, s: f64, v: f64) -> [f64; 3] {
    let h = (hue.rem_euclid(360.0)) / 60.0;
    let (s, v) = (s.clamp(0.0, 1.0), v.clamp(0.0, 1.0));
    let c = v * s;
    let x = c * (1.0 - ((h % 2.0) - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    [r + m, g + m, b + m]
}

/// A `SoCo` block's colour; whether it is approximate.
pub(super) fn solid(d: &Descriptor, mode: Mode) -> Option<(Fill, bool)> {
    let (samples, approximate) = colour(d.object(b"Clr ")?, mode)?;
    Some((Fill::Solid(samples), approximate))
}

/// A colour overlay (the `SoFi` layer effect): the layer's colours blended
/// with one colour by its mode, at its opacity; its transparency kept.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Overlay {
    colour: Vec<f32>,
    opacity: f32,
    blend: Blend,
}

impl Overlay {
    /// `colour` (straight samples) under the overlay.
    pub(super) fn apply(&self, colour: &mut [f32]) {
        for (c, o) in colour.iter_mut().zip(&self.colour) {
            *c += (self.blend.apply(*c, *o) - *c) * self.opacity;
        }
    }
}

/// An `lfx2` block's effects (its version, then a descriptor): a colour
/// overlay if one is on, and whether any other effect is on (which we do
/// not render). `None` if it cannot be read.
pub(super) fn effects(data: &[u8], mode: Mode) -> Option<(Option<Overlay>, bool)> {
    let d = super::descriptor::versioned(data.get(4..)?)?;
    if d.flag(b"masterFXSwitch") == Some(false) {
        return Some((None, false));
    }
    let (mut overlay, mut others) = (None, false);
    for (key, value) in &d.items {
        let effects: Vec<&Descriptor> = match value {
            Value::Object(effect) => vec![effect],
            Value::List(list) => list
                .iter()
                .filter_map(|v| match v {
                    Value::Object(effect) => Some(effect),
                    _ => None,
                })
                .collect(),
            _ => continue,
        };
        for effect in effects {
            if effect.flag(b"enab") != Some(true) {
                continue;
            }
            let colour_overlay = matches!(&key[..], b"SoFi" | b"solidFillMulti");
            let read = colour_overlay
                .then(|| {
                    let (colour, converted) = colour(effect.object(b"Clr ")?, mode)?;
                    let blend = match effect.enumeration(b"Md  ")? {
                        b"Nrml" => Blend::Normal,
                        b"Mltp" => Blend::Multiply,
                        b"Scrn" => Blend::Screen,
                        b"Ovrl" => Blend::Overlay,
                        b"Drkn" => Blend::Darken,
                        b"Lghn" => Blend::Lighten,
                        _ => return None,
                    };
                    let opacity = (effect.number(b"Opct")? / 100.0).clamp(0.0, 1.0) as f32;
                    Some((
                        Overlay {
                            colour,
                            opacity,
                            blend,
                        },
                        converted,
                    ))
                })
                .flatten();
            match read {
                Some((read, converted)) if overlay.is_none() => {
                    overlay = Some(read);
                    others |= converted;
                }
                _ => others = true,
            }
        }
    }
    Some((overlay, others))
}

/// A `PtFl` block's pattern; whether it is approximate (turned, or its
/// tiling moved off the canvas's corner).
pub(super) fn pattern(d: &Descriptor) -> Option<(Fill, bool)> {
    let id = match d.object(b"Ptrn")?.get(b"Idnt")? {
        Value::Text(id) => id.trim_end_matches('\0').to_owned(),
        _ => return None,
    };
    let scale = d.number(b"Scl ").unwrap_or(100.0) / 100.0;
    if !(scale.is_finite() && scale > 0.001) {
        return None;
    }
    let turned = d.number(b"Angl").is_some_and(|a| a != 0.0);
    let moved = d.object(b"phase").is_some_and(|p| {
        p.number(b"Hrzn").is_some_and(|v| v != 0.0) || p.number(b"Vrtc").is_some_and(|v| v != 0.0)
    });
    Some((Fill::Pattern(id, scale), turned || moved))
}

/// A `GdFl` block's gradient, if it is one of custom stops; whether it is
/// approximate (a colour converted, or midpoints off the middle).
pub(super) fn gradient(d: &Descriptor, mode: Mode) -> Option<(Fill, bool)> {
    let style = match d.enumeration(b"Type").unwrap_or(b"Lnr ") {
        b"Lnr " => Style::Linear,
        b"Rdl " => Style::Radial,
        b"Angl" => Style::Angle,
        b"Rflc" => Style::Reflected,
        b"Dmnd" => Style::Diamond,
        _ => return None,
    };
    let grad = d.object(b"Grad")?;
    if grad.enumeration(b"GrdF") != Some(b"CstS") {
        return None;
    }
    let mut approximate = false;
    let mut colours: Vec<(f64, Vec<f32>)> = Vec::new();
    for stop in grad.list(b"Clrs")? {
        let Value::Object(stop) = stop else {
            return None;
        };
        let location = stop.number(b"Lctn")? / 4096.0;
        // Foreground and background stops keep the colour they were given.
        let (samples, converted) = colour(stop.object(b"Clr ")?, mode)?;
        approximate |= converted || stop.number(b"Mdpn").is_some_and(|m| m != 50.0);
        if colours.last().is_some_and(|(at, _)| *at == location) {
            colours.pop();
        }
        colours.push((location, samples));
    }
    let mut opacities: Vec<(f64, f32)> = Vec::new();
    for stop in grad.list(b"Trns").unwrap_or(&[]) {
        let Value::Object(stop) = stop else {
            return None;
        };
        let location = stop.number(b"Lctn")? / 4096.0;
        let opacity = (stop.number(b"Opct")? / 100.0).clamp(0.0, 1.0) as f32;
        approximate |= stop.number(b"Mdpn").is_some_and(|m| m != 50.0);
        if opacities.last().is_some_and(|(at, _)| *at == location) {
            opacities.pop();
        }
        opacities.push((location, opacity));
    }
    if colours.is_empty() {
        return None;
    }
    Some((
        Fill::Gradient(Gradient {
            style,
            angle: d.number(b"Angl").unwrap_or(0.0),
            scale: d.number(b"Scl ").unwrap_or(100.0) / 100.0,
            reverse: d.flag(b"Rvrs").unwrap_or(false),
            smoothness: (grad.number(b"Intr").unwrap_or(0.0) / 4096.0).clamp(0.0, 1.0),
            colours,
            opacities,
        }),
        approximate,
    ))
}

impl Gradient {
    /// The samples and opacity at document pixel (`x`, `y`) of a canvas
    /// `width`×`height`, into `out` (colours, then opacity).
    pub(super) fn at(&self, x: f64, y: f64, width: u32, height: u32, out: &mut [f32]) {
        let (w, h) = (width.max(1) as f64, height.max(1) as f64);
        let ratio = self.angle.rem_euclid(90.0);
        let scale = self.scale * ((90.0 - ratio) / 90.0 * w + ratio / 90.0 * h);
        // Photoshop's ramp: across the canvas from its first pixel's edge
        // (−extent/scale) to past its last (psd-tools ends at the last).
        let axis = |p: f64, extent: f64| (2.0 * p / extent - 1.0) * extent / scale;
        let (gx, gy) = (axis(x, w), axis(y, h));
        let theta = self.angle.rem_euclid(360.0).to_radians();
        let (c, s) = (theta.cos(), theta.sin());
        let z = match self.style {
            Style::Linear => 0.5 * (c * gx - s * gy + 1.0),
            Style::Radial => (gx * gx + gy * gy).sqrt(),
            Style::Angle => ((gy.atan2(gx).to_degrees() + self.angle).rem_euclid(360.0)) / 360.0,
            Style::Reflected => (c * gx - s * gy).abs(),
            Style::Diamond => (c * gx - s * gy).abs() + (s * gx + c * gy).abs(),
        };
        let mut z = z.clamp(0.0, 1.0);
        if self.reverse {
            z = 1.0 - z;
        }
        let colors = out.len() - 1;
        for (c, o) in out[..colors].iter_mut().enumerate() {
            *o = interpolate(&self.colours, z, self.smoothness, |v| {
                v.get(c).copied().unwrap_or(0.0)
            });
        }
        out[colors] = if self.opacities.is_empty() {
            1.0
        } else {
            interpolate(&self.opacities, z, self.smoothness, |v| *v)
        };
    }
}

/// Interpolation between stops, held at the ends: linear eased by
/// `smoothness` (0..1) towards the mean of linear and smoothstep, which is
/// what Photoshop's ramps measure at a smoothness of 100 %.
fn interpolate<T>(stops: &[(f64, T)], z: f64, smoothness: f64, value: impl Fn(&T) -> f32) -> f32 {
    let Some(first) = stops.first() else {
        return 0.0;
    };
    if z <= first.0 {
        return value(&first.1);
    }
    for pair in stops.windows(2) {
        let ((a, va), (b, vb)) = (&pair[0], &pair[1]);
        if z <= *b {
            let t = if b > a { (z - a) / (b - a) } else { 1.0 };
            let smooth = t * t * (3.0 - 2.0 * t);
            let t = (t + smoothness * (smooth - t) / 2.0) as f32;
            return value(va) + (value(vb) - value(va)) * t;
        }
    }
    value(&stops[stops.len() - 1].1)
}

#[cfg(test)]
mod tests {
    use super::super::descriptor::tests::{double, encode, object};
    use super::super::descriptor::versioned;
    use super::*;

    fn block(items: &[(&[u8], Vec<u8>)]) -> Descriptor {
        versioned(&[16u32.to_be_bytes().to_vec(), encode(b"null", items)].concat()).unwrap()
    }

    fn rgb(r: f64, g: f64, b: f64) -> Vec<u8> {
        object(
            b"RGBC",
            &[
                (b"Rd  ", double(r)),
                (b"Grn ", double(g)),
                (b"Bl  ", double(b)),
            ],
        )
    }

    #[test]
    fn solid_colours_become_the_documents_samples() {
        let d = block(&[(b"Clr ", rgb(255.0, 0.0, 51.0))]);
        assert_eq!(
            solid(&d, Mode::Rgb),
            Some((Fill::Solid(vec![1.0, 0.0, 0.2]), false))
        );
        let cmyk = object(
            b"CMYC",
            &[
                (b"Cyn ", double(100.0)),
                (b"Mgnt", double(0.0)),
                (b"Ylw ", double(50.0)),
                (b"Blck", double(0.0)),
            ],
        );
        let d = block(&[(b"Clr ", cmyk)]);
        // Stored inverted: 0 is full ink.
        assert_eq!(
            solid(&d, Mode::Cmyk),
            Some((Fill::Solid(vec![0.0, 1.0, 0.5, 1.0]), false))
        );
        // In another mode it is converted, and says so.
        let (_, approximate) = solid(&d, Mode::Rgb).unwrap();
        assert!(approximate);
    }

    #[test]
    fn a_linear_gradient_runs_across_the_canvas_at_its_angle() {
        let stop = |at: f64, colour: Vec<u8>| {
            object(
                b"Clrt",
                &[
                    (b"Clr ", colour),
                    (
                        b"Lctn",
                        [b"long".to_vec(), (at as i32).to_be_bytes().to_vec()].concat(),
                    ),
                    (
                        b"Mdpn",
                        [b"long".to_vec(), 50i32.to_be_bytes().to_vec()].concat(),
                    ),
                ],
            )
        };
        let list = [
            b"VlLs".to_vec(),
            2u32.to_be_bytes().to_vec(),
            stop(0.0, rgb(0.0, 0.0, 0.0)),
            stop(4096.0, rgb(255.0, 255.0, 255.0)),
        ]
        .concat();
        let enumeration = |t: &[u8], v: &[u8]| {
            [
                b"enum".to_vec(),
                0u32.to_be_bytes().to_vec(),
                t.to_vec(),
                0u32.to_be_bytes().to_vec(),
                v.to_vec(),
            ]
            .concat()
        };
        let grad = object(
            b"Grdn",
            &[(b"GrdF", enumeration(b"GrdF", b"CstS")), (b"Clrs", list)],
        );
        let d = block(&[
            (
                b"Angl",
                [b"UntF#Ang".to_vec(), 0f64.to_be_bytes().to_vec()].concat(),
            ),
            (b"Type", enumeration(b"GrdT", b"Lnr ")),
            (b"Grad", grad),
        ]);
        let (Fill::Gradient(g), approximate) = gradient(&d, Mode::Rgb).unwrap() else {
            panic!("a gradient");
        };
        assert!(!approximate);
        let mut out = [0f32; 4];
        g.at(0.0, 5.0, 11, 11, &mut out);
        assert_eq!(out, [0.0, 0.0, 0.0, 1.0]);
        // The ramp ends past the last pixel: 10 of 11.
        g.at(10.0, 5.0, 11, 11, &mut out);
        assert!((out[0] - 10.0 / 11.0).abs() < 1e-6, "{out:?}");
        g.at(5.5, 0.0, 11, 11, &mut out);
        assert!((out[0] - 0.5).abs() < 1e-6, "{out:?}");
    }
}

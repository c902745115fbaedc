//! Colours to sRGB, through the document's own ICC profile (moxcms, Little
//! CMS's equal in pure Rust: no C to build for Windows or macOS, already
//! what the `image` crate uses, and it reads the LUT-based CMYK profiles
//! print work uses). A document without a profile, or with one that is
//! damaged or of another colour space, gets the conventional default:
//! sRGB for RGB; for grey, Photoshop's working grey ("Dot Gain 20%"); for
//! CMYK, a SWOP-like press (see [`swop_like`]). CMYK through its own
//! profile is shown as Photoshop shows it by default: relative colorimetric
//! with black-point compensation (see [`Compensated`]).
//!
//! Conversions run on the scaled preview, never the full document, so their
//! cost does not grow with the file.

use std::sync::Arc;

use moxcms::{
    ColorProfile, DataColorSpace, Layout, ProfileClass, RenderingIntent, ToneReprCurve,
    TransformOptions,
};

/// How a row's samples are laid out: grey (255 white), RGB, or CMYK with
/// ICC's convention (0 no ink, 255 full ink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Samples {
    Gray,
    Rgb,
    Cmyk,
}

impl Samples {
    pub fn per_pixel(self) -> usize {
        match self {
            Samples::Gray => 1,
            Samples::Rgb => 3,
            Samples::Cmyk => 4,
        }
    }
}

/// Converts one kind of samples to sRGB.
pub struct ToSrgb {
    samples: Samples,
    transform: Option<Arc<moxcms::Transform8BitExecutor>>,
    /// CMYK through its profile with black-point compensation (in place of
    /// `transform`).
    compensated: Option<Compensated>,
    /// Grey without a profile is sRGB grey, not Photoshop's.
    srgb_grey: bool,
}

/// Pixels converted at a time: the transform's own buffers stay small.
const PIXELS_AT_ONCE: usize = 4096;

impl ToSrgb {
    /// Through `icc` when it is a profile of `samples`' colour space that
    /// can be read; the default otherwise.
    pub fn new(samples: Samples, icc: Option<&[u8]>) -> Self {
        let compensated = match (samples, icc) {
            (Samples::Cmyk, Some(icc)) => Compensated::new(icc),
            _ => None,
        };
        let transform = match compensated {
            Some(_) => None,
            None => icc.and_then(|icc| profile_transform(samples, icc, false)),
        };
        Self {
            samples,
            transform,
            compensated,
            srgb_grey: false,
        }
    }

    /// As [`ToSrgb::new`], but grey without a profile is sRGB grey: what an
    /// untagged PNG, JPEG or TIFF means.
    pub fn for_images(samples: Samples, icc: Option<&[u8]>) -> Self {
        Self {
            srgb_grey: true,
            ..Self::new(samples, icc)
        }
    }

    /// For samples of linear light already encoded with sRGB's curve (a
    /// 32-bit document's): the profile's primaries apply, with sRGB's curve
    /// in place of its own (linear) one; without a profile, sRGB.
    pub fn of_linear_light(samples: Samples, icc: Option<&[u8]>) -> Self {
        let transform = icc.and_then(|icc| profile_transform(samples, icc, true));
        Self {
            samples,
            transform,
            compensated: None,
            srgb_grey: true,
        }
    }

    /// Whether the document's own profile is applied (not a default).
    pub fn uses_profile(&self) -> bool {
        self.transform.is_some() || self.compensated.is_some()
    }

    /// `samples` (whole pixels) to RGB, three bytes a pixel, in `rgb`.
    pub fn convert(&self, samples: &[u8], rgb: &mut [u8]) {
        let n = self.samples.per_pixel();
        debug_assert_eq!(samples.len() / n * 3, rgb.len());
        if let Some(compensated) = &self.compensated {
            for (from, to) in samples
                .chunks(PIXELS_AT_ONCE * n)
                .zip(rgb.chunks_mut(PIXELS_AT_ONCE * 3))
            {
                if !compensated.convert(from, to) {
                    self.default_convert(from, to);
                }
            }
        } else if let Some(transform) = &self.transform {
            for (from, to) in samples
                .chunks(PIXELS_AT_ONCE * n)
                .zip(rgb.chunks_mut(PIXELS_AT_ONCE * 3))
            {
                if transform.transform(from, to).is_err() {
                    // Only a length mismatch fails, which chunks of whole pixels cannot be.
                    self.default_convert(from, to);
                }
            }
        } else {
            self.default_convert(samples, rgb);
        }
    }

    fn default_convert(&self, samples: &[u8], rgb: &mut [u8]) {
        match self.samples {
            Samples::Rgb => rgb.copy_from_slice(samples),
            Samples::Gray if self.srgb_grey => {
                for (&v, out) in samples.iter().zip(rgb.chunks_exact_mut(3)) {
                    out.fill(v);
                }
            }
            Samples::Gray => {
                let table = dot_gain_20_table();
                for (&v, out) in samples.iter().zip(rgb.chunks_exact_mut(3)) {
                    out.fill(table[v as usize]);
                }
            }
            Samples::Cmyk => {
                for (cmyk, out) in samples.chunks_exact(4).zip(rgb.chunks_exact_mut(3)) {
                    out.copy_from_slice(&swop_like([cmyk[0], cmyk[1], cmyk[2], cmyk[3]]));
                }
            }
        }
    }
}

/// The intent a document is shown with: relative colorimetric, as
/// Photoshop's view shows it; a LUT profile without that table has its
/// perceptual one stand in for it (ICC.1's rule, which moxcms leaves to
/// its caller).
fn view_intent(profile: &ColorProfile) -> RenderingIntent {
    if profile.lut_a_to_b_perceptual.is_some() && profile.lut_a_to_b_colorimetric.is_none() {
        RenderingIntent::Perceptual
    } else {
        RenderingIntent::RelativeColorimetric
    }
}

/// sRGB's primaries with a linear curve: the space black-point
/// compensation is worked in (a scaling of XYZ, and so of linear RGB).
fn linear_srgb() -> ColorProfile {
    let mut profile = ColorProfile::new_srgb();
    let linear = Some(ToneReprCurve::Parametric(vec![1.0]));
    profile.red_trc = linear.clone();
    profile.green_trc = linear.clone();
    profile.blue_trc = linear.clone();
    profile.gray_trc = linear;
    // Else moxcms takes sRGB's curve from its CICP tag.
    profile.cicp = None;
    profile
}

/// CMYK through its profile as Photoshop shows it by default: relative
/// colorimetric with black-point compensation (moxcms has none). The inks go
/// to linear sRGB unclipped; the profile's black point, found as Little CMS
/// finds it (a print profile's perceptual black, read back colorimetrically;
/// else its darkest colorant; L* at most 50, neutral), is then scaled to
/// sRGB's black in XYZ, which for a neutral black point is the same scaling
/// of each linear channel: `(v − Y_black) / (1 − Y_black)`.
struct Compensated {
    to_linear: Arc<moxcms::TransformF32Executor>,
    /// The black point's luminance, 0..0.5.
    black: f32,
}

impl Compensated {
    fn new(icc: &[u8]) -> Option<Self> {
        let profile = ColorProfile::new_from_slice(icc).ok()?;
        if profile.color_space != DataColorSpace::Cmyk {
            return None;
        }
        let linear = linear_srgb();
        let options = |rendering_intent| TransformOptions {
            rendering_intent,
            ..TransformOptions::default()
        };
        let to_linear = profile
            .create_transform_f32(
                Layout::Rgba,
                &linear,
                Layout::Rgb,
                options(view_intent(&profile)),
            )
            .ok()?;
        let luminance = |rgb: &[f32]| {
            let m = linear.rgb_to_xyz_matrix().v[1];
            (m[0] * rgb[0] as f64 + m[1] * rgb[1] as f64 + m[2] * rgb[2] as f64) as f32
        };
        let read_back = |inks: &[f32]| {
            let mut rgb = [0f32; 3];
            to_linear
                .transform(inks, &mut rgb)
                .ok()
                .map(|_| luminance(&rgb))
        };
        // A print profile's black is where its perceptual table takes black.
        let perceptual_black = (profile.profile_class == ProfileClass::OutputDevice)
            .then(|| {
                linear
                    .create_transform_f32(
                        Layout::Rgb,
                        &profile,
                        Layout::Rgba,
                        options(RenderingIntent::Perceptual),
                    )
                    .ok()
            })
            .flatten()
            .and_then(|to_inks| {
                let mut inks = [0f32; 4];
                to_inks.transform(&[0.0, 0.0, 0.0], &mut inks).ok()?;
                read_back(&inks)
            });
        let black = perceptual_black.or_else(|| read_back(&[1.0; 4]))?;
        // L* 50 at most: Y 0.184.
        let black = black.clamp(0.0, 0.184_187);
        Some(Self { to_linear, black })
    }

    /// Inks (0 none, 255 full), four a pixel, to sRGB; false if the
    /// transform failed.
    fn convert(&self, samples: &[u8], rgb: &mut [u8]) -> bool {
        let inks: Vec<f32> = samples.iter().map(|&v| v as f32 / 255.0).collect();
        let mut linear = vec![0f32; rgb.len()];
        if self.to_linear.transform(&inks, &mut linear).is_err() {
            return false;
        }
        let scale = 1.0 / (1.0 - self.black);
        for (out, v) in rgb.iter_mut().zip(linear) {
            *out = encode_srgb((v - self.black) * scale);
        }
        true
    }
}

/// A transform from the profile in `icc` to sRGB, if the profile reads and
/// describes `samples`' colour space. A hostile profile is bounded by the
/// parser's limits (10 MiB, CLUTs of 10 M entries).
fn profile_transform(
    samples: Samples,
    icc: &[u8],
    srgb_curve: bool,
) -> Option<Arc<moxcms::Transform8BitExecutor>> {
    let mut profile = ColorProfile::new_from_slice(icc).ok()?;
    if srgb_curve {
        let srgb = ColorProfile::new_srgb();
        profile.red_trc = srgb.red_trc.clone();
        profile.green_trc = srgb.green_trc.clone();
        profile.blue_trc = srgb.blue_trc.clone();
        profile.gray_trc = srgb.red_trc;
    }
    let layout = match (samples, profile.color_space) {
        (Samples::Gray, DataColorSpace::Gray) => Layout::Gray,
        (Samples::Rgb, DataColorSpace::Rgb) => Layout::Rgb,
        // moxcms lays out four inks as it does RGBA.
        (Samples::Cmyk, DataColorSpace::Cmyk) => Layout::Rgba,
        _ => return None,
    };
    let rendering_intent = view_intent(&profile);
    profile
        .create_transform_8bit(
            layout,
            &ColorProfile::new_srgb(),
            Layout::Rgb,
            TransformOptions {
                rendering_intent,
                ..TransformOptions::default()
            },
        )
        .ok()
}

/// The share of paper a dot covers once printed: 20% more at 50%, less
/// towards the ends (the parabola of Photoshop's "Dot Gain 20%").
fn dot_gain_20(ink: f32) -> f32 {
    ink + 0.8 * ink * (1.0 - ink)
}

/// Grey (255 white) under "Dot Gain 20%": the light the paper reflects
/// where ink covers that share of it, as sRGB.
fn dot_gain_20_table() -> &'static [u8; 256] {
    static TABLE: std::sync::OnceLock<[u8; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn(|v| {
            let ink = 1.0 - v as f32 / 255.0;
            encode_srgb(1.0 - dot_gain_20(ink))
        })
    })
}

/// One ink, `ink` as linear sRGB at full strength, printed on white paper
/// where a sample `v` (255 white, 0 full ink, as grey is stored) says, its
/// dots grown as "Dot Gain 20%" grows them: sRGB.
pub fn ink_on_paper(ink: [f32; 3], v: u8) -> [u8; 3] {
    let covered = dot_gain_20(1.0 - v as f32 / 255.0);
    ink.map(|c| encode_srgb(1.0 - covered * (1.0 - c)))
}

/// CMYK without a profile, as a SWOP press prints it: typical coated SWOP
/// solids (CIELAB D50: cyan 55/−37/−50, magenta 48/74/−3, yellow 89/−5/93,
/// black 18/0/0, relative to the paper), each dot grown by 20% at 50%, and
/// the inks' overprints as the products of their reflectances (a Neugebauer
/// mix, which then factors ink by ink). Paper white is sRGB white, as a
/// relative-colorimetric view shows it.
pub fn swop_like(cmyk: [u8; 4]) -> [u8; 3] {
    let solids = swop_solids();
    let mut xyz = [1.0f32; 3];
    for (ink, solid) in cmyk.iter().zip(solids) {
        let covered = dot_gain_20(*ink as f32 / 255.0);
        for (c, s) in xyz.iter_mut().zip(solid) {
            *c *= 1.0 - covered * (1.0 - s);
        }
    }
    let [x, y, z] = [xyz[0] * D50[0], xyz[1], xyz[2] * D50[2]];
    xyz_d50_to_srgb(x, y, z)
}

const D50: [f32; 3] = [0.9642, 1.0, 0.8249];

/// Each solid's XYZ as a share of white's.
fn swop_solids() -> &'static [[f32; 3]; 4] {
    static SOLIDS: std::sync::OnceLock<[[f32; 3]; 4]> = std::sync::OnceLock::new();
    SOLIDS.get_or_init(|| {
        [
            [55.0, -37.0, -50.0],
            [48.0, 74.0, -3.0],
            [89.0, -5.0, 93.0],
            [18.0, 0.0, 0.0],
        ]
        .map(|[l, a, b]| {
            let xyz = lab_to_xyz_d50(l, a, b);
            [xyz[0] / D50[0], xyz[1], xyz[2] / D50[2]]
        })
    })
}

/// CIELAB to XYZ, both under D50.
pub fn lab_to_xyz_d50(l: f32, a: f32, b: f32) -> [f32; 3] {
    let fy = (l + 16.0) / 116.0;
    let (fx, fz) = (fy + a / 500.0, fy - b / 200.0);
    let inverse = |t: f32| {
        if t > 6.0 / 29.0 {
            t * t * t
        } else {
            3.0 * (6.0f32 / 29.0).powi(2) * (t - 4.0 / 29.0)
        }
    };
    [D50[0] * inverse(fx), inverse(fy), D50[2] * inverse(fz)]
}

/// D50 XYZ (Bradford-adapted) to 8-bit sRGB.
pub fn xyz_d50_to_srgb(x: f32, y: f32, z: f32) -> [u8; 3] {
    [
        3.1339 * x - 1.6169 * y - 0.4906 * z,
        -0.9788 * x + 1.9161 * y + 0.0335 * z,
        0.0719 * x - 0.2290 * y + 1.4052 * z,
    ]
    .map(encode_srgb)
}

/// Linear light (0..1, clamped) to an 8-bit sRGB sample.
pub fn encode_srgb(linear: f32) -> u8 {
    let v = linear.clamp(0.0, 1.0);
    let encoded = if v <= 0.003_130_8 {
        12.92 * v
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    };
    (encoded * 255.0 + 0.5) as u8
}

/// Converts `rgba`'s colours to sRGB through `icc` (a grey profile for a
/// grey image), if it reads.
pub fn rgba_to_srgb(rgba: &mut image::RgbaImage, grey: bool, icc: &[u8]) {
    let samples = if grey { Samples::Gray } else { Samples::Rgb };
    let convert = ToSrgb::for_images(samples, Some(icc));
    if !convert.uses_profile() {
        return;
    }
    let width = rgba.width() as usize;
    let (mut row, mut rgb) = (Vec::with_capacity(width * 3), vec![0u8; width * 3]);
    for line in rgba.chunks_exact_mut(width * 4) {
        row.clear();
        for pixel in line.chunks_exact(4) {
            row.extend_from_slice(&pixel[..samples.per_pixel()]);
        }
        convert.convert(&row, &mut rgb);
        for (pixel, colour) in line.chunks_exact_mut(4).zip(rgb.chunks_exact(3)) {
            pixel[..3].copy_from_slice(colour);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_is_white_and_four_solid_inks_are_near_black() {
        assert_eq!(swop_like([0, 0, 0, 0]), [255, 255, 255]);
        let rich_black = swop_like([255; 4]);
        assert!(rich_black.iter().all(|&c| c < 20), "{rich_black:?}");
        // Cyan is blue-green, magenta red-blue, yellow red-green.
        let [r, g, b] = swop_like([255, 0, 0, 0]);
        assert!(r < 60 && g > 120 && b > 180, "cyan {r} {g} {b}");
        let [r, g, b] = swop_like([0, 255, 0, 0]);
        assert!(r > 200 && g < 60 && b > 100, "magenta {r} {g} {b}");
        let [r, g, b] = swop_like([0, 0, 255, 0]);
        assert!(r > 230 && g > 210 && b < 60, "yellow {r} {g} {b}");
    }

    #[test]
    fn grey_gains_twenty_percent_at_half_ink() {
        let table = dot_gain_20_table();
        assert_eq!(table[255], 255);
        assert_eq!(table[0], 0);
        // Half ink prints as 70%: 30% of the light, sRGB 149.
        assert_eq!(table[128].abs_diff(149), 0, "{}", table[128]);
    }

    #[test]
    fn a_damaged_or_mismatched_profile_falls_back_to_the_default() {
        let damaged = ToSrgb::new(Samples::Cmyk, Some(b"not a profile at all"));
        assert!(!damaged.uses_profile());
        let srgb = ColorProfile::new_srgb().encode().unwrap();
        assert!(ToSrgb::new(Samples::Rgb, Some(&srgb)).uses_profile());
        assert!(!ToSrgb::new(Samples::Cmyk, Some(&srgb)).uses_profile());
        let mut rgb = [0u8; 3];
        damaged.convert(&[0, 0, 0, 0], &mut rgb);
        assert_eq!(rgb, [255, 255, 255]);
    }
}

//! A PSD's or PSB's header and the sections before its image data: the
//! size, depth and colour mode (refused here when the format forbids them),
//! the palette, the image resources ([`super::resources`]) and where the
//! layer records and the composite are. It reads no pixels.

use std::io::{Read, Seek};

use super::cursor::{be16, be32, Cursor, Short};
use super::damaged;
use super::resources;
use super::thumbnail::Thumbnail;
use crate::colour::{Samples, ToSrgb};
use crate::{Limits, NoPreview};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Bitmap,
    Grayscale,
    Indexed,
    Rgb,
    Cmyk,
    Multichannel,
    Duotone,
    Lab,
}

impl Mode {
    fn from_code(code: u16) -> Option<Self> {
        Some(match code {
            0 => Mode::Bitmap,
            1 => Mode::Grayscale,
            2 => Mode::Indexed,
            3 => Mode::Rgb,
            4 => Mode::Cmyk,
            7 => Mode::Multichannel,
            8 => Mode::Duotone,
            9 => Mode::Lab,
            _ => return None,
        })
    }

    /// Channels that hold colour (the rest are extra: alpha, spot, masks).
    /// A multichannel document's channels are all inks: its first is
    /// shown, as psd-tools shows it.
    pub(super) fn colors(self) -> u16 {
        match self {
            Mode::Bitmap | Mode::Grayscale | Mode::Indexed | Mode::Duotone | Mode::Multichannel => {
                1
            }
            Mode::Rgb | Mode::Lab => 3,
            Mode::Cmyk => 4,
        }
    }
}

pub(super) struct Document {
    pub(super) psb: bool,
    pub(super) channels: u16,
    pub(super) height: u32,
    pub(super) width: u32,
    pub(super) depth: u16,
    pub(super) mode: Mode,
    /// Indexed colour: 256 RGB entries.
    pub(super) palette: Option<Box<[[u8; 3]; 256]>>,
    /// Duotone: its primary ink as linear sRGB, when it is not black (and
    /// its colour is given rather than named from a book).
    pub(super) duotone_ink: Option<[f32; 3]>,
    pub(super) thumbnail: Option<Thumbnail>,
    /// Resource 1057 said the composite is real (true when absent).
    pub(super) has_real_composite: bool,

    /// The embedded ICC profile (resource 1039).
    pub(super) icc: Option<Vec<u8>>,
    /// The composite's first extra channel is its transparency: the layer
    /// count is negative, or a "merged transparency" block says so. Else
    /// extra channels are saved selections or spot colours.
    pub(super) merged_alpha: bool,
    /// Where the layer records start (at the layer count) and end.
    pub(super) layer_info: Option<std::ops::Range<u64>>,
    /// Where the document's patterns are (its `Patt` blocks), for pattern fills.
    pub(super) patterns: Vec<std::ops::Range<u64>>,
    /// Where the image data section starts (its compression code), and its end.
    pub(super) image_data: u64,
    pub(super) file_len: u64,
}

/// Largest sides the format allows.
const PSD_MAX_SIDE: u32 = 30_000;
const PSB_MAX_SIDE: u32 = 300_000;

fn kind_of(psb: bool) -> &'static str {
    if psb {
        "a Photoshop large document (PSB)"
    } else {
        "a Photoshop document"
    }
}

fn max_side_of(psb: bool) -> u32 {
    if psb {
        PSB_MAX_SIDE
    } else {
        PSD_MAX_SIDE
    }
}

impl Document {
    /// What the document is, as messages name it.
    pub(super) fn kind(&self) -> &'static str {
        kind_of(self.psb)
    }

    /// The longest side the format allows (a layer's too).
    pub(super) fn max_side(&self) -> u32 {
        max_side_of(self.psb)
    }

    pub(super) fn read(
        at: &mut Cursor,
        file: &mut (impl Read + Seek),
        file_len: u64,
        limits: &Limits,
    ) -> Result<Self, NoPreview> {
        let mut kind = kind_of(false);
        let head = at
            .take(file, 26)
            .map_err(|e| e.in_section(kind, "its header"))?;
        if &head[0..4] != b"8BPS" {
            return Err(NoPreview("not a Photoshop document".into()));
        }
        let version = be16(&head[4..]);
        let psb = match version {
            1 => false,
            2 => {
                kind = kind_of(true);
                true
            }
            v => return Err(damaged(kind, format_args!("unknown version {v}"))),
        };
        let channels = be16(&head[12..]);
        let height = be32(&head[14..]);
        let width = be32(&head[18..]);
        let depth = be16(&head[22..]);
        let mode_code = be16(&head[24..]);
        if !(1..=56).contains(&channels) {
            return Err(damaged(
                kind,
                format_args!("{channels} channels (1 to 56 allowed)"),
            ));
        }
        let max_side = max_side_of(psb);
        if width == 0 || height == 0 || width > max_side || height > max_side {
            return Err(damaged(
                kind,
                format_args!(
                    "its header claims {width}×{height} pixels (1 to {max_side} a side allowed)"
                ),
            ));
        }
        if !matches!(depth, 1 | 8 | 16 | 32) {
            return Err(damaged(kind, format_args!("a depth of {depth} bits")));
        }
        let mode = Mode::from_code(mode_code)
            .ok_or_else(|| damaged(kind, format_args!("unknown colour mode {mode_code}")))?;
        if (mode == Mode::Bitmap) != (depth == 1) {
            return Err(damaged(
                kind,
                format_args!("colour mode {mode_code} with a depth of {depth} bits"),
            ));
        }

        // Colour mode data: the palette of an indexed document.
        let color_len = at
            .section_len(file, false)
            .map_err(|e| e.in_section(kind, "its colour mode data"))?;
        let color_start = at.pos();
        let palette = if mode == Mode::Indexed {
            if color_len < 768 {
                return Err(damaged(
                    kind,
                    format_args!("an indexed-colour document with a palette of {color_len} bytes"),
                ));
            }
            let bytes = at
                .take(file, 768)
                .map_err(|e| e.in_section(kind, "its palette"))?;
            let mut palette = Box::new([[0u8; 3]; 256]);
            for (i, entry) in palette.iter_mut().enumerate() {
                *entry = [bytes[i], bytes[256 + i], bytes[512 + i]];
            }
            Some(palette)
        } else {
            None
        };
        let duotone_ink = if mode == Mode::Duotone && color_len >= 14 {
            let bytes = at
                .take(file, 14)
                .map_err(|e| e.in_section(kind, "its duotone inks"))?;
            primary_ink(&bytes[4..14])
        } else {
            None
        };
        at.seek_to(color_start + color_len);

        // Image resources: the thumbnail and whether the composite is real.
        let resources::Resources {
            thumbnail,
            has_real_composite,
            icc,
        } = resources::read(at, file, kind, limits)?;

        let layers_len = at
            .section_len(file, psb)
            .map_err(|e| e.in_section(kind, "its layer and mask information"))?;
        let image_data = at.pos() + layers_len;
        // A damaged layer section leaves the composite as good as it was.
        let (layer_info, merged_alpha, patterns) =
            read_layer_section(at, file, psb, image_data).unwrap_or((None, false, Vec::new()));
        // Every channel of a multichannel document is an ink, none alpha.
        let merged_alpha = merged_alpha && mode != Mode::Multichannel;
        Ok(Self {
            psb,
            channels,
            height,
            width,
            depth,
            mode,
            palette,
            duotone_ink,
            thumbnail,
            has_real_composite,
            icc,
            merged_alpha,
            layer_info,
            patterns,
            image_data,
            file_len,
        })
    }

    /// Why the composite cannot be shown, if it cannot.
    pub(super) fn why_no_composite(&self) -> Option<&'static str> {
        if !self.has_real_composite {
            Some("it was saved without its composite image (\"maximize compatibility\" off)")
        } else if self.image_data >= self.file_len {
            Some("it is damaged: it ends before its composite image")
        } else {
            None
        }
    }

    /// The conversion of this document's colours to sRGB.
    pub(super) fn to_srgb(&self, samples: Samples) -> ToSrgb {
        let icc = self.icc.as_deref();
        if self.depth == 32 {
            ToSrgb::of_linear_light(samples, icc)
        } else {
            ToSrgb::new(samples, icc)
        }
    }

    /// Bytes in one row of one channel.
    pub(super) fn row_bytes(&self) -> u64 {
        (self.width as u64 * self.depth as u64).div_ceil(8)
    }
}

/// A duotone's first ink (Photoshop's colour record: a space and four
/// 16-bit components) as linear sRGB; `None` for black, or for a colour
/// named from a book (Pantone and the like), which the file does not give.
fn primary_ink(record: &[u8]) -> Option<[f32; 3]> {
    let space = be16(record);
    let v = |i: usize| be16(&record[2 + 2 * i..]) as f32;
    let linear = |c: f32| {
        let c = c.clamp(0.0, 1.0);
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let ink = match space {
        // RGB, 0..65535.
        0 => [v(0), v(1), v(2)].map(|c| linear(c / 65535.0)),
        // CMYK, 65535 no ink: black alone is black (as grey is shown);
        // another ink SWOP-like, as the untagged default.
        2 if v(3) == 0.0 && (0..3).all(|i| v(i) == 65535.0) => return None,
        2 => {
            let inks = [0, 1, 2, 3].map(|i| (255.0 - v(i) / 257.0).round().clamp(0.0, 255.0) as u8);
            crate::colour::swop_like(inks).map(|c| linear(c as f32 / 255.0))
        }
        // Lab: L 0..10000, a and b signed hundredths.
        7 => {
            let signed = |i: usize| be16(&record[2 + 2 * i..]) as i16 as f32 / 100.0;
            let [x, y, z] = crate::colour::lab_to_xyz_d50(v(0) / 100.0, signed(1), signed(2));
            crate::colour::xyz_d50_to_srgb(x, y, z).map(|c| linear(c as f32 / 255.0))
        }
        // Grey, 0..10000 of ink.
        8 => [linear(1.0 - v(0) / 10000.0); 3],
        _ => return None,
    };
    (ink.iter().any(|&c| c > 0.002)).then_some(ink)
}

/// Where the layer records are (at the layer count), whether the
/// composite's first extra channel is its transparency, and where the
/// document's patterns are.
type LayerSection = (
    Option<std::ops::Range<u64>>,
    bool,
    Vec<std::ops::Range<u64>>,
);

/// Where the layer records are, whether the composite's first extra
/// channel is its transparency, and where its patterns are, from the layer
/// and mask section (which ends at `end`). 16- and 32-bit documents keep their layers in an `Lr16` or
/// `Lr32` block after the (then empty) layer info.
fn read_layer_section(
    at: &mut Cursor,
    file: &mut (impl Read + Seek),
    psb: bool,
    end: u64,
) -> Result<LayerSection, Short> {
    let mut layer_info = None;
    let mut patterns = Vec::new();
    let (mut merged_alpha, mut merged_transparency) = (false, false);
    if at.pos() >= end {
        return Ok((None, false, patterns));
    }
    let info_len = at.section_len(file, psb)?;
    let info_start = at.pos();
    let note_layers = |at: &mut Cursor,
                       file: &mut _,
                       len: u64,
                       layer_info: &mut Option<std::ops::Range<u64>>,
                       merged_alpha: &mut bool|
     -> Result<(), Short> {
        if let Some((records, count)) = layer_count(at, file, len)? {
            *merged_alpha |= count < 0;
            *layer_info = layer_info.take().or(Some(records));
        }
        Ok(())
    };
    note_layers(
        at,
        file,
        info_len.min(end.saturating_sub(info_start)),
        &mut layer_info,
        &mut merged_alpha,
    )?;
    at.seek_to(info_start + info_len);
    // Some writers (GIMP) end the section there, without the global
    // mask's length: what follows is the composite.
    if end.saturating_sub(at.pos()) < 4 {
        return Ok((layer_info, merged_alpha || merged_transparency, patterns));
    }
    let mask_len = at.section_len(file, false)?;
    at.seek_to(at.pos() + mask_len);
    // Tagged blocks, each padded to four bytes.
    while end.saturating_sub(at.pos()) >= 12 {
        let head = at.take(file, 8)?;
        if &head[0..4] != b"8BIM" && &head[0..4] != b"8B64" {
            break;
        }
        let key: [u8; 4] = head[4..8].try_into().expect("4 bytes");
        let len = at.section_len(file, psb && has_long_length(&key))?;
        let start = at.pos();
        match &key {
            b"Lr16" | b"Lr32" | b"Layr" => {
                note_layers(at, file, len, &mut layer_info, &mut merged_alpha)?
            }
            b"Mtrn" | b"Mt16" | b"Mt32" => merged_transparency = true,
            b"Patt" | b"Pat2" | b"Pat3" => patterns.push(start..(start + len).min(end)),
            _ => {}
        }
        at.seek_to(start + len.next_multiple_of(4));
    }
    Ok((layer_info, merged_alpha || merged_transparency, patterns))
}

/// The layer count at the start of a layer info of `len` bytes, and where
/// its records are; none for an empty one.
fn layer_count(
    at: &mut Cursor,
    file: &mut (impl Read + Seek),
    len: u64,
) -> Result<Option<(std::ops::Range<u64>, i16)>, Short> {
    if len < 2 {
        return Ok(None);
    }
    let start = at.pos();
    let count = be16(at.take(file, 2)?) as i16;
    Ok((count != 0).then(|| (start..start + len, count)))
}

/// The tagged blocks whose length takes 8 bytes in a PSB.
pub(super) fn has_long_length(key: &[u8; 4]) -> bool {
    matches!(
        key,
        b"LMsk"
            | b"Lr16"
            | b"Lr32"
            | b"Layr"
            | b"Mt16"
            | b"Mt32"
            | b"Mtrn"
            | b"Alph"
            | b"FMsk"
            | b"lnk2"
            | b"lnk3"
            | b"lnkE"
            | b"FEid"
            | b"FXid"
            | b"FELS"
            | b"PxSD"
            | b"pths"
            | b"extd"
            | b"extn"
            | b"cinf"
            | b"artd"
    )
}

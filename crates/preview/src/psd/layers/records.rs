//! The layer records: each layer's rectangle, channels (and where their
//! data is), blend mode, opacity, fill, flags, masks, and whether it shows
//! something we do not render (adjustments, effects...). It reads no pixels,
//! and refuses a layer whose side the format would not allow.

use std::io::{Read, Seek};

use super::blend::{share, Blend};
use super::descriptor;
use super::fill::{self, Fill, Overlay};
use super::vector::{self, VectorMask};
use crate::psd::cursor::{be16, be32, be64, Cursor, Short};
use crate::psd::damaged;
use crate::psd::document::{has_long_length, Document};
use crate::{Limits, NoPreview};

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Rect {
    pub(super) top: i64,
    pub(super) left: i64,
    pub(super) bottom: i64,
    pub(super) right: i64,
}

impl Rect {
    pub(super) fn read(b: &[u8]) -> Self {
        let at = |i: usize| be32(&b[i..]) as i32 as i64;
        Self {
            top: at(0),
            left: at(4),
            bottom: at(8),
            right: at(12),
        }
    }

    pub(super) fn width(&self) -> u64 {
        (self.right - self.left).max(0) as u64
    }

    pub(super) fn height(&self) -> u64 {
        (self.bottom - self.top).max(0) as u64
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Mask {
    pub(super) rect: Rect,
    /// The mask's value outside its rectangle.
    pub(super) outside: u8,
    /// The channel holding it: -2, or -3 for the user mask beside a vector one.
    pub(super) id: i16,
    /// How much of it applies (its density, 255 all).
    pub(super) density: u8,
}

impl Mask {
    /// A value of the mask as it applies: at a density below 255, what it
    /// hides shows through in part.
    pub(super) fn applied(&self, v: u8) -> u8 {
        let d = self.density as u32;
        ((v as u32 * d + 127) / 255 + (255 - d)) as u8
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Pixels,
    /// A group's own record (open or closed folder): it comes after its members.
    GroupTop,
    /// The hidden divider before a group's members.
    GroupBottom,
}

pub(super) struct ChannelData {
    pub(super) id: i16,
    /// Where its compression code is, and its length with it.
    pub(super) offset: u64,
    pub(super) len: u64,
}

pub(super) struct Layer {
    pub(super) rect: Rect,
    pub(super) channels: Vec<ChannelData>,
    pub(super) blend: Blend,
    pub(super) opacity: u8,
    pub(super) fill: u8,
    pub(super) clipped: bool,
    pub(super) hidden: bool,
    pub(super) mask: Option<Mask>,
    pub(super) kind: Kind,
    /// Shows something we do not render (an adjustment, effects...).
    pub(super) unrendered: bool,
    /// A fill layer's content (solid colour, gradient).
    pub(super) fill_content: Option<Fill>,
    /// Its vector mask (a shape layer's outline), unless disabled.
    pub(super) vector_mask: Option<VectorMask>,
    /// Its pixels were stored without its vector mask applied: a pixel
    /// layer whose user mask is not one of its own (psd-tools' reading).
    pub(super) vector_over_pixels: bool,
    /// How much of its vector mask applies (its density, 255 all).
    pub(super) vector_density: u8,
    /// Its colour overlay effect, if on.
    pub(super) overlay: Option<Overlay>,
}

impl Layer {
    /// Shows something we do not render: adjustments, effects, or a blend
    /// mode drawn as normal.
    pub(super) fn approximate(&self) -> bool {
        self.unrendered || self.blend == Blend::Other
    }

    /// Whether it has pixels of its own (a fill or shape layer saved
    /// without them has an empty rectangle).
    pub(super) fn has_pixels(&self) -> bool {
        self.rect.width() > 0 && self.rect.height() > 0
    }

    /// Its opacity times its fill, 0..1.
    pub(super) fn strength(&self) -> f32 {
        share(self.opacity) * share(self.fill)
    }
}

/// A layer's or mask's rectangle may reach past the canvas, but no side may
/// be longer than the format allows a document's.
fn check_side(doc: &Document, rect: Rect) -> Result<(), NoPreview> {
    let most = doc.max_side() as u64;
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
            // Effects but a colour overlay (`lfx2`'s, read apart).
            | b"lmfx"
    )
}

/// The largest fill or vector-mask block read; a larger one is left
/// unrendered (its layer approximate).
const MAX_SHAPE_BLOCK: u64 = 4 << 20;

/// The `len` bytes at `at`, read through its buffer.
fn block_bytes(at: &mut Cursor, file: &mut (impl Read + Seek), len: u64) -> Result<Vec<u8>, Short> {
    let mut bytes = Vec::with_capacity(len as usize);
    while (bytes.len() as u64) < len {
        let n = at.capacity().min(len as usize - bytes.len());
        bytes.extend_from_slice(at.take(file, n)?);
    }
    Ok(bytes)
}

/// Reads every layer record in `records` (from the layer count), and where
/// each channel's data is.
pub(super) fn read_records(
    doc: &Document,
    file: &mut (impl Read + Seek),
    records: std::ops::Range<u64>,
    limits: &Limits,
) -> Result<Vec<Layer>, NoPreview> {
    let kind = doc.kind();
    let short = |e: Short| e.in_section(kind, "its layers");
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
        let mut masks: (Option<Mask>, Option<Mask>) = (None, None);
        let mut mask_parameters = false;
        let mut vector_density = 255u8;
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
                density: 255,
            });
            // The real user mask's header comes first (as psd-tools reads
            // Photoshop's files, not as the specification says), and only
            // when the layer has its channel (-3); it is the mask shown
            // only when its own flags say it holds one (bit 4).
            if mask_len >= 36 && channels.iter().any(|c| c.id == -3) {
                let b = at.take(file, 18).map_err(short)?;
                check_side(doc, Rect::read(&b[2..]))?;
                if b[0] & 0x10 != 0 {
                    masks.1 = enabled.then_some(Mask {
                        rect: Rect::read(&b[2..]),
                        outside: b[1],
                        id: -3,
                        density: 255,
                    });
                }
            }
            // Bit 4: parameters follow, each flagged: the user mask's
            // density and feather, the vector mask's density and feather.
            if enabled && mask_flags & 0x10 != 0 {
                let left = |at: &Cursor| (mask_start + mask_len).saturating_sub(at.pos());
                let which = if left(&at) >= 1 {
                    at.take(file, 1).map_err(short)?[0]
                } else {
                    0
                };
                let mut user_density = None;
                for bit in 0..4 {
                    if which & (1 << bit) == 0 {
                        continue;
                    }
                    let size = if bit % 2 == 0 { 1 } else { 8 };
                    if left(&at) < size {
                        mask_parameters = true;
                        break;
                    }
                    let b = at.take(file, size as usize).map_err(short)?;
                    match bit {
                        0 => user_density = Some(b[0]),
                        2 => {
                            vector_density = b[0];
                            user_density = user_density.or(Some(b[0]));
                        }
                        // A feather blurs the mask, which we do not render.
                        _ => {
                            mask_parameters |=
                                f64::from_be_bytes(b.try_into().expect("8 bytes")) > 0.0
                        }
                    }
                }
                for mask in [&mut masks.0, &mut masks.1].into_iter().flatten() {
                    mask.density = user_density.unwrap_or(255);
                }
            }
        }
        at.seek_to(mask_start + mask_len);
        // Blending ranges, then the name (padded to four bytes).
        let ranges = be32(at.take(file, 4).map_err(short)?) as u64;
        at.seek_to(at.pos() + ranges);
        let name_len = at.take(file, 1).map_err(short)?[0] as u64;
        at.seek_to(at.pos() + (name_len + 1).next_multiple_of(4) - 1);
        let (mut layer_kind, mut fill, mut needs_more) = (Kind::Pixels, 255u8, false);
        let (mut fill_content, mut vector_mask) = (None, None);
        // Photoshop writes the old effects (`lrFX`) beside `lfx2`, which says all.
        let (mut overlay, mut old_effects, mut effects_read) = (None, false, false);
        let mut fill_hidden = false;
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
                b"SoCo" | b"GdFl" | b"PtFl" | b"vmsk" | b"vsms" if len <= MAX_SHAPE_BLOCK => {
                    limits.claim(len, &format!("{} of its layers", kind))?;
                    let bytes = block_bytes(&mut at, file, len).map_err(short)?;
                    let read = match &key {
                        b"SoCo" => descriptor::versioned(&bytes)
                            .and_then(|d| fill::solid(&d, doc.mode))
                            .map(|(content, approximate)| {
                                fill_content = Some(content);
                                needs_more |= approximate;
                            }),
                        b"PtFl" => descriptor::versioned(&bytes)
                            .and_then(|d| fill::pattern(&d))
                            .map(|(content, approximate)| {
                                fill_content = Some(content);
                                needs_more |= approximate;
                            }),
                        b"GdFl" => descriptor::versioned(&bytes)
                            .and_then(|d| fill::gradient(&d, doc.mode))
                            .map(|(content, approximate)| {
                                fill_content = Some(content);
                                needs_more |= approximate;
                            }),
                        _ => vector::read(&bytes, doc.width, doc.height).map(|mask| {
                            vector_mask = (!mask.disabled).then_some(mask);
                        }),
                    };
                    needs_more |= read.is_none();
                }
                b"SoCo" | b"GdFl" | b"PtFl" | b"vmsk" | b"vsms" => needs_more = true,
                b"lfx2" if len <= MAX_SHAPE_BLOCK => {
                    limits.claim(len, &format!("{} of its layers", kind))?;
                    let bytes = block_bytes(&mut at, file, len).map_err(short)?;
                    effects_read = true;
                    match fill::effects(&bytes, doc.mode) {
                        Some((read, others)) => {
                            overlay = read;
                            needs_more |= others;
                        }
                        None => needs_more = true,
                    }
                }
                b"lfx2" => needs_more = true,
                // A shape's stroke, which we do not draw; and whether its
                // fill shows at all.
                b"vstk" if len <= MAX_SHAPE_BLOCK => {
                    limits.claim(len, &format!("{} of its layers", kind))?;
                    let bytes = block_bytes(&mut at, file, len).map_err(short)?;
                    match descriptor::versioned(&bytes) {
                        Some(stroke) => {
                            needs_more |= stroke.flag(b"strokeEnabled") != Some(false);
                            fill_hidden = stroke.flag(b"fillEnabled") == Some(false);
                        }
                        None => needs_more = true,
                    }
                }
                b"vstk" => needs_more = true,
                b"lrFX" => old_effects = true,
                key if unrendered(key) => needs_more = true,
                _ => {}
            }
            at.seek_to(start + len);
        }
        at.seek_to(extra_end);
        needs_more |= old_effects && !effects_read;
        if fill_hidden {
            // A shape drawn by its stroke alone (which we do not draw).
            fill = 0;
        }
        let has = |id| channels.iter().any(|c| c.id == id);
        let mask = match masks {
            (_, Some(real)) if has(-3) => Some(real),
            (Some(user), _) if has(-2) => Some(user),
            _ => None,
        };
        let vector_over_pixels = fill_content.is_none() && mask_len >= 20 && masks.1.is_none();
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
            vector_over_pixels,
            vector_density,
            overlay,
            fill_content,
            vector_mask,
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

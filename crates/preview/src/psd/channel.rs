//! One channel's rows as stored (raw, PackBits, or a share of a zlib
//! stream, with or without prediction), decompressed one row at a time, and
//! a row's samples made 8-bit. The composite's and the layers' readers both
//! read through it; it never holds more than a row and its buffers.
//!
//! Samples become 8 bits before scaling: 16-bit ones rounded, 32-bit floats
//! (linear light) clipped to 0..1 and sRGB-encoded, as Photoshop's default
//! 32-bit view shows them; 32-bit transparency and masks are shares, scaled
//! as they are.

use std::io::{Read, Seek};

use super::cursor::{be16, be32, Cursor};
use super::document::Document;
use super::{damaged, ROWS_PER_TIME_CHECK};
use crate::scale::eight_bits;
use crate::{colour, Limits, NoPreview};

/// How a channel's rows are stored.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Compression {
    Raw,
    Rle,
    /// One zlib stream over every channel's rows; with prediction, each row
    /// holds differences (of bytes, of 16-bit samples, or of 32-bit samples
    /// split into byte planes).
    Zip {
        predicted: bool,
    },
}

impl Compression {
    /// The compression a channel's (or the image data's) 2-byte code names.
    pub(super) fn of(code: u16) -> Option<Self> {
        Some(match code {
            0 => Compression::Raw,
            1 => Compression::Rle,
            2 => Compression::Zip { predicted: false },
            3 => Compression::Zip { predicted: true },
            _ => return None,
        })
    }
}

enum Stored {
    Raw,
    /// The channel's row lengths.
    Rle {
        counts: Cursor,
    },
    /// Its own inflater over the shared stream, which first skips the rows
    /// of the channels before it.
    Zip {
        inflate: Box<flate2::Decompress>,
        rows_to_skip: u64,
        predicted: bool,
    },
}

/// One channel being read row by row.
pub(super) struct ChannelRows {
    data: Cursor,
    stored: Stored,
    /// The row as stored (decompressed), `row_bytes` long.
    pub(super) row: Vec<u8>,
    /// 32-bit ZIP with prediction: the row's byte planes.
    scratch: Vec<u8>,
}

impl ChannelRows {
    /// Rows of `row_bytes` stored as they are in `data`.
    pub(super) fn raw(data: Cursor, row_bytes: u64) -> Self {
        Self::new(data, Stored::Raw, row_bytes, false)
    }

    /// PackBits rows in `data`, their lengths (2 bytes each, 4 in a PSB) in
    /// `counts`.
    pub(super) fn rle(data: Cursor, counts: Cursor, row_bytes: u64) -> Self {
        Self::new(data, Stored::Rle { counts }, row_bytes, false)
    }

    /// A channel's share of the zlib stream in `data`, after the
    /// `rows_to_skip` rows of the channels before it; a 32-bit `predicted`
    /// one needs room for its byte planes.
    pub(super) fn zip(
        data: Cursor,
        rows_to_skip: u64,
        predicted: bool,
        depth: u16,
        row_bytes: u64,
    ) -> Self {
        let stored = Stored::Zip {
            inflate: Box::new(flate2::Decompress::new(true)),
            rows_to_skip,
            predicted,
        };
        Self::new(data, stored, row_bytes, predicted && depth == 32)
    }

    fn new(data: Cursor, stored: Stored, row_bytes: u64, planes: bool) -> Self {
        Self {
            data,
            stored,
            row: vec![0; row_bytes as usize],
            scratch: if planes {
                vec![0; row_bytes as usize]
            } else {
                Vec::new()
            },
        }
    }

    /// Reads and decompresses row `y` into `self.row`.
    pub(super) fn read_row(
        &mut self,
        file: &mut (impl Read + Seek),
        doc: &Document,
        y: u32,
        c: usize,
        limits: &Limits,
    ) -> Result<(), NoPreview> {
        let kind = doc.kind();
        let row_bytes = self.row.len();
        match &mut self.stored {
            Stored::Raw => {
                let bytes = self
                    .data
                    .take(file, row_bytes)
                    .map_err(|e| e.in_section(kind, "its image data"))?;
                self.row.copy_from_slice(bytes);
                Ok(())
            }
            Stored::Rle { counts } => {
                let b = counts
                    .take(file, if doc.psb { 4 } else { 2 })
                    .map_err(|e| e.in_section(kind, "its table of row lengths"))?;
                let count = if doc.psb { be32(b) } else { be16(b) as u32 } as usize;
                if count > self.data.capacity() {
                    return Err(damaged(
                        kind,
                        format_args!("row {y} of channel {c} claims {count} compressed bytes"),
                    ));
                }
                let packed = self
                    .data
                    .take(file, count)
                    .map_err(|e| e.in_section(kind, "its image data"))?;
                unpack_bits(packed, &mut self.row).map_err(|problem| {
                    damaged(kind, format_args!("row {y} of channel {c}: {problem}"))
                })
            }
            Stored::Zip {
                inflate,
                rows_to_skip,
                predicted,
            } => {
                let problem = |e: String| {
                    damaged(
                        kind,
                        format_args!("row {y} of channel {c} of its ZIP data: {e}"),
                    )
                };
                // The rows of the channels before this one, once.
                while *rows_to_skip > 0 {
                    if *rows_to_skip % ROWS_PER_TIME_CHECK as u64 == 0 {
                        limits.check_time()?;
                    }
                    inflate_row(&mut self.data, file, inflate, &mut self.row, kind)
                        .map_err(problem)?;
                    *rows_to_skip -= 1;
                }
                inflate_row(&mut self.data, file, inflate, &mut self.row, kind).map_err(problem)?;
                if *predicted {
                    undo_prediction(&mut self.row, &mut self.scratch, doc.depth);
                }
                Ok(())
            }
        }
    }
}

/// Inflates exactly `row.len()` bytes of the stream.
fn inflate_row(
    data: &mut Cursor,
    file: &mut (impl Read + Seek),
    inflate: &mut flate2::Decompress,
    row: &mut [u8],
    kind: &str,
) -> Result<(), String> {
    let mut filled = 0;
    while filled < row.len() {
        let input = data
            .fill_some(file)
            .map_err(|e| e.in_section(kind, "its image data").0)?;
        let (in_before, out_before) = (inflate.total_in(), inflate.total_out());
        let status = inflate
            .decompress(input, &mut row[filled..], flate2::FlushDecompress::None)
            .map_err(|e| e.to_string())?;
        let consumed = (inflate.total_in() - in_before) as usize;
        let produced = (inflate.total_out() - out_before) as usize;
        let at_end = input.is_empty();
        data.advance(consumed);
        filled += produced;
        if filled < row.len() {
            if status == flate2::Status::StreamEnd {
                return Err("the stream ends before the image does".into());
            }
            if consumed == 0 && produced == 0 && at_end {
                return Err("the stream is cut short".into());
            }
        }
    }
    Ok(())
}

/// Running sums along one row (differences of bytes, 16-bit or 32-bit
/// samples; 32-bit rows are stored as four byte planes).
fn undo_prediction(row: &mut [u8], scratch: &mut [u8], depth: u16) {
    match depth {
        8 => {
            for x in 1..row.len() {
                row[x] = row[x].wrapping_add(row[x - 1]);
            }
        }
        16 => {
            let mut previous = 0u16;
            for sample in row.chunks_exact_mut(2) {
                previous = previous.wrapping_add(u16::from_be_bytes([sample[0], sample[1]]));
                sample.copy_from_slice(&previous.to_be_bytes());
            }
        }
        32 => {
            for x in 1..row.len() {
                row[x] = row[x].wrapping_add(row[x - 1]);
            }
            let width = row.len() / 4;
            scratch.copy_from_slice(row);
            for x in 0..width {
                for byte in 0..4 {
                    row[x * 4 + byte] = scratch[byte * width + x];
                }
            }
        }
        _ => {}
    }
}

/// Decodes one PackBits row; `out` must be filled exactly.
fn unpack_bits(mut packed: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
    let mut filled = 0;
    while let Some((&header, rest)) = packed.split_first() {
        packed = rest;
        let header = header as i8;
        if header >= 0 {
            let n = header as usize + 1;
            if n > packed.len() {
                return Err("a run of bytes is cut short");
            }
            let Some(dest) = out.get_mut(filled..filled + n) else {
                return Err("its compressed bytes overrun the row");
            };
            dest.copy_from_slice(&packed[..n]);
            packed = &packed[n..];
            filled += n;
        } else if header != -128 {
            let n = (1 - header as i16) as usize;
            let Some((&value, rest)) = packed.split_first() else {
                return Err("a repeated byte is missing");
            };
            packed = rest;
            let Some(dest) = out.get_mut(filled..filled + n) else {
                return Err("its compressed bytes overrun the row");
            };
            dest.fill(value);
            filled += n;
        }
    }
    if filled != out.len() {
        return Err("its compressed bytes end before the row does");
    }
    Ok(())
}

/// `to_8bit`'s depth for 32-bit samples that are not light (transparency, masks).
pub(super) const LINEAR_32: u16 = 33;

/// One stored row (16, 32 or 1 bits a sample) as 8-bit samples, `width` of them.
pub(super) fn to_8bit(row: &[u8], depth: u16, out: &mut [u8]) {
    match depth {
        16 => {
            for (o, b) in out.iter_mut().zip(row.chunks_exact(2)) {
                *o = eight_bits(u16::from_be_bytes([b[0], b[1]]));
            }
        }
        32 => {
            // Linear light, shown as Photoshop's default 32-bit view does
            // (exposure 0, gamma 1): clipped to 0..1, then sRGB-encoded.
            // A NaN stays NaN through `clamp`, and casts to 0.
            for (o, b) in out.iter_mut().zip(row.chunks_exact(4)) {
                *o = colour::encode_srgb(f32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            }
        }
        LINEAR_32 => {
            // Transparency is a share, not light: scaled as it is.
            for (o, b) in out.iter_mut().zip(row.chunks_exact(4)) {
                let v = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                *o = (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
            }
        }
        1 => {
            // Bitmap: a set bit is black.
            for (x, o) in out.iter_mut().enumerate() {
                let bit = row[x / 8] >> (7 - x % 8) & 1;
                *o = if bit == 1 { 0 } else { 255 };
            }
        }
        _ => unreachable!("8-bit rows need no conversion; others are refused in the header"),
    }
}

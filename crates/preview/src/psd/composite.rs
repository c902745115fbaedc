//! The composite image (the image data section at the end of the file),
//! streamed row by row through every channel at once and scaled as it goes;
//! it never holds the composite at full size.
//!
//! Channels are stored planar (every row of channel 0, then of channel 1...),
//! so each channel read keeps its own position in the file and the rows of
//! all channels advance together; only the colour channels and, when the
//! layer count says so, the first extra channel (the composite's
//! transparency) are read.

use std::io::{Read, Seek};

use super::channel::{to_8bit, ChannelRows, Compression, LINEAR_32};
use super::cursor::{be16, be32, Cursor};
use super::document::{Document, Mode};
use super::rgba::to_rgba;
use super::{damaged, CHUNK, ROWS_PER_TIME_CHECK};
use crate::scale::BoxPlane;
use crate::{fitted, Limits, NoPreview};

pub(super) fn render_composite(
    doc: &Document,
    file: &mut (impl Read + Seek),
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let kind = doc.kind();
    let mut at = Cursor::new(doc.image_data, doc.file_len, 16);
    let code = be16(
        at.take(file, 2)
            .map_err(|e| e.in_section(kind, "its image data"))?,
    );
    let compression = match Compression::of(code) {
        Some(Compression::Zip { predicted: true }) if doc.depth == 1 => {
            return Err(damaged(
                kind,
                "a bitmap composite compressed with prediction",
            ))
        }
        Some(compression) => compression,
        None => {
            return Err(damaged(
                kind,
                format_args!("unknown compression {code} of its image data"),
            ))
        }
    };
    let data_start = at.pos();
    let (width, height) = (doc.width, doc.height);
    let (out_width, out_height) = fitted(width, height, size);
    let row_bytes = doc.row_bytes();
    let colors = doc.mode.colors();
    let used = if doc.merged_alpha && doc.channels > colors {
        colors + 1
    } else {
        colors
    };
    if doc.channels < colors {
        return Err(damaged(
            kind,
            format_args!("{} channels for a mode of {colors} colours", doc.channels),
        ));
    }
    let what = format!("{kind} of {width}×{height} pixels");

    // Where each channel starts, and for RLE its row lengths.
    let count_bytes: u64 = if doc.psb { 4 } else { 2 };
    let rows_total = doc.channels as u64 * height as u64;
    // No PackBits encoding needs more than a header per byte.
    let max_rle_row = 2 * row_bytes + 2;
    let buffer = CHUNK.max(2 * max_rle_row as usize);
    limits.claim(used as u64 * (buffer as u64 * 2 + row_bytes * 2), &what)?;
    let mut channels = Vec::with_capacity(used as usize);
    match compression {
        Compression::Raw => {
            // Every channel must be there, read or not: a cut file is damaged.
            let plane = row_bytes * height as u64;
            if data_start + plane * doc.channels as u64 > doc.file_len {
                return Err(damaged(
                    kind,
                    format_args!(
                        "its image data is cut short ({} bytes of {} channels of {width}×{height} pixels needed, {} there)",
                        plane * doc.channels as u64,
                        doc.channels,
                        doc.file_len - data_start
                    ),
                ));
            }
            for c in 0..used as u64 {
                let start = data_start + c * plane;
                channels.push(ChannelRows::raw(
                    Cursor::new(start, start + plane, buffer),
                    row_bytes,
                ));
            }
        }
        Compression::Rle => {
            let table_len = rows_total * count_bytes;
            let rows_start = data_start + table_len;
            if rows_start > doc.file_len {
                return Err(damaged(
                    kind,
                    format_args!(
                        "its table of row lengths is cut short ({table_len} bytes needed, {} there)",
                        doc.file_len - data_start
                    ),
                ));
            }
            // One pass over the table for each channel's start; every
            // channel's, read or not: a cut file is damaged.
            let mut table = Cursor::new(data_start, rows_start, CHUNK);
            let mut start = rows_start;
            for c in 0..doc.channels {
                let counts_start = table.pos();
                let mut total = 0u64;
                for row in 0..height {
                    if row % 4096 == 0 {
                        limits.check_time()?;
                    }
                    let b = table
                        .take(file, count_bytes as usize)
                        .map_err(|e| e.in_section(kind, "its table of row lengths"))?;
                    let count = if doc.psb {
                        be32(b) as u64
                    } else {
                        be16(b) as u64
                    };
                    if count > max_rle_row {
                        return Err(damaged(
                            kind,
                            format_args!(
                                "row {row} of channel {c} claims {count} compressed bytes for {row_bytes} bytes of pixels"
                            ),
                        ));
                    }
                    total += count;
                }
                if start + total > doc.file_len {
                    return Err(damaged(
                        kind,
                        format_args!(
                            "its image data is cut short (channel {c} needs {total} bytes at offset {start}, the file ends at {})",
                            doc.file_len
                        ),
                    ));
                }
                if c >= used {
                    start += total;
                    continue;
                }
                let counts = Cursor::new(
                    counts_start,
                    counts_start + height as u64 * count_bytes,
                    CHUNK.min((height as u64 * count_bytes) as usize),
                );
                channels.push(ChannelRows::rle(
                    Cursor::new(start, start + total, buffer),
                    counts,
                    row_bytes,
                ));
                start += total;
            }
        }
        Compression::Zip { predicted } => {
            // An inflater's window and state, beside its buffers.
            limits.claim(used as u64 * (64 << 10), &what)?;
            for c in 0..used as u64 {
                channels.push(ChannelRows::zip(
                    Cursor::new(data_start, doc.file_len, CHUNK),
                    c * height as u64,
                    predicted,
                    doc.depth,
                    row_bytes,
                ));
            }
        }
    }

    let planes_wanted = match doc.mode {
        Mode::Indexed => 3,
        _ => colors,
    } + (used - colors);
    let mut planes = (0..planes_wanted)
        .map(|_| BoxPlane::new(width, height, out_width, out_height, limits, &what))
        .collect::<Result<Vec<_>, _>>()?;
    limits.claim(width as u64 * 3, &what)?;
    let mut converted = vec![0u8; width as usize];
    let mut indexed = [
        vec![0u8; width as usize],
        vec![0u8; width as usize],
        vec![0u8; width as usize],
    ];

    for y in 0..height {
        if y % ROWS_PER_TIME_CHECK == 0 {
            limits.check_time()?;
        }
        for (c, channel) in channels.iter_mut().enumerate() {
            channel.read_row(file, doc, y, c, limits)?;
            // 8-bit rows are their own samples.
            let samples: &[u8] = if doc.depth == 8 {
                &channel.row
            } else {
                let light = c < colors as usize || doc.mode == Mode::Indexed;
                let depth = if doc.depth == 32 && !light {
                    LINEAR_32
                } else {
                    doc.depth
                };
                to_8bit(&channel.row, depth, &mut converted);
                &converted
            };
            if doc.mode == Mode::Indexed && c == 0 {
                let palette = doc
                    .palette
                    .as_ref()
                    .expect("an indexed document has a palette");
                for (x, &i) in samples.iter().enumerate() {
                    let [r, g, b] = palette[i as usize];
                    indexed[0][x] = r;
                    indexed[1][x] = g;
                    indexed[2][x] = b;
                }
                for (plane, row) in planes.iter_mut().zip(&indexed) {
                    plane.push_row(row);
                }
            } else {
                let p = if doc.mode == Mode::Indexed { c + 2 } else { c };
                planes[p].push_row(samples);
            }
        }
    }

    let planes: Vec<Vec<u8>> = planes.into_iter().map(BoxPlane::finish).collect();
    Ok(to_rgba(
        doc,
        &planes,
        planes_wanted as usize,
        out_width,
        out_height,
        true,
    ))
}

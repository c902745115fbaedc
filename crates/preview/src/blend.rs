//! Blender `.blend`: the thumbnail Blender embeds when it saves, as Blender's
//! own thumbnailer reads it. After the file header come blocks, each a block
//! header (a 4-byte code, the data's length...) and its data; the thumbnail
//! is the `TEST` block (width, height as i32, then RGBA rows bottom-up),
//! written right after the `REND` blocks, so the scan stops at the first
//! other block instead of reading a gigabyte of scene. The whole file may be
//! gzip- (before Blender 3.0) or zstd-compressed; it is read as a stream.
//!
//! Headers: `BLENDER` + `_` (4-byte pointers) or `-` (8-byte) + `v` (little-
//! endian) or `V` (big) + a 3-digit version, with 20- or 24-byte block
//! headers; or Blender 5's `BLENDER17-01v0500`: header length `17`, `-`,
//! file format `01`, `v`, a 4-digit version, and 32-byte block headers
//! (code, SDNA index, old pointer, then length and count as i64).

use std::io::{BufRead, Read};

use super::{damaged, fitted, Limits, NoPreview};

const NAME: &str = "a Blender file";

/// At most this many `REND` blocks (one per scene) before the thumbnail.
const MAX_BLOCKS_BEFORE_THUMBNAIL: u32 = 100_000;

/// Blender itself writes thumbnails of at most 256 pixels a side (128 by
/// default); anything far larger is not a thumbnail.
const MAX_THUMBNAIL_SIDE: i64 = 4096;

pub fn is_blend(head: &[u8]) -> bool {
    head.starts_with(b"BLENDER")
}

/// A whole-file compression Blender uses.
#[derive(Debug, Clone, Copy)]
pub enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    pub fn of(head: &[u8]) -> Option<Self> {
        if head.starts_with(&[0x1F, 0x8B]) {
            Some(Self::Gzip)
        } else if head.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
            Some(Self::Zstd)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Zstd => "zstd",
        }
    }
}

/// Zstd's own default ceiling on a frame's window (128 MiB), set here in
/// case the library's default ever grows: a frame asking for more is refused.
const ZSTD_WINDOW_LOG_MAX: u32 = 27;

/// A plain `.blend`.
pub fn render(
    reader: &mut impl Read,
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    thumbnail(reader, NAME, size, limits)
}

/// A gzip or zstd file: a `.blend` inside (or an `.svgz`, an SVG in gzip),
/// or else said to be what it is.
pub fn render_compressed(
    reader: &mut impl BufRead,
    compression: Compression,
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let name = match compression {
        Compression::Gzip => "a Blender file (gzip-compressed)",
        Compression::Zstd => "a Blender file (zstd-compressed)",
    };
    let mut stream: Box<dyn Read + '_> = match compression {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(reader)),
        Compression::Zstd => {
            let mut decoder =
                zstd::stream::read::Decoder::with_buffer(reader).map_err(|e| damaged(name, e))?;
            decoder
                .window_log_max(ZSTD_WINDOW_LOG_MAX)
                .map_err(|e| damaged(name, e))?;
            Box::new(decoder)
        }
    };
    let mut head = vec![0u8; super::SNIFF_LEN];
    let n = super::read_full(&mut stream, &mut head).unwrap_or(0);
    head.truncate(n);
    let (blend, svg) = (is_blend(&head), super::svg::seems_svg(&head));
    let mut whole = std::io::Cursor::new(head).chain(stream);
    if blend {
        return thumbnail(&mut whole, name, size, limits);
    }
    if svg && matches!(compression, Compression::Gzip) {
        return super::svg::render(whole, size, limits);
    }
    Err(NoPreview(format!(
        "a {}-compressed file, not a Blender file: no preview for it",
        compression.name()
    )))
}

/// Block headers' layouts.
#[derive(Debug, Clone, Copy)]
enum BlockHeader {
    /// 4-byte pointers: code, len (i32), old (u32), SDNA index, count.
    Small4,
    /// 8-byte pointers: code, len (i32), old (u64), SDNA index, count.
    Small8,
    /// Blender 5: code, SDNA index, old (u64), len (i64), count (i64).
    Large8,
}

impl BlockHeader {
    fn len(self) -> usize {
        match self {
            Self::Small4 => 20,
            Self::Small8 => 24,
            Self::Large8 => 32,
        }
    }

    /// The block's code and its data's length.
    fn parse(self, bytes: &[u8]) -> ([u8; 4], i64) {
        let code = [bytes[0], bytes[1], bytes[2], bytes[3]];
        let i32_at = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let len = match self {
            Self::Small4 | Self::Small8 => i64::from(i32_at(4)),
            Self::Large8 => i64::from_le_bytes(bytes[16..24].try_into().unwrap()),
        };
        (code, len)
    }
}

fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// Reads the file header and returns the block layout, after checking the
/// file may hold a thumbnail we can read.
fn header(stream: &mut impl Read, name: &str) -> Result<BlockHeader, NoPreview> {
    let truncated = || damaged(name, "its header ends early");
    let mut old = [0u8; 12];
    stream.read_exact(&mut old).map_err(|_| truncated())?;
    let (layout, little_endian, version) = match old[7] {
        b'_' | b'-' => {
            let layout = if old[7] == b'_' {
                BlockHeader::Small4
            } else {
                BlockHeader::Small8
            };
            (layout, old[8], digits(&old[9..12]))
        }
        b'1' => {
            // `BLENDER17-01v0500`: five more bytes.
            let mut rest = [0u8; 5];
            stream.read_exact(&mut rest).map_err(|_| truncated())?;
            if &old[7..10] != b"17-" || &old[10..12] != b"01" {
                return Err(NoPreview(format!(
                    "{name} in a file format newer than this reader knows ({})",
                    String::from_utf8_lossy(&old[7..12])
                )));
            }
            (BlockHeader::Large8, rest[0], digits(&rest[1..5]))
        }
        _ => return Err(damaged(name, "its header is not one Blender writes")),
    };
    let Some(version) = version else {
        return Err(damaged(name, "its header's version is not a number"));
    };
    match little_endian {
        b'v' => {}
        b'V' => {
            return Err(NoPreview(format!(
                "{name} saved on a big-endian computer: its thumbnail cannot be read"
            )))
        }
        _ => {
            return Err(damaged(
                name,
                "its header's byte order is not one Blender writes",
            ))
        }
    }
    if version < 250 {
        return Err(NoPreview(format!(
            "{name} from before Blender 2.50, which saved no thumbnails: no preview for it"
        )));
    }
    Ok(layout)
}

fn thumbnail(
    stream: &mut impl Read,
    name: &str,
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let layout = header(stream, name)?;
    let mut block = [0u8; 32];
    let block = &mut block[..layout.len()];
    for _ in 0..MAX_BLOCKS_BEFORE_THUMBNAIL {
        limits.check_time()?;
        stream
            .read_exact(block)
            .map_err(|_| damaged(name, "it ends before its first blocks"))?;
        let (code, len) = layout.parse(block);
        if len < 0 {
            return Err(damaged(name, "a block claims a negative length"));
        }
        match &code {
            b"TEST" => return read_test_block(stream, len, name, size, limits),
            b"REND" => skip(stream, len as u64, name, limits)?,
            _ => break,
        }
    }
    Err(NoPreview(format!(
        "{name} without a thumbnail (saved with no preview, or from the command line): no preview for it"
    )))
}

fn skip(stream: &mut impl Read, len: u64, name: &str, limits: &Limits) -> Result<(), NoPreview> {
    let mut left = len;
    let mut sink = [0u8; 8192];
    while left > 0 {
        limits.check_time()?;
        let chunk = left.min(sink.len() as u64) as usize;
        stream
            .read_exact(&mut sink[..chunk])
            .map_err(|_| damaged(name, "it ends inside a block"))?;
        left -= chunk as u64;
    }
    Ok(())
}

fn read_test_block(
    stream: &mut impl Read,
    len: i64,
    name: &str,
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let mut shape = [0u8; 8];
    stream
        .read_exact(&mut shape)
        .map_err(|_| damaged(name, "it ends inside its thumbnail"))?;
    let width = i64::from(i32::from_le_bytes(shape[..4].try_into().unwrap()));
    let height = i64::from(i32::from_le_bytes(shape[4..].try_into().unwrap()));
    if width <= 0 || height <= 0 || width > MAX_THUMBNAIL_SIDE || height > MAX_THUMBNAIL_SIDE {
        return Err(damaged(
            name,
            format!("its thumbnail claims {width}×{height} pixels"),
        ));
    }
    if len - 8 != width * height * 4 {
        return Err(damaged(
            name,
            format!("its thumbnail's {width}×{height} pixels do not fill its {len} bytes"),
        ));
    }
    let (width, height) = (width as u32, height as u32);
    let bytes = u64::from(width) * u64::from(height) * 4;
    limits.claim(
        bytes * 3,
        &format!("{name} with a {width}×{height} thumbnail"),
    )?;
    let row_len = width as usize * 4;
    let mut pixels = vec![0u8; bytes as usize];
    // Rows come bottom-up: the last row of the image is read first.
    for row in pixels.chunks_exact_mut(row_len).rev() {
        stream
            .read_exact(row)
            .map_err(|_| damaged(name, "it ends inside its thumbnail"))?;
    }
    let image = image::RgbaImage::from_raw(width, height, pixels)
        .ok_or_else(|| damaged(name, "its thumbnail's size does not add up"))?;
    let (fit_w, fit_h) = fitted(width, height, size);
    Ok(super::scale::shrink(image::DynamicImage::ImageRgba8(image), fit_w, fit_h).into_rgba8())
}

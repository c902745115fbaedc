//! Affinity Designer, Photo and Publisher (`.afdesign`, `.afphoto`,
//! `.afpub`): the PNG of the `Thmb` block. The header's u64 at 24 (all
//! little-endian) is where the block directory ends; there `FF FF FF FF`,
//! `Thmb`, five u32 (the fifth the PNG's length) and a byte precede the PNG.
//! Files hold other PNGs before it (brushes, placed images) and sometimes a
//! stale directory, so neither the first PNG nor the first `Thmb` is
//! trusted; the tag is searched for only when the header does not lead to
//! a thumbnail.

use std::io::{BufRead, Read, Seek, SeekFrom};

use image::ImageFormat;

use super::{
    find, read_at, thumbnail, unreadable, Limits, NoPreview, Preview, MAX_THUMBNAIL_BYTES,
};

/// Affinity's magic number.
const MAGIC: &[u8] = b"\x00\xFFKA";
const THUMBNAIL_TAG: &[u8] = b"Thmb";
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
/// How far after its tag the thumbnail's PNG may start.
const TAG_TO_PNG: u64 = 64;

const NAME: &str = "an Affinity document";

pub fn is_affinity(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

pub fn render<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let none = || {
        NoPreview(format!(
            "{NAME} saved without a thumbnail: no preview for it"
        ))
    };
    if let Some(png) = thumbnail_after_directory(reader)? {
        return thumbnail(png, ImageFormat::Png, size, limits, NAME, "Affinity");
    }
    let mut from = 0;
    // The tag's four letters may also occur by chance: the one followed
    // closely by a PNG is the thumbnail's.
    while let Some(tag) = find(reader, THUMBNAIL_TAG, from, false, limits)? {
        let near = read_at_most(reader, tag, TAG_TO_PNG + PNG_SIGNATURE.len() as u64)?;
        if let Some(at) = super::memfind(&near, PNG_SIGNATURE) {
            let start = tag + at as u64;
            let len = png_len(reader, start, limits)?.ok_or_else(none)?;
            let png = read_at(reader, start, len, NAME)?;
            return thumbnail(png, ImageFormat::Png, size, limits, NAME, "Affinity");
        }
        from = tag + 1;
    }
    Err(none())
}

/// The thumbnail where the header says the directory ends, if it is there.
fn thumbnail_after_directory<R: Read + Seek>(reader: &mut R) -> Result<Option<Vec<u8>>, NoPreview> {
    let header = read_at_most(reader, 0, 32)?;
    let Some(end) = header.get(24..32) else {
        return Ok(None);
    };
    let end = u64::from_le_bytes(end.try_into().expect("eight bytes"));
    let block = read_at_most(reader, end, 29 + PNG_SIGNATURE.len() as u64)?;
    if block.len() < 29 + PNG_SIGNATURE.len()
        || &block[..8] != b"\xFF\xFF\xFF\xFFThmb"
        || &block[29..] != PNG_SIGNATURE
    {
        return Ok(None);
    }
    let len = u64::from(u32::from_le_bytes(
        block[24..28].try_into().expect("four bytes"),
    ));
    read_at(reader, end + 29, len, NAME).map(Some)
}

fn read_at_most<R: Read + Seek>(reader: &mut R, at: u64, len: u64) -> Result<Vec<u8>, NoPreview> {
    reader.seek(SeekFrom::Start(at)).map_err(unreadable)?;
    let mut bytes = Vec::new();
    reader
        .take(len)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    Ok(bytes)
}

/// The length of the PNG starting at `start`, by walking its chunks to
/// `IEND`; `None` if it is cut off or longer than a thumbnail may be.
fn png_len<R: Read + Seek>(
    reader: &mut R,
    start: u64,
    limits: &Limits,
) -> Result<Option<u64>, NoPreview> {
    let mut at = start + PNG_SIGNATURE.len() as u64;
    let mut chunk = [0u8; 8];
    loop {
        limits.check_time()?;
        if at - start > MAX_THUMBNAIL_BYTES {
            return Ok(None);
        }
        reader.seek(SeekFrom::Start(at)).map_err(unreadable)?;
        if reader.read_exact(&mut chunk).is_err() {
            return Ok(None);
        }
        let len = u64::from(u32::from_be_bytes(chunk[..4].try_into().unwrap()));
        at += 12 + len;
        if &chunk[4..] == b"IEND" {
            return Ok(Some(at - start));
        }
    }
}

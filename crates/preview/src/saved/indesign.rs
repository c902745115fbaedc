//! InDesign `.indd` and `.indt`: the JPEG thumbnail in the document's XMP.
//! The file is a database of 4 KiB pages (the first two are master pages;
//! the newer, by its sequence number, counts the pages), then a stream of
//! contiguous objects, each framed by a 32-byte header and trailer. The XMP
//! is the last such object that holds a packet: the database pages often
//! carry stale copies of it, which a search from the file's start would find
//! first.

use std::io::{BufRead, Read, Seek, SeekFrom};

use image::ImageFormat;

use super::{read_at, thumbnail, unreadable, xmp, Limits, NoPreview, Preview};

/// A master page's first bytes: InDesign's database GUID.
pub const MASTER_GUID: &[u8] = &[
    0x06, 0x06, 0xED, 0xF5, 0xD8, 0x1D, 0x46, 0xE5, 0xBD, 0x31, 0xEF, 0xE7, 0xFE, 0x74, 0xB7, 0x1D,
];
/// A contiguous object's header starts with this GUID.
const OBJECT_GUID: &[u8] = &[
    0xDE, 0x39, 0x39, 0x79, 0x51, 0x88, 0x4B, 0x6C, 0x8E, 0x63, 0xEE, 0xF8, 0xAE, 0xE0, 0xDD, 0x38,
];
const PAGE: u64 = 4096;
const OBJECT_FRAME: u64 = 32;

const NAME: &str = "an InDesign document";

pub fn is_indesign(head: &[u8]) -> bool {
    head.starts_with(MASTER_GUID)
}

/// A master page's sequence number and the database's page count, both
/// little-endian whatever byte order the page declares for the objects.
fn master(page: &[u8]) -> Option<(u64, u64)> {
    if !page.starts_with(MASTER_GUID) || page.get(16..24)? != b"DOCUMENT" {
        return None;
    }
    let sequence: [u8; 8] = page.get(264..272)?.try_into().ok()?;
    let pages: [u8; 4] = page.get(280..284)?.try_into().ok()?;
    Some((
        u64::from_le_bytes(sequence),
        u64::from(u32::from_le_bytes(pages)),
    ))
}

pub fn render<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let file_len = reader.seek(SeekFrom::End(0)).map_err(unreadable)?;
    let masters = read_at(reader, 0, (2 * PAGE).min(file_len), NAME)?;
    let newest = masters
        .chunks(PAGE as usize)
        .filter_map(master)
        .max_by_key(|&(sequence, _)| sequence);
    let Some((_, pages)) = newest else {
        return Err(super::damaged(NAME, "neither master page can be read"));
    };
    let objects_at = pages.saturating_mul(PAGE);
    if objects_at >= file_len {
        return Err(super::damaged(NAME, "its pages end past the file's end"));
    }
    let jpeg = match last_xmp_object(reader, objects_at, file_len, limits)? {
        Some(start) => xmp::thumbnail(reader, start, false, limits, NAME)?,
        // Objects that do not walk: the last thumbnail after the pages.
        None => xmp::thumbnail(reader, objects_at, true, limits, NAME)?,
    };
    match jpeg {
        Some(jpeg) => thumbnail(jpeg, ImageFormat::Jpeg, size, limits, NAME, "InDesign"),
        None => Err(NoPreview(format!(
            "{NAME} saved without a thumbnail: no preview for it"
        ))),
    }
}

/// Where the last contiguous object after the pages that holds an XMP
/// packet starts; `None` if there is none or the objects do not walk.
fn last_xmp_object<R: Read + Seek>(
    reader: &mut R,
    mut at: u64,
    file_len: u64,
    limits: &Limits,
) -> Result<Option<u64>, NoPreview> {
    let mut last = None;
    let mut header = [0u8; OBJECT_FRAME as usize];
    let mut start = [0u8; 64];
    while at + OBJECT_FRAME <= file_len {
        limits.check_time()?;
        reader.seek(SeekFrom::Start(at)).map_err(unreadable)?;
        reader.read_exact(&mut header).map_err(unreadable)?;
        if &header[..16] != OBJECT_GUID {
            break;
        }
        let len = u64::from(u32::from_le_bytes(header[24..28].try_into().unwrap()));
        let data = at + OBJECT_FRAME;
        let end = data.saturating_add(len);
        if end > file_len {
            break;
        }
        let n = start.len().min(len as usize);
        reader.read_exact(&mut start[..n]).map_err(unreadable)?;
        if super::memfind(&start[..n], b"<?xpacket begin").is_some() {
            last = Some(data);
        }
        at = end + OBJECT_FRAME;
    }
    Ok(last)
}

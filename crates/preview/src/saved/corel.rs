//! CorelDRAW before X4: a RIFF file (`CDR` and a version letter) whose
//! `DISP` chunk holds the thumbnail as a Windows bitmap without its file
//! header. (X4 and later are ZIP archives: `layered` reads those.)

use std::io::{BufRead, Seek, SeekFrom};

use image::ImageFormat;

use super::{read_at, thumbnail, unreadable, Limits, NoPreview, Preview};

const NAME: &str = "a CorelDRAW drawing";

pub fn is_riff_cdr(head: &[u8]) -> bool {
    head.len() >= 12 && &head[..4] == b"RIFF" && (head[8..11].eq_ignore_ascii_case(b"CDR"))
}

pub fn render<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let file_len = reader.seek(SeekFrom::End(0)).map_err(unreadable)?;
    let mut at = 12u64;
    while at + 8 <= file_len {
        limits.check_time()?;
        let header = read_at(reader, at, 8, NAME)?;
        let len = u64::from(u32::from_le_bytes(header[4..8].try_into().unwrap()));
        if &header[..4] == b"DISP" {
            let dib = read_at(reader, at + 8, len, NAME)?;
            let bmp = bitmap_file(&dib)
                .ok_or_else(|| super::damaged(NAME, "its saved thumbnail is not a bitmap"))?;
            return thumbnail(bmp, ImageFormat::Bmp, size, limits, NAME, "CorelDRAW");
        }
        // Chunks are padded to an even length.
        at = at.saturating_add(8 + len + (len & 1));
    }
    Err(NoPreview(format!(
        "{NAME} saved without a thumbnail: no preview for it"
    )))
}

/// A BMP file of a DIB (its info header, colour table and pixels): the DIB
/// with the 14-byte file header before it. Some writers put four bytes
/// before the info header.
fn bitmap_file(dib: &[u8]) -> Option<Vec<u8>> {
    let info_at = [0usize, 4]
        .into_iter()
        .find(|&at| dib.get(at..at + 4) == Some(&40u32.to_le_bytes()[..]))?;
    let info = &dib[info_at..];
    let bit_count = u16::from_le_bytes(info.get(14..16)?.try_into().ok()?);
    let colours_used = u32::from_le_bytes(info.get(32..36)?.try_into().ok()?);
    let palette = match (bit_count, colours_used) {
        (1 | 4 | 8, 0) => 1u32 << bit_count,
        (_, used) if bit_count <= 8 => used.min(256),
        _ => 0,
    };
    let pixels_at = 14 + 40 + palette * 4;
    let total = 14 + info.len() as u32;
    let mut bmp = Vec::with_capacity(total as usize);
    bmp.extend_from_slice(b"BM");
    bmp.extend(total.to_le_bytes());
    bmp.extend([0u8; 4]);
    bmp.extend(pixels_at.to_le_bytes());
    bmp.extend_from_slice(info);
    Some(bmp)
}

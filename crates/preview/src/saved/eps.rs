//! EPS: the TIFF preview a DOS EPS binary header points at (often a palette
//! with a transparency sample, which the TIFF reader accepts here), else the
//! XMP thumbnail in its PostScript. The same XMP thumbnail shows an
//! Illustrator file saved as PostScript.

use std::io::{BufRead, Seek};

use image::ImageFormat;

use super::{read_at, thumbnail, xmp, Limits, NoPreview, Preview};

/// A DOS EPS binary header's magic number.
const DOS_EPS: &[u8] = &[0xC5, 0xD0, 0xD3, 0xC6];
/// The header: magic, then PostScript, WMF and TIFF offset and length
/// (u32, little-endian), then a checksum.
const HEADER_LEN: usize = 30;

pub fn is_dos_eps(head: &[u8]) -> bool {
    head.starts_with(DOS_EPS)
}

pub fn is_postscript(head: &[u8]) -> bool {
    head.starts_with(b"%!PS-Adobe")
}

/// Who wrote it, from the `%%Creator` comment among the first bytes, for
/// "preview saved by …".
fn creator(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(head);
    text.lines()
        .find_map(|line| line.strip_prefix("%%Creator:"))
        // "cairo 1.16.0 (https://cairographics.org)": the name and version.
        .map(|creator| {
            creator
                .split(" (")
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .filter(|creator| !creator.is_empty())
        .unwrap_or_else(|| "its EPS writer".into())
}

pub fn render<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let name = "an EPS file";
    let header = read_at(reader, 0, HEADER_LEN as u64, name)?;
    let field = |at: usize| u64::from(u32::from_le_bytes(header[at..at + 4].try_into().unwrap()));
    let (ps_offset, ps_len) = (field(4), field(8));
    let (tiff_offset, tiff_len) = (field(20), field(24));
    let head = read_at(reader, ps_offset, ps_len.min(4096), name)?;
    let by = creator(&head);
    if tiff_len > 0 {
        let tiff = read_at(reader, tiff_offset, tiff_len, name)?;
        return thumbnail(tiff, ImageFormat::Tiff, size, limits, name, &by);
    }
    match xmp::thumbnail(reader, ps_offset, false, limits, name)? {
        Some(jpeg) => thumbnail(jpeg, ImageFormat::Jpeg, size, limits, name, &by),
        None => Err(NoPreview(format!(
            "{name} without a saved preview: no preview for it"
        ))),
    }
}

/// PostScript: an EPS without a binary header, or an Illustrator file saved
/// as PostScript.
pub fn render_postscript<R: BufRead + Seek>(
    reader: &mut R,
    head: &[u8],
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let (name, by) = if super::super::sniff::is_illustrator(head) {
        ("an Adobe Illustrator document", "Illustrator".to_owned())
    } else if head.starts_with(b"%!PS-Adobe-3.0 EPSF") || head.starts_with(b"%!PS-Adobe-2.0 EPSF") {
        ("an EPS file", creator(head))
    } else {
        ("a PostScript document", creator(head))
    };
    match xmp::thumbnail(reader, 0, false, limits, name)? {
        Some(jpeg) => thumbnail(jpeg, ImageFormat::Jpeg, size, limits, name, &by),
        None => Err(NoPreview(format!(
            "{name} without a saved preview: no preview for it"
        ))),
    }
}

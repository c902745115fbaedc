//! Previews from the thumbnail an application saved inside its document,
//! for formats whose drawing we do not render: InDesign, EPS, Affinity,
//! Clip Studio Paint, CorelDRAW (before X4), and Illustrator files saved
//! without PDF content. Each says so ([`Preview::saved`]): "preview saved by
//! Illustrator, 256 px".
//!
//! Thumbnails are small, so each is read into memory, through a bound, and
//! decoded by the raster reader within the budget.

use std::io::{BufRead, Read, Seek, SeekFrom};

use image::ImageFormat;

use super::{damaged, unreadable, Limits, NoPreview, Preview};

mod affinity;
mod clip;
mod corel;
mod eps;
mod indesign;
mod palette;
mod xmp;

/// The largest thumbnail read into memory.
pub const MAX_THUMBNAIL_BYTES: u64 = 32 << 20;

/// The saved thumbnail of a document these readers know by its first bytes
/// (`head`); `None` for any other file.
pub fn render<R: BufRead + Seek>(
    reader: &mut R,
    head: &[u8],
    size: u32,
    limits: &Limits,
) -> Option<Result<Preview, NoPreview>> {
    if indesign::is_indesign(head) {
        return Some(indesign::render(reader, size, limits));
    }
    if eps::is_dos_eps(head) {
        return Some(eps::render(reader, size, limits));
    }
    if affinity::is_affinity(head) {
        return Some(affinity::render(reader, size, limits));
    }
    if clip::is_clip(head) {
        return Some(clip::render(reader, size, limits));
    }
    if corel::is_riff_cdr(head) {
        return Some(corel::render(reader, size, limits));
    }
    if eps::is_postscript(head) {
        // An EPS without a binary header, or Illustrator's PostScript:
        // only an XMP thumbnail can show it.
        return Some(eps::render_postscript(reader, head, size, limits));
    }
    None
}

/// An Illustrator file saved without PDF content: the XMP thumbnail.
pub fn illustrator_thumbnail<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let name = "an Adobe Illustrator document saved without PDF content";
    match xmp::thumbnail(reader, 0, false, limits, name)? {
        Some(jpeg) => thumbnail(jpeg, ImageFormat::Jpeg, size, limits, name, "Illustrator"),
        None => Err(NoPreview(format!(
            "{name} and without a thumbnail: no preview for it"
        ))),
    }
}

/// An embedded image of `format` in `bytes`, fitted into `size`, and its own
/// width and height. `what` names it in messages ("an InDesign document's
/// saved thumbnail (a JPEG)").
pub fn decode(
    bytes: Vec<u8>,
    format: ImageFormat,
    size: u32,
    limits: &Limits,
    what: &str,
) -> Result<(image::RgbaImage, (u32, u32)), NoPreview> {
    let dimensions = image::ImageReader::with_format(std::io::Cursor::new(&bytes), format)
        .into_dimensions()
        .map_err(|e| damaged(what, e))?;
    let image = super::raster::render(std::io::Cursor::new(bytes), format, size, limits).map_err(
        |NoPreview(message)| NoPreview(message.replacen(super::raster::name_of(format), what, 1)),
    )?;
    Ok((image, dimensions))
}

/// The preview of a thumbnail of `format` saved by `by` in a document that
/// `name` names.
fn thumbnail(
    bytes: Vec<u8>,
    format: ImageFormat,
    size: u32,
    limits: &Limits,
    name: &str,
    by: &str,
) -> Result<Preview, NoPreview> {
    let kind = match format {
        ImageFormat::Png => "a PNG",
        ImageFormat::Jpeg => "a JPEG",
        ImageFormat::Tiff => "a TIFF",
        ImageFormat::Bmp => "a bitmap",
        _ => "an image",
    };
    let what = format!("{name}'s saved thumbnail ({kind})");
    if format == ImageFormat::Tiff {
        if let Some(image) = palette::decode(&bytes) {
            let longer = image.width().max(image.height());
            let (width, height) = super::fitted(image.width(), image.height(), size);
            let image = super::scale::shrink(image.into(), width, height).into_rgba8();
            return Ok(Preview::saved(image, by, longer));
        }
    }
    let (image, (width, height)) = decode(bytes, format, size, limits, &what)?;
    Ok(Preview::saved(image, by, width.max(height)))
}

/// `len` bytes at `offset`, refused past [`MAX_THUMBNAIL_BYTES`] or the
/// file's end.
fn read_at<R: Read + Seek>(
    reader: &mut R,
    offset: u64,
    len: u64,
    name: &str,
) -> Result<Vec<u8>, NoPreview> {
    if len > MAX_THUMBNAIL_BYTES {
        return Err(NoPreview(format!(
            "{name} whose saved thumbnail claims {} MiB: over the budget",
            len >> 20
        )));
    }
    reader.seek(SeekFrom::Start(offset)).map_err(unreadable)?;
    let mut bytes = Vec::with_capacity(len as usize);
    reader
        .take(len)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if (bytes.len() as u64) < len {
        return Err(damaged(
            name,
            "its saved thumbnail runs past the file's end",
        ));
    }
    Ok(bytes)
}

/// The positions of `needle` in the file from `from` on, found by streaming
/// it: the first when `last` is false, else the last. Looks at the deadline
/// between reads.
fn find<R: Read + Seek>(
    reader: &mut R,
    needle: &[u8],
    from: u64,
    last: bool,
    limits: &Limits,
) -> Result<Option<u64>, NoPreview> {
    const CHUNK: usize = 1 << 20;
    reader.seek(SeekFrom::Start(from)).map_err(unreadable)?;
    let mut window = Vec::with_capacity(CHUNK + needle.len());
    let (mut window_at, mut found) = (from, None);
    let mut chunk = vec![0u8; CHUNK];
    loop {
        limits.check_time()?;
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(found),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(e)),
        };
        window.extend_from_slice(&chunk[..n]);
        let mut start = 0;
        while let Some(at) = memfind(&window[start..], needle) {
            found = Some(window_at + (start + at) as u64);
            if !last {
                return Ok(found);
            }
            start += at + 1;
        }
        // Keep what could be the start of a match across reads.
        let keep = window.len().min(needle.len().saturating_sub(1));
        window_at += (window.len() - keep) as u64;
        window.drain(..window.len() - keep);
    }
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memfind(haystack, needle).is_some()
}

fn memfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

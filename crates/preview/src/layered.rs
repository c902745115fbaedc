//! Documents that are ZIP archives holding their picture as a PNG: Krita
//! `.kra` and OpenRaster `.ora` (their flattened `mergedimage.png`), and the
//! thumbnail an application saved in Sketch (`previews/preview.png`), Adobe
//! XD (`preview.png`), Procreate (`QuickLook/Thumbnail.png`) and CorelDRAW
//! X4 and later (`previews/thumbnail.png`) files. Each kind is told by its
//! `mimetype` entry or the entries only it has. The PNG is read into memory
//! through a bound (its declared size is not trusted: a ZIP bomb stops at
//! the bound), then decoded within what is left of the budget.
//!
//! An OpenRaster image's merged image must have its canvas's shape (MyPaint
//! has saved a 64×64 one for a 3456×3008 canvas); otherwise, or without one,
//! its thumbnail is shown, drawn to the canvas's shape.

use std::io::{Read, Seek};

use super::{damaged, fitted, Limits, NoPreview, Preview};

/// What a ZIP-based document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Krita,
    OpenRaster,
    Sketch,
    Xd,
    Procreate,
    CorelDraw,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Krita => "a Krita document",
            Self::OpenRaster => "an OpenRaster image",
            Self::Sketch => "a Sketch document",
            Self::Xd => "an Adobe XD document",
            Self::Procreate => "a Procreate artwork",
            Self::CorelDraw => "a CorelDRAW drawing",
        }
    }

    /// The entries holding a whole picture, best first, and whether each is
    /// a thumbnail the application saved (named as the preview's header
    /// names it) rather than the document flattened.
    fn pictures(self) -> &'static [(&'static str, Option<&'static str>)] {
        match self {
            Self::Krita => &[("mergedimage.png", None), ("preview.png", Some("Krita"))],
            Self::OpenRaster => &[
                ("mergedimage.png", None),
                ("Thumbnails/thumbnail.png", Some("its OpenRaster writer")),
            ],
            Self::Sketch => &[("previews/preview.png", Some("Sketch"))],
            Self::Xd => &[
                ("preview.png", Some("Adobe XD")),
                ("thumbnail.png", Some("Adobe XD")),
            ],
            Self::Procreate => &[("QuickLook/Thumbnail.png", Some("Procreate"))],
            Self::CorelDraw => &[
                ("previews/thumbnail.png", Some("CorelDRAW")),
                ("metadata/thumbnails/thumbnail.bmp", Some("CorelDRAW")),
            ],
        }
    }

    /// The kind, by the `mimetype` entry or by the entries only it has.
    fn of<R: Read + Seek>(archive: &mut zip::ZipArchive<R>) -> Option<Self> {
        match read_mimetype(archive).as_deref() {
            Some("application/x-krita") => return Some(Self::Krita),
            Some("image/openraster") => return Some(Self::OpenRaster),
            Some(xd) if xd.starts_with("application/vnd.adobe.sparkler.project") => {
                return Some(Self::Xd)
            }
            _ => {}
        }
        let has = |name: &str| archive.index_for_name(name).is_some();
        if has("document.json") && has("meta.json") {
            Some(Self::Sketch)
        } else if has("Document.archive") {
            Some(Self::Procreate)
        } else if has("content/riffData.cdr") || has("content/root.dat") {
            Some(Self::CorelDraw)
        } else {
            None
        }
    }
}

/// A `mimetype` entry longer than this is not one.
const MAX_MIMETYPE_LEN: u64 = 256;
/// OpenRaster's `stack.xml` is read up to this size for the canvas's shape.
const MAX_STACK_XML: u64 = 1 << 20;

/// The embedded PNG may take at most this share of the budget; the decode
/// gets the rest.
fn png_bound(limits: &Limits) -> u64 {
    limits.memory / 4
}

pub fn render<R: Read + Seek>(
    reader: R,
    head: &[u8],
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let mut archive = match zip::ZipArchive::new(reader) {
        Ok(archive) => archive,
        Err(e) => return Err(damaged(super::sniff::zip_kind(head), e)),
    };
    let Some(kind) = Kind::of(&mut archive) else {
        return Err(NoPreview(format!(
            "{}: no preview for it",
            super::seems_to_be(head)
        )));
    };
    let name = kind.name();
    let canvas = match kind {
        Kind::OpenRaster => canvas_of(&mut archive),
        _ => None,
    };
    let found: Vec<_> = kind
        .pictures()
        .iter()
        .filter_map(|&(picture, saved_by)| {
            Some((archive.index_for_name(picture)?, picture, saved_by))
        })
        .collect();
    if found.is_empty() {
        let missing = match kind {
            Kind::Krita | Kind::OpenRaster => "a merged image (saved without one)",
            _ => "a saved thumbnail",
        };
        return Err(NoPreview(format!(
            "{name} without {missing}: no preview for it"
        )));
    }
    // The first picture of the canvas's shape; failing that, the last one.
    let mut chosen = None;
    for &(entry, picture, saved_by) in &found {
        let bytes = read_bounded(&mut archive, entry, name, limits)?;
        let shaped = match (canvas, png_dimensions(&bytes)) {
            (Some(canvas), Some(dimensions)) => same_shape(canvas, dimensions),
            _ => true,
        };
        chosen = Some((picture, saved_by, bytes));
        if shaped {
            break;
        }
    }
    let (picture, saved_by, bytes) = chosen.expect("at least one picture was read");
    limits.check_time()?;
    // CorelDRAW's older ZIPs keep a bitmap; every other picture is a PNG.
    let (format, kind_of_picture) = if picture.ends_with(".bmp") {
        (image::ImageFormat::Bmp, "a bitmap")
    } else {
        (image::ImageFormat::Png, "a PNG")
    };
    let what = match saved_by {
        Some(_) => format!("{name}'s saved thumbnail ({kind_of_picture})"),
        None => format!("{name}'s merged image ({kind_of_picture})"),
    };
    let (image, (width, height)) = super::saved::decode(bytes, format, size, limits, &what)?;
    // The document's shape, at no more pixels than the picture has.
    let (out_w, out_h) = match canvas {
        Some((canvas_w, canvas_h)) => fitted(canvas_w, canvas_h, size.min(width.max(height))),
        None => fitted(width, height, size),
    };
    let image = if image.dimensions() == (out_w, out_h) {
        image
    } else {
        image::imageops::resize(&image, out_w, out_h, image::imageops::FilterType::Triangle)
    };
    Ok(match saved_by {
        Some(by) => Preview::saved(image, by, width.max(height)),
        None => Preview::exact(image),
    })
}

/// Whether a picture `width`×`height` has the canvas's shape, within a pixel
/// of the picture's own size.
fn same_shape((canvas_w, canvas_h): (u32, u32), (width, height): (u32, u32)) -> bool {
    let expected_h = canvas_h as u64 * width as u64 / canvas_w.max(1) as u64;
    expected_h.abs_diff(height as u64) <= 1
}

/// A PNG's width and height, from its header.
fn png_dimensions(png: &[u8]) -> Option<(u32, u32)> {
    let header = png.get(16..24)?;
    let width = u32::from_be_bytes(header[..4].try_into().ok()?);
    let height = u32::from_be_bytes(header[4..].try_into().ok()?);
    (width > 0 && height > 0).then_some((width, height))
}

/// The canvas's width and height from OpenRaster's `stack.xml`: the root
/// `image` element's `w` and `h`.
fn canvas_of<R: Read + Seek>(archive: &mut zip::ZipArchive<R>) -> Option<(u32, u32)> {
    let entry = archive.by_name("stack.xml").ok()?;
    let mut text = String::new();
    entry.take(MAX_STACK_XML).read_to_string(&mut text).ok()?;
    let start = text.find("<image")?;
    let tag = &text[start..start + text[start..].find('>')?];
    let attribute = |name: &str| -> Option<u32> {
        let at = tag.find(&format!(" {name}="))? + name.len() + 2;
        let quote = tag[at..].chars().next()?;
        let value = &tag[at + 1..];
        value[..value.find(quote)?].trim().parse().ok()
    };
    let (w, h) = (attribute("w")?, attribute("h")?);
    (w > 0 && h > 0).then_some((w, h))
}

fn read_mimetype<R: Read + Seek>(archive: &mut zip::ZipArchive<R>) -> Option<String> {
    let entry = archive.by_name("mimetype").ok()?;
    let mut text = String::new();
    entry
        .take(MAX_MIMETYPE_LEN)
        .read_to_string(&mut text)
        .ok()?;
    Some(text.trim().to_owned())
}

/// The entry's bytes, refusing past the bound whatever its header declares.
fn read_bounded<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    index: usize,
    name: &str,
    limits: &Limits,
) -> Result<Vec<u8>, NoPreview> {
    let bound = png_bound(limits);
    let too_large = |bytes: u64| {
        NoPreview(format!(
            "{name} whose merged image unpacks to over {} MiB (at least {} MiB): over the budget",
            bound >> 20,
            bytes >> 20
        ))
    };
    let entry = archive.by_index(index).map_err(|e| damaged(name, e))?;
    if entry.size() > bound {
        return Err(too_large(entry.size()));
    }
    let mut png = Vec::with_capacity(entry.size() as usize);
    let mut limited = entry.take(bound + 1);
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        limits.check_time()?;
        let n = match limited.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(damaged(name, e)),
        };
        png.extend_from_slice(&chunk[..n]);
        if png.len() as u64 > bound {
            return Err(too_large(png.len() as u64));
        }
    }
    Ok(png)
}

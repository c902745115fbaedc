//! Krita `.kra` and OpenRaster `.ora`: ZIP archives whose `mimetype` entry
//! says `application/x-krita` or `image/openraster`, holding the flattened
//! picture as `mergedimage.png` (and a small one, `preview.png` in Krita,
//! `Thumbnails/thumbnail.png` in OpenRaster, used when the merged image is
//! missing). The PNG is read into memory through a bound (its declared size
//! is not trusted: a ZIP bomb stops at the bound), then decoded within what
//! is left of the budget.

use std::io::{Read, Seek};

use super::{damaged, Limits, NoPreview};

/// What a layered archive is.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Krita,
    OpenRaster,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Krita => "a Krita document",
            Self::OpenRaster => "an OpenRaster image",
        }
    }

    /// The entries holding a whole picture, best first.
    fn pictures(self) -> &'static [&'static str] {
        match self {
            Self::Krita => &["mergedimage.png", "preview.png"],
            Self::OpenRaster => &["mergedimage.png", "Thumbnails/thumbnail.png"],
        }
    }
}

/// A `mimetype` entry longer than this is not one.
const MAX_MIMETYPE_LEN: u64 = 256;

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
) -> Result<image::RgbaImage, NoPreview> {
    let not_ours = || NoPreview(format!("{}: no preview for it", super::seems_to_be(head)));
    let mut archive = match zip::ZipArchive::new(reader) {
        Ok(archive) => archive,
        Err(e) => return Err(damaged(super::sniff::zip_kind(head), e)),
    };
    let kind = match read_mimetype(&mut archive).as_deref() {
        Some("application/x-krita") => Kind::Krita,
        Some("image/openraster") => Kind::OpenRaster,
        _ => return Err(not_ours()),
    };
    let name = kind.name();
    let Some(entry) = kind
        .pictures()
        .iter()
        .find_map(|picture| archive.index_for_name(picture))
    else {
        return Err(NoPreview(format!(
            "{name} without a merged image (saved without one): no preview for it"
        )));
    };
    let png = read_bounded(&mut archive, entry, name, limits)?;
    limits.check_time()?;
    let remaining = Limits {
        memory: limits.memory.saturating_sub(png.len() as u64),
        deadline: limits.deadline,
    };
    let embedded = format!("{name}'s merged image (a PNG)");
    let image = super::raster::decode(
        std::io::Cursor::new(png),
        image::ImageFormat::Png,
        size,
        &remaining,
    )
    .map_err(|NoPreview(message)| NoPreview(message.replacen("a PNG image", &embedded, 1)))?;
    let (width, height) = super::fitted(image.width(), image.height(), size);
    Ok(super::scale::shrink(image, width, height).into_rgba8())
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

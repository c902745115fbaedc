//! Photoshop PSD and PSB: the document's composite image (the "image data"
//! section at the end of the file), streamed row by row and scaled down as it
//! goes, never held at full size. Falls back to the embedded thumbnail
//! (image resource 1036) when there is no usable composite.

use std::io::{Read, Seek};

use super::{Limits, NoPreview};

/// Renders a PSD or PSB file (which starts with `8BPS`), fitted into `size`.
pub fn render(
    file: &mut (impl Read + Seek),
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let _ = (file, size, limits);
    Err(NoPreview(
        "a Photoshop document: its reader is not written yet".into(),
    ))
}

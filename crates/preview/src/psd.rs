//! Photoshop PSD and PSB: which image the preview shows. The composite (the
//! image data section at the end of the file); its layers composited
//! ([`layers`]) when it has none (resource 1057: "maximize compatibility"
//! off) or a blank one; failing those, the embedded thumbnail. No part of
//! this reader ever holds an image, a channel or a layer at full size.
//!
//! `document` reads the header and the sections before the pixels
//! (`resources` the image resources), through `cursor`'s buffered positions;
//! `channel` decodes a channel's rows, `composite` streams the composite
//! through it, `rgba` converts the scaled planes to sRGB, and `thumbnail`
//! decodes the last resort.

use std::io::{Read, Seek, SeekFrom};

use super::{fitted, unreadable, Limits, NoPreview, Preview};

mod channel;
mod composite;
mod cursor;
mod document;
mod layers;
mod resources;
mod rgba;
#[cfg(test)]
mod tests;
mod thumbnail;

use composite::render_composite;
use cursor::Cursor;
use document::{Document, Mode};
use rgba::to_rgba;

/// Bytes read from the file at a time for each channel.
const CHUNK: usize = 256 << 10;
/// Rows between looks at the deadline.
const ROWS_PER_TIME_CHECK: u32 = 64;

/// Renders a PSD or PSB file (which starts with `8BPS`), fitted into `size`:
/// its composite; its layers when it has none (or a blank one); else its
/// thumbnail.
pub fn render(
    file: &mut (impl Read + Seek),
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let file_len = file.seek(SeekFrom::End(0)).map_err(unreadable)?;
    file.rewind().map_err(unreadable)?;
    let mut at = Cursor::new(0, file_len, 4096);
    let doc = Document::read(&mut at, file, file_len, limits)?;
    let why = match doc.why_no_composite() {
        None => {
            let image = render_composite(&doc, file, size, limits)?;
            // A composite of one colour over layers: a placeholder (some
            // writers say it is real), unless the layers show nothing either.
            let blank = image.pixels().all(|p| p == image.get_pixel(0, 0));
            if !blank || doc.layer_info.is_none() {
                return Ok(Preview::exact(image));
            }
            // Layers that need more than we render (a fill layer makes a
            // uniform composite too) or show nothing: the composite stands.
            return match render_layers(&doc, file, size, limits) {
                Ok(layers) if !layers.approximate && layers.image.pixels().any(|p| p.0[3] > 0) => {
                    Ok(layers)
                }
                _ => Ok(Preview::exact(image)),
            };
        }
        Some(why) => why,
    };
    let layers = match doc.layer_info {
        Some(_) if doc.mode != Mode::Multichannel => Some(render_layers(&doc, file, size, limits)),
        _ => None,
    };
    match (layers, &doc.thumbnail) {
        (Some(Ok(preview)), _) => Ok(preview),
        (_, Some(thumbnail)) => thumbnail.render(file, size, limits),
        (Some(Err(e)), None) => Err(e),
        (None, None) => Err(NoPreview(format!(
            "{}: {why}, and it has no thumbnail",
            doc.kind()
        ))),
    }
}

/// The layers composited, converted as the composite is.
fn render_layers(
    doc: &Document,
    file: &mut (impl Read + Seek),
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let composited = layers::composite(doc, file, size, limits)?;
    let count = composited.planes.len();
    let image = to_rgba(
        doc,
        &composited.planes,
        count,
        composited.width,
        composited.height,
        false,
    );
    // Composited smaller to fit the memory budget: enlarged to the size asked.
    let (width, height) = fitted(doc.width, doc.height, size);
    let image = if image.dimensions() == (width, height) {
        image
    } else {
        image::imageops::resize(&image, width, height, image::imageops::FilterType::Triangle)
    };
    Ok(Preview {
        image,
        approximate: composited.approximate,
        saved: None,
    })
}

fn damaged(kind: &str, what: impl std::fmt::Display) -> NoPreview {
    NoPreview(format!("{kind}, damaged: {what}"))
}

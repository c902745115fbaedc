//! The embedded thumbnail (image resource 1036, or Photoshop 4's BGR 1033),
//! the last resort when neither the composite nor the layers can be shown.
//! A JPEG larger than a thumbnail can be is refused, never decoded.

use std::io::{Read, Seek, SeekFrom};

use crate::scale::shrink_interleaved;
use crate::{fitted, unreadable, Limits, NoPreview, Preview};

/// Where the thumbnail resource's bytes are.
pub(super) struct Thumbnail {
    pub(super) offset: u64,
    pub(super) len: u64,
    /// Resource 1033 (Photoshop 4): its JPEG holds BGR.
    pub(super) bgr: bool,
}

impl Thumbnail {
    /// The thumbnail's JPEG, fitted into `size`: the preview Photoshop saved.
    pub(super) fn render(
        &self,
        file: &mut (impl Read + Seek),
        size: u32,
        limits: &Limits,
    ) -> Result<Preview, NoPreview> {
        let image = self.decode(file, size, limits)?;
        Ok(Preview::saved(image.0, "Photoshop", image.1))
    }

    /// The thumbnail fitted into `size`, and its longer side.
    fn decode(
        &self,
        file: &mut (impl Read + Seek),
        size: u32,
        limits: &Limits,
    ) -> Result<(image::RgbaImage, u32), NoPreview> {
        limits.claim(self.len, "a Photoshop document's thumbnail")?;
        file.seek(SeekFrom::Start(self.offset))
            .map_err(unreadable)?;
        let mut jpeg = vec![0u8; self.len as usize];
        file.read_exact(&mut jpeg).map_err(unreadable)?;
        let mut decoder = image::codecs::jpeg::JpegDecoder::new(std::io::Cursor::new(&jpeg))
            .map_err(|e| {
                NoPreview(format!(
                    "a Photoshop document whose thumbnail is damaged: {e}"
                ))
            })?;
        // Photoshop's thumbnails are at most 160 px a side: a huge one is no thumbnail.
        let (w, h) = image::ImageDecoder::dimensions(&decoder);
        if w > 1024 || h > 1024 {
            return Err(NoPreview(format!(
                "a Photoshop document whose thumbnail claims {w}×{h} pixels: not a thumbnail"
            )));
        }
        let mut limit = image::Limits::default();
        limit.max_alloc = Some(limits.memory);
        image::ImageDecoder::set_limits(&mut decoder, limit).map_err(|e| {
            NoPreview(format!(
                "a Photoshop document whose thumbnail is too large: {e}"
            ))
        })?;
        let decoded = image::DynamicImage::from_decoder(decoder).map_err(|e| {
            NoPreview(format!(
                "a Photoshop document whose thumbnail is damaged: {e}"
            ))
        })?;
        let mut rgba = decoded.to_rgba8();
        if self.bgr {
            for pixel in rgba.pixels_mut() {
                pixel.0.swap(0, 2);
            }
        }
        let longer = rgba.width().max(rgba.height());
        let (w, h) = fitted(rgba.width(), rgba.height(), size);
        if (w, h) == rgba.dimensions() {
            return Ok((rgba, longer));
        }
        let (width, height) = rgba.dimensions();
        let planes = shrink_interleaved(
            rgba.as_raw(),
            4,
            (width, height),
            (w, h),
            limits,
            "a thumbnail",
        )?;
        let image = image::RgbaImage::from_fn(w, h, |x, y| {
            let i = (y * w + x) as usize;
            image::Rgba([planes[0][i], planes[1][i], planes[2][i], planes[3][i]])
        });
        Ok((image, longer))
    }
}

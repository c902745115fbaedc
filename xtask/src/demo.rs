//! The demo's sample images, made here in Rust (no external tools), so the
//! first look at the app shows thumbnails, a history and a compare: a PSD
//! (a raw 8-bit RGB composite), a PNG, an SVG and a `.blend` with a
//! thumbnail. `version` changes each one visibly.

/// A picture as 8-bit RGB rows, top first: a sky to sea gradient with a
/// sun whose place, size and colour move with `version`.
fn scene(width: u32, height: u32, version: u32) -> Vec<[u8; 3]> {
    let v = version as f32;
    let (sun_x, sun_y) = (0.25 + 0.2 * v, 0.55 - 0.12 * v);
    let sun_r = 0.08 + 0.03 * v;
    let horizon = 0.62;
    let mut pixels = Vec::with_capacity((width * height) as usize);
    for y in 0..height {
        for x in 0..width {
            let (fx, fy) = (x as f32 / width as f32, y as f32 / height as f32);
            let aspect = width as f32 / height as f32;
            let d = (((fx - sun_x) * aspect).powi(2) + (fy - sun_y).powi(2)).sqrt();
            let pixel = if d < sun_r {
                [
                    255,
                    (230.0 - 40.0 * v) as u8,
                    (80.0 - 25.0 * v).max(0.0) as u8,
                ]
            } else if fy < horizon {
                let t = fy / horizon;
                [
                    (40.0 + 180.0 * t * (v / 3.0)) as u8,
                    (90.0 + 80.0 * t) as u8,
                    (200.0 - 90.0 * t * (v / 3.0)) as u8,
                ]
            } else {
                let t = (fy - horizon) / (1.0 - horizon);
                [10, (70.0 - 40.0 * t) as u8, (130.0 - 60.0 * t) as u8]
            };
            pixels.push(pixel);
        }
    }
    pixels
}

/// A Photoshop document of one composite: the header, empty colour-mode,
/// resource and layer sections, then the image data raw (compression 0),
/// planar (every red row, then green, then blue), as Adobe's file format
/// specification lays them out.
pub fn psd(width: u32, height: u32, version: u32) -> Vec<u8> {
    let pixels = scene(width, height, version);
    let mut out = Vec::with_capacity(26 + 14 + pixels.len() * 3);
    out.extend_from_slice(b"8BPS");
    out.extend_from_slice(&1u16.to_be_bytes()); // PSD, not PSB
    out.extend_from_slice(&[0; 6]);
    out.extend_from_slice(&3u16.to_be_bytes()); // channels
    out.extend_from_slice(&height.to_be_bytes());
    out.extend_from_slice(&width.to_be_bytes());
    out.extend_from_slice(&8u16.to_be_bytes()); // bits per channel
    out.extend_from_slice(&3u16.to_be_bytes()); // RGB
    for _empty_section in ["color mode data", "image resources", "layer and mask info"] {
        out.extend_from_slice(&0u32.to_be_bytes());
    }
    out.extend_from_slice(&0u16.to_be_bytes()); // raw
    for channel in 0..3 {
        out.extend(pixels.iter().map(|p| p[channel]));
    }
    out
}

/// A PNG of the same scene, framed, through the image crate.
pub fn png(width: u32, height: u32, version: u32) -> Vec<u8> {
    let pixels = scene(width, height, version);
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        let frame = x < 6 || y < 6 || x >= width - 6 || y >= height - 6;
        if frame {
            image::Rgb([250, 250, 245])
        } else {
            image::Rgb(pixels[(y * width + x) as usize])
        }
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("a PNG in memory");
    out.into_inner()
}

/// A logo as SVG text: its mark turns and recolours with each version.
pub fn svg(version: u32) -> Vec<u8> {
    let colors = ["#d9480f", "#1c7ed6", "#2f9e44", "#ae3ec9"];
    let color = colors[version as usize % colors.len()];
    let angle = 15 * version;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="480" height="240" viewBox="0 0 480 240">
  <rect width="480" height="240" rx="24" fill="#fdfcf7"/>
  <g transform="rotate({angle} 120 120)">
    <rect x="60" y="60" width="120" height="120" rx="18" fill="{color}"/>
    <circle cx="120" cy="120" r="34" fill="#fdfcf7"/>
  </g>
  <text x="220" y="138" font-family="sans-serif" font-size="52" font-weight="bold" fill="#212529">leasedesk</text>
  <text x="222" y="172" font-family="sans-serif" font-size="18" fill="#868e96">logo v{version}</text>
</svg>
"##
    )
    .into_bytes()
}

/// A Blender file holding only its thumbnail, as Blender writes it: the
/// 12-byte header `BLENDER-v300` (`-`: 8-byte pointers, `v`: little
/// endian, version 3.0), then a `TEST` block (code, length, old pointer,
/// SDNA index, count: 24 bytes) whose data is width and height (i32) and
/// width×height RGBA pixels, bottom row first; then `ENDB`. Blender's own
/// thumbnail reader (`blendthumb_extract.cc`) stops at the first block that
/// is neither `REND` nor `TEST`, so `TEST` comes first.
pub fn blend(width: u32, height: u32, version: u32) -> Vec<u8> {
    let pixels = scene(width, height, version + 1);
    let data_len = 8 + width as usize * height as usize * 4;
    let mut out = Vec::with_capacity(12 + 24 + data_len + 24);
    out.extend_from_slice(b"BLENDER-v300");
    let block_header = |out: &mut Vec<u8>, code: &[u8; 4], len: usize| {
        out.extend_from_slice(code);
        out.extend_from_slice(&(len as i32).to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // old memory address
        out.extend_from_slice(&0i32.to_le_bytes()); // SDNA index
        out.extend_from_slice(&1i32.to_le_bytes()); // count
    };
    block_header(&mut out, b"TEST", data_len);
    out.extend_from_slice(&(width as i32).to_le_bytes());
    out.extend_from_slice(&(height as i32).to_le_bytes());
    for row in (0..height).rev() {
        for p in &pixels[(row * width) as usize..((row + 1) * width) as usize] {
            out.extend_from_slice(&[p[0], p[1], p[2], 255]);
        }
    }
    block_header(&mut out, b"ENDB", 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_psd_header_and_sections_are_where_the_specification_puts_them() {
        let file = psd(40, 30, 1);
        assert_eq!(&file[..4], b"8BPS");
        assert_eq!(u32::from_be_bytes(file[14..18].try_into().unwrap()), 30);
        assert_eq!(u32::from_be_bytes(file[18..22].try_into().unwrap()), 40);
        assert_eq!(file.len(), 26 + 4 * 3 + 2 + 40 * 30 * 3);
        assert_ne!(psd(40, 30, 1), psd(40, 30, 2), "versions differ");
    }

    #[test]
    fn the_blend_thumbnail_block_has_the_length_blender_checks() {
        let file = blend(16, 8, 1);
        assert_eq!(&file[..12], b"BLENDER-v300");
        assert_eq!(&file[12..16], b"TEST");
        let len = i32::from_le_bytes(file[16..20].try_into().unwrap()) as usize;
        assert_eq!(len, 8 + 16 * 8 * 4);
        assert_eq!(&file[36 + len..36 + len + 4], b"ENDB");
    }
}

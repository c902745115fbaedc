//! Files as a test makes and reads them: saves the way design applications
//! save, pictures and documents to check in, the backups beside a copy.
//! Touches only the paths it is given; never the app or its store.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Saves the way design applications do: a temporary file renamed over the original.
pub fn save_atomically(path: &Path, data: &[u8]) {
    let temp = path.with_extension("saving~");
    std::fs::write(&temp, data).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

pub fn writable(path: &Path) -> bool {
    !std::fs::metadata(path).unwrap().permissions().readonly()
}

/// The backups kept beside `local` ("hero (my changes …).psd"), sorted.
pub fn backups(local: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("(my changes ")
        })
        .collect();
    found.sort();
    found
}

/// Waits until `path` holds `bytes`.
pub async fn until_holds(path: &Path, bytes: &[u8], what: &str) {
    let started = Instant::now();
    while std::fs::read(path).ok().as_deref() != Some(bytes) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: {} does not hold the expected bytes",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A poster 320 × 200: a sky with a sun at `sun_x`, as PNG bytes.
pub fn poster(sun_x: u32) -> Vec<u8> {
    let image = image::RgbaImage::from_fn(320, 200, |x, y| {
        let (dx, dy) = (x as i64 - sun_x as i64, y as i64 - 60);
        if dx * dx + dy * dy < 30 * 30 {
            image::Rgba([250, 200, 40, 255])
        } else if y > 150 {
            image::Rgba([40, 120, 60, 255])
        } else {
            image::Rgba([90, 150, 230, 255])
        }
    });
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// A flat picture of one colour, 320 × 200.
pub fn swatch(rgb: [u8; 3]) -> Vec<u8> {
    encode(&image::RgbaImage::from_pixel(
        320,
        200,
        image::Rgba([rgb[0], rgb[1], rgb[2], 255]),
    ))
}

pub fn encode(image: &image::RgbaImage) -> Vec<u8> {
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// The same pixels as `poster(80)`, in a differently compressed file.
pub fn poster_recompressed() -> Vec<u8> {
    let pixels = image::load_from_memory(&poster(80)).unwrap().to_rgba8();
    let mut png = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new_with_quality(
        &mut png,
        image::codecs::png::CompressionType::Fast,
        image::codecs::png::FilterType::NoFilter,
    );
    image::ImageEncoder::write_image(
        encoder,
        pixels.as_raw(),
        pixels.width(),
        pixels.height(),
        image::ExtendedColorType::Rgba8,
    )
    .unwrap();
    png
}

/// A 16×16 Photoshop document saved without its composite: an orange
/// layer under an Invert adjustment layer, which previews leave out (so
/// they are approximate).
pub fn layers_with_an_adjustment() -> Vec<u8> {
    let be16 = |v: u16| v.to_be_bytes().to_vec();
    let be32 = |v: u32| v.to_be_bytes().to_vec();
    let mut psd = b"8BPS".to_vec();
    psd.extend(be16(1));
    psd.extend([0; 6]);
    for part in [be16(3), be32(16), be32(16), be16(8), be16(3), be32(0)] {
        psd.extend(part);
    }
    // Version info (1057): no real composite ("maximize compatibility" off).
    let info = [be32(1), vec![0], be32(0), be32(0), be32(1)].concat();
    let resource = [
        b"8BIM".to_vec(),
        be16(1057),
        vec![0, 0],
        be32(info.len() as u32),
        info,
    ]
    .concat();
    psd.extend(be32(resource.len() as u32));
    psd.extend(resource);
    let plane = 2 + 16 * 16;
    let mut info = be16(2);
    // The orange layer: transparency then R, G, B, each raw.
    for v in [0u32, 0, 16, 16] {
        info.extend(be32(v));
    }
    info.extend(be16(4));
    for id in [-1i16, 0, 1, 2] {
        info.extend(id.to_be_bytes());
        info.extend(be32(plane));
    }
    info.extend(b"8BIMnorm\xff\0\0\0");
    info.extend(be32(12));
    info.extend([0; 12]);
    // The adjustment: no pixels, its `nvrt` block.
    info.extend([0; 16]);
    info.extend(be16(0));
    info.extend(b"8BIMnorm\xff\0\0\0");
    info.extend(be32(24));
    info.extend([0; 12]);
    info.extend(b"8BIMnvrt");
    info.extend(be32(0));
    for value in [255u8, 200, 100, 50] {
        info.extend(be16(0));
        info.extend([value; 256]);
    }
    psd.extend(be32(4 + info.len() as u32 + 4));
    psd.extend(be32(info.len() as u32));
    psd.extend(info);
    psd.extend(be32(0));
    // The composite that is not the real one: white.
    psd.extend(be16(0));
    psd.extend([255; 3 * 256]);
    psd
}

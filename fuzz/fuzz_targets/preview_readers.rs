//! The preview readers we wrote ourselves (the dispatcher's sniffing, the
//! Blender thumbnail reader in its three header layouts and two compressions,
//! the Krita/OpenRaster ZIP reader, the SVG guard), over `render_bytes`. None
//! may panic (a caught panic is a failure here too), and a preview, when one
//! is made, fits the size asked for. The first byte picks how the rest is
//! wrapped, so the fuzzer reaches past each format's magic number.

#![no_main]

use std::io::Write;

use leasedesk::preview::{render_bytes, Limits, NoPreview};
use libfuzzer_sys::fuzz_target;

fn zip_with(mimetype: &[u8], name: &str, entry: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored);
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(mimetype).unwrap();
    zip.start_file(name, stored).unwrap();
    zip.write_all(entry).unwrap();
    zip.finish().unwrap().into_inner()
}

fn prefixed(prefix: &[u8], rest: &[u8]) -> Vec<u8> {
    let mut bytes = prefix.to_vec();
    bytes.extend_from_slice(rest);
    bytes
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let input = match pick % 10 {
        0 => rest.to_vec(),
        1 => prefixed(b"BLENDER-v300", rest),
        2 => prefixed(b"BLENDER_v280", rest),
        3 => prefixed(b"BLENDER17-01v0500", rest),
        4 => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&prefixed(b"BLENDER-v300", rest)).unwrap();
            gz.finish().unwrap()
        }
        5 => zstd::encode_all(&prefixed(b"BLENDER-v300", rest)[..], 1).unwrap(),
        6 => zip_with(b"application/x-krita", "mergedimage.png", rest),
        7 => zip_with(b"image/openraster", "Thumbnails/thumbnail.png", rest),
        8 => prefixed(b"PK\x03\x04", rest),
        _ => prefixed(b"<svg xmlns=\"http://www.w3.org/2000/svg\" ", rest),
    };
    // A small budget keeps the fuzzer's memory low; the rules are the same.
    let limits = Limits {
        memory: 64 << 20,
        deadline: std::time::Instant::now() + std::time::Duration::from_secs(10),
    };
    let size = 16 + u32::from(pick) * 2;
    match render_bytes(&input, size, &limits) {
        Ok(image) => assert!(image.width() <= size && image.height() <= size),
        Err(NoPreview(message)) => assert!(
            !message.contains("reader failed"),
            "a reader panicked: {message}"
        ),
    }
});

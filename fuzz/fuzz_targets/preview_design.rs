//! The readers of the thumbnails designers' applications save (InDesign's
//! database and objects, the DOS EPS header and its palette TIFF, XMP's
//! base64, Affinity's Thmb block, Clip Studio's chunks and SQLite database,
//! CorelDRAW's RIFF, the ZIP-based Sketch, XD and Procreate files), over
//! `preview_bytes`. None may panic (a caught panic is a failure here too),
//! and a preview fits the size asked for. The first byte picks how the rest
//! is wrapped, so the fuzzer reaches past each format's header; the seeds
//! (`fuzz/seeds/preview_design`, pick 0) are whole files laid out as the
//! applications write them. PDF is left out: hayro runs isolated.

#![no_main]

use std::io::Write;

use leasedesk::preview::{preview_bytes, Limits, NoPreview};
use libfuzzer_sys::fuzz_target;

fn zip_with(mimetype: Option<&[u8]>, names: &[&str], entry: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored);
    if let Some(mimetype) = mimetype {
        zip.start_file("mimetype", stored).unwrap();
        zip.write_all(mimetype).unwrap();
    }
    let (last, others) = names.split_last().unwrap();
    for name in others {
        zip.start_file(*name, stored).unwrap();
    }
    zip.start_file(*last, stored).unwrap();
    zip.write_all(entry).unwrap();
    zip.finish().unwrap().into_inner()
}

fn prefixed(prefix: &[u8], rest: &[u8]) -> Vec<u8> {
    [prefix, rest].concat()
}

/// InDesign's two master pages (the second newer, two pages long), then
/// `rest` where the objects start.
fn indesign(rest: &[u8]) -> Vec<u8> {
    let mut file = vec![0u8; 8192];
    for (page, sequence) in [(0, 4u64), (4096, 5)] {
        file[page..page + 16].copy_from_slice(&[
            0x06, 0x06, 0xED, 0xF5, 0xD8, 0x1D, 0x46, 0xE5, 0xBD, 0x31, 0xEF, 0xE7, 0xFE, 0x74,
            0xB7, 0x1D,
        ]);
        file[page + 16..page + 24].copy_from_slice(b"DOCUMENT");
        file[page + 24] = 1;
        file[page + 264..page + 272].copy_from_slice(&sequence.to_le_bytes());
        file[page + 280..page + 284].copy_from_slice(&2u32.to_le_bytes());
    }
    [&file[..], rest].concat()
}

/// A DOS EPS header whose TIFF is `rest`.
fn dos_eps(rest: &[u8]) -> Vec<u8> {
    let ps = b"%!PS-Adobe-3.0 EPSF-3.0\n%%Creator: fuzz\n";
    let mut file = vec![0xC5, 0xD0, 0xD3, 0xC6];
    for field in [30, ps.len(), 0, 0, 30 + ps.len(), rest.len()] {
        file.extend((field as u32).to_le_bytes());
    }
    file.extend([0xFF, 0xFF]);
    [&file[..], ps, rest].concat()
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let input = match pick % 12 {
        0 => rest.to_vec(),
        1 => indesign(rest),
        2 => dos_eps(rest),
        3 => prefixed(b"%!PS-Adobe-3.0\n%%Creator: Adobe Illustrator(R) 16.0\n", rest),
        4 => prefixed(b"\x00\xFFKA\x0b\x00\x00\x00nsrP#Inf", rest),
        5 => prefixed(b"CSFCHUNK", rest),
        6 => prefixed(b"RIFF\x00\x10\x00\x00CDRC", rest),
        7 => zip_with(None, &["document.json", "meta.json", "previews/preview.png"], rest),
        8 => zip_with(
            Some(b"application/vnd.adobe.sparkler.project+dcxucf"),
            &["preview.png"],
            rest,
        ),
        9 => zip_with(None, &["Document.archive", "QuickLook/Thumbnail.png"], rest),
        10 => zip_with(Some(b"image/openraster"), &["stack.xml"], rest),
        _ => zip_with(None, &["content/root.dat", "previews/thumbnail.png"], rest),
    };
    // A small budget keeps the fuzzer's memory low; the rules are the same.
    let limits = Limits {
        memory: 64 << 20,
        deadline: std::time::Instant::now() + std::time::Duration::from_secs(10),
    };
    let size = 16 + u32::from(pick) * 2;
    if input.starts_with(b"%PDF") {
        return;
    }
    match preview_bytes(&input, size, &limits) {
        Ok(preview) => {
            assert!(preview.image.width() <= size && preview.image.height() <= size)
        }
        Err(NoPreview(message)) => assert!(
            !message.contains("reader failed"),
            "a reader panicked: {message}"
        ),
    }
});

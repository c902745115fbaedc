//! Naming what a file seems to be from its first bytes, for the message of a
//! file we do not preview: the formats a studio meets (documents, archives,
//! layouts, photos, 3D, video, programs), each by its magic number.

/// Magic numbers at the start of a file, and what they say it is.
const STARTS: &[(&[u8], &str)] = &[
    (b"%PDF-", "a PDF document"),
    (b"%!PS-Adobe", "a PostScript document"),
    (
        b"\x06\x06\xED\xF5\xD8\x1D\x46\xE5\xBD\x31\xEF\xE7\xFE\x74\xB7\x1D",
        "an InDesign document",
    ),
    (
        b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1",
        "a Microsoft compound file (an old Office document, or a 3ds Max scene)",
    ),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"\x1F\x8B", "a gzip-compressed file"),
    (b"\x28\xB5\x2F\xFD", "a zstd-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\xFD7zXZ\x00", "an xz-compressed file"),
    (b"7z\xBC\xAF\x27\x1C", "a 7-Zip archive"),
    (b"Rar!\x1A\x07", "a RAR archive"),
    (b"\x7FELF", "a program (ELF)"),
    (b"MZ", "a Windows program"),
    (b"\xCF\xFA\xED\xFE", "a macOS program"),
    (b"\xCE\xFA\xED\xFE", "a macOS program"),
    (b"\xCA\xFE\xBA\xBE", "a macOS program or Java class"),
    (b"v/1\x01", "an OpenEXR image"),
    (b"#?RADIANCE", "a Radiance HDR image"),
    (b"#?RGBE", "a Radiance HDR image"),
    (b"FUJIFILMCCD-RAW", "a Fujifilm RAW photo"),
    (b"IIRO", "an Olympus RAW photo"),
    (b"IIRS", "an Olympus RAW photo"),
    (b"IIU\x00", "a Panasonic RAW photo"),
    (b"\xFF\x0A", "a JPEG XL image"),
    (b"\x00\x00\x00\x0CJXL \x0D\x0A\x87\x0A", "a JPEG XL image"),
    (b"\x00\x00\x00\x0CjP  \x0D\x0A\x87\x0A", "a JPEG 2000 image"),
    (b"qoif", "a QOI image"),
    (b"DDS ", "a DirectDraw texture"),
    (b"\x00\x00\x01\x00", "a Windows icon"),
    (b"\x00\xFFKA", "an Affinity document"),
    (b"CSFCHUNK", "a Clip Studio Paint document"),
    (b"fig-kiwi", "a Figma file"),
    (b"Kaydara FBX Binary", "an FBX 3D scene"),
    (b"glTF", "a glTF 3D model (binary)"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"OggS", "an Ogg audio or video file"),
    (b"fLaC", "a FLAC audio file"),
    (b"ID3", "an MP3 audio file"),
    (b"\x1A\x45\xDF\xA3", "a Matroska or WebM video"),
    (b"8BPS", "a Photoshop document"),
    (b"BLENDER", "a Blender file"),
];

/// Illustrator writes PDF (or, before CS, PostScript) and names itself early.
pub fn is_illustrator(head: &[u8]) -> bool {
    (head.starts_with(b"%PDF-") || head.starts_with(b"%!PS-Adobe"))
        && contains(head, b"Adobe Illustrator")
}

/// What a file seems to be, in the API's words.
pub fn seems_to_be(head: &[u8]) -> String {
    if head.is_empty() {
        return "an empty file".into();
    }
    if head.starts_with(b"PK\x03\x04") {
        return zip_kind(head).into();
    }
    if let Some(kind) = iso_media(head) {
        return kind.into();
    }
    if head.starts_with(b"RIFF") && head.len() >= 12 {
        return match &head[8..12] {
            b"WAVE" => "a WAV audio file",
            b"AVI " => "an AVI video",
            _ => "a RIFF file",
        }
        .into();
    }
    if is_tiff_raw(head) {
        return "a Canon RAW photo (CR2)".into();
    }
    if is_illustrator(head) {
        return "an Adobe Illustrator document".into();
    }
    if let Some((_, kind)) = STARTS.iter().find(|(magic, _)| head.starts_with(magic)) {
        return (*kind).into();
    }
    if let Ok(text) = std::str::from_utf8(trim_cut_char(head)) {
        if text.chars().all(|c| !c.is_control() || c.is_whitespace()) {
            let start = text.trim_start_matches('\u{FEFF}').trim_start();
            return if start.starts_with("<?xml") || start.starts_with('<') && start.contains("</") {
                "an XML or HTML document"
            } else if start.starts_with('{') || start.starts_with('[') {
                "a JSON or other text file"
            } else {
                "a plain text file"
            }
            .into();
        }
    }
    "a file of an unknown format".into()
}

/// The head with a UTF-8 character cut by the end of the sniffed bytes
/// dropped, so a long text file still reads as text.
fn trim_cut_char(head: &[u8]) -> &[u8] {
    match std::str::from_utf8(head) {
        Err(e) if e.error_len().is_none() => &head[..e.valid_up_to()],
        _ => head,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A Canon CR2: a TIFF with `CR` at byte 8 (its first image is a JPEG the
/// TIFF decoder does not read).
pub fn is_tiff_raw(head: &[u8]) -> bool {
    head.starts_with(b"II*\0") && head.get(8..10) == Some(b"CR")
}

/// HEIF, AVIF, MP4, QuickTime, Canon CR3: an `ftyp` box with its brand.
fn iso_media(head: &[u8]) -> Option<&'static str> {
    if head.get(4..8) != Some(b"ftyp") {
        return None;
    }
    let brand = head.get(8..12)?;
    Some(match brand {
        b"heic" | b"heix" | b"hevc" | b"heim" | b"heis" | b"mif1" | b"msf1" => "a HEIC image",
        b"avif" | b"avis" => "an AVIF image",
        b"crx " => "a Canon RAW photo (CR3)",
        b"qt  " => "a QuickTime video",
        _ => "an MP4 video or other ISO media file",
    })
}

/// A ZIP archive, named by the `mimetype` entry that OpenDocument, EPUB,
/// Krita and OpenRaster store first and uncompressed, or by its first name.
pub fn zip_kind(head: &[u8]) -> &'static str {
    let name_len = head
        .get(26..28)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let extra_len = head
        .get(28..30)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let (Some(name_len), Some(extra_len)) = (name_len, extra_len) else {
        return "a ZIP archive";
    };
    let name = head.get(30..30 + name_len).unwrap_or_default();
    let data = head.get(30 + name_len + extra_len..).unwrap_or_default();
    if name == b"mimetype" {
        let kinds: &[(&[u8], &str)] = &[
            (b"application/x-krita", "a Krita document"),
            (b"image/openraster", "an OpenRaster image"),
            (
                b"application/vnd.oasis.opendocument",
                "an OpenDocument file",
            ),
            (b"application/epub+zip", "an EPUB book"),
        ];
        for (mimetype, kind) in kinds {
            if data.starts_with(mimetype) {
                return kind;
            }
        }
        return "a ZIP archive of a kind with no preview";
    }
    if name == b"[Content_Types].xml" {
        return "an Office document (Word, Excel or PowerPoint)";
    }
    "a ZIP archive"
}

//! Previews: a file's image fitted into S×S pixels, made from its bytes alone
//! (host-free: the bundled backend, the server and the app's look at a local
//! copy all call [`render_file`]). Formats are recognised by content, never by
//! extension. Every input is untrusted: a reader refuses, from its header
//! alone, a decode that would need more than [`Limits::memory`], checks
//! [`Limits::deadline`] as it goes, and a panic in any decoder is caught and
//! answered [`NoPreview`].

use std::io::{BufRead, Seek};
use std::path::Path;
use std::time::{Duration, Instant};

use leasedesk_model::read::read_full;

mod blend;
mod cmyk;
pub mod colour;
pub mod isolated;
mod layered;
mod pdf;
pub mod psd;
mod raster;
mod saved;
pub mod scale;
mod sniff;
mod svg;

pub use pdf::MAX_PDF_BYTES;

/// The smallest and largest preview sizes (API.md), and the default.
pub const MIN_SIZE: u32 = 16;
pub const MAX_SIZE: u32 = 4096;
pub const DEFAULT_SIZE: u32 = 512;

/// A preview could not be made. The message names what the file seems to be
/// ("a ZIP archive, not a Krita or OpenRaster file", "a PSD file whose
/// header claims 300000×300000 pixels"), for the API's 404 `no_preview`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoPreview(pub String);

impl std::fmt::Display for NoPreview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A file that seems to be what it claims but cannot be read through: `name`
/// says what it is, `detail` what went wrong. One wording for every reader.
fn damaged(name: &str, detail: impl std::fmt::Display) -> NoPreview {
    NoPreview(format!("{name}, damaged or truncated: {detail}"))
}

impl From<NoPreview> for leasedesk_model::Error {
    fn from(no: NoPreview) -> Self {
        leasedesk_model::Error::NoPreview(no.0)
    }
}

/// A preview, and whether it leaves out something the document shows (a
/// Photoshop document's adjustment layers or effects, when its layers were
/// composited for want of a composite): the API's `Leasedesk-Preview:
/// approximate`; or whether it is the thumbnail the application saved in the
/// file (`saved`), not a rendering of the document.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub image: image::RgbaImage,
    pub approximate: bool,
    pub saved: Option<Saved>,
}

/// A thumbnail saved in the file by the application that wrote it: which
/// one, and the thumbnail's longer side in pixels. "Preview saved by
/// Illustrator, 256 px".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub by: String,
    pub size: u32,
}

impl Preview {
    pub fn exact(image: image::RgbaImage) -> Self {
        Self {
            image,
            approximate: false,
            saved: None,
        }
    }

    /// The thumbnail `by` saved, `size` pixels on its longer side before it
    /// was fitted.
    /// `by` is kept to letters, digits, spaces and `.-()`, at most 40 of
    /// them: it may come from the file (an EPS's creator) and goes into a
    /// header.
    pub fn saved(image: image::RgbaImage, by: &str, size: u32) -> Self {
        let by: String = by
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || " .-()".contains(*c))
            .take(40)
            .collect();
        Self {
            image,
            approximate: false,
            saved: Some(Saved {
                by: by.trim().to_owned(),
                size,
            }),
        }
    }

    /// A preview of `fidelity` (as [`Preview::fidelity`] writes it; anything
    /// else is exact).
    pub fn of_fidelity(image: image::RgbaImage, fidelity: &str) -> Self {
        let saved = fidelity
            .strip_prefix("saved; by=\"")
            .and_then(|rest| rest.split_once("\"; size="))
            .and_then(|(by, size)| Some((by, size.parse().ok()?)));
        match saved {
            Some((by, size)) => Self::saved(image, by, size),
            None => Self {
                approximate: fidelity == "approximate",
                ..Self::exact(image)
            },
        }
    }

    /// The value of the API's `Leasedesk-Preview` header: `exact`,
    /// `approximate`, or `saved; by="Illustrator"; size=256`.
    pub fn fidelity(&self) -> String {
        match &self.saved {
            Some(saved) => format!("saved; by=\"{}\"; size={}", saved.by, saved.size),
            None if self.approximate => "approximate".into(),
            None => "exact".into(),
        }
    }
}

/// What one preview may spend.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes a decode may hold at once (its buffers, not the file's size).
    pub memory: u64,
    /// When the reader gives up.
    pub deadline: Instant,
}

/// About 512 MiB for one decode.
pub const MEMORY_BUDGET: u64 = 512 << 20;
/// How long one preview may take before it gives up.
pub const TIME_BUDGET: Duration = Duration::from_secs(10);

impl Limits {
    /// The standard budget, starting now.
    pub fn standard() -> Self {
        Self {
            memory: MEMORY_BUDGET,
            deadline: Instant::now() + TIME_BUDGET,
        }
    }

    /// Fails once the deadline has passed; readers call it between rows.
    pub fn check_time(&self) -> Result<(), NoPreview> {
        if Instant::now() > self.deadline {
            Err(NoPreview(
                "making the preview took too long: gave up".into(),
            ))
        } else {
            Ok(())
        }
    }

    /// Fails if a decode needing `bytes` at once would exceed the budget;
    /// `what` names the file ("a PNG image of 100000×100000 pixels").
    pub fn claim(&self, bytes: u64, what: &str) -> Result<(), NoPreview> {
        if bytes > self.memory {
            Err(NoPreview(format!(
                "{what}: decoding it would need {} MiB, over the budget of {} MiB",
                bytes >> 20,
                self.memory >> 20
            )))
        } else {
            Ok(())
        }
    }
}

/// The size of an image `width`×`height` fitted into `size`×`size`, keeping
/// its aspect ratio (each side within one pixel) and never scaled up.
pub fn fitted(width: u32, height: u32, size: u32) -> (u32, u32) {
    let (w, h) = (width.max(1) as u64, height.max(1) as u64);
    let size = size as u64;
    if w <= size && h <= size {
        return (w as u32, h as u32);
    }
    if w >= h {
        let fh = ((h * size + w / 2) / w).max(1);
        (size as u32, fh as u32)
    } else {
        let fw = ((w * size + h / 2) / h).max(1);
        (fw as u32, size as u32)
    }
}

/// The preview of the file at `path`, fitted into `size`×`size` (see
/// [`fitted`]), as 8-bit RGBA, and whether it is approximate. Catches a
/// panic in any reader.
pub fn preview_file(path: &Path, size: u32, limits: &Limits) -> Result<Preview, NoPreview> {
    let file = std::fs::File::open(path).map_err(unreadable)?;
    // Large enough that one read from the disk serves the sniffing and the
    // headers after it.
    let mut reader = std::io::BufReader::with_capacity(64 << 10, file);
    let head = sniffed(&mut reader)?;
    if let Some(name) = pdf_name(&head) {
        let size = size.clamp(MIN_SIZE, MAX_SIZE);
        if let Some(made) = isolated::render_pdf(path, size, limits) {
            return made;
        }
        return guarded(|| render_pdf(&mut reader, name, size, limits));
    }
    guarded(|| render_from(&mut reader, size, limits))
}

/// The PDF reader's preview of the file at `path`, in this process: what
/// an [`isolated`] worker runs.
pub(crate) fn pdf_in_process(
    path: &Path,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut reader = std::io::BufReader::with_capacity(64 << 10, file);
    let head = sniffed(&mut reader)?;
    let name = pdf_name(&head).unwrap_or("a PDF document");
    guarded(|| render_pdf(&mut reader, name, size, limits))
}

/// The file's first bytes, for picking its reader; the reader is rewound.
fn sniffed<R: BufRead + Seek>(reader: &mut R) -> Result<Vec<u8>, NoPreview> {
    let mut head = vec![0u8; SNIFF_LEN];
    let n = read_full(reader, &mut head).map_err(unreadable)?;
    head.truncate(n);
    reader.rewind().map_err(unreadable)?;
    Ok(head)
}

/// What a PDF-based file is called, from its first bytes: a PDF document or
/// an Illustrator document saved PDF-compatible; `None` for any other file.
fn pdf_name(head: &[u8]) -> Option<&'static str> {
    if !head.starts_with(b"%PDF-") {
        return None;
    }
    Some(if sniff::is_illustrator(head) {
        "an Adobe Illustrator document"
    } else {
        "a PDF document"
    })
}

/// A PDF read whole into memory (hayro needs it at hand), under
/// [`MAX_PDF_BYTES`], page 1 drawn. An Illustrator file saved without PDF
/// content has a page that says so: its XMP thumbnail is shown instead.
fn render_pdf<R: BufRead + Seek>(
    reader: &mut R,
    name: &str,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let len = reader.seek(std::io::SeekFrom::End(0)).map_err(unreadable)?;
    let budget = MAX_PDF_BYTES.min(limits.memory / 2);
    if len > budget {
        return Err(NoPreview(format!(
            "{name} of {} MiB: over the preview's budget of {} MiB",
            len >> 20,
            budget >> 20
        )));
    }
    reader.rewind().map_err(unreadable)?;
    let mut bytes = Vec::with_capacity(len as usize);
    reader.read_to_end(&mut bytes).map_err(unreadable)?;
    limits.check_time()?;
    match pdf::render(bytes, size, limits, name)? {
        Some(image) => Ok(Preview::exact(image)),
        None => saved::illustrator_thumbnail(reader, size, limits),
    }
}

/// [`preview_file`]'s image.
pub fn render_file(path: &Path, size: u32, limits: &Limits) -> Result<image::RgbaImage, NoPreview> {
    preview_file(path, size, limits).map(|preview| preview.image)
}

/// The preview of a file held in memory (a test's or a fuzzer's bytes):
/// exactly what [`render_file`] makes of a file with these bytes.
pub fn render_bytes(
    bytes: &[u8],
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    preview_bytes(bytes, size, limits).map(|p| p.image)
}

/// [`render_bytes`]' preview, with its fidelity.
pub fn preview_bytes(bytes: &[u8], size: u32, limits: &Limits) -> Result<Preview, NoPreview> {
    guarded(|| render_from(&mut std::io::Cursor::new(bytes), size, limits))
}

fn guarded(render: impl FnOnce() -> Result<Preview, NoPreview>) -> Result<Preview, NoPreview> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(render)) {
        Ok(result) => result,
        Err(_) => Err(NoPreview(
            "the file's reader failed on its contents: it seems damaged".into(),
        )),
    }
}

pub(crate) fn unreadable(e: std::io::Error) -> NoPreview {
    NoPreview(format!("the file could not be read: {e}"))
}

/// How many first bytes the dispatcher looks at: enough for every magic
/// number, a ZIP's first entry (`mimetype` and its text) and an SVG's root.
const SNIFF_LEN: usize = 4096;

/// Picks the reader by the file's first bytes, then hands it the whole
/// reader from its start.
fn render_from<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let size = size.clamp(MIN_SIZE, MAX_SIZE);
    let head = sniffed(reader)?;
    if head.starts_with(b"8BPS") {
        // The only reader that can say its preview is approximate.
        return psd::render(reader, size, limits);
    }
    if let Some(name) = pdf_name(&head) {
        return render_pdf(reader, name, size, limits);
    }
    if let Some(saved) = saved::render(reader, &head, size, limits) {
        return saved;
    }
    if head.starts_with(b"PK\x03\x04") {
        return layered::render(reader, &head, size, limits);
    }
    render_image(reader, &head, size, limits).map(Preview::exact)
}

/// Every reader but the PSD one, picked by the file's `head`.
fn render_image<R: BufRead + Seek>(
    reader: &mut R,
    head: &[u8],
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    if let Some(format) = raster::format_of(head) {
        return raster::render(reader, format, size, limits);
    }
    if blend::is_blend(head) {
        return blend::render(reader, size, limits);
    }
    if let Some(compression) = blend::Compression::of(head) {
        return blend::render_compressed(reader, compression, size, limits);
    }
    if svg::seems_svg(head) {
        return svg::render(reader, size, limits);
    }
    Err(NoPreview(format!(
        "{}: no preview for it",
        seems_to_be(head)
    )))
}

/// What a file seems to be, from its first bytes (up to a few KiB), in the
/// API's words: "a PDF document", "an InDesign document"...
pub fn seems_to_be(magic: &[u8]) -> String {
    sniff::seems_to_be(magic)
}

/// Encodes a preview as PNG.
pub fn encode_png(image: &image::RgbaImage) -> Vec<u8> {
    encode(image, None)
}

/// The text chunk that carries a preview's fidelity (its `Leasedesk-Preview`
/// header) when it is not exact, so the mark travels with the PNG through
/// every cache and the API's header can be read off it.
const FIDELITY_KEYWORD: &str = "Leasedesk-Preview";

/// Encodes a preview as PNG, marked when it is approximate or saved by its
/// application; empty if the encoder fails (never, for an image in memory).
pub fn encode_preview(preview: &Preview) -> Vec<u8> {
    let fidelity = preview.fidelity();
    encode(&preview.image, (fidelity != "exact").then_some(fidelity))
}

fn encode(image: &image::RgbaImage, fidelity: Option<String>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, image.width(), image.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    if let Some(fidelity) = fidelity {
        let _ = encoder.add_text_chunk(FIDELITY_KEYWORD.into(), fidelity);
    }
    let written = encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(image.as_raw()));
    if written.is_err() {
        return Vec::new();
    }
    out
}

/// The fidelity a PNG made by [`encode_preview`] is marked with (see
/// [`Preview::fidelity`]): its text chunks come before its pixels.
pub fn fidelity_of(png: &[u8]) -> String {
    let keyword = [FIDELITY_KEYWORD.as_bytes(), b"\0"].concat();
    let mut at = 8;
    while let Some(head) = png.get(at..at + 8) {
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        match &head[4..8] {
            b"IDAT" | b"IEND" => break,
            b"tEXt" => {
                let text = png
                    .get(at + 8..at.saturating_add(8 + len))
                    .unwrap_or_default();
                if let Some(value) = text.strip_prefix(&keyword[..]) {
                    return String::from_utf8_lossy(value).into_owned();
                }
            }
            _ => {}
        }
        at = at.saturating_add(12 + len);
    }
    "exact".into()
}

/// Whether a PNG made by [`encode_preview`] is marked approximate.
pub fn is_approximate(png: &[u8]) -> bool {
    fidelity_of(png) == "approximate"
}

/// Raised when the readers change what they make of the same bytes (colour
/// management, layers): previews cached by an older reader are made again.
pub const READER_GENERATION: u32 = 3;

#[cfg(test)]
mod tests {
    use super::{fitted, Preview};

    #[test]
    fn a_fidelity_reads_back_as_written() {
        let image = image::RgbaImage::new(2, 1);
        for preview in [
            Preview::exact(image.clone()),
            Preview {
                approximate: true,
                ..Preview::exact(image.clone())
            },
            Preview::saved(image.clone(), "Adobe Illustrator(R) 16.0", 2448),
        ] {
            let read = Preview::of_fidelity(image.clone(), &preview.fidelity());
            assert_eq!(read, preview);
        }
        // A name that could break the header loses what could.
        let hostile = Preview::saved(image, "a\"b; size=1\r\nX: y", 9);
        assert_eq!(hostile.fidelity(), "saved; by=\"ab size1X y\"; size=9");
    }

    #[test]
    fn fitted_keeps_aspect_and_never_scales_up() {
        assert_eq!(fitted(4, 4, 512), (4, 4));
        assert_eq!(fitted(1000, 500, 512), (512, 256));
        assert_eq!(fitted(500, 1000, 512), (256, 512));
        assert_eq!(fitted(16000, 1, 512), (512, 1));
        assert_eq!(fitted(1025, 1024, 512), (512, 512));
    }
}

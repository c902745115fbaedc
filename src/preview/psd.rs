//! Photoshop PSD and PSB: the document's composite image (the "image data"
//! section at the end of the file), streamed row by row and scaled down as it
//! goes, never held at full size. When the document has no composite (it
//! says so in resource 1057: "maximize compatibility" off) or a blank one,
//! its layers are composited instead ([`layers`]); failing those, the
//! embedded thumbnail (image resource 1036, or the older BGR 1033) is shown.
//!
//! Channels are stored planar (every row of channel 0, then of channel 1...),
//! so each channel read keeps its own position in the file ([`Cursor`]) and
//! the rows of all channels advance together; only the colour channels and,
//! when the layer count says so, the first extra channel (the composite's
//! transparency) are read.
//!
//! Samples become 8 bits before scaling: 16-bit ones rounded, 32-bit floats
//! (linear light) clipped to 0..1 and sRGB-encoded, as Photoshop's default
//! 32-bit view shows them. Colour conversions run after scaling, on the
//! scaled planes, through the document's ICC profile (resource 1039) or the
//! defaults ([`super::colour`]); CMYK is stored inverted (255 = no ink), Lab
//! goes through D50 XYZ to sRGB. Photoshop stores the colours of a
//! transparent composite matted against white, so averaging them and the
//! alpha separately and removing the matte at the end averages premultiplied
//! colour, as a correct downscale does.

use std::io::{Read, Seek, SeekFrom};

use super::colour::{self, Samples, ToSrgb};
use super::scale::BoxPlane;
use super::{fitted, Limits, NoPreview, Preview};

mod layers;

/// Largest sides the format allows.
const PSD_MAX_SIDE: u32 = 30_000;
const PSB_MAX_SIDE: u32 = 300_000;
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
    let file_len = file.seek(SeekFrom::End(0)).map_err(read_failed)?;
    file.rewind().map_err(read_failed)?;
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
        (_, Some(thumbnail)) => render_thumbnail(thumbnail, file, size, limits).map(Preview::exact),
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
    })
}

fn read_failed(e: std::io::Error) -> NoPreview {
    NoPreview(format!("the file could not be read: {e}"))
}

fn damaged(kind: &str, what: impl std::fmt::Display) -> NoPreview {
    NoPreview(format!("{kind}, damaged: {what}"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Bitmap,
    Grayscale,
    Indexed,
    Rgb,
    Cmyk,
    Multichannel,
    Duotone,
    Lab,
}

impl Mode {
    fn from_code(code: u16) -> Option<Self> {
        Some(match code {
            0 => Mode::Bitmap,
            1 => Mode::Grayscale,
            2 => Mode::Indexed,
            3 => Mode::Rgb,
            4 => Mode::Cmyk,
            7 => Mode::Multichannel,
            8 => Mode::Duotone,
            9 => Mode::Lab,
            _ => return None,
        })
    }

    /// Channels that hold colour (the rest are extra: alpha, spot, masks).
    fn colors(self) -> u16 {
        match self {
            Mode::Bitmap | Mode::Grayscale | Mode::Indexed | Mode::Duotone => 1,
            Mode::Rgb | Mode::Lab => 3,
            Mode::Cmyk => 4,
            Mode::Multichannel => 0,
        }
    }
}

/// Where the thumbnail resource's bytes are.
struct Thumbnail {
    offset: u64,
    len: u64,
    /// Resource 1033 (Photoshop 4): its JPEG holds BGR.
    bgr: bool,
}

struct Document {
    psb: bool,
    channels: u16,
    height: u32,
    width: u32,
    depth: u16,
    mode: Mode,
    /// Indexed colour: 256 RGB entries.
    palette: Option<Box<[[u8; 3]; 256]>>,
    thumbnail: Option<Thumbnail>,
    /// Resource 1057 said the composite is real (true when absent).
    has_real_composite: bool,

    /// The embedded ICC profile (resource 1039).
    icc: Option<Vec<u8>>,
    /// The composite's first extra channel is its transparency: the layer
    /// count is negative, or a "merged transparency" block says so. Else
    /// extra channels are saved selections or spot colours.
    merged_alpha: bool,
    /// Where the layer records start (at the layer count) and end.
    layer_info: Option<std::ops::Range<u64>>,
    /// Where the image data section starts (its compression code), and its end.
    image_data: u64,
    file_len: u64,
}

impl Document {
    fn kind(&self) -> &'static str {
        if self.psb {
            "a Photoshop large document (PSB)"
        } else {
            "a Photoshop document"
        }
    }

    fn read(
        at: &mut Cursor,
        file: &mut (impl Read + Seek),
        file_len: u64,
        limits: &Limits,
    ) -> Result<Self, NoPreview> {
        let mut kind = "a Photoshop document";
        let head = at
            .take(file, 26)
            .map_err(|e| e.in_section(kind, "its header"))?;
        if &head[0..4] != b"8BPS" {
            return Err(NoPreview("not a Photoshop document".into()));
        }
        let version = be16(&head[4..]);
        let psb = match version {
            1 => false,
            2 => {
                kind = "a Photoshop large document (PSB)";
                true
            }
            v => return Err(damaged(kind, format_args!("unknown version {v}"))),
        };
        let channels = be16(&head[12..]);
        let height = be32(&head[14..]);
        let width = be32(&head[18..]);
        let depth = be16(&head[22..]);
        let mode_code = be16(&head[24..]);
        if !(1..=56).contains(&channels) {
            return Err(damaged(
                kind,
                format_args!("{channels} channels (1 to 56 allowed)"),
            ));
        }
        let max_side = if psb { PSB_MAX_SIDE } else { PSD_MAX_SIDE };
        if width == 0 || height == 0 || width > max_side || height > max_side {
            return Err(damaged(
                kind,
                format_args!(
                    "its header claims {width}×{height} pixels (1 to {max_side} a side allowed)"
                ),
            ));
        }
        if !matches!(depth, 1 | 8 | 16 | 32) {
            return Err(damaged(kind, format_args!("a depth of {depth} bits")));
        }
        let mode = Mode::from_code(mode_code)
            .ok_or_else(|| damaged(kind, format_args!("unknown colour mode {mode_code}")))?;
        if (mode == Mode::Bitmap) != (depth == 1) {
            return Err(damaged(
                kind,
                format_args!("colour mode {mode_code} with a depth of {depth} bits"),
            ));
        }

        // Colour mode data: the palette of an indexed document.
        let color_len = at
            .section_len(file, false)
            .map_err(|e| e.in_section(kind, "its colour mode data"))?;
        let color_start = at.pos();
        let palette = if mode == Mode::Indexed {
            if color_len < 768 {
                return Err(damaged(
                    kind,
                    format_args!("an indexed-colour document with a palette of {color_len} bytes"),
                ));
            }
            let bytes = at
                .take(file, 768)
                .map_err(|e| e.in_section(kind, "its palette"))?;
            let mut palette = Box::new([[0u8; 3]; 256]);
            for (i, entry) in palette.iter_mut().enumerate() {
                *entry = [bytes[i], bytes[256 + i], bytes[512 + i]];
            }
            Some(palette)
        } else {
            None
        };
        at.seek_to(color_start + color_len);

        // Image resources: the thumbnail and whether the composite is real.
        let resources_len = at
            .section_len(file, false)
            .map_err(|e| e.in_section(kind, "its image resources"))?;
        let resources_end = at.pos() + resources_len;
        let mut thumbnail = None;
        let mut has_real_composite = true;
        let mut icc = None;
        while resources_end.saturating_sub(at.pos()) >= 12 {
            let in_resources = |e: Short| e.in_section(kind, "its image resources");
            let sig = at.take(file, 6).map_err(in_resources)?;
            if &sig[0..4] != b"8BIM" {
                // Some writers pad the section; nothing after this is a resource.
                break;
            }
            let id = be16(&sig[4..]);
            let name_len = at.take(file, 1).map_err(in_resources)?[0] as u64;
            // The name (a Pascal string) is padded to an even length, its length byte included.
            at.seek_to(at.pos() + (name_len + 1).next_multiple_of(2) - 1);
            let data_len = be32(at.take(file, 4).map_err(in_resources)?) as u64;
            let data_start = at.pos();
            if data_start + data_len > resources_end {
                return Err(damaged(
                    kind,
                    format_args!("image resource {id} runs past the end of its section"),
                ));
            }
            match id {
                1033 | 1036 if data_len > 28 => {
                    thumbnail = Some(Thumbnail {
                        offset: data_start + 28,
                        len: data_len - 28,
                        bgr: id == 1033,
                    });
                }
                1057 if data_len >= 5 => {
                    has_real_composite = at.take(file, 5).map_err(in_resources)?[4] != 0;
                }
                1039 if data_len <= MAX_PROFILE => {
                    limits.claim(data_len, "a Photoshop document's colour profile")?;
                    let mut bytes = vec![0; data_len as usize];
                    file.seek(SeekFrom::Start(data_start))
                        .and_then(|_| file.read_exact(&mut bytes))
                        .map_err(read_failed)?;
                    icc = Some(bytes);
                }
                _ => {}
            }
            at.seek_to(data_start + data_len.next_multiple_of(2));
        }
        at.seek_to(resources_end);

        let layers_len = at
            .section_len(file, psb)
            .map_err(|e| e.in_section(kind, "its layer and mask information"))?;
        let image_data = at.pos() + layers_len;
        // A damaged layer section leaves the composite as good as it was.
        let (layer_info, merged_alpha) =
            read_layer_section(at, file, psb, image_data).unwrap_or((None, false));
        Ok(Self {
            psb,
            channels,
            height,
            width,
            depth,
            mode,
            palette,
            thumbnail,
            has_real_composite,
            icc,
            merged_alpha,
            layer_info,
            image_data,
            file_len,
        })
    }

    /// Why the composite cannot be shown, if it cannot.
    fn why_no_composite(&self) -> Option<&'static str> {
        if !self.has_real_composite {
            Some("it was saved without its composite image (\"maximize compatibility\" off)")
        } else if self.mode == Mode::Multichannel {
            Some("its colour mode is Multichannel, which has no one way to show it")
        } else if self.image_data >= self.file_len {
            Some("it is damaged: it ends before its composite image")
        } else {
            None
        }
    }

    /// The conversion of this document's colours to sRGB.
    fn to_srgb(&self, samples: Samples) -> ToSrgb {
        let icc = self.icc.as_deref();
        if self.depth == 32 {
            ToSrgb::of_linear_light(samples, icc)
        } else {
            ToSrgb::new(samples, icc)
        }
    }

    /// Bytes in one row of one channel.
    fn row_bytes(&self) -> u64 {
        (self.width as u64 * self.depth as u64).div_ceil(8)
    }
}

/// The largest colour profile read (moxcms's own bound).
const MAX_PROFILE: u64 = 10 << 20;

/// Where the layer records are, and whether the composite's first extra
/// channel is its transparency, from the layer and mask section (which ends
/// at `end`). 16- and 32-bit documents keep their layers in an `Lr16` or
/// `Lr32` block after the (then empty) layer info.
fn read_layer_section(
    at: &mut Cursor,
    file: &mut (impl Read + Seek),
    psb: bool,
    end: u64,
) -> Result<(Option<std::ops::Range<u64>>, bool), Short> {
    let mut layer_info = None;
    let (mut merged_alpha, mut merged_transparency) = (false, false);
    if at.pos() >= end {
        return Ok((None, false));
    }
    let info_len = at.section_len(file, psb)?;
    let info_start = at.pos();
    let mut note_layers = |at: &mut Cursor, file: &mut _, len: u64| -> Result<(), Short> {
        if let Some((records, count)) = layer_count(at, file, len)? {
            merged_alpha |= count < 0;
            layer_info = layer_info.take().or(Some(records));
        }
        Ok(())
    };
    note_layers(at, file, info_len.min(end.saturating_sub(info_start)))?;
    at.seek_to(info_start + info_len);
    let mask_len = at.section_len(file, false)?;
    at.seek_to(at.pos() + mask_len);
    // Tagged blocks, each padded to four bytes.
    while end.saturating_sub(at.pos()) >= 12 {
        let head = at.take(file, 8)?;
        if &head[0..4] != b"8BIM" && &head[0..4] != b"8B64" {
            break;
        }
        let key: [u8; 4] = head[4..8].try_into().expect("4 bytes");
        let len = at.section_len(file, psb && has_long_length(&key))?;
        let start = at.pos();
        match &key {
            b"Lr16" | b"Lr32" | b"Layr" => note_layers(at, file, len)?,
            b"Mtrn" | b"Mt16" | b"Mt32" => merged_transparency = true,
            _ => {}
        }
        at.seek_to(start + len.next_multiple_of(4));
    }
    Ok((layer_info, merged_alpha || merged_transparency))
}

/// The layer count at the start of a layer info of `len` bytes, and where
/// its records are; none for an empty one.
fn layer_count(
    at: &mut Cursor,
    file: &mut (impl Read + Seek),
    len: u64,
) -> Result<Option<(std::ops::Range<u64>, i16)>, Short> {
    if len < 2 {
        return Ok(None);
    }
    let start = at.pos();
    let count = be16(at.take(file, 2)?) as i16;
    Ok((count != 0).then(|| (start..start + len, count)))
}

/// The tagged blocks whose length takes 8 bytes in a PSB.
fn has_long_length(key: &[u8; 4]) -> bool {
    matches!(
        key,
        b"LMsk"
            | b"Lr16"
            | b"Lr32"
            | b"Layr"
            | b"Mt16"
            | b"Mt32"
            | b"Mtrn"
            | b"Alph"
            | b"FMsk"
            | b"lnk2"
            | b"lnk3"
            | b"lnkE"
            | b"FEid"
            | b"FXid"
            | b"FELS"
            | b"PxSD"
            | b"pths"
            | b"extd"
            | b"extn"
            | b"cinf"
            | b"artd"
    )
}

/// A read that ran out of file.
struct Short {
    wanted: u64,
    at: u64,
    io: Option<std::io::Error>,
}

impl Short {
    fn in_section(self, kind: &str, section: &str) -> NoPreview {
        match self.io {
            Some(e) => read_failed(e),
            None => damaged(
                kind,
                format_args!(
                    "{section} is cut short ({} bytes needed at offset {})",
                    self.wanted, self.at
                ),
            ),
        }
    }
}

/// One position in the file with its own buffer, so planar channels can be
/// read side by side through one file handle.
struct Cursor {
    /// File offset of `buf[0]`.
    base: u64,
    /// Read position in `buf`, and bytes valid in it.
    at: usize,
    filled: usize,
    /// Where this cursor must stop (its section's or the file's end).
    end: u64,
    buf: Vec<u8>,
}

impl Cursor {
    fn new(pos: u64, end: u64, capacity: usize) -> Self {
        Self {
            base: pos,
            at: 0,
            filled: 0,
            end,
            buf: vec![0; capacity],
        }
    }

    fn pos(&self) -> u64 {
        self.base + self.at as u64
    }

    fn seek_to(&mut self, pos: u64) {
        if pos >= self.base && pos <= self.base + self.filled as u64 {
            self.at = (pos - self.base) as usize;
        } else {
            self.base = pos;
            self.at = 0;
            self.filled = 0;
        }
    }

    /// The next `n` bytes (`n` no larger than the buffer).
    fn take(&mut self, file: &mut (impl Read + Seek), n: usize) -> Result<&[u8], Short> {
        debug_assert!(n <= self.buf.len());
        if self.filled - self.at < n {
            let pos = self.pos();
            let short = |io| Short {
                wanted: n as u64,
                at: pos,
                io,
            };
            if pos + n as u64 > self.end {
                return Err(short(None));
            }
            self.buf.copy_within(self.at..self.filled, 0);
            self.filled -= self.at;
            self.base = pos;
            self.at = 0;
            let room = (self.buf.len() - self.filled).min((self.end - pos) as usize - self.filled);
            let from = pos + self.filled as u64;
            file.seek(SeekFrom::Start(from))
                .map_err(|e| short(Some(e)))?;
            let got = read_full(file, &mut self.buf[self.filled..self.filled + room])
                .map_err(|e| short(Some(e)))?;
            self.filled += got;
            if self.filled < n {
                return Err(short(None));
            }
        }
        let start = self.at;
        self.at += n;
        Ok(&self.buf[start..start + n])
    }

    /// What is buffered, reading more first if nothing is (empty at the end).
    fn fill_some(&mut self, file: &mut (impl Read + Seek)) -> Result<&[u8], Short> {
        if self.at == self.filled {
            let pos = self.pos();
            self.base = pos;
            self.at = 0;
            self.filled = 0;
            let room = (self.buf.len() as u64).min(self.end.saturating_sub(pos)) as usize;
            let short = |io| Short {
                wanted: 1,
                at: pos,
                io: Some(io),
            };
            file.seek(SeekFrom::Start(pos)).map_err(short)?;
            self.filled = read_full(file, &mut self.buf[..room]).map_err(short)?;
        }
        Ok(&self.buf[self.at..self.filled])
    }

    fn advance(&mut self, n: usize) {
        self.at = (self.at + n).min(self.filled);
    }

    /// A section's length (4 bytes, or 8 for PSB's long sections), checked
    /// against the file.
    fn section_len(&mut self, file: &mut (impl Read + Seek), long: bool) -> Result<u64, Short> {
        let len = if long {
            be64(self.take(file, 8)?)
        } else {
            be32(self.take(file, 4)?) as u64
        };
        let pos = self.pos();
        if pos.checked_add(len).is_none_or(|end| end > self.end) {
            return Err(Short {
                wanted: len,
                at: pos,
                io: None,
            });
        }
        Ok(len)
    }
}

fn read_full(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[0..8].try_into().expect("8 bytes"))
}

/// How a channel's rows are stored.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Compression {
    Raw,
    Rle,
    /// One zlib stream over every channel's rows; with prediction, each row
    /// holds differences (of bytes, of 16-bit samples, or of 32-bit samples
    /// split into byte planes).
    Zip {
        predicted: bool,
    },
}

enum Stored {
    Raw,
    /// The channel's row lengths.
    Rle {
        counts: Cursor,
    },
    /// Its own inflater over the shared stream, which first skips the rows
    /// of the channels before it.
    Zip {
        inflate: Box<flate2::Decompress>,
        rows_to_skip: u64,
        predicted: bool,
    },
}

/// One channel being read row by row.
struct ChannelRows {
    data: Cursor,
    stored: Stored,
    /// The row as stored (decompressed), `row_bytes` long.
    row: Vec<u8>,
    /// 32-bit ZIP with prediction: the row's byte planes.
    scratch: Vec<u8>,
}

fn render_composite(
    doc: &Document,
    file: &mut (impl Read + Seek),
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let kind = doc.kind();
    let mut at = Cursor::new(doc.image_data, doc.file_len, 16);
    let code = be16(
        at.take(file, 2)
            .map_err(|e| e.in_section(kind, "its image data"))?,
    );
    let compression = match code {
        0 => Compression::Raw,
        1 => Compression::Rle,
        2 => Compression::Zip { predicted: false },
        3 if doc.depth == 1 => {
            return Err(damaged(
                kind,
                "a bitmap composite compressed with prediction",
            ))
        }
        3 => Compression::Zip { predicted: true },
        c => {
            return Err(damaged(
                kind,
                format_args!("unknown compression {c} of its image data"),
            ))
        }
    };
    let data_start = at.pos();
    let (width, height) = (doc.width, doc.height);
    let (out_width, out_height) = fitted(width, height, size);
    let row_bytes = doc.row_bytes();
    let colors = doc.mode.colors();
    let used = if doc.merged_alpha && doc.channels > colors {
        colors + 1
    } else {
        colors
    };
    if doc.channels < colors {
        return Err(damaged(
            kind,
            format_args!("{} channels for a mode of {colors} colours", doc.channels),
        ));
    }
    let what = format!("{kind} of {width}×{height} pixels");

    // Where each channel starts, and for RLE its row lengths.
    let count_bytes: u64 = if doc.psb { 4 } else { 2 };
    let rows_total = doc.channels as u64 * height as u64;
    // No PackBits encoding needs more than a header per byte.
    let max_rle_row = 2 * row_bytes + 2;
    let buffer = CHUNK.max(2 * max_rle_row as usize);
    limits.claim(used as u64 * (buffer as u64 * 2 + row_bytes * 2), &what)?;
    let mut channels = Vec::with_capacity(used as usize);
    match compression {
        Compression::Raw => {
            // Every channel must be there, read or not: a cut file is damaged.
            let plane = row_bytes * height as u64;
            if data_start + plane * doc.channels as u64 > doc.file_len {
                return Err(damaged(
                    kind,
                    format_args!(
                        "its image data is cut short ({} bytes of {} channels of {width}×{height} pixels needed, {} there)",
                        plane * doc.channels as u64,
                        doc.channels,
                        doc.file_len - data_start
                    ),
                ));
            }
            for c in 0..used as u64 {
                let start = data_start + c * plane;
                channels.push(ChannelRows {
                    data: Cursor::new(start, start + plane, buffer),
                    stored: Stored::Raw,
                    row: vec![0; row_bytes as usize],
                    scratch: Vec::new(),
                });
            }
        }
        Compression::Rle => {
            let table_len = rows_total * count_bytes;
            let rows_start = data_start + table_len;
            if rows_start > doc.file_len {
                return Err(damaged(
                    kind,
                    format_args!(
                        "its table of row lengths is cut short ({table_len} bytes needed, {} there)",
                        doc.file_len - data_start
                    ),
                ));
            }
            // One pass over the table for each channel's start; every
            // channel's, read or not: a cut file is damaged.
            let mut table = Cursor::new(data_start, rows_start, CHUNK);
            let mut start = rows_start;
            for c in 0..doc.channels {
                let counts_start = table.pos();
                let mut total = 0u64;
                for row in 0..height {
                    if row % 4096 == 0 {
                        limits.check_time()?;
                    }
                    let b = table
                        .take(file, count_bytes as usize)
                        .map_err(|e| e.in_section(kind, "its table of row lengths"))?;
                    let count = if doc.psb {
                        be32(b) as u64
                    } else {
                        be16(b) as u64
                    };
                    if count > max_rle_row {
                        return Err(damaged(
                            kind,
                            format_args!(
                                "row {row} of channel {c} claims {count} compressed bytes for {row_bytes} bytes of pixels"
                            ),
                        ));
                    }
                    total += count;
                }
                if start + total > doc.file_len {
                    return Err(damaged(
                        kind,
                        format_args!(
                            "its image data is cut short (channel {c} needs {total} bytes at offset {start}, the file ends at {})",
                            doc.file_len
                        ),
                    ));
                }
                if c >= used {
                    start += total;
                    continue;
                }
                channels.push(ChannelRows {
                    data: Cursor::new(start, start + total, buffer),
                    stored: Stored::Rle {
                        counts: Cursor::new(
                            counts_start,
                            counts_start + height as u64 * count_bytes,
                            CHUNK.min((height as u64 * count_bytes) as usize),
                        ),
                    },
                    row: vec![0; row_bytes as usize],
                    scratch: Vec::new(),
                });
                start += total;
            }
        }
        Compression::Zip { predicted } => {
            // An inflater's window and state, beside its buffers.
            limits.claim(used as u64 * (64 << 10), &what)?;
            for c in 0..used as u64 {
                channels.push(ChannelRows {
                    data: Cursor::new(data_start, doc.file_len, CHUNK),
                    stored: Stored::Zip {
                        inflate: Box::new(flate2::Decompress::new(true)),
                        rows_to_skip: c * height as u64,
                        predicted,
                    },
                    row: vec![0; row_bytes as usize],
                    scratch: if predicted && doc.depth == 32 {
                        vec![0; row_bytes as usize]
                    } else {
                        Vec::new()
                    },
                });
            }
        }
    }

    let planes_wanted = match doc.mode {
        Mode::Indexed => 3,
        _ => colors,
    } + (used - colors);
    let mut planes = (0..planes_wanted)
        .map(|_| BoxPlane::new(width, height, out_width, out_height, limits, &what))
        .collect::<Result<Vec<_>, _>>()?;
    limits.claim(width as u64 * 3, &what)?;
    let mut converted = vec![0u8; width as usize];
    let mut indexed = [
        vec![0u8; width as usize],
        vec![0u8; width as usize],
        vec![0u8; width as usize],
    ];

    for y in 0..height {
        if y % ROWS_PER_TIME_CHECK == 0 {
            limits.check_time()?;
        }
        for (c, channel) in channels.iter_mut().enumerate() {
            channel.read_row(file, doc, y, c, limits)?;
            // 8-bit rows are their own samples.
            let samples: &[u8] = if doc.depth == 8 {
                &channel.row
            } else {
                let light = c < colors as usize || doc.mode == Mode::Indexed;
                let depth = if doc.depth == 32 && !light {
                    LINEAR_32
                } else {
                    doc.depth
                };
                to_8bit(&channel.row, depth, &mut converted);
                &converted
            };
            if doc.mode == Mode::Indexed && c == 0 {
                let palette = doc
                    .palette
                    .as_ref()
                    .expect("an indexed document has a palette");
                for (x, &i) in samples.iter().enumerate() {
                    let [r, g, b] = palette[i as usize];
                    indexed[0][x] = r;
                    indexed[1][x] = g;
                    indexed[2][x] = b;
                }
                for (plane, row) in planes.iter_mut().zip(&indexed) {
                    plane.push_row(row);
                }
            } else {
                let p = if doc.mode == Mode::Indexed { c + 2 } else { c };
                planes[p].push_row(samples);
            }
        }
    }

    let planes: Vec<Vec<u8>> = planes.into_iter().map(BoxPlane::finish).collect();
    Ok(to_rgba(
        doc,
        &planes,
        planes_wanted as usize,
        out_width,
        out_height,
        true,
    ))
}

impl ChannelRows {
    /// Reads and decompresses row `y` into `self.row`.
    fn read_row(
        &mut self,
        file: &mut (impl Read + Seek),
        doc: &Document,
        y: u32,
        c: usize,
        limits: &Limits,
    ) -> Result<(), NoPreview> {
        let kind = doc.kind();
        let row_bytes = self.row.len();
        match &mut self.stored {
            Stored::Raw => {
                let bytes = self
                    .data
                    .take(file, row_bytes)
                    .map_err(|e| e.in_section(kind, "its image data"))?;
                self.row.copy_from_slice(bytes);
                Ok(())
            }
            Stored::Rle { counts } => {
                let b = counts
                    .take(file, if doc.psb { 4 } else { 2 })
                    .map_err(|e| e.in_section(kind, "its table of row lengths"))?;
                let count = if doc.psb { be32(b) } else { be16(b) as u32 } as usize;
                if count > self.data.buf.len() {
                    return Err(damaged(
                        kind,
                        format_args!("row {y} of channel {c} claims {count} compressed bytes"),
                    ));
                }
                let packed = self
                    .data
                    .take(file, count)
                    .map_err(|e| e.in_section(kind, "its image data"))?;
                unpack_bits(packed, &mut self.row).map_err(|problem| {
                    damaged(kind, format_args!("row {y} of channel {c}: {problem}"))
                })
            }
            Stored::Zip {
                inflate,
                rows_to_skip,
                predicted,
            } => {
                let problem = |e: String| {
                    damaged(
                        kind,
                        format_args!("row {y} of channel {c} of its ZIP data: {e}"),
                    )
                };
                // The rows of the channels before this one, once.
                while *rows_to_skip > 0 {
                    if *rows_to_skip % ROWS_PER_TIME_CHECK as u64 == 0 {
                        limits.check_time()?;
                    }
                    inflate_row(&mut self.data, file, inflate, &mut self.row, kind)
                        .map_err(problem)?;
                    *rows_to_skip -= 1;
                }
                inflate_row(&mut self.data, file, inflate, &mut self.row, kind).map_err(problem)?;
                if *predicted {
                    undo_prediction(&mut self.row, &mut self.scratch, doc.depth);
                }
                Ok(())
            }
        }
    }
}

/// Inflates exactly `row.len()` bytes of the stream.
fn inflate_row(
    data: &mut Cursor,
    file: &mut (impl Read + Seek),
    inflate: &mut flate2::Decompress,
    row: &mut [u8],
    kind: &str,
) -> Result<(), String> {
    let mut filled = 0;
    while filled < row.len() {
        let input = data
            .fill_some(file)
            .map_err(|e| e.in_section(kind, "its image data").0)?;
        let (in_before, out_before) = (inflate.total_in(), inflate.total_out());
        let status = inflate
            .decompress(input, &mut row[filled..], flate2::FlushDecompress::None)
            .map_err(|e| e.to_string())?;
        let consumed = (inflate.total_in() - in_before) as usize;
        let produced = (inflate.total_out() - out_before) as usize;
        let at_end = input.is_empty();
        data.advance(consumed);
        filled += produced;
        if filled < row.len() {
            if status == flate2::Status::StreamEnd {
                return Err("the stream ends before the image does".into());
            }
            if consumed == 0 && produced == 0 && at_end {
                return Err("the stream is cut short".into());
            }
        }
    }
    Ok(())
}

/// Running sums along one row (differences of bytes, 16-bit or 32-bit
/// samples; 32-bit rows are stored as four byte planes).
fn undo_prediction(row: &mut [u8], scratch: &mut [u8], depth: u16) {
    match depth {
        8 => {
            for x in 1..row.len() {
                row[x] = row[x].wrapping_add(row[x - 1]);
            }
        }
        16 => {
            let mut previous = 0u16;
            for sample in row.chunks_exact_mut(2) {
                previous = previous.wrapping_add(u16::from_be_bytes([sample[0], sample[1]]));
                sample.copy_from_slice(&previous.to_be_bytes());
            }
        }
        32 => {
            for x in 1..row.len() {
                row[x] = row[x].wrapping_add(row[x - 1]);
            }
            let width = row.len() / 4;
            scratch.copy_from_slice(row);
            for x in 0..width {
                for byte in 0..4 {
                    row[x * 4 + byte] = scratch[byte * width + x];
                }
            }
        }
        _ => {}
    }
}

/// Decodes one PackBits row; `out` must be filled exactly.
fn unpack_bits(mut packed: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
    let mut filled = 0;
    while let Some((&header, rest)) = packed.split_first() {
        packed = rest;
        let header = header as i8;
        if header >= 0 {
            let n = header as usize + 1;
            if n > packed.len() {
                return Err("a run of bytes is cut short");
            }
            let Some(dest) = out.get_mut(filled..filled + n) else {
                return Err("its compressed bytes overrun the row");
            };
            dest.copy_from_slice(&packed[..n]);
            packed = &packed[n..];
            filled += n;
        } else if header != -128 {
            let n = (1 - header as i16) as usize;
            let Some((&value, rest)) = packed.split_first() else {
                return Err("a repeated byte is missing");
            };
            packed = rest;
            let Some(dest) = out.get_mut(filled..filled + n) else {
                return Err("its compressed bytes overrun the row");
            };
            dest.fill(value);
            filled += n;
        }
    }
    if filled != out.len() {
        return Err("its compressed bytes end before the row does");
    }
    Ok(())
}

/// `to_8bit`'s depth for 32-bit samples that are not light (transparency, masks).
const LINEAR_32: u16 = 33;

/// One stored row (16, 32 or 1 bits a sample) as 8-bit samples, `width` of them.
fn to_8bit(row: &[u8], depth: u16, out: &mut [u8]) {
    match depth {
        16 => {
            for (o, b) in out.iter_mut().zip(row.chunks_exact(2)) {
                let v = u16::from_be_bytes([b[0], b[1]]) as u32;
                *o = ((v * 255 + 32767) / 65535) as u8;
            }
        }
        32 => {
            // Linear light, shown as Photoshop's default 32-bit view does
            // (exposure 0, gamma 1): clipped to 0..1, then sRGB-encoded.
            // A NaN stays NaN through `clamp`, and casts to 0.
            for (o, b) in out.iter_mut().zip(row.chunks_exact(4)) {
                *o = colour::encode_srgb(f32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            }
        }
        LINEAR_32 => {
            // Transparency is a share, not light: scaled as it is.
            for (o, b) in out.iter_mut().zip(row.chunks_exact(4)) {
                let v = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                *o = (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
            }
        }
        1 => {
            // Bitmap: a set bit is black.
            for (x, o) in out.iter_mut().enumerate() {
                let bit = row[x / 8] >> (7 - x % 8) & 1;
                *o = if bit == 1 { 0 } else { 255 };
            }
        }
        _ => unreachable!("8-bit rows need no conversion; others are refused in the header"),
    }
}

/// The scaled planes (colours, then alpha if any) as RGBA, converted to
/// sRGB through the document's profile (Lab needs none). Photoshop writes
/// a transparent composite's colours `matted` against white.
fn to_rgba(
    doc: &Document,
    planes: &[Vec<u8>],
    count: usize,
    width: u32,
    height: u32,
    matted: bool,
) -> image::RgbaImage {
    let mode = doc.mode;
    let colors = match mode {
        Mode::Indexed => 3,
        _ => mode.colors() as usize,
    };
    let alpha = (count > colors).then(|| &planes[colors]);
    // Photoshop mattes only these modes' transparent composites (as psd-tools reads them).
    let matted = matted && matches!(mode, Mode::Rgb | Mode::Grayscale);
    let samples = match mode {
        Mode::Rgb | Mode::Indexed | Mode::Lab => Samples::Rgb,
        Mode::Grayscale | Mode::Duotone | Mode::Bitmap => Samples::Gray,
        Mode::Cmyk => Samples::Cmyk,
        Mode::Multichannel => unreachable!("refused before reading"),
    };
    let convert = doc.to_srgb(samples);
    let n = samples.per_pixel();
    let mut image = image::RgbaImage::new(width, height);
    let (w, mut row, mut rgb) = (width as usize, Vec::new(), vec![0u8; width as usize * 3]);
    for (y, out) in image.chunks_exact_mut(w * 4).enumerate() {
        row.clear();
        for i in y * w..(y + 1) * w {
            let a = alpha.map_or(255, |a| a[i]);
            match mode {
                Mode::Lab => row.extend(lab_to_srgb(planes[0][i], planes[1][i], planes[2][i])),
                // Stored inverted (255 no ink); ICC's inks are the other way.
                Mode::Cmyk => row.extend((0..4).map(|c| 255 - planes[c][i])),
                _ => row.extend((0..n).map(|c| {
                    let v = planes[c][i];
                    if matted {
                        unmatte(v, a)
                    } else {
                        v
                    }
                })),
            }
        }
        if mode == Mode::Lab {
            rgb.copy_from_slice(&row);
        } else {
            convert.convert(&row, &mut rgb);
        }
        for (x, pixel) in out.chunks_exact_mut(4).enumerate() {
            pixel[..3].copy_from_slice(&rgb[x * 3..x * 3 + 3]);
            pixel[3] = alpha.map_or(255, |a| a[y * w + x]);
        }
    }
    image
}

/// A colour matted against white, `c = a·colour + (1 − a)·255`, back to the colour.
fn unmatte(c: u8, a: u8) -> u8 {
    match a {
        255 => c,
        0 => 0,
        a => {
            let white = 255 - a as i32;
            let colour = ((c as i32 - white) * 255 + a as i32 / 2) / a as i32;
            colour.clamp(0, 255) as u8
        }
    }
}

/// 8-bit Photoshop Lab (L 0..255 for 0..100, a and b offset by 128) to sRGB.
fn lab_to_srgb(l: u8, a: u8, b: u8) -> [u8; 3] {
    let [x, y, z] =
        colour::lab_to_xyz_d50(l as f32 * 100.0 / 255.0, a as f32 - 128.0, b as f32 - 128.0);
    colour::xyz_d50_to_srgb(x, y, z)
}

fn render_thumbnail(
    thumbnail: &Thumbnail,
    file: &mut (impl Read + Seek),
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    limits.claim(thumbnail.len, "a Photoshop document's thumbnail")?;
    file.seek(SeekFrom::Start(thumbnail.offset))
        .map_err(read_failed)?;
    let mut jpeg = vec![0u8; thumbnail.len as usize];
    file.read_exact(&mut jpeg).map_err(read_failed)?;
    let mut decoder =
        image::codecs::jpeg::JpegDecoder::new(std::io::Cursor::new(&jpeg)).map_err(|e| {
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
    if thumbnail.bgr {
        for pixel in rgba.pixels_mut() {
            pixel.0.swap(0, 2);
        }
    }
    let (w, h) = fitted(rgba.width(), rgba.height(), size);
    if (w, h) == rgba.dimensions() {
        return Ok(rgba);
    }
    let mut planes = (0..4)
        .map(|_| BoxPlane::new(rgba.width(), rgba.height(), w, h, limits, "a thumbnail"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut row = vec![0u8; rgba.width() as usize];
    for source in rgba.rows() {
        let source: Vec<_> = source.collect();
        for (c, plane) in planes.iter_mut().enumerate() {
            for (o, p) in row.iter_mut().zip(&source) {
                *o = p.0[c];
            }
            plane.push_row(&row);
        }
    }
    let planes: Vec<Vec<u8>> = planes.into_iter().map(BoxPlane::finish).collect();
    Ok(image::RgbaImage::from_fn(w, h, |x, y| {
        let i = (y * w + x) as usize;
        image::Rgba([planes[0][i], planes[1][i], planes[2][i], planes[3][i]])
    }))
}

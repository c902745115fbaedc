//! The PSD/PSB reader against files written by psd-tools (through
//! `harness::python()`), compared pixel by pixel with what psd-tools itself
//! reads from them; and against damaged and hostile files, each of which must
//! give `NoPreview`, never a panic or a hang.

use std::path::Path;
use std::time::{Duration, Instant};

use leasedesk::preview::{psd, render_file, Limits, NoPreview};

use crate::harness::python;

/// What every script starts with: `write(name, psd)` saves `name.psd`, reads
/// it back with psd-tools and saves what psd-tools sees as `name.png` (RGBA).
const PRELUDE: &str = r#"
import struct, sys, io
import numpy as np
from PIL import Image
from psd_tools import PSDImage
from psd_tools.constants import ColorMode, Compression
out = sys.argv[1]

def noise(h, w, c, seed):
    # Blocks of 3x3 pixels of noise: runs for RLE, detail for the pixels.
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, ((h + 2) // 3, (w + 2) // 3, c), dtype=np.uint16)
    return small.repeat(3, 0).repeat(3, 1)[:h, :w].astype(np.uint8)

def planes_of(array, dtype):
    return [np.ascontiguousarray(array[:, :, i]).astype(dtype).tobytes() for i in range(array.shape[2])]

def with_planes(mode, size, depth, planes, compression, version=1):
    psd = PSDImage.new(mode, size, depth=depth)
    psd._record.header.version = version
    psd._record.image_data.compression = compression
    psd._record.image_data.set_data(planes, psd._record.header)
    return psd

GRAY_ICC = '/usr/share/color/icc/Gray.icc'
SWOP_ICC = '/usr/share/color/icc/ghostscript/default_cmyk.icc'

def with_profile(psd, path):
    """Embeds the ICC profile at `path` (resource 1039)."""
    from psd_tools.constants import Resource
    from psd_tools.psd.image_resources import ImageResource
    data = open(path, 'rb').read()
    psd._record.image_resources[Resource.ICC_PROFILE] = ImageResource(key=Resource.ICC_PROFILE, data=data)
    return psd

def through_profile(image, icc):
    """A PIL image to sRGB through `icc`, by Little CMS, relative colorimetric
    (CMYK with black-point compensation, as Photoshop shows it by default)."""
    from PIL import ImageCms
    source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    srgb = ImageCms.createProfile('sRGB')
    flags = ImageCms.Flags.BLACKPOINTCOMPENSATION if image.mode == 'CMYK' else ImageCms.Flags.NONE
    rgb = ImageCms.profileToProfile(image, source, srgb, renderingIntent=1, outputMode='RGB', flags=flags)
    return np.asarray(rgb).astype(np.float64) / 255

def swop_like(ink):
    """Our default for CMYK without a profile (crates/preview/src/colour.rs): SWOP
    solids, 20% dot gain, overprints as products of reflectances."""
    def xyz(l, a, b):
        fy = (l + 16) / 116
        f = np.array([fy + a / 500, fy, fy - b / 200])
        return np.where(f > 6 / 29, f ** 3, 3 * (6 / 29) ** 2 * (f - 4 / 29))
    solids = [xyz(55, -37, -50), xyz(48, 74, -3), xyz(89, -5, 93), xyz(18, 0, 0)]
    covered = ink + 0.8 * ink * (1 - ink)
    light = np.ones(ink.shape[:2] + (3,))
    for i, solid in enumerate(solids):
        light *= 1 - covered[:, :, i:i + 1] * (1 - solid)
    x, y, z = light[:, :, 0] * 0.9642, light[:, :, 1], light[:, :, 2] * 0.8249
    linear = np.stack([3.1339 * x - 1.6169 * y - 0.4906 * z, -0.9788 * x + 1.9161 * y + 0.0335 * z, 0.0719 * x - 0.2290 * y + 1.4052 * z], 2).clip(0, 1)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)

def to_rgba(psd):
    """What psd-tools reads, as 8-bit RGBA: CMYK and grey through the
    document's profile (Little CMS), without one through our defaults (grey
    under Photoshop's "Dot Gain 20%", CMYK SWOP-like); 32-bit light
    sRGB-encoded, as Photoshop's 32-bit view."""
    from psd_tools.api.utils import has_transparency
    from psd_tools.constants import Resource
    if psd.color_mode in (ColorMode.INDEXED, ColorMode.BITMAP):
        return np.asarray(psd.topil().convert('RGBA'))
    a = np.clip(psd.numpy(), 0.0, 1.0)
    h, w, c = a.shape
    colors = {ColorMode.CMYK: 4, ColorMode.GRAYSCALE: 1}.get(psd.color_mode, 3)
    if psd.depth == 32:
        light = a[:, :, :colors]
        a[:, :, :colors] = np.where(light <= 0.0031308, 12.92 * light, 1.055 * light ** (1 / 2.4) - 0.055)
    icc = psd.image_resources.get_data(Resource.ICC_PROFILE)
    byte = lambda x: (x * 255 + 0.5).astype(np.uint8)
    if psd.color_mode == ColorMode.CMYK and icc:
        # numpy() gives CMYK as stored, inverted: 1 is no ink.
        rgb = through_profile(Image.fromarray(byte(1 - a[:, :, :4]), 'CMYK'), icc)
    elif psd.color_mode == ColorMode.CMYK:
        rgb = swop_like(1 - byte(a[:, :, :4]) / 255)
    elif psd.color_mode == ColorMode.GRAYSCALE and icc:
        rgb = through_profile(Image.fromarray(byte(a[:, :, 0]), 'L'), icc)
    elif psd.color_mode == ColorMode.GRAYSCALE:
        ink = 1 - byte(a[:, :, :1]) / 255
        light = 1 - (ink + 0.8 * ink * (1 - ink))
        rgb = np.repeat(np.where(light <= 0.0031308, 12.92 * light, 1.055 * light ** (1 / 2.4) - 0.055), 3, 2)
    else:
        rgb = a[:, :, :3]
    alpha = a[:, :, colors:colors + 1] if c > colors and has_transparency(psd) else np.ones((h, w, 1))
    return (np.concatenate([rgb, alpha], 2) * 255 + 0.5).astype(np.uint8)

def write(name, psd):
    psd.save(f'{out}/{name}.psd')
    back = PSDImage.open(f'{out}/{name}.psd')
    Image.fromarray(to_rgba(back), 'RGBA').save(f'{out}/{name}.png')
"#;

/// Runs `script` (after the prelude) with a fresh folder as `out`.
pub fn psd_tools_writes(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    testkit::tool::run_ok(
        python()
            .arg("-c")
            .arg(format!("{PRELUDE}\n{script}"))
            .arg(dir.path()),
        "the psd-tools script",
    );
    dir
}

fn render(path: &Path, size: u32) -> Result<image::RgbaImage, NoPreview> {
    let mut file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    psd::render(&mut file, size, &Limits::standard()).map(|p| p.image)
}

fn reference(dir: &Path, name: &str) -> image::RgbaImage {
    image::open(dir.join(format!("{name}.png")))
        .unwrap()
        .to_rgba8()
}

/// Every channel of every pixel within `tolerance` of the reference.
fn assert_close(name: &str, ours: &image::RgbaImage, theirs: &image::RgbaImage, tolerance: u8) {
    assert_eq!(ours.dimensions(), theirs.dimensions(), "{name}: dimensions");
    let mut worst = (0u8, 0u32, 0u32);
    for (x, y, p) in ours.enumerate_pixels() {
        let q = theirs.get_pixel(x, y);
        for c in 0..4 {
            let d = p.0[c].abs_diff(q.0[c]);
            if d > worst.0 {
                worst = (d, x, y);
            }
        }
    }
    let (d, x, y) = worst;
    assert!(
        d <= tolerance,
        "{name}: pixel ({x}, {y}) is {:?}, psd-tools reads {:?}",
        ours.get_pixel(x, y),
        theirs.get_pixel(x, y)
    );
}

/// Each file `name.psd` in `dir` renders at full size as psd-tools reads it.
/// Runs `script` and checks that each of `names` it writes renders as
/// psd-tools renders it, within `tolerance`.
fn psd_tools_match(script: &str, names: &[&str], tolerance: u8) {
    assert_all_match(psd_tools_writes(script).path(), names, tolerance);
}

fn assert_all_match(dir: &Path, names: &[&str], tolerance: u8) {
    for name in names {
        let ours = render(&dir.join(format!("{name}.psd")), 4096)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_close(name, &ours, &reference(dir, name), tolerance);
    }
}

#[test]
fn psd_rgb_8_bit_rle_and_raw_match_psd_tools() {
    psd_tools_match(
        r#"
img = Image.fromarray(noise(37, 53, 3, 1), 'RGB')
write('rle', PSDImage.frompil(img, compression=Compression.RLE))
write('raw', PSDImage.frompil(img, compression=Compression.RAW))
# One row and one column: the edges of every loop.
write('row', PSDImage.frompil(Image.fromarray(noise(1, 70, 3, 2), 'RGB')))
write('column', PSDImage.frompil(Image.fromarray(noise(70, 1, 3, 3), 'RGB')))
"#,
        &["rle", "raw", "row", "column"],
        0,
    );
}

#[test]
fn psd_16_and_32_bit_match_psd_tools_with_light_encoded() {
    psd_tools_match(
        r#"
wide = noise(21, 34, 3, 4).astype(np.uint32) * 257 + np.arange(34, dtype=np.uint32)[None, :, None]
for comp, name in ((Compression.RLE, 'rle16'), (Compression.RAW, 'raw16')):
    write(name, with_planes('RGB', (34, 21), 16, planes_of(np.minimum(wide, 65535), '>u2'), comp))
# Floats from -0.5 to 1.5: Photoshop's HDR range, clipped to 0..1 and sRGB-encoded.
floats = noise(21, 34, 3, 5).astype(np.float32) / 127.5 - 0.5
write('rle32', with_planes('RGB', (34, 21), 32, planes_of(floats, '>f4'), Compression.RLE))
gray16 = noise(9, 12, 1, 6).astype(np.uint16) * 257
write('gray16', with_profile(with_planes('L', (12, 9), 16, planes_of(gray16, '>u2'), Compression.RAW), GRAY_ICC))
"#,
        &["rle16", "raw16", "rle32", "gray16"],
        1,
    );
}

#[test]
fn psd_zip_with_and_without_prediction_matches_psd_tools() {
    psd_tools_match(
        r#"
img = noise(29, 41, 4, 18)
img[:, :, 3] = 255
for comp, name in ((Compression.ZIP, 'zip'), (Compression.ZIP_WITH_PREDICTION, 'predicted')):
    write(f'{name}8', with_planes('RGBA', (41, 29), 8, planes_of(img, np.uint8), comp))
    write(f'{name}16', with_planes('RGB', (41, 29), 16, planes_of(img[:, :, :3].astype(np.uint16) * 257, '>u2'), comp))
    floats = img[:, :, :3].astype(np.float32) / 200.0
    write(f'{name}32', with_planes('RGB', (41, 29), 32, planes_of(floats, '>f4'), comp, version=2))
"#,
        &[
            "zip8",
            "zip16",
            "zip32",
            "predicted8",
            "predicted16",
            "predicted32",
        ],
        1,
    );
}

#[test]
fn psd_cmyk_grayscale_bitmap_and_indexed_match_psd_tools() {
    let dir = psd_tools_writes(
        r#"
write('cmyk', with_profile(PSDImage.frompil(Image.fromarray(noise(19, 23, 4, 7), 'CMYK')), SWOP_ICC))
write('gray', with_profile(PSDImage.frompil(Image.fromarray(noise(19, 23, 1, 8)[:, :, 0], 'L')), GRAY_ICC))
write('gray-untagged', PSDImage.frompil(Image.fromarray(noise(19, 23, 1, 8)[:, :, 0], 'L')))
bits = noise(19, 23, 1, 9)[:, :, 0] > 127
write('bitmap', PSDImage.frompil(Image.fromarray(bits).convert('1')))
# Indexed: psd-tools cannot make one from PIL, so the header and palette are set by hand.
psd = PSDImage.frompil(Image.fromarray(noise(19, 23, 1, 10)[:, :, 0], 'L'))
psd._record.header.color_mode = ColorMode.INDEXED
palette = np.stack([np.arange(256), 255 - np.arange(256), (np.arange(256) * 7) % 256]).astype(np.uint8)
psd._record.color_mode_data.value = palette.tobytes()
write('indexed', psd)
"#,
    );
    assert_all_match(dir.path(), &["gray-untagged", "bitmap", "indexed"], 1);
    // Two colour engines (moxcms and Little CMS): within a few levels, the
    // most in the darkest greys and the LUT's corners (Little CMS's 8-bit
    // table interpolates across sRGB's edge where a shadow, stretched by
    // black-point compensation, leaves the gamut).
    assert_all_match(dir.path(), &["gray", "cmyk"], 8);
}

#[test]
fn psd_transparency_is_the_first_extra_channel_only_when_the_layer_count_says_so() {
    // A negative layer count: the first extra channel is the composite's
    // transparency, which psd-tools reads as matted against white (as
    // Photoshop writes it) and removes the matte: so do we. A positive one:
    // it is a saved selection, and the preview is opaque.
    let dir = psd_tools_writes(
        r#"
from psd_tools.api.layers import PixelLayer
def layered(image, merged_alpha, layer=None):
    psd = PSDImage.frompil(image)
    psd._merged_alpha = merged_alpha
    psd.append(PixelLayer.frompil(layer or image, psd))
    return psd
rgba = noise(17, 29, 4, 11)
rgba[:4, :, 3] = 0
rgba[4:8, :, 3] = 255
write('rgba', layered(Image.fromarray(rgba, 'RGBA'), True))
la = noise(17, 29, 2, 12)
la[:, :3, 1] = 255
write('la', layered(Image.fromarray(la, 'LA'), True))
# The 4x4 document of the report: a fourth channel of zeros, a positive count.
selection = noise(4, 4, 4, 13)
selection[:, :, 3] = 0
write('selection', layered(Image.fromarray(selection, 'RGBA'), False, Image.fromarray(selection[:, :, :3], 'RGB')))
assert PSDImage.open(f'{out}/selection.psd')._record.layer_and_mask_information.layer_info.layer_count == 1
assert PSDImage.open(f'{out}/rgba.psd')._record.layer_and_mask_information.layer_info.layer_count == -1
"#,
    );
    for name in ["rgba", "la"] {
        let ours = render(&dir.path().join(format!("{name}.psd")), 512).unwrap();
        let theirs = reference(dir.path(), name);
        assert_eq!(ours.dimensions(), theirs.dimensions());
        assert!(
            ours.pixels().any(|p| p.0[3] == 0),
            "{name}: transparent somewhere"
        );
        for (x, y, p) in ours.enumerate_pixels() {
            let q = theirs.get_pixel(x, y);
            assert_eq!(p.0[3], q.0[3], "{name}: alpha at ({x}, {y})");
            // psd-tools removes the matte in floats, we in integers.
            if let Some(spread) = 255u8.checked_div(q.0[3]) {
                // Grey goes through "Dot Gain 20%" after, which steepens the darks.
                let tolerance = 2 + 2 * spread;
                for c in 0..3 {
                    assert!(
                        p.0[c].abs_diff(q.0[c]) <= tolerance,
                        "{name}: ({x}, {y}) is {p:?}, psd-tools reads {q:?}"
                    );
                }
            }
        }
    }
    let selection = render(&dir.path().join("selection.psd"), 512).unwrap();
    assert!(
        selection.pixels().all(|p| p.0[3] == 255),
        "a saved selection is not transparency"
    );
    assert_close(
        "selection",
        &selection,
        &reference(dir.path(), "selection"),
        0,
    );
}

#[test]
fn psb_version_2_matches_psd_tools() {
    // psd-tools writes a PSB when the header says version 2 (its data set
    // again so the row lengths take 4 bytes); it reads it back as written.
    let dir = psd_tools_writes(
        r#"
img = noise(31, 45, 3, 13)
for comp, name in ((Compression.RLE, 'rle'), (Compression.RAW, 'raw')):
    psd = with_planes('RGB', (45, 31), 8, planes_of(img, np.uint8), comp, version=2)
    write(name, psd)
    back = PSDImage.open(f'{out}/{name}.psd')
    assert back.version == 2 and np.array_equal(np.asarray(back.topil()), img), name
"#,
    );
    let bytes = std::fs::read(dir.path().join("rle.psd")).unwrap();
    assert_eq!(&bytes[..6], b"8BPS\x00\x02", "a PSB header");
    assert_all_match(dir.path(), &["rle", "raw"], 0);
}

#[test]
fn psd_scaled_preview_averages_whole_blocks() {
    // 8×8 blocks of noise scaled by 8: each preview pixel is its block's mean.
    let dir = psd_tools_writes(
        r#"
rng = np.random.default_rng(14)
blocks = rng.integers(0, 256, (12, 20, 3))
pixels = blocks.repeat(8, 0).repeat(8, 1).astype(np.uint8)
pixels[::2, ::2] = 255 - pixels[::2, ::2]  # not flat inside a block
write('big', PSDImage.frompil(Image.fromarray(pixels, 'RGB')))
mean = pixels.reshape(12, 8, 20, 8, 3).mean(axis=(1, 3))
rgba = np.concatenate([mean, np.full((12, 20, 1), 255.0)], 2)
Image.fromarray((rgba + 0.5).astype(np.uint8), 'RGBA').save(f'{out}/big-scaled.png')
"#,
    );
    let ours = render(&dir.path().join("big.psd"), 20).unwrap();
    assert_eq!(ours.dimensions(), (20, 12));
    assert_close("big", &ours, &reference(dir.path(), "big-scaled"), 1);
    // Through the dispatcher too, which clamps the size to 16..4096.
    let via_dispatcher = render_file(&dir.path().join("big.psd"), 20, &Limits::standard()).unwrap();
    assert_eq!(via_dispatcher, ours);
}

#[test]
fn psd_without_composite_falls_back_to_its_thumbnail() {
    // A document saved with "maximize compatibility" off: version info
    // (1057) says there is no real composite, and the image data is white;
    // its thumbnail (1036, JFIF) is what there is to show.
    let dir = psd_tools_writes(
        r#"
def resource(rid, data):
    return b'8BIM' + struct.pack('>H', rid) + b'\0\0' + struct.pack('>I', len(data)) + data + b'\0' * (len(data) % 2)

def unicode(text):
    return struct.pack('>I', len(text)) + text.encode('utf-16-be')

thumb = Image.fromarray(noise(40, 64, 3, 15), 'RGB')
jpeg = io.BytesIO(); thumb.save(jpeg, 'JPEG', quality=95); jpeg = jpeg.getvalue()
thumbnail = struct.pack('>IIIIIIHH', 1, 64, 40, 64 * 3, 64 * 3 * 40, len(jpeg), 24, 1) + jpeg
version_info = struct.pack('>IB', 1, 0) + unicode('Adobe Photoshop') + unicode('Adobe Photoshop 2026') + struct.pack('>I', 1)
resources = resource(1057, version_info) + resource(1036, thumbnail)

white = Image.new('RGB', (640, 400), (255, 255, 255))
white_psd = PSDImage.frompil(white)
white_psd.save(f'{out}/plain.psd')
raw = open(f'{out}/plain.psd', 'rb').read()
# header (26), colour mode data (4 + 0), then the resources section.
old_len = struct.unpack('>I', raw[30:34])[0]
data = raw[:30] + struct.pack('>I', len(resources)) + resources + raw[34 + old_len:]
open(f'{out}/thumb.psd', 'wb').write(data)
back = PSDImage.open(f'{out}/thumb.psd')
assert not back.has_preview()
Image.fromarray(np.asarray(back.thumbnail().convert('RGBA')), 'RGBA').save(f'{out}/thumb.png')
# The same without the thumbnail: nothing to show.
data = raw[:30] + struct.pack('>I', len(resource(1057, version_info))) + resource(1057, version_info) + raw[34 + old_len:]
open(f'{out}/bare.psd', 'wb').write(data)
"#,
    );
    let ours = render(&dir.path().join("thumb.psd"), 512).unwrap();
    // Two JPEG decoders may differ by a few levels.
    assert_close("thumb", &ours, &reference(dir.path(), "thumb"), 8);
    // And the preview says it is Photoshop's thumbnail, 64 px.
    let file = std::fs::read(dir.path().join("thumb.psd")).unwrap();
    let preview = leasedesk::preview::preview_bytes(&file, 512, &Limits::standard()).unwrap();
    assert_eq!(preview.fidelity(), "saved; by=\"Photoshop\"; size=64");
    let NoPreview(message) = render(&dir.path().join("bare.psd"), 512).unwrap_err();
    assert!(
        message.contains("maximize compatibility") && message.contains("no thumbnail"),
        "{message}"
    );
}

/// Renders `bytes` directly (a panic fails the test), within a time bound.
fn refused(bytes: &[u8], what: &str) -> NoPreview {
    let started = Instant::now();
    let result =
        psd::render(&mut std::io::Cursor::new(bytes), 512, &Limits::standard()).map(|p| p.image);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{what}: took {:?}",
        started.elapsed()
    );
    match result {
        Ok(image) => panic!("{what}: rendered {:?}", image.dimensions()),
        Err(no) => no,
    }
}

#[test]
fn psd_truncated_at_any_offset_is_no_preview() {
    let dir = psd_tools_writes(
        r#"
img = Image.fromarray(noise(23, 31, 4, 16), 'RGBA')
write('rle', PSDImage.frompil(img, compression=Compression.RLE))
write('raw', PSDImage.frompil(img, compression=Compression.RAW))
psd = with_planes('RGB', (31, 23), 16, planes_of(noise(23, 31, 3, 17).astype(np.uint16) * 257, '>u2'), Compression.RLE, version=2)
write('psb', psd)
"#,
    );
    for name in ["rle", "raw", "psb"] {
        let bytes = std::fs::read(dir.path().join(format!("{name}.psd"))).unwrap();
        assert!(render(&dir.path().join(format!("{name}.psd")), 512).is_ok());
        for cut in 0..bytes.len() {
            let NoPreview(message) = refused(&bytes[..cut], &format!("{name} cut at {cut}"));
            if cut >= 4 {
                assert!(
                    message.contains("damaged"),
                    "{name} cut at {cut}: {message}"
                );
            }
        }
    }
}

/// A PSD header (26 bytes) and empty sections up to the image data.
fn header(version: u16, channels: u16, height: u32, width: u32, depth: u16, mode: u16) -> Vec<u8> {
    // The layer section's length: 8 bytes in a PSB (version 2), else 4.
    let layers: &[u8] = if version == 2 { &[0; 8] } else { &[0; 4] };
    [
        b"8BPS".as_slice(),
        &version.to_be_bytes(),
        &[0; 6],
        &channels.to_be_bytes(),
        &height.to_be_bytes(),
        &width.to_be_bytes(),
        &depth.to_be_bytes(),
        &mode.to_be_bytes(),
        &[0; 8], // colour mode data, image resources
        layers,
    ]
    .concat()
}

#[test]
fn psd_hostile_headers_are_no_preview() {
    // 300000×300000 in a PSD (30000 allowed), and in a PSB.
    let message = refused(&header(1, 3, 300_000, 300_000, 8, 3), "huge PSD").0;
    assert!(message.contains("300000×300000"), "{message}");
    let mut huge_psb = header(2, 3, 300_000, 300_000, 8, 3);
    huge_psb.extend([0, 1]); // RLE, and no table of row lengths
    let message = refused(&huge_psb, "huge PSB").0;
    assert!(message.contains("damaged"), "{message}");
    // Allowed sides whose raw data the file does not have.
    let mut raw = header(1, 4, 30_000, 30_000, 32, 4);
    raw.extend([0, 0, 1, 2, 3]);
    assert!(refused(&raw, "raw cut").0.contains("cut short"));
    // An RLE row that decodes past its row: 4 pixels, a run of 100.
    let mut overrun = header(1, 1, 1, 4, 8, 1);
    overrun.extend([0, 1, 0, 2, 0x9d, 7]);
    assert!(refused(&overrun, "overrun").0.contains("overrun"));
    // A row length past what any row of 4 bytes needs.
    let mut long_row = header(1, 1, 1, 4, 8, 1);
    long_row.extend([0, 1, 0xff, 0xff]);
    long_row.extend([0; 100]);
    assert!(refused(&long_row, "long row").0.contains("claims 65535"));
    // Section lengths past the end of the file.
    let mut long_section = header(1, 3, 4, 4, 8, 3);
    long_section[26..30].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(refused(&long_section, "long section").0.contains("damaged"));
    // Zero sides, no channels, depth 7, mode 5, version 3.
    for (what, bytes) in [
        ("no width", header(1, 3, 4, 0, 8, 3)),
        ("no channels", header(1, 0, 4, 4, 8, 3)),
        ("depth 7", header(1, 3, 4, 4, 7, 3)),
        ("mode 5", header(1, 3, 4, 4, 8, 5)),
        ("version 3", header(3, 3, 4, 4, 8, 3)),
        ("RGB with 2 channels", {
            let mut b = header(1, 2, 4, 4, 8, 3);
            b.extend([0, 0]);
            b.extend([0; 32]);
            b
        }),
    ] {
        assert!(refused(&bytes, what).0.contains("damaged"), "{what}");
    }
}

#[test]
fn psd_random_bytes_after_the_signature_are_no_preview_or_an_image() {
    // xorshift noise after `8BPS`, and after a valid header: whatever it
    // says, the reader answers in bounded time and never panics.
    let mut steps = testkit::noise::Xorshift::new(0x2545_f491_4f6c_dd1d);
    let mut next = || steps.next_u64();
    for round in 0..3000 {
        let len = (next() % 600) as usize;
        let mut bytes = if round % 2 == 0 {
            b"8BPS".to_vec()
        } else {
            // A plausible header, so the noise reaches the later sections.
            let mode = [0u16, 1, 2, 3, 4, 8, 9][(next() % 7) as usize];
            let depth = if mode == 0 {
                1
            } else {
                [8u16, 16, 32][(next() % 3) as usize]
            };
            header(
                1 + (next() % 2) as u16,
                1 + (next() % 5) as u16,
                1 + (next() % 40) as u32,
                1 + (next() % 40) as u32,
                depth,
                mode,
            )
        };
        bytes.extend((0..len).map(|_| next() as u8));
        let started = Instant::now();
        let result = psd::render(&mut std::io::Cursor::new(&bytes), 64, &Limits::standard())
            .map(|p| p.image);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "round {round} took too long"
        );
        if let Ok(image) = result {
            assert!(image.width() <= 64 && image.height() <= 64);
        }
    }
}

#[test]
fn psd_32_bit_with_a_linear_profile_matches_psd_tools_through_it() {
    // Photoshop's 32-bit documents hold linear light and carry a linear
    // profile; psd-tools shows them through it (`topil(apply_icc=True)`,
    // from 8-bit linear samples, which band the darkest tones).
    let dir = psd_tools_writes(
        r#"
floats = noise(21, 34, 3, 19).astype(np.float32) / 170.0
psd = with_profile(with_planes('RGB', (34, 21), 32, planes_of(floats, '>f4'), Compression.RLE), '/usr/share/color/icc/ghostscript/scrgb.icc')
psd.save(f'{out}/linear.psd')
back = PSDImage.open(f'{out}/linear.psd')
Image.fromarray(np.asarray(back.topil(apply_icc=True).convert('RGBA')), 'RGBA').save(f'{out}/linear.png')
"#,
    );
    let ours = render(&dir.path().join("linear.psd"), 512).unwrap();
    let (mean, p99) = crate::preview_colour::difference(&ours, &reference(dir.path(), "linear"));
    assert!(
        mean < 2.0 && p99 <= 8,
        "mean {mean:.2}, 99th percentile {p99}"
    );
}

//! Photoshop documents saved without their composite ("maximize
//! compatibility" off) or with a blank one: their layers are composited,
//! and compared with psd-tools' own compositing of the same file
//! (`composite(force=True)`) on documents psd-tools writes with the layers
//! a preview must render: opacity and fill, visibility, masks, groups
//! (normal and pass-through), clipping, and six blend modes.

use leasedesk::preview::{psd, Limits, Preview};

use crate::preview_colour::difference;
use crate::preview_psd::psd_tools_writes;

/// Builds a layered document as `layers.psd` (psd-tools writes its
/// composite), then two copies whose composite is gone: `hidden.psd` says
/// so (resource 1057), `blank.psd` just holds a white one. `layers.png` is
/// psd-tools' compositing of the layers.
const LAYERED: &str = r#"
from psd_tools.api.layers import PixelLayer, Group
from psd_tools.constants import Resource, BlendMode
from psd_tools.psd.image_resources import ImageResource

def layered(mode, size, scale=1):
    w, h = size
    def pixels(hh, ww, c, seed):
        return noise(hh, ww, c, seed).repeat(scale, 0).repeat(scale, 1)
    psd = PSDImage.new(mode, (w * scale, h * scale))
    colour = {'RGB': ('RGB', 'RGBA', 3), 'L': ('L', 'LA', 1)}[mode]
    def image(hh, ww, seed, alpha=False):
        a = pixels(hh, ww, colour[2] + alpha, seed)
        if colour[2] + alpha == 1:
            a = a[:, :, 0]
        return Image.fromarray(a, colour[alpha])
    bg = PixelLayer.frompil(image(h, w, 1), psd, 'background'); psd.append(bg)
    a = pixels(40, 60, colour[2] + 1, 2)
    a[:, :, -1] = np.linspace(0, 255, 60 * scale, dtype=np.uint8)[None, :]
    soft = a if colour[2] == 3 else a[:, :, [0, 1]]
    mul = PixelLayer.frompil(Image.fromarray(soft, colour[1]), psd, 'multiply', top=30 * scale, left=-10 * scale)
    mul.blend_mode = BlendMode.MULTIPLY; mul.opacity = 200; psd.append(mul)
    scr = PixelLayer.frompil(image(50, 50, 3), psd, 'screen', top=5 * scale, left=40 * scale)
    scr.blend_mode = BlendMode.SCREEN; scr.fill_opacity = 180
    scr.create_mask(Image.fromarray(np.tile(np.linspace(255, 0, 50 * scale, dtype=np.uint8), (50 * scale, 1)), 'L'))
    psd.append(scr)
    hidden = PixelLayer.frompil(Image.new(colour[0], (w * scale, h * scale), 255), psd, 'hidden')
    hidden.visible = False; psd.append(hidden)
    group = Group.new(psd, 'group')
    over = PixelLayer.frompil(image(30, 40, 4), group, 'overlay', top=10 * scale, left=10 * scale)
    over.blend_mode = BlendMode.OVERLAY; group.append(over)
    dark = PixelLayer.frompil(image(20, 30, 5, alpha=True), group, 'darken', top=20 * scale, left=20 * scale)
    dark.blend_mode = BlendMode.DARKEN; group.append(dark)
    clip = PixelLayer.frompil(image(h, w, 6), group, 'clipped')
    clip.blend_mode = BlendMode.LIGHTEN; clip.clipping = True; group.append(clip)
    group.opacity = 150
    through = Group.new(psd, 'pass-through'); through.blend_mode = BlendMode.PASS_THROUGH
    light = PixelLayer.frompil(image(20, w, 7), through, 'lighten', top=44 * scale)
    light.blend_mode = BlendMode.LIGHTEN; through.append(light)
    through.opacity = 200
    return psd

def unicode(text):
    return struct.pack('>I', len(text)) + text.encode('utf-16-be')

def without_composite(name, psd, say_so):
    """Saves `name.psd` with a white composite, and (if `say_so`) resource
    1057 saying it is not the real one."""
    psd.save(f'{out}/{name}.psd')
    back = PSDImage.open(f'{out}/{name}.psd')
    h, w = back.height, back.width
    white = [np.full((h, w), 255, np.uint8).tobytes()] * back.channels
    back._record.image_data.compression = Compression.RAW
    back._record.image_data.set_data(white, back._record.header)
    if say_so:
        info = struct.pack('>IB', 1, 0) + unicode('Adobe Photoshop') + unicode('Adobe Photoshop 2026') + struct.pack('>I', 1)
        back._record.image_resources[Resource.VERSION_INFO] = ImageResource(key=Resource.VERSION_INFO, data=info)
    back.save(f'{out}/{name}.psd')

def composited(name, shrunk=1):
    back = PSDImage.open(f'{out}/{name}.psd')
    Image.fromarray(np.asarray(back.composite(force=True).convert('RGBA')), 'RGBA').reduce(shrunk).save(f'{out}/{name}.png')
"#;

fn preview(path: &std::path::Path, size: u32) -> Preview {
    let mut file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    psd::render(&mut file, size, &Limits::standard()).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn reference(dir: &std::path::Path, name: &str) -> image::RgbaImage {
    image::open(dir.join(format!("{name}.png")))
        .unwrap()
        .to_rgba8()
}

/// That `ours` is within a mean difference of `mean_below` and a 99th
/// percentile of `p99_at_most` levels of `theirs`.
fn assert_near(
    what: &str,
    ours: &image::RgbaImage,
    theirs: &image::RgbaImage,
    mean_below: f64,
    p99_at_most: u8,
) {
    let (mean, p99) = difference(ours, theirs);
    assert!(
        mean < mean_below && p99 <= p99_at_most,
        "{what}: mean {mean:.2}, 99th percentile {p99}"
    );
}

#[test]
fn layers_without_a_composite_match_psd_tools_compositing() {
    let dir = psd_tools_writes(&format!(
        "{LAYERED}
psd = layered('RGB', (96, 64))
psd.save(f'{{out}}/layers.psd')
composited('layers')
without_composite('hidden', layered('RGB', (96, 64)), True)
without_composite('blank', layered('RGB', (96, 64)), False)
without_composite('grey', layered('L', (96, 64)), True)
composited('grey')
"
    ));
    let theirs = reference(dir.path(), "layers");
    for name in ["hidden", "blank"] {
        let ours = preview(&dir.path().join(format!("{name}.psd")), 512);
        assert!(
            !ours.approximate,
            "{name}: nothing here needs more than we render"
        );
        // Floats against floats: within a level, but for rounding.
        assert_near(name, &ours.image, &theirs, 0.5, 2);
        let alpha: Vec<u8> = ours.image.pixels().map(|p| p.0[3]).collect();
        assert!(
            alpha.iter().all(|&a| a == 255),
            "{name}: an opaque background"
        );
    }
    // Not the white composite: the layers are what the preview shows.
    let white = image::Rgba([255, 255, 255, 255]);
    let shown = preview(&dir.path().join("hidden.psd"), 512).image;
    assert!(shown.pixels().filter(|&&p| p == white).count() < 10);
    // Grey documents composite in grey, then go through "Dot Gain 20%" (no
    // profile); psd-tools shows grey as it is stored, so compare its
    // composite through the same curve.
    let grey = preview(&dir.path().join("grey.psd"), 512).image;
    let psd_tools_grey = reference(dir.path(), "grey");
    let through_dot_gain = image::RgbaImage::from_fn(grey.width(), grey.height(), |x, y| {
        let v = psd_tools_grey.get_pixel(x, y).0[0];
        let ink = 1.0 - v as f32 / 255.0;
        let light = leasedesk::preview::colour::encode_srgb(1.0 - (ink + 0.8 * ink * (1.0 - ink)));
        image::Rgba([light, light, light, 255])
    });
    assert_near("grey", &grey, &through_dot_gain, 1.0, 4);
}

#[test]
fn a_real_composite_is_still_what_shows() {
    let dir = psd_tools_writes(&format!(
        "{LAYERED}
layered('RGB', (96, 64)).save(f'{{out}}/layers.psd')
composited('layers')
"
    ));
    let ours = preview(&dir.path().join("layers.psd"), 512);
    let (mean, _) = difference(&ours.image, &reference(dir.path(), "layers"));
    assert!(mean < 0.5, "mean {mean:.2}");
}

#[test]
fn shrunk_layers_match_psd_tools_compositing_shrunk() {
    // 768×512 shown at 96×64: blended at the preview's scale, which is
    // exact where each preview pixel covers flat colour (here the blocks
    // and layers line up with the preview's pixels; the multiply layer's
    // transparency ramps across them).
    let dir = psd_tools_writes(&format!(
        "{LAYERED}
without_composite('large', layered('RGB', (96, 64), scale=8), True)
composited('large', shrunk=8)
"
    ));
    let ours = preview(&dir.path().join("large.psd"), 96);
    assert_eq!(ours.image.dimensions(), (96, 64));
    assert_near(
        "large",
        &ours.image,
        &reference(dir.path(), "large"),
        1.0,
        2,
    );
}

#[test]
fn an_adjustment_layer_makes_the_preview_approximate() {
    // An Invert adjustment layer (its `nvrt` block) over an orange
    // background: the preview shows the background, and says it is approximate.
    let dir = psd_tools_writes(&format!(
        "{LAYERED}
from psd_tools.constants import Tag
from psd_tools.psd.tagged_blocks import TaggedBlock, Bytes
psd = PSDImage.new('RGB', (8, 8))
psd.append(PixelLayer.frompil(Image.new('RGB', (8, 8), (200, 100, 50)), psd, 'background'))
invert = PixelLayer.frompil(Image.new('RGBA', (8, 8), (0, 0, 0, 0)), psd, 'invert')
invert._record.tagged_blocks[Tag.INVERT] = TaggedBlock(key=Tag.INVERT, data=Bytes(b''))
psd.append(invert)
without_composite('adjusted', psd, True)
assert PSDImage.open(f'{{out}}/adjusted.psd')[1].kind == 'invert'
"
    ));
    let ours = preview(&dir.path().join("adjusted.psd"), 512);
    assert!(ours.approximate);
    assert!(ours.image.pixels().all(|p| p.0 == [200, 100, 50, 255]));
}

/// A document with an adjustment layer and no composite, and one exact.
fn adjusted_and_exact() -> tempfile::TempDir {
    psd_tools_writes(&format!(
        "{LAYERED}
from psd_tools.constants import Tag
from psd_tools.psd.tagged_blocks import TaggedBlock, Bytes
psd = layered('RGB', (96, 64))
invert = PixelLayer.frompil(Image.new('RGBA', (8, 8), (0, 0, 0, 0)), psd, 'invert')
invert._record.tagged_blocks[Tag.INVERT] = TaggedBlock(key=Tag.INVERT, data=Bytes(b''))
psd.append(invert)
without_composite('adjusted', psd, True)
without_composite('exact', layered('RGB', (96, 64)), True)
"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_says_when_a_preview_is_approximate() {
    let dir = adjusted_and_exact();
    let f = crate::harness::remote_fixture().await;
    let server = f.server.as_ref().unwrap();
    let client = reqwest::Client::new();
    let token = server.token("user:alice");
    for (name, approximate) in [("adjusted", true), ("exact", false)] {
        let bytes = std::fs::read(dir.path().join(format!("{name}.psd"))).unwrap();
        let artifact = f.import(&format!("{name}.psd"), &bytes).await;
        // Twice: made, then from the cache, which keeps the mark.
        for _ in 0..2 {
            let answer = client
                .get(format!(
                    "{}/v1/artifacts/{}/preview?size=64",
                    server.base, artifact.id
                ))
                .bearer_auth(token)
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 200);
            let header = answer
                .headers()
                .get("Leasedesk-Preview")
                .map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(
                header.as_deref(),
                approximate.then_some("approximate"),
                "{name}"
            );
            let png = answer.bytes().await.unwrap();
            let image = image::load_from_memory(&png).unwrap();
            assert_eq!((image.width(), image.height()), (64, 43), "{name}");
        }
    }
    // The bundled backend's bytes carry the same mark.
    let bundled = crate::harness::fixture();
    let bytes = std::fs::read(dir.path().join("adjusted.psd")).unwrap();
    let artifact = bundled.import("adjusted.psd", &bytes).await;
    let png = bundled
        .alice
        .preview(
            leasedesk::model::PreviewOf::Version {
                artifact: artifact.id,
                version: None,
            },
            64,
        )
        .await
        .unwrap();
    assert!(leasedesk::preview::is_approximate(&png));
}

/// Renders `bytes` (a panic fails the test) within a time bound.
fn render_bytes(bytes: &[u8], what: &str) -> Result<Preview, leasedesk::preview::NoPreview> {
    let started = std::time::Instant::now();
    let result = psd::render(&mut std::io::Cursor::new(bytes), 64, &Limits::standard());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{what}: took {:?}",
        started.elapsed()
    );
    if let Ok(preview) = &result {
        assert!(
            preview.image.width() <= 64 && preview.image.height() <= 64,
            "{what}"
        );
    }
    result
}

/// A 24×16 layered document saved without its composite, and where its
/// composite (white, and not the real one) starts.
fn small_without_composite() -> (Vec<u8>, usize) {
    let dir = psd_tools_writes(&format!(
        "{LAYERED}
without_composite('small', layered('RGB', (24, 16)), True)
"
    ));
    let bytes = std::fs::read(dir.path().join("small.psd")).unwrap();
    let composite = bytes.len() - 2 - 24 * 16 * 3;
    (bytes, composite)
}

#[test]
fn layers_cut_short_anywhere_are_no_preview() {
    let (bytes, composite) = small_without_composite();
    assert!(render_bytes(&bytes, "whole").is_ok());
    // Where the composite (white, and not the real one) starts: cut before
    // it, the layers are cut.
    for cut in 0..composite {
        let result = render_bytes(&bytes[..cut], &format!("cut at {cut}"));
        assert!(result.is_err(), "cut at {cut} of {}: rendered", bytes.len());
    }
}

#[test]
fn damaged_layer_records_are_no_preview_or_an_image_never_a_panic() {
    // Every byte of the layer section, in turn, set to values that break
    // lengths, counts, rectangles, compressions and keys.
    let (bytes, composite) = small_without_composite();
    let resources = 26 + 4 + u32::from_be_bytes(bytes[26..30].try_into().unwrap()) as usize;
    let layers = resources
        + 4
        + u32::from_be_bytes(bytes[resources..resources + 4].try_into().unwrap()) as usize;
    let (mut rendered, mut refused) = (0, 0);
    for at in layers..composite {
        for value in [0x00, 0xFF] {
            let mut damaged = bytes.clone();
            damaged[at] = value;
            match render_bytes(&damaged, &format!("byte {at} set to {value}")) {
                Ok(_) => rendered += 1,
                Err(_) => refused += 1,
            }
        }
    }
    // Both happen: many bytes are pixels, many are structure.
    assert!(
        rendered > 0 && refused > 0,
        "{rendered} rendered, {refused} refused"
    );
}

#[test]
fn layers_too_large_for_the_budget_are_composited_smaller_then_enlarged() {
    // 1152×768 asked at 1152 within 24 MiB: its canvases (two of 14 MiB)
    // do not fit half of that, so it is composited smaller and enlarged.
    let dir = psd_tools_writes(&format!(
        "{LAYERED}
without_composite('wide', layered('RGB', (96, 64), scale=12), True)
composited('wide')
"
    ));
    let limits = Limits {
        memory: 24 << 20,
        ..Limits::standard()
    };
    let mut file =
        std::io::BufReader::new(std::fs::File::open(dir.path().join("wide.psd")).unwrap());
    let ours = psd::render(&mut file, 1152, &limits).unwrap();
    assert_eq!(ours.image.dimensions(), (1152, 768));
    // Enlarged: soft along the 36-pixel blocks' edges, the same inside them.
    let (mean, _) = difference(&ours.image, &reference(dir.path(), "wide"));
    assert!(mean < 8.0, "mean {mean:.2}");
}

/// A PSB of 8×8 RGB saved without its composite, with one layer record
/// whose extra data is `extra` (after an empty mask, ranges and name).
fn psb_with_layer_extra(extra: &[u8]) -> Vec<u8> {
    let mut psd = b"8BPS\x00\x02\0\0\0\0\0\0\x00\x03".to_vec();
    psd.extend(8u32.to_be_bytes());
    psd.extend(8u32.to_be_bytes());
    psd.extend(8u16.to_be_bytes());
    psd.extend(3u16.to_be_bytes());
    psd.extend(0u32.to_be_bytes());
    let info = [
        1u32.to_be_bytes().as_slice(),
        &[0],
        &[0; 8],
        &1u32.to_be_bytes(),
    ]
    .concat();
    let resource = [
        b"8BIM".as_slice(),
        &1057u16.to_be_bytes(),
        &[0, 0],
        &(info.len() as u32).to_be_bytes(),
        &info,
    ]
    .concat();
    psd.extend((resource.len() as u32).to_be_bytes());
    psd.extend(resource);
    let mut record = [0u8; 16].to_vec();
    record.extend(0u16.to_be_bytes());
    record.extend(b"8BIMnorm\xff\0\0\0");
    let tail = [[0u8; 12].as_slice(), extra].concat();
    record.extend((tail.len() as u32).to_be_bytes());
    record.extend(tail);
    let layer_info = [1u16.to_be_bytes().as_slice(), &record].concat();
    psd.extend((layer_info.len() as u64 + 8 + 4).to_be_bytes());
    psd.extend((layer_info.len() as u64).to_be_bytes());
    psd.extend(layer_info);
    psd.extend(0u32.to_be_bytes());
    psd.extend(0u16.to_be_bytes());
    psd.extend([255u8; 3 * 64]);
    psd
}

#[test]
fn a_tagged_block_whose_length_wraps_is_refused_at_once() {
    // `cinf` takes an 8-byte length in a PSB: one that would wrap the
    // position around to the block's own start.
    let mut extra = b"8BIMcinf".to_vec();
    extra.extend((u64::MAX - 15).to_be_bytes());
    extra.extend([0; 8]);
    let result = render_bytes(&psb_with_layer_extra(&extra), "a wrapping length");
    let message = result.expect_err("refused").0;
    assert!(message.contains("runs past"), "{message}");
    // A well-formed block of that key is read past.
    let mut fine = b"8BIMcinf".to_vec();
    fine.extend(4u64.to_be_bytes());
    fine.extend([0; 4]);
    assert!(render_bytes(&psb_with_layer_extra(&fine), "a cinf block").is_ok());
    // And any size asked is fitted into 16..4096, as the API says.
    let image =
        leasedesk::preview::render_bytes(&psb_with_layer_extra(&fine), 0, &Limits::standard())
            .unwrap();
    assert_eq!(image.dimensions(), (8, 8));
}

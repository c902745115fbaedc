//! Small PSDs written here (raw channels, a few layers and tagged blocks)
//! for what the reader makes of fill and shape layers, colour modes and
//! profiles, each pinned to what psd-tools or Photoshop shows.

use super::layers::descriptor::tests::{double, encode, object};
use super::layers::vector::tests::polygon_block;
use crate::{Limits, Preview};

/// A layer as written: its rectangle (top, left, bottom, right), channels
/// (id, rows of raw samples), tagged blocks, and a user mask's default
/// colour (a mask without pixels) if any.
#[derive(Default)]
struct TestLayer {
    rect: (i32, i32, i32, i32),
    channels: Vec<(i16, Vec<u8>)>,
    blocks: Vec<([u8; 4], Vec<u8>)>,
    empty_mask: Option<u8>,
    /// Layer mask data as written (its length first), in place of `empty_mask`'s.
    mask_data: Option<Vec<u8>>,
}

fn be16(v: u16) -> [u8; 2] {
    v.to_be_bytes()
}

fn be32(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

/// An 8-bit PSD of `mode` (its code), `width`×`height`: `composite` its
/// planes (raw), or none (resource 1057 says so, and blank planes stand
/// in), with `colour_data`, `resources` and `layers`.
fn psd(
    mode: u16,
    size: (u32, u32),
    colour_data: &[u8],
    resources: &[(u16, Vec<u8>)],
    layers: &[TestLayer],
    composite: Option<Vec<Vec<u8>>>,
    channels: u16,
) -> Vec<u8> {
    let layout = (mode, size, channels);
    psd_with_blocks(layout, colour_data, resources, layers, &[], composite)
}

/// As [`psd`], with tagged blocks after the layers (the document's own,
/// such as its patterns).
fn psd_with_blocks(
    (mode, (width, height), channels): (u16, (u32, u32), u16),
    colour_data: &[u8],
    resources: &[(u16, Vec<u8>)],
    layers: &[TestLayer],
    blocks: &[([u8; 4], Vec<u8>)],
    composite: Option<Vec<Vec<u8>>>,
) -> Vec<u8> {
    let mut out = b"8BPS".to_vec();
    out.extend(be16(1));
    out.extend([0; 6]);
    out.extend(be16(channels));
    out.extend(be32(height));
    out.extend(be32(width));
    out.extend(be16(8));
    out.extend(be16(mode));
    out.extend(be32(colour_data.len() as u32));
    out.extend(colour_data);
    let mut resource_bytes = Vec::new();
    let mut all = resources.to_vec();
    if composite.is_none() {
        // Version info: version, then "has real merged data" 0.
        all.push((1057, vec![0, 0, 0, 1, 0]));
    }
    for (id, data) in &all {
        resource_bytes.extend(b"8BIM");
        resource_bytes.extend(be16(*id));
        resource_bytes.extend([0, 0]);
        resource_bytes.extend(be32(data.len() as u32));
        resource_bytes.extend(data);
        if data.len() % 2 == 1 {
            resource_bytes.push(0);
        }
    }
    out.extend(be32(resource_bytes.len() as u32));
    out.extend(resource_bytes);

    let mut info = Vec::new();
    if !layers.is_empty() {
        info.extend(be16(layers.len() as u16));
        for layer in layers {
            let (t, l, b, r) = layer.rect;
            for v in [t, l, b, r] {
                info.extend(be32(v as u32));
            }
            info.extend(be16(layer.channels.len() as u16));
            for (id, data) in &layer.channels {
                info.extend(be16(*id as u16));
                info.extend(be32(data.len() as u32 + 2));
            }
            info.extend(b"8BIMnorm");
            info.extend([255, 0, 0, 0]);
            let mut extra = Vec::new();
            match (&layer.mask_data, layer.empty_mask) {
                (Some(data), _) => {
                    extra.extend(be32(data.len() as u32));
                    extra.extend(data);
                }
                (None, Some(colour)) => {
                    extra.extend(be32(20));
                    extra.extend([0; 16]);
                    extra.extend([colour, 0, 0, 0]);
                }
                (None, None) => extra.extend(be32(0)),
            }
            extra.extend(be32(0)); // blending ranges
            extra.extend([0, 0, 0, 0]); // the name, padded
            for (key, data) in &layer.blocks {
                let mut data = data.clone();
                data.resize(data.len().next_multiple_of(4), 0);
                extra.extend(b"8BIM");
                extra.extend(key);
                extra.extend(be32(data.len() as u32));
                extra.extend(data);
            }
            info.extend(be32(extra.len() as u32));
            info.extend(extra);
        }
        for layer in layers {
            for (_, data) in &layer.channels {
                info.extend(be16(0));
                info.extend(data);
            }
        }
        if info.len() % 2 == 1 {
            info.push(0);
        }
    }
    let mut section = Vec::new();
    section.extend(be32(info.len() as u32));
    section.extend(info);
    section.extend(be32(0)); // global mask
    for (key, data) in blocks {
        let mut data = data.clone();
        data.resize(data.len().next_multiple_of(4), 0);
        section.extend(b"8BIM");
        section.extend(key);
        section.extend(be32(data.len() as u32));
        section.extend(data);
    }
    out.extend(be32(section.len() as u32));
    out.extend(section);

    out.extend(be16(0)); // raw
    let planes = composite
        .unwrap_or_else(|| vec![vec![255u8; (width * height) as usize]; channels as usize]);
    for plane in planes {
        out.extend(plane);
    }
    out
}

fn render(bytes: &[u8], size: u32) -> Preview {
    super::render(&mut std::io::Cursor::new(bytes), size, &Limits::standard()).unwrap()
}

/// A `SoCo` block of an sRGB colour.
fn solid_colour(r: f64, g: f64, b: f64) -> Vec<u8> {
    let colour = object(
        b"RGBC",
        &[
            (b"Rd  ", double(r)),
            (b"Grn ", double(g)),
            (b"Bl  ", double(b)),
        ],
    );
    [be32(16).to_vec(), encode(b"null", &[(b"Clr ", colour)])].concat()
}

/// A fill or shape layer saved without pixels, as Photoshop saves one when
/// "maximize compatibility" is off: an empty rectangle and empty channels.
fn pixelless(blocks: Vec<([u8; 4], Vec<u8>)>) -> TestLayer {
    TestLayer {
        channels: (-1..3).map(|id| (id, Vec::new())).collect(),
        blocks,
        empty_mask: Some(255),
        ..TestLayer::default()
    }
}

#[test]
fn a_solid_colour_fill_layer_fills_the_canvas() {
    let layer = pixelless(vec![(*b"SoCo", solid_colour(255.0, 0.0, 0.0))]);
    let file = psd(3, (8, 6), &[], &[], &[layer], None, 3);
    let preview = render(&file, 64);
    assert!(!preview.approximate);
    assert!(
        preview.image.pixels().all(|p| p.0 == [255, 0, 0, 255]),
        "{:?}",
        preview.image.get_pixel(0, 0)
    );
}

#[test]
fn a_shape_layer_fills_its_path_with_smooth_edges() {
    // A rectangle from x 2 to 6.5, y 1 to 5, of cyan.
    let path = polygon_block(&[(2.0, 1.0), (6.5, 1.0), (6.5, 5.0), (2.0, 5.0)], 8, 6);
    let mut layer = pixelless(vec![
        (*b"SoCo", solid_colour(0.0, 255.0, 255.0)),
        (*b"vmsk", path),
    ]);
    layer.empty_mask = None;
    let file = psd(3, (8, 6), &[], &[], &[layer], None, 3);
    let preview = render(&file, 64);
    assert!(!preview.approximate);
    let image = preview.image;
    assert_eq!(image.get_pixel(3, 2).0, [0, 255, 255, 255]);
    assert_eq!(image.get_pixel(1, 2).0[3], 0);
    assert_eq!(image.get_pixel(7, 2).0[3], 0);
    assert_eq!(image.get_pixel(3, 0).0[3], 0);
    // Half of the last column's pixels is inside.
    let edge = image.get_pixel(6, 3).0;
    assert!(edge[3].abs_diff(128) <= 1 && edge[1] == 255, "{edge:?}");
}

#[test]
fn a_gradient_fill_layer_ramps_across_the_canvas() {
    let enumeration = |t: &[u8], v: &[u8]| {
        [
            b"enum".to_vec(),
            be32(0).to_vec(),
            t.to_vec(),
            be32(0).to_vec(),
            v.to_vec(),
        ]
        .concat()
    };
    let long = |v: i32| [b"long".to_vec(), v.to_be_bytes().to_vec()].concat();
    let stop = |at: i32, grey: f64| {
        let colour = object(
            b"RGBC",
            &[
                (b"Rd  ", double(grey)),
                (b"Grn ", double(grey)),
                (b"Bl  ", double(grey)),
            ],
        );
        object(
            b"Clrt",
            &[(b"Clr ", colour), (b"Lctn", long(at)), (b"Mdpn", long(50))],
        )
    };
    let stops = [
        b"VlLs".to_vec(),
        be32(2).to_vec(),
        stop(0, 0.0),
        stop(4096, 255.0),
    ]
    .concat();
    let grad = object(
        b"Grdn",
        &[(b"GrdF", enumeration(b"GrdF", b"CstS")), (b"Clrs", stops)],
    );
    let block = [
        be32(16).to_vec(),
        encode(
            b"null",
            &[
                (
                    b"Angl",
                    [b"UntF#Ang".to_vec(), 0f64.to_be_bytes().to_vec()].concat(),
                ),
                (b"Type", enumeration(b"GrdT", b"Lnr ")),
                (b"Grad", grad),
            ],
        ),
    ]
    .concat();
    let layer = pixelless(vec![(*b"GdFl", block)]);
    let file = psd(3, (9, 3), &[], &[], &[layer], None, 3);
    let image = render(&file, 64).image;
    // From the first pixel's edge to past the last: pixel x at x / 9.
    assert_eq!(image.get_pixel(0, 1).0, [0, 0, 0, 255]);
    assert!(image.get_pixel(8, 1).0[0].abs_diff(227) <= 1);
    assert!(image.get_pixel(4, 1).0[0].abs_diff(113) <= 1);
}

#[test]
fn a_multichannel_document_shows_its_first_channel() {
    let planes = vec![vec![255u8; 4], vec![0u8; 4], vec![0u8; 4]];
    let file = psd(7, (2, 2), &[], &[], &[], Some(planes), 3);
    let image = render(&file, 64).image;
    // No ink in the first channel: white paper, whatever the others hold.
    assert_eq!(image.get_pixel(0, 0).0, [255, 255, 255, 255]);
}

/// Duotone colour mode data of a first ink `record` (a colour record: its
/// space and four components).
fn duotone_data(record: [u16; 5]) -> Vec<u8> {
    let mut data = vec![0, 1, 0, 2];
    for v in record {
        data.extend(be16(v));
    }
    data.resize(524, 0);
    data
}

#[test]
fn a_duotone_shows_its_first_ink_without_its_curves() {
    let planes = vec![vec![0u8, 255, 0, 255]];
    // Black ink (CMYK, 65535 none): as grey.
    let black = psd(
        8,
        (2, 2),
        &duotone_data([2, 65535, 65535, 65535, 0]),
        &[],
        &[],
        Some(planes.clone()),
        1,
    );
    let image = render(&black, 64).image;
    assert_eq!(image.get_pixel(0, 0).0, [0, 0, 0, 255]);
    assert_eq!(image.get_pixel(1, 0).0, [255, 255, 255, 255]);
    // A red ink (RGB): full ink red, no ink paper white.
    let red = psd(
        8,
        (2, 2),
        &duotone_data([0, 65535, 0, 0, 0]),
        &[],
        &[],
        Some(planes),
        1,
    );
    let image = render(&red, 64).image;
    assert_eq!(image.get_pixel(0, 0).0, [255, 0, 0, 255]);
    assert_eq!(image.get_pixel(1, 0).0, [255, 255, 255, 255]);
}

#[test]
fn cmyk_with_a_profile_compensates_its_black_point() {
    let Ok(icc) = std::fs::read("/usr/share/color/icc/ghostscript/default_cmyk.icc") else {
        panic!(
            "the tests need ghostscript's CMYK profile (package icc-profiles-free or ghostscript)"
        );
    };
    // Every ink full (stored inverted: 0), and none.
    let planes = vec![vec![0u8, 255]; 4];
    let file = psd(4, (2, 1), &[], &[(1039, icc)], &[], Some(planes), 4);
    let image = render(&file, 64).image;
    // Relative colorimetric alone leaves the press's black grey (about 30
    // of 255); compensated, it is sRGB's black, and paper stays white.
    assert!(
        image.get_pixel(0, 0).0[..3].iter().all(|&c| c <= 2),
        "{:?}",
        image.get_pixel(0, 0)
    );
    assert!(
        image.get_pixel(1, 0).0[..3].iter().all(|&c| c >= 253),
        "{:?}",
        image.get_pixel(1, 0)
    );
}

#[test]
fn a_layer_section_without_its_global_mask_length_keeps_the_transparency() {
    // As GIMP writes: the layer section ends with the layer info, and the
    // negative layer count says the composite's fourth channel is alpha.
    let layer = TestLayer {
        rect: (0, 0, 1, 2),
        channels: (-1..3).map(|id| (id, vec![255, 0])).collect(),
        ..TestLayer::default()
    };
    let planes = vec![vec![10, 10], vec![20, 20], vec![30, 30], vec![255, 0]];
    let mut file = psd(3, (2, 1), &[], &[], &[layer], Some(planes), 4);
    let section = 26 + 4 + 4 + u32::from_be_bytes(file[30..34].try_into().unwrap()) as usize;
    let len = u32::from_be_bytes(file[section..section + 4].try_into().unwrap()) as usize;
    file[section + 8..section + 10].copy_from_slice(&(-1i16).to_be_bytes());
    file.drain(section + len..section + 4 + len);
    file[section..section + 4].copy_from_slice(&(len as u32 - 4).to_be_bytes());
    let image = render(&file, 64).image;
    assert_eq!(image.get_pixel(0, 0).0, [10, 20, 30, 255]);
    assert_eq!(image.get_pixel(1, 0).0[3], 0);
}

#[test]
fn a_pattern_fill_layer_tiles_its_pattern() {
    // One RGB pattern of 2×1 pixels, red then blue, raw, by the ID "p1".
    let mut pattern = Vec::new();
    pattern.extend(be32(1)); // version
    pattern.extend(be32(3)); // RGB
    pattern.extend([0, 1, 0, 2]); // its size
    pattern.extend(be32(0)); // an empty name
    pattern.extend([2, b'p', b'1']);
    let mut list = Vec::new();
    for v in [0, 0, 1, 2] {
        list.extend(be32(v));
    }
    list.extend(be32(3)); // colour slots
    let slots: [Option<[u8; 2]>; 5] = [Some([255, 0]), Some([0, 0]), Some([0, 255]), None, None];
    for slot in slots {
        match slot {
            None => list.extend(be32(0)),
            Some(row) => {
                list.extend(be32(1));
                list.extend(be32(23 + 2));
                list.extend(be32(8));
                for v in [0, 0, 1, 2] {
                    list.extend(be32(v));
                }
                list.extend(be16(8));
                list.push(0);
                list.extend(row);
            }
        }
    }
    pattern.extend(be32(3));
    pattern.extend(be32(list.len() as u32));
    pattern.extend(list);
    let mut patt = be32(pattern.len() as u32).to_vec();
    patt.extend(&pattern);
    patt.resize(patt.len().next_multiple_of(4), 0);

    let text = |t: &str| {
        let mut v = b"TEXT".to_vec();
        v.extend(be32(t.len() as u32 + 1));
        for c in t.encode_utf16().chain([0]) {
            v.extend(c.to_be_bytes());
        }
        v
    };
    let ptrn = object(b"Ptrn", &[(b"Idnt", text("p1"))]);
    let fill = [be32(16).to_vec(), encode(b"null", &[(b"Ptrn", ptrn)])].concat();
    let layer = pixelless(vec![(*b"PtFl", fill)]);
    let file = psd_with_blocks(
        (3, (5, 2), 3),
        &[],
        &[],
        &[layer],
        &[(*b"Patt", patt)],
        None,
    );
    let preview = render(&file, 64);
    assert!(!preview.approximate);
    let image = preview.image;
    for (x, want) in [
        (0, [255, 0, 0, 255]),
        (1, [0, 0, 255, 255]),
        (4, [255, 0, 0, 255]),
    ] {
        assert_eq!(image.get_pixel(x, 1).0, want, "at {x}");
    }
}

#[test]
fn damaged_fill_and_shape_layers_are_no_preview_or_an_image_never_a_panic() {
    let path = polygon_block(&[(2.0, 1.0), (6.5, 1.0), (6.5, 5.0), (2.0, 5.0)], 8, 6);
    let layer = pixelless(vec![
        (*b"SoCo", solid_colour(0.0, 255.0, 255.0)),
        (*b"vmsk", path),
    ]);
    let file = psd(3, (8, 6), &[], &[], &[layer], None, 3);
    let read = |bytes: &[u8]| {
        let _ = super::render(&mut std::io::Cursor::new(bytes), 64, &Limits::standard());
    };
    for at in 0..file.len() {
        read(&file[..at]);
        for value in [0x00, 0x7F, 0x80, 0xFF] {
            let mut damaged = file.clone();
            damaged[at] = value;
            read(&damaged);
        }
    }
}

#[test]
fn a_masks_density_lets_what_it_hides_show_through() {
    // A red layer of two pixels, its mask hiding the first, at half density.
    let mut mask = Vec::new();
    for v in [0u32, 0, 1, 2] {
        mask.extend(be32(v));
    }
    mask.extend([0, 0x10, 1, 128]); // default 0; parameters: the user mask's density
    mask.resize(20, 0);
    let layer = TestLayer {
        rect: (0, 0, 1, 2),
        channels: vec![
            (-1, vec![255, 255]),
            (0, vec![255, 255]),
            (1, vec![0, 0]),
            (2, vec![0, 0]),
            (-2, vec![0, 255]),
        ],
        mask_data: Some(mask),
        ..TestLayer::default()
    };
    let file = psd(3, (2, 1), &[], &[], &[layer], None, 3);
    let preview = render(&file, 64);
    assert!(!preview.approximate);
    assert_eq!(preview.image.get_pixel(0, 0).0[3], 127);
    assert_eq!(preview.image.get_pixel(1, 0).0, [255, 0, 0, 255]);
}

/// An `lfx2` block of one effect on: a colour overlay of blue at half opacity.
fn blue_overlay_at_half() -> Vec<u8> {
    let boolean = |v: bool| vec![b'b', b'o', b'o', b'l', v as u8];
    let colour = object(
        b"RGBC",
        &[
            (b"Rd  ", double(0.0)),
            (b"Grn ", double(0.0)),
            (b"Bl  ", double(255.0)),
        ],
    );
    let mode = [
        b"enum".to_vec(),
        be32(0).to_vec(),
        b"BlnM".to_vec(),
        be32(0).to_vec(),
        b"Nrml".to_vec(),
    ]
    .concat();
    let half = [b"UntF#Prc".to_vec(), 50f64.to_be_bytes().to_vec()].concat();
    let overlay = object(
        b"SoFi",
        &[
            (b"enab", boolean(true)),
            (b"Md  ", mode),
            (b"Opct", half),
            (b"Clr ", colour),
        ],
    );
    [
        be32(0).to_vec(),
        be32(16).to_vec(),
        encode(
            b"null",
            &[(b"masterFXSwitch", boolean(true)), (b"SoFi", overlay)],
        ),
    ]
    .concat()
}

#[test]
fn a_colour_overlay_effect_recolours_its_layer() {
    let effects = blue_overlay_at_half();
    let layer = TestLayer {
        rect: (0, 0, 1, 1),
        channels: vec![(-1, vec![255]), (0, vec![255]), (1, vec![0]), (2, vec![0])],
        blocks: vec![(*b"lfx2", effects), (*b"lrFX", vec![0; 4])],
        ..TestLayer::default()
    };
    let file = psd(3, (1, 1), &[], &[], &[layer], None, 3);
    let preview = render(&file, 64);
    assert!(!preview.approximate);
    // Red under blue at half opacity.
    let [r, g, b, a] = preview.image.get_pixel(0, 0).0;
    assert!(
        r.abs_diff(128) <= 1 && g == 0 && b.abs_diff(128) <= 1 && a == 255,
        "{r} {g} {b} {a}"
    );
}

#[test]
fn a_colour_overlay_recolours_a_fill_and_what_is_clipped_to_it() {
    // White fill under blue at half, a red fill clipped to it over the
    // right half: the base's overlay covers what is clipped to it too.
    let base = pixelless(vec![
        (*b"SoCo", solid_colour(255.0, 255.0, 255.0)),
        (*b"lfx2", blue_overlay_at_half()),
    ]);
    let mut clipped = pixelless(vec![
        (*b"SoCo", solid_colour(255.0, 0.0, 0.0)),
        (
            *b"vmsk",
            polygon_block(&[(2.0, 0.0), (4.0, 0.0), (4.0, 1.0), (2.0, 1.0)], 4, 1),
        ),
    ]);
    clipped.empty_mask = None;
    let mut file = psd(3, (4, 1), &[], &[], &[base, clipped], None, 3);
    // The second record's clipping byte (after its blend mode and opacity).
    let second = file
        .windows(8)
        .enumerate()
        .filter(|(_, w)| w == b"8BIMnorm")
        .nth(1)
        .map(|(i, _)| i)
        .unwrap();
    file[second + 9] = 1;
    let image = render(&file, 64).image;
    for x in 0..2 {
        let [r, g, b, _] = image.get_pixel(x, 0).0;
        assert!(
            r.abs_diff(128) <= 1 && g.abs_diff(128) <= 1 && b == 255,
            "{x}: {r} {g} {b}"
        );
    }
    let [r, g, b, _] = image.get_pixel(3, 0).0;
    assert!(
        r.abs_diff(128) <= 1 && g == 0 && b.abs_diff(128) <= 1,
        "{r} {g} {b}"
    );
}

#[test]
fn a_shapes_stroke_makes_the_preview_approximate_and_a_hidden_fill_shows_nothing() {
    let stroke = |stroke: bool, fill: bool| {
        let boolean = |v: bool| vec![b'b', b'o', b'o', b'l', v as u8];
        [
            be32(16).to_vec(),
            encode(
                b"strokeStyle",
                &[
                    (b"strokeEnabled", boolean(stroke)),
                    (b"fillEnabled", boolean(fill)),
                ],
            ),
        ]
        .concat()
    };
    let path = polygon_block(&[(0.0, 0.0), (4.0, 0.0), (4.0, 2.0), (0.0, 2.0)], 4, 2);
    let shape = |vstk: Vec<u8>| {
        let mut layer = pixelless(vec![
            (*b"SoCo", solid_colour(255.0, 0.0, 0.0)),
            (*b"vmsk", path.clone()),
            (*b"vstk", vstk),
        ]);
        layer.empty_mask = None;
        psd(3, (4, 2), &[], &[], &[layer], None, 3)
    };
    let stroked = render(&shape(stroke(true, true)), 64);
    assert!(stroked.approximate);
    assert_eq!(stroked.image.get_pixel(1, 1).0, [255, 0, 0, 255]);
    let plain = render(&shape(stroke(false, true)), 64);
    assert!(!plain.approximate);
    let outline = render(&shape(stroke(true, false)), 64);
    assert!(outline.approximate);
    assert_eq!(outline.image.get_pixel(1, 1).0[3], 0);
}

//! The preview bench's PSD and PSB writers: a composite of noise, a
//! document saved without its composite (layers in six blend modes), and
//! flat RGB or CMYK documents with or without a profile. Only what the
//! bench measures is written; they never read a file back.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

// Rows of noise, so RLE cannot shrink them.
use testkit::noise::Xorshift;

/// The file's header: version 2 (PSB) or 1, channels, size, 8-bit, `mode`.
fn header(file: &mut impl Write, version: u16, channels: u16, side: u32, mode: u16) {
    file.write_all(b"8BPS").unwrap();
    file.write_all(&version.to_be_bytes()).unwrap();
    file.write_all(&[0; 6]).unwrap();
    file.write_all(&channels.to_be_bytes()).unwrap();
    file.write_all(&side.to_be_bytes()).unwrap();
    file.write_all(&side.to_be_bytes()).unwrap();
    file.write_all(&8u16.to_be_bytes()).unwrap();
    file.write_all(&mode.to_be_bytes()).unwrap();
    file.write_all(&0u32.to_be_bytes()).unwrap(); // colour mode data
}

/// One image resource block.
fn resource(id: u16, data: &[u8]) -> Vec<u8> {
    let mut block = b"8BIM".to_vec();
    block.extend(id.to_be_bytes());
    block.extend([0, 0]); // an empty name, padded
    block.extend((data.len() as u32).to_be_bytes());
    block.extend(data);
    if data.len() % 2 == 1 {
        block.push(0);
    }
    block
}

/// `channels` channels of `height` rows of `width`, RLE, every row from
/// `row_of(channel, row)`: the row lengths (`count_bytes` each) then the
/// rows, written at the file's position. Returns the bytes written.
fn rle_channels(
    file: &mut (impl Write + Seek),
    channels: usize,
    width: u32,
    height: u32,
    count_bytes: usize,
    per_channel_table: bool,
    mut row_of: impl FnMut(usize, &mut [u8]),
) -> Vec<u64> {
    let mut written = Vec::with_capacity(channels);
    let (mut pixels, mut packed) = (
        vec![0u8; width as usize],
        Vec::with_capacity(width as usize * 2),
    );
    // A composite keeps one table for every channel; a layer one per channel.
    let mut table_at = file.stream_position().unwrap();
    if !per_channel_table {
        file.write_all(&vec![0u8; channels * height as usize * count_bytes])
            .unwrap();
    }
    let mut all_counts = Vec::new();
    for channel in 0..channels {
        let start = file.stream_position().unwrap();
        if per_channel_table {
            table_at = start;
            file.write_all(&vec![0u8; height as usize * count_bytes])
                .unwrap();
        }
        let mut counts = Vec::with_capacity(height as usize);
        for _ in 0..height {
            row_of(channel, &mut pixels);
            packed.clear();
            pack_bits(&pixels, &mut packed);
            counts.push(packed.len() as u32);
            file.write_all(&packed).unwrap();
        }
        let end = file.stream_position().unwrap();
        if per_channel_table {
            write_at(file, table_at, &table(&counts, count_bytes));
        } else {
            all_counts.extend(counts);
        }
        written.push(end - start);
    }
    if !per_channel_table {
        write_at(file, table_at, &table(&all_counts, count_bytes));
    }
    written
}

/// Row lengths of `count_bytes` each.
fn table(counts: &[u32], count_bytes: usize) -> Vec<u8> {
    counts
        .iter()
        .flat_map(|count| count.to_be_bytes()[4 - count_bytes..].to_vec())
        .collect()
}

/// Writes `bytes` over what was written at `at`, and goes back to the end.
fn write_at(file: &mut (impl Write + Seek), at: u64, bytes: &[u8]) {
    let end = file.stream_position().unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(bytes).unwrap();
    file.seek(SeekFrom::Start(end)).unwrap();
}

/// The image resources section: its length, then `resources`.
fn write_resources(file: &mut impl Write, resources: &[u8]) {
    file.write_all(&(resources.len() as u32).to_be_bytes())
        .unwrap();
    file.write_all(resources).unwrap();
}

/// Writes a PSB of `width`×`height` RGB with transparency, 8-bit, RLE, every
/// channel noise, no layers; a "merged transparency" block says the fourth
/// channel is the composite's transparency.
pub fn write_psb(path: &Path, width: u32, height: u32) {
    assert_eq!(width, height);
    let mut file = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(path).unwrap());
    header(&mut file, 2, 4, width, 3);
    file.write_all(&0u32.to_be_bytes()).unwrap(); // image resources
                                                  // Layer and mask information (PSB: 8-byte lengths): no layers, no
                                                  // global mask, one tagged block `Mtrn` of no bytes.
    file.write_all(&28u64.to_be_bytes()).unwrap();
    file.write_all(&0u64.to_be_bytes()).unwrap();
    file.write_all(&0u32.to_be_bytes()).unwrap();
    file.write_all(b"8BIMMtrn").unwrap();
    file.write_all(&0u64.to_be_bytes()).unwrap();
    file.write_all(&1u16.to_be_bytes()).unwrap(); // RLE
    let mut noise = Xorshift::new(0x9E37_79B9_7F4A_7C15);
    rle_channels(&mut file, 4, width, height, 4, false, |channel, row| {
        noise.fill(row);
        if channel == 3 {
            // Transparency mostly opaque, noise in its low bits.
            row.iter_mut().for_each(|p| *p |= 0xf0);
        }
    });
    file.flush().unwrap();
}

/// Version info (resource 1057) saying the composite is not the real one:
/// "maximize compatibility" off.
fn without_composite() -> Vec<u8> {
    let unicode = |text: &str| {
        let mut bytes = (text.len() as u32).to_be_bytes().to_vec();
        text.encode_utf16()
            .for_each(|u| bytes.extend(u.to_be_bytes()));
        bytes
    };
    let mut info = 1u32.to_be_bytes().to_vec();
    info.push(0);
    info.extend(unicode("Adobe Photoshop"));
    info.extend(unicode("Adobe Photoshop 2026"));
    info.extend(1u32.to_be_bytes());
    resource(1057, &info)
}

/// Writes a PSB of `side`×`side` RGB saved without its composite (a white
/// one stands in, as Photoshop writes), with `count` layers of
/// `layer_side`² RGBA noise, spread over the canvas, in six blend modes.
pub fn write_layered_psb(path: &Path, side: u32, count: u16, layer_side: u32) {
    let mut file = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(path).unwrap());
    header(&mut file, 2, 3, side, 3);
    write_resources(&mut file, &without_composite());
    let section_at = file.stream_position().unwrap();
    file.write_all(&[0; 16]).unwrap(); // the section's and the layer info's lengths
    file.write_all(&(count as i16).to_be_bytes()).unwrap();
    let modes: [&[u8; 4]; 6] = [b"norm", b"mul ", b"scrn", b"over", b"dark", b"lite"];
    let mut length_at = Vec::new();
    let place = |i: u32, step: u32| (i * step) % (side - layer_side);
    for i in 0..count as u32 {
        let (top, left) = (place(i, 379), place(i, 613));
        for v in [top, left, top + layer_side, left + layer_side] {
            file.write_all(&v.to_be_bytes()).unwrap();
        }
        file.write_all(&4u16.to_be_bytes()).unwrap();
        let mut at = Vec::new();
        for id in [-1i16, 0, 1, 2] {
            file.write_all(&id.to_be_bytes()).unwrap();
            at.push(file.stream_position().unwrap());
            file.write_all(&0u64.to_be_bytes()).unwrap();
        }
        length_at.push(at);
        file.write_all(b"8BIM").unwrap();
        file.write_all(modes[i as usize % modes.len()]).unwrap();
        let opacity = if i == 0 {
            255
        } else {
            255 - (i * 7 % 128) as u8
        };
        file.write_all(&[opacity, 0, 0, 0]).unwrap();
        // Extra data: no mask, no blending ranges, an empty name padded to 4.
        file.write_all(&12u32.to_be_bytes()).unwrap();
        file.write_all(&[0; 12]).unwrap();
    }
    let mut noise = Xorshift::new(0x9E37_79B9_7F4A_7C15);
    for at in &length_at {
        for &offset in at {
            let start = file.stream_position().unwrap();
            file.write_all(&1u16.to_be_bytes()).unwrap();
            rle_channels(&mut file, 1, layer_side, layer_side, 4, true, |_, row| {
                noise.fill(row);
            });
            let end = file.stream_position().unwrap();
            write_at(&mut file, offset, &(end - start).to_be_bytes());
        }
    }
    let info_end = file.stream_position().unwrap();
    if (info_end - section_at) % 2 == 1 {
        file.write_all(&[0]).unwrap();
    }
    let info_len = file.stream_position().unwrap() - section_at - 16;
    file.write_all(&0u32.to_be_bytes()).unwrap(); // global layer mask info
    let section_end = file.stream_position().unwrap();
    let lengths = [(section_end - section_at - 8), info_len].map(u64::to_be_bytes);
    write_at(&mut file, section_at, &lengths.concat());
    file.write_all(&1u16.to_be_bytes()).unwrap(); // RLE
    rle_channels(&mut file, 3, side, side, 4, false, |_, row| row.fill(255));
    file.flush().unwrap();
}

/// Writes a PSD of `side`×`side` RGB (`mode` 3) or CMYK (4), 8-bit, RLE,
/// noise, with `icc` embedded if given.
pub fn write_flat(path: &Path, side: u32, mode: u16, icc: Option<&[u8]>) {
    let channels = if mode == 4 { 4 } else { 3 };
    let mut file = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(path).unwrap());
    header(&mut file, 1, channels, side, mode);
    let resources = icc.map(|icc| resource(1039, icc)).unwrap_or_default();
    write_resources(&mut file, &resources);
    file.write_all(&0u32.to_be_bytes()).unwrap(); // layer and mask information
    file.write_all(&1u16.to_be_bytes()).unwrap(); // RLE
    let mut noise = Xorshift::new(0x9E37_79B9_7F4A_7C15);
    rle_channels(
        &mut file,
        channels as usize,
        side,
        side,
        2,
        false,
        |_, row| noise.fill(row),
    );
    file.flush().unwrap();
}

/// PackBits: runs of 3 to 128 equal bytes, literals of up to 128 otherwise.
fn pack_bits(row: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    let mut literal_start = 0;
    let flush_literal = |out: &mut Vec<u8>, from: usize, to: usize| {
        for chunk in row[from..to].chunks(128) {
            out.push((chunk.len() - 1) as u8);
            out.extend_from_slice(chunk);
        }
    };
    while i < row.len() {
        let mut run = 1;
        while i + run < row.len() && run < 128 && row[i + run] == row[i] {
            run += 1;
        }
        if run >= 3 {
            flush_literal(out, literal_start, i);
            out.push((257 - run) as u8);
            out.push(row[i]);
            i += run;
            literal_start = i;
        } else {
            i += run;
        }
    }
    flush_literal(out, literal_start, row.len());
}

//! The PSD layer reader on untrusted layer records and pixels: the input's
//! first byte picks the document (colour mode, depth, PSD or PSB), the rest
//! is its layer info, in a document saved without its composite, so every
//! input reaches the layer reader. It may refuse, never panic, and what it
//! renders fits the size asked for. Seeds (`corpus/preview_psd_layers`) are
//! psd-tools' layered documents' layer info.

#![no_main]

use leasedesk::preview::{psd, Limits};
use libfuzzer_sys::fuzz_target;

/// Version info (resource 1057) saying the composite is not the real one.
fn no_composite() -> Vec<u8> {
    let mut data = 1u32.to_be_bytes().to_vec();
    data.push(0);
    data.extend(0u32.to_be_bytes());
    data.extend(0u32.to_be_bytes());
    data.extend(1u32.to_be_bytes());
    let mut block = b"8BIM".to_vec();
    block.extend(1057u16.to_be_bytes());
    block.extend([0, 0]);
    block.extend((data.len() as u32).to_be_bytes());
    block.extend(data);
    block
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, layer_info)) = data.split_first() else {
        return;
    };
    let (mode, channels): (u16, u16) = match choice % 3 {
        0 => (3, 3),
        1 => (1, 1),
        _ => (4, 4),
    };
    let depth: u16 = [8, 16, 32][(choice / 3 % 3) as usize];
    let psb = choice / 9 % 2 == 1;
    let (width, height) = (24u32, 16u32);
    let mut bytes = b"8BPS".to_vec();
    bytes.extend((if psb { 2u16 } else { 1 }).to_be_bytes());
    bytes.extend([0; 6]);
    bytes.extend(channels.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend(width.to_be_bytes());
    bytes.extend(depth.to_be_bytes());
    bytes.extend(mode.to_be_bytes());
    bytes.extend(0u32.to_be_bytes());
    let resources = no_composite();
    bytes.extend((resources.len() as u32).to_be_bytes());
    bytes.extend(resources);
    // Layer and mask information: the layer info, an empty global mask.
    let info_len = layer_info.len() as u64;
    if psb {
        bytes.extend((info_len + 8 + 4).to_be_bytes());
        bytes.extend(info_len.to_be_bytes());
    } else {
        bytes.extend((info_len as u32 + 4 + 4).to_be_bytes());
        bytes.extend((info_len as u32).to_be_bytes());
    }
    bytes.extend(layer_info);
    bytes.extend(0u32.to_be_bytes());
    // A raw white composite.
    bytes.extend(0u16.to_be_bytes());
    let plane = (width as usize * depth as usize / 8) * height as usize;
    bytes.extend(std::iter::repeat_n(0xFF, plane * channels as usize));
    let size = 64;
    if let Ok(preview) = psd::render(&mut std::io::Cursor::new(&bytes), size, &Limits::standard()) {
        assert!(preview.image.width() >= 1 && preview.image.width() <= size);
        assert!(preview.image.height() >= 1 && preview.image.height() <= size);
    }
});

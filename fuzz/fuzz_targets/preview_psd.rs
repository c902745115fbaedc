//! The PSD/PSB reader on untrusted bytes (after `8BPS`, so every input
//! reaches the header): it may refuse, never panic, and what it renders fits
//! the size asked for.

#![no_main]

use leasedesk::preview::{psd, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = Vec::with_capacity(data.len() + 4);
    bytes.extend_from_slice(b"8BPS");
    bytes.extend_from_slice(data);
    let size = 64;
    if let Ok(image) = psd::render(&mut std::io::Cursor::new(&bytes), size, &Limits::standard()).map(|p| p.image) {
        assert!(image.width() >= 1 && image.width() <= size);
        assert!(image.height() >= 1 && image.height() <= size);
    }
});

//! Filling a buffer from a reader in as few reads as it allows: what
//! hashing, chunking and sniffing a file's first bytes each need. It reads
//! only from the reader it is handed.

use std::io::{ErrorKind, Read, Result};

/// Reads until `buf` is full or `source` ends, an interrupted read tried
/// again; how many bytes came (fewer than `buf` holds only at the end).
pub fn read_full(source: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

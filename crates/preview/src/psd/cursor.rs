//! Reading a PSD through one file handle at several places at once: a
//! [`Cursor`] is a position with its own buffer (so planar channels advance
//! side by side), bounded by its section's end; a read past it is [`Short`].
//! It knows nothing of what the bytes mean, and never reads past `end`.

use std::io::{Read, Seek, SeekFrom};

use super::damaged;
use crate::{read_full, unreadable, NoPreview};

/// A read that ran out of file.
pub(super) struct Short {
    wanted: u64,
    at: u64,
    io: Option<std::io::Error>,
}

impl Short {
    pub(super) fn in_section(self, kind: &str, section: &str) -> NoPreview {
        match self.io {
            Some(e) => unreadable(e),
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
pub(super) struct Cursor {
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
    pub(super) fn new(pos: u64, end: u64, capacity: usize) -> Self {
        Self {
            base: pos,
            at: 0,
            filled: 0,
            end,
            buf: vec![0; capacity],
        }
    }

    /// The most one [`Cursor::take`] can give.
    pub(super) fn capacity(&self) -> usize {
        self.buf.len()
    }

    pub(super) fn pos(&self) -> u64 {
        self.base + self.at as u64
    }

    pub(super) fn seek_to(&mut self, pos: u64) {
        if pos >= self.base && pos <= self.base + self.filled as u64 {
            self.at = (pos - self.base) as usize;
        } else {
            self.base = pos;
            self.at = 0;
            self.filled = 0;
        }
    }

    /// The next `n` bytes (`n` no larger than the buffer).
    pub(super) fn take(&mut self, file: &mut (impl Read + Seek), n: usize) -> Result<&[u8], Short> {
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
    pub(super) fn fill_some(&mut self, file: &mut (impl Read + Seek)) -> Result<&[u8], Short> {
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

    pub(super) fn advance(&mut self, n: usize) {
        self.at = (self.at + n).min(self.filled);
    }

    /// A section's length (4 bytes, or 8 for PSB's long sections), checked
    /// against the file.
    pub(super) fn section_len(
        &mut self,
        file: &mut (impl Read + Seek),
        long: bool,
    ) -> Result<u64, Short> {
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

pub(super) fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

pub(super) fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

pub(super) fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[0..8].try_into().expect("8 bytes"))
}

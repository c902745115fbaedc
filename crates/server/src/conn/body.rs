//! A request body as the guard frames it: Content-Length bytes or chunks
//! (sizes, line ends, trailers checked as hyper reads them), so the next head
//! is found where hyper will look; a body slower than a floor fails. It never
//! parses a head.

use std::io;

use bytes::BytesMut;
use tokio::time::Instant;

use super::head::{Chunk, Framing};
use super::Guarded;

/// Slowest average a request body may arrive at, once the stall timeout has
/// passed since its head: 1 KiB/s.
const MIN_BODY_RATE: f64 = 1024.0;

/// Longest chunk-size line (size, extensions) or trailer section we accept.
const MAX_CHUNK_LINE: usize = 4 << 10;

impl<S> Guarded<S> {
    /// Counts `n` bytes of a body; past the stall timeout, a body that comes
    /// slower on average than `MIN_BODY_RATE` fails (a trickle of a byte a
    /// minute would otherwise hold its socket and temp file for ever).
    pub(super) fn body_arrived(&mut self, n: usize) {
        let now = Instant::now();
        self.last_body_byte = now;
        self.body_bytes += n as u64;
        let elapsed = now.duration_since(self.body_started);
        if elapsed > self.limits.stall_timeout
            && (self.body_bytes as f64) < MIN_BODY_RATE * elapsed.as_secs_f64()
        {
            self.failure = Some(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the request body arrives slower than {} KiB/s",
                    MIN_BODY_RATE / 1024.0
                ),
            ));
            self.framing = Framing::Ended;
            self.raw.clear();
        }
    }

    /// Passes up to `left` body bytes from `raw`; false when `raw` is empty.
    pub(super) fn pass_body(&mut self, left: u64) -> bool {
        if self.raw.is_empty() {
            return false;
        }
        let n = (left.min(self.raw.len() as u64)) as usize;
        let body = self.raw.split_to(n);
        self.checked.extend_from_slice(&body);
        self.framing = match self.framing {
            Framing::Body { .. } => Framing::Body {
                left: left - n as u64,
            },
            Framing::Chunked(Chunk::Data { .. }) if left == n as u64 => {
                Framing::Chunked(Chunk::DataEnd)
            }
            _ => Framing::Chunked(Chunk::Data {
                left: left - n as u64,
            }),
        };
        true
    }

    /// One step of a chunked body: Ok(false) when more bytes are needed.
    pub(super) fn check_chunk(&mut self, chunk: Chunk) -> Result<bool, String> {
        match chunk {
            Chunk::Data { left } => Ok(self.pass_body(left)),
            Chunk::Size => {
                let Some(line) = self.take_line()? else {
                    return Ok(false);
                };
                let size = chunk_size(&line)?;
                self.checked.extend_from_slice(&line);
                self.framing = Framing::Chunked(if size == 0 {
                    Chunk::Trailers
                } else {
                    Chunk::Data { left: size }
                });
                Ok(true)
            }
            Chunk::DataEnd => {
                let Some(line) = self.take_line()? else {
                    return Ok(false);
                };
                if &line[..] != b"\r\n" {
                    return Err("a chunk of the chunked body is longer than its size".into());
                }
                self.checked.extend_from_slice(&line);
                self.framing = Framing::Chunked(Chunk::Size);
                Ok(true)
            }
            Chunk::Trailers => {
                let Some(line) = self.take_line()? else {
                    return Ok(false);
                };
                self.trailer_bytes += line.len();
                if self.trailer_bytes > MAX_CHUNK_LINE {
                    return Err("the chunked body's trailers are too long".into());
                }
                self.checked.extend_from_slice(&line);
                if &line[..] == b"\r\n" {
                    self.framing = Framing::Head;
                    self.trailer_bytes = 0;
                }
                Ok(true)
            }
        }
    }

    /// The next line of `raw` with its CRLF, if it is all there. hyper ends
    /// each line of a chunked body only at CRLF, so anything else (a bare LF,
    /// a lone CR) is refused: read differently here and there, it would let
    /// bytes count as a body on one side and a request on the other.
    fn take_line(&mut self) -> Result<Option<BytesMut>, String> {
        let refuse = || Err("a line of the chunked body does not end in CRLF".to_owned());
        match self.raw.iter().position(|&b| b == b'\n') {
            Some(end) if end >= MAX_CHUNK_LINE => {
                Err("a line of the chunked body is too long".into())
            }
            Some(0) => refuse(),
            Some(end) => {
                let text = &self.raw[..end - 1];
                if self.raw[end - 1] != b'\r' || text.contains(&b'\r') {
                    return refuse();
                }
                Ok(Some(self.raw.split_to(end + 1)))
            }
            None if self.raw.len() >= MAX_CHUNK_LINE => {
                Err("a line of the chunked body is too long".into())
            }
            None => Ok(None),
        }
    }
}

/// A chunk-size line's size, if it is one (for fuzzing).
pub fn chunk_size_of(line: &[u8]) -> Option<u64> {
    chunk_size(line).ok()
}

/// The size on a chunk-size line: hex digits, then optional `;extensions`.
fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a chunk size is not text".to_owned())?;
    let text = text.trim_end_matches(['\r', '\n']);
    let digits = text
        .split(';')
        .next()
        .unwrap_or("")
        .trim_end_matches([' ', '\t']);
    let valid =
        !digits.is_empty() && digits.len() <= 16 && digits.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid {
        return Err(format!("{digits:?} is not a chunk size (hex digits)"));
    }
    u64::from_str_radix(digits, 16).map_err(|_| format!("{digits:?} is not a chunk size"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes_are_hex_digits() {
        assert_eq!(chunk_size(b"1a\r\n"), Ok(26));
        assert_eq!(chunk_size(b"0;ext=1\r\n"), Ok(0));
        for bad in [
            &b"-5\r\n"[..],
            b"zz\r\n",
            b"\r\n",
            b"0x10\r\n",
            b"11111111111111111\r\n",
        ] {
            assert!(chunk_size(bad).is_err(), "{bad:?}");
        }
    }
}

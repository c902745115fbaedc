//! How bytes travel between a client and a server: a file cut into
//! content-defined chunks (FastCDC 2020 with fixed sizes, so every client and
//! server cuts the same bytes the same way), each named by its BLAKE3, with
//! the whole file's digest from the same single read. An edit in one place
//! moves the cuts only near it, so the other chunks keep their ids and need
//! not travel again. Chunks are how bytes move, never how they are stored:
//! blobs stay whole files. Never holds more than a few blocks of a file.

use std::io::Read;
use std::sync::mpsc;
use std::sync::Arc;

use fastcdc::v2020::{cut, select_masks, Normalization};
use leasedesk_model::read::read_full;

use crate::error::{Error, Result};
use crate::model::Digest;

/// The smallest chunk but a file's last.
pub const MIN_CHUNK: u32 = 16 << 10;
/// The size chunks average.
pub const AVG_CHUNK: u32 = 64 << 10;
/// The largest chunk.
pub const MAX_CHUNK: u32 = 256 << 10;

/// The bytes a chunk takes in a kept list: its id and its size.
pub const LISTED_BYTES: usize = 32 + 4;

/// The longest chunk list an upload takes (a 64 GiB file of average
/// chunks); a file with a longer one travels whole, in one request.
pub const MOST_LISTED: u64 = 1 << 20;

/// Read this much at a time: large enough for few system calls and BLAKE3's
/// SIMD, and many chunks long, so few chunks straddle two blocks.
const BLOCK: usize = 4 << 20;

/// One chunk of a file: its BLAKE3 and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Chunk {
    pub id: blake3::Hash,
    pub size: u32,
}

/// A file as chunks, with its digest and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunked {
    pub digest: Digest,
    pub size: u64,
    pub chunks: Vec<Chunk>,
}

impl Chunked {
    /// Where each chunk starts in the file.
    pub fn offsets(&self) -> impl Iterator<Item = (u64, &Chunk)> {
        self.chunks.iter().scan(0u64, |at, chunk| {
            let start = *at;
            *at += u64::from(chunk.size);
            Some((start, chunk))
        })
    }

    /// The bytes of the chunks a copy lacks, by `has`: what fetching only
    /// those chunks moves.
    pub fn bytes_lacking(&self, has: impl Fn(&blake3::Hash) -> bool) -> u64 {
        self.chunks
            .iter()
            .filter(|c| !has(&c.id))
            .map(|c| u64::from(c.size))
            .sum()
    }

    /// The list as kept beside a blob: each chunk's id and size
    /// (little-endian), one after the other.
    pub fn encode_list(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.chunks.len() * LISTED_BYTES);
        for chunk in &self.chunks {
            out.extend_from_slice(chunk.id.as_bytes());
            out.extend_from_slice(&chunk.size.to_le_bytes());
        }
        out
    }

    /// A list in its kept form back, checked (`Invalid` if it breaks the
    /// rules); `size` is the sum of its chunks when not given.
    pub fn decode_list(digest: Digest, size: Option<u64>, bytes: &[u8]) -> Result<Self> {
        if !bytes.len().is_multiple_of(LISTED_BYTES) {
            return Err(Error::Invalid(format!(
                "a chunk list is {} bytes: each chunk takes {LISTED_BYTES} (its BLAKE3, then \
                 its size as 4 bytes, little-endian)",
                bytes.len()
            )));
        }
        let chunks: Vec<Chunk> = bytes
            .chunks_exact(LISTED_BYTES)
            .map(|entry| {
                let id: [u8; 32] = entry[..32].try_into().expect("32 bytes");
                let size = u32::from_le_bytes(entry[32..].try_into().expect("4 bytes"));
                Chunk {
                    id: blake3::Hash::from_bytes(id),
                    size,
                }
            })
            .collect();
        let size = size.unwrap_or_else(|| chunks.iter().map(|c| u64::from(c.size)).sum());
        let list = Self {
            digest,
            size,
            chunks,
        };
        list.check()?;
        Ok(list)
    }

    /// The rules of a chunk list, whoever made it: every chunk from
    /// `MIN_CHUNK` to `MAX_CHUNK` bytes (the last may be shorter, but not
    /// empty), adding up to the file's size. So a list is never longer than
    /// `size / MIN_CHUNK + 1` entries, whatever a client claims.
    pub fn check(&self) -> Result<()> {
        let most = most_chunks(self.size);
        if self.chunks.len() as u64 > most {
            return Err(Error::Invalid(format!(
                "{} chunks for {} bytes: at most {most} (chunks are {MIN_CHUNK} to {MAX_CHUNK} bytes)",
                self.chunks.len(),
                self.size
            )));
        }
        let last = self.chunks.len().saturating_sub(1);
        let mut total = 0u64;
        for (i, chunk) in self.chunks.iter().enumerate() {
            let low = if i == last { 1 } else { MIN_CHUNK };
            if chunk.size < low || chunk.size > MAX_CHUNK {
                return Err(Error::Invalid(format!(
                    "chunk {i} is {} bytes: chunks are {MIN_CHUNK} to {MAX_CHUNK} bytes, the last 1 to {MAX_CHUNK}",
                    chunk.size
                )));
            }
            total += u64::from(chunk.size);
        }
        if total != self.size {
            return Err(Error::Invalid(format!(
                "the chunks add up to {total} bytes, not the {} declared",
                self.size
            )));
        }
        Ok(())
    }
}

/// The most chunks a file of `size` bytes can be cut into.
pub fn most_chunks(size: u64) -> u64 {
    size.div_ceil(u64::from(MIN_CHUNK))
}

/// Files smaller than this are cut on one thread ([`chunk_reader`]).
const PARALLEL_FROM: u64 = 64 << 20;

/// Cuts a local file into chunks as [`chunk_reader`] would, with every
/// core: the file is split into whole subtrees of BLAKE3's tree, one a
/// core, each read once to hash it and cut it from its start; the cuts are
/// then stitched: from the last true cut before each piece, the file is cut
/// on until a cut meets one of the piece's own (in a chunk or two, as a
/// cut depends only on the bytes since the one before), and the piece's
/// cuts are taken from there. Blocking.
pub fn chunk_file(file: &std::fs::File) -> Result<Chunked> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let size = file.metadata()?.len();
    if size < PARALLEL_FROM || cores < 2 {
        // From the start, wherever the handle is: on Windows a positioned
        // read (as the pieces are read) moves it.
        let mut from_start = file;
        std::io::Seek::seek(&mut from_start, std::io::SeekFrom::Start(0))?;
        return chunk_reader(from_start);
    }
    chunk_in_pieces(file, size, size.div_ceil(cores))
}

/// [`chunk_file`] in pieces of at most `most` bytes (rounded to subtrees).
fn chunk_in_pieces(file: &std::fs::File, size: u64, most: u64) -> Result<Chunked> {
    let cut = read_pieces(file, size, most, Pass::HashAndCut)?;
    Ok(Chunked {
        digest: root_of(&cut, size).into(),
        size,
        chunks: stitched(file, size, &cut)?,
    })
}

/// A file's digest alone, read once, in a piece for each core: what an
/// upload sent without a chunk list declares. Blocking.
pub fn digest_file(file: &std::fs::File) -> Result<Digest> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let size = file.metadata()?.len();
    let most = if size < PARALLEL_FROM {
        size
    } else {
        size.div_ceil(cores)
    };
    let pieces = read_pieces(file, size, most, Pass::Hash)?;
    Ok(root_of(&pieces, size).into())
}

/// The chunks of a file that hashed to `digest` just before, cut without
/// taking its hash again (a file large enough to be cut on every core;
/// a smaller one is hashed again, its digest the one found). Blocking.
pub fn chunk_file_hashed(file: &std::fs::File, digest: Digest) -> Result<Chunked> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let size = file.metadata()?.len();
    if size < PARALLEL_FROM || cores < 2 {
        return chunk_file(file);
    }
    let cut = read_pieces(file, size, size.div_ceil(cores), Pass::Cut)?;
    Ok(Chunked {
        digest,
        size,
        chunks: stitched(file, size, &cut)?,
    })
}

/// What a pass over a file's pieces does with each.
#[derive(Clone, Copy, PartialEq)]
enum Pass {
    Hash,
    Cut,
    HashAndCut,
}

/// Reads a file in pieces of at most `most` bytes (rounded to subtrees), a
/// thread each, hashing and cutting each as `pass` says.
fn read_pieces(file: &std::fs::File, size: u64, most: u64, pass: Pass) -> Result<Vec<Piece>> {
    let mut pieces = Vec::new();
    subtrees(0, size, most.max(blake3::CHUNK_LEN as u64), &mut pieces);
    let read: Vec<Result<Piece>> = std::thread::scope(|scope| {
        let each: Vec<_> = pieces
            .iter()
            .map(|&(start, len)| {
                scope.spawn(move || read_piece(file, start, len, start + len == size, pass))
            })
            .collect();
        each.into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| Err(Error::Internal("a chunking thread failed".into())))
            })
            .collect()
    });
    read.into_iter().collect()
}

/// The whole file's hash, from its pieces.
fn root_of(pieces: &[Piece], size: u64) -> blake3::Hash {
    match pieces {
        [only] => only
            .root
            .expect("a piece that is the whole file has its hash"),
        _ => merged_root(pieces, 0, size),
    }
}

/// One piece of a file: where it is, its chaining value in BLAKE3's tree
/// (its hash if it is the whole file; neither if it was only cut), and the
/// chunks cut from its start, up to its last cut (the bytes after it wait
/// for the stitch).
struct Piece {
    start: u64,
    len: u64,
    cv: blake3::hazmat::ChainingValue,
    root: Option<blake3::Hash>,
    chunks: Vec<Chunk>,
}

/// Splits `start..start + len` into whole subtrees of at most `most` bytes,
/// as BLAKE3's tree (left-balanced) splits it.
fn subtrees(start: u64, len: u64, most: u64, out: &mut Vec<(u64, u64)>) {
    if len <= most || len <= blake3::CHUNK_LEN as u64 {
        out.push((start, len));
        return;
    }
    let left = blake3::hazmat::left_subtree_len(len);
    subtrees(start, left, most, out);
    subtrees(start + left, len - left, most, out);
}

/// The hash of `start..start + len` from the pieces' chaining values.
fn merged_root(pieces: &[Piece], start: u64, len: u64) -> blake3::Hash {
    use blake3::hazmat::{merge_subtrees_root, Mode};
    let left = blake3::hazmat::left_subtree_len(len);
    merge_subtrees_root(
        &merged_cv(pieces, start, left),
        &merged_cv(pieces, start + left, len - left),
        Mode::Hash,
    )
}

fn merged_cv(pieces: &[Piece], start: u64, len: u64) -> blake3::hazmat::ChainingValue {
    use blake3::hazmat::{merge_subtrees_non_root, Mode};
    if let Some(piece) = pieces.iter().find(|p| p.start == start && p.len == len) {
        return piece.cv;
    }
    let left = blake3::hazmat::left_subtree_len(len);
    merge_subtrees_non_root(
        &merged_cv(pieces, start, left),
        &merged_cv(pieces, start + left, len - left),
        Mode::Hash,
    )
}

/// Reads one piece, hashing and cutting it as `pass` says (see [`Piece`]).
fn read_piece(file: &std::fs::File, start: u64, len: u64, last: bool, pass: Pass) -> Result<Piece> {
    use blake3::hazmat::HasherExt;
    let mut hasher = blake3::Hasher::new();
    hasher.set_input_offset(start);
    let mut cutter = Cutter::new();
    let mut block = vec![0u8; BLOCK];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(BLOCK as u64) as usize;
        read_exact_at(file, &mut block[..n], start + at)?;
        if pass != Pass::Cut {
            hasher.update(&block[..n]);
        }
        at += n as u64;
        if pass != Pass::Hash {
            cutter.feed(&block[..n], last && at == len);
        }
    }
    let whole = start == 0 && last;
    let hashed = pass != Pass::Cut;
    Ok(Piece {
        start,
        len,
        cv: if whole || !hashed {
            [0; 32]
        } else {
            hasher.finalize_non_root()
        },
        root: (whole && hashed).then(|| hasher.finalize()),
        chunks: cutter.chunks,
    })
}

/// The true cuts, from the pieces' own: see [`chunk_file`].
fn stitched(file: &std::fs::File, size: u64, pieces: &[Piece]) -> Result<Vec<Chunk>> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut at = 0u64; // where the next true chunk starts
    let cutter = Cutter::new();
    let mut buf = vec![0u8; MAX_CHUNK as usize];
    for piece in pieces {
        let end = piece.start + piece.len;
        let starts: Vec<u64> = piece
            .chunks
            .iter()
            .scan(piece.start, |next, chunk| {
                let start = *next;
                *next += u64::from(chunk.size);
                Some(start)
            })
            .collect();
        let cuts_end = starts.last().zip(piece.chunks.last());
        let cuts_end = cuts_end.map_or(piece.start, |(&s, c)| s + u64::from(c.size));
        while at < end {
            if let Ok(k) = starts.binary_search(&at) {
                // In step: from here to its last cut, the piece's cuts are
                // the true ones; the bytes after are cut on below.
                chunks.extend_from_slice(&piece.chunks[k..]);
                at = cuts_end;
                if at >= end {
                    break;
                }
            }
            let n = (size - at).min(u64::from(MAX_CHUNK)) as usize;
            read_exact_at(file, &mut buf[..n], at)?;
            let cut = cutter.cut(&buf[..n]);
            chunks.push(Chunk {
                id: blake3::hash(&buf[..cut]),
                size: cut as u32,
            });
            at += cut as u64;
        }
    }
    Ok(chunks)
}

/// Reads `buf.len()` bytes at `offset`, without moving a shared position,
/// so that several threads read one file at once.
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        #[cfg(unix)]
        let n =
            std::os::unix::fs::FileExt::read_at(file, &mut buf[filled..], offset + filled as u64);
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(
            file,
            &mut buf[filled..],
            offset + filled as u64,
        );
        match n {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file got shorter while it was read",
                ))
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Cuts what `source` reads into chunks, hashing each and the whole in the
/// same pass: this thread reads, cuts and names chunks while a second one
/// hashes the whole, each block read once. Blocking.
pub fn chunk_reader(mut source: impl Read) -> Result<Chunked> {
    let (to_whole, blocks) = mpsc::sync_channel::<Arc<Vec<u8>>>(2);
    let (give_back, returned) = mpsc::channel::<Arc<Vec<u8>>>();
    let whole = std::thread::spawn(move || {
        let mut hasher = blake3::Hasher::new();
        for block in blocks {
            hasher.update(&block);
            let _ = give_back.send(block);
        }
        hasher.finalize()
    });
    let mut cutter = Cutter::new();
    let mut size = 0u64;
    let read: Result<()> = (|| loop {
        let mut block = returned
            .try_recv()
            .ok()
            .and_then(|b| Arc::try_unwrap(b).ok())
            .unwrap_or_default();
        block.resize(BLOCK, 0);
        let n = read_full(&mut source, &mut block)?;
        block.truncate(n);
        size += n as u64;
        let end = n < BLOCK;
        let block = Arc::new(block);
        cutter.feed(&block, end);
        if n > 0 && to_whole.send(block).is_err() {
            return Err(Error::Internal("the file's hasher stopped".into()));
        }
        if end {
            return Ok(());
        }
    })();
    drop(to_whole);
    let digest = whole
        .join()
        .map_err(|_| Error::Internal("the file's hasher failed".into()))?;
    read?;
    Ok(Chunked {
        digest: digest.into(),
        size,
        chunks: cutter.chunks,
    })
}

/// FastCDC over blocks as they come: chunks wholly inside a block are cut and
/// hashed there; the few bytes after a block's last cut wait in `tail`, and
/// the next cuts run over them and the next block's start.
struct Cutter {
    chunks: Vec<Chunk>,
    tail: Vec<u8>,
    masks: (u64, u64),
}

impl Cutter {
    fn new() -> Self {
        Self {
            chunks: Vec::new(),
            tail: Vec::with_capacity(2 * MAX_CHUNK as usize),
            masks: select_masks(AVG_CHUNK as usize, Normalization::Level1),
        }
    }

    /// The next cut in `bytes`, which must hold `MAX_CHUNK` bytes or the end.
    fn cut(&self, bytes: &[u8]) -> usize {
        let (s, l) = self.masks;
        cut(
            bytes,
            MIN_CHUNK as usize,
            AVG_CHUNK as usize,
            MAX_CHUNK as usize,
            s,
            l,
            s << 1,
            l << 1,
        )
        .1
    }

    fn push(&mut self, bytes: &[u8]) {
        self.chunks.push(Chunk {
            id: blake3::hash(bytes),
            size: bytes.len() as u32,
        });
    }

    /// Cuts what it can of `block`; `end` if nothing follows it.
    fn feed(&mut self, block: &[u8], end: bool) {
        let max = MAX_CHUNK as usize;
        let mut at = 0; // where the next chunk starts in `block`
        if !self.tail.is_empty() {
            // Cut across the seam, over the tail and the block's first bytes.
            let waiting = self.tail.len();
            let joined = block.len().min(max);
            self.tail.extend_from_slice(&block[..joined]);
            let mut start = 0;
            while start < waiting {
                let rest = &self.tail[start..];
                if rest.len() < max && !(end && joined == block.len()) {
                    break; // too few bytes to cut exactly: wait for more
                }
                let n = self.cut(rest);
                let chunk = self.tail[start..start + n].to_vec();
                self.push(&chunk);
                start += n;
            }
            if start < waiting {
                // The block was too short to cut past the tail: all of it waits.
                self.tail.drain(..start);
                self.tail.extend_from_slice(&block[joined..]);
                if end {
                    self.finish_tail();
                }
                return;
            }
            at = start - waiting;
            self.tail.clear();
        }
        while block.len() - at >= max || (end && at < block.len()) {
            let n = self.cut(&block[at..]);
            self.push(&block[at..at + n]);
            at += n;
        }
        self.tail.extend_from_slice(&block[at..]);
    }

    /// At the end: what waits is cut to its last byte.
    fn finish_tail(&mut self) {
        let mut start = 0;
        while start < self.tail.len() {
            let n = self.cut(&self.tail[start..]);
            let chunk = self.tail[start..start + n].to_vec();
            self.push(&chunk);
            start += n;
        }
        self.tail.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that look random, from a seed.
    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    }

    /// Chunks of `data` cut in one piece, the plain way.
    fn cut_whole(data: &[u8]) -> Vec<Chunk> {
        let mut cutter = Cutter::new();
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < data.len() {
            let n = cutter.cut(&data[at..]);
            chunks.push(Chunk {
                id: blake3::hash(&data[at..at + n]),
                size: n as u32,
            });
            at += n;
        }
        cutter.chunks = chunks;
        cutter.chunks
    }

    #[test]
    fn blocks_cut_as_one_piece_would_whatever_the_seams() {
        for len in [
            0,
            1,
            MIN_CHUNK as usize,
            BLOCK - 1,
            BLOCK,
            BLOCK + 7,
            2 * BLOCK + 300_000,
            3 * BLOCK - MAX_CHUNK as usize / 2,
        ] {
            let data = noise(len, len as u64);
            let chunked = chunk_reader(&data[..]).unwrap();
            assert_eq!(chunked.chunks, cut_whole(&data), "{len} bytes");
            assert_eq!(chunked.size, len as u64);
            assert_eq!(chunked.digest, Digest::from(blake3::hash(&data)));
            chunked.check().unwrap();
            // Reads of any size give the same cuts.
            let trickle = std::io::Read::chain(&data[..len / 3], &data[len / 3..]);
            assert_eq!(chunk_reader(trickle).unwrap(), chunked);
        }
    }

    #[test]
    fn a_file_cut_in_pieces_on_several_threads_is_cut_as_on_one() {
        let dir = std::env::temp_dir().join(format!("chunking-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let zeros = vec![0u8; 9 << 20];
        let mut mixed = noise(7 << 20, 11);
        mixed.extend_from_slice(&vec![7u8; 3 << 20]);
        mixed.extend(noise(5 << 20, 12));
        for (n, data) in [noise(13 << 20, 5), zeros, mixed].into_iter().enumerate() {
            let path = dir.join(format!("{n}"));
            std::fs::write(&path, &data).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let one = chunk_reader(&data[..]).unwrap();
            for most in [1 << 20, 3 << 20, 5 << 20, 64 << 20] {
                let pieces = chunk_in_pieces(&file, data.len() as u64, most).unwrap();
                assert_eq!(pieces.digest, one.digest, "file {n}, pieces of {most}");
                assert_eq!(pieces.chunks, one.chunks, "file {n}, pieces of {most}");
                // Cut without the hash, or hashed without the cuts: the same.
                let cut = read_pieces(&file, data.len() as u64, most, Pass::Cut).unwrap();
                let cut = stitched(&file, data.len() as u64, &cut).unwrap();
                assert_eq!(cut, one.chunks, "file {n}, cut in pieces of {most}");
                let hashed = read_pieces(&file, data.len() as u64, most, Pass::Hash).unwrap();
                let root: Digest = root_of(&hashed, data.len() as u64).into();
                assert_eq!(root, one.digest, "file {n}, hashed in pieces of {most}");
            }
            assert_eq!(digest_file(&file).unwrap(), one.digest, "file {n}");
            let known = chunk_file_hashed(&file, one.digest.clone()).unwrap();
            assert_eq!(known, one, "file {n}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_edit_in_the_middle_keeps_the_chunks_around_it() {
        let before = noise(6 << 20, 7);
        let mut after = before.clone();
        after.splice(3_000_000..3_000_010, noise(500, 8));
        let old = chunk_reader(&before[..]).unwrap();
        let new = chunk_reader(&after[..]).unwrap();
        let known: std::collections::HashSet<_> = old.chunks.iter().map(|c| c.id).collect();
        let fresh = new.bytes_lacking(|id| known.contains(id));
        assert!(
            fresh > 0 && fresh <= 2 * u64::from(MAX_CHUNK),
            "{fresh} new bytes"
        );
        let average = new.size / new.chunks.len() as u64;
        assert!((40_000..100_000).contains(&average), "average {average}");
    }

    #[test]
    fn lists_that_do_not_add_up_are_refused() {
        let chunked = chunk_reader(&noise(1 << 20, 3)[..]).unwrap();
        let back = Chunked::decode_list(
            chunked.digest.clone(),
            Some(chunked.size),
            &chunked.encode_list(),
        )
        .unwrap();
        assert_eq!(back, chunked);
        let mut short = chunked.clone();
        short.size += 1;
        assert!(short.check().is_err());
        let mut tiny = chunked.clone();
        tiny.size = 1_000_000;
        tiny.chunks = vec![
            Chunk {
                id: blake3::hash(b"x"),
                size: 1
            };
            1_000_000
        ];
        let refused = tiny.check().unwrap_err().to_string();
        assert!(refused.contains("at most 62"), "{refused}");
        let mut huge = chunked;
        huge.chunks[0].size = MAX_CHUNK + 2;
        assert!(huge.check().is_err());
    }
}

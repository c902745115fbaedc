//! Which of an upload's chunks travel, and where each of its chunks is read
//! from when it is used: matched by id through the list's positions sorted by
//! id (4 bytes a chunk), never a map of every chunk, and the lists of the
//! blobs that may hold them walked one at a time, as kept.

use crate::chunking::{Chunk, LISTED_BYTES};
use crate::error::{Error, Result};

/// The positions of a list's chunks, sorted by id (then position).
pub(super) struct ById(Vec<u32>);

impl ById {
    pub(super) fn new(chunks: &[Chunk]) -> Self {
        let mut positions: Vec<u32> = (0..chunks.len() as u32).collect();
        positions.sort_unstable_by(|&a, &b| {
            let (x, y) = (&chunks[a as usize], &chunks[b as usize]);
            x.id.as_bytes().cmp(y.id.as_bytes()).then(a.cmp(&b))
        });
        Self(positions)
    }

    /// The positions of the chunks whose id is `id`, first position first.
    fn find<'a>(&'a self, chunks: &[Chunk], id: &[u8; 32]) -> &'a [u32] {
        let at = |p: &u32| chunks[*p as usize].id.as_bytes();
        let first = self.0.partition_point(|p| at(p) < id);
        let end = first + self.0[first..].partition_point(|p| at(p) == id);
        &self.0[first..end]
    }

    /// The positions of each id, a group at a time.
    fn groups<'a>(&'a self, chunks: &'a [Chunk]) -> impl Iterator<Item = &'a [u32]> + 'a {
        self.0
            .chunk_by(move |&a, &b| chunks[a as usize].id == chunks[b as usize].id)
    }

    /// The bytes this takes.
    pub(super) fn bytes(chunks: usize) -> u64 {
        4 * chunks as u64
    }
}

/// The entries of a kept list (`Chunked::encode_list`) with where each
/// starts in its blob, read in place.
fn entries(kept: &[u8]) -> impl Iterator<Item = ([u8; 32], u32, u64)> + '_ {
    let mut start = 0u64;
    kept.chunks_exact(LISTED_BYTES).map(move |entry| {
        let id: [u8; 32] = entry[..32].try_into().expect("32 bytes");
        let size = u32::from_le_bytes(entry[32..].try_into().expect("4 bytes"));
        let at = start;
        start += u64::from(size);
        (id, size, at)
    })
}

/// Marks in `known` the chunks of `chunks` that the kept list `kept` of a
/// blob the caller may read holds. Refuses a chunk the blob has with another
/// size: its bytes could not be its id.
pub(super) fn mark_known(
    chunks: &[Chunk],
    by_id: &ById,
    kept: &[u8],
    known: &mut [bool],
) -> Result<()> {
    for (id, size, _) in entries(kept) {
        for &position in by_id.find(chunks, &id) {
            let chunk = chunks[position as usize];
            if chunk.size != size {
                return Err(Error::Invalid(format!(
                    "chunk {position} is {} bytes, but its id is of {size} bytes",
                    chunk.size
                )));
            }
            known[position as usize] = true;
        }
    }
    Ok(())
}

/// The runs of positions in `chunks` to send: those not `known`, each id once
/// (its first position). Refuses a list that names one id with two sizes.
pub(super) fn to_send(chunks: &[Chunk], by_id: &ById, known: &[bool]) -> Result<Vec<(u64, u64)>> {
    let mut send = vec![false; chunks.len()];
    for group in by_id.groups(chunks) {
        let first = chunks[group[0] as usize];
        if let Some(&other) = group
            .iter()
            .find(|&&p| chunks[p as usize].size != first.size)
        {
            return Err(Error::Invalid(format!(
                "chunk {other} is {} bytes, but its id is of {} bytes",
                chunks[other as usize].size, first.size
            )));
        }
        if !group.iter().any(|&p| known[p as usize]) {
            send[group[0] as usize] = true;
        }
    }
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for (i, _) in send.iter().enumerate().filter(|(_, s)| **s) {
        let i = i as u64;
        match runs.last_mut() {
            Some(run) if run.1 == i => run.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    Ok(runs)
}

/// Where a chunk's bytes are: nowhere yet, the upload's own bytes, or a
/// blob (by its position among those walked).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Found {
    Nowhere,
    Sent,
    Blob(u8),
}

/// Where each chunk of a finished upload is read from, and at what offset.
pub(super) struct Sources {
    from: Vec<Found>,
    start: Vec<u64>,
}

impl Sources {
    /// The bytes this takes for a list of `chunks`.
    pub(super) fn bytes(chunks: usize) -> u64 {
        9 * chunks as u64
    }

    /// The chunks sent (in `send`'s runs) found in the upload's own bytes,
    /// and every other position of their ids with them.
    pub(super) fn sent(chunks: &[Chunk], by_id: &ById, send: &[(u64, u64)]) -> Self {
        let mut this = Self {
            from: vec![Found::Nowhere; chunks.len()],
            start: vec![0; chunks.len()],
        };
        let mut at = 0u64;
        for &(first, end) in send {
            for position in first..end {
                let position = position as usize;
                this.from[position] = Found::Sent;
                this.start[position] = at;
                at += u64::from(chunks[position].size);
            }
        }
        for group in by_id.groups(chunks) {
            if let Some(&sent) = group
                .iter()
                .find(|&&p| this.from[p as usize] == Found::Sent)
            {
                for &p in group {
                    this.from[p as usize] = Found::Sent;
                    this.start[p as usize] = this.start[sent as usize];
                }
            }
        }
        this
    }

    /// Finds in the kept list `kept` of blob `blob` the chunks not found yet.
    pub(super) fn look_in(&mut self, chunks: &[Chunk], by_id: &ById, blob: u8, kept: &[u8]) {
        for (id, size, start) in entries(kept) {
            for &position in by_id.find(chunks, &id) {
                let position = position as usize;
                if self.from[position] == Found::Nowhere && chunks[position].size == size {
                    self.from[position] = Found::Blob(blob);
                    self.start[position] = start;
                }
            }
        }
    }

    /// Whether every chunk was found.
    pub(super) fn complete(&self) -> bool {
        !self.from.contains(&Found::Nowhere)
    }

    /// The file as runs of bytes, each from one source: `(from, start, end)`.
    pub(super) fn runs(&self, chunks: &[Chunk]) -> Vec<(Found, u64, u64)> {
        let mut runs: Vec<(Found, u64, u64)> = Vec::new();
        for (position, chunk) in chunks.iter().enumerate() {
            let (from, start) = (self.from[position], self.start[position]);
            let end = start + u64::from(chunk.size);
            match runs.last_mut() {
                Some(last) if last.0 == from && last.2 == start => last.2 = end,
                _ => runs.push((from, start, end)),
            }
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(byte: u8, size: u32) -> Chunk {
        Chunk {
            id: blake3::hash(&[byte]),
            size,
        }
    }

    fn kept(chunks: &[Chunk]) -> Vec<u8> {
        chunks
            .iter()
            .flat_map(|c| {
                let mut entry = c.id.as_bytes().to_vec();
                entry.extend_from_slice(&c.size.to_le_bytes());
                entry
            })
            .collect()
    }

    #[test]
    fn each_id_travels_once_unless_a_blob_has_it() {
        let list = [
            chunk(1, 10),
            chunk(2, 20),
            chunk(1, 10),
            chunk(3, 30),
            chunk(4, 40),
        ];
        let by_id = ById::new(&list);
        let mut known = vec![false; list.len()];
        mark_known(
            &list,
            &by_id,
            &kept(&[chunk(3, 30), chunk(9, 5)]),
            &mut known,
        )
        .unwrap();
        assert_eq!(known, [false, false, false, true, false]);
        assert_eq!(to_send(&list, &by_id, &known).unwrap(), [(0, 2), (4, 5)]);

        let mut sources = Sources::sent(&list, &by_id, &[(0, 2), (4, 5)]);
        assert!(!sources.complete());
        sources.look_in(&list, &by_id, 0, &kept(&[chunk(9, 5), chunk(3, 30)]));
        assert!(sources.complete());
        assert_eq!(
            sources.runs(&list),
            [
                (Found::Sent, 0, 30),
                (Found::Sent, 0, 10),
                (Found::Blob(0), 5, 35),
                (Found::Sent, 30, 70)
            ]
        );
    }

    #[test]
    fn one_id_of_two_sizes_is_refused() {
        let list = [chunk(1, 10), chunk(1, 11)];
        let by_id = ById::new(&list);
        assert!(to_send(&list, &by_id, &[false, false]).is_err());
        let list = [chunk(1, 10)];
        let by_id = ById::new(&list);
        let mut known = vec![false];
        assert!(mark_known(&list, &by_id, &kept(&[chunk(1, 12)]), &mut known).is_err());
    }
}

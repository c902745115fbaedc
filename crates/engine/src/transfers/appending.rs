//! One append of a resumable upload: the bytes that came, gathered into
//! parts and counted as whole checked chunks arrive (see `transfers`).

use super::*;

/// One append's work: the bytes that came gathered into a part, written
/// and counted every [`piece_size`] bytes of whole checked chunks and when
/// the request ends (then with the part of a chunk that came, which the
/// next append checks as the chunk completes).
pub(super) struct Appending<'a> {
    pub(super) me: &'a Bundled,
    pub(super) row: UploadRow,
    pub(super) turn: &'a Turn,
    /// Whole checked chunks' bytes from `row.reached`, not yet written.
    pub(super) piece: Vec<Bytes>,
    pub(super) gathered: usize,
    /// The bytes after those of the chunk under way, not yet checked.
    pub(super) partial: Vec<u8>,
    /// Where the upload goes back to: a chunk begun by an earlier request
    /// turned out not to be its id.
    pub(super) cut_to: Option<u64>,
}

impl Appending<'_> {
    /// Reads the body and checks each chunk as it completes, until the body
    /// ends, breaks or goes wrong, or a newer request supersedes this one.
    pub(super) async fn run(
        &mut self,
        to_send: &ToSend,
        body: &mut (impl AsyncRead + Unpin),
    ) -> Result<()> {
        let piece_size = piece_size(&self.me.shared.uploads.parts);
        let length = self.row.length;
        let mut k = to_send.chunk_at(self.row.reached);
        let mut hasher = blake3::Hasher::new();
        // The part of the chunk under way that came before, hashed again.
        let chunk_start = to_send.starts[k];
        if chunk_start < self.row.reached {
            hasher.update(&self.me.upload_bytes(&self.row, chunk_start).await?);
        }
        let mut buf = vec![0u8; 256 << 10];
        loop {
            let read = tokio::select! {
                biased;
                () = self.turn.until_superseded() => return Ok(()),
                read = body.read(&mut buf) => read,
            };
            let at = |me: &Appending| me.row.reached + (me.gathered + me.partial.len()) as u64;
            let n = match read {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) => {
                    return Err(Error::BadRequest(format!(
                        "the body stopped at byte {}: {e}",
                        at(self)
                    )))
                }
            };
            let mut rest = &buf[..n];
            while !rest.is_empty() {
                if at(self) == length {
                    return Err(Error::Invalid(format!(
                        "the body goes past the upload's {length} bytes"
                    )));
                }
                let (expected, start) = (to_send.chunks[k], to_send.starts[k]);
                let end = start + u64::from(expected.size);
                let take = ((end - at(self)) as usize).min(rest.len());
                hasher.update(&rest[..take]);
                self.partial.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if at(self) < end {
                    continue;
                }
                if std::mem::take(&mut hasher).finalize() != expected.id {
                    // Dropped, with all after it: the upload goes back to its start.
                    self.partial.clear();
                    if start < self.row.reached {
                        self.cut_to = Some(start);
                    }
                    let index = self.row.send.iter().flat_map(|&(f, e)| f..e).nth(k);
                    return Err(Error::ChunkMismatch {
                        index: index.unwrap_or_default(),
                        offset: start,
                    });
                }
                self.gathered += self.partial.len();
                self.piece
                    .push(Bytes::from(std::mem::take(&mut self.partial)));
                k += 1;
                if self.gathered >= piece_size {
                    self.write_piece().await?;
                }
            }
        }
    }

    /// Keeps what came: the checked chunks and the part of one under way,
    /// or goes back to where a chunk that was not its id began.
    pub(super) async fn finish(&mut self) -> Result<()> {
        if let Some(to) = self.cut_to {
            let (shared, id, writer) = (self.me.shared.clone(), self.row.id, self.row.writer);
            let cut = in_place(move || {
                shared
                    .store
                    .write(Durability::Normal, |tx| tx.cut_upload(id, writer, to))
            })
            .await?;
            if cut {
                self.row.reached = to;
            }
            return Ok(());
        }
        if !self.partial.is_empty() {
            self.gathered += self.partial.len();
            self.piece
                .push(Bytes::from(std::mem::take(&mut self.partial)));
        }
        self.write_piece().await
    }

    /// Writes the bytes gathered as a part and counts it, if this request
    /// still has the upload's turn.
    async fn write_piece(&mut self) -> Result<()> {
        if self.gathered == 0 {
            return Ok(());
        }
        let (id, writer) = (self.row.id, self.row.writer);
        let (from, to) = (self.row.reached, self.row.reached + self.gathered as u64);
        let piece = std::mem::take(&mut self.piece);
        self.gathered = 0;
        self.me
            .shared
            .uploads
            .parts
            .put(id, &piece_name(from, to), piece)
            .await?;
        let shared = self.me.shared.clone();
        let counted = in_place(move || {
            shared.store.write(Durability::Normal, |tx| {
                if tx.add_upload_piece(id, writer, from, to)? {
                    return Ok(None);
                }
                Ok(Some(tx.upload(id)?))
            })
        })
        .await?;
        match counted {
            None => {
                self.row.reached = to;
                Ok(())
            }
            // Another server's request took the upload over meanwhile.
            Some(Some(now)) => Err(Error::WrongOffset {
                offset: now.reached,
            }),
            // Removed meanwhile: what was just written goes too.
            Some(None) => {
                let _ = self.me.shared.uploads.parts.remove(id).await;
                Err(no_upload(id))
            }
        }
    }
}

/// The parts of an upload that hold its bytes up to `reached`, each as
/// `(start, end, name)`: a part's bytes count up to where the next begins
/// (a part written again after a chunk that was not its id starts earlier
/// than the one it replaces ends).
pub(super) fn held_in(pieces: &[(u64, u64)], reached: u64) -> Vec<(u64, u64, String)> {
    pieces
        .iter()
        .enumerate()
        .filter_map(|(i, &(start, stop))| {
            let next = pieces.get(i + 1).map_or(u64::MAX, |p| p.0);
            let end = stop.min(next).min(reached);
            (start < end).then(|| (start, end, piece_name(start, stop)))
        })
        .collect()
}

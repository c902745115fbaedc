//! One append of a resumable upload: the bytes that came, written and
//! counted as whole checked chunks arrive (see `transfers`).

use super::*;
use crate::blobs::BytesWriter;

/// What a count of an upload's bytes found: `None` when they counted;
/// else the upload as another request left it, or `None` if it is gone.
type Counted = Option<Option<UploadRow>>;

/// One append's work: the whole checked chunks that came, written a run at
/// a time ([`BytesWriter::sizes`]), and made durable and counted beside the
/// writing, one count at a time, each taking all that was written by then:
/// so a server that dies loses about what came during one sync, whatever
/// the link's speed. When the request ends, what is left is counted, with
/// the part of a chunk that came (which the next append checks as the
/// chunk completes).
pub(super) struct Appending<'a> {
    pub(super) me: &'a Bundled,
    pub(super) row: UploadRow,
    pub(super) turn: &'a Turn,
    pub(super) writer: BytesWriter,
    /// Whole checked chunks' bytes after those written, not yet written.
    pub(super) piece: Vec<Bytes>,
    pub(super) gathered: usize,
    /// Where the bytes written end (`row.reached` counts those durable).
    pub(super) written_to: u64,
    /// The count under way, and where it ends.
    pub(super) counting: Option<(u64, tokio::task::JoinHandle<Result<Counted>>)>,
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
        let (write_size, count_size) = self.writer.sizes();
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
            let at = |me: &Appending| me.written_to + (me.gathered + me.partial.len()) as u64;
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
                if self.gathered >= write_size {
                    self.write_piece().await?;
                    let done = self.counting.as_ref().is_none_or(|(_, c)| c.is_finished());
                    if done && self.written_to - self.row.reached >= count_size {
                        self.counted().await?;
                        self.start_count();
                    }
                }
            }
        }
    }

    /// Keeps what came: the checked chunks and the part of one under way,
    /// or goes back to where a chunk that was not its id began.
    pub(super) async fn finish(&mut self) -> Result<()> {
        if let Some(to) = self.cut_to {
            // The chunk began in an earlier request, so it was this one's
            // first: nothing was written here.
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
        self.write_piece().await?;
        self.counted().await?;
        self.start_count();
        self.counted().await
    }

    /// Writes the checked bytes gathered, after those written before.
    async fn write_piece(&mut self) -> Result<()> {
        if self.gathered == 0 {
            return Ok(());
        }
        let from = self.written_to;
        let to = from + self.gathered as u64;
        let piece = std::mem::take(&mut self.piece);
        self.gathered = 0;
        self.writer.write(from, to, piece).await?;
        self.written_to = to;
        Ok(())
    }

    /// Begins making the bytes written so far durable and counting them, if
    /// this request still has the upload's turn then.
    fn start_count(&mut self) {
        let (from, to) = (self.row.reached, self.written_to);
        if to == from {
            return;
        }
        let durable = self.writer.durable();
        let (shared, id, writer) = (self.me.shared.clone(), self.row.id, self.row.writer);
        let count = tokio::spawn(async move {
            durable.sync().await?;
            off_thread(move || {
                shared.store.write(Durability::Normal, |tx| {
                    if tx.add_upload_piece(id, writer, from, to)? {
                        return Ok(None);
                    }
                    Ok(Some(tx.upload(id)?))
                })
            })
            .await
        });
        self.counting = Some((to, count));
    }

    /// Waits for the count under way, if any.
    async fn counted(&mut self) -> Result<()> {
        let Some((to, count)) = self.counting.take() else {
            return Ok(());
        };
        let counted = count
            .await
            .map_err(|e| Error::Internal(format!("counting an upload's bytes: {e}")))??;
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
                let id = self.row.id;
                let _ = self.me.shared.uploads.parts.remove(id).await;
                Err(no_upload(id))
            }
        }
    }
}

/// The runs an upload counted that hold its bytes up to `reached`, each as
/// `(start, end, run)`: a run's bytes count up to where the next begins (a
/// run written again after a chunk that was not its id starts earlier than
/// the one it replaces ends).
pub(super) fn held_in(pieces: &[(u64, u64)], reached: u64) -> Vec<(u64, u64, (u64, u64))> {
    pieces
        .iter()
        .enumerate()
        .filter_map(|(i, &(start, stop))| {
            let next = pieces.get(i + 1).map_or(u64::MAX, |p| p.0);
            let end = stop.min(next).min(reached);
            (start < end).then_some((start, end, (start, stop)))
        })
        .collect()
}

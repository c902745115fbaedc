//! A finished upload's use: its bytes for the write that takes them, read
//! from its parts and the blobs holding its other chunks, or its spool
//! taken whole; and what is kept of it once used.

use super::*;

/// Where a finished upload's bytes are read from: a blob (`Some`), or the
/// counted run `(start, stop)` of the upload's own; then the range in it.
type ByteSource = (Option<Digest>, (u64, u64), u64, u64);

impl Bundled {
    /// A finished upload's bytes for `target` (which must be the one it was
    /// begun for), read from its parts and the blobs that hold its other
    /// chunks, with its declared digest: the check-in (or stage, commit,
    /// import) that takes them checks the whole file as it reads. Call
    /// [`Bundled::upload_used`] once that succeeded.
    pub async fn finished_upload(&self, id: UploadId, target: &UploadFor) -> Result<Upload> {
        let row = self.own_upload(id).await?;
        if row.target != *target {
            return Err(Error::Invalid(format!(
                "upload {id} was begun for something else: begin one for this"
            )));
        }
        if row.reached < row.length {
            return Err(Error::UploadIncomplete {
                offset: row.reached,
                length: row.length,
            });
        }
        if let Some(whole) = self.whole_file(&row) {
            // Hashed as it arrived, and that is the digest declared: not
            // read again. Otherwise the write checks it as it takes it.
            if self.shared.uploads.arrived_as(id).as_ref() == Some(&row.digest) {
                return Ok(Upload::hashed(whole, row.digest.clone()));
            }
            // Nothing checked an unlisted upload's bytes as they came: an
            // append another server superseded may still write into its
            // spool, so the spool is copied, the copy checked, not linked.
            if row.is_unlisted() {
                return Ok(Upload::file(whole).with_digest(row.digest.clone()));
            }
            return Ok(Upload::checked(whole, row.digest.clone()));
        }
        let (runs, blobs, held) = if row.is_unlisted() {
            (vec![(Found::Sent, 0, row.size)], Vec::new(), None)
        } else {
            let (runs, blobs, held) = self.listed_runs(&row, target).await?;
            (runs, blobs, Some(held))
        };
        let shared = self.shared.clone();
        let pieces = in_place(move || shared.store.read(|tx| tx.upload_pieces(id))).await?;
        let pieces = held_in(&pieces, row.reached);
        let (store_blobs, parts) = (self.shared.blobs.clone(), self.shared.uploads.parts.clone());
        let stream = futures_util::stream::iter(runs)
            .flat_map(move |(found, start, end)| {
                let reads: Vec<ByteSource> = match found {
                    Found::Blob(k) => {
                        vec![(Some(blobs[k as usize].clone()), (0, 0), start, end)]
                    }
                    // A run of the upload's own bytes, part by part: the
                    // parts are in order, so found from the first that ends
                    // after it starts (a file may have a million runs).
                    _ => pieces[pieces.partition_point(|(_, to, _)| *to <= start)..]
                        .iter()
                        .take_while(|(from, _, _)| *from < end)
                        .map(|&(from, to, run)| {
                            (None, run, start.max(from) - from, end.min(to) - from)
                        })
                        .collect(),
                };
                futures_util::stream::iter(reads)
            })
            .then(move |(blob, run, start, end)| {
                let _room = &held;
                let (blobs, parts) = (store_blobs.clone(), parts.clone());
                async move {
                    let reader: Pin<Box<dyn AsyncRead + Send>> = match blob {
                        Some(digest) => blobs.open_range(&digest, start..end).await?,
                        None => parts.open(id, run, start..end).await?,
                    };
                    Ok::<_, Error>(tokio_util::io::ReaderStream::with_capacity(reader, 1 << 20))
                }
            })
            .map_err(std::io::Error::other)
            .try_flatten();
        let reader = tokio_util::io::StreamReader::new(stream);
        Ok(Upload::stream(reader).with_digest(row.digest.clone()))
    }

    /// Where each run of a listed upload's bytes is read from: its own
    /// bytes or a blob the caller may read for `target`, with the blobs
    /// named and the room the runs hold while the file is read.
    async fn listed_runs(
        &self,
        row: &UploadRow,
        target: &UploadFor,
    ) -> Result<(Vec<(Found, u64, u64)>, Vec<Digest>, Held)> {
        let id = row.id;
        let n = row.list_len() as usize;
        // A closed check-out is left to the write's rules: a retry of a
        // check-in whose answer was lost is answered as the first was.
        let known = self.known_blobs(target, false).await?;
        let held = self
            .shared
            .uploads
            .room
            .take(
                &self.participant,
                2 * row.list_bytes()
                    + ById::bytes(n)
                    + Sources::bytes(n)
                    + n as u64 * RUN_BYTES
                    + known_bound(&known),
            )
            .await?;
        let chunks = self.read_list(row).await?;
        let by_id = ById::new(&chunks);
        let mut sources = Sources::sent(&chunks, &by_id, &row.send);
        let mut blobs = Vec::new();
        for (blob, blob_size, make) in known {
            if sources.complete() {
                break;
            }
            if let Some(kept) = self.kept_list_bytes(&blob, blob_size, make).await? {
                sources.look_in(&chunks, &by_id, blobs.len() as u8, &kept);
                blobs.push(blob);
            }
        }
        if !sources.complete() {
            // Pushed out of what it may use since it began (newer
            // versions, a new stage): the client begins again.
            return Err(no_upload_any_more(id));
        }
        let runs = sources.runs(&chunks);
        drop((chunks, by_id, sources));
        // The runs stay while the file is read: their room with them.
        let mut held = held;
        held.shrink_to(runs.len() as u64 * RUN_BYTES);
        Ok((runs, blobs, held))
    }

    /// The file that holds a finished upload's every byte in order, where
    /// there is one: a folder's spool of an upload that sent every chunk of
    /// its list (a new file, or one the server had none of). The write
    /// takes it as its blob by a link, checking it against the digest.
    fn whole_file(&self, row: &UploadRow) -> Option<PathBuf> {
        if row.length != row.size || row.reached != row.length {
            return None;
        }
        let spool = self.shared.uploads.parts.spool(row.id)?;
        // A spool longer than the file (bytes a superseded request wrote
        // past the end) is not the file.
        let size = std::fs::metadata(&spool).ok()?.len();
        (size == row.size).then_some(spool)
    }

    /// After the write that used an upload: its chunk list is kept for its
    /// blob (the next transfer of the file needs no new one), and it is
    /// removed in a few minutes (see [`USED_KEPT`]). An unlisted upload's
    /// blob has its list made now, off the request, so that the file's next
    /// check-in finds it made.
    pub async fn upload_used(&self, id: UploadId) {
        let Ok(row) = self.own_upload(id).await else {
            return;
        };
        if row.is_unlisted() {
            self.make_list_soon(&row);
        } else {
            let kept = async {
                let _room = self.list_room(&row).await?;
                let bytes = self.list_bytes(&row).await?;
                self.keep_chunk_list(&row.digest, bytes).await
            }
            .await;
            if let Err(e) = kept {
                tracing::warn!("upload {id}'s chunk list is made again when needed: {e}");
            }
        }
        self.mark_used(id).await;
    }

    /// Makes the chunk list of the blob an unlisted upload became, off the
    /// request, unless another is being made so: then the first transfer
    /// that needs it makes it.
    fn make_list_soon(&self, row: &UploadRow) {
        let Some(turn) = self.shared.uploads.background_list() else {
            return;
        };
        let (me, digest, size) = (self.clone(), row.digest.clone(), row.size);
        tokio::spawn(async move {
            let _turn = turn;
            let made = async {
                let room = &me.shared.uploads.room;
                let _room = room.take(&me.participant, 3 * list_bound(size)).await?;
                me.kept_list_bytes(&digest, size, true).await
            }
            .await;
            if let Err(e) = made {
                tracing::warn!("blob {digest}'s chunk list is made when needed: {e}");
            }
        });
    }

    /// Marks upload `id` used: it goes in a few minutes.
    async fn mark_used(&self, id: UploadId) {
        let (shared, at) = (self.shared.clone(), self.clock().now());
        let marked = in_place(move || {
            shared
                .store
                .write(Durability::Normal, |tx| tx.mark_upload_used(id, at))
        })
        .await;
        if let Err(e) = marked {
            tracing::warn!("upload {id} stays until it lapses: {e}");
        }
    }
}

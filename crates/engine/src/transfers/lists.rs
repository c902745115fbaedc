//! Chunk lists the server keeps: a version's, made the first time it is
//! asked for, and those of the blobs a begin's chunks are matched against,
//! read within the room lists may take (see `transfers`).

use super::*;

impl Bundled {
    /// The chunk list of a version of an artifact the caller may read (the
    /// head's when `version` is `None`), made the first time it is asked for.
    pub async fn version_chunks(&self, id: ArtifactId, version: Option<u64>) -> Result<Chunked> {
        let head = self
            .read(move |tx, me, _| rules::version_head(tx, me, id, version))
            .await?;
        let _room = self
            .shared
            .uploads
            .room
            .take(&self.participant, 3 * list_bound(head.size))
            .await?;
        match self.kept_list_bytes(&head.digest, head.size, true).await? {
            Some(kept) => Chunked::decode_list(head.digest.clone(), Some(head.size), &kept)
                .map_err(|e| {
                    Error::Internal(format!("the kept chunk list of {}: {e}", head.digest))
                }),
            None => Err(Error::Invalid(format!(
                "this version is too large for a chunk list (over {MOST_LISTED} chunks): \
                 download it whole"
            ))),
        }
    }

    /// A blob's chunk list as kept: the kept one, or (when `make`) made now
    /// from its bytes and kept. `None` when none is kept and it is not to be
    /// made, or the blob is too large for a list. The caller holds the room
    /// [`known_bound`] says.
    pub(super) async fn kept_list_bytes(
        &self,
        digest: &Digest,
        size: u64,
        make: bool,
    ) -> Result<Option<Vec<u8>>> {
        if size == 0 || size > MOST_LISTED * u64::from(AVG_CHUNK) {
            return Ok(None);
        }
        let shared = self.shared.clone();
        let wanted = digest.clone();
        let kept = in_place(move || shared.store.read(|tx| tx.chunk_list(&wanted))).await?;
        if let Some(kept) = kept {
            return Ok(Some(kept));
        }
        if !make {
            return Ok(None);
        }
        // One making of a blob's list at a time: a begin that needs the
        // list an upload's use is making waits for it rather than reading
        // the blob again.
        let making = self.shared.uploads.making(digest);
        let _making = making.lock().await;
        let (shared, wanted) = (self.shared.clone(), digest.clone());
        let kept = in_place(move || shared.store.read(|tx| tx.chunk_list(&wanted))).await?;
        if let Some(kept) = kept {
            return Ok(Some(kept));
        }
        let local = self.shared.blobs.local_file(digest).await?;
        let path = local.path().to_owned();
        let list =
            off_thread(move || chunking::chunk_file(&crate::local_file::open_to_read(&path)?))
                .await?;
        drop(local);
        if list.digest != *digest {
            return Err(Error::Internal(format!(
                "blob {digest} reads as {}: it is damaged",
                list.digest
            )));
        }
        if list.chunks.len() as u64 > MOST_LISTED {
            return Ok(None);
        }
        let kept = list.encode_list();
        drop(list);
        self.keep_chunk_list(digest, kept.clone()).await?;
        Ok(Some(kept))
    }

    pub(super) async fn keep_chunk_list(&self, digest: &Digest, kept: Vec<u8>) -> Result<()> {
        let (shared, digest) = (self.shared.clone(), digest.clone());
        in_place(move || {
            shared
                .store
                .write(Durability::Normal, |tx| tx.put_chunk_list(&digest, &kept))
        })
        .await
    }

    /// The blobs whose chunks the caller may be told the server has for
    /// `target`, each with its size and whether its list is made now if
    /// none is kept: the file's newest versions and proposals and the
    /// check-out's staged bytes. Refuses a target the caller may not write
    /// (or that closed) as its use would.
    pub(super) async fn known_blobs(
        &self,
        target: &UploadFor,
        refuse_closed: bool,
    ) -> Result<Vec<(Digest, u64, bool)>> {
        let target = target.clone();
        let blobs = self
            .read(move |tx, me, now| {
                let (artifact, staged) = match &target {
                    UploadFor::Import(path) => {
                        rules::import_precheck(tx, me, path, now)?;
                        return Ok(Vec::new());
                    }
                    UploadFor::Checkout(id) => {
                        let (row, _) = rules::checkin_precheck(tx, me, *id)?;
                        if refuse_closed && row.checkout.state == CheckoutState::Closed {
                            return Err(closed_checkout(*id));
                        }
                        (row.checkout.artifact_id, row.staged)
                    }
                    UploadFor::Edit(id) => {
                        let (row, _) = rules::edit_precheck(tx, me, *id)?;
                        if refuse_closed && row.state != EditState::Open {
                            return Err(Error::CheckoutClosed(format!("edit {id} has ended")));
                        }
                        (row.edit.artifact_id, None)
                    }
                };
                // Only the head's list (and the staged bytes') is made now if
                // it is not kept yet: the others are offered if kept, so that
                // a file's first chunked check-in reads one blob, not sixteen.
                let mut blobs: Vec<(Digest, u64, bool)> = tx
                    .versions(artifact)?
                    .into_iter()
                    .take(KNOWN_VERSIONS)
                    .enumerate()
                    .map(|(i, (head, _))| (head.digest, head.size, i == 0))
                    .collect();
                let filter = ProposalFilter {
                    artifact: Some(artifact),
                    state: None,
                };
                let mut proposals = tx.proposals(&filter)?;
                proposals.sort_by_key(|p| std::cmp::Reverse(p.created_at));
                blobs.extend(
                    proposals
                        .into_iter()
                        .take(KNOWN_PROPOSALS)
                        .map(|p| (p.digest, p.size, false)),
                );
                blobs.extend(staged.map(|s| (s.digest, s.size, true)));
                Ok(blobs)
            })
            .await?;
        let mut seen = std::collections::HashSet::new();
        Ok(blobs
            .into_iter()
            .filter(|(digest, _, _)| seen.insert(digest.clone()))
            .collect())
    }
}

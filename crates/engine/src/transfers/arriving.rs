//! A begin's chunk list as it arrives: into a file of its own, within a
//! deadline, holding no memory until it is whole (see `transfers`).

use super::*;

/// A chunk list as it arrives, in a file of its own, removed when dropped:
/// a list trickled in holds a file, and no memory.
pub(super) struct Arriving {
    pub(super) path: PathBuf,
    pub(super) len: u64,
    pub(super) _turn: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for Arriving {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Uploads {
    /// Reads a chunk list of at most `cap` bytes (one more, to tell a
    /// longer one) into a file; refused if it does not arrive within
    /// [`LIST_GRACE`] and a second for each [`LIST_RATE`] bytes of `cap`.
    pub(super) async fn receive_list(
        &self,
        who: &Participant,
        list: &mut (impl AsyncRead + Unpin + Send),
        cap: u64,
    ) -> Result<Arriving> {
        let lane = self
            .arriving
            .lock()
            .expect("arriving")
            .entry(who.clone())
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(MOST_ARRIVING_EACH)))
            .clone();
        let turn = tokio::time::timeout(room::ROOM_WAIT, lane.acquire_owned())
            .await
            .map_err(|_| {
                Error::Unavailable(format!(
                    "you are sending {MOST_ARRIVING_EACH} chunk lists already: try again shortly"
                ))
            })?
            .map_err(|_| Error::Internal("the lists arriving closed".into()))?;
        let within = LIST_GRACE + Duration::from_secs(cap / LIST_RATE);
        owner_only::create_dir_all(&self.spool)?;
        let mut arriving = Arriving {
            path: self.spool.join(format!("{}.list", UploadId::new())),
            len: 0,
            _turn: turn,
        };
        let mut file = tokio::fs::File::create(&arriving.path).await?;
        let mut body = list.take(cap + 1);
        let copied = tokio::time::timeout(within, async {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match body.read(&mut buf).await {
                    Ok(0) => return Ok(()),
                    Ok(n) => {
                        file.write_all(&buf[..n]).await?;
                        arriving.len += n as u64;
                    }
                    Err(e) => {
                        return Err(Error::BadRequest(format!(
                            "the chunk list did not arrive: {e}"
                        )))
                    }
                }
            }
        })
        .await;
        match copied {
            Ok(done) => done?,
            Err(_) => {
                return Err(Error::BadRequest(format!(
                    "the chunk list did not arrive within {} s: send it faster",
                    within.as_secs()
                )))
            }
        }
        file.flush().await?;
        Ok(arriving)
    }
}

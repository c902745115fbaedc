//! Transfers over links that break (`docs/API-transfers.md`). A local file
//! of some size goes up as a resumable upload of only the chunks the server
//! lacks, zstd-compressed when that helps, appended from wherever the server
//! says it is after a drop, and then named by the check-in (or stage, edit's
//! commit, import) that takes it. Downloads go on from the byte they reached
//! (`Range`, `If-Range` on the digest). A broken link is waited out with a
//! bounded backoff, telling the caller ("reconnecting…"); a transfer gives
//! up only after a long stretch in which nothing moved. Never sends again a
//! byte the server acknowledged, and never reads a whole file into memory.
//!
//! Here: an upload's requests (begin, append, use); its parts: `sending`
//! (the bytes to send, read from the file), `link` (the backoff),
//! `download` (a download that goes on after a drop).

mod download;
mod link;
mod sending;

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::Method;
use serde::de::DeserializeOwned;

use super::servers::Resend;
use super::{encoded, Remote};
use crate::backend::{check_cancel, Progress, TransferNote, Upload};
use crate::chunking::{self, Chunked};
use crate::error::{Error, Result};
use crate::model::{check_message, Digest, UploadFor, UploadState};
use crate::wire::{DIGEST_HEADER, IDEMPOTENCY_KEY, MESSAGE_HEADER, OFFSET_HEADER, UPLOAD_HEADER};
use link::{broken, Link};
use sending::{stream_of, worth_compressing, Counted, Sending, ZSTD_LEVEL};

/// Files smaller than this go in one request: a few round trips more would
/// cost more than resuming saves.
pub const RESUMABLE_FROM: u64 = 1 << 20;
/// How often an upload that vanished from its server (another server
/// answers now, or it was swept) is begun again.
const MOST_RESTARTS: usize = 3;

impl Remote {
    /// Sends a local file to `path` for `target` as a resumable upload,
    /// then asks `path` to take it. The upload goes without a chunk list,
    /// the whole file, unless the server has enough bytes for the file (its
    /// versions, proposals, staged bytes) that cutting it into chunks may
    /// spare sending some: then only the chunks the server lacks go.
    pub(super) async fn post_resumable<T: DeserializeOwned>(
        &self,
        path: &str,
        target: UploadFor,
        file: PathBuf,
        upload: Upload,
    ) -> Result<T> {
        let hashed = file.clone();
        let (digest, size) = blocking(move || {
            let opened = crate::local_file::open_to_read(&hashed)?;
            let size = opened.metadata()?.len();
            Ok((chunking::digest_file(&opened)?, size))
        })
        .await?;
        if let Some(expected) = &upload.digest {
            if *expected != digest {
                return Err(Error::DigestMismatch {
                    expected: expected.clone(),
                    actual: digest,
                });
            }
        }
        let whole = Upload {
            source: crate::backend::UploadSource::File(file.clone()),
            digest: Some(digest.clone()),
            message: upload.message.clone(),
            progress: upload.progress.clone(),
            cancel: upload.cancel.clone(),
            notes: None,
        };
        let Upload {
            message,
            progress,
            cancel,
            notes,
            ..
        } = upload;
        let message = check_message(message)?;
        let mut link = Link::new(notes);
        let mut plan = Plan::Ask;
        let mut restarts = 0;
        loop {
            // One key for every try of this begin: a begin whose answer was
            // lost, sent again, begins nothing new.
            let key = uuid::Uuid::new_v4().to_string();
            let begun = match &plan {
                Plan::Listed(chunked) => {
                    link.retry(|| self.begin_upload(&target, Some(chunked), &digest, size, &key))
                        .await
                }
                Plan::Ask | Plan::Unlisted => {
                    link.retry(|| self.begin_upload(&target, None, &digest, size, &key))
                        .await
                }
            };
            let mut state = match begun {
                Ok(state) => state,
                // A server from before uploads without a list reads the empty
                // body as a list that is wrong: a list then.
                Err(Error::Invalid(_)) if matches!(plan, Plan::Ask) => {
                    plan = Plan::Listed(self.chunked(&file, &digest).await?);
                    continue;
                }
                // A check-out that closed meanwhile (a server that committed
                // and died before its answer, say): the single request gets
                // the answer its rules give a retry.
                Err(Error::CheckoutClosed(_)) if restarts > 0 => {
                    return self.post_upload(path, whole).await
                }
                Err(e) => return Err(e),
            };
            if matches!(plan, Plan::Ask) {
                plan = Plan::Unlisted;
                if worth_listing(state.known.unwrap_or(0), size) {
                    // Not to be sent: it would count against the server's
                    // bound on unfinished uploads for a day.
                    let _ = link.retry(|| self.cancel_upload(&state)).await;
                    let chunked = self.chunked(&file, &digest).await?;
                    // A list too long for an upload: the file goes unlisted.
                    if chunked.chunks.len() as u64 <= chunking::MOST_LISTED {
                        plan = Plan::Listed(chunked);
                    }
                    continue;
                }
            }
            link.note(TransferNote::Sending {
                bytes: state.length,
                size,
            });
            let sending = Arc::new(match &plan {
                Plan::Listed(chunked) => Sending::new(file.clone(), chunked, &state),
                Plan::Ask | Plan::Unlisted => Sending::unlisted(file.clone(), size),
            });
            let compress = {
                let (sending, length) = (sending.clone(), state.length);
                blocking(move || worth_compressing(&sending, length)).await?
            };
            let progress = progress.clone();
            let sent = self
                .send_rest(
                    &mut link,
                    &mut state,
                    &sending,
                    compress,
                    progress,
                    cancel.clone(),
                )
                .await;
            // The last moment to stop: once the upload is used, it commits.
            let sent = sent.and_then(|()| check_cancel(cancel.as_deref()));
            let used = match sent {
                Ok(()) => {
                    link.retry(|| self.use_upload(path, &state, message.as_deref()))
                        .await
                }
                Err(e) => Err(e),
            };
            match used {
                // The server that had it is gone or swept it: begin again.
                Err(Error::NotFound(why))
                    if why.contains("no upload") && restarts < MOST_RESTARTS =>
                {
                    restarts += 1;
                }
                Err(e) => {
                    if !broken(&e) {
                        // Refused (a closed check-out, bytes that changed):
                        // nothing will use what came.
                        let _ = self.cancel_upload(&state).await;
                    }
                    // Bytes sent unlisted that are not the digest read
                    // before: the file changed while it was sent.
                    return Err(match e {
                        Error::DigestMismatch { .. } => changed_while_sent(),
                        e => e,
                    });
                }
                done => return done,
            }
        }
    }

    /// The chunk list of a file that hashed to `digest` a moment ago. A file
    /// changed since is caught here, or by the server: a chunk that is not
    /// its id, or the whole not its digest, commits nothing.
    async fn chunked(&self, file: &Path, digest: &Digest) -> Result<Chunked> {
        let (listed, hashed) = (file.to_owned(), digest.clone());
        let chunked = blocking(move || {
            chunking::chunk_file_hashed(&crate::local_file::open_to_read(&listed)?, hashed)
        })
        .await?;
        if chunked.digest != *digest {
            return Err(changed_while_sent());
        }
        Ok(chunked)
    }

    /// Appends until the server has every byte, resuming after each drop
    /// from the offset the server gives.
    async fn send_rest(
        &self,
        link: &mut Link,
        state: &mut UploadState,
        sending: &Arc<Sending>,
        compress: bool,
        progress: Option<Progress>,
        cancel: Option<crate::backend::Cancel>,
    ) -> Result<()> {
        // Progress only grows, whatever the server says after a drop.
        let told = Arc::new(AtomicU64::new(0));
        let progress: Option<Progress> = progress.map(|inner| {
            let told = told.clone();
            Arc::new(move |at: u64| {
                if told.fetch_max(at, Ordering::Relaxed) < at {
                    inner(at);
                }
            }) as Progress
        });
        let tell = |at: u64| {
            if let Some(progress) = &progress {
                progress(at);
            }
        };
        tell(state.offset);
        let (mut wrong, mut mismatches) = (0, 0);
        while !state.is_complete() {
            check_cancel(cancel.as_deref())?;
            let from = state.offset;
            match self
                .append(state, sending, compress, progress.clone(), cancel.clone())
                .await
            {
                Ok(now) => {
                    if now.offset > from {
                        link.moved();
                        wrong = 0;
                    } else if !now.is_complete() {
                        // Answered without taking a byte: wait before asking again.
                        link.pause(&Error::Unavailable("the server took no bytes".into()))
                            .await?;
                    }
                    *state = now;
                }
                Err(Error::WrongOffset { offset }) => {
                    // Another append of ours raced this one; twice in a row, wait.
                    wrong += 1;
                    if wrong > 2 {
                        link.pause(&Error::WrongOffset { offset }).await?;
                    }
                    state.offset = offset.min(state.length);
                }
                Err(e) if broken(&e) => {
                    link.pause(&e).await?;
                    let asked = state.clone();
                    *state = link.retry(|| self.upload_state(&asked)).await?;
                    if state.offset > from {
                        link.moved();
                    }
                    link.note(TransferNote::Resumed { from: state.offset });
                }
                // Each chunk was checked here before it left, so the bytes went
                // bad on the way or at the server: send them again, a few times.
                Err(Error::ChunkMismatch { offset, .. }) if mismatches < 3 => {
                    mismatches += 1;
                    state.offset = offset.min(state.length);
                }
                Err(e) => return Err(e),
            }
            tell(state.offset);
        }
        Ok(())
    }

    /// Begins an upload of a file of `size` bytes and `digest`: with its
    /// chunk list, or without one (its every byte to be sent, in order).
    async fn begin_upload(
        &self,
        target: &UploadFor,
        chunked: Option<&Chunked>,
        digest: &Digest,
        size: u64,
        key: &str,
    ) -> Result<UploadState> {
        let aim = match target {
            UploadFor::Checkout(id) => format!("checkout={id}"),
            UploadFor::Edit(id) => format!("edit={id}"),
            UploadFor::Import(path) => format!("path={}", encoded(path.as_str())),
        };
        let path = format!("/v1/uploads?{aim}&size={size}");
        let list = Bytes::from(chunked.map(Chunked::encode_list).unwrap_or_default());
        let response = self
            .send(Resend::Safe, |base| {
                let mut request = self
                    .request(base, Method::POST, &path)
                    .header(DIGEST_HEADER, digest.as_str())
                    .header(IDEMPOTENCY_KEY, key);
                if chunked.is_some() {
                    request = request.header(
                        reqwest::header::CONTENT_TYPE,
                        "application/vnd.leasedesk.chunks",
                    );
                }
                Ok(request.body(list.clone()))
            })
            .await?;
        read_answer(response).await
    }

    async fn upload_state(&self, state: &UploadState) -> Result<UploadState> {
        let path = format!("/v1/uploads/{}", state.id);
        read_answer(self.get_response(&path).await?).await
    }

    async fn cancel_upload(&self, state: &UploadState) -> Result<()> {
        let path = format!("/v1/uploads/{}", state.id);
        self.send(Resend::Safe, |base| {
            Ok(self.request(base, Method::DELETE, &path))
        })
        .await?;
        Ok(())
    }

    /// One append, from `state.offset` to the end or until the link breaks.
    async fn append(
        &self,
        state: &UploadState,
        sending: &Arc<Sending>,
        compress: bool,
        progress: Option<Progress>,
        cancel: Option<crate::backend::Cancel>,
    ) -> Result<UploadState> {
        let from = state.offset;
        let read = Arc::new(AtomicU64::new(0));
        let raw = Counted {
            inner: sending.reader(from)?,
            read: read.clone(),
        };
        let body: Pin<Box<dyn Stream<Item = std::io::Result<Bytes>> + Send>> = if compress {
            Box::pin(stream_of(zstd::stream::read::Encoder::new(
                raw, ZSTD_LEVEL,
            )?))
        } else {
            Box::pin(stream_of(raw))
        };
        let body = body.map(move |piece| {
            check_cancel(cancel.as_deref()).map_err(std::io::Error::other)?;
            if let Some(progress) = &progress {
                progress(from + read.load(Ordering::Relaxed));
            }
            piece
        });
        let body = std::sync::Mutex::new(Some(reqwest::Body::wrap_stream(body)));
        let path = format!("/v1/uploads/{}", state.id);
        let response = self
            .send(Resend::Never, |base| {
                let body = body.lock().expect("append body").take();
                let body = body.ok_or_else(|| Error::Internal("an append is sent once".into()))?;
                let mut request = self
                    .request(base, Method::PATCH, &path)
                    .header(OFFSET_HEADER, from)
                    .header(
                        reqwest::header::CONTENT_TYPE,
                        "application/offset+octet-stream",
                    );
                if compress {
                    request = request.header(reqwest::header::CONTENT_ENCODING, "zstd");
                }
                Ok(request.body(body))
            })
            .await;
        // The file's own failure, not the link's, if reading it stopped the body.
        if let Some(e) = sending.failed.lock().expect("failed").take() {
            return Err(e);
        }
        read_answer(response?).await
    }

    /// Asks `path` to take a finished upload's bytes.
    async fn use_upload<T: DeserializeOwned>(
        &self,
        path: &str,
        state: &UploadState,
        message: Option<&str>,
    ) -> Result<T> {
        let response = self
            .send(Resend::Safe, |base| {
                let mut request = self
                    .request(base, Method::POST, path)
                    .header(UPLOAD_HEADER, state.id.to_string())
                    .header(reqwest::header::CONTENT_LENGTH, 0);
                if let Some(message) = message {
                    request = request.header(MESSAGE_HEADER, encoded(message));
                }
                Ok(request)
            })
            .await?;
        read_answer(response).await
    }
}

/// An answer's JSON; a body cut off is the link's fault, not the server's.
async fn read_answer<T: DeserializeOwned>(response: reqwest::Response) -> Result<T> {
    let bytes = response
        .bytes()
        .await
        .map_err(|e| Error::Unavailable(format!("the answer was cut off: {e}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Internal(format!("the server's answer could not be read: {e}")))
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("task: {e}")))?
}

/// How an upload's bytes are chosen.
enum Plan {
    /// Not yet known: begun without a list, whose answer says what the
    /// server has for the file.
    Ask,
    /// The whole file, in order.
    Unlisted,
    /// The chunks of the file's list that the server lacks.
    Listed(Chunked),
}

/// Whether the bytes the server has for a file (`known`) could spare
/// enough of sending its `size` bytes to be worth cutting it into chunks:
/// a sixteenth of it. Below that, sending it whole costs at most that much
/// more, and cuts and hashes nothing more on either side.
fn worth_listing(known: u64, size: u64) -> bool {
    known >= size / 16
}

fn changed_while_sent() -> Error {
    Error::Invalid(
        "the file changed while it was sent: nothing was stored; check it in again".into(),
    )
}

/// Whether a local file is large enough to go as a resumable upload.
pub(super) fn goes_resumable(file: &Path) -> bool {
    std::fs::metadata(file).is_ok_and(|m| m.len() >= RESUMABLE_FROM)
}

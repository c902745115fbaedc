//! Uploads and downloads over HTTP: an upload streamed as the raw body
//! (a file read again for a retry, a stream sent once) with its digest and
//! description in our headers, progress told and cancel checked per chunk;
//! a download as a reader of the answer's body. Never buffers a whole file.

use std::pin::Pin;

use futures_util::{StreamExt, TryStreamExt};
use reqwest::{Method, RequestBuilder};
use serde::de::DeserializeOwned;
use tokio::io::AsyncRead;
use tokio_util::io::{ReaderStream, StreamReader};

use super::resumable::goes_resumable;
use super::servers::Resend;
use super::{encoded, Remote};
use crate::backend::{Cancel, Progress, Upload, UploadSource};
use crate::error::{Error, Result};
use crate::model::{check_message, CheckoutId, UploadFor};
use crate::wire::{DIGEST_HEADER, MESSAGE_HEADER};

impl Remote {
    /// Posts an upload for `target`: a local file large enough as a
    /// resumable upload of the chunks the server lacks, anything else as
    /// the raw body.
    pub(super) async fn post_file<T: DeserializeOwned>(
        &self,
        path: &str,
        target: UploadFor,
        upload: Upload,
    ) -> Result<T> {
        match &upload.source {
            UploadSource::File(file) if goes_resumable(file) => {
                let file = file.clone();
                self.post_resumable(path, target, file, upload).await
            }
            _ => self.post_upload(path, upload).await,
        }
    }

    /// [`Remote::post_file`] for check-out `id`'s `action` (`checkin`,
    /// `stage`).
    pub(super) async fn post_checkout_file<T: DeserializeOwned>(
        &self,
        id: CheckoutId,
        action: &str,
        upload: Upload,
    ) -> Result<T> {
        let at = format!("/v1/checkouts/{id}/{action}");
        self.post_file(&at, UploadFor::Checkout(id), upload).await
    }

    /// Posts an upload as the raw body. A file is read again for a retry; a
    /// stream can be sent once.
    pub(super) async fn post_upload<T: DeserializeOwned>(
        &self,
        path: &str,
        upload: Upload,
    ) -> Result<T> {
        let digest = upload.digest.clone();
        // Checked here too, so an over-long one fails before a byte is sent.
        let message = check_message(upload.message.clone())?.map(|m| encoded(&m));
        let progress = upload.progress.clone();
        let cancel = upload.cancel.clone();
        let with_digest = |mut request: RequestBuilder| {
            if let Some(d) = &digest {
                request = request.header(DIGEST_HEADER, d.as_str());
            }
            if let Some(m) = &message {
                request = request.header(MESSAGE_HEADER, m);
            }
            request
        };
        let response = match upload.source {
            UploadSource::File(file) | UploadSource::Checked(file) | UploadSource::Hashed(file) => {
                self.send(Resend::Safe, |base| {
                    // A cancelled upload is not tried again.
                    crate::backend::check_cancel(cancel.as_deref())?;
                    let opened = crate::local_file::open_to_read(&file)?;
                    let size = opened.metadata()?.len();
                    let file = tokio::fs::File::from_std(opened);
                    let stream = counted(
                        ReaderStream::with_capacity(file, 1 << 20),
                        progress.clone(),
                        cancel.clone(),
                    );
                    Ok(with_digest(self.request(base, Method::POST, path))
                        .header(reqwest::header::CONTENT_LENGTH, size)
                        .body(reqwest::Body::wrap_stream(stream)))
                })
                .await?
            }
            UploadSource::Stream(reader) => {
                let stream = counted(
                    ReaderStream::with_capacity(reader, 1 << 20),
                    progress,
                    cancel,
                );
                let body = std::sync::Mutex::new(Some(reqwest::Body::wrap_stream(stream)));
                // Its body is gone with the first try, whatever became of it.
                self.send(Resend::Never, |base| {
                    let body = body
                        .lock()
                        .expect("upload body")
                        .take()
                        .expect("a stream is sent once");
                    Ok(with_digest(self.request(base, Method::POST, path)).body(body))
                })
                .await?
            }
        };
        response
            .json()
            .await
            .map_err(|e| Error::Internal(format!("the server's answer could not be read: {e}")))
    }

    /// The body of a GET at `path`, read as it comes.
    pub(super) async fn download(&self, path: &str) -> Result<Pin<Box<dyn AsyncRead + Send>>> {
        let stream = self
            .get_response(path)
            .await?
            .bytes_stream()
            .map_err(std::io::Error::other);
        Ok(Box::pin(StreamReader::new(stream)))
    }
}

/// The body stream of an upload: tells `progress` as chunks go, and fails
/// before the next chunk once `cancel` is set, so the server stores nothing.
fn counted<R: tokio::io::AsyncRead>(
    stream: ReaderStream<R>,
    progress: Option<Progress>,
    cancel: Option<Cancel>,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> {
    let mut sent = 0u64;
    stream.map(move |chunk| {
        crate::backend::check_cancel(cancel.as_deref()).map_err(std::io::Error::other)?;
        let chunk = chunk?;
        sent += chunk.len() as u64;
        if let Some(progress) = &progress {
            progress(sent);
        }
        Ok(chunk)
    })
}

//! Downloads that go on from the byte they reached when the link breaks
//! (`Range`, with `If-Range` on the digest, so changed bytes are never
//! spliced in).

use std::pin::Pin;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::Method;
use tokio::io::AsyncRead;

use super::link::{broken, Link};
use crate::backend::Notes;
use crate::error::{Error, Result};
use crate::servers::Resend;
use crate::Remote;

impl Remote {
    /// A GET's body read as it comes, going on from the byte it reached when
    /// the link breaks (`Range`, with `If-Range` on `etag`, so changed bytes
    /// are never spliced in).
    pub(crate) fn resuming_download(
        &self,
        path: String,
        etag: String,
        start: u64,
        end: u64,
        notes: Option<Notes>,
    ) -> Pin<Box<dyn AsyncRead + Send>> {
        let remote = self.clone();
        struct Going {
            at: u64,
            body: Option<Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>>,
            link: Link,
        }
        let going = Going {
            at: start,
            body: None,
            link: Link::new(notes),
        };
        let stream = futures_util::stream::unfold(going, move |mut going| {
            let (remote, path, etag) = (remote.clone(), path.clone(), etag.clone());
            async move {
                loop {
                    if going.at >= end {
                        return None;
                    }
                    if going.body.is_none() {
                        let asked = remote.range(&path, &etag, going.at, end).await;
                        match asked {
                            Ok(body) => going.body = Some(body),
                            Err(e) if broken(&e) => {
                                if let Err(e) = going.link.pause(&e).await {
                                    return Some((Err(std::io::Error::other(e)), going));
                                }
                                continue;
                            }
                            Err(e) => return Some((Err(std::io::Error::other(e)), going)),
                        }
                    }
                    let body = going.body.as_mut().expect("a body");
                    match body.next().await {
                        Some(Ok(piece)) => {
                            let piece = piece.slice(..((end - going.at) as usize).min(piece.len()));
                            going.at += piece.len() as u64;
                            going.link.moved();
                            return Some((Ok(piece), going));
                        }
                        Some(Err(e)) => {
                            going.body = None;
                            let broke = Error::Unavailable(format!("the download broke: {e}"));
                            if let Err(e) = going.link.pause(&broke).await {
                                return Some((Err(std::io::Error::other(e)), going));
                            }
                        }
                        None if going.at < end => {
                            going.body = None;
                            let broke = Error::Unavailable("the download ended early".into());
                            if let Err(e) = going.link.pause(&broke).await {
                                return Some((Err(std::io::Error::other(e)), going));
                            }
                        }
                        None => return None,
                    }
                }
            }
        });
        Box::pin(tokio_util::io::StreamReader::new(stream))
    }

    /// The bytes `start..end` of a GET whose ETag must be `etag`.
    async fn range(
        &self,
        path: &str,
        etag: &str,
        start: u64,
        end: u64,
    ) -> Result<Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>> {
        let response = self
            .send(Resend::Safe, |base| {
                Ok(self
                    .request(base, Method::GET, path)
                    .header(reqwest::header::RANGE, format!("bytes={start}-{}", end - 1))
                    .header(reqwest::header::IF_RANGE, etag))
            })
            .await?;
        if response.status() != reqwest::StatusCode::PARTIAL_CONTENT {
            return Err(Error::Internal(format!(
                "the server answered {} to a range of {path}: its bytes changed",
                response.status()
            )));
        }
        Ok(Box::pin(response.bytes_stream()))
    }
}

//! A request body an answer left unread (a 413 past a limit, a refusal
//! before the upload) is read on and thrown away for a moment, as a
//! "lingering close". hyper closes the connection at once instead, and a
//! close with bytes still arriving sends the client a reset, which can reach
//! it before the answer does: the client then sees its request cut, never
//! the refusal. The reading is bounded in bytes and in time, so a client
//! that keeps sending is dropped as before, only later.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body::{Body as _, Frame, SizeHint};

/// At most this much of an unread body is read and thrown away...
const LINGER_BYTES: u64 = 64 << 20;
/// ...for at most this long after its answer.
const LINGER_TIME: Duration = Duration::from_secs(3);

/// A request body that, dropped before its end, is read to its end (within
/// the bounds above) by a task of its own.
pub(crate) struct Lingering {
    body: Option<Body>,
    ended: bool,
    /// The client waits for a `100 Continue` before it sends the body.
    waits_to_send: bool,
    /// The answer began to read the body (and hyper told the client to go on).
    read: bool,
}

impl Lingering {
    /// `waits_to_send`: the request said `Expect: 100-continue`.
    pub(crate) fn new(body: Body, waits_to_send: bool) -> Self {
        Self {
            body: Some(body),
            ended: false,
            waits_to_send,
            read: false,
        }
    }
}

impl http_body::Body for Lingering {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        self.read = true;
        let Some(body) = self.body.as_mut() else {
            return Poll::Ready(None);
        };
        let frame = Pin::new(body).poll_frame(cx);
        // An error ends the body too: there is nothing left to read.
        if matches!(frame, Poll::Ready(None | Some(Err(_)))) {
            self.ended = true;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.body
            .as_ref()
            .map(Body::size_hint)
            .unwrap_or_else(|| SizeHint::with_exact(0))
    }
}

impl Drop for Lingering {
    fn drop(&mut self) {
        // A client told no `100 Continue` sends no body: nothing arrives
        // to be reset, and reading would only hold the connection open.
        if self.is_end_stream() || (self.waits_to_send && !self.read) {
            return;
        }
        let (Some(body), Ok(runtime)) = (self.body.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        runtime.spawn(async move {
            let _ = tokio::time::timeout(LINGER_TIME, read_away(body)).await;
        });
    }
}

/// Reads `body` and throws it away, up to [`LINGER_BYTES`].
async fn read_away(mut body: Body) {
    let mut read = 0u64;
    while let Some(Ok(frame)) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
    {
        read += frame.data_ref().map_or(0, |data| data.len() as u64);
        if read > LINGER_BYTES {
            return;
        }
    }
}

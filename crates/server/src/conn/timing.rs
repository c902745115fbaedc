//! The guard's clocks: when a read that finds nothing gives up (header,
//! idle and stall timeouts), a write that makes no progress, and the drain
//! after a refusal. It never decides what a byte means: `head` and `body` do.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use super::head::Framing;
use super::Guarded;

impl<S> Guarded<S> {
    /// When a read that finds nothing gives up, if it does.
    pub(super) fn read_deadline(&self) -> Option<Instant> {
        match self.framing {
            Framing::Ended | Framing::Refused => None,
            Framing::Body { .. } | Framing::Chunked(_) => {
                Some(self.last_body_byte + self.limits.stall_timeout)
            }
            Framing::Head => {
                let shared = self.state.lock();
                if shared.in_flight > 0 {
                    // An answer is being made or written: hyper reads only to
                    // see whether the client hung up. Nothing either way for
                    // the idle timeout ends the stream (hyper, half-closing,
                    // still finishes the answer), so no miscount of answers
                    // can hold a connection for ever.
                    Some(self.last_progress + self.limits.idle_timeout)
                } else if let Some(started) = self.head_started {
                    // A head sent behind a slow answer is timed from its end.
                    Some(started.max(shared.idle_since) + self.limits.header_timeout)
                } else if self.heads == 0 {
                    Some(self.connected_at + self.limits.header_timeout)
                } else {
                    Some(shared.idle_since + self.limits.idle_timeout)
                }
            }
        }
    }
}

impl<S> Guarded<S> {
    /// A write that makes no progress gives up after the stall timeout.
    fn poll_progress<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match polled {
            Poll::Ready(result) => {
                self.write_stalled_since = None;
                self.last_progress = Instant::now();
                Poll::Ready(result)
            }
            Poll::Pending => {
                let since = *self.write_stalled_since.get_or_insert_with(Instant::now);
                self.write_timer
                    .as_mut()
                    .reset(since + self.limits.stall_timeout);
                match self.write_timer.as_mut().poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client took no byte of the answer in time",
                    ))),
                }
            }
        }
    }
}

impl<S: AsyncRead + Unpin> Guarded<S> {
    /// Reads and drops what the client still sends after a refusal (up to
    /// 1 MiB, for up to 2 s), so that closing with unread bytes does not
    /// reset the connection before the client has read the answer.
    fn drain_after_refusal(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        const DRAIN_BYTES: usize = 1 << 20;
        if self.drain.is_none() {
            self.drain = Some(0);
            self.read_timer
                .as_mut()
                .reset(Instant::now() + Duration::from_secs(2));
        }
        let mut scratch = [0u8; 16 << 10];
        loop {
            let drained = self.drain.unwrap_or(0);
            if drained >= DRAIN_BYTES {
                return Poll::Ready(Ok(()));
            }
            let mut part = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.socket).poll_read(cx, &mut part) {
                Poll::Ready(Ok(())) if !part.filled().is_empty() => {
                    self.drain = Some(drained + part.filled().len());
                }
                Poll::Ready(_) => return Poll::Ready(Ok(())),
                Poll::Pending => {
                    return match self.read_timer.as_mut().poll(cx) {
                        Poll::Ready(()) => Poll::Ready(Ok(())),
                        Poll::Pending => Poll::Pending,
                    }
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.socket).poll_write(cx, buf);
        this.poll_progress(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.socket).poll_write_vectored(cx, bufs);
        this.poll_progress(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.socket.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.socket).poll_flush(cx);
        this.poll_progress(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.socket).poll_shutdown(cx);
        let shut = this.poll_progress(cx, polled);
        if this.framing != Framing::Refused || shut.is_pending() {
            return shut;
        }
        this.drain_after_refusal(cx)
    }
}

//! One TCP connection of `leasedesk serve`, read through a guard before hyper
//! sees it. hyper answers a request it cannot parse with a bare status of its
//! own and has no read timeouts of ours, so the guard:
//! - reads each request head whole, within a time limit, and checks it (size,
//!   request line, headers, framing); a bad one is not handed on: hyper gets a
//!   stand-in request instead, which the connection's service answers with
//!   the API's JSON error (`Refusal`), and then the end of the stream;
//! - frames each body (Content-Length or chunked, checking chunk sizes) to
//!   find where the next head starts;
//! - drops a client that stops sending a head, a body, or stops reading its
//!   response, after the times in `Limits`.
//!
//! Its parts: `head` checks heads, `body` frames bodies, `timing` keeps the
//! clocks, `state` is what the guard shares with the connection's service.
//! It never routes a request and never answers one itself.

mod body;
mod head;
mod state;
mod timing;

pub use body::chunk_size_of;
pub use head::accepts_head;
use head::{check_head, too_large_head, too_long_uri, Chunk, Framing};
pub use state::ConnState;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::StatusCode;
use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::error::Code;

/// How long a connection may take, and how large a head may be.
#[derive(Clone, Debug)]
pub struct Limits {
    /// From a connection's start, or a head's first byte, to the head's end.
    pub header_timeout: Duration,
    /// Between requests on a kept-alive connection.
    pub idle_timeout: Duration,
    /// Longest wait for the next byte of a request body, or for the client
    /// to take the next byte of a response.
    pub stall_timeout: Duration,
    /// A request head (request line and headers): past it, 431.
    pub max_head_bytes: usize,
    /// A request target: past it, 414.
    pub max_uri_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            stall_timeout: Duration::from_secs(60),
            max_head_bytes: 64 << 10,
            max_uri_bytes: 8 << 10,
        }
    }
}

/// What hyper reads in place of a refused head: a request the connection's
/// service answers with the refusal, after which the connection closes.
const STAND_IN: &[u8] = b"GET / HTTP/1.1\r\nhost: refused\r\nconnection: close\r\n\r\n";

/// A request the guard refused, answered as the API answers errors.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: Code,
    pub message: String,
}

impl Refusal {
    fn bad(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: Code::BadRequest,
            message: message.into(),
        }
    }
}

/// A socket as hyper reads it: checked heads, framed bodies, time limits.
pub struct Guarded<S> {
    socket: S,
    limits: Limits,
    state: Arc<ConnState>,
    framing: Framing,
    /// Bytes read from the socket and not yet checked.
    raw: BytesMut,
    /// Checked bytes, for hyper.
    checked: BytesMut,
    /// An error for hyper once it has read `checked`.
    failure: Option<io::Error>,
    /// Heads handed to hyper (the stand-in included).
    heads: u64,
    /// How far `raw` was searched for the end of the head.
    searched: usize,
    connected_at: Instant,
    head_started: Option<Instant>,
    last_body_byte: Instant,
    read_timer: Pin<Box<Sleep>>,
    write_stalled_since: Option<Instant>,
    write_timer: Pin<Box<Sleep>>,
    /// Bytes drained after a refusal, once draining has begun.
    drain: Option<usize>,
    /// The trailer section read so far of a chunked body.
    trailer_bytes: usize,
    /// Blank-line bytes skipped before the head being read.
    blank_bytes: usize,
    /// When the current request's head was handed on, and its body's bytes since.
    body_started: Instant,
    body_bytes: u64,
    /// The last byte read, or written.
    last_progress: Instant,
}

/// Most bytes of blank lines accepted before a request head.
const MAX_BLANK_BYTES: usize = 64;

impl<S> Guarded<S> {
    pub fn new(socket: S, limits: Limits, state: Arc<ConnState>) -> Self {
        let now = Instant::now();
        Self {
            socket,
            limits,
            state,
            framing: Framing::Head,
            raw: BytesMut::new(),
            checked: BytesMut::new(),
            failure: None,
            heads: 0,
            searched: 0,
            connected_at: now,
            head_started: None,
            last_body_byte: now,
            read_timer: Box::pin(tokio::time::sleep_until(now)),
            write_stalled_since: None,
            write_timer: Box::pin(tokio::time::sleep_until(now)),
            drain: None,
            trailer_bytes: 0,
            blank_bytes: 0,
            body_started: now,
            body_bytes: 0,
            last_progress: now,
        }
    }

    /// Moves what can be checked from `raw` to `checked`, as far as it goes.
    fn check_raw(&mut self) {
        loop {
            match self.framing {
                Framing::Ended | Framing::Refused => {
                    self.raw.clear();
                    return;
                }
                Framing::Head => {
                    if self.head_started.is_none() {
                        // A few blank lines before a request are allowed (RFC
                        // 9112, 2.2); an endless stream of them is not a request.
                        let blank = self
                            .raw
                            .iter()
                            .take_while(|b| matches!(b, b'\r' | b'\n'))
                            .count();
                        self.raw.advance(blank);
                        self.blank_bytes += blank;
                        if self.blank_bytes > MAX_BLANK_BYTES {
                            self.refuse(Refusal::bad("too many empty lines before the request"));
                            continue;
                        }
                        if self.raw.is_empty() {
                            return;
                        }
                        self.head_started = Some(Instant::now());
                    }
                    match self.head_end() {
                        Ok(None) => return,
                        Ok(Some(end)) => {
                            let head = self.raw.split_to(end);
                            self.searched = 0;
                            self.head_started = None;
                            self.blank_bytes = 0;
                            match check_head(&head, &self.limits) {
                                Ok(framing) => {
                                    self.pass_head(&head);
                                    self.framing = framing;
                                }
                                Err(refusal) => self.refuse(refusal),
                            }
                        }
                        Err(refusal) => self.refuse(refusal),
                    }
                }
                Framing::Body { left: 0 } => self.framing = Framing::Head,
                Framing::Body { left } => {
                    if !self.pass_body(left) {
                        return;
                    }
                }
                Framing::Chunked(chunk) => match self.check_chunk(chunk) {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(message) => {
                        self.failure = Some(io::Error::new(io::ErrorKind::InvalidData, message));
                        self.framing = Framing::Ended;
                    }
                },
            }
        }
    }

    /// Where the head in `raw` ends, if it is all there.
    fn head_end(&mut self) -> Result<Option<usize>, Refusal> {
        // Search only what arrived since the last look (and the 3 bytes
        // before it), so a head sent a byte at a time costs linear time.
        let from = self.searched.saturating_sub(3);
        let end = self.raw[from..]
            .windows(2)
            .enumerate()
            .find_map(|(i, pair)| {
                let at = from + i;
                match pair {
                    b"\n\n" => Some(at + 2),
                    b"\n\r" if self.raw.get(at + 2) == Some(&b'\n') => Some(at + 3),
                    _ => None,
                }
            });
        self.searched = self.raw.len();
        if let Some(end) = end {
            return Ok(Some(end));
        }
        let line_open = !self.raw.contains(&b'\n');
        if line_open && self.raw.len() > self.limits.max_uri_bytes + 32 {
            return Err(too_long_uri(&self.limits));
        }
        if self.raw.len() > self.limits.max_head_bytes {
            return Err(too_large_head(&self.limits));
        }
        Ok(None)
    }

    fn pass_head(&mut self, head: &[u8]) {
        self.checked.extend_from_slice(head);
        self.heads += 1;
        self.state.lock().in_flight += 1;
        self.last_body_byte = Instant::now();
        self.body_started = self.last_body_byte;
        self.body_bytes = 0;
    }

    /// Hands hyper the stand-in for a refused head; nothing after it is read.
    fn refuse(&mut self, refusal: Refusal) {
        tracing::info!(status = refusal.status.as_u16(), code = %refusal.code, message = %refusal.message, "request refused before routing");
        self.state.lock().refusal = Some((self.heads, refusal));
        self.pass_head(STAND_IN);
        self.framing = Framing::Refused;
    }

    /// Gives hyper what is checked: the bytes, then a pending failure.
    fn give(&mut self, buf: &mut ReadBuf<'_>) -> Option<io::Result<()>> {
        if !self.checked.is_empty() {
            let n = self.checked.len().min(buf.remaining());
            buf.put_slice(&self.checked.split_to(n));
            return Some(Ok(()));
        }
        if let Some(failure) = self.failure.take() {
            return Some(Err(failure));
        }
        if self.framing == Framing::Ended {
            return Some(Ok(())); // the end of the stream
        }
        None
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.framing == (Framing::Body { left: 0 }) {
                this.framing = Framing::Head;
            }
            if let Some(given) = this.give(buf) {
                return Poll::Ready(given);
            }
            if this.framing == Framing::Refused {
                return Poll::Pending;
            }
            // A body's bytes go to hyper straight from the socket when nothing
            // is waiting to be checked: an upload is copied once, not twice.
            let direct = match this.framing {
                Framing::Body { left } | Framing::Chunked(Chunk::Data { left })
                    if this.raw.is_empty() && left > 0 =>
                {
                    Some(left)
                }
                _ => None,
            };
            let read = match direct {
                Some(left) => {
                    let limit = buf
                        .remaining()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    let mut part = buf.take(limit);
                    match Pin::new(&mut this.socket).poll_read(cx, &mut part) {
                        Poll::Ready(Ok(())) => {
                            let n = part.filled().len();
                            // SAFETY: `part` wrote `n` initialized bytes into `buf`'s unfilled part.
                            unsafe { buf.assume_init(n) };
                            buf.advance(n);
                            if n > 0 {
                                this.last_progress = Instant::now();
                                let rest = left - n as u64;
                                this.framing = match this.framing {
                                    Framing::Body { .. } => Framing::Body { left: rest },
                                    _ if rest == 0 => Framing::Chunked(Chunk::DataEnd),
                                    _ => Framing::Chunked(Chunk::Data { left: rest }),
                                };
                                this.body_arrived(n);
                            }
                            return Poll::Ready(Ok(()));
                        }
                        other => other.map(|r| r.map(|_| 0)),
                    }
                }
                None => {
                    let mut chunk = [0u8; 16 << 10];
                    let mut part = ReadBuf::new(&mut chunk);
                    match Pin::new(&mut this.socket).poll_read(cx, &mut part) {
                        Poll::Ready(Ok(())) => {
                            let n = part.filled().len();
                            this.raw.extend_from_slice(part.filled());
                            Poll::Ready(Ok(n))
                        }
                        other => other.map(|r| r.map(|_| 0)),
                    }
                }
            };
            match read {
                Poll::Ready(Ok(0)) => {
                    // The client closed its side: hyper sees the end, and a
                    // cut-off body as such.
                    this.framing = Framing::Ended;
                    this.raw.clear();
                }
                Poll::Ready(Ok(n)) => {
                    this.last_progress = Instant::now();
                    if matches!(this.framing, Framing::Body { .. } | Framing::Chunked(_)) {
                        this.body_arrived(n);
                    }
                    this.check_raw();
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    let Some(deadline) = this.read_deadline() else {
                        return Poll::Pending;
                    };
                    this.read_timer.as_mut().reset(deadline);
                    if this.read_timer.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    if this.framing == Framing::Head {
                        // Half a head, or nothing for too long: close quietly.
                        tracing::debug!("connection dropped: no complete request in time");
                    } else {
                        this.failure = Some(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "no byte of the request body arrived for {} s",
                                this.limits.stall_timeout.as_secs()
                            ),
                        ));
                    }
                    this.framing = Framing::Ended;
                    this.raw.clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket that hands over one byte per read, then the end.
    struct Trickle(std::collections::VecDeque<u8>);

    impl AsyncRead for Trickle {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if let Some(byte) = self.0.pop_front() {
                buf.put_slice(&[byte]);
            }
            Poll::Ready(Ok(()))
        }
    }

    /// What hyper would read through the guard from `sent`, a byte at a time.
    async fn through_guard(sent: &[u8]) -> (Vec<u8>, Option<Refusal>) {
        use tokio::io::AsyncReadExt;
        let state = ConnState::new();
        let mut guard = Guarded::new(
            Trickle(sent.iter().copied().collect()),
            Limits::default(),
            state.clone(),
        );
        let mut read = Vec::new();
        // After a refusal the guard gives hyper nothing more, and no end.
        let _ =
            tokio::time::timeout(Duration::from_millis(200), guard.read_to_end(&mut read)).await;
        let refusal = state.lock().refusal.clone().map(|(_, r)| r);
        (read, refusal)
    }

    #[tokio::test]
    async fn pipelined_requests_pass_through_unchanged_a_byte_at_a_time() {
        let sent = b"GET /a HTTP/1.1\r\n\r\n\
POST /b HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello\
POST /c HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\ntrailer: t\r\n\r\n\
GET /d HTTP/1.1\n\n";
        let (read, refusal) = through_guard(sent).await;
        assert_eq!(refusal, None);
        assert_eq!(
            String::from_utf8_lossy(&read),
            String::from_utf8_lossy(sent)
        );
    }

    #[tokio::test]
    async fn a_bad_head_after_good_ones_becomes_the_stand_in() {
        let (read, refusal) =
            through_guard(b"GET /a HTTP/1.1\r\n\r\nNOT HTTP\r\n\r\nGET /b HTTP/1.1\r\n\r\n").await;
        let expected = [&b"GET /a HTTP/1.1\r\n\r\n"[..], STAND_IN].concat();
        assert_eq!(
            String::from_utf8_lossy(&read),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(refusal.map(|r| r.status), Some(StatusCode::BAD_REQUEST));
    }

    #[tokio::test]
    async fn endless_blank_lines_are_refused() {
        let sent = "\r\n".repeat(1000) + "GET / HTTP/1.1\r\n\r\n";
        let (read, refusal) = through_guard(sent.as_bytes()).await;
        assert_eq!(read, STAND_IN);
        assert_eq!(refusal.map(|r| r.status), Some(StatusCode::BAD_REQUEST));
        let (read, _) = through_guard(b"\r\n\r\nGET / HTTP/1.1\r\n\r\n").await;
        assert_eq!(read, b"GET / HTTP/1.1\r\n\r\n", "a few are skipped");
    }

    #[tokio::test]
    async fn a_malformed_chunk_fails_the_body_after_what_came_before() {
        use tokio::io::AsyncReadExt;
        let sent = b"POST /c HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\nzz\r\n";
        let mut guard = Guarded::new(
            Trickle(sent.iter().copied().collect()),
            Limits::default(),
            ConnState::new(),
        );
        let mut read = Vec::new();
        let failed = guard
            .read_to_end(&mut read)
            .await
            .expect_err("a malformed chunk");
        assert_eq!(failed.kind(), io::ErrorKind::InvalidData);
        assert!(
            read.ends_with(b"2\r\nok\r\n"),
            "{:?}",
            String::from_utf8_lossy(&read)
        );
    }

    #[tokio::test]
    async fn chunked_lines_end_only_in_crlf_as_hyper_reads_them() {
        use tokio::io::AsyncReadExt;
        for sent in [
            // A trailer section ended by a bare LF: hyper would take the
            // request behind it as trailers, the guard as a second request.
            &b"POST /c HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\nGET /x HTTP/1.1\r\n\r\n"[..],
            b"POST /c HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n",
            b"POST /c HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\n0\r\n\r\n",
            b"POST /c HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\nx: a\rb\r\n\r\n",
        ] {
            let mut guard = Guarded::new(Trickle(sent.iter().copied().collect()), Limits::default(), ConnState::new());
            let mut read = Vec::new();
            let failed = guard.read_to_end(&mut read).await;
            assert_eq!(
                failed.map_err(|e| e.kind()).err(),
                Some(io::ErrorKind::InvalidData),
                "{:?}",
                String::from_utf8_lossy(sent)
            );
        }
    }
}

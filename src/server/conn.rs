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

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::StatusCode;
use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

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

/// As many headers as hyper itself accepts, so that it never refuses a head
/// the guard let through.
const MAX_HEADERS: usize = 100;

/// What hyper reads in place of a refused head: a request the connection's
/// service answers with the refusal, after which the connection closes.
const STAND_IN: &[u8] = b"GET / HTTP/1.1\r\nhost: refused\r\nconnection: close\r\n\r\n";

/// A request the guard refused, answered as the API answers errors.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    fn bad(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "bad_request",
            message: message.into(),
        }
    }
}

/// What the guard and the connection's service share.
pub struct ConnState {
    inner: Mutex<Shared>,
}

struct Shared {
    /// Requests handed to hyper and not yet answered in full.
    in_flight: usize,
    /// When the last answer ended (or the connection began).
    idle_since: Instant,
    /// Requests the service has been given so far.
    served: u64,
    /// The number of the request that stands in for a refused head.
    refusal: Option<(u64, Refusal)>,
}

impl ConnState {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Shared {
                in_flight: 0,
                idle_since: Instant::now(),
                served: 0,
                refusal: None,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Called by the service for each request, in order: the refusal this
    /// request stands in for, if it is the stand-in.
    pub fn next_request(&self) -> Option<Refusal> {
        let mut shared = self.lock();
        let number = shared.served;
        shared.served += 1;
        match &shared.refusal {
            Some((at, _)) if *at == number => shared.refusal.take().map(|(_, r)| r),
            _ => None,
        }
    }

    /// Called for each request not read through a guard (HTTP/2's streams).
    pub fn began(&self) {
        self.lock().in_flight += 1;
    }

    /// How long no request has been in flight; `None` while one is.
    pub fn idle_for(&self) -> Option<Duration> {
        let shared = self.lock();
        (shared.in_flight == 0).then(|| shared.idle_since.elapsed())
    }

    /// Called when an answer has been written in full (or dropped).
    pub fn answered(&self) {
        let mut shared = self.lock();
        shared.in_flight = shared.in_flight.saturating_sub(1);
        shared.idle_since = Instant::now();
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Framing {
    Head,
    Body {
        left: u64,
    },
    Chunked(Chunk),
    /// After a stall or a malformed body: hyper reads the end.
    Ended,
    /// After a refusal: hyper reads nothing more (the end would make it drop
    /// the stand-in unanswered), and on closing, the client's unread bytes
    /// are drained so that the answer is not lost to a reset.
    Refused,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Chunk {
    Size,
    Data { left: u64 },
    DataEnd,
    Trailers,
}

/// Most bytes of blank lines accepted before a request head.
const MAX_BLANK_BYTES: usize = 64;

/// Slowest average a request body may arrive at, once the stall timeout has
/// passed since its head: 1 KiB/s.
const MIN_BODY_RATE: f64 = 1024.0;

/// Longest chunk-size line (size, extensions) or trailer section we accept.
const MAX_CHUNK_LINE: usize = 4 << 10;

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

    /// Counts `n` bytes of a body; past the stall timeout, a body that comes
    /// slower on average than `MIN_BODY_RATE` fails (a trickle of a byte a
    /// minute would otherwise hold its socket and temp file for ever).
    fn body_arrived(&mut self, n: usize) {
        let now = Instant::now();
        self.last_body_byte = now;
        self.body_bytes += n as u64;
        let elapsed = now.duration_since(self.body_started);
        if elapsed > self.limits.stall_timeout
            && (self.body_bytes as f64) < MIN_BODY_RATE * elapsed.as_secs_f64()
        {
            self.failure = Some(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the request body arrives slower than {} KiB/s",
                    MIN_BODY_RATE / 1024.0
                ),
            ));
            self.framing = Framing::Ended;
            self.raw.clear();
        }
    }

    /// Hands hyper the stand-in for a refused head; nothing after it is read.
    fn refuse(&mut self, refusal: Refusal) {
        tracing::info!(status = refusal.status.as_u16(), code = refusal.code, message = %refusal.message, "request refused before routing");
        self.state.lock().refusal = Some((self.heads, refusal));
        self.pass_head(STAND_IN);
        self.framing = Framing::Refused;
    }

    /// Passes up to `left` body bytes from `raw`; false when `raw` is empty.
    fn pass_body(&mut self, left: u64) -> bool {
        if self.raw.is_empty() {
            return false;
        }
        let n = (left.min(self.raw.len() as u64)) as usize;
        let body = self.raw.split_to(n);
        self.checked.extend_from_slice(&body);
        self.framing = match self.framing {
            Framing::Body { .. } => Framing::Body {
                left: left - n as u64,
            },
            Framing::Chunked(Chunk::Data { .. }) if left == n as u64 => {
                Framing::Chunked(Chunk::DataEnd)
            }
            _ => Framing::Chunked(Chunk::Data {
                left: left - n as u64,
            }),
        };
        true
    }

    /// One step of a chunked body: Ok(false) when more bytes are needed.
    fn check_chunk(&mut self, chunk: Chunk) -> Result<bool, String> {
        match chunk {
            Chunk::Data { left } => Ok(self.pass_body(left)),
            Chunk::Size => {
                let Some(line) = self.take_line()? else {
                    return Ok(false);
                };
                let size = chunk_size(&line)?;
                self.checked.extend_from_slice(&line);
                self.framing = Framing::Chunked(if size == 0 {
                    Chunk::Trailers
                } else {
                    Chunk::Data { left: size }
                });
                Ok(true)
            }
            Chunk::DataEnd => {
                let Some(line) = self.take_line()? else {
                    return Ok(false);
                };
                if &line[..] != b"\r\n" {
                    return Err("a chunk of the chunked body is longer than its size".into());
                }
                self.checked.extend_from_slice(&line);
                self.framing = Framing::Chunked(Chunk::Size);
                Ok(true)
            }
            Chunk::Trailers => {
                let Some(line) = self.take_line()? else {
                    return Ok(false);
                };
                self.trailer_bytes += line.len();
                if self.trailer_bytes > MAX_CHUNK_LINE {
                    return Err("the chunked body's trailers are too long".into());
                }
                self.checked.extend_from_slice(&line);
                if &line[..] == b"\r\n" {
                    self.framing = Framing::Head;
                    self.trailer_bytes = 0;
                }
                Ok(true)
            }
        }
    }

    /// The next line of `raw` with its CRLF, if it is all there. hyper ends
    /// each line of a chunked body only at CRLF, so anything else (a bare LF,
    /// a lone CR) is refused: read differently here and there, it would let
    /// bytes count as a body on one side and a request on the other.
    fn take_line(&mut self) -> Result<Option<BytesMut>, String> {
        let refuse = || Err("a line of the chunked body does not end in CRLF".to_owned());
        match self.raw.iter().position(|&b| b == b'\n') {
            Some(end) if end >= MAX_CHUNK_LINE => {
                Err("a line of the chunked body is too long".into())
            }
            Some(0) => refuse(),
            Some(end) => {
                let text = &self.raw[..end - 1];
                if self.raw[end - 1] != b'\r' || text.contains(&b'\r') {
                    return refuse();
                }
                Ok(Some(self.raw.split_to(end + 1)))
            }
            None if self.raw.len() >= MAX_CHUNK_LINE => {
                Err("a line of the chunked body is too long".into())
            }
            None => Ok(None),
        }
    }

    /// When a read that finds nothing gives up, if it does.
    fn read_deadline(&self) -> Option<Instant> {
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

fn too_long_uri(limits: &Limits) -> Refusal {
    Refusal {
        status: StatusCode::URI_TOO_LONG,
        code: "too_large",
        message: format!(
            "the request target is longer than {} bytes",
            limits.max_uri_bytes
        ),
    }
}

fn too_large_head(limits: &Limits) -> Refusal {
    Refusal {
        status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        code: "too_large",
        message: format!(
            "the request's headers are larger than {} bytes (or more than {MAX_HEADERS})",
            limits.max_head_bytes
        ),
    }
}

/// Checks a whole request head; says how its body is framed.
fn check_head(head: &[u8], limits: &Limits) -> Result<Framing, Refusal> {
    if head.len() > limits.max_head_bytes {
        return Err(too_large_head(limits));
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let parsed = request.parse(head);
    if let Some(target) = request.path {
        if target.len() > limits.max_uri_bytes {
            return Err(too_long_uri(limits));
        }
    }
    match parsed {
        Ok(httparse::Status::Complete(n)) if n == head.len() => {}
        Ok(_) => return Err(Refusal::bad("the request head is malformed")),
        Err(httparse::Error::TooManyHeaders) => return Err(too_large_head(limits)),
        Err(e) => {
            return Err(Refusal::bad(format!(
                "the request head is malformed: {}",
                describe(e)
            )))
        }
    }
    let target = request.path.unwrap_or_default();
    if target.parse::<axum::http::Uri>().is_err() {
        return Err(Refusal::bad("the request target is not a valid URI"));
    }
    let mut length = None;
    let mut chunked = false;
    for header in request.headers.iter() {
        if header.name.eq_ignore_ascii_case("content-length") {
            // ASCII spaces only: hyper would refuse others (e.g. U+00A0) itself.
            let value = std::str::from_utf8(header.value.trim_ascii()).unwrap_or("");
            let valid = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
            match value.parse::<u64>() {
                Ok(n) if valid && length.is_none() => length = Some(n),
                _ if length.is_some() => {
                    return Err(Refusal::bad("the request has more than one Content-Length"))
                }
                _ => return Err(Refusal::bad("the request's Content-Length is not a number")),
            }
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            let value = header.value.trim_ascii();
            if chunked || !value.eq_ignore_ascii_case(b"chunked") {
                return Err(Refusal::bad(
                    "the only transfer coding accepted is a single chunked",
                ));
            }
            chunked = true;
        }
    }
    match (length, chunked) {
        (Some(_), true) => Err(Refusal::bad(
            "the request has both Content-Length and Transfer-Encoding",
        )),
        (_, true) if request.version == Some(0) => Err(Refusal::bad(
            "HTTP/1.0 requests cannot use Transfer-Encoding",
        )),
        (_, true) => Ok(Framing::Chunked(Chunk::Size)),
        (Some(left), false) => Ok(Framing::Body { left }),
        (None, false) => Ok(Framing::Head),
    }
}

fn describe(e: httparse::Error) -> &'static str {
    match e {
        httparse::Error::HeaderName => "a header name has a character that is not allowed",
        httparse::Error::HeaderValue => {
            "a header value has a character that is not allowed (such as NUL)"
        }
        httparse::Error::NewLine => "a line does not end as HTTP requires",
        httparse::Error::Token => "the request line is not METHOD TARGET HTTP/1.1",
        httparse::Error::Version => "the HTTP version is not 1.0 or 1.1",
        httparse::Error::Status | httparse::Error::TooManyHeaders => "it cannot be read",
    }
}

/// Whether the guard lets a whole request head through (for fuzzing).
pub fn accepts_head(head: &[u8]) -> bool {
    check_head(head, &Limits::default()).is_ok()
}

/// A chunk-size line's size, if it is one (for fuzzing).
pub fn chunk_size_of(line: &[u8]) -> Option<u64> {
    chunk_size(line).ok()
}

/// The size on a chunk-size line: hex digits, then optional `;extensions`.
fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a chunk size is not text".to_owned())?;
    let text = text.trim_end_matches(['\r', '\n']);
    let digits = text
        .split(';')
        .next()
        .unwrap_or("")
        .trim_end_matches([' ', '\t']);
    let valid =
        !digits.is_empty() && digits.len() <= 16 && digits.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid {
        return Err(format!("{digits:?} is not a chunk size (hex digits)"));
    }
    u64::from_str_radix(digits, 16).map_err(|_| format!("{digits:?} is not a chunk size"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framing_of(head: &str) -> Result<Framing, Refusal> {
        check_head(head.as_bytes(), &Limits::default())
    }

    #[test]
    fn heads_are_framed_by_their_headers() {
        assert_eq!(framing_of("GET / HTTP/1.1\r\n\r\n"), Ok(Framing::Head));
        assert_eq!(
            framing_of("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
            Ok(Framing::Body { left: 5 })
        );
        assert_eq!(
            framing_of("POST / HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n"),
            Ok(Framing::Chunked(Chunk::Size))
        );
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        for head in [
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n",
            "GET /\r\n\r\n",
        ] {
            let refusal = framing_of(head).expect_err(head);
            assert_eq!(refusal.status, StatusCode::BAD_REQUEST, "{head:?}");
        }
    }

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

    #[test]
    fn chunk_sizes_are_hex_digits() {
        assert_eq!(chunk_size(b"1a\r\n"), Ok(26));
        assert_eq!(chunk_size(b"0;ext=1\r\n"), Ok(0));
        for bad in [
            &b"-5\r\n"[..],
            b"zz\r\n",
            b"\r\n",
            b"0x10\r\n",
            b"11111111111111111\r\n",
        ] {
            assert!(chunk_size(bad).is_err(), "{bad:?}");
        }
    }
}

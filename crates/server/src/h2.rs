//! HTTP/2 connections (ALPN `h2` over TLS): hyper's HTTP/2 server with bounded
//! settings, request bodies that fail when they stall, answers handed over in
//! paced pieces, idle connections closed. It never parses HTTP/1 bytes (the
//! guard in `conn` does) and never routes: it hands requests to `answer`.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::Router;

use super::answer::answer;
use super::conn::{ConnState, Limits};
use super::Closing;

/// One HTTP/2 connection. hyper's HTTP/2 server answers malformed frames
/// with protocol errors (not HTTP answers of its own), so no guard reads the
/// bytes; the settings bound what one client may ask for, a body that
/// stalls fails, the connection closes once idle for the idle timeout, and
/// it is dropped when a client stops taking an answer for the stall timeout.
pub(crate) async fn serve_h2<S>(stream: S, router: Router, limits: Limits, closing: Closing)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let state = ConnState::new();
    let io = hyper_util::rt::TokioIo::new(stream);
    let stall = limits.stall_timeout;
    let answers = Answers::default();
    let service = {
        let (state, answers) = (state.clone(), answers.clone());
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let (router, state, answers) = (router.clone(), state.clone(), answers.clone());
            let request = request.map(|body| Body::new(Stalling::new(body, stall)));
            async move {
                let begun = Begun::new(&state);
                let response = answer(router, state, request, Some(Pace::new(&answers))).await;
                begun.handed_on();
                Ok::<_, Infallible>(response)
            }
        })
    };
    let connection = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .timer(hyper_util::rt::TokioTimer::new())
        .max_concurrent_streams(H2_MAX_STREAMS)
        .max_header_list_size(limits.max_head_bytes as u32)
        .max_send_buf_size(1 << 20)
        // A peer that stops answering pings is gone: its streams end.
        .keep_alive_interval(Some(Duration::from_secs(20)))
        .keep_alive_timeout(limits.stall_timeout.min(Duration::from_secs(20)))
        .serve_connection(io, service);
    tokio::pin!(connection);
    // Whether the connection is idle (`true`) or a client stopped taking
    // an answer (`false`), looked at each second.
    let watchdog = async {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if state
                .idle_for()
                .is_some_and(|idle| idle >= limits.idle_timeout)
            {
                break true;
            }
            if answers.longest_wait().is_some_and(|wait| wait >= stall) {
                break false;
            }
        }
    };
    let served = tokio::select! {
        served = connection.as_mut() => served,
        () = closing.wait() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
        idle = watchdog => if idle {
            connection.as_mut().graceful_shutdown();
            // The close takes a ping's round trip; a peer that never answers,
            // or a stream whose headers never end, gets a header timeout.
            match tokio::time::timeout(limits.header_timeout, connection.as_mut()).await {
                Ok(served) => served,
                Err(_) => Ok(()),
            }
        } else {
            tracing::debug!("an HTTP/2 client stopped taking its answer: connection dropped");
            Ok(())
        }
    };
    if let Err(e) = served {
        tracing::debug!(error = %e, "HTTP/2 connection ended");
    }
}

/// An HTTP/2 request counted in flight until its answer is made, so one
/// whose stream is reset before then does not keep the connection from
/// ever being idle.
struct Begun(Option<Arc<ConnState>>);

impl Begun {
    fn new(state: &Arc<ConnState>) -> Self {
        state.began();
        Self(Some(state.clone()))
    }

    /// The answer's body tells its end from now on.
    fn handed_on(mut self) {
        self.0 = None;
    }
}

impl Drop for Begun {
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            state.answered();
        }
    }
}

/// An HTTP/2 request body that fails once no frame has come for the stall
/// timeout (HTTP/1's guard does this for its bodies), so a client that
/// stops mid-upload does not hold its stream for ever.
struct Stalling {
    body: hyper::body::Incoming,
    stall: Duration,
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The wait is timed from the handler's first read, not the request's start.
    read_yet: bool,
}

impl Stalling {
    fn new(body: hyper::body::Incoming, stall: Duration) -> Self {
        Self {
            body,
            stall,
            timer: Box::pin(tokio::time::sleep(stall)),
            read_yet: false,
        }
    }
}

impl http_body::Body for Stalling {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        use std::task::Poll;
        if !self.read_yet {
            self.read_yet = true;
            let first = tokio::time::Instant::now() + self.stall;
            self.timer.as_mut().reset(first);
        }
        match std::pin::Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + self.stall;
                self.timer.as_mut().reset(next);
                Poll::Ready(frame.map(|f| f.map_err(std::io::Error::other)))
            }
            Poll::Pending => match self.timer.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no byte of the body for {} s", self.stall.as_secs()),
                )))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The answers of one HTTP/2 connection: for each, since when it has handed
/// hyper a piece and not been asked for the next (hyper asks once the
/// client's flow-control window takes the piece).
#[derive(Clone, Default)]
struct Answers(Arc<std::sync::Mutex<Vec<std::sync::Weak<Handed>>>>);

type Handed = std::sync::Mutex<Option<tokio::time::Instant>>;

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Answers {
    fn track(&self) -> Arc<Handed> {
        let handed = Arc::new(Handed::default());
        lock(&self.0).push(Arc::downgrade(&handed));
        handed
    }

    /// The longest wait of an answer for its client (answers done are forgotten).
    fn longest_wait(&self) -> Option<Duration> {
        let mut answers = lock(&self.0);
        answers.retain(|handed| handed.strong_count() > 0);
        answers
            .iter()
            .filter_map(|handed| {
                let handed = handed.upgrade()?;
                let since = *lock(&handed);
                since
            })
            .map(|since| since.elapsed())
            .max()
    }
}

/// Largest piece of an HTTP/2 answer handed to hyper at once: a client that
/// takes less than this within the stall timeout is dropped (HTTP/1's guard
/// drops one that takes no byte).
const H2_PIECE: usize = 16 << 10;

/// How an HTTP/2 answer is handed over: in pieces, each timed until hyper
/// asks for the next (the body itself is `answer`'s).
pub(crate) struct Pace {
    piece: Bytes,
    handed: Arc<Handed>,
}

impl Pace {
    fn new(answers: &Answers) -> Self {
        Self {
            piece: Bytes::new(),
            handed: answers.track(),
        }
    }

    /// The next piece of `body`'s answer.
    pub(crate) fn poll_piece(
        &mut self,
        body: &mut Body,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        use http_body::Body as _;
        use std::task::{ready, Poll};
        *lock(&self.handed) = None;
        if self.piece.is_empty() {
            match ready!(std::pin::Pin::new(body).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => self.piece = data,
                    Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
                },
                other => return Poll::Ready(other),
            }
        }
        let size = self.piece.len().min(H2_PIECE);
        let piece = self.piece.split_to(size);
        *lock(&self.handed) = Some(tokio::time::Instant::now());
        Poll::Ready(Some(Ok(http_body::Frame::data(piece))))
    }

    /// Whether no piece is held back.
    pub(crate) fn is_empty(&self) -> bool {
        self.piece.is_empty()
    }

    /// The body's `inner` size hint, with the piece held back.
    pub(crate) fn size_hint(&self, inner: http_body::SizeHint) -> http_body::SizeHint {
        let held = self.piece.len() as u64;
        let mut hint = http_body::SizeHint::new();
        hint.set_lower(inner.lower() + held);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + held);
        }
        hint
    }
}

/// Streams one HTTP/2 client may have open at once.
const H2_MAX_STREAMS: u32 = 64;

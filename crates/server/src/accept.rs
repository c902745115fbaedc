//! The accept loops: the API's (a connection cap answered with 503, TLS
//! handshakes, HTTP/1.1 through the guard or HTTP/2, a bounded shutdown) and
//! the metrics scrape's. It never routes and never reads a request's bytes
//! itself: the guard (`conn`) and hyper do.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::answer::answer;
use super::conn::{ConnState, Guarded, Limits};
use super::h2::serve_h2;
use super::linger::Lingering;
use super::{tls, Closing, ServeConfig};
use crate::error::Code;

/// Accepts on `listener` until `shutdown`, each connection served by
/// `router` (see [`super::run_with`] for the shutdown).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    closing: watch::Receiver<bool>,
    close: watch::Sender<bool>,
    config: ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let acceptors = config
        .tls
        .as_ref()
        .map(|tls| (tls.acceptor(true), tls.acceptor(false)));
    // Handlers that write this server's own URLs (Git LFS's actions) read it.
    let router = router.layer(axum::Extension(Scheme(match acceptors {
        Some(_) => "https",
        None => "http",
    })));
    let mut connections = JoinSet::new();
    let cap = config.max_connections;
    let serve_one =
        |socket: TcpStream, slot: Option<OwnedSemaphorePermit>, connections: &mut JoinSet<()>| {
            let _ = socket.set_nodelay(true);
            match slot {
                Some(slot) => {
                    // Handlers that count by address (failed invite redeems) read it here.
                    let peer = socket.peer_addr().ok().map(|a| PeerAddress(a.ip()));
                    let (router, limits, closing) = (
                        router.clone().layer(axum::Extension(peer)),
                        config.limits.clone(),
                        Closing(closing.clone()),
                    );
                    let acceptor = acceptors.as_ref().map(|(both, _)| both.clone());
                    connections.spawn(async move {
                        match acceptor {
                            None => serve_connection(socket, router, limits, closing).await,
                            Some(acceptor) => {
                                serve_tls(acceptor, socket, router, limits, closing).await
                            }
                        }
                        drop(slot);
                    });
                }
                None => {
                    if let Some(metrics) = &config.metrics {
                        metrics.connection_refused();
                    }
                    let acceptor = acceptors.as_ref().map(|(_, http1)| http1.clone());
                    connections.spawn(async move {
                        match acceptor {
                            None => refuse_connection(socket, cap).await,
                            Some(acceptor) => {
                                // A short handshake, so the refusal is readable.
                                let handshake = tokio::time::timeout(
                                    Duration::from_secs(1),
                                    acceptor.accept(socket),
                                );
                                if let Ok(Ok(socket)) = handshake.await {
                                    refuse_connection(socket, cap).await;
                                }
                            }
                        }
                    });
                }
            }
        };
    accept_until(&listener, cap, shutdown, &mut connections, serve_one).await;
    drop(listener);
    let _ = close.send(true);
    let finished = tokio::time::timeout(config.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if finished.is_err() {
        tracing::warn!(
            connections = connections.len(),
            "requests still running after the shutdown grace were dropped"
        );
        connections.shutdown().await;
    }
}

/// How this server is reached: `http` or `https`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scheme(pub(crate) &'static str);

/// The address a connection came from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerAddress(pub(crate) std::net::IpAddr);

/// The loop both servers share: accepts until `shutdown`, handing each
/// socket to `serve_one` with a slot, or with none past `cap` connections
/// at once; reaps the connections that ended meanwhile.
async fn accept_until(
    listener: &TcpListener,
    cap: usize,
    shutdown: impl Future<Output = ()>,
    connections: &mut JoinSet<()>,
    mut serve_one: impl FnMut(TcpStream, Option<OwnedSemaphorePermit>, &mut JoinSet<()>),
) {
    let slots = Arc::new(Semaphore::new(cap.max(1)));
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => {
                    serve_one(socket, slots.clone().try_acquire_owned().ok(), connections);
                }
                Err(e) => {
                    // Out of file descriptors, most likely: wait for some to close
                    // rather than spin.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// One HTTPS connection: the handshake within the header timeout (a client
/// that sends nothing holds its slot no longer than one that sends half a
/// head), then HTTP/2 or HTTP/1.1 as ALPN agreed.
async fn serve_tls(
    acceptor: tokio_rustls::TlsAcceptor,
    socket: tokio::net::TcpStream,
    router: Router,
    limits: Limits,
    closing: Closing,
) {
    let stream = match tokio::time::timeout(limits.header_timeout, acceptor.accept(socket)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!("TLS handshake not done within the header timeout");
            return;
        }
    };
    if stream.get_ref().1.alpn_protocol() == Some(tls::H2) {
        serve_h2(stream, router, limits, closing).await;
    } else {
        serve_connection(stream, router, limits, closing).await;
    }
}

/// One connection: HTTP/1.1 through the guard, until the client leaves, a
/// limit drops it, or shutdown (which lets a request in flight finish).
async fn serve_connection<S>(socket: S, router: Router, limits: Limits, closing: Closing)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let state = ConnState::new();
    let io = hyper_util::rt::TokioIo::new(Guarded::new(socket, limits, state.clone()));
    let service =
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let (router, state) = (router.clone(), state.clone());
            // A body its answer left unread is read on a moment, so the
            // answer is not lost to a reset (see `linger`).
            let waits_to_send = request
                .headers()
                .get(axum::http::header::EXPECT)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
            let request =
                request.map(|body| Body::new(Lingering::new(Body::new(body), waits_to_send)));
            async move { Ok::<_, Infallible>(answer(router, state, request, None).await) }
        });
    // A client may close its sending side once its request is sent: it
    // still gets its answer.
    let connection = hyper::server::conn::http1::Builder::new()
        .half_close(true)
        .serve_connection(io, service);
    tokio::pin!(connection);
    let served = tokio::select! {
        served = connection.as_mut() => served,
        () = closing.wait() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = served {
        tracing::debug!(error = %e, "connection ended");
    }
}

/// Past the connection cap: a 503 in the API's JSON, and the socket closed.
async fn refuse_connection<S: tokio::io::AsyncWrite + Unpin>(mut socket: S, cap: usize) {
    use tokio::io::AsyncWriteExt;
    let body = json!({
        "error": Code::Unavailable,
        "message": format!("the server is serving its limit of {cap} connections: try again shortly"),
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncache-control: no-store\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tracing::warn!(cap, "connection refused: at the connection cap");
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        socket.write_all(answer.as_bytes()).await?;
        socket.shutdown().await
    })
    .await;
}

/// Serves the metrics scrape's `router` on `listener` until `shutdown`,
/// through the same guard as the API's connections, at most 64 at once.
pub(crate) async fn serve_metrics(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let (close, closing) = watch::channel(false);
    let mut connections = JoinSet::new();
    let serve_one = |socket, slot: Option<OwnedSemaphorePermit>, connections: &mut JoinSet<()>| {
        // Past the cap a scrape is simply not served: Prometheus tries again.
        let Some(slot) = slot else { return };
        let (router, limits, closing) = (router.clone(), limits.clone(), Closing(closing.clone()));
        connections.spawn(async move {
            serve_connection(socket, router, limits, closing).await;
            drop(slot);
        });
    };
    accept_until(&listener, 64, shutdown, &mut connections, serve_one).await;
    let _ = close.send(true);
    connections.shutdown().await;
}

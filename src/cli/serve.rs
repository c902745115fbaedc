//! `serve`: the HTTP API of a data folder (or a studio's store) on an address,
//! with its flags turned into the server's config, logs on stderr, metrics,
//! TLS reloads on SIGHUP and a graceful stop. The API itself is
//! `leasedesk::server`'s: nothing here answers a request.

use std::time::Duration;

use leasedesk::server::tls::ServerTls;
use leasedesk::server::{Limits, ServeConfig};
use leasedesk::{Bundled, Error};

use super::args::{LogFormat, ServeArgs};
use super::Target;

/// The target of the server's own log lines: the CLI's module, as before the
/// CLI was split into modules (a `LEASEDESK_LOG` filter may name it).
const LOG_TARGET: &str = "leasedesk::cli";

/// `serve`: plain HTTP only on loopback unless `--insecure-http`; the store
/// is the data folder's (a server target is refused).
pub(super) async fn run(target: &Target, flags: ServeArgs) -> Result<(), Error> {
    let ServeArgs {
        listen,
        max_upload: _,
        git_lock_hours: _,
        max_connections,
        header_timeout,
        idle_timeout,
        stall_timeout,
        shutdown_grace,
        metrics_listen,
        log_format,
        tls_cert,
        tls_key,
        insecure_http,
    } = flags;
    let tls = match (&tls_cert, &tls_key) {
        (Some(cert), Some(key)) => Some(ServerTls::load(cert, key)?),
        _ => None,
    };
    if tls.is_none() && !listen.ip().is_loopback() && !insecure_http {
        return Err(Error::Invalid(format!(
            "refusing to serve plain HTTP on {listen}, which is not a loopback address: \
             tokens would cross the network in clear. Give --tls-cert and --tls-key, \
             or --insecure-http to serve plain HTTP all the same"
        )));
    }
    let seconds = Duration::from_secs;
    let limits = Limits {
        header_timeout: seconds(header_timeout),
        idle_timeout: seconds(idle_timeout),
        stall_timeout: seconds(stall_timeout),
        ..Default::default()
    };
    let open_files = raise_open_file_limit();
    let config = ServeConfig {
        limits,
        max_connections: max_connections
            .unwrap_or((open_files.saturating_sub(64) / 2).clamp(16, 16384) as usize),
        shutdown_grace: seconds(shutdown_grace),
        metrics: None,
        tls,
    };
    serve(
        target.local("serve")?.clone(),
        listen,
        metrics_listen,
        config,
        log_format,
    )
    .await
}

/// Serves until SIGINT or SIGTERM (see `server::run_with` for what then).
/// Logs go to stderr through a writer that never blocks the server: when
/// nobody reads them, lines are dropped and counted.
async fn serve(
    store: Bundled,
    listen: std::net::SocketAddr,
    metrics_listen: Option<std::net::SocketAddr>,
    mut config: ServeConfig,
    log_format: LogFormat,
) -> Result<(), Error> {
    let (writer, _flush_on_exit) = tracing_appender::non_blocking(std::io::stderr());
    let dropped = writer.error_counter();
    let filter = tracing_subscriber::EnvFilter::try_from_env("LEASEDESK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let log = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match log_format {
        LogFormat::Text => log
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        // One object a line: level, target, and the event's fields (its
        // message among them) under "fields".
        LogFormat::Json => log.json().init(),
    }
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| Error::Invalid(format!("cannot listen on {listen}: {e}")))?;
    let address = listener.local_addr()?;
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let metrics_listener = match metrics_listen {
        Some(at) => Some(
            tokio::net::TcpListener::bind(at)
                .await
                .map_err(|e| Error::Invalid(format!("cannot listen for metrics on {at}: {e}")))?,
        ),
        None => None,
    };
    let metrics_address = metrics_listener
        .as_ref()
        .map(|listener| listener.local_addr())
        .transpose()?;
    // Tests and scripts read this line to find the port (and the next, with
    // --metrics-listen, the metrics'). Whether anyone reads them, or stdout
    // is closed later, the server goes on serving.
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let mut lines = format!("listening on {scheme}://{address}\n");
        if let Some(at) = metrics_address {
            lines.push_str(&format!("metrics on http://{at}/metrics\n"));
        }
        let _ = stdout
            .write_all(lines.as_bytes())
            .and_then(|()| stdout.flush());
    }
    let (stop_metrics, metrics_stopped) = tokio::sync::oneshot::channel::<()>();
    let metrics_server = metrics_listener.map(|listener| {
        let metrics = leasedesk::metrics::Metrics::new(store.batch_sizes());
        config.metrics = Some(metrics.clone());
        if let Some(at) = metrics_address {
            tracing::info!(target: LOG_TARGET, "serving metrics on http://{at}/metrics");
        }
        tokio::spawn(leasedesk::server::run_metrics(
            listener,
            store.clone(),
            metrics,
            config.limits.clone(),
            async {
                let _ = metrics_stopped.await;
            },
        ))
    });
    tracing::info!(
        target: LOG_TARGET,
        max_connections = config.max_connections,
        "serving on {scheme}://{address}"
    );
    if config.tls.is_none() && !address.ip().is_loopback() {
        tracing::warn!(
            target: LOG_TARGET,
            "serving plain HTTP on {address} (--insecure-http): tokens and files cross the network in clear"
        );
    }
    let reload = config
        .tls
        .clone()
        .map(|tls| tokio::spawn(reload_on_hangup(tls)));
    let count_dropped = tokio::spawn(async move {
        let mut told = 0;
        loop {
            tokio::time::sleep(Duration::from_secs(10)).await;
            let now = dropped.dropped_lines();
            if now > told {
                tracing::warn!(
                    target: LOG_TARGET,
                    dropped = now - told,
                    "log lines were dropped: nobody reads the server's output"
                );
                told = now;
            }
        }
    });
    let shutdown = async {
        terminated().await;
        tracing::info!(
            target: LOG_TARGET,
            "shutting down: ending event streams, finishing uploads in flight"
        );
    };
    leasedesk::server::run_with(listener, store, config, shutdown).await?;
    let _ = stop_metrics.send(());
    if let Some(metrics_server) = metrics_server {
        let _ = metrics_server.await;
    }
    count_dropped.abort();
    if let Some(reload) = reload {
        reload.abort();
    }
    Ok(())
}

/// On each SIGHUP, reads the certificate and key again (a renewal needs no
/// restart); a bad file is logged and the old certificate kept.
async fn reload_on_hangup(tls: std::sync::Arc<ServerTls>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = match signal(SignalKind::hangup()) {
            Ok(hangups) => hangups,
            Err(e) => {
                tracing::warn!(
                    target: LOG_TARGET,
                    error = %e,
                    "SIGHUP cannot be caught: the certificate will not reload"
                );
                return;
            }
        };
        while hangups.recv().await.is_some() {
            match tls.reload() {
                Ok(()) => tracing::info!(
                    target: LOG_TARGET,
                    "SIGHUP: reloaded the TLS certificate and key"
                ),
                Err(e) => tracing::error!(
                    target: LOG_TARGET,
                    error = %e,
                    "SIGHUP: the TLS certificate was not reloaded; still serving the previous one"
                ),
            }
        }
    }
    #[cfg(not(unix))]
    {
        // No SIGHUP here: a new certificate needs a restart.
        let _ = tls;
    }
}

/// Resolves when the process is asked to stop: Ctrl+C, SIGTERM, or on
/// Windows the console's other stop events.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    // Ctrl+C or Ctrl+Break in its console (how a script stops a process
    // group on Windows), the console closed, or the session ending.
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
        let (Ok(mut c), Ok(mut brk), Ok(mut close), Ok(mut shutdown)) =
            (ctrl_c(), ctrl_break(), ctrl_close(), ctrl_shutdown())
        else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = c.recv() => {}
            _ = brk.recv() => {}
            _ = close.recv() => {}
            _ = shutdown.recv() => {}
        }
    }
}

/// Raises this process's open-file soft limit to its hard limit (each
/// connection needs a descriptor, an upload a second), and returns the limit
/// now in force.
#[cfg(unix)]
fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write `limit`.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        let soft = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
            // macOS refuses an unlimited soft limit: OPEN_MAX is its ceiling.
            limit.rlim_cur = limit.rlim_max.min(10240);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                limit.rlim_cur = soft;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is narrower on 32-bit targets
    let limit = limit.rlim_cur as u64;
    limit
}

/// Windows has no such per-process limit on sockets.
#[cfg(not(unix))]
fn raise_open_file_limit() -> u64 {
    16384
}

//! The client: [`Remote`], the same `Backend` over HTTP to a `leasedesk
//! serve`. Server error codes come back as the same [`Error`] variants the
//! bundled engine returns (`errors`). Uploads and downloads stream
//! (`transfer`), resumable ones send only the chunks a server lacks
//! (`resumable`); idempotent requests are retried on the next of the
//! client's servers (`servers`). The event follower is `follow`.
//!
//! A client only: it never links the server, a store or blobs.

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_backend as backend;
use leasedesk_backend::chunking;
use leasedesk_files::local_file;
use leasedesk_model::{error, model, wire};
use leasedesk_trust as trust;

mod api;
mod errors;
mod follow;
mod resumable;
mod servers;
mod studio;
mod transfer;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, RequestBuilder};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

pub use crate::trust::{fingerprint, server_certificate, ServerCertificate, Trust};
pub use follow::next_message_data;
pub use servers::check_servers;

use servers::{Resend, Servers};

#[derive(Clone)]
pub struct Remote {
    http: reqwest::Client,
    servers: Arc<Servers>,
    token: String,
}

impl Remote {
    /// A client of the server at `base_url` (`http://host:port`), with a token,
    /// trusting what [`Trust::from_env`] says.
    pub fn new(base_url: &str, token: &str) -> Result<Self> {
        Self::with_trust(base_url, token, Trust::from_env())
    }

    /// A client of the servers in `servers` (URLs separated by commas, tried
    /// in order), with a token, trusting `trust` (see `crate::trust`): a
    /// CA file that cannot be read is `Invalid`; a refused certificate is
    /// `CertificateUntrusted`, or `CertificateChanged` under a pin.
    pub fn with_trust(servers: &str, token: &str, trust: Trust) -> Result<Self> {
        let servers = Arc::new(Servers::parse(servers)?);
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(trust::client_config(&trust)?)
            .connect_timeout(Duration::from_secs(10))
            // Below the server's 60 s idle timeout, so a pooled connection is
            // not reused just as the server closes it.
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| Error::Internal(format!("HTTP client: {e}")))?;
        Ok(Self {
            http,
            servers,
            token: token.to_owned(),
        })
    }

    /// The server this client uses now: the first of its list until one
    /// does not answer, then the one that answered instead.
    pub fn server(&self) -> String {
        self.servers.urls[self.servers.current.load(Ordering::Acquire)].clone()
    }

    /// Calls `f(from, to)` whenever this client (or a clone) moves from a
    /// server that did not answer to one that did.
    pub fn on_move(&self, f: impl Fn(&str, &str) + Send + Sync + 'static) {
        *self
            .servers
            .on_move
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(f));
    }

    fn request(&self, base: &str, method: Method, path: &str) -> RequestBuilder {
        let request = self.http.request(method, format!("{base}{path}"));
        match self.token.is_empty() {
            // Redeeming an invite: the one call made before a token exists.
            true => request,
            false => request.bearer_auth(&self.token),
        }
    }

    async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<T> {
        Ok(self.json_with_status(method, path, body).await?.0)
    }

    /// [`Remote::json`], with the status of the answer (201 or 200).
    async fn json_with_status<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<(T, reqwest::StatusCode)> {
        let resend = if method == Method::GET || method == Method::DELETE {
            Resend::Safe
        } else {
            Resend::IfUnsent
        };
        let response = self
            .send(resend, |base| {
                let request = self.request(base, method.clone(), path);
                Ok(match &body {
                    Some(body) => request.json(body),
                    None => request,
                })
            })
            .await?;
        let status = response.status();
        let value = response
            .json()
            .await
            .map_err(|e| Error::Internal(format!("the server's answer could not be read: {e}")))?;
        Ok((value, status))
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        self.json(Method::GET, path, None).await
    }

    async fn post<T: DeserializeOwned>(&self, path: &str, body: serde_json::Value) -> Result<T> {
        self.json(Method::POST, path, Some(body)).await
    }

    /// A GET whose answer is read as it comes (content, previews, events).
    async fn get_response(&self, path: &str) -> Result<reqwest::Response> {
        self.send(Resend::Safe, |base| {
            Ok(self.request(base, Method::GET, path))
        })
        .await
    }
}

/// A query-string value, percent-encoded.
fn encoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

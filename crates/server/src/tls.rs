//! HTTPS for `leasedesk serve`: rustls (ring, as reqwest's), TLS 1.2 and
//! 1.3, ALPN `h2` and `http/1.1`, with a certificate that SIGHUP can swap
//! while connections stay open (a bad file keeps the old one). It never
//! reads HTTP: a handshake's stream goes on to `h2` or the guard.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::error::{Error, Result};

/// The ALPN names a connection may agree on, preferred first.
pub const H2: &[u8] = b"h2";
pub const HTTP1: &[u8] = b"http/1.1";

/// The certificate and key files, and what was last read from them.
#[derive(Debug)]
pub struct ServerTls {
    cert_file: PathBuf,
    key_file: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
}

impl ServerTls {
    /// Reads the files; a missing, unreadable or mismatched pair is refused
    /// with a message naming the file.
    pub fn load(cert_file: &Path, key_file: &Path) -> Result<Arc<Self>> {
        let current = certified_key(cert_file, key_file)?;
        Ok(Arc::new(Self {
            cert_file: cert_file.to_owned(),
            key_file: key_file.to_owned(),
            current: RwLock::new(Arc::new(current)),
        }))
    }

    /// Reads both files again: new handshakes get the new certificate, and
    /// open connections keep theirs. A bad file keeps the old one.
    pub fn reload(&self) -> Result<()> {
        let fresh = certified_key(&self.cert_file, &self.key_file)?;
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(fresh);
        Ok(())
    }

    /// What the accept loop hands handshakes to: ALPN `h2` and `http/1.1`,
    /// or only `http/1.1` (for the refusal past the connection cap, which
    /// is written as HTTP/1.1).
    pub fn acceptor(self: &Arc<Self>, h2: bool) -> tokio_rustls::TlsAcceptor {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports TLS 1.2 and 1.3")
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = if h2 {
            vec![H2.to_vec(), HTTP1.to_vec()]
        } else {
            vec![HTTP1.to_vec()]
        };
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    }
}

impl ResolvesServerCert for ServerTls {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        )
    }
}

fn certified_key(cert_file: &Path, key_file: &Path) -> Result<CertifiedKey> {
    let unreadable = |file: &Path, e: &dyn std::fmt::Display| {
        Error::Invalid(format!("{} cannot be read: {e}", file.display()))
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .map_err(|e| unreadable(cert_file, &e))?
        .collect::<Result<_, _>>()
        .map_err(|e| unreadable(cert_file, &e))?;
    if chain.is_empty() {
        return Err(Error::Invalid(format!(
            "{} holds no PEM certificate (BEGIN CERTIFICATE)",
            cert_file.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| unreadable(key_file, &e))?;
    let provider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, key, &provider).map_err(|e| {
        Error::Invalid(format!(
            "the key in {} does not go with the certificate in {}: {e}",
            key_file.display(),
            cert_file.display()
        ))
    })
}

//! Which server certificates a client accepts: the system's roots plus
//! `LEASEDESK_CA_CERT`, or exactly one pinned certificate; and a look at a
//! server's certificate before trusting it (`server_certificate`). Both the
//! HTTP client (`remote`) and the PostgreSQL store take their TLS settings
//! from here; it must never depend on either.

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_model::error;

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which servers' certificates a client trusts, beyond the system's roots.
#[derive(Clone, Debug, Default)]
pub struct Trust {
    /// A PEM file of CAs to trust as well (`LEASEDESK_CA_CERT`).
    pub ca_cert: Option<std::path::PathBuf>,
    /// The SHA-256 fingerprint (lower-case hex) of a self-signed server
    /// certificate the user chose to trust; any other certificate is refused.
    pub pinned_sha256: Option<String>,
}

impl Trust {
    /// What the environment asks for: `LEASEDESK_CA_CERT`, no pin.
    pub fn from_env() -> Self {
        Self {
            // Set but empty is unset, as a shell's `LEASEDESK_CA_CERT= cmd` means.
            ca_cert: std::env::var_os("LEASEDESK_CA_CERT")
                .filter(|file| !file.is_empty())
                .map(Into::into),
            pinned_sha256: None,
        }
    }
}

/// What a server presents, as the app shows it before the user trusts it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCertificate {
    /// SHA-256 of the certificate's DER, lower-case hex without separators.
    pub sha256: String,
    /// The certificate's subject, e.g. `CN=files.studio.lan, O=Studio`.
    pub subject: String,
    /// Whether a client with the same `Trust` would accept it as it is.
    pub trusted: bool,
}

/// The one crypto provider: ring, the one reqwest's rustls is built with.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The TLS settings of a `Remote` that trusts `trust`: TLS 1.2 and 1.3,
/// ALPN `h2` then `http/1.1`.
pub fn client_config(trust: &Trust) -> Result<rustls::ClientConfig> {
    let mut config = database_config(trust)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The TLS settings of a connection that trusts `trust`, with no ALPN: a
/// PostgreSQL connection's (PostgreSQL 15 asks for TLS inside its own
/// protocol).
pub fn database_config(trust: &Trust) -> Result<rustls::ClientConfig> {
    let provider = provider();
    let verifier = verifier(trust, &provider)?;
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Internal(format!("TLS settings: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// A pin replaces every other check; without one, the system's roots plus
/// the CA file decide, with the usual name and date checks.
fn verifier(trust: &Trust, provider: &Arc<CryptoProvider>) -> Result<Arc<dyn ServerCertVerifier>> {
    if let Some(pin) = &trust.pinned_sha256 {
        return Ok(Arc::new(Pinned {
            sha256: Some(normalized_fingerprint(pin)?),
            provider: provider.clone(),
        }));
    }
    let mut roots = system_roots().clone();
    if let Some(file) = &trust.ca_cert {
        for cert in ca_file(file)? {
            roots.add(cert).map_err(|e| {
                Error::Invalid(format!(
                    "{} holds a certificate that cannot be used as a CA: {e}",
                    file.display()
                ))
            })?;
        }
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| Error::Invalid(format!("no certificate to trust: {e}")))?;
    Ok(verifier)
}

/// The operating system's trusted roots (read once per process), or
/// Mozilla's list where the system has none (a bare container).
fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let found = rustls_native_certs::load_native_certs();
        for e in &found.errors {
            tracing::debug!(error = %e, "a system root certificate could not be read");
        }
        let (added, _unusable) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        roots
    })
}

/// Every certificate in a PEM file; an unreadable file, a bad block, or none
/// at all is refused, naming the file.
fn ca_file(file: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let bad = |e: &dyn std::fmt::Display| {
        Error::Invalid(format!(
            "the CA file {} cannot be read: {e}",
            file.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(file)
        .map_err(|e| bad(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    if certs.is_empty() {
        return Err(Error::Invalid(format!(
            "the CA file {} holds no PEM certificate (BEGIN CERTIFICATE)",
            file.display()
        )));
    }
    Ok(certs)
}

/// A fingerprint as people paste it (`AB:CD:…` from openssl, or plain hex),
/// as lower-case hex.
fn normalized_fingerprint(pin: &str) -> Result<String> {
    let hex: String = pin
        .chars()
        .filter(|c| *c != ':' && !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::Invalid(format!(
            "{pin:?} is not a SHA-256 fingerprint (64 hexadecimal digits)"
        )));
    }
    Ok(hex)
}

/// SHA-256 of a certificate's DER, lower-case hex.
pub fn fingerprint(der: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, der)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The refusal of a pinned client shown another certificate; it travels
/// inside rustls' and reqwest's errors and is found again by `refusal_of`.
#[derive(Debug)]
struct Changed {
    expected: String,
    actual: String,
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let error = Error::CertificateChanged {
            expected: self.expected.clone(),
            actual: self.actual.clone(),
        };
        write!(f, "{error}")
    }
}

impl std::error::Error for Changed {}

/// Accepts exactly the certificate with the pinned fingerprint, whatever its
/// name, issuer or dates: the user trusted that certificate. Without a pin it
/// takes any certificate, so that `server_certificate` can show what a server
/// presents. Either way the handshake's signature is still checked, so only
/// the holder of the certificate's key gets through.
#[derive(Debug)]
struct Pinned {
    sha256: Option<String>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(expected) = &self.sha256 else {
            return Ok(ServerCertVerified::assertion());
        };
        let actual = fingerprint(end_entity);
        if actual == *expected {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::Other(rustls::OtherError(Arc::new(
                Changed {
                    expected: expected.clone(),
                    actual,
                },
            ))))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// How long `server_certificate` waits for the connection and the handshake.
const LOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects to the server at `url` (`https://host:port`), completes the
/// handshake without judging the certificate, and says what it is and
/// whether `trust` would accept it.
pub async fn server_certificate(url: &str, trust: &Trust) -> Result<ServerCertificate> {
    let parsed = reqwest::Url::parse(url.trim())
        .map_err(|e| Error::Invalid(format!("{url:?} is not a server URL: {e}")))?;
    if parsed.scheme() != "https" {
        return Err(Error::Invalid(format!(
            "{url} is not an https:// URL: a plain HTTP server has no certificate"
        )));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| Error::Invalid(format!("{url} names no host")))?
        .trim_matches(['[', ']'])
        .to_owned();
    let server_name: ServerName<'static> = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ServerName::IpAddress(ip.into()),
        Err(_) => {
            ServerName::try_from(host.clone()).map_err(|e| Error::Invalid(format!("{url}: {e}")))?
        }
    };
    let port = parsed.port_or_known_default().unwrap_or(443);
    let unreachable = |e: &dyn std::fmt::Display| {
        Error::Unavailable(format!("the server at {url} cannot be reached: {e}"))
    };

    let provider = provider();
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Internal(format!("TLS settings: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Pinned {
            sha256: None,
            provider: provider.clone(),
        }))
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let mut stream = tokio::time::timeout(LOOK_TIMEOUT, async {
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
        connector.connect(server_name.clone(), tcp).await
    })
    .await
    .map_err(|_| unreachable(&"no TLS handshake within 10 s"))?
    .map_err(|e| unreachable(&e))?;

    let chain: Vec<CertificateDer<'static>> = stream
        .get_ref()
        .1
        .peer_certificates()
        .unwrap_or_default()
        .iter()
        .map(|c| c.clone().into_owned())
        .collect();
    // A polite close; the answer is known whatever it does.
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        use tokio::io::AsyncWriteExt;
        stream.shutdown().await
    })
    .await;
    let (end_entity, intermediates) = chain
        .split_first()
        .ok_or_else(|| Error::Invalid(format!("the server at {url} sent no certificate")))?;
    let trusted = verifier(trust, &provider)?
        .verify_server_cert(
            end_entity,
            intermediates,
            &server_name,
            &[],
            UnixTime::now(),
        )
        .is_ok();
    Ok(ServerCertificate {
        sha256: fingerprint(end_entity),
        subject: subject_of(end_entity).unwrap_or_else(|| "(unreadable subject)".into()),
        trusted,
    })
}

/// A certificate refusal inside a request's error: the pin's `CertificateChanged`,
/// or `CertificateUntrusted` saying why; `None` for any other failure.
pub fn refusal_of(error: &(dyn std::error::Error + 'static), base: &str) -> Option<Error> {
    let mut next = Some(error);
    while let Some(e) = next {
        // io::Error's `source` skips the error it carries (often another
        // io::Error), so look inside each layer.
        let mut inner = Some(e);
        while let Some(candidate) = inner {
            if let Some(tls) = candidate.downcast_ref::<rustls::Error>() {
                return refusal_from_tls(tls, base);
            }
            inner = candidate
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .map(|carried| carried as &(dyn std::error::Error + 'static));
        }
        next = e.source();
    }
    None
}

fn refusal_from_tls(error: &rustls::Error, base: &str) -> Option<Error> {
    match error {
        rustls::Error::Other(other) => {
            other
                .0
                .downcast_ref::<Changed>()
                .map(|changed| Error::CertificateChanged {
                    expected: changed.expected.clone(),
                    actual: changed.actual.clone(),
                })
        }
        rustls::Error::InvalidCertificate(_) => Some(Error::CertificateUntrusted(format!(
            "the certificate of the server at {base} is not trusted ({error}): if it is your \
             studio's own, set LEASEDESK_CA_CERT to the PEM file of the CA that signed it"
        ))),
        _ => None,
    }
}

/// The subject of a DER certificate as `CN=…, O=…`, in the certificate's
/// order; `None` if the DER is not a certificate.
pub fn subject_of(der: &[u8]) -> Option<String> {
    let (_, certificate, _) = element(der, SEQUENCE)?;
    let (_, mut tbs, _) = element(certificate, SEQUENCE)?;
    // version [0] (optional), serial, signature algorithm, issuer, validity, subject
    if tbs.first() == Some(&0xa0) {
        tbs = element(tbs, 0xa0)?.2;
    }
    for tag in [INTEGER, SEQUENCE, SEQUENCE, SEQUENCE] {
        tbs = element(tbs, tag)?.2;
    }
    let (_, mut name, _) = element(tbs, SEQUENCE)?;
    let mut parts = Vec::new();
    while !name.is_empty() {
        let (_, mut set, rest) = element(name, SET)?;
        name = rest;
        while !set.is_empty() {
            let (_, attribute, rest) = element(set, SEQUENCE)?;
            set = rest;
            let (_, oid, value) = element(attribute, OID)?;
            let (value_tag, value, _) = any_element(value)?;
            parts.push(format!(
                "{}={}",
                attribute_name(oid),
                text_of(value_tag, value)
            ));
        }
    }
    Some(parts.join(", "))
}

const INTEGER: u8 = 0x02;
const OID: u8 = 0x06;
const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;

/// The next DER element if it has tag `tag`: (tag, content, rest).
fn element(input: &[u8], tag: u8) -> Option<(u8, &[u8], &[u8])> {
    any_element(input).filter(|(t, ..)| *t == tag)
}

/// The next DER element, whatever its (one-byte) tag.
fn any_element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    if tag & 0x1f == 0x1f {
        return None; // multi-byte tags do not occur in a certificate's name
    }
    let (&first, mut rest) = rest.split_first()?;
    let length = if first < 0x80 {
        usize::from(first)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, after) = rest.split_at(count);
        rest = after;
        bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b))
    };
    if rest.len() < length {
        return None;
    }
    let (content, rest) = rest.split_at(length);
    Some((tag, content, rest))
}

fn attribute_name(oid: &[u8]) -> String {
    match oid {
        [0x55, 0x04, 0x03] => "CN".into(),
        [0x55, 0x04, 0x06] => "C".into(),
        [0x55, 0x04, 0x07] => "L".into(),
        [0x55, 0x04, 0x08] => "ST".into(),
        [0x55, 0x04, 0x0a] => "O".into(),
        [0x55, 0x04, 0x0b] => "OU".into(),
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01] => "emailAddress".into(),
        _ => dotted(oid),
    }
}

/// An OID's DER content as `1.2.3`.
fn dotted(oid: &[u8]) -> String {
    let mut arcs = Vec::new();
    let mut value: u64 = 0;
    for (i, b) in oid.iter().enumerate() {
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.push(first);
                arcs.push(value - first * 40);
            } else {
                arcs.push(value);
            }
            value = 0;
        } else if i == oid.len() - 1 || value > u64::MAX >> 7 {
            break; // a truncated or oversized arc: show what was read
        }
    }
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// A name's value as text: the string types as they are, anything else as hex.
fn text_of(tag: u8, value: &[u8]) -> String {
    match tag {
        // UTF8String, PrintableString, IA5String, T61String (read as Latin-1 if not UTF-8)
        0x0c | 0x13 | 0x16 | 0x14 => match std::str::from_utf8(value) {
            Ok(text) => text.to_owned(),
            Err(_) => value.iter().map(|b| char::from(*b)).collect(),
        },
        // BMPString: UTF-16BE
        0x1e => char::decode_utf16(
            value
                .chunks_exact(2)
                .map(|pair| u16::from_be_bytes([pair[0], pair[1]])),
        )
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect(),
        _ => {
            let hex: String = value.iter().map(|b| format!("{b:02x}")).collect();
            format!("#{hex}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_read_as_people_paste_them() {
        let hex = "ab".repeat(32);
        let colons = vec!["AB"; 32].join(":");
        assert_eq!(normalized_fingerprint(&colons).unwrap(), hex);
        assert_eq!(normalized_fingerprint(&hex).unwrap(), hex);
        assert!(matches!(
            normalized_fingerprint("abcd"),
            Err(Error::Invalid(_))
        ));
        assert!(matches!(
            normalized_fingerprint(&"zz".repeat(32)),
            Err(Error::Invalid(_))
        ));
    }

    #[test]
    fn truncated_der_has_no_subject_and_does_not_panic() {
        let der = [0x30, 0x82, 0x01];
        assert_eq!(subject_of(&der), None);
        for len in 0..8 {
            let _ = subject_of(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x30, 0x00][..len]);
        }
    }

    #[test]
    fn oids_are_dotted() {
        assert_eq!(
            dotted(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d]),
            "1.2.840.113549"
        );
        assert_eq!(dotted(&[0x55, 0x04, 0x61]), "2.5.4.97");
    }
}

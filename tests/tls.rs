//! HTTPS end to end: a real `leasedesk serve --tls-cert/--tls-key` with
//! certificates made here by the `openssl` CLI, and real clients (the CLI,
//! `Remote`, reqwest, raw TLS and TCP sockets). This module holds what the
//! scenarios share (certificates, a served process, raw TLS clients); the
//! scenarios are in its submodules.

use std::io::{Read, Write};

use futures_util::StreamExt;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use leasedesk::backend::Backend;
use leasedesk::remote::{server_certificate, Remote, Trust};
use leasedesk::Error;
use testkit::ServeProcess;
use testkit::WithEnvironment;

mod http2;
mod serving;
mod trust;

/// Runs `openssl` in `dir`, failing the test with its stderr.
fn openssl(dir: &Path, args: &[&str]) -> String {
    let out = testkit::tool::run_ok(
        Command::new("openssl").current_dir(dir).args(args),
        "the openssl CLI (Debian's openssl package)",
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Extensions of a server certificate for this machine.
const SERVER_EXTENSIONS: &str = "subjectAltName=IP:127.0.0.1,DNS:localhost\n\
    basicConstraints=critical,CA:FALSE\n\
    keyUsage=critical,digitalSignature\n\
    extendedKeyUsage=serverAuth\n";

/// A certificate and its key, as files.
struct Pair {
    cert: PathBuf,
    key: PathBuf,
}

impl Pair {
    /// The SHA-256 fingerprint as openssl prints it, in lower-case hex.
    fn fingerprint(&self) -> String {
        let dir = self.cert.parent().unwrap();
        let printed = openssl(
            dir,
            &[
                "x509",
                "-in",
                self.cert.to_str().unwrap(),
                "-noout",
                "-fingerprint",
                "-sha256",
            ],
        );
        let (_, hex) = printed.trim().split_once('=').expect("Fingerprint=...");
        hex.replace(':', "").to_ascii_lowercase()
    }
}

/// `openssl req` with `how` and a new P-256 key: the key in `NAME.key` and in
/// `NAME.pem` a certificate (`how` has `-x509`, valid two days) or, in
/// `NAME.csr`, a request.
fn new_key(dir: &Path, how: &[&str], name: &str, subject: &str) -> Pair {
    let self_signed = how.contains(&"-x509");
    let key = format!("{name}.key");
    let out = format!("{name}.{}", if self_signed { "pem" } else { "csr" });
    let mut args = vec!["req"];
    args.extend_from_slice(how);
    args.extend([
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ]);
    args.extend(["-keyout", &key, "-out", &out, "-subj", subject]);
    if self_signed {
        args.extend(["-days", "2"]);
    }
    openssl(dir, &args);
    Pair {
        cert: dir.join(out),
        key: dir.join(key),
    }
}

/// Writes `data` to `file` and imports it through `remote` at `art/big.bin`.
async fn import_big(remote: &Remote, file: &Path, data: &[u8]) -> leasedesk::model::Artifact {
    std::fs::write(file, data).unwrap();
    let path: leasedesk::model::RepoPath = "art/big.bin".parse().unwrap();
    remote
        .import(&path, leasedesk::Upload::file(file))
        .await
        .unwrap()
}

/// A test CA, and server certificates for 127.0.0.1 / localhost it signs.
struct Certificates {
    dir: tempfile::TempDir,
    ca: Pair,
}

impl Certificates {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("ca.cnf"),
            "[req]\ndistinguished_name=dn\n[dn]\n[ca]\n\
             basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n\
             subjectKeyIdentifier=hash\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("server.ext"), SERVER_EXTENSIONS).unwrap();
        let ca = new_key(
            dir.path(),
            &["-x509", "-config", "ca.cnf", "-extensions", "ca"],
            "ca",
            "/CN=Leasedesk test CA/O=Studio",
        );
        Self { dir, ca }
    }

    /// A server certificate named `name`, signed by the CA.
    fn server(&self, name: &str) -> Pair {
        let dir = self.dir.path();
        let subject = format!("/CN=localhost/O=Studio {name}");
        let request = new_key(dir, &["-new"], name, &subject);
        let cert = format!("{name}.pem");
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                request.cert.to_str().unwrap(),
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                &cert,
            ],
        );
        Pair {
            cert: dir.join(cert),
            key: request.key,
        }
    }

    /// A self-signed server certificate (no CA), as a studio might make.
    fn self_signed(&self, name: &str) -> Pair {
        let dir = self.dir.path();
        std::fs::write(
            dir.join("self.cnf"),
            format!("[req]\ndistinguished_name=dn\n[dn]\n[server]\n{SERVER_EXTENSIONS}"),
        )
        .unwrap();
        new_key(
            dir,
            &["-x509", "-config", "self.cnf", "-extensions", "server"],
            name,
            "/CN=localhost/O=Self-signed studio",
        )
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A `leasedesk serve` over its own data folder, with alice's token.
struct Served {
    process: ServeProcess,
    /// `https://127.0.0.1:PORT` (or `http://…`).
    url: String,
    addr: String,
}

/// The CLI as someone who has not set a CA of theirs.
fn leasedesk() -> Command {
    let mut command = crate::harness::leasedesk();
    command.env_remove("LEASEDESK_CA_CERT");
    command
}

impl Served {
    fn tls(pair: &Pair, flags: &[&str]) -> Self {
        Self::start_with(|serve| serve.tls(&pair.cert, &pair.key).args(flags))
            .expect("serve started")
    }

    /// Serves on TLS with `flags`, its certificate (`server`, for
    /// `localhost`) from a new CA: the CA's files and the server.
    fn tls_from_a_new_ca(flags: &[&str]) -> (Certificates, Self) {
        let certs = Certificates::new();
        let served = Self::tls(&certs.server("server"), flags);
        (certs, served)
    }

    /// Starts serve on `listen` with `flags`; its stderr if it exits instead.
    fn start(listen: &str, flags: &[&str]) -> Result<Self, String> {
        Self::start_with(|serve| serve.listen(listen).args(flags))
    }

    fn start_with(how: impl FnOnce(testkit::Serve) -> testkit::Serve) -> Result<Self, String> {
        let cli = crate::harness::cli_in_temp_dir().env_remove("LEASEDESK_CA_CERT");
        cli.add_user("alice");
        let process = how(crate::harness::serve_logged(&cli)).start()?;
        Ok(Self {
            url: process.url.clone(),
            addr: process.addr().to_owned(),
            process,
        })
    }

    fn token(&self) -> String {
        self.process.token("alice")
    }

    fn log_text(&self) -> String {
        self.process.log_text()
    }

    /// Waits until the log has `text` (logging is asynchronous).
    fn wait_for_log(&self, text: &str) {
        self.process.wait_for_log(text);
    }

    fn hang_up(&self) {
        let pid = self.process.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success());
    }
}

/// A reqwest client that trusts only the test CA.
fn client_trusting(ca: &Path) -> reqwest::ClientBuilder {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(ca).unwrap()).unwrap();
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca)
}

fn trusting(ca: &Path) -> Trust {
    Trust {
        ca_cert: Some(ca.to_owned()),
        pinned_sha256: None,
    }
}

fn pinned(sha256: &str) -> Trust {
    Trust {
        ca_cert: None,
        pinned_sha256: Some(sha256.to_owned()),
    }
}

/// A TLS client over a raw socket, so one connection can be kept across a reload.
async fn tls_connect(
    addr: &str,
    ca: &Path,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    connect_with(addr, client_config(ca, rustls::DEFAULT_VERSIONS, None)).await
}

/// A raw TLS client's settings: trusting only `ca`, speaking `versions`,
/// offering `alpn` if given.
fn client_config(
    ca: &Path,
    versions: &[&'static rustls::SupportedProtocolVersion],
    alpn: Option<&[u8]>,
) -> rustls::ClientConfig {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(versions)
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.into_iter().map(<[u8]>::to_vec).collect();
    config
}

/// A raw TLS connection to `addr` (as `localhost`) with `config`.
async fn connect_with(
    addr: &str,
    config: rustls::ClientConfig,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect("localhost".try_into().unwrap(), tcp)
        .await
        .unwrap()
}

/// One keep-alive GET of /v1/health on `stream`: its status line.
async fn health_on(stream: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(b"GET /v1/health HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    // The health answer is small: read until its body (a JSON object) ends.
    while !answer.ends_with(b"}") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buf[..n]);
    }
    let answer = String::from_utf8(answer).unwrap();
    answer.lines().next().unwrap().to_owned()
}

fn peer_fingerprint(stream: &tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> String {
    leasedesk::remote::fingerprint(&stream.get_ref().1.peer_certificates().unwrap()[0])
}

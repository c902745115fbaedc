//! HTTPS end to end: a real `leasedesk serve --tls-cert/--tls-key` with
//! certificates made here by the `openssl` CLI, and real clients (the CLI,
//! `Remote`, reqwest, raw TLS and TCP sockets).

use std::io::{BufRead, BufReader, Read, Write};

use futures_util::StreamExt;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use leasedesk::backend::Backend;
use leasedesk::remote::{server_certificate, Remote, Trust};
use leasedesk::Error;

/// Runs `openssl` in `dir`, failing the test with its stderr.
fn openssl(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the openssl CLI (Debian's openssl package)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
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
        openssl(
            dir.path(),
            &[
                "req",
                "-x509",
                "-config",
                "ca.cnf",
                "-extensions",
                "ca",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=Leasedesk test CA/O=Studio",
            ],
        );
        let ca = Pair {
            cert: dir.path().join("ca.pem"),
            key: dir.path().join("ca.key"),
        };
        Self { dir, ca }
    }

    /// A server certificate named `name`, signed by the CA.
    fn server(&self, name: &str) -> Pair {
        let dir = self.dir.path();
        let (key, csr, cert) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
        );
        let subject = format!("/CN=localhost/O=Studio {name}");
        openssl(
            dir,
            &[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &csr,
                "-subj",
                &subject,
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
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
            key: dir.join(key),
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
        let (key, cert) = (format!("{name}.key"), format!("{name}.pem"));
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-config",
                "self.cnf",
                "-extensions",
                "server",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &cert,
                "-days",
                "2",
                "-subj",
                "/CN=localhost/O=Self-signed studio",
            ],
        );
        Pair {
            cert: dir.join(cert),
            key: dir.join(key),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A `leasedesk serve` over its own data folder, with alice's token.
struct Served {
    child: Child,
    /// `https://127.0.0.1:PORT` (or `http://…`).
    url: String,
    addr: String,
    data: PathBuf,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

fn leasedesk() -> Command {
    let mut command = crate::harness::leasedesk();
    command.env_remove("LEASEDESK_CA_CERT");
    command
}

impl Served {
    fn tls(pair: &Pair, flags: &[&str]) -> Self {
        let mut args = vec![
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            pair.cert.to_str().unwrap(),
            "--tls-key",
            pair.key.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        Self::start(&args).expect("serve started")
    }

    /// Starts serve with `args`; its stderr if it exits instead.
    fn start(args: &[&str]) -> Result<Self, String> {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let log = dir.path().join("serve.log");
        let added = leasedesk()
            .arg("--data")
            .arg(&data)
            .args(["user", "add", "alice"])
            .output()
            .unwrap();
        assert!(added.status.success());
        let mut child = leasedesk()
            .arg("--data")
            .arg(&data)
            .arg("serve")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some((scheme, addr)) = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|u| u.split_once("://"))
        else {
            let status = child.wait().unwrap();
            return Err(format!(
                "{status}: {}",
                std::fs::read_to_string(&log).unwrap()
            ));
        };
        let (scheme, addr) = (scheme.to_owned(), addr.to_owned());
        // Clients reach a wildcard address through loopback.
        let addr = addr.replace("0.0.0.0", "127.0.0.1");
        Ok(Self {
            child,
            url: format!("{scheme}://{addr}"),
            addr,
            data,
            log,
            _dir: dir,
        })
    }

    fn token(&self) -> String {
        let out = leasedesk()
            .arg("--data")
            .arg(&self.data)
            .args(["user", "token", "alice"])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .to_owned()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }

    /// Waits until the log has `text` (logging is asynchronous).
    fn wait_for_log(&self, text: &str) {
        let started = Instant::now();
        while !self.log_text().contains(text) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the log never said {text:?}: {}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn hang_up(&self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success());
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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

#[test]
fn the_cli_trusts_a_server_through_leasedesk_ca_cert_and_refuses_it_without() {
    let certs = Certificates::new();
    let served = Served::tls(&certs.server("server"), &[]);
    assert!(served.url.starts_with("https://"), "{}", served.url);
    let token = served.token();
    let ls = |ca: Option<&Path>| {
        let mut command = leasedesk();
        command
            .args(["--server", &served.url, "ls"])
            .env("LEASEDESK_TOKEN", &token);
        if let Some(ca) = ca {
            command.env("LEASEDESK_CA_CERT", ca);
        }
        let started = Instant::now();
        let out = command.output().unwrap();
        (out, started.elapsed())
    };

    let (trusted, _) = ls(Some(&certs.ca.cert));
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );

    let (refused, took) = ls(None);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("certificate") && stderr.contains("not trusted"),
        "{stderr}"
    );
    assert!(stderr.contains("LEASEDESK_CA_CERT"), "{stderr}");
    // Refused at the handshake, not retried into a wait.
    assert!(took < Duration::from_secs(5), "took {took:?}");

    let (missing, _) = ls(Some(&certs.path("no-such-ca.pem")));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no-such-ca.pem"), "{stderr}");
}

#[tokio::test]
async fn a_bad_ca_file_is_refused_naming_the_file() {
    let certs = Certificates::new();
    let garbage = certs.path("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let broken = certs.path("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\n%%%%\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let missing = certs.path("missing.pem");
    for file in [&garbage, &broken, &missing] {
        let refused = Remote::with_trust("https://127.0.0.1:1", "t", trusting(file));
        match refused {
            Err(Error::Invalid(message)) => {
                assert!(message.contains(&file.display().to_string()), "{message}")
            }
            Err(other) => panic!("{}: {other:?}", file.display()),
            Ok(_) => panic!("{} was accepted as a CA file", file.display()),
        }
    }
    // A file of several CAs (and other blocks) is fine.
    let several = certs.path("several.pem");
    let other = Certificates::new();
    let text = [
        std::fs::read_to_string(&certs.ca.cert).unwrap(),
        std::fs::read_to_string(&other.ca.key).unwrap(),
        std::fs::read_to_string(&other.ca.cert).unwrap(),
    ]
    .concat();
    std::fs::write(&several, text).unwrap();
    assert!(Remote::with_trust("https://127.0.0.1:1", "t", trusting(&several)).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_certificate_is_accepted_and_any_other_refused_as_changed() {
    let certs = Certificates::new();
    let pair = certs.self_signed("studio");
    let served = Served::tls(&pair, &[]);
    let token = served.token();
    let expected = pair.fingerprint();

    // What the app shows before the user trusts it.
    let seen = server_certificate(&served.url, &Trust::default())
        .await
        .unwrap();
    assert_eq!(seen.sha256, expected);
    assert_eq!(seen.subject, "CN=localhost, O=Self-signed studio");
    assert!(
        !seen.trusted,
        "a self-signed certificate is not trusted by default"
    );
    let seen_pinned = server_certificate(&served.url, &pinned(&expected))
        .await
        .unwrap();
    assert!(seen_pinned.trusted);
    let other = "00".repeat(32);
    assert!(
        !server_certificate(&served.url, &pinned(&other))
            .await
            .unwrap()
            .trusted
    );

    // Unpinned, the certificate is not trusted.
    let plain = Remote::with_trust(&served.url, &token, Trust::default()).unwrap();
    match plain.me().await {
        Err(Error::CertificateUntrusted(message)) => {
            assert!(message.contains("not trusted"), "{message}")
        }
        other => panic!("{other:?}"),
    }

    // The right pin (as openssl prints it, with colons and capitals) works.
    let colons: Vec<String> = expected
        .as_bytes()
        .chunks(2)
        .map(|pair| String::from_utf8(pair.to_vec()).unwrap().to_uppercase())
        .collect();
    let remote = Remote::with_trust(&served.url, &token, pinned(&colons.join(":"))).unwrap();
    assert_eq!(remote.me().await.unwrap().as_str(), "user:alice");

    // Any other certificate is refused, saying both fingerprints.
    let wrong = Remote::with_trust(&served.url, &token, pinned(&other)).unwrap();
    match wrong.me().await {
        Err(e @ Error::CertificateChanged { .. }) => {
            assert_eq!(
                e.to_string(),
                format!(
                    "the server's certificate changed: expected fingerprint {other}, got {expected}"
                )
            );
            assert_eq!(e.code(), "certificate_changed");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_certificate_reports_a_ca_signed_certificate_as_trusted_with_its_ca() {
    let certs = Certificates::new();
    let pair = certs.server("server");
    let served = Served::tls(&pair, &[]);
    let seen = server_certificate(&served.url, &trusting(&certs.ca.cert))
        .await
        .unwrap();
    assert_eq!(seen.sha256, pair.fingerprint());
    assert_eq!(seen.subject, "CN=localhost, O=Studio server");
    assert!(seen.trusted);
    // By the name in its certificate too.
    let by_name = served.url.replace("127.0.0.1", "localhost");
    assert!(
        server_certificate(&by_name, &trusting(&certs.ca.cert))
            .await
            .unwrap()
            .trusted
    );
    // Plain HTTP has no certificate to show.
    assert!(matches!(
        server_certificate(&served.url.replace("https", "http"), &Trust::default()).await,
        Err(Error::Invalid(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_and_http2_are_both_negotiated_and_answer_our_json() {
    let certs = Certificates::new();
    let served = Served::tls(&certs.server("server"), &[]);
    let token = served.token();
    for (client, version) in [
        (client_trusting(&certs.ca.cert), reqwest::Version::HTTP_2),
        (
            client_trusting(&certs.ca.cert).http1_only(),
            reqwest::Version::HTTP_11,
        ),
    ] {
        let client = client.build().unwrap();
        let me = client
            .get(format!("{}/v1/me", served.url))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(me.version(), version);
        assert_eq!(me.status(), 200);
        let body: serde_json::Value = me.json().await.unwrap();
        assert_eq!(body["participant"], "user:alice", "{body}");

        let missing = client
            .get(format!("{}/v1/no-such-endpoint", served.url))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(missing.version(), version);
        assert_eq!(missing.status(), 404);
        assert_eq!(missing.headers()["cache-control"], "no-store");
        let body: serde_json::Value = missing.json().await.unwrap();
        assert_eq!(body["error"], "not_found", "{body}");
    }
    // Remote (our client) agrees on HTTP/2 and works through it.
    let remote = Remote::with_trust(&served.url, &token, trusting(&certs.ca.cert)).unwrap();
    assert_eq!(remote.me().await.unwrap().as_str(), "user:alice");
}

#[test]
fn plain_http_off_loopback_needs_insecure_http() {
    let refused = Served::start(&["--listen", "0.0.0.0:0"])
        .err()
        .expect("plain HTTP on 0.0.0.0 was served");
    assert!(refused.contains("--insecure-http"), "{refused}");
    assert!(!refused.contains("exit status: 0"), "{refused}");

    let served = Served::start(&["--listen", "0.0.0.0:0", "--insecure-http"]).unwrap();
    assert!(served.url.starts_with("http://"), "{}", served.url);
    served.wait_for_log("--insecure-http");
    assert!(served.log_text().contains("WARN"), "{}", served.log_text());
    let mut socket = TcpStream::connect(&served.addr).unwrap();
    socket
        .write_all(b"GET /v1/health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // Loopback needs no flag.
    let local = Served::start(&["--listen", "127.0.0.1:0"]).unwrap();
    assert!(!local.log_text().contains("insecure"));
}

/// A TLS client over a raw socket, so one connection can be kept across a reload.
async fn tls_connect(
    addr: &str,
    ca: &Path,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_certificate_and_open_connections_go_on() {
    let certs = Certificates::new();
    let (a, b) = (certs.server("a"), certs.server("b"));
    // Served from files of its own, which the renewal replaces.
    let (cert, key) = (certs.path("live.pem"), certs.path("live.key"));
    std::fs::copy(&a.cert, &cert).unwrap();
    std::fs::copy(&a.key, &key).unwrap();
    let served = Served::tls(
        &Pair {
            cert: cert.clone(),
            key: key.clone(),
        },
        &[],
    );

    let mut old = tls_connect(&served.addr, &certs.ca.cert).await;
    assert_eq!(health_on(&mut old).await, "HTTP/1.1 200 OK");
    assert_eq!(peer_fingerprint(&old), a.fingerprint());

    std::fs::copy(&b.cert, &cert).unwrap();
    std::fs::copy(&b.key, &key).unwrap();
    served.hang_up();
    served.wait_for_log("reloaded the TLS certificate");

    let mut new = tls_connect(&served.addr, &certs.ca.cert).await;
    assert_eq!(peer_fingerprint(&new), b.fingerprint());
    assert_eq!(health_on(&mut new).await, "HTTP/1.1 200 OK");
    // The connection made before the reload still works, on A.
    assert_eq!(health_on(&mut old).await, "HTTP/1.1 200 OK");
    assert_eq!(peer_fingerprint(&old), a.fingerprint());

    // A bad file on reload keeps B and says why.
    std::fs::write(&cert, "half-written\n").unwrap();
    served.hang_up();
    served.wait_for_log("was not reloaded");
    let mut after = tls_connect(&served.addr, &certs.ca.cert).await;
    assert_eq!(peer_fingerprint(&after), b.fingerprint());
    assert_eq!(health_on(&mut after).await, "HTTP/1.1 200 OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_garbage_clients_of_the_tls_port_are_dropped_within_the_header_timeout() {
    let certs = Certificates::new();
    let served = Served::tls(
        &certs.server("server"),
        &["--header-timeout", "2s", "--max-connections", "5"],
    );
    // Four silent clients and one of garbage fill every slot, for at most
    // the header timeout.
    let silent: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(&served.addr).unwrap())
        .collect();
    let mut garbage = TcpStream::connect(&served.addr).unwrap();
    garbage
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let started = Instant::now();
    for mut socket in silent {
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut buf = [0u8; 64];
        match socket.read(&mut buf) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("a silent client was not dropped: {other:?}"),
        }
    }
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(4), "dropped after {waited:?}");
    // The garbage client was not served, and is gone.
    garbage
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut rest = Vec::new();
    let _ = garbage.read_to_end(&mut rest);
    assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));

    // And the server goes on serving.
    let mut fine = tls_connect(&served.addr, &certs.ca.cert).await;
    assert_eq!(health_on(&mut fine).await, "HTTP/1.1 200 OK");
}

/// A raw TLS connection that agreed on `h2`, with the client preface and
/// an empty SETTINGS frame sent, and then nothing.
async fn idle_h2(addr: &str, ca: &Path) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls::pki_types::pem::PemObject;
    use tokio::io::AsyncWriteExt;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut stream = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect("localhost".try_into().unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    stream
}

/// Reads until the server closes `stream`; how long that took.
async fn closed_within(
    stream: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    limit: Duration,
) -> Duration {
    use tokio::io::AsyncReadExt;
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => {} // SETTINGS, its ACK, GOAWAY
            Err(_) => panic!("the idle HTTP/2 connection was still open after {limit:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http2_connection_holds_a_slot_until_the_idle_timeout() {
    let certs = Certificates::new();
    let served = Served::tls(
        &certs.server("server"),
        &[
            "--idle-timeout",
            "2s",
            "--header-timeout",
            "1s",
            "--max-connections",
            "1",
        ],
    );
    let mut idle = idle_h2(&served.addr, &certs.ca.cert).await;
    // It counts against the cap: a second client is answered 503.
    let mut second = tls_connect(&served.addr, &certs.ca.cert).await;
    assert_eq!(
        health_on(&mut second).await,
        "HTTP/1.1 503 Service Unavailable"
    );
    let took = closed_within(&mut idle, Duration::from_secs(8)).await;
    assert!(took < Duration::from_secs(5), "closed after {took:?}");
    // Its slot is free again.
    let mut third = tls_connect(&served.addr, &certs.ca.cert).await;
    assert_eq!(health_on(&mut third).await, "HTTP/1.1 200 OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_upload_that_stalls_is_refused_and_stores_nothing() {
    let certs = Certificates::new();
    let served = Served::tls(&certs.server("server"), &["--stall-timeout", "2s"]);
    let token = served.token();
    let client = client_trusting(&certs.ca.cert).build().unwrap();
    // One chunk, then nothing, never the end.
    let body = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from_static(
        b"the first bytes of a large file",
    ))])
    .chain(futures_util::stream::pending());
    let started = Instant::now();
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client
            .post(format!("{}/v1/artifacts?path=art/stalled.psd", served.url))
            .bearer_auth(&token)
            .header("content-length", "1000000")
            .body(reqwest::Body::wrap_stream(body))
            .send(),
    )
    .await
    .expect("the stalled upload was not ended by the stall timeout");
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(2), "ended after {took:?}");
    // Answered in our JSON, or the stream reset: either way, not stored.
    if let Ok(answer) = answer {
        assert_eq!(answer.version(), reqwest::Version::HTTP_2);
        assert_eq!(answer.status(), 400);
        let body: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(body["error"], "bad_request", "{body}");
    }
    let listed: serde_json::Value = client
        .get(format!("{}/v1/artifacts", served.url))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["artifacts"], serde_json::json!([]), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_over_https_uploads_downloads_and_follows_events() {
    let certs = Certificates::new();
    let served = Served::tls(&certs.server("server"), &[]);
    let token = served.token();
    let remote = Remote::with_trust(&served.url, &token, trusting(&certs.ca.cert)).unwrap();
    let mut events = Box::pin(remote.follow_events(0).await.unwrap());

    // A few MiB, so the upload and the download span many frames.
    let data: Vec<u8> = (0..3 << 20).map(|i: u32| (i % 251) as u8).collect();
    let file = certs.path("upload.bin");
    std::fs::write(&file, &data).unwrap();
    let path: leasedesk::model::RepoPath = "art/big.bin".parse().unwrap();
    let artifact = remote
        .import(&path, leasedesk::Upload::file(&file))
        .await
        .unwrap();

    let mut content = remote.content(artifact.id, None).await.unwrap();
    let mut downloaded = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut content.reader, &mut downloaded)
        .await
        .unwrap();
    assert!(downloaded == data, "the download differs from the upload");

    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event within 10 s")
        .expect("the stream goes on")
        .unwrap();
    assert_eq!(event.artifact_id, Some(artifact.id));
}

#[test]
fn serve_refuses_a_missing_or_mismatched_certificate_naming_the_file() {
    let certs = Certificates::new();
    let (a, b) = (certs.server("a"), certs.server("b"));
    let missing = certs.path("missing.pem");
    let refused = Served::start(&[
        "--tls-cert",
        missing.to_str().unwrap(),
        "--tls-key",
        a.key.to_str().unwrap(),
    ])
    .err()
    .expect("served a missing certificate");
    assert!(refused.contains("missing.pem"), "{refused}");

    let refused = Served::start(&[
        "--tls-cert",
        a.cert.to_str().unwrap(),
        "--tls-key",
        b.key.to_str().unwrap(),
    ])
    .err()
    .expect("served a certificate with another's key");
    assert!(
        refused.contains("does not go with") && refused.contains("b.key"),
        "{refused}"
    );

    // A key alone is refused by the arguments.
    let refused = Served::start(&["--tls-key", a.key.to_str().unwrap()])
        .err()
        .expect("served with a key and no certificate");
    assert!(refused.contains("--tls-cert"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_1_2_and_1_3_are_both_accepted() {
    use rustls::pki_types::pem::PemObject;
    let certs = Certificates::new();
    let served = Served::tls(&certs.server("server"), &[]);
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(&certs.ca.cert).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    for (version, expected) in [
        (&rustls::version::TLS12, rustls::ProtocolVersion::TLSv1_2),
        (&rustls::version::TLS13, rustls::ProtocolVersion::TLSv1_3),
    ] {
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(&[version])
        .unwrap()
        .with_root_certificates(roots.clone())
        .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(&served.addr).await.unwrap();
        let mut stream = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect("localhost".try_into().unwrap(), tcp)
            .await
            .unwrap();
        assert_eq!(stream.get_ref().1.protocol_version(), Some(expected));
        assert_eq!(health_on(&mut stream).await, "HTTP/1.1 200 OK");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_client_that_stops_taking_its_download_is_dropped_after_the_stall_timeout() {
    let certs = Certificates::new();
    let served = Served::tls(&certs.server("server"), &["--stall-timeout", "2s"]);
    let token = served.token();
    let remote = Remote::with_trust(&served.url, &token, trusting(&certs.ca.cert)).unwrap();
    // Larger than HTTP/2's windows (a few MiB), so the server must wait for
    // the client to take it.
    let data = vec![7u8; 24 << 20];
    let file = certs.path("big.bin");
    std::fs::write(&file, &data).unwrap();
    let path: leasedesk::model::RepoPath = "art/big.bin".parse().unwrap();
    let artifact = remote
        .import(&path, leasedesk::Upload::file(&file))
        .await
        .unwrap();

    let client = client_trusting(&certs.ca.cert).build().unwrap();
    let mut download = client
        .get(format!(
            "{}/v1/artifacts/{}/content",
            served.url, artifact.id
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(download.version(), reqwest::Version::HTTP_2);
    let first = download.chunk().await.unwrap().unwrap();
    assert!(!first.is_empty());
    // The client stops reading; its window fills.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut taken = first.len();
    let rest = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match download.chunk().await {
                Ok(Some(chunk)) => taken += chunk.len(),
                Ok(None) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    })
    .await
    .expect("the download neither ended nor failed");
    assert!(
        rest.is_err() && taken < data.len(),
        "the stalled download was not dropped: {taken} bytes taken"
    );

    // Readers that keep reading are served in full, and the server goes on.
    let mut content = remote.content(artifact.id, None).await.unwrap();
    let mut downloaded = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut content.reader, &mut downloaded)
        .await
        .unwrap();
    assert_eq!(downloaded.len(), data.len());
}

/// An HTTP/2 frame: length, type, flags, stream, payload.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut frame = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    frame.extend_from_slice(&[kind, flags]);
    frame.extend_from_slice(&stream.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// Headers as HPACK literals without indexing or Huffman coding.
fn hpack(headers: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in headers {
        block.push(0x00);
        for text in [name, value] {
            assert!(text.len() < 127);
            block.push(text.len() as u8);
            block.extend_from_slice(text.as_bytes());
        }
    }
    block
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_upload_reset_by_its_client_leaves_the_connection_idle() {
    use tokio::io::AsyncWriteExt;
    let certs = Certificates::new();
    let served = Served::tls(
        &certs.server("server"),
        &["--idle-timeout", "2s", "--header-timeout", "1s"],
    );
    let token = format!("Bearer {}", served.token());
    let mut stream = idle_h2(&served.addr, &certs.ca.cert).await;
    // An upload that sends its headers and no byte of its body, so the
    // handler waits for the body; then the client cancels the stream.
    let headers = hpack(&[
        (":method", "POST"),
        (":scheme", "https"),
        (":authority", "localhost"),
        (":path", "/v1/artifacts?path=art/cancelled.psd"),
        ("authorization", &token),
        ("content-length", "1000"),
    ]);
    stream
        .write_all(&h2_frame(0x1, 0x4, 1, &headers))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stream
        .write_all(&h2_frame(0x3, 0, 1, &8u32.to_be_bytes()))
        .await
        .unwrap();
    // With nothing in flight, the idle timeout closes it.
    let took = closed_within(&mut stream, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(6), "closed after {took:?}");
}

/// A team's PostgreSQL that takes only TLS (its pg_hba refuses plain
/// connections): the store reaches it when its certificate is trusted
/// through `LEASEDESK_CA_CERT`, and without that is refused with an error
/// that names the database and says what to do.
#[test]
fn the_store_reaches_a_postgresql_that_takes_only_tls_when_its_certificate_is_trusted() {
    let certs = Certificates::new();
    let server = certs.server("postgres");
    // PostgreSQL reads a key that no one else may read, as its own user.
    let files = tempfile::tempdir().unwrap();
    let (cert, key, hba) = (
        files.path().join("server.pem"),
        files.path().join("server.key"),
        files.path().join("pg_hba.conf"),
    );
    std::fs::copy(&server.cert, &cert).unwrap();
    std::fs::copy(&server.key, &key).unwrap();
    std::fs::write(
        &hba,
        "local all all trust\n\
         hostssl all all 127.0.0.1/32 trust\n\
         hostnossl all all 127.0.0.1/32 reject\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(files.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    if crate::harness::running_as_root() {
        let chown = Command::new("chown")
            .arg("postgres:postgres")
            .arg(&key)
            .status()
            .unwrap();
        assert!(chown.success());
    }
    let cluster = crate::harness::PgCluster::start_with(&[
        "ssl=on".into(),
        format!("ssl_cert_file={}", cert.display()),
        format!("ssl_key_file={}", key.display()),
        format!("hba_file={}", hba.display()),
    ]);
    let url = cluster.database();
    let data = tempfile::tempdir().unwrap();
    let add_user = |url: &str, name: &str, ca: Option<&Path>| {
        let mut cmd = crate::harness::leasedesk();
        cmd.args(["--database", url, "--data"])
            .arg(data.path())
            .args(["user", "add", name])
            .env_remove("LEASEDESK_CA_CERT");
        if let Some(ca) = ca {
            cmd.env("LEASEDESK_CA_CERT", ca);
        }
        cmd.output().unwrap()
    };

    let refused = add_user(&url, "alice", None);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{refused:?}");
    assert!(
        stderr.contains(&url)
            && stderr.contains("certificate")
            && stderr.contains("LEASEDESK_CA_CERT"),
        "{stderr}"
    );

    let trusted = add_user(&url, "alice", Some(&certs.ca.cert));
    assert!(trusted.status.success(), "{trusted:?}");
    let required = add_user(
        &format!("{url}?sslmode=require"),
        "bob",
        Some(&certs.ca.cert),
    );
    assert!(required.status.success(), "{required:?}");
}

//! Whom a client trusts: a CA through `LEASEDESK_CA_CERT`, a pinned certificate,
//! what `server_certificate` reports, a server refusing certificates it cannot
//! use, and the store's own TLS to PostgreSQL.

use super::*;
use leasedesk::error::Code;

#[test]
fn the_cli_trusts_a_server_through_leasedesk_ca_cert_and_refuses_it_without() {
    let (certs, served) = Served::tls_from_a_new_ca(&[]);
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
            assert_eq!(e.code(), Code::CertificateChanged);
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

#[test]
fn serve_refuses_a_missing_or_mismatched_certificate_naming_the_file() {
    let certs = Certificates::new();
    let (a, b) = (certs.server("a"), certs.server("b"));
    let missing = certs.path("missing.pem");
    let refused = Served::start(
        "127.0.0.1:0",
        &[
            "--tls-cert",
            missing.to_str().unwrap(),
            "--tls-key",
            a.key.to_str().unwrap(),
        ],
    )
    .err()
    .expect("served a missing certificate");
    assert!(refused.contains("missing.pem"), "{refused}");

    let refused = Served::start(
        "127.0.0.1:0",
        &[
            "--tls-cert",
            a.cert.to_str().unwrap(),
            "--tls-key",
            b.key.to_str().unwrap(),
        ],
    )
    .err()
    .expect("served a certificate with another's key");
    assert!(
        refused.contains("does not go with") && refused.contains("b.key"),
        "{refused}"
    );

    // A key alone is refused by the arguments.
    let refused = Served::start("127.0.0.1:0", &["--tls-key", a.key.to_str().unwrap()])
        .err()
        .expect("served with a key and no certificate");
    assert!(refused.contains("--tls-cert"), "{refused}");
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
    let cluster = crate::harness::own_pg_cluster_with(&[
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

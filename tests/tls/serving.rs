//! HTTPS as served: HTTP/1.1 and HTTP/2 negotiated, TLS 1.2 and 1.3, plain HTTP
//! only on loopback, a certificate reloaded on SIGHUP, bad clients of the TLS
//! port dropped, `Remote` over HTTPS.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_and_http2_are_both_negotiated_and_answer_our_json() {
    let (certs, served) = Served::tls_from_a_new_ca(&[]);
    let token = served.token();
    for (client, version) in [
        (client_trusting(&certs.ca.cert), reqwest::Version::HTTP_2),
        (
            client_trusting(&certs.ca.cert).http1_only(),
            reqwest::Version::HTTP_11,
        ),
    ] {
        let client = client.build().unwrap();
        let get = |path: &str| {
            let request = client.get(format!("{}{path}", served.url));
            request.bearer_auth(&token).send()
        };
        let me = get("/v1/me").await.unwrap();
        assert_eq!(me.version(), version);
        assert_eq!(me.status(), 200);
        let body: serde_json::Value = me.json().await.unwrap();
        assert_eq!(body["participant"], "user:alice", "{body}");

        let missing = get("/v1/no-such-endpoint").await.unwrap();
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
    let refused = Served::start("0.0.0.0:0", &[])
        .err()
        .expect("plain HTTP on 0.0.0.0 was served");
    assert!(refused.contains("--insecure-http"), "{refused}");
    assert!(!refused.contains("exit status: 0"), "{refused}");

    let served = Served::start("0.0.0.0:0", &["--insecure-http"]).unwrap();
    assert!(served.url.starts_with("http://"), "{}", served.url);
    served.wait_for_log("--insecure-http");
    assert!(served.log_text().contains("WARN"), "{}", served.log_text());
    let answer = crate::harness::exchange(
        &served.addr,
        b"GET /v1/health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // Loopback needs no flag.
    let local = Served::start("127.0.0.1:0", &[]).unwrap();
    assert!(!local.log_text().contains("insecure"));
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
    let (certs, served) =
        Served::tls_from_a_new_ca(&["--header-timeout", "2s", "--max-connections", "5"]);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_over_https_uploads_downloads_and_follows_events() {
    let (certs, served) = Served::tls_from_a_new_ca(&[]);
    let token = served.token();
    let remote = Remote::with_trust(&served.url, &token, trusting(&certs.ca.cert)).unwrap();
    let mut events = Box::pin(remote.follow_events(0).await.unwrap());

    // A few MiB, so the upload and the download span many frames.
    let data: Vec<u8> = (0..3 << 20).map(|i: u32| (i % 251) as u8).collect();
    let artifact = import_big(&remote, &certs.path("upload.bin"), &data).await;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_1_2_and_1_3_are_both_accepted() {
    let (certs, served) = Served::tls_from_a_new_ca(&[]);
    for (version, expected) in [
        (&rustls::version::TLS12, rustls::ProtocolVersion::TLSv1_2),
        (&rustls::version::TLS13, rustls::ProtocolVersion::TLSv1_3),
    ] {
        let config = client_config(&certs.ca.cert, &[version], None);
        let mut stream = connect_with(&served.addr, config).await;
        assert_eq!(stream.get_ref().1.protocol_version(), Some(expected));
        assert_eq!(health_on(&mut stream).await, "HTTP/1.1 200 OK");
    }
}

//! HTTP/2 connections held to their limits: idle ones closed, stalled
//! uploads and downloads refused or dropped, a reset stream leaving the
//! connection usable; raw frames, so the test sends exactly what it means.

use super::*;

/// A raw TLS connection that agreed on `h2`, with the client preface and
/// an empty SETTINGS frame sent, and then nothing.
async fn idle_h2(addr: &str, ca: &Path) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    let config = client_config(ca, rustls::DEFAULT_VERSIONS, Some(b"h2"));
    let mut stream = connect_with(addr, config).await;
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
    let (certs, served) = Served::tls_from_a_new_ca(&[
        "--idle-timeout",
        "2s",
        "--header-timeout",
        "1s",
        "--max-connections",
        "1",
    ]);
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
    let (certs, served) = Served::tls_from_a_new_ca(&["--stall-timeout", "2s"]);
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
    let listed: serde_json::Value = crate::harness::json_of(
        client
            .get(format!("{}/v1/artifacts", served.url))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(listed["artifacts"], serde_json::json!([]), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_client_that_stops_taking_its_download_is_dropped_after_the_stall_timeout() {
    let (certs, served) = Served::tls_from_a_new_ca(&["--stall-timeout", "2s"]);
    let token = served.token();
    let remote = Remote::with_trust(&served.url, &token, trusting(&certs.ca.cert)).unwrap();
    // Larger than HTTP/2's windows (a few MiB), so the server must wait for
    // the client to take it.
    let data = vec![7u8; 24 << 20];
    let artifact = import_big(&remote, &certs.path("big.bin"), &data).await;

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
    let (certs, served) =
        Served::tls_from_a_new_ca(&["--idle-timeout", "2s", "--header-timeout", "1s"]);
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

//! Bad or broken requests and what they leave behind: uploads over the
//! limit or cut off, malformed bodies, reads that never lease, content with
//! its digest as ETag, retries only where a request changes nothing.

use super::*;

/// A remote fixture holding `a.psd` at `v1`, and HTTP to its server.
async fn a_server_with_a_file() -> (Fixture, Http, leasedesk::model::Artifact) {
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let a = f.import("a.psd", b"v1").await;
    (f, http, a)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_over_the_limit_is_too_large_and_stores_nothing() {
    let f = remote_fixture_with(1 << 20).await;
    let http = Http::of(&f);
    let alice = f.server.as_ref().unwrap().token("user:alice");
    let answer = http
        .post("/v1/artifacts?path=big.psd", alice, &vec![1u8; 3 << 20])
        .await;
    refused(&answer, StatusCode::PAYLOAD_TOO_LARGE, "too_large");
    assert_eq!(answer.body["limit"], 1 << 20);
    assert!(f.alice.artifacts().await.unwrap().is_empty());
    assert_eq!(
        std::fs::read_dir(f.dir.path().join("blobs/tmp"))
            .unwrap()
            .count(),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_are_400_or_422_with_a_json_error_never_500() {
    let (f, http, a) = a_server_with_a_file().await;
    let alice = f.server.as_ref().unwrap().token("user:alice");
    let checkouts = format!("/v1/artifacts/{}/checkouts", a.id);
    let long = format!("/v1/artifacts?path={}", "a".repeat(1025));
    type Case<'a> = (Method, String, Option<&'a [u8]>, StatusCode, &'a str);
    let cases: Vec<Case> = vec![
        (
            Method::POST,
            checkouts.clone(),
            Some(b"{not json"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::POST,
            checkouts.clone(),
            Some(br#"{"ttl_seconds": 60, "colour": "red"}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::POST,
            checkouts.clone(),
            Some(br#"{"ttl_seconds": "soon"}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::POST,
            checkouts.clone(),
            Some(br#"{"ttl_seconds": 604801}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            Method::GET,
            "/v1/artifacts/not-a-uuid".into(),
            None,
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/checkouts/123/checkin".into(),
            Some(b"x"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::GET,
            "/v1/events?after=minus-one".into(),
            None,
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::GET,
            "/v1/proposals?state=maybe".into(),
            None,
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/artifacts?path=..%2Fetc%2Fpasswd".into(),
            Some(b"x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            Method::POST,
            "/v1/artifacts?path=%2Fetc%2Fpasswd".into(),
            Some(b"x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            Method::POST,
            "/v1/artifacts?path=a%00b".into(),
            Some(b"x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            Method::POST,
            "/v1/artifacts?path=a%01b".into(),
            Some(b"x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            Method::POST,
            long,
            Some(b"x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            Method::POST,
            "/v1/artifacts".into(),
            Some(b"x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
        ),
        (
            Method::GET,
            "/v1/no-such-endpoint".into(),
            None,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
    ];
    for (method, path, body, status, code) in cases {
        let answer = http
            .call(method.clone(), &path, Some(alice), body.map(<[u8]>::to_vec))
            .await;
        assert_eq!(answer.status, status, "{method} {path}: {}", answer.body);
        refused(&answer, status, code);
    }
    assert_eq!(
        f.artifact(a.id).await.lease,
        None,
        "no refused request took the file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_get_acquires_or_renews_anything() {
    let (f, http, a) = a_server_with_a_file().await;
    let alice = f.server.as_ref().unwrap().token("user:alice");
    let c = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    let before = (f.all_events().await, f.artifact(a.id).await);
    for path in [
        "/v1/me".to_owned(),
        "/v1/artifacts".to_owned(),
        format!("/v1/artifacts/{}", a.id),
        format!("/v1/artifacts/{}/versions", a.id),
        format!("/v1/artifacts/{}/content", a.id),
        "/v1/checkouts?state=open".to_owned(),
        format!("/v1/checkouts/{}", c.id),
        "/v1/proposals".to_owned(),
        "/v1/events?after=0".to_owned(),
    ] {
        let answer = http.get(&path, alice).await;
        assert_eq!(
            (answer.status, answer.cache_control.as_deref()),
            (StatusCode::OK, Some("no-store")),
            "{path}"
        );
    }
    assert_eq!((f.all_events().await, f.artifact(a.id).await), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_is_streamed_with_its_digest_as_etag() {
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
    let a = f.import("a.psd", &data).await;
    let response = http
        .fetch(
            &format!("/v1/artifacts/{}/content?version=1", a.id),
            f.token("user:bob"),
        )
        .await;
    assert_eq!(
        response.headers()["etag"],
        format!("\"{}\"", digest(&data)).as_str()
    );
    assert_eq!(
        response.headers()["content-length"],
        data.len().to_string().as_str()
    );
    assert!(response.bytes().await.unwrap() == data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_cut_off_midway_stores_nothing_and_keeps_the_checkout_open() {
    let f = remote_fixture().await;
    let server = f.server.as_ref().unwrap();
    let c = import_checked_out(f.alice.as_ref(), "a.psd", b"v1").await;
    let address = server.base.trim_start_matches("http://").to_owned();
    let token = server.token("user:alice").to_owned();
    let path = format!("/v1/checkouts/{}/checkin", c.id);
    std::thread::spawn(move || {
        let mut socket = std::net::TcpStream::connect(address).unwrap();
        write!(
            socket,
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Length: 10000000\r\n\r\n"
        )
        .unwrap();
        socket.write_all(&vec![9u8; 3 << 20]).unwrap();
        // The client goes away with 7 MB still to send.
    })
    .join()
    .unwrap();
    // The server notices, drops the upload, and removes its temporary file.
    let temp = f.dir.path().join("blobs/tmp");
    let mut left = usize::MAX;
    for _ in 0..500 {
        left = std::fs::read_dir(&temp).unwrap().count();
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(left, 0, "the partial upload was removed");
    assert_eq!(
        f.alice.checkout(c.id).await.unwrap(),
        c,
        "the check-out is still open"
    );
    assert_eq!(f.artifact(c.artifact_id).await.head.version, 1);
    let done = f.alice.check_in(c.id, bytes(b"v2")).await.unwrap();
    assert!(done.result.is_some(), "and can still be checked in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_retried_when_the_server_is_not_there_yet_and_changes_are_not() {
    let f = fixture();
    let token = f.add_carol();
    let a = f.import("a.psd", b"v1").await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = leasedesk::Remote::new(&format!("http://127.0.0.1:{port}"), &token).unwrap();

    // Nobody listens: a change is not retried, and says the server is unreachable.
    let refused = client.check_out(a.id, checkout_request()).await;
    assert!(
        matches!(refused, Err(leasedesk::Error::Unavailable(_))),
        "{refused:?}"
    );
    assert_eq!(f.artifact(a.id).await.lease, None);

    // The server comes up a moment later: a read retries and gets through.
    let store = f.store.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        leasedesk::server::run(listener, store, std::future::pending()).await
    });
    let listed = client.artifacts().await.expect("the read was retried");
    assert_eq!(listed.len(), 1);
}

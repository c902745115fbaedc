//! The HTTP contract of shared/API.md, checked with a plain HTTP client against
//! a real server: statuses, error codes and bodies, headers, and what bad or
//! broken requests leave behind.

use std::io::Write;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::*;
use leasedesk::Backend;

struct Http {
    client: reqwest::Client,
    base: String,
}

struct Answer {
    status: StatusCode,
    cache_control: Option<String>,
    body: Value,
}

impl Http {
    fn of(f: &Fixture) -> Self {
        Self {
            client: reqwest::Client::new(),
            base: f.server.as_ref().expect("a remote fixture").base.clone(),
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Answer {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        let cache_control = response
            .headers()
            .get("cache-control")
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = response.bytes().await.unwrap();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Answer {
            status,
            cache_control,
            body,
        }
    }
}

/// Asserts an error answer: its status, its code, a message, and no-store.
fn refused(answer: &Answer, status: StatusCode, code: &str) {
    assert_eq!(answer.status, status, "{}", answer.body);
    assert_eq!(answer.body["error"], code, "{}", answer.body);
    assert!(
        answer.body["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{}",
        answer.body
    );
    assert_eq!(answer.cache_control.as_deref(), Some("no-store"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_status_and_error_code_of_the_api() {
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let server = f.server.as_ref().unwrap();
    let (alice, bob, admin) = (
        server.token("user:alice"),
        server.token("user:bob"),
        server.token("user:admin"),
    );
    let get = |path: &'static str, token| http.call(Method::GET, path, token, None);

    let health = get("/v1/health", None).await;
    assert_eq!(
        (health.status, &health.body),
        (StatusCode::OK, &json!({ "status": "ok" }))
    );
    assert_eq!(health.cache_control.as_deref(), Some("no-store"));
    refused(
        &get("/v1/me", None).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    refused(
        &get(
            "/v1/me",
            Some("ld_0000000000000000_000000000000000000000000000000000000000000000000"),
        )
        .await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    assert_eq!(
        get("/v1/me", Some(alice)).await.body,
        json!({ "participant": "user:alice" })
    );

    let created = http
        .call(
            Method::POST,
            "/v1/artifacts?path=brand/hero.psd",
            Some(alice),
            Some(b"v1".to_vec()),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.body["head"]["version"], 1);
    let id = created.body["id"].as_str().unwrap().to_owned();
    refused(
        &http
            .call(
                Method::POST,
                "/v1/artifacts?path=brand/hero.psd",
                Some(bob),
                Some(b"x".to_vec()),
            )
            .await,
        StatusCode::CONFLICT,
        "exists",
    );
    refused(
        &http
            .call(
                Method::GET,
                &format!("/v1/artifacts/{}", uuid::Uuid::new_v4()),
                Some(alice),
                None,
            )
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );

    let checkouts = format!("/v1/artifacts/{id}/checkouts");
    // Bob checks the file out and in with `bytes`: a new head.
    let bob_commits = |bytes: &'static [u8]| {
        let (http, checkouts) = (&http, &checkouts);
        async move {
            let opened = http.call(Method::POST, checkouts, Some(bob), None).await;
            let checkout = opened.body["id"].as_str().expect("a check-out").to_owned();
            let path = format!("/v1/checkouts/{checkout}/checkin");
            let done = http
                .call(Method::POST, &path, Some(bob), Some(bytes.to_vec()))
                .await;
            assert_eq!(done.body["result"]["outcome"], "committed", "{}", done.body);
        }
    };
    let ttl =
        |t: u64| Some(serde_json::to_vec(&json!({ "ttl_seconds": t, "note": "sky" })).unwrap());
    refused(
        &http
            .call(Method::POST, &checkouts, Some(alice), ttl(0))
            .await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid",
    );
    let checkout = http
        .call(Method::POST, &checkouts, Some(alice), ttl(60))
        .await;
    assert_eq!(checkout.status, StatusCode::CREATED, "{}", checkout.body);
    let checkout_id = checkout.body["id"].as_str().unwrap().to_owned();
    let busy = http.call(Method::POST, &checkouts, Some(bob), None).await;
    refused(&busy, StatusCode::CONFLICT, "artifact_busy");
    assert_eq!(
        (
            busy.body["lease"]["participant"].as_str(),
            busy.body["lease"]["note"].as_str()
        ),
        (Some("user:alice"), Some("sky"))
    );
    refused(
        &http
            .call(
                Method::GET,
                &format!("/v1/checkouts/{checkout_id}"),
                Some(bob),
                None,
            )
            .await,
        StatusCode::FORBIDDEN,
        "forbidden",
    );
    refused(
        &http
            .call(
                Method::POST,
                &format!("/v1/artifacts/{id}/break"),
                Some(bob),
                Some(br#"{"reason":"mine"}"#.to_vec()),
            )
            .await,
        StatusCode::FORBIDDEN,
        "forbidden",
    );

    // A stale check-in: alice's lease lapses, bob commits; alice's file becomes a proposal.
    f.advance(HOUR);
    let bobs = http.call(Method::POST, &checkouts, Some(bob), None).await;
    let bobs_id = bobs.body["id"].as_str().unwrap().to_owned();
    let committed = http
        .call(
            Method::POST,
            &format!("/v1/checkouts/{bobs_id}/checkin"),
            Some(bob),
            Some(b"v2".to_vec()),
        )
        .await;
    assert_eq!(
        (
            committed.status,
            committed.body["result"]["outcome"].as_str()
        ),
        (StatusCode::OK, Some("committed"))
    );
    let stale = http
        .call(
            Method::POST,
            &format!("/v1/checkouts/{checkout_id}/checkin"),
            Some(alice),
            Some(b"alice".to_vec()),
        )
        .await;
    assert_eq!(
        stale.body["result"]["outcome"], "proposal",
        "{}",
        stale.body
    );
    let proposal_id = stale.body["result"]["proposal"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    refused(
        &http
            .call(
                Method::POST,
                &format!("/v1/checkouts/{checkout_id}/checkin"),
                Some(alice),
                Some(b"other".to_vec()),
            )
            .await,
        StatusCode::CONFLICT,
        "checkout_closed",
    );
    bob_commits(b"v3").await;
    let proposal_stale = http
        .call(
            Method::POST,
            &format!("/v1/proposals/{proposal_id}/accept"),
            Some(alice),
            None,
        )
        .await;
    refused(&proposal_stale, StatusCode::CONFLICT, "proposal_stale");
    assert_eq!(proposal_stale.body["head"]["version"], 3);
    let rebuilt = http
        .call(
            Method::POST,
            &format!("/v1/proposals/{proposal_id}/rebuild"),
            Some(alice),
            None,
        )
        .await;
    assert_eq!(rebuilt.status, StatusCode::CREATED);

    // An edit whose base moved: stale, with the head.
    let edit = http
        .call(
            Method::POST,
            &format!("/v1/artifacts/{id}/edits"),
            Some(alice),
            None,
        )
        .await;
    assert_eq!(edit.status, StatusCode::CREATED);
    let edit_id = edit.body["id"].as_str().unwrap().to_owned();
    http.call(
        Method::POST,
        &format!("/v1/artifacts/{id}/break"),
        Some(admin),
        Some(br#"{"reason":"urgent"}"#.to_vec()),
    )
    .await;
    bob_commits(b"v4").await;
    let stale_edit = http
        .call(
            Method::POST,
            &format!("/v1/edits/{edit_id}/commit"),
            Some(alice),
            Some(b"e".to_vec()),
        )
        .await;
    refused(&stale_edit, StatusCode::CONFLICT, "stale");
    assert_eq!(stale_edit.body["head"]["version"], 4);
    let released = http
        .call(
            Method::DELETE,
            &format!("/v1/edits/{edit_id}"),
            Some(alice),
            None,
        )
        .await;
    assert_eq!(
        (released.status, released.cache_control.as_deref()),
        (StatusCode::NO_CONTENT, Some("no-store"))
    );

    // A declared digest that does not match: 400, nothing stored.
    let wrong = f.server.as_ref().unwrap();
    let response = http
        .client
        .post(format!("{}/v1/artifacts?path=other.psd", wrong.base))
        .bearer_auth(alice)
        .header("leasedesk-digest", digest(b"meant").as_str())
        .body(b"sent".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        (body["error"].as_str(), body["actual"].as_str()),
        (Some("digest_mismatch"), Some(digest(b"sent").as_str()))
    );
    let hex = digest(b"sent").hex().to_owned();
    assert!(
        !f.dir
            .path()
            .join("blobs")
            .join(&hex[..2])
            .join(&hex)
            .exists(),
        "nothing was stored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_over_the_limit_is_too_large_and_stores_nothing() {
    let f = remote_fixture_with(1 << 20).await;
    let http = Http::of(&f);
    let alice = f.server.as_ref().unwrap().token("user:alice");
    let answer = http
        .call(
            Method::POST,
            "/v1/artifacts?path=big.psd",
            Some(alice),
            Some(vec![1u8; 3 << 20]),
        )
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
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let alice = f.server.as_ref().unwrap().token("user:alice");
    let a = f.import("a.psd", b"v1").await;
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
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let alice = f.server.as_ref().unwrap().token("user:alice");
    let a = f.import("a.psd", b"v1").await;
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
        let answer = http.call(Method::GET, &path, Some(alice), None).await;
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
        .client
        .get(format!(
            "{}/v1/artifacts/{}/content?version=1",
            http.base, a.id
        ))
        .bearer_auth(f.server.as_ref().unwrap().token("user:bob"))
        .send()
        .await
        .unwrap();
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
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
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
    assert_eq!(f.artifact(a.id).await.head.version, 1);
    let done = f.alice.check_in(c.id, bytes(b"v2")).await.unwrap();
    assert!(done.result.is_some(), "and can still be checked in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_is_generated_and_lists_every_endpoint_of_the_contract() {
    let f = remote_fixture().await;
    let http = Http::of(&f);
    refused(
        &http.call(Method::GET, "/v1/openapi.json", None, None).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    let doc = http
        .call(
            Method::GET,
            "/v1/openapi.json",
            Some(f.server.as_ref().unwrap().token("user:bob")),
            None,
        )
        .await;
    assert_eq!(doc.status, StatusCode::OK);
    assert!(
        doc.body["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.")),
        "{}",
        doc.body["openapi"]
    );
    let endpoints = [
        ("get", "/v1/health"),
        ("get", "/v1/me"),
        ("post", "/v1/artifacts"),
        ("get", "/v1/artifacts"),
        ("get", "/v1/artifacts/{id}"),
        ("get", "/v1/artifacts/{id}/versions"),
        ("get", "/v1/artifacts/{id}/content"),
        ("post", "/v1/artifacts/{id}/checkouts"),
        ("get", "/v1/checkouts"),
        ("get", "/v1/checkouts/{id}"),
        ("post", "/v1/checkouts/{id}/extend"),
        ("post", "/v1/checkouts/{id}/checkin"),
        ("post", "/v1/checkouts/{id}/cancel"),
        ("post", "/v1/artifacts/{id}/edits"),
        ("post", "/v1/edits/{id}/commit"),
        ("delete", "/v1/edits/{id}"),
        ("get", "/v1/proposals"),
        ("post", "/v1/proposals/{id}/accept"),
        ("post", "/v1/proposals/{id}/rebuild"),
        ("post", "/v1/proposals/{id}/reject"),
        ("post", "/v1/artifacts/{id}/break"),
        ("post", "/v1/artifacts/{id}/rename"),
        ("get", "/v1/events"),
        ("get", "/v1/events/stream"),
    ];
    for (method, path) in endpoints {
        assert!(
            doc.body["paths"][path][method].is_object(),
            "{method} {path} is documented"
        );
    }
    let checkout = &doc.body["components"]["schemas"]["Checkout"]["properties"];
    for field in [
        "id",
        "artifact_id",
        "path",
        "version",
        "digest",
        "actor",
        "holder",
        "note",
        "created_at",
        "expires_at",
        "state",
        "result",
    ] {
        assert!(
            checkout[field].is_object(),
            "Checkout.{field} is in the schema"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_retried_when_the_server_is_not_there_yet_and_changes_are_not() {
    let f = fixture();
    let (_, token) = f
        .store
        .add_account(&participant("user:carol"), false)
        .unwrap();
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

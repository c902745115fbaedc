//! Every status and error code of the API, and the OpenAPI document that
//! lists every endpoint of the contract.

use super::*;

/// That `answer` is a 409 `code` showing the head that moved on, at `version`.
fn refused_as_stale(answer: &Answer, code: &str, version: u64) {
    refused(answer, StatusCode::CONFLICT, code);
    assert_eq!(answer.body["head"]["version"], version);
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
        .post("/v1/artifacts?path=brand/hero.psd", alice, b"v1")
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.body["head"]["version"], 1);
    let id = created.body["id"].as_str().unwrap().to_owned();
    refused(
        &http
            .post("/v1/artifacts?path=brand/hero.psd", bob, b"x")
            .await,
        StatusCode::CONFLICT,
        "exists",
    );
    refused(
        &http
            .get(&format!("/v1/artifacts/{}", uuid::Uuid::new_v4()), alice)
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    );

    let checkouts = format!("/v1/artifacts/{id}/checkouts");
    // Bob checks the file out and in with `bytes`: a new head.
    let bob_commits = |bytes: &'static [u8]| {
        let (http, checkouts) = (&http, &checkouts);
        async move {
            let opened = http.post(checkouts, bob, b"").await;
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
    let busy = http.post(&checkouts, bob, b"").await;
    refused(&busy, StatusCode::CONFLICT, "artifact_busy");
    assert_eq!(
        (
            busy.body["lease"]["participant"].as_str(),
            busy.body["lease"]["note"].as_str()
        ),
        (Some("user:alice"), Some("sky"))
    );
    refused(
        &http.get(&format!("/v1/checkouts/{checkout_id}"), bob).await,
        StatusCode::FORBIDDEN,
        "forbidden",
    );
    refused(
        &http
            .post(
                &format!("/v1/artifacts/{id}/break"),
                bob,
                br#"{"reason":"mine"}"#,
            )
            .await,
        StatusCode::FORBIDDEN,
        "forbidden",
    );

    // A stale check-in: alice's lease lapses, bob commits; alice's file becomes a proposal.
    f.advance(HOUR);
    let bobs = http.post(&checkouts, bob, b"").await;
    let bobs_id = bobs.body["id"].as_str().unwrap().to_owned();
    let committed = http
        .post(&format!("/v1/checkouts/{bobs_id}/checkin"), bob, b"v2")
        .await;
    assert_eq!(
        (
            committed.status,
            committed.body["result"]["outcome"].as_str()
        ),
        (StatusCode::OK, Some("committed"))
    );
    let stale = http
        .post(
            &format!("/v1/checkouts/{checkout_id}/checkin"),
            alice,
            b"alice",
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
            .post(
                &format!("/v1/checkouts/{checkout_id}/checkin"),
                alice,
                b"other",
            )
            .await,
        StatusCode::CONFLICT,
        "checkout_closed",
    );
    bob_commits(b"v3").await;
    let accept = format!("/v1/proposals/{proposal_id}/accept");
    refused_as_stale(&http.post(&accept, alice, b"").await, "proposal_stale", 3);
    let rebuilt = http
        .post(&format!("/v1/proposals/{proposal_id}/rebuild"), alice, b"")
        .await;
    assert_eq!(rebuilt.status, StatusCode::CREATED);

    // An edit whose base moved: stale, with the head.
    let edit = http
        .post(&format!("/v1/artifacts/{id}/edits"), alice, b"")
        .await;
    assert_eq!(edit.status, StatusCode::CREATED);
    let edit_id = edit.body["id"].as_str().unwrap().to_owned();
    http.post(
        &format!("/v1/artifacts/{id}/break"),
        admin,
        br#"{"reason":"urgent"}"#,
    )
    .await;
    bob_commits(b"v4").await;
    let commit = format!("/v1/edits/{edit_id}/commit");
    refused_as_stale(&http.post(&commit, alice, b"e").await, "stale", 4);
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

/// `GET /v1/requests?state=S`: `open` is every request that still stands
/// (a replied one too); any other state is that state alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_requests_list_answers_the_state_asked_for() {
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let bob = f.server.as_ref().unwrap().token("user:bob");
    let mut asked = Vec::new();
    for name in ["open.psd", "replied.psd", "withdrawn.psd"] {
        let a = f.import(name, b"v1").await;
        f.alice.check_out(a.id, checkout_request()).await.unwrap();
        asked.push(f.bob.ask(a.id, None).await.unwrap().0.id);
    }
    f.alice.reply(asked[1], "soon").await.unwrap();
    f.bob.withdraw(asked[2]).await.unwrap();
    let listed = |state: &'static str| {
        let http = &http;
        async move {
            let path = format!("/v1/requests?state={state}");
            let answer = http.call(Method::GET, &path, Some(bob), None).await;
            assert_eq!(answer.status, StatusCode::OK, "{state}");
            let mut paths: Vec<String> = answer.body["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["path"].as_str().unwrap().to_owned())
                .collect();
            paths.sort();
            paths
        }
    };
    assert_eq!(listed("open").await, ["open.psd", "replied.psd"]);
    assert_eq!(listed("replied").await, ["replied.psd"]);
    assert_eq!(listed("withdrawn").await, ["withdrawn.psd"]);
    assert_eq!(listed("ended").await, Vec::<String>::new());
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
        ("post", "/v1/artifacts/{id}/requests"),
        ("get", "/v1/requests"),
        ("post", "/v1/requests/{id}/reply"),
        ("post", "/v1/requests/{id}/withdraw"),
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

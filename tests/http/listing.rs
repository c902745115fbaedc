//! Lists by page, folder and search over HTTP: the fields API.md names, and
//! every query out of its bounds refused with our JSON, never served.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_and_folders_answer_as_api_md_says_and_refuse_what_is_out_of_bounds() {
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let alice = f.server.as_ref().unwrap().token("user:alice");
    for p in ["brand/a.psd", "brand/b.psd", "brand/c/d.psd", "top.psd"] {
        f.import(p, p.as_bytes()).await;
    }
    let last = f.last_seq().await;

    let page = http
        .get("/v1/artifacts?limit=2&prefix=brand%2F", alice)
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(page.body["artifacts"].as_array().unwrap().len(), 2);
    assert_eq!(page.body["next"], "brand/b.psd");
    assert_eq!(page.body["seq"], last);
    let page = http
        .get(
            "/v1/artifacts?limit=2&prefix=brand%2F&after=brand%2Fb.psd",
            alice,
        )
        .await;
    assert_eq!(page.body["artifacts"][0]["path"], "brand/c/d.psd");
    assert_eq!(page.body["next"], Value::Null);
    let found = http
        .get("/v1/artifacts?limit=10&q=D.PS&held=false", alice)
        .await;
    assert_eq!(found.body["artifacts"][0]["path"], "brand/c/d.psd");
    // Without a limit, every artifact, with the same fields.
    let all = http.get("/v1/artifacts", alice).await;
    assert_eq!(all.body["artifacts"].as_array().unwrap().len(), 4);
    assert_eq!(
        (all.body["next"].clone(), all.body["seq"].clone()),
        (Value::Null, json!(last))
    );

    let folders = http.get("/v1/folders?prefix=", alice).await;
    assert_eq!(
        folders.body,
        json!({"folders": [{"path": "brand/", "files": 3, "held": 0}], "files": 1})
    );
    let folders = http.get("/v1/folders", alice).await;
    assert_eq!(folders.body["files"], 1);

    let invalid = [
        "/v1/artifacts?limit=0",
        "/v1/artifacts?limit=10001",
        "/v1/artifacts?limit=99999999999",
        "/v1/artifacts?limit=10&q=a",
        &format!("/v1/artifacts?limit=10&q={}", "a".repeat(201)),
        "/v1/artifacts?limit=10&prefix=brand",
        "/v1/artifacts?limit=10&prefix=..%2F",
        &format!("/v1/artifacts?limit=10&after={}", "a".repeat(1025)),
        "/v1/artifacts?path=top.psd&limit=10",
        "/v1/folders?prefix=brand",
        "/v1/folders?prefix=%2F",
    ];
    let bad = [
        "/v1/artifacts?limit=ten",
        "/v1/artifacts?limit=-1",
        "/v1/artifacts?limit=9223372036854775808",
        "/v1/artifacts?held=yes",
        "/v1/artifacts?limit=10&colour=red",
        "/v1/folders?prefix=a%2F&depth=2",
    ];
    for (paths, status, code) in [
        (&invalid[..], StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        (&bad[..], StatusCode::BAD_REQUEST, "bad_request"),
    ] {
        for path in paths {
            refused(&http.get(path, alice).await, status, code);
        }
    }
    let anonymous = http.call(Method::GET, "/v1/folders", None, None).await;
    refused(&anonymous, StatusCode::UNAUTHORIZED, "unauthorized");
}

//! A folder bob may only read: every write refused, every read served.

use leasedesk::model::*;

use super::*;

/// What bob, who may only read brand/approved/, meets there: every write
/// refused with 403 naming the folder, even on his check-out and staged
/// bytes and his proposal made before the rule; his cancel still releases;
/// and every read works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_folder_refuses_every_write_and_serves_every_read() {
    let f = remote_fixture().await;
    let files = import_files(&f).await;
    let logo = files.logo.id;
    // Before the rule: bob's late check-in (a proposal), then his open
    // check-out with staged bytes.
    let late = f.bob.check_out(logo, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    check_out_and_in_as(f.alice.as_ref(), logo, &png(2)).await;
    let proposal = proposal_of(f.bob.check_in(late.id, bytes(b"bob's logo")).await.unwrap());
    let mine = f.bob.check_out(logo, checkout_request()).await.unwrap();
    f.bob
        .stage(mine.id, bytes(b"bob's staged logo"))
        .await
        .unwrap();
    set_rules(&f, bobs_rules()).await;
    let http = Http::of(&f);
    let bob = f.token(BOB);

    let ids = json!([files.open.id, logo]).to_string();
    let writes: Vec<(Method, String, Vec<u8>)> = vec![
        (
            Method::POST,
            format!("/v1/artifacts/{logo}/checkouts"),
            vec![],
        ),
        (Method::POST, format!("/v1/artifacts/{logo}/edits"), vec![]),
        (
            Method::POST,
            "/v1/checkouts".into(),
            format!(r#"{{"artifact_ids":{ids}}}"#).into_bytes(),
        ),
        (
            Method::POST,
            "/v1/artifacts?path=brand/approved/new.psd".into(),
            b"new".to_vec(),
        ),
        (
            Method::POST,
            "/v1/artifacts?path=Brand/Approved/Logo2.psd".into(),
            b"new".to_vec(),
        ),
        (
            Method::POST,
            format!("/v1/checkouts/{}/extend", mine.id),
            vec![],
        ),
        (
            Method::POST,
            format!("/v1/checkouts/{}/checkin", mine.id),
            b"bob's logo v2".to_vec(),
        ),
        (
            Method::POST,
            format!("/v1/checkouts/{}/stage", mine.id),
            b"bob's logo v3".to_vec(),
        ),
        (
            Method::POST,
            "/v1/changes".into(),
            format!(r#"{{"checkouts":["{}"]}}"#, mine.id).into_bytes(),
        ),
        (
            Method::POST,
            format!("/v1/proposals/{}/accept", proposal.id),
            vec![],
        ),
        (
            Method::POST,
            format!("/v1/proposals/{}/rebuild", proposal.id),
            vec![],
        ),
        (
            Method::POST,
            format!("/v1/proposals/{}/reject", proposal.id),
            vec![],
        ),
    ];
    for (method, path, body) in writes {
        let body = (!body.is_empty()).then_some(body);
        let answer = http.call(method.clone(), &path, Some(bob), body).await;
        refused(&answer, StatusCode::FORBIDDEN, "forbidden");
        assert!(
            answer.body["message"]
                .as_str()
                .unwrap()
                .contains("brand/approved/"),
            "{method} {path}: {}",
            answer.body
        );
    }
    // Nothing was written: one version more than bob's first, his
    // check-out open with its lease, his proposal open, the open file free.
    let now = f.alice.artifact(logo).await.unwrap();
    assert_eq!(now.head.version, 2);
    assert_eq!(now.lease.unwrap().checkout_id, Some(mine.id));
    assert_eq!(
        f.bob.checkout(mine.id).await.unwrap().state,
        CheckoutState::Open
    );
    assert_eq!(
        f.alice.proposal(proposal.id).await.unwrap().state,
        ProposalState::Open
    );
    assert_eq!(f.alice.artifact(files.open.id).await.unwrap().lease, None);
    assert_eq!(f.alice.artifacts().await.unwrap().len(), 3);

    // Cancelling is allowed: it only lets go.
    let cancel = http
        .post(&format!("/v1/checkouts/{}/cancel", mine.id), bob, b"")
        .await;
    assert_eq!(cancel.status, StatusCode::OK, "{}", cancel.body);
    assert_eq!(cancel.body["state"], "closed");
    assert_eq!(f.alice.artifact(logo).await.unwrap().lease, None);

    // Reading works: the list with each file's access, content, versions,
    // the preview, the proposal, and asking the holder.
    let list = http.get("/v1/artifacts", bob).await;
    let access = |id: ArtifactId| {
        list.body["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id.to_string())
            .map(|a| a["access"].clone())
    };
    assert_eq!(access(logo), Some(json!("read")));
    assert_eq!(access(files.open.id), Some(json!("write")));
    assert_eq!(access(files.q3.id), None);
    assert_eq!(
        http.get(&format!("/v1/artifacts/{logo}"), bob).await.body["access"],
        "read"
    );
    let versions = http
        .get(&format!("/v1/artifacts/{logo}/versions"), bob)
        .await;
    assert_eq!(versions.body["versions"].as_array().unwrap().len(), 2);
    for (query, shade) in [("", 2), ("?version=1", 1), ("?version=2", 2)] {
        let content = http
            .fetch(&format!("/v1/artifacts/{logo}/content{query}"), bob)
            .await;
        assert_eq!(content.status(), StatusCode::OK, "content{query}");
        assert_eq!(content.bytes().await.unwrap().to_vec(), png(shade));
    }
    let preview = http
        .fetch(&format!("/v1/artifacts/{logo}/preview?size=16"), bob)
        .await;
    assert_eq!(preview.status(), StatusCode::OK);
    assert_eq!(preview.headers()["content-type"], "image/png");
    assert!(image::load_from_memory(&preview.bytes().await.unwrap()).is_ok());
    let seen = http
        .get(&format!("/v1/proposals/{}", proposal.id), bob)
        .await;
    assert_eq!(seen.status, StatusCode::OK);
    let held = f.alice.check_out(logo, checkout_request()).await.unwrap();
    let asked = http
        .post(
            &format!("/v1/artifacts/{logo}/requests"),
            bob,
            br#"{"message":"a look?"}"#,
        )
        .await;
    assert_eq!(asked.status, StatusCode::CREATED, "{}", asked.body);
    assert_eq!(asked.body["checkout_id"], held.id.to_string());
}

//! Review's bodies as anyone with a token may send them: numbers JSON has
//! no room for, pins outside the picture, bodies past their limits, a flood
//! of @names, both targets or a target that is not. Each is a 4xx in our
//! JSON, and nothing of it is written.

use super::*;

/// Bob's thread on alice's file: the one thing every refusal must leave.
fn one_thread(served: &Served, alice: &str, bob: &str) -> String {
    let id = import(served, alice, "hero.psd", b"version one");
    let made = post_json(
        served,
        bob,
        &format!("/v1/artifacts/{id}/threads"),
        r#"{"version": 1, "pin": {"x": 0.5, "y": 0.25}, "body": "the logo is 4 px off"}"#,
    );
    assert_eq!(made.status, 201, "{made:?}");
    id
}

fn refused(answer: &Answer, status: u16, code: &str, what: &str) {
    assert_eq!(answer.status, status, "{what}: {answer:?}");
    assert_eq!(answer.body["error"], code, "{what}: {answer:?}");
    assert!(
        answer.body["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{what}"
    );
}

#[test]
fn bad_review_bodies_are_refused_and_write_nothing() {
    let served = Served::start(&[]);
    let (alice, bob) = (served.token("alice"), served.token("bob"));
    let id = one_thread(&served, &alice, &bob);
    let threads = format!("/v1/artifacts/{id}/threads");
    let long = "é".repeat(10_001);
    let flood: String = (0..1000).map(|n| format!("@user{n} ")).collect();
    // A UUID that names nothing.
    let other = uuid::Uuid::new_v4();
    let cases: Vec<(String, u16, &str, &str)> = vec![
        (r#"{"version": 1, "pin": {"x": NaN, "y": 0.5}, "body": "x"}"#.into(), 400, "bad_request", "NaN"),
        (r#"{"version": 1, "pin": {"x": 1e999, "y": 0.5}, "body": "x"}"#.into(), 400, "bad_request", "infinity"),
        (r#"{"version": 1, "pin": {"x": 1.5, "y": 0.5}, "body": "x"}"#.into(), 422, "invalid", "x past 1"),
        (r#"{"version": 1, "pin": {"x": 0.5, "y": -0.1}, "body": "x"}"#.into(), 422, "invalid", "y below 0"),
        (r#"{"version": 1, "pin": {"x": 0.9, "y": 0.5, "w": 0.2, "h": 0.1}, "body": "x"}"#.into(), 422, "invalid", "a box past the edge"),
        (r#"{"version": 1, "pin": {"x": 0.1, "y": 0.5, "w": 0.2}, "body": "x"}"#.into(), 422, "invalid", "half a box"),
        (r#"{"version": 1, "pin": {"x": 0.1, "y": 0.5, "z": 1}, "body": "x"}"#.into(), 400, "bad_request", "a field a pin has not"),
        (format!(r#"{{"version": 1, "body": "{long}"}}"#), 422, "invalid", "10,001 characters"),
        (format!(r#"{{"version": 1, "body": "{flood}"}}"#), 422, "invalid", "1,000 @names"),
        (r#"{"version": 2, "body": "x"}"#.into(), 422, "invalid", "a version that does not exist"),
        (format!(r#"{{"version": 1, "proposal_id": "{}", "body": "x"}}"#, other), 422, "invalid", "a version and a proposal"),
        (format!(r#"{{"proposal_id": "{}", "body": "x"}}"#, other), 422, "invalid", "a proposal that is not"),
        (r#"{"body": "x"}"#.into(), 422, "invalid", "no target"),
        (r#"{"version": -1, "body": "x"}"#.into(), 400, "bad_request", "a negative version"),
        (r#"{"version": 18446744073709551616, "body": "x"}"#.into(), 400, "bad_request", "a version past u64"),
        (r#"{"version": 1, "body": "x", "image": {"width": 0, "height": 5}, "pin": {"x": 0, "y": 0}}"#.into(), 422, "invalid", "an image of no pixels"),
        (r#"[1, 2]"#.into(), 400, "bad_request", "not an object"),
    ];
    for (body, status, code, what) in &cases {
        refused(
            &post_json(&served, &bob, &threads, body),
            *status,
            code,
            what,
        );
    }
    let big = format!(r#"{{"version": 1, "body": "{}"}}"#, "a".repeat(70 << 10));
    refused(
        &post_json(&served, &bob, &threads, &big),
        413,
        "too_large",
        "a body past 64 KiB",
    );

    let listed = served.get(&threads, &bob);
    assert_eq!(listed.status, 200, "{listed:?}");
    let list = listed.body["threads"].as_array().unwrap();
    assert_eq!(list.len(), 1, "nothing was written: {list:?}");
    let thread = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["comments"].as_array().unwrap().len(), 1);

    let comments = format!("/v1/threads/{thread}/comments");
    refused(
        &post_json(
            &served,
            &bob,
            &comments,
            &format!(r#"{{"body": "{long}"}}"#),
        ),
        422,
        "invalid",
        "a long comment",
    );
    refused(
        &post_json(&served, &bob, &comments, r#"{"body": "   "}"#),
        422,
        "invalid",
        "a blank comment",
    );
    refused(
        &post_json(&served, &bob, &comments, r#"{"body": "a\u0007b"}"#),
        422,
        "invalid",
        "a bell",
    );
    refused(
        &post_json(
            &served,
            &bob,
            "/v1/threads/not-a-uuid/comments",
            r#"{"body": "x"}"#,
        ),
        400,
        "bad_request",
        "a thread id that is not one",
    );
    refused(
        &post_json(
            &served,
            &bob,
            &format!("/v1/threads/{}/comments", other),
            r#"{"body": "x"}"#,
        ),
        404,
        "not_found",
        "a thread that never was",
    );
    let reviews = format!("/v1/artifacts/{id}/reviews");
    refused(
        &post_json(
            &served,
            &bob,
            &reviews,
            r#"{"version": 1, "decision": "maybe"}"#,
        ),
        400,
        "bad_request",
        "a decision that is not one",
    );
    refused(
        &post_json(
            &served,
            &bob,
            &reviews,
            r#"{"version": 7, "decision": "approved"}"#,
        ),
        422,
        "invalid",
        "a review of no version",
    );
    refused(
        &served.get(&format!("{reviews}?version=1&proposal={}", other), &bob),
        422,
        "invalid",
        "reviews of two targets",
    );
    refused(
        &served.get(&reviews, &bob),
        422,
        "invalid",
        "reviews of nothing",
    );
    let requests = format!("/v1/artifacts/{id}/review-requests");
    let many: Vec<String> = (0..51).map(|n| format!("\"user:r{n}\"")).collect();
    refused(
        &post_json(
            &served,
            &alice,
            &requests,
            &format!(r#"{{"version": 1, "reviewers": [{}]}}"#, many.join(",")),
        ),
        422,
        "invalid",
        "51 reviewers",
    );
    refused(
        &post_json(
            &served,
            &alice,
            &requests,
            r#"{"version": 1, "reviewers": ["bob"]}"#,
        ),
        400,
        "bad_request",
        "a reviewer who is not user:NAME",
    );
    refused(
        &post_json(
            &served,
            &alice,
            &requests,
            r#"{"version": 1, "reviewers": ["user:mallory"]}"#,
        ),
        422,
        "invalid",
        "a stranger",
    );
    refused(
        &served.get("/v1/inbox?after=1&before=5", &bob),
        422,
        "invalid",
        "after and before",
    );
    refused(
        &served.get("/v1/inbox?limit=-1", &bob),
        400,
        "bad_request",
        "a negative limit",
    );
    refused(
        &served.get("/v1/inbox?after=9223372036854775808", &bob),
        400,
        "bad_request",
        "a seq past i64",
    );
    refused(
        &served.get("/v1/inbox?unread=maybe", &bob),
        400,
        "bad_request",
        "unread that is not a boolean",
    );
    refused(
        &post_json(&served, &bob, "/v1/inbox/read", r#"{"up_to": "all"}"#),
        400,
        "bad_request",
        "up_to that is not a number",
    );
    refused(
        &post_json(&served, &bob, "/v1/inbox/read", "{}"),
        400,
        "bad_request",
        "no up_to",
    );

    let after = served.get(&threads, &bob);
    assert_eq!(
        after.body["threads"][0]["comments"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "no comment was written"
    );
    let reviews_now = served.get(&format!("{reviews}?version=1"), &bob);
    assert_eq!(reviews_now.status, 200, "{reviews_now:?}");
    assert_eq!(reviews_now.body["reviews"], serde_json::json!([]));
    assert_eq!(reviews_now.body["state"], "none");
    let inbox = served.get("/v1/inbox", &alice);
    assert_eq!(inbox.status, 200, "{inbox:?}");
    assert_eq!(
        inbox.body["items"].as_array().unwrap().len(),
        1,
        "only bob's one thread told alice: {inbox:?}"
    );
}

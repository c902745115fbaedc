//! The admin endpoints: invites listed and revoked, rules refused whole,
//! and no one but an admin reaching any of them.

use serde_json::{json, Value};

use super::*;

/// The invites waiting to be used, listed and revoked over HTTP by an
/// admin (docs/API-studio.md): no code is listed; an id that is not a
/// UUID is 400, one that names no open invite 404 `not_found`, a revoked
/// code the same 404 `invite_invalid` as an unknown one; every refusal is
/// our JSON, never a 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invites_are_listed_and_revoked_in_our_json() {
    let f = remote_fixture().await;
    let api = Http::of(&f);
    let admin = f.token("user:admin");
    let code = api.invite(admin, "dana").await;
    let (status, listed) = api.get("/v1/invites", admin).await.seen();
    assert_eq!(status, 200, "{listed}");
    let invites = listed["invites"].as_array().unwrap();
    assert_eq!(invites.len(), 1, "{listed}");
    assert_eq!(invites[0]["participant"], "user:dana");
    assert_eq!(invites[0]["made_by"], "user:admin");
    assert_eq!(invites[0]["admin"], false);
    assert!(!listed.to_string().contains(&code), "no code: {listed}");
    let id = invites[0]["id"].as_str().unwrap().to_owned();

    let (none, _) = api
        .call(Method::GET, "/v1/invites", None, None)
        .await
        .seen();
    assert_eq!(none, 401, "no token");
    let unknown = uuid::Uuid::new_v4().to_string();
    for (path, expected) in [
        ("/v1/invites/not-a-uuid".to_owned(), (400, "bad_request")),
        ("/v1/invites/%FF%FE".to_owned(), (400, "bad_request")),
        (
            format!("/v1/invites/{}", "9".repeat(200)),
            (400, "bad_request"),
        ),
        (format!("/v1/invites/{unknown}"), (404, "not_found")),
    ] {
        let answer = api.call(Method::DELETE, &path, Some(admin), None).await;
        assert_refused(&answer, expected, &format!("DELETE {path}"));
    }
    for (method, path) in [
        (Method::GET, format!("/v1/invites/{id}")),
        (Method::PUT, "/v1/invites".to_owned()),
        (Method::DELETE, "/v1/invites".to_owned()),
        (Method::DELETE, "/v1/invites/redeem".to_owned()),
    ] {
        let answer = api.call(method.clone(), &path, Some(admin), None).await;
        let what = format!("{method} {path}");
        assert_refused(&answer, (405, "method_not_allowed"), &what);
    }

    let path = format!("/v1/invites/{id}");
    let revoked = api.call(Method::DELETE, &path, Some(admin), None).await;
    assert_eq!(revoked.status, 204, "{}", revoked.body);
    assert_eq!(
        api.get("/v1/invites", admin).await.seen(),
        (200, json!({ "invites": [] }))
    );
    let again = api.call(Method::DELETE, &path, Some(admin), None).await;
    assert_refused(&again, (404, "not_found"), "revoked again");
    let redeemed = api.redeem(redeem_body(&code, "dana's laptop")).await;
    let what = "the same refusal as an unknown code";
    assert_refused(&redeemed, (404, "invite_invalid"), what);
}

/// Bad rules are refused whole (422) and leave the rules as they were; a
/// group a rule names cannot be removed; and bob, who is no admin, reaches
/// none of the admin endpoints, nor makes himself one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rules_change_nothing_and_no_one_but_an_admin_sets_them() {
    let f = remote_fixture().await;
    let api = Http::of(&f);
    let (admin, bob, alice) = (
        f.token("user:admin"),
        f.token("user:bob"),
        f.token("user:alice"),
    );
    let members = json!({ "members": ["user:bob"] });
    let group = api
        .send_json(Method::PUT, "/v1/groups/clients", admin, members)
        .await;
    assert_eq!(group.status, 200, "{}", group.body);
    let good = json!([
        { "folder": "finance/", "who": "group:clients", "level": "none" },
        { "folder": "brand/approved/", "who": "user:bob", "level": "read" },
    ]);
    let set = put_rules(&api, admin, good.as_array().unwrap()).await;
    assert_eq!(set.status, 200, "{}", set.body);
    let rules_before = api.get("/v1/permissions", admin).await.seen();
    assert_eq!(rules_before, (200, json!({ "rules": good })));
    let groups_before = api.get("/v1/groups", admin).await.seen();

    let bad = [
        (
            "a group that does not exist",
            rule("brand/", "group:ghost", "read"),
        ),
        (
            "a folder without its slash",
            rule("brand", "user:bob", "read"),
        ),
        ("an absolute folder", rule("/abs/", "user:bob", "read")),
        ("a folder that climbs", rule("../up/", "user:bob", "read")),
        (
            "a level that is not one",
            rule("brand/", "user:bob", "admin"),
        ),
        ("a who that is not one", rule("brand/", "root", "read")),
        (
            "someone who is not a participant",
            rule("brand/", "user:mallory", "read"),
        ),
    ];
    for (what, rule) in bad {
        let mut rules = good.as_array().unwrap().clone();
        rules.push(rule);
        let answer = put_rules(&api, admin, &rules).await;
        assert_refused(&answer, (422, "invalid"), what);
        assert_eq!(
            api.get("/v1/permissions", admin).await.seen(),
            rules_before,
            "{what}"
        );
    }
    let removed = api
        .call(Method::DELETE, "/v1/groups/clients", Some(admin), None)
        .await;
    assert_refused(&removed, (422, "invalid"), "a group a rule names, removed");
    assert_eq!(api.get("/v1/groups", admin).await.seen(), groups_before);

    // Bob, no admin, at every admin endpoint.
    let (_, alices) = api.get("/v1/me/devices", alice).await.seen();
    let alices_device = alices["current"].as_str().unwrap().to_owned();
    let bodiless = [
        (Method::GET, "/v1/invites".to_owned()),
        (
            Method::DELETE,
            format!("/v1/invites/{}", uuid::Uuid::new_v4()),
        ),
        (Method::GET, "/v1/participants".to_owned()),
        (
            Method::DELETE,
            format!("/v1/participants/user:alice/devices/{alices_device}"),
        ),
        (
            Method::DELETE,
            "/v1/participants/user:alice/devices/no-such-device".to_owned(),
        ),
        (Method::GET, "/v1/groups".to_owned()),
        (Method::DELETE, "/v1/groups/clients".to_owned()),
        (Method::DELETE, "/v1/groups/ghosts".to_owned()),
        (Method::GET, "/v1/permissions".to_owned()),
    ];
    let with_body = [
        (Method::POST, "/v1/invites", json!({ "name": "mallory" })),
        (
            Method::POST,
            "/v1/invites",
            json!({ "name": "bob", "admin": true }),
        ),
        (
            Method::POST,
            "/v1/invites",
            json!({ "name": "admin", "admin": true }),
        ),
        (Method::PUT, "/v1/groups/clients", json!({ "members": [] })),
        (
            Method::PUT,
            "/v1/groups/admins",
            json!({ "members": ["user:bob"] }),
        ),
        (
            Method::PUT,
            "/v1/groups/ghosts",
            json!({ "members": ["user:nobody"] }),
        ),
        (
            Method::PUT,
            "/v1/permissions",
            json!({ "rules": [rule("finance/", "user:bob", "write")] }),
        ),
        (Method::PUT, "/v1/permissions", json!({ "rules": [] })),
    ];
    let as_bob = bodiless
        .into_iter()
        .map(|(method, path)| (method, path, None));
    let as_bob = as_bob.chain(
        with_body
            .into_iter()
            .map(|(method, path, body)| (method, path.to_owned(), Some(body))),
    );
    for (method, path, body) in as_bob {
        let body = body.map(|b: Value| b.to_string().into_bytes());
        let answer = api.call(method.clone(), &path, Some(bob), body).await;
        assert_refused(&answer, (403, "forbidden"), &format!("{method} {path}"));
    }
    // His own devices are his: an invite for another of them (not an
    // admin's, whatever he asks), but not another's device.
    let as_admin = json!({ "admin": true });
    let escalate = api
        .send_json(Method::POST, "/v1/me/invites", bob, as_admin)
        .await;
    assert_refused(&escalate, (400, "bad_request"), "bob's invite as an admin");
    let mine = api
        .send_json(Method::POST, "/v1/me/invites", bob, json!({}))
        .await;
    assert_eq!(
        (mine.status.as_u16(), &mine.body["participant"]),
        (201, &json!("user:bob"))
    );
    let other = api
        .call(
            Method::DELETE,
            &format!("/v1/me/devices/{alices_device}"),
            Some(bob),
            None,
        )
        .await;
    assert_refused(&other, (404, "not_found"), "another's device, removed");

    // Nothing changed: the rules, the groups, alice's device, bob's flags.
    assert_eq!(api.get("/v1/permissions", admin).await.seen(), rules_before);
    assert_eq!(api.get("/v1/groups", admin).await.seen(), groups_before);
    assert_eq!(api.get("/v1/me", alice).await.status, 200);
    let (_, members) = api.get("/v1/participants", admin).await.seen();
    let listed: Vec<(&str, bool)> = members["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["participant"].as_str().unwrap(),
                m["admin"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(listed.contains(&("user:bob", false)), "{listed:?}");
    assert!(
        !listed.iter().any(|(p, _)| *p == "user:mallory"),
        "{listed:?}"
    );
}

/// Puts `rules` as the studio's permission rules, as the holder of `token`.
async fn put_rules(api: &Http, token: &str, rules: &[Value]) -> Answer {
    let body = json!({ "rules": rules });
    api.send_json(Method::PUT, "/v1/permissions", token, body)
        .await
}

/// A permission rule as the API takes it.
fn rule(folder: &str, who: &str, level: &str) -> Value {
    json!({ "folder": folder, "who": who, "level": level })
}

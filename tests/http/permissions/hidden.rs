//! A file bob may not see, asked for by every endpoint that can name it, or
//! made again where it is, or reached through a change's proposals: each
//! answers as for a file that never was, and nothing of it changes.

use leasedesk::model::*;

use super::*;

/// `body` with each real name replaced by its stand-in.
fn swapped(body: &Value, names: &[(String, String)]) -> Value {
    let mut text = body.to_string();
    for (real, fake) in names {
        text = text.replace(real, fake);
    }
    serde_json::from_str(&text).unwrap()
}

/// Every endpoint of the API that can name the hidden file, by id and by
/// path, asked by bob; and what an id that never was gets there. `{q3}`,
/// `{checkout}`, ... are the hidden file's ids (or, for the comparison,
/// random ones); `{open}` is a file bob may change.
#[rustfmt::skip]
const PROBES: &[(&str, &str, &str, u16, &str)] = &[
    // method  path                                            body                                     for an id that never was
    ("GET",    "/v1/artifacts/{q3}",                           "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts?path={q3_path}",                 "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts?path={Q3_path}",                 "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts/{q3}/versions",                  "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts/{q3}/content",                   "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts/{q3}/content?version=1",         "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts/{q3}/content?version=2",         "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts/{q3}/preview",                   "",                                      404, "not_found"),
    ("GET",    "/v1/artifacts/{q3}/preview?version=1&size=64", "",                                      404, "not_found"),
    ("POST",   "/v1/artifacts/{q3}/checkouts",                 "",                                      404, "not_found"),
    ("POST",   "/v1/artifacts/{q3}/checkouts",                 r#"{"ttl_seconds":60,"note":"mine"}"#,   404, "not_found"),
    ("POST",   "/v1/artifacts/{q3}/edits",                     "",                                      404, "not_found"),
    ("POST",   "/v1/artifacts/{q3}/requests",                  r#"{"message":"who has it?"}"#,          404, "not_found"),
    // Breaking and renaming are for admins, whichever file is named.
    ("POST",   "/v1/artifacts/{q3}/break",                     r#"{"reason":"mine now"}"#,              403, "forbidden"),
    ("POST",   "/v1/artifacts/{q3}/rename",                    r#"{"path":"brand/q3.xlsx"}"#,           403, "forbidden"),
    // Beside a file bob may change, first or last: nothing is taken.
    ("POST",   "/v1/checkouts",                                r#"{"artifact_ids":["{q3}","{open}"]}"#, 404, "not_found"),
    ("POST",   "/v1/checkouts",                                r#"{"artifact_ids":["{open}","{q3}"]}"#, 404, "not_found"),
    // Alice's open check-out of it.
    ("GET",    "/v1/checkouts/{checkout}",                     "",                                      404, "not_found"),
    ("POST",   "/v1/checkouts/{checkout}/extend",              "",                                      404, "not_found"),
    ("POST",   "/v1/checkouts/{checkout}/checkin",             "bob's bytes",                           404, "not_found"),
    ("POST",   "/v1/checkouts/{checkout}/stage",               "bob's bytes",                           404, "not_found"),
    ("POST",   "/v1/checkouts/{checkout}/cancel",              "",                                      404, "not_found"),
    ("POST",   "/v1/changes",                                  r#"{"checkouts":["{checkout}"]}"#,       404, "not_found"),
    ("GET",    "/v1/changes/{change}",                         "",                                      404, "not_found"),
    // The agent's edit of it.
    ("POST",   "/v1/edits/{edit}/commit",                      "bob's bytes",                           404, "not_found"),
    ("DELETE", "/v1/edits/{edit}",                             "",                                      404, "not_found"),
    // Alice's proposal for it.
    ("GET",    "/v1/proposals/{proposal}",                     "",                                      404, "not_found"),
    ("GET",    "/v1/proposals/{proposal}/content",             "",                                      404, "not_found"),
    ("GET",    "/v1/proposals/{proposal}/preview",             "",                                      404, "not_found"),
    ("POST",   "/v1/proposals/{proposal}/accept",              "",                                      404, "not_found"),
    ("POST",   "/v1/proposals/{proposal}/rebuild",             "",                                      404, "not_found"),
    ("POST",   "/v1/proposals/{proposal}/reject",              "",                                      404, "not_found"),
    // Alice's request about it.
    ("POST",   "/v1/requests/{request}/reply",                 r#"{"message":"no"}"#,                   404, "not_found"),
    ("POST",   "/v1/requests/{request}/withdraw",              "",                                      404, "not_found"),
    // Its events.
    ("GET",    "/v1/events?artifact={q3}",                     "",                                      404, "not_found"),
    ("GET",    "/v1/events?artifact={q3}&after=0&limit=1000",  "",                                      404, "not_found"),
    // A list filtered by a file is empty either way.
    ("GET",    "/v1/proposals?artifact={q3}",                  "",                                      200, ""),
    ("GET",    "/v1/proposals?artifact={q3}&state=open",       "",                                      200, ""),
];

/// A file in a `none` folder does not exist for bob: every endpoint that
/// names it, by any of its ids or by its path in any case, answers him
/// exactly (status, code and words) as for an id or a path that never was;
/// nothing he sends changes it; and no list of his shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_file_answers_every_endpoint_as_one_that_never_was() {
    let (f, files, traces) = finance_worked_on_then_hidden().await;
    let http = Http::of(&f);
    let bob = f.token(BOB);
    let before = f.alice.artifact(files.q3.id).await.unwrap();
    let requests_before = f.alice.requests(false).await.unwrap();

    let random = || uuid::Uuid::new_v4().to_string();
    // Each hidden name and its stand-in: never was, or (a path) nothing there.
    let names = [
        ("{q3}", files.q3.id.to_string(), random()),
        ("{checkout}", traces.checkout.to_string(), random()),
        ("{proposal}", traces.proposal.to_string(), random()),
        ("{request}", traces.request.to_string(), random()),
        ("{edit}", traces.edit.to_string(), random()),
        ("{change}", traces.change.to_string(), random()),
        (
            "{q3_path}",
            "finance/q3.xlsx".into(),
            "finance/q4.xlsx".into(),
        ),
        (
            "{Q3_path}",
            "Finance/Q3.xlsx".into(),
            "Finance/Q4.xlsx".into(),
        ),
    ];
    let fill = |template: &str, real: bool| {
        let mut text = template.replace("{open}", &files.open.id.to_string());
        for (key, hidden, never) in &names {
            text = text.replace(key, if real { hidden } else { never });
        }
        text
    };
    let real_to_fake: Vec<(String, String)> = names
        .iter()
        .map(|(_, hidden, never)| (hidden.clone(), never.clone()))
        .collect();
    let hidden_ids: Vec<&String> = names[..6].iter().map(|(_, hidden, _)| hidden).collect();

    for &(method, template, body, status, code) in PROBES {
        let ask = |real: bool| {
            let method: Method = method.parse().unwrap();
            let body = (!body.is_empty()).then(|| fill(body, real).into_bytes());
            let path = fill(template, real);
            let http = &http;
            async move { http.call(method, &path, Some(bob), body).await }
        };
        let hidden = ask(true).await;
        let never = ask(false).await;
        let row = format!("{method} {template}");
        assert_eq!(
            never.status.as_u16(),
            status,
            "{row}, never was: {}",
            never.body
        );
        if !code.is_empty() {
            refused(&never, never.status, code);
        }
        assert_eq!(
            (hidden.status, swapped(&hidden.body, &real_to_fake)),
            (never.status, never.body.clone()),
            "{row}: the hidden file must answer as one that never was"
        );
        // Beyond what bob sent, nothing of the file is named.
        let sent = fill(template, true) + &fill(body, true);
        for id in hidden_ids.iter().filter(|id| !sent.contains(id.as_str())) {
            assert!(
                !mentions(&hidden.body, id),
                "{row} names {id}: {}",
                hidden.body
            );
        }
    }

    // Nothing bob sent changed anything: the file, alice's check-out, the
    // proposal and the request are as they were, and brand/open.psd, asked
    // for beside the hidden file, was not taken.
    assert_eq!(f.alice.artifact(files.q3.id).await.unwrap(), before);
    let checkout = f.alice.checkout(traces.checkout).await.unwrap();
    assert_eq!(checkout.state, CheckoutState::Open);
    assert_eq!(
        f.alice.proposal(traces.proposal).await.unwrap().state,
        ProposalState::Open
    );
    assert_eq!(f.alice.requests(false).await.unwrap(), requests_before);
    assert_eq!(f.alice.artifact(files.open.id).await.unwrap().lease, None);
    assert!(f.bob.checkouts(false).await.unwrap().is_empty());

    // No list of bob's shows the file or anything done to it.
    let lists = [
        "/v1/artifacts",
        "/v1/proposals",
        "/v1/proposals?state=open",
        "/v1/checkouts",
        "/v1/requests",
        "/v1/events?after=0&limit=1000",
    ];
    for list in lists {
        let answer = http.get(list, bob).await;
        assert_eq!(answer.status, StatusCode::OK, "{list}: {}", answer.body);
        for id in &hidden_ids {
            assert!(
                !mentions(&answer.body, id),
                "{list} names {id}: {}",
                answer.body
            );
        }
        assert!(
            !mentions(&answer.body, "finance"),
            "{list}: {}",
            answer.body
        );
    }
    let artifacts = http.get("/v1/artifacts", bob).await;
    assert_eq!(artifacts.body["artifacts"].as_array().unwrap().len(), 2);
    // A change of the hidden file and another shows him the other alone.
    let shared = http
        .get(&format!("/v1/changes/{}", traces.shared_change), bob)
        .await;
    assert_eq!(shared.status, StatusCode::OK, "{}", shared.body);
    let shown: Vec<&Value> = shared.body["files"].as_array().unwrap().iter().collect();
    assert_eq!(shown.len(), 1, "{}", shared.body);
    assert_eq!(shown[0]["path"], "brand/open.psd");
    assert!(
        !mentions(&shared.body, &files.q3.id.to_string()),
        "{}",
        shared.body
    );
}

/// A new file cannot be made where bob may not see: at the hidden file's
/// path in another case, beside it, under it, or as a file named like the
/// hidden folder. Each is the same 403, whether a file is there or not,
/// and none names the hidden file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_into_a_hidden_folder_is_refused_alike_whatever_is_there() {
    let f = remote_fixture().await;
    let files = import_files(&f).await;
    set_rules(&f, bobs_rules()).await;
    let http = Http::of(&f);
    let bob = f.token(BOB);
    let paths = [
        "Finance/Q3.xlsx",
        "finance/q3.xlsx",
        "finance/new.xlsx",
        "FINANCE/Q4.XLSX",
        "finance/q3.xlsx/inside.psd",
        "finance",
        "Finance",
    ];
    let mut answers = Vec::new();
    for p in paths {
        let answer = http
            .post(&format!("/v1/artifacts?path={p}"), bob, b"bob's")
            .await;
        refused(&answer, StatusCode::FORBIDDEN, "forbidden");
        assert!(!mentions(&answer.body, "q3"), "{p}: {}", answer.body);
        assert!(!mentions(&answer.body, &files.q3.id.to_string()));
        answers.push(answer.body);
    }
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:#?}");
    assert_eq!(f.alice.artifacts().await.unwrap().len(), 3);
}

/// A change's proposals are decided together: bob, who made a change of a
/// finance file and a brand file before finance was hidden from him, may
/// not decide it any more. Acting on the proposal he can see neither tells
/// him of the hidden file (who holds it, its head) nor touches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposals_decided_together_never_reach_into_a_hidden_file() {
    let f = remote_fixture().await;
    let files = import_files(&f).await;
    let both = vec![files.q3.id, files.open.id];
    let checkouts = f
        .bob
        .check_out_many(CheckoutsRequest {
            artifact_ids: both,
            ttl_seconds: Some(60),
            note: None,
        })
        .await
        .unwrap();
    // Alice takes the finance file while bob's leases lapse: his change
    // becomes two proposals.
    f.advance(HOUR);
    f.check_out_and_in(files.q3.id, b"alice's q3").await;
    stage_each(
        f.bob.as_ref(),
        &[
            (checkouts[0].id, b"bob's q3"),
            (checkouts[1].id, b"bob's open"),
        ],
    )
    .await;
    let change = f
        .bob
        .commit_change(ChangeRequest {
            checkouts: checkouts.iter().map(|c| c.id).collect(),
            message: None,
        })
        .await
        .unwrap();
    assert_eq!(change.outcome, ChangeOutcome::Proposal);
    let proposals = all_proposals(f.alice.as_ref()).await;
    assert_eq!(proposals.len(), 2);
    let hidden = proposals
        .iter()
        .find(|p| p.artifact_id == files.q3.id)
        .unwrap()
        .clone();
    let visible = proposals
        .iter()
        .find(|p| p.artifact_id == files.open.id)
        .unwrap()
        .clone();
    set_rules(&f, bobs_rules()).await;
    // Alice holds the finance file: an accept that reached it would be busy.
    let held = f
        .alice
        .check_out(files.q3.id, checkout_request())
        .await
        .unwrap();
    let http = Http::of(&f);
    let bob = f.token(BOB);
    let listed = http.get("/v1/proposals", bob).await;
    assert_eq!(
        listed.body["proposals"].as_array().unwrap().len(),
        1,
        "{}",
        listed.body
    );

    for action in ["accept", "rebuild", "reject"] {
        let answer = http
            .post(&format!("/v1/proposals/{}/{action}", visible.id), bob, b"")
            .await;
        refused(&answer, StatusCode::FORBIDDEN, "forbidden");
        for secret in [
            "finance",
            "q3",
            "alice",
            &files.q3.id.to_string(),
            &hidden.id.to_string(),
        ] {
            assert!(!mentions(&answer.body, secret), "{action}: {}", answer.body);
        }
    }
    let q3 = f.alice.artifact(files.q3.id).await.unwrap();
    assert_eq!(q3.head.version, 2);
    assert_eq!(q3.lease.unwrap().checkout_id, Some(held.id));
    for p in [&hidden, &visible] {
        assert_eq!(
            f.alice.proposal(p.id).await.unwrap().state,
            ProposalState::Open
        );
    }
    assert_eq!(all_proposals(f.alice.as_ref()).await.len(), 2);
}

//! Folder permissions as an attacker meets them over HTTP (API.md "Folder
//! permissions"): bob may not see `finance/` and may only read
//! `brand/approved/`. A hidden file answers every endpoint that can name it
//! exactly as an id that never was; no list, page or stream tells of it; a
//! read-only file refuses every write with 403 naming its folder; and a
//! revoked device's stream ends at once.

use std::time::{Duration, Instant};

use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use leasedesk::model::*;

use super::*;

const BOB: &str = "user:bob";

/// The rules of these tests: finance is hidden from bob, the approved
/// brand files are his to view only.
fn bobs_rules() -> Value {
    json!([
        { "folder": "finance/", "who": BOB, "level": "none" },
        { "folder": "brand/approved/", "who": BOB, "level": "read" },
    ])
}

/// The admin replaces the rules, over HTTP.
async fn set_rules(f: &Fixture, rules: Value) {
    let set = Http::of(f)
        .send_json(
            Method::PUT,
            "/v1/permissions",
            f.token("user:admin"),
            json!({ "rules": rules }),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
}

/// A small real PNG of `shade`, so the approved logo has a preview.
fn png(shade: u8) -> Vec<u8> {
    let image = image::RgbaImage::from_fn(8, 8, |x, y| {
        image::Rgba([x as u8 * 30, y as u8 * 30, shade, 255])
    });
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// The three files alice imports: hidden from bob, read-only to him, his to change.
struct Files {
    q3: Artifact,
    logo: Artifact,
    open: Artifact,
}

async fn import_files(f: &Fixture) -> Files {
    Files {
        q3: f.import("finance/q3.xlsx", b"q3 v1").await,
        logo: f.import("brand/approved/logo.psd", &png(1)).await,
        open: f.import("brand/open.psd", b"open v1").await,
    }
}

/// Everything that names the hidden file: what alice and the agent did to
/// finance/q3.xlsx, each kind of id at least once.
struct Traces {
    /// Alice's check-out of it, still open.
    checkout: CheckoutId,
    /// Alice's stale check-in, kept as a proposal.
    proposal: ProposalId,
    /// Alice's request to the agent while it held the file.
    request: RequestId,
    /// The agent's edit, committed.
    edit: EditId,
    /// A change of the hidden file alone.
    change: ChangeId,
    /// A change of the hidden file and brand/open.psd together.
    shared_change: ChangeId,
}

async fn work_on_finance(f: &Fixture, files: &Files) -> Traces {
    let q3 = files.q3.id;
    let edit = f.agent.begin_edit(q3, None).await.unwrap();
    f.agent.commit_edit(edit.id, bytes(b"q3 v2")).await.unwrap();
    // Alice's lease lapses while the agent takes the file; she asks it for
    // the file back; her late check-in becomes a proposal.
    let late = f.alice.check_out(q3, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    let agents = f.agent.check_out(q3, checkout_request()).await.unwrap();
    let (request, _) = f.alice.ask(q3, Some("may I have it back?")).await.unwrap();
    f.agent.check_in(agents.id, bytes(b"q3 v3")).await.unwrap();
    let proposal = proposal_of(
        f.alice
            .check_in(late.id, bytes(b"alice's q3"))
            .await
            .unwrap(),
    );
    let change = change_of(f, &[(q3, b"q3 v4")]).await;
    let shared_change = change_of(f, &[(q3, b"q3 v5"), (files.open.id, b"open v2")]).await;
    let checkout = f.alice.check_out(q3, checkout_request()).await.unwrap();
    Traces {
        checkout: checkout.id,
        proposal: proposal.id,
        request: request.id,
        edit: edit.id,
        change,
        shared_change,
    }
}

/// Alice checks `files` out together, stages each one's bytes and checks
/// them in as one change.
async fn change_of(f: &Fixture, files: &[(ArtifactId, &[u8])]) -> ChangeId {
    let checkouts = f
        .alice
        .check_out_many(CheckoutsRequest {
            artifact_ids: files.iter().map(|(id, _)| *id).collect(),
            ttl_seconds: None,
            note: None,
        })
        .await
        .unwrap();
    for (checkout, (_, data)) in checkouts.iter().zip(files) {
        f.alice.stage(checkout.id, bytes(data)).await.unwrap();
    }
    let change = f
        .alice
        .commit_change(ChangeRequest {
            checkouts: checkouts.iter().map(|c| c.id).collect(),
            message: Some("quarter close".into()),
        })
        .await
        .unwrap();
    assert_eq!(change.outcome, ChangeOutcome::Committed);
    change.id
}

/// Whether `body` names `needle` anywhere (an id, a path).
fn mentions(body: &Value, needle: &str) -> bool {
    body.to_string()
        .to_lowercase()
        .contains(&needle.to_lowercase())
}

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
    let f = remote_fixture().await;
    let files = import_files(&f).await;
    let traces = work_on_finance(&f, &files).await;
    set_rules(&f, bobs_rules()).await;
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

/// The SSE stream of `/v1/events/stream`, read as it comes.
struct EventStream {
    bytes: BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: Vec<u8>,
}

impl EventStream {
    /// Opens the stream as `token` after `after`, or after `last_event_id`
    /// if given (sent as `Last-Event-ID`, as a reconnecting client does).
    async fn open(http: &Http, token: &str, after: u64, last_event_id: Option<u64>) -> Self {
        let mut request = http
            .client
            .get(format!("{}/v1/events/stream?after={after}", http.base))
            .bearer_auth(token);
        if let Some(seq) = last_event_id {
            request = request.header("last-event-id", seq.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        Self {
            bytes: response
                .bytes_stream()
                .map(|b| b.map(|b| b.to_vec()))
                .boxed(),
            buffer: Vec::new(),
        }
    }

    /// The next event within `within` (keep-alives skipped); `None` once the
    /// server ended the stream.
    async fn next_event(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            while let Some(data) = leasedesk::remote::next_message_data(&mut self.buffer) {
                if !data.is_empty() {
                    return Some(serde_json::from_str(&data).expect("an event"));
                }
            }
            match tokio::time::timeout_at(deadline, self.bytes.next()).await {
                Ok(Some(Ok(chunk))) => self.buffer.extend_from_slice(&chunk),
                Ok(None | Some(Err(_))) => return None,
                Err(_) => panic!("no event within {within:?}"),
            }
        }
    }

    /// The events up to and including the one numbered `last`.
    async fn events_through(&mut self, last: u64) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self
                .next_event(Duration::from_secs(10))
                .await
                .expect("the stream stays open");
            let seq = event["seq"].as_u64().unwrap();
            events.push(event);
            if seq >= last {
                return events;
            }
        }
    }
}

/// Whether `event` tells of `file`: its own, or one naming it among others
/// (a change's), or naming the hidden folder.
fn names_file(event: &Value, file: &Artifact) -> bool {
    event["artifact_id"] == file.id.to_string()
        || mentions(event, &file.id.to_string())
        || mentions(event, "finance/")
}

/// Events of a hidden file are in no page of bob's and never on his
/// stream, not even inside another event (a change of several files);
/// his pages skip them with `next` moving on, and his stream, resumed
/// from a hidden event's seq, starts after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_file_leaves_no_trace_in_event_pages_or_the_stream() {
    let f = remote_fixture().await;
    let files = import_files(&f).await;
    let traces = work_on_finance(&f, &files).await;
    set_rules(&f, bobs_rules()).await;
    let http = Http::of(&f);
    let bob = f.token(BOB);

    // Pages: from 0, and from just before each of the hidden file's events.
    let all = f.all_events().await;
    let newest = all.last().unwrap().seq;
    let page = http.get("/v1/events?after=0&limit=1000", bob).await;
    assert_eq!(page.status, StatusCode::OK);
    let events = page.body["events"].as_array().unwrap();
    assert!(!events.is_empty());
    assert!(
        events.iter().all(|e| !names_file(e, &files.q3)),
        "{}",
        page.body
    );
    assert_eq!(
        page.body["next"], newest,
        "next is the newest seq, hidden or not"
    );
    let hidden_seqs: Vec<u64> = all
        .iter()
        .filter(|e| e.artifact_id == Some(files.q3.id))
        .map(|e| e.seq)
        .collect();
    assert!(hidden_seqs.len() >= 10, "{hidden_seqs:?}");
    for seq in &hidden_seqs {
        for limit in [1, 1000] {
            let page = http
                .get(&format!("/v1/events?after={}&limit={limit}", seq - 1), bob)
                .await;
            assert_eq!(page.status, StatusCode::OK);
            let events = page.body["events"].as_array().unwrap();
            assert!(
                events.iter().all(|e| !names_file(e, &files.q3)),
                "{}",
                page.body
            );
            let next = page.body["next"].as_u64().unwrap();
            assert!(
                next >= *seq,
                "after {}: next {next} did not move on",
                seq - 1
            );
            if limit == 1000 {
                assert_eq!(next, newest);
            }
        }
    }

    // The stream: alice works on the hidden file, then on a change of both,
    // then on brand/open.psd alone; bob is told of the open file only.
    let mut stream = EventStream::open(&http, bob, newest, None).await;
    f.alice
        .check_in(traces.checkout, bytes(b"q3 streamed"))
        .await
        .unwrap();
    let c = f
        .alice
        .check_out(files.q3.id, checkout_request())
        .await
        .unwrap();
    f.alice.cancel(c.id).await.unwrap();
    change_of(
        &f,
        &[
            (files.q3.id, b"q3 with open"),
            (files.open.id, b"open with q3"),
        ],
    )
    .await;
    let c = f
        .alice
        .check_out(files.open.id, checkout_request())
        .await
        .unwrap();
    f.alice
        .check_in(c.id, bytes(b"open streamed"))
        .await
        .unwrap();
    let all = f.all_events().await;
    let streamed: Vec<&Event> = all.iter().filter(|e| e.seq > newest).collect();
    let last = streamed.last().unwrap().seq;
    assert_eq!(streamed.last().unwrap().artifact_id, Some(files.open.id));
    let sent = stream.events_through(last).await;
    let first_hidden = streamed
        .iter()
        .find(|e| e.artifact_id == Some(files.q3.id))
        .unwrap()
        .seq;
    let mut resumed = EventStream::open(&http, bob, 0, Some(first_hidden)).await;
    let resent = resumed.events_through(last).await;

    let leaked = sent
        .iter()
        .chain(&resent)
        .filter(|e| names_file(e, &files.q3))
        .count();
    eprintln!("figure: events sent to bob for the none folder: {leaked}");
    assert_eq!(leaked, 0, "{sent:#?}");
    let open_events = |events: &[Value]| -> Vec<u64> {
        events
            .iter()
            .filter(|e| e["artifact_id"] == files.open.id.to_string())
            .map(|e| e["seq"].as_u64().unwrap())
            .collect()
    };
    let expected: Vec<u64> = streamed
        .iter()
        .filter(|e| e.artifact_id == Some(files.open.id))
        .map(|e| e.seq)
        .collect();
    assert_eq!(
        open_events(&sent),
        expected,
        "every event of the open file, in order"
    );
    assert_eq!(open_events(&resent), expected);
    assert!(resent
        .iter()
        .all(|e| e["seq"].as_u64().unwrap() > first_hidden));
    // The change's own event is told, naming the open file alone.
    let change = sent
        .iter()
        .find(|e| e["type"] == "change.committed")
        .expect("the change's event");
    assert_eq!(
        change["data"]["files"].as_array().unwrap().len(),
        1,
        "{change}"
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
    let alices = f.alice.check_out(logo, checkout_request()).await.unwrap();
    f.alice.check_in(alices.id, bytes(&png(2))).await.unwrap();
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
            .client
            .get(format!("{}/v1/artifacts/{logo}/content{query}", http.base))
            .bearer_auth(bob)
            .send()
            .await
            .unwrap();
        assert_eq!(content.status(), StatusCode::OK, "content{query}");
        assert_eq!(content.bytes().await.unwrap().to_vec(), png(shade));
    }
    let preview = http
        .client
        .get(format!("{}/v1/artifacts/{logo}/preview?size=16", http.base))
        .bearer_auth(bob)
        .send()
        .await
        .unwrap();
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
    f.bob
        .stage(checkouts[0].id, bytes(b"bob's q3"))
        .await
        .unwrap();
    f.bob
        .stage(checkouts[1].id, bytes(b"bob's open"))
        .await
        .unwrap();
    let change = f
        .bob
        .commit_change(ChangeRequest {
            checkouts: checkouts.iter().map(|c| c.id).collect(),
            message: None,
        })
        .await
        .unwrap();
    assert_eq!(change.outcome, ChangeOutcome::Proposal);
    let proposals = f.alice.proposals(ProposalFilter::default()).await.unwrap();
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
    assert_eq!(
        f.alice
            .proposals(ProposalFilter::default())
            .await
            .unwrap()
            .len(),
        2
    );
}

/// A revoked device's open event stream ends within a second, and its
/// token is refused from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_device_s_stream_ends_at_once() {
    let f = remote_fixture().await;
    let http = Http::of(&f);
    let (bob, admin) = (f.token(BOB), f.token("user:admin"));
    let devices = http.get("/v1/me/devices", bob).await;
    assert_eq!(devices.status, StatusCode::OK, "{}", devices.body);
    let current = devices.body["current"].as_str().unwrap().to_owned();
    let mut stream = EventStream::open(&http, bob, 0, None).await;
    f.import("brand/open.psd", b"open v1").await;
    assert!(stream.next_event(Duration::from_secs(10)).await.is_some());

    let revoke = http
        .call(
            Method::DELETE,
            &format!("/v1/participants/user:bob/devices/{current}"),
            Some(admin),
            None,
        )
        .await;
    assert_eq!(revoke.status, StatusCode::NO_CONTENT, "{}", revoke.body);
    let revoked = Instant::now();
    let ended = tokio::time::timeout(Duration::from_millis(1500), async {
        loop {
            match stream.bytes.next().await {
                None | Some(Err(_)) => return,
                Some(Ok(_)) => continue,
            }
        }
    })
    .await;
    let took = revoked.elapsed();
    eprintln!(
        "figure: a revoked device's stream ended {} ms after the revocation",
        took.as_millis()
    );
    assert!(
        ended.is_ok(),
        "the stream was still open 1.5 s after the revocation"
    );
    refused(
        &http.get("/v1/me", bob).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    );
    // Alice's token, another device's, still works.
    assert_eq!(
        http.get("/v1/me", f.token("user:alice")).await.status,
        StatusCode::OK
    );
}

//! The app's local API for editor plugins (`docs/API.md`, "Inside the
//! editor"), served by `leasedesk_plugin_api` over a real desk: each state
//! a plugin sees, the operations (on every backend), the events, who may
//! call, and what a hostile caller gets.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leasedesk::desk::Desk;
use leasedesk::model::*;
use leasedesk_plugin_api::discovery::{self, Discovery};
use leasedesk_plugin_api::{Acted, PluginApi};
use serde_json::{json, Value};

use crate::harness::*;

/// The API on a desk of alice's, and what it told the app.
struct Plugged {
    api: PluginApi,
    found: Discovery,
    desk: Desk,
    acts: Arc<Mutex<Vec<String>>>,
    http: reqwest::Client,
}

async fn plugged(f: &Fixture) -> Plugged {
    let desk = desk_in(
        &f.dir.path().join("alice"),
        f.alice.clone(),
        f.clock.clone(),
    );
    let acts = Arc::new(Mutex::new(Vec::new()));
    let told = acts.clone();
    let on_acted = Arc::new(move |acted: Acted| {
        let name = format!("{acted:?}");
        told.lock()
            .unwrap()
            .push(name[..name.find('(').unwrap_or(name.len())].to_owned());
    });
    let api = PluginApi::start(&f.dir.path().join("app-data"), on_acted)
        .await
        .unwrap();
    api.set_desk(Ok(desk.clone()));
    let found = discovery::read(api.discovery_file()).unwrap();
    Plugged {
        api,
        found,
        desk,
        acts,
        // The local API lets an idle connection go after 5 s (its time for
        // a request's headers): one kept in the pool longer can be closed
        // just as it is used again.
        http: reqwest::Client::builder()
            .pool_idle_timeout(Duration::from_secs(2))
            .build()
            .unwrap(),
    }
}

impl Plugged {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.found.port)
    }

    async fn state(&self, local: &Path) -> (u16, Value) {
        let asked = self
            .http
            .get(self.url("/files"))
            .query(&[("path", local.to_str().unwrap())])
            .bearer_auth(&self.found.secret);
        seen(asked.send().await.unwrap()).await
    }

    async fn post(&self, operation: &str, body: Value) -> (u16, Value) {
        let asked = self
            .http
            .post(self.url(operation))
            .bearer_auth(&self.found.secret)
            .json(&body);
        seen(asked.send().await.unwrap()).await
    }

    /// Imports `p` (as "v1") and brings alice's copy of it down: the
    /// artifact, and where its copy lies.
    async fn copy_of(&self, f: &Fixture, p: &str) -> (Artifact, PathBuf) {
        let artifact = f.import(p, b"v1").await;
        self.desk.update(artifact.id).await.unwrap();
        (artifact, self.local(p))
    }

    fn local(&self, p: &str) -> PathBuf {
        self.desk.workspace().local_path(&path(p)).unwrap()
    }
}

/// A refusal with this status and code, in the HTTP API's JSON.
fn assert_refused(status: u16, body: &Value, expected: u16, code: &str) {
    assert_eq!(
        (status, body["error"].as_str()),
        (expected, Some(code)),
        "{body}"
    );
}

/// A FileState in this state.
fn assert_state(status: u16, body: &Value, state: &str) {
    assert_eq!(
        (status, body["state"].as_str()),
        (200, Some(state)),
        "{body}"
    );
}

async fn seen(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

crate::contract! {
    a_plugin_sees_each_state_of_a_file_and_acts_as_the_app,
    a_plugin_asks_the_holder,
}

async fn a_plugin_sees_each_state_of_a_file_and_acts_as_the_app(f: Fixture) {
    let p = plugged(&f).await;
    let (hero, local) = p.copy_of(&f, "scenes/hero.blend").await;

    let (status, free) = p.state(&local).await;
    assert_eq!(status, 200, "{free}");
    assert_eq!(free["state"], "free");
    assert_eq!(free["repo_path"], "scenes/hero.blend");
    assert_eq!(free["version"], 1);
    assert_eq!(
        free["read_only"], true,
        "not checked out: the copy is read-only"
    );

    let bobs = f
        .bob
        .check_out(
            hero.id,
            CheckoutRequest {
                ttl_seconds: None,
                note: Some("retouching".into()),
            },
        )
        .await
        .unwrap();
    let (_, held) = p.state(&local).await;
    assert_eq!(held["state"], "held");
    assert_eq!(held["holder"], "bob");
    assert_eq!(held["note"], "retouching");
    assert!(held["expires_at"].is_string());
    let (status, busy) = p.post("/files/checkout", json!({ "path": local })).await;
    assert_refused(status, &busy, 409, "artifact_busy");
    assert_eq!(
        busy["lease"]["note"], "retouching",
        "the refusal names the holder's lease"
    );
    f.bob.cancel(bobs.id).await.unwrap();

    let (status, yours) = p
        .post(
            "/files/checkout",
            json!({ "path": local, "note": "new sky", "hours": 2 }),
        )
        .await;
    assert_eq!(status, 200, "{yours}");
    assert_eq!(yours["state"], "yours");
    assert_eq!(yours["holder"], "alice");
    assert_eq!(yours["note"], "new sky");
    assert_eq!(
        yours["read_only"], false,
        "checked out: the copy may be saved"
    );
    let expires: Timestamp = serde_json::from_value(yours["expires_at"].clone()).unwrap();
    let hours = (expires - f.clock.now()).num_minutes() as f64 / 60.0;
    assert!(
        (hours - 2.0).abs() < 0.05,
        "a lease of the hours asked: {hours}"
    );

    let (status, extended) = p.post("/files/extend", json!({ "path": local })).await;
    assert_state(status, &extended, "yours");

    std::fs::write(&local, b"v2 from the editor").unwrap();
    let (_, modified) = p.state(&local).await;
    assert_eq!(modified["modified"], true, "{modified}");
    let (status, checked_in) = p
        .post(
            "/files/checkin",
            json!({ "path": local, "description": "the new sky" }),
        )
        .await;
    assert_eq!(status, 200, "{checked_in}");
    assert_eq!(checked_in["state"], "free");
    assert_eq!(checked_in["result"]["outcome"], "committed", "{checked_in}");
    assert_eq!(checked_in["version"], 2);
    let head = f.alice.artifact(hero.id).await.unwrap().head;
    assert_eq!(
        head.message.as_deref(),
        Some("the new sky"),
        "the description is the version's"
    );
    assert_eq!(
        read_content(f.alice.as_ref(), hero.id, Some(2)).await,
        b"v2 from the editor"
    );

    let (status, again) = p.post("/files/checkin", json!({ "path": local })).await;
    assert_refused(status, &again, 409, "not_held");
    let (status, _) = p.post("/files/checkout", json!({ "path": local })).await;
    assert_eq!(status, 200);
    let (status, cancelled) = p.post("/files/cancel", json!({ "path": local })).await;
    assert_state(status, &cancelled, "free");

    assert_eq!(
        *p.acts.lock().unwrap(),
        [
            "CheckedOut",
            "Extended",
            "CheckedIn",
            "CheckedOut",
            "Cancelled"
        ],
        "the app is told of each act, and of nothing refused"
    );

    let elsewhere = f.dir.path().join("elsewhere/other.blend");
    let (status, outside) = p.state(&elsewhere).await;
    assert_state(status, &outside, "outside");
    assert_eq!(outside["repo_path"], Value::Null);
    let (status, refused) = p
        .post("/files/checkout", json!({ "path": elsewhere }))
        .await;
    assert_refused(status, &refused, 404, "not_found");
    let (_, not_added) = p.state(&p.local("scenes/not-added.blend")).await;
    assert_eq!(
        not_added["state"], "outside",
        "a file the studio does not have"
    );

    // `get` places the copy of a file not here yet.
    f.import("scenes/prop.blend", b"prop").await;
    let (status, got) = p
        .post("/files/get", json!({ "repo_path": "scenes/prop.blend" }))
        .await;
    assert_state(status, &got, "free");
    assert_eq!(
        std::fs::read(p.local("scenes/prop.blend")).unwrap(),
        b"prop"
    );
}

async fn a_plugin_asks_the_holder(f: Fixture) {
    let p = plugged(&f).await;
    let (hero, local) = p.copy_of(&f, "hero.blend").await;
    f.bob.check_out(hero.id, checkout_request()).await.unwrap();
    let (status, asked) = p
        .post(
            "/files/ask",
            json!({ "path": local, "message": "may I have it for the render?" }),
        )
        .await;
    assert_state(status, &asked, "held");
    let requests = f.bob.requests(true).await.unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].message.as_deref(),
        Some("may I have it for the render?")
    );
    assert_eq!(*p.acts.lock().unwrap(), ["Asked"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_following_events_hear_of_each_change() {
    let f = fixture();
    let p = plugged(&f).await;
    let (hero, local) = p.copy_of(&f, "hero.blend").await;
    let mut events = p
        .http
        .get(p.url("/events"))
        .bearer_auth(&p.found.secret)
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    let hello = events.chunk().await.unwrap().unwrap();
    assert!(hello.starts_with(b":"), "the follower is told it follows");

    p.post("/files/checkout", json!({ "path": local })).await;
    let mine = next_state(&mut events).await;
    assert_eq!(
        (mine["state"].as_str(), mine["path"].as_str()),
        (Some("yours"), local.to_str())
    );
    p.post("/files/cancel", json!({ "path": local })).await;
    assert_eq!(next_state(&mut events).await["state"], "free");

    // Others' work reaches plugins as the app hears of it.
    f.bob.check_out(hero.id, checkout_request()).await.unwrap();
    p.api.tell_artifacts(&p.desk, &[hero.id]).await;
    let held = next_state(&mut events).await;
    assert_eq!(
        (held["state"].as_str(), held["holder"].as_str()),
        (Some("held"), Some("bob"))
    );
}

async fn next_state(events: &mut reqwest::Response) -> Value {
    let mut text = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(5), events.chunk())
            .await
            .expect("a state within 5 s")
            .unwrap()
            .expect("the stream goes on");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
        if let Some(end) = text.find("\n\n") {
            let event = &text[..end];
            if let Some(data) = event.strip_prefix("event: state\ndata: ") {
                return serde_json::from_str(data).unwrap();
            }
            text.drain(..end + 2);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_plugin_with_this_starts_secret_is_answered() {
    let f = fixture();
    let p = plugged(&f).await;
    let (_, local) = p.copy_of(&f, "hero.blend").await;
    let encoded: String =
        url::form_urlencoded::byte_serialize(local.to_str().unwrap().as_bytes()).collect();
    let files = format!("/files?path={encoded}");
    let secret = p.found.secret.clone();
    let port = p.found.port;
    let ask = |headers: &[(&str, &str)]| raw_get(port, &files, headers);

    assert_eq!(
        ask(&[("Authorization", &format!("Bearer {secret}"))]).0,
        200
    );
    // Headers sent, and the status and code answered.
    let cases: [(Headers, u16, &str); 5] = [
        (&[], 401, "unauthorized"),
        (&[("Authorization", "Bearer 0123")], 401, "unauthorized"),
        (&[("Authorization", &secret)], 401, "unauthorized"),
        (
            &[
                ("Authorization", &format!("Bearer {secret}")),
                ("Origin", "https://evil.example"),
            ],
            403,
            "forbidden",
        ),
        (
            &[
                ("Authorization", &format!("Bearer {secret}")),
                ("Origin", "null"),
            ],
            403,
            "forbidden",
        ),
    ];
    for (headers, status, code) in cases {
        let (got, body) = ask(headers);
        assert_refused(got, &body, status, code);
    }
    // A page that rebinds a name of its own to 127.0.0.1 sends that name.
    let rebound = raw_request(
        port,
        &format!("GET {files} HTTP/1.1\r\nHost: evil.example:{port}\r\nAuthorization: Bearer {secret}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(rebound.0, 403, "{}", rebound.1);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(p.api.discovery_file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the secret is the user's alone");
    }

    // The next start: the earlier secret opens nothing, the earlier port is shut.
    let data = p.api.discovery_file().parent().unwrap().to_owned();
    drop(p);
    assert!(
        !data.join(discovery::FILE_NAME).exists(),
        "the file goes with the app"
    );
    let next = PluginApi::start(&data, Arc::new(|_| {})).await.unwrap();
    let now = discovery::read(next.discovery_file()).unwrap();
    assert_ne!(now.secret, secret);
    let (status, body) = raw_get(
        now.port,
        &files,
        &[("Authorization", &format!("Bearer {secret}"))],
    );
    assert_refused(status, &body, 401, "unauthorized");
    // The earlier port is shut: nothing there lists the files for the
    // earlier secret. (Another test's server may have been given the port
    // since, as Wine gives ports out again soon.)
    if port != now.port {
        assert!(
            !lists_files(port, &files, &secret),
            "the earlier API still answers"
        );
    }
}

/// Whether whatever listens on `port` (if anything) answers `files` with
/// 200 for `secret`.
fn lists_files(port: u16, files: &str, secret: &str) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = format!(
        "GET {files} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {secret}\r\nConnection: close\r\n\r\n"
    );
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.write_all(request.as_bytes());
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer.starts_with(b"HTTP/1.1 200")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_get_clear_errors_and_block_nothing() {
    let f = fixture();
    let p = plugged(&f).await;
    let (_, local) = p.copy_of(&f, "scenes/hero.blend").await;
    let escaping = format!("{}/../../outside.blend", local.parent().unwrap().display());
    let bearer = format!("Bearer {}", p.found.secret);
    let auth: &[(&str, &str)] = &[("Authorization", &bearer)];

    for (path, why) in [
        (escaping.as_str(), "`..`"),
        ("hero.blend", "not a full path"),
        ("", "the path must be"),
    ] {
        let (status, body) = p.post("/files/checkout", json!({ "path": path })).await;
        assert_refused(status, &body, 400, "bad_request");
        assert!(body["message"].as_str().unwrap().contains(why), "{body}");
    }
    let (status, body) = raw_get(p.found.port, "/files?path=%2Ftmp%2F%FF%FE.blend", auth);
    assert_refused(status, &body, 400, "bad_request");
    assert!(body["message"].as_str().unwrap().contains("UTF-8"));
    let (status, body) = raw_get(p.found.port, "/files", auth);
    assert_refused(status, &body, 400, "bad_request");
    let (status, body) = p
        .post("/files/checkout", json!({ "path": local, "hours": -1 }))
        .await;
    assert_refused(status, &body, 422, "invalid");
    let (status, body) = p
        .post("/files/checkout", json!({ "note": "no path" }))
        .await;
    assert_refused(status, &body, 400, "bad_request");
    let (status, body) = p.post("/files/get", json!({ "repo_path": "../x" })).await;
    assert_eq!(status / 100, 4, "{body}");
    let (status, body) = raw_get(p.found.port, "/nowhere", auth);
    assert_refused(status, &body, 404, "not_found");
    let (status, body) = raw_get(p.found.port, "/files/checkout", auth);
    assert_refused(status, &body, 405, "method_not_allowed");

    let huge = format!("{{\"path\": \"{}\"}}", "a".repeat(4 << 20));
    // A client of its own: the connection it was sending on is closed under it.
    let sent = reqwest::Client::new()
        .post(p.url("/files/checkout"))
        .bearer_auth(&p.found.secret)
        .body(huge)
        .send()
        .await;
    // Refused as too large, or the connection closed before all was sent.
    if let Ok(answer) = sent {
        let (status, body) = seen(answer).await;
        assert_refused(status, &body, 413, "too_large");
    }

    // A client that never finishes its headers, and one that never finishes
    // its body: the others are answered meanwhile, and both are let go.
    let port = p.found.port;
    let slow_headers = std::thread::spawn(move || {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .write_all(b"GET /files?path=/x HTTP/1.1\r\nHost: 127.0")
            .unwrap();
        let started = Instant::now();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        started.elapsed()
    });
    let body_start = format!(
        "POST /files/checkout HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {bearer}\r\nContent-Length: 100\r\n\r\n{{\"path\""
    );
    let slow_body = std::thread::spawn(move || {
        let started = Instant::now();
        let answer = raw_request(port, &body_start);
        (answer, started.elapsed())
    });
    let answered = Instant::now();
    let (status, _) = p.state(&local).await;
    assert_eq!(status, 200);
    assert!(
        answered.elapsed() < Duration::from_secs(2),
        "others are answered meanwhile"
    );
    // And one that connects and says nothing at all.
    let silent = std::thread::spawn(move || {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let started = Instant::now();
        let _ = stream.read_to_end(&mut Vec::new());
        started.elapsed()
    });
    let held = slow_headers.join().unwrap();
    assert!(
        held < Duration::from_secs(15),
        "a client slow to send its headers is let go: {held:?}"
    );
    let quiet = silent.join().unwrap();
    assert!(
        quiet < Duration::from_secs(15),
        "a client that sends nothing is let go: {quiet:?}"
    );
    let ((status, body), took) = slow_body.join().unwrap();
    assert_refused(status, &body, 400, "bad_request");
    assert!(took < Duration::from_secs(15), "{took:?}");
    let (_, still) = p.state(&local).await;
    assert_eq!(
        still["state"], "free",
        "nothing was checked out by the broken requests"
    );
}

type Headers<'a> = &'a [(&'a str, &'a str)];

/// `GET path` with these headers over a plain socket, so nothing is added.
fn raw_get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    raw_request(port, &request)
}

/// Sends `request` as it is and reads the answer to its end (the server
/// closes: `Connection: close`, or a refused body).
fn raw_request(port: u16, request: &str) -> (u16, Value) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

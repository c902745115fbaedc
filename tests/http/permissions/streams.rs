//! The hidden file in event pages and on the event stream, and a revoked
//! device's stream.

use std::time::{Duration, Instant};

use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use leasedesk::model::*;

use super::*;

/// The SSE stream of `/v1/events/stream`, read as it comes.
struct EventStream {
    bytes: BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: Vec<u8>,
}

impl EventStream {
    /// Opens the stream as `token` after `after`, or after `last_event_id`
    /// if given (sent as `Last-Event-ID`, as a reconnecting client does).
    async fn open(http: &Http, token: &str, after: u64, last_event_id: Option<u64>) -> Self {
        let path = format!("/v1/events/stream?after={after}");
        let mut request = http.request(Method::GET, &path, token);
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
    let (f, files, traces) = finance_worked_on_then_hidden().await;
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
    f.check_out_and_cancel(files.q3.id).await;
    change_of(
        &f,
        &[
            (files.q3.id, b"q3 with open"),
            (files.open.id, b"open with q3"),
        ],
    )
    .await;
    f.check_out_and_in(files.open.id, b"open streamed").await;
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

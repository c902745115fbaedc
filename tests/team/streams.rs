//! The event stream across servers: a stream open on one server hears what
//! another wrote at once (through the database's notices), never only at its
//! next poll.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use leasedesk::model::*;
use leasedesk::{Backend, Remote};

use super::servers_on;
use crate::failover::{ServeProcess, SharedStore};
use crate::harness::*;

/// Two servers on a new database, and a client of each: one listens on the
/// first, the other writes through the second.
struct ListenerAndWriter {
    listener: Remote,
    writer: Arc<dyn Backend>,
    _servers: [ServeProcess; 2],
    /// Its data folder outlives the servers.
    _store: SharedStore,
}

fn listener_and_writer() -> ListenerAndWriter {
    let team = SharedStore::postgres();
    let token = team.account("user:alice");
    let servers: [ServeProcess; 2] = servers_on(&team);
    ListenerAndWriter {
        listener: Remote::new(&servers[0].url, &token).unwrap(),
        writer: servers[1].client(&token),
        _servers: servers,
        _store: team,
    }
}

/// How long after `since` the stream's first event that `wanted` accepts came.
async fn heard(
    stream: &mut (impl futures_util::Stream<Item = leasedesk::Result<Event>> + Unpin),
    since: Instant,
    wanted: impl Fn(&Event) -> bool,
) -> Duration {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(3), stream.next())
            .await
            .expect("the stream hears the other server")
            .expect("the stream goes on")
            .unwrap();
        if wanted(&event) {
            return since.elapsed();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_on_one_server_hears_the_other_within_a_second() {
    let team = listener_and_writer();
    let mut stream = Box::pin(team.listener.follow_events(0).await.unwrap());
    let mut slowest = Duration::ZERO;
    for n in 0..5u8 {
        let sent = Instant::now();
        let artifact = team
            .writer
            .import(&path(&format!("f{n}.psd")), bytes(&[n]))
            .await
            .unwrap();
        let took = heard(&mut stream, sent, |e| e.artifact_id == Some(artifact.id)).await;
        slowest = slowest.max(took);
    }
    // A follower polls once a second anyway: heard well within that, the
    // other server's notice woke it.
    assert!(
        slowest < Duration::from_millis(600),
        "the slowest change took {slowest:?} to be heard"
    );
}

/// A server sends at most one notice of changes a window: a burst of
/// changes is announced at the window's end, so the last change of each
/// burst is heard on the other server as soon as the first, not at the
/// follower's next poll (a second).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_change_of_a_burst_is_heard_on_the_other_server_at_once() {
    let team = listener_and_writer();
    let writer = &team.writer;
    let artifact = writer
        .import(&path("burst.psd"), bytes(b"x"))
        .await
        .unwrap();
    let mut stream = Box::pin(team.listener.follow_events(0).await.unwrap());
    let mut slowest = Duration::ZERO;
    for _ in 0..4 {
        // Each change within the window of the one before.
        for _ in 0..4 {
            let edit = writer.begin_edit(artifact.id, None).await.unwrap();
            writer.release_edit(edit.id).await.unwrap();
        }
        let written = Instant::now();
        let last_seq = all_events(writer.as_ref()).await.last().unwrap().seq;
        let took = heard(&mut stream, written, |e| e.seq == last_seq).await;
        slowest = slowest.max(took);
    }
    // Left to the follower's poll, each burst's last change would take up
    // to a second, on average half of one: four at once within 400 ms by
    // chance is about one in forty.
    assert!(
        slowest < Duration::from_millis(400),
        "the slowest burst's last change took {slowest:?} to be heard"
    );
}

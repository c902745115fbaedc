//! The app's desk when its server stops answering: a real `leasedesk serve`
//! (in this process) stopped and started again on the same port.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use leasedesk::clock::Clock;
use leasedesk::error::Code;
use leasedesk::model::*;
use leasedesk::workspace::LocalState;
use leasedesk::{Backend, Bundled, Remote};

use crate::harness::*;

/// A server on one port that can be stopped and started again there.
struct Restartable {
    store: Bundled,
    address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Restartable {
    async fn start(store: Bundled) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut server = Self {
            store,
            address,
            stop: None,
            serving: None,
        };
        server.serve(listener);
        server
    }

    fn serve(&mut self, listener: tokio::net::TcpListener) {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        self.stop = Some(stop);
        self.serving = Some(tokio::spawn(leasedesk::server::run(
            listener,
            self.store.clone(),
            async {
                let _ = stopped.await;
            },
        )));
    }

    fn base(&self) -> String {
        format!("http://{}", self.address)
    }

    async fn kill(&mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.serving.take().unwrap().await.unwrap().unwrap();
    }

    async fn again(&mut self) {
        let listener = tokio::net::TcpListener::bind(self.address).await.unwrap();
        self.serve(listener);
    }
}

fn json(overview: &leasedesk::desk::Overview) -> serde_json::Value {
    serde_json::to_value(overview).unwrap()
}

fn unavailable_message(error: leasedesk::Error) -> String {
    match error {
        leasedesk::Error::Unavailable(message) => message,
        other => panic!("refused as {other:?}, not as unreachable"),
    }
}

#[cfg(unix)]
fn writable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o200 != 0
}

/// The server stops: the desk keeps the view it had, marked with when it
/// was fetched, local changes still show, a check-in is refused with why and
/// sent nowhere; the server back on the same port, the mark goes and the
/// check-in, pressed again, lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_the_desk_keeps_its_last_view_and_refuses_lease_actions_until_the_server_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Bundled::open(&dir.path().join("store")).unwrap();
    let (_, token) = store
        .add_account(&participant("user:alice"), false)
        .unwrap();
    let alice_here = store.acting_as(participant("user:alice"));
    let hero = import_as(&alice_here, "hero.psd", b"v1").await;
    let logo = import_as(&alice_here, "logo.ai", b"v1").await;
    let mut server = Restartable::start(store.clone()).await;

    let remote: Arc<dyn Backend> = Arc::new(Remote::new(&server.base(), &token).unwrap());
    let desk = desk_in(dir.path(), remote, Clock::system());
    let checked_out = desk
        .check_out(hero.id, checkout_request(), None)
        .await
        .unwrap();
    let asked = chrono::Utc::now();
    let before = desk.overview().await.unwrap();
    let answered = chrono::Utc::now();
    assert!(json(&before)["offline_since"].is_null());

    server.kill().await;
    let local = desk.workspace().local_path(&hero.path).unwrap();
    std::fs::write(&local, b"v2, drawn offline").unwrap();
    let seq_before = store.events(0, 1000).await.unwrap().events.len();

    let offline = desk
        .overview()
        .await
        .expect("offline, the last view is shown");
    let mark = json(&offline)["offline_since"].clone();
    let since: Timestamp = serde_json::from_value(mark.clone())
        .unwrap_or_else(|_| panic!("marked offline with a time, not {mark}"));
    assert!(
        asked <= since && since <= answered,
        "marked with when the view was fetched ({asked} to {answered}), not {since}"
    );
    assert_eq!(offline.changes.total, 2);
    let listed = desk
        .folder_rows("", 0, 100)
        .await
        .expect("the list offline");
    assert_eq!(listed.rows.len(), 2, "every file stays listed");
    let hero_row = listed
        .rows
        .iter()
        .find(|r| r.artifact.id == hero.id)
        .unwrap();
    assert!(hero_row.mine.is_some(), "your check-out on its row offline");
    let found = desk
        .search_rows("ero", None, 100)
        .await
        .expect("a search offline, from the mirror");
    assert_eq!(found.rows.len(), 1, "hero, and not logo");
    assert_eq!(offline.checkouts.len(), 1, "your check-out stays listed");
    assert_eq!(offline.checkouts[0].id, checked_out.checkout.id);
    let row = desk.row(hero.id).await.expect("a row offline");
    assert_eq!(row.local, LocalState::Modified, "the local change shows");
    assert!(row.mine.is_some());
    let by_path = desk
        .row_at(&hero.path)
        .await
        .expect("the watcher's row offline");
    assert_eq!(by_path.local, LocalState::Modified);

    let refused = unavailable_message(
        desk.check_in(checked_out.checkout.id, None, Watch::default())
            .await
            .unwrap_err(),
    );
    assert!(
        refused.contains("check-in was not sent") && refused.contains("press Check in again"),
        "the check-in's refusal says why and what to do: {refused}"
    );
    let refused = unavailable_message(
        desk.check_out(logo.id, checkout_request(), None)
            .await
            .unwrap_err(),
    );
    assert!(refused.contains("not checked out"), "{refused}");
    #[cfg(unix)]
    assert!(writable(&local), "your checked-out copy stays writable");
    assert_eq!(std::fs::read(&local).unwrap(), b"v2, drawn offline");

    server.again().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        store.events(0, 1000).await.unwrap().events.len(),
        seq_before,
        "nothing was sent while offline, nor once the server came back"
    );
    assert!(
        desk.connection().offline_since().is_some(),
        "still marked until someone asks"
    );
    assert_eq!(desk.probe().await, leasedesk::desk::Connection::Online);
    let back = desk.overview().await.unwrap();
    assert!(json(&back)["offline_since"].is_null(), "the mark goes");
    let closed = desk
        .check_in(checked_out.checkout.id, None, Watch::default())
        .await
        .expect("the check-in, pressed again, lands");
    assert_committed(&closed.checkout.result, 2);
}

/// With no view fetched yet there is nothing to show: the error says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desk_that_never_reached_its_server_says_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let remote: Arc<dyn Backend> =
        Arc::new(Remote::new(&format!("http://{closed_port}"), "no-token").unwrap());
    let desk = desk_in(dir.path(), remote, Clock::system());
    let error = desk.overview().await.unwrap_err();
    assert_eq!(error.code(), Code::Unavailable, "{error}");
}

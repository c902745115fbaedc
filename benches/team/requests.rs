//! The request figure (issue 23): a request to a holder, delivered to the
//! holder's app after it is made, over two `leasedesk serve` on one
//! PostgreSQL database (fsync on), plain HTTP on loopback. bob asks through
//! the first server; alice's app follows the ledger through the second, by
//! the client's event follower (`Remote::follow_events`, the app's own
//! path), and then, as the app does, reads the request the event names
//! (`desk::news` over the requests to and from her). Each sample asks about
//! another of alice's check-outs (asking again within 15 minutes tells the
//! holder nothing new), one after another, and is withdrawn once heard, so
//! the requests the app reads stay as few as a designer's. Median and p99
//! from sending the ask: to the follower's `request.opened`, and to the
//! news the app shows.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use leasedesk::model::{ArtifactId, CheckoutRequest, RequestId};
use leasedesk::remote::Remote;
use leasedesk::Backend;

use crate::pairs::{add_user, make_artifacts, ms, percentile, serve};

/// What one run measured: from the ask to the event, and to the news.
pub struct Delivered {
    pub samples: usize,
    pub event: (Duration, Duration),
    pub news: (Duration, Duration),
}

impl Delivered {
    pub fn report(&self) {
        let pair =
            |(p50, p99): (Duration, Duration)| format!("median {}, p99 {}", ms(p50), ms(p99));
        let millis = |d: Duration| d.as_secs_f64() * 1e3;
        crate::figures::row(
            &format!(
                "a request delivered to the holder's app after it is made: asked on one server, the holder's follower on the other, two servers on one PostgreSQL 15 database, HTTP ({} requests)",
                self.samples
            ),
            format!("{} (the news read: {})", pair(self.event), pair(self.news)),
            "under 1 s",
            crate::figures::value(millis(self.event.0), "ms")
                .and("p99", millis(self.event.1), "ms")
                .and("the news read", millis(self.news.0), "ms")
                .and("the news read, p99", millis(self.news.1), "ms"),
        );
    }
}

/// Asks `samples` times through the first of two servers on `store` and
/// times each request's arrival at the holder's app on the second.
pub async fn delivered(store: &[OsString], samples: usize) -> Delivered {
    let (alice, bob) = (add_user(store, "alice"), add_user(store, "bob"));
    let servers = [serve(store, &[]), serve(store, &[])];
    let (asked_at, holder_at) = (&servers[0].url, &servers[1].url);
    let http = reqwest::Client::new();
    let artifacts = make_artifacts(&http, asked_at, &alice, samples).await;
    let holder = Remote::new(holder_at, &alice).unwrap();
    let asker = Remote::new(asked_at, &bob).unwrap();
    let mut ids = Vec::new();
    for artifact in &artifacts {
        let id: ArtifactId = artifact.parse().unwrap();
        holder
            .check_out(id, CheckoutRequest::default())
            .await
            .unwrap();
        ids.push(id);
    }

    // The holder's app: each request.opened, and the news read from it.
    let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let me = holder.me().await.unwrap();
    let following = holder.follow_events(0).await.unwrap();
    let app = tokio::spawn(async move {
        let mut events = Box::pin(following);
        while let Some(Ok(event)) = events.next().await {
            if event.kind != "request.opened" {
                continue;
            }
            let seen = Instant::now();
            let requests = holder.requests(true).await.unwrap();
            if let Some(news) = leasedesk::desk::news(&event, &requests, &me) {
                let _ = heard_tx.send((news.request().id, seen, Instant::now()));
            }
        }
    });
    // The setup's events read first, so none is in the way of a sample.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let (mut to_event, mut to_news) = (Vec::new(), Vec::new());
    for artifact in ids {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let sent = Instant::now();
        let (request, is_new) = asker
            .ask(artifact, Some("need it for the logo fix"))
            .await
            .unwrap();
        assert!(is_new, "each sample a new request");
        let (id, seen, ready): (RequestId, Instant, Instant) =
            tokio::time::timeout(Duration::from_secs(10), heard.recv())
                .await
                .expect("the holder's app heard the request within 10 s")
                .expect("the follower runs");
        assert_eq!(id, request.id, "the request asked, heard");
        to_event.push(seen - sent);
        to_news.push(ready - sent);
        asker.withdraw(request.id).await.unwrap();
    }
    app.abort();
    to_event.sort();
    to_news.sort();
    let both = |sorted: &[Duration]| (percentile(sorted, 0.5), percentile(sorted, 0.99));
    Delivered {
        samples: to_event.len(),
        event: both(&to_event),
        news: both(&to_news),
    }
}

//! `events`: the ledger printed, a page or followed as it is written (from a
//! server's stream or by watching a data folder). It only reads events; its
//! one write is a data folder's sweeper recording lapses while it follows.

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use super::{local_time, say, Output, Target};

/// `events`: the events after `after`, or with `follow` every one from there on.
pub(super) async fn events(
    target: &Target,
    after: u64,
    limit: u32,
    follow: bool,
    out: &Output,
) -> Result<(), Error> {
    if follow {
        return follow_events(target, after, out).await;
    }
    let page = target.backend().events(after, limit).await?;
    out.print(&page, || {
        page.events
            .iter()
            .map(event_line)
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(())
}

fn event_line(e: &Event) -> String {
    format!(
        "{:>6}  {}  {:<18} {}  {}",
        e.seq,
        local_time(e.at),
        e.kind,
        e.participant.as_ref().map_or("", |p| p.as_str()),
        e.holder.as_deref().unwrap_or("")
    )
}

/// Prints events as they are written: from the server's event stream, or by
/// watching the data folder.
async fn follow_events(target: &Target, after: u64, out: &Output) -> Result<(), Error> {
    let print = |event: &Event| {
        if out.json {
            say(&serde_json::to_string(event).expect("an event serializes"));
        } else {
            say(&event_line(event));
        }
    };
    match target {
        Target::Server(remote) => {
            // Through outages of the server or its database: opened again
            // after the last event printed, so each is printed once.
            let mut after = after;
            let mut backoff = Backoff::default();
            loop {
                let why = match remote.follow_events(after).await {
                    Ok(stream) => {
                        futures_util::pin_mut!(stream);
                        loop {
                            match futures_util::StreamExt::next(&mut stream).await {
                                Some(Ok(event)) => {
                                    print(&event);
                                    after = event.seq;
                                    backoff.reset();
                                }
                                Some(Err(e)) => break e,
                                None => {
                                    break Error::Unavailable(
                                        "the server ended the event stream".into(),
                                    )
                                }
                            }
                        }
                    }
                    Err(e) => e,
                };
                match why {
                    Error::Unavailable(why) => {
                        let wait = backoff.next();
                        eprintln!("leasedesk: {why}; reconnecting…");
                        tokio::time::sleep(wait).await;
                    }
                    other => return Err(other),
                }
            }
        }
        Target::Local(store) => {
            // Nobody else may have this folder open: record lapses as they come.
            let _sweeper = store.spawn_sweeper(leasedesk::bundled::SWEEP_EVERY);
            let mut after = after;
            loop {
                let changed = store.changed();
                let page = store.events(after, 500).await?;
                page.events.iter().for_each(print);
                after = page.next;
                if page.events.is_empty() {
                    // Other processes write too: look again at least every half second.
                    let _ =
                        tokio::time::timeout(std::time::Duration::from_millis(500), changed).await;
                }
            }
        }
    }
}

/// Waits between tries to reach a server: doubling from a quarter of a
/// second up to 5 s, as the app's offline probe does.
#[derive(Default)]
struct Backoff(u32);

impl Backoff {
    fn next(&mut self) -> std::time::Duration {
        let wait = std::time::Duration::from_millis(250 << self.0.min(5));
        self.0 += 1;
        wait.min(std::time::Duration::from_secs(5))
    }

    fn reset(&mut self) {
        self.0 = 0;
    }
}

//! `events`: the ledger printed, a page or followed as it is written (from a
//! server's stream or by watching a data folder). It only reads events; its
//! one write is a data folder's sweeper recording lapses while it follows.

use std::collections::HashMap;

use futures_util::StreamExt;
use leasedesk::model::*;
use leasedesk::{Backend, Error};

use super::{lines_of, local_time, say, Output, Target};

/// Files looked up at once for a page of events.
const LOOKUPS_AT_ONCE: usize = 8;
/// Paths a follower keeps; past it, it forgets them all and looks up again.
const PATHS_KEPT: usize = 10_000;

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
    let backend = target.backend();
    let page = backend.events(after, limit).await?;
    let mut paths = Paths::default();
    if !out.json {
        paths.learn(backend, &page.events).await?;
    }
    out.print(&page, || lines_of(&page.events, |e| event_line(e, &paths)));
    Ok(())
}

/// `seq  time  type  participant  file  holder`, the file by its path.
fn event_line(e: &Event, paths: &Paths) -> String {
    let line = format!(
        "{:>6}  {}  {:<18} {}  {}  {}",
        e.seq,
        local_time(e.at),
        e.kind,
        e.participant.as_ref().map_or("", |p| p.as_str()),
        paths.file(e),
        e.holder.as_deref().unwrap_or("")
    );
    line.trim_end().to_owned()
}

/// The paths of the files events name, each looked up once (a few at a
/// time), not once per event: a check-in writes four events of one file.
#[derive(Default)]
struct Paths(HashMap<ArtifactId, Option<RepoPath>>);

impl Paths {
    /// The files an event's line names: its own, or a change's first.
    fn named(e: &Event) -> Option<ArtifactId> {
        e.artifact_id.or_else(|| {
            e.data["files"][0]["artifact_id"]
                .as_str()
                .and_then(|id| id.parse().ok())
        })
    }

    /// Looks up the files of `events` not known yet. A file gone from
    /// sight meanwhile is left unnamed.
    async fn learn(&mut self, backend: &dyn Backend, events: &[Event]) -> Result<(), Error> {
        let mut unknown: Vec<ArtifactId> = events
            .iter()
            .filter_map(Self::named)
            .filter(|id| !self.0.contains_key(id))
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        let mut found = futures_util::stream::iter(unknown)
            .map(|id| async move { (id, backend.artifact(id).await) })
            .buffer_unordered(LOOKUPS_AT_ONCE);
        while let Some((id, artifact)) = found.next().await {
            match artifact {
                Ok(artifact) => self.0.insert(id, Some(artifact.path)),
                Err(Error::NotFound(_) | Error::Forbidden(_)) => self.0.insert(id, None),
                Err(e) => return Err(e),
            };
        }
        Ok(())
    }

    /// A renamed file is known by its new path from its rename on.
    fn follow_rename(&mut self, e: &Event) {
        let to = e.data["to"].as_str().and_then(|to| to.parse().ok());
        if let (Some(id), "artifact.renamed", Some(to)) = (e.artifact_id, e.kind.as_str(), to) {
            self.0.insert(id, Some(to));
        }
    }

    /// The file an event's line names: its path ("a.psd and 2 more" for a
    /// change of three), or nothing.
    fn file(&self, e: &Event) -> String {
        let Some(path) = Self::named(e).and_then(|id| self.0.get(&id).cloned().flatten()) else {
            return String::new();
        };
        match e.data["files"].as_array().map_or(0, Vec::len) {
            0 | 1 => path.to_string(),
            n => format!("{path} and {} more", n - 1),
        }
    }
}

/// Prints events as they are written: from the server's event stream, or by
/// watching the data folder.
async fn follow_events(target: &Target, after: u64, out: &Output) -> Result<(), Error> {
    // Paths looked up as events come, kept for the next ones.
    let mut paths = Paths::default();
    let mut print = async |events: &[Event]| -> Result<(), Error> {
        if out.json {
            for event in events {
                say(&serde_json::to_string(event).expect("an event serializes"));
            }
            return Ok(());
        }
        if paths.0.len() > PATHS_KEPT {
            paths.0.clear();
        }
        paths.learn(target.backend(), events).await?;
        for event in events {
            paths.follow_rename(event);
            say(&event_line(event, &paths));
        }
        Ok(())
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
                                    if let Err(e) = print(std::slice::from_ref(&event)).await {
                                        break e;
                                    }
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
                print(&page.events).await?;
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

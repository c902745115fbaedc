//! What runs in the background while a session is open: the file watcher, the
//! event ledger follower (requests to a holder told through `asking`, news
//! of review through `inbox`) and the lease reminders. None of it takes, extends or releases a lease; it
//! only tells the window, the tray and the user.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use leasedesk_desk::workspace::{self, LocalState};
use leasedesk_desk::{self as desk, Desk, Reminder};
use leasedesk_model::model::*;
use tauri::async_runtime::spawn;
use tauri::{AppHandle, Manager};
use tokio::sync::Notify;

use crate::session::{Session, Source};
use crate::shell_events;
use crate::{notify, notify_with_extend, tray_refresh, AppState};

/// How often lease reminders are checked (and the tray's countdowns redrawn).
const REMINDER_TICK: Duration = Duration::from_secs(20);

/// How long after a "changed but not checked out" notice the same file may
/// raise another: a designer saving every minute should hear it once.
const UNRESERVED_NOTICE_QUIET: Duration = Duration::from_secs(600);

pub fn start(app: &AppHandle, session: &mut Session) {
    session
        .tasks
        .push(spawn(fill_mirror(app.clone(), session.desk.clone())));
    match workspace::watch::watch(session.desk.workspace().root()) {
        Ok((watcher, changes)) => {
            session.watcher = Some(watcher);
            let task = spawn(follow_files(app.clone(), session.desk.clone(), changes));
            session.tasks.push(task);
        }
        Err(e) => tracing::warn!("the workspace is not watched: {e}"),
    }
    let list_news = Arc::new(Notify::new());
    session.tasks.push(spawn(tell_list_changes(
        app.clone(),
        session.desk.clone(),
        list_news.clone(),
    )));
    session.tasks.push(spawn(follow_events(
        app.clone(),
        session.desk.clone(),
        session.source.clone(),
        list_news,
    )));
    session
        .tasks
        .push(spawn(remind(app.clone(), session.desk.clone())));
    session
        .tasks
        .push(spawn(keep_connected(app.clone(), session.desk.clone())));
    // The header names the server in use: a move to another is news.
    if let Source::Remote(remote) = &session.source {
        let app = app.clone();
        remote.on_move(move |from, to| {
            tracing::info!("server {from} did not answer; using {to}");
            shell_events::tell(&app, shell_events::StoreChanged, &());
        });
    }
}

/// Brings the mirror of the studio's list up to date as the session opens
/// or comes back online (filled by pages on first use, the window told how
/// far it is; filled anew if the store went back in time), then has the
/// window read it.
async fn fill_mirror(app: AppHandle, desk: Desk) {
    let told = app.clone();
    let progress = move |p: desk::FillProgress| {
        shell_events::tell(&told, shell_events::MirrorProgress, &p);
    };
    if let Err(e) = desk.sync_mirror(desk.origin(), true, &progress).await {
        tracing::warn!("the list of files was not brought up to date: {e}");
    }
    shell_events::tell(&app, shell_events::StoreChanged, &());
}

/// Once the desk finds no server, tells the window (which shows the view
/// kept, marked offline) and asks the server who you are, waiting a little
/// longer each time (`desk::reconnect_delay`, a few seconds at most), until
/// it answers; then the window reloads and the mark goes. Only that
/// question is asked: nothing refused while offline is sent again.
async fn keep_connected(app: AppHandle, desk: Desk) {
    let mut changes = desk.connection_changes();
    loop {
        while changes.borrow_and_update().offline_since().is_none() {
            if changes.changed().await.is_err() {
                return;
            }
        }
        shell_events::tell(&app, shell_events::StoreChanged, &());
        tray_refresh(&app).await;
        let mut attempt = 0;
        while desk.connection().offline_since().is_some() {
            tokio::time::sleep(desk::reconnect_delay(attempt)).await;
            attempt = attempt.saturating_add(1);
            desk.probe().await;
        }
        // The server back may be another, or restored from a backup: a
        // mirror ahead of its store is filled anew, as at the start.
        fill_mirror(app.clone(), desk.clone()).await;
        tray_refresh(&app).await;
    }
}

/// For each changed path, looks at the file again (stat, then hash off the
/// async threads) and sends the window the file's new row.
async fn follow_files(
    app: AppHandle,
    desk: Desk,
    mut changes: tokio::sync::mpsc::UnboundedReceiver<Vec<std::path::PathBuf>>,
) {
    let mut noticed: HashMap<RepoPath, Instant> = HashMap::new();
    while let Some(paths) = changes.recv().await {
        let repo_paths: HashSet<RepoPath> = paths
            .iter()
            .filter_map(|p| desk.workspace().repo_path(p))
            .collect();
        if let Some(plugins) = app.state::<AppState>().plugins() {
            plugins.tell(&desk, repo_paths.iter().cloned()).await;
        }
        for path in repo_paths {
            // Not every file in the folder is in the store (backups, temp
            // files). Offline, the row comes from the view kept.
            let Ok(row) = desk.row_at(&path).await else {
                continue;
            };
            shell_events::tell(&app, shell_events::RowChanged, &row);
            let unreserved = row.local == LocalState::Modified && row.mine.is_none();
            let quiet = noticed
                .get(&path)
                .is_some_and(|at| at.elapsed() < UNRESERVED_NOTICE_QUIET);
            if unreserved && !quiet {
                noticed.insert(path.clone(), Instant::now());
                notify(
                    &app,
                    &format!("{} changed but is not checked out", path.file_name()),
                    "Check it out in Leasedesk before you go on, or your changes may meet someone else's.",
                );
            }
        }
    }
}

/// Follows the event ledger from now on: live from the server's stream, or
/// woken by each write of the bundled store.
async fn follow_events(app: AppHandle, desk: Desk, source: Source, list_news: Arc<Notify>) {
    // From now on: starting from 0 would replay old breaks as news.
    let mut after = loop {
        match desk.last_event_seq().await {
            Ok(seq) => break seq,
            Err(_) => tokio::time::sleep(Duration::from_secs(3)).await,
        }
    };
    // Failed tries in a row to open the stream, for the wait before the next.
    let mut attempt = 0;
    let mut told = desk::Told::default();
    wait_for_files_asked_for(&app, &desk).await;
    // Where the inbox is now, and its count: what comes after is news.
    crate::inbox::look(&app, &desk).await;
    loop {
        match &source {
            Source::Bundled(store) => {
                let changed = store.changed();
                if let Ok(page) = desk.backend().events(after, 500).await {
                    // A page may skip events of files the user cannot see.
                    let moved = page.next > after;
                    after = page.next;
                    if !page.events.is_empty() {
                        on_events(&app, &desk, page.events, &mut told, &list_news).await;
                    }
                    if moved {
                        continue;
                    }
                }
                // Another process may write the same store: look again now and then.
                let _ = tokio::time::timeout(Duration::from_secs(2), changed).await;
            }
            Source::Remote(remote) => {
                // Opened again after the last event held, so none is missed or
                // told twice. A broken stream is the first sign of a server (or
                // its database) gone: the probe marks the window offline, and
                // `keep_connected` brings it back.
                if let Ok(stream) = remote.follow_events(after).await {
                    let mut stream = Box::pin(stream);
                    loop {
                        let (events, goes_on) = next_batch(&mut stream).await;
                        if let Some(last) = events.last().map(|e| e.seq) {
                            after = after.max(last);
                            desk.heard_of(last);
                            attempt = 0;
                            on_events(&app, &desk, events, &mut told, &list_news).await;
                        }
                        if !goes_on {
                            break;
                        }
                    }
                }
                desk.probe().await;
                tokio::time::sleep(desk::reconnect_delay(attempt)).await;
                attempt = attempt.saturating_add(1);
            }
        }
    }
}

/// How long after an event of the stream the next is waited for, to be
/// told with it: one write's events (a lease and its check-out) come a
/// moment apart, and are one piece of news.
const BATCH_WAIT: Duration = Duration::from_millis(15);
/// The most events told at once.
const MOST_BATCHED: usize = 500;

/// The stream's next events: the first as it comes, then those that follow
/// it closely; and whether the stream goes on (false once it ended or
/// broke, after the events before).
async fn next_batch<S>(stream: &mut S) -> (Vec<Event>, bool)
where
    S: futures_util::Stream<Item = leasedesk_model::Result<Event>> + Unpin,
{
    let Some(Ok(first)) = stream.next().await else {
        return (Vec::new(), false);
    };
    let mut events = vec![first];
    while events.len() < MOST_BATCHED {
        match tokio::time::timeout(BATCH_WAIT, stream.next()).await {
            Ok(Some(Ok(event))) => events.push(event),
            Ok(_) => return (events, false),
            Err(_) => break, // quiet for a moment: this batch is whole
        }
    }
    (events, true)
}

/// A file you asked for is one you are told of when it is free: after a
/// restart too, while your request stands.
async fn wait_for_files_asked_for(app: &AppHandle, desk: &Desk) {
    if let (Ok(requests), Ok(me)) = tokio::join!(desk.requests(), desk.me()) {
        let mine = requests.iter().filter(|r| r.from == me);
        app.state::<AppState>()
            .waiting()
            .extend(mine.map(|r| r.artifact_id));
    }
}

async fn on_events(
    app: &AppHandle,
    desk: &Desk,
    events: Vec<Event>,
    told: &mut desk::Told,
    list_news: &Notify,
) {
    let me = desk.me().await.ok();
    if let Some(me) = &me {
        crate::asking::on_request_events(app, desk, me, &events, told).await;
        // Only others' review may have brought you an item: the inbox is
        // asked then, and not for every event of the studio.
        if events.iter().any(|e| desk::may_reach_inbox(e, me)) {
            crate::inbox::look(app, desk).await;
        }
    }
    let state = app.state::<AppState>();
    for event in &events {
        let Some(artifact) = event.artifact_id else {
            continue;
        };
        let name = || async {
            desk.backend()
                .artifact(artifact)
                .await
                .map(|a| a.path.file_name().to_owned())
                .unwrap_or_else(|_| "A file".into())
        };
        let freed = matches!(
            event.kind.as_str(),
            "lease.released" | "lease.expired" | "lease.broken"
        );
        if freed && state.waiting().remove(&artifact) {
            crate::notify_free(app, &format!("{} is free", name().await), artifact);
        }
        let mine = me.as_ref().is_some_and(|me| {
            event
                .data
                .get("holder_participant")
                .and_then(|p| p.as_str())
                == Some(me.as_str())
        });
        if event.kind == "lease.broken" && mine {
            let by = event.participant.as_ref().map_or("an admin", |p| p.name());
            let reason = event
                .data
                .get("reason")
                .and_then(|r| r.as_str())
                .unwrap_or("");
            notify(
                app,
                &format!("Your lease on {} was broken by {by}", name().await),
                &format!("“{reason}”. Your changes are safe: a check-in now becomes a proposal."),
            );
        }
    }
    let artifacts: Vec<ArtifactId> = events.iter().filter_map(|e| e.artifact_id).collect();
    if let Some(plugins) = state.plugins() {
        plugins.tell_artifacts(desk, &artifacts).await;
    }
    shell_events::tell(app, shell_events::NewEvents, &events);
    // Others' work changes the list only: the window reads what changed in
    // it, and the tray (your check-outs and requests) is left be.
    if me.is_none_or(|me| events.iter().any(|e| desk::concerns(e, &me))) {
        shell_events::tell(app, shell_events::StoreChanged, &());
        tray_refresh(app).await;
    } else {
        list_news.notify_one();
    }
}

/// Others' work changed the list only: each time it is told so, sends the
/// window what changed in the list, the mirror brought up to date first
/// and the folders' counts with it, so the window asks nothing back. A
/// task of its own: the follower goes on with the next events meanwhile
/// (a fill of the mirror may hold it a minute), and news that comes while
/// it works is one more round, in order. Events that changed nothing in
/// the list (a request, a comment) tell the window nothing; a mirror that
/// cannot be brought up to date waits for the next round or reload.
async fn tell_list_changes(app: AppHandle, desk: Desk, news: Arc<Notify>) {
    loop {
        news.notified().await;
        match desk.list_changes().await {
            Ok(changes) if changes.changed.is_empty() && !changes.moved => {}
            Ok(changes) => shell_events::tell(&app, shell_events::ListChanged, &changes),
            Err(e) => tracing::debug!("the list's changes were not read: {e}"),
        }
    }
}

/// Lease reminders at 30 and 5 minutes left and at the lapse (which and when:
/// `desk::due_reminders`). Each tick also looks again at the files checked
/// out, in case the watcher missed one (its event queue overflowed, or it
/// could not watch a folder).
async fn remind(app: AppHandle, desk: Desk) {
    let mut sent = HashSet::new();
    let mut restat = workspace::watch::Restat::default();
    loop {
        // Offline, the check-outs last seen: their leases run out all the same.
        if let Ok(checkouts) = desk.my_checkouts().await {
            look_again_at_checkouts(&app, &desk, &checkouts, &mut restat).await;
            let now = chrono::Utc::now();
            for (checkout, reminder) in desk::due_reminders(&checkouts, now, &mut sent) {
                let title = reminder.title(&checkout, now);
                match reminder {
                    Reminder::Lapsed => notify(&app, &title, reminder.body()),
                    _ => notify_with_extend(&app, &title, reminder.body(), checkout.id),
                }
            }
        }
        tray_refresh(&app).await;
        tokio::time::sleep(REMINDER_TICK).await;
    }
}

/// Sends the window a new row for each checked-out file whose stat changed
/// since the last look.
async fn look_again_at_checkouts(
    app: &AppHandle,
    desk: &Desk,
    checkouts: &[Checkout],
    restat: &mut workspace::watch::Restat,
) {
    // A path that cannot be placed here has no copy to look at.
    let local = |c: &Checkout| desk.workspace().local_path(&c.path).ok();
    let changed = restat.changed(checkouts.iter().filter_map(local));
    for checkout in checkouts
        .iter()
        .filter(|c| local(c).is_some_and(|l| changed.contains(&l)))
    {
        if let Ok(row) = desk.row(checkout.artifact_id).await {
            shell_events::tell(app, shell_events::RowChanged, &row);
        }
    }
}

//! The inbox, on a team server: bob @mentions alice in a comment (through
//! the server, as his app would) and her window's Inbox tab, her tray and
//! her desktop count it without a click; the Inbox view lists it; opening
//! an item opens the file's detail and reads it; Mark all read empties the
//! counts; a click on the desktop's notification opens the file and reads
//! the item. Nothing here touches a lease.

use std::time::Duration;

use leasedesk::model::*;
use leasedesk::Backend as _;

use crate::window::*;

/// The tray's item counting the inbox, as the desktop reads the menu.
fn inbox_label(labels: &[String]) -> Option<&String> {
    labels.iter().find(|l| l.contains("in your inbox"))
}

/// The Inbox tab's count, as shown.
const BADGE: &str = "#count-inbox";

async fn badge_is(w: &World, text: &str, what: &str) {
    w.wait_until(BADGE, what, WAIT, |t| t == text).await;
}

fn remote(w: &World, who: &str) -> leasedesk::remote::Remote {
    let server = w.server.as_ref().unwrap();
    leasedesk::remote::Remote::new(&server.url, &server.tokens[who]).unwrap()
}

fn comment_on_version_one(body: &str) -> NewThread {
    NewThread {
        version: Some(1),
        body: body.into(),
        ..NewThread::default()
    }
}

async fn mentioned() {
    let _one = ONE_APP.lock().await;
    let _dunst = start_notification_service();
    let w = World::start(&_one, Backend::Remote).await;
    assert!(dunstctl(&["close-all"]).0);
    let path = "brand/hero.psd";
    w.import(path, b"hero v1");
    w.wait_for(&World::row(path), "the file in the list").await;
    let (bob, alice) = (remote(&w, "bob"), remote(&w, "alice"));
    let artifact = bob.artifact_by_path(&path.parse().unwrap()).await.unwrap();
    badge_is(&w, "", "nothing unread yet").await;
    tray_until("no inbox item yet", |labels| {
        !labels.is_empty() && inbox_label(labels).is_none()
    })
    .await;

    // bob mentions alice: her window counts it, with no click.
    let thread = bob
        .open_thread(
            artifact.id,
            comment_on_version_one("@alice is the sky too blue?"),
        )
        .await
        .unwrap();
    badge_is(&w, "1", "the mention counted on the Inbox tab").await;
    let labels = tray_until("the mention counted in the tray", |labels| {
        inbox_label(labels).is_some_and(|l| l == "1 unread in your inbox…")
    })
    .await;
    assert!(
        labels.iter().any(|l| l == "Open Leasedesk"),
        "the tray's menu as ever: {labels:?}"
    );
    w.wait_text(".notice", "the mention's notice", |t| {
        t.contains("bob mentioned you in hero.psd")
    })
    .await;
    desktop_shows(1, Duration::from_secs(10), "the mention").await;
    w.screenshot("inbox-01-counted").await;

    // The Inbox lists it, unread.
    w.click("tab-inbox").await;
    w.wait_text(
        "#inbox-items .inbox-item.unread",
        "the mention, unread",
        |t| t.contains("bob mentioned you in hero.psd"),
    )
    .await;

    // A request to review while the Inbox is open: on top at once, counted.
    bob.request_review(
        artifact.id,
        NewReviewRequest {
            version: Some(1),
            reviewers: vec!["user:alice".parse().unwrap()],
            ..NewReviewRequest::default()
        },
    )
    .await
    .unwrap();
    badge_is(&w, "2", "the request counted").await;
    w.wait_text(
        "#inbox-items .inbox-item.unread:first-child",
        "the request on top",
        |t| t.contains("bob asked you to review hero.psd"),
    )
    .await;
    tray_until("two counted in the tray", |labels| {
        inbox_label(labels).is_some_and(|l| l == "2 unread in your inbox…")
    })
    .await;
    desktop_shows(2, Duration::from_secs(10), "the request to review").await;
    w.screenshot("inbox-02-listed").await;

    // Opening the mention (the older one) opens hero.psd's detail and reads
    // it; the request stays unread.
    w.click_css(
        "#inbox-items .inbox-item:last-child .inbox-open",
        "the mention",
    )
    .await;
    w.wait_for("#view-files:not([hidden])", "the files").await;
    w.wait_text_is("#detail-name", "hero.psd's detail", "hero.psd")
        .await;
    // At the thread: the mention's thread is the current one.
    w.wait_until(
        ".thread.current",
        "the mention's thread, current",
        Duration::from_secs(10),
        |text| text.contains("is the sky too blue?"),
    )
    .await;
    badge_is(&w, "1", "the mention read").await;
    tray_until("one left in the tray", |labels| {
        inbox_label(labels).is_some_and(|l| l == "1 unread in your inbox…")
    })
    .await;
    let page = alice.inbox(InboxQuery::default()).await.unwrap();
    assert_eq!(
        page.items
            .iter()
            .map(|i| (i.kind, i.read))
            .collect::<Vec<_>>(),
        [
            (InboxKind::Mention, true),
            (InboxKind::ReviewRequested, false)
        ],
        "read as the server keeps it"
    );

    // Mark all read: the counts go, in the window and the tray.
    w.click("tab-inbox").await;
    w.click("inbox-mark-read").await;
    badge_is(&w, "", "all read").await;
    w.wait_until_absent("#inbox-items .inbox-item.unread", "an unread item")
        .await;
    tray_until("nothing unread in the tray", |labels| {
        !labels.is_empty() && inbox_label(labels).is_none()
    })
    .await;
    assert_eq!(alice.inbox(InboxQuery::default()).await.unwrap().unread, 0);
    w.screenshot("inbox-03-all-read").await;

    // bob's answer names alice again; its desktop notification, clicked,
    // opens the file, wherever the window was.
    w.click("tab-activity").await;
    assert!(dunstctl(&["close-all"]).0);
    bob.comment(thread.id, "@alice and the logo?")
        .await
        .unwrap();
    badge_is(&w, "1", "the answer counted").await;
    desktop_shows(1, Duration::from_secs(10), "the answer").await;
    assert!(dunstctl(&["action", "0"]).0, "the notification clicked");
    w.wait_for(
        "#view-files:not([hidden])",
        "the files, from the notification",
    )
    .await;
    w.wait_text_is("#detail-name", "hero.psd's detail", "hero.psd")
        .await;
    badge_is(&w, "", "the answer read, as if opened in the inbox").await;
    w.screenshot("inbox-04-from-the-desktop").await;
    assert!(
        w.lease_ends().await.is_empty(),
        "nobody holds anything: the inbox touches no lease"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_count_changes_when_another_participant_mentions_you() {
    within_limit(mentioned()).await;
}

//! The server killed under the app and started again on its port: the view
//! kept and marked offline, a check-in refused and sent nowhere, the mark
//! gone by itself, the check-in pressed again landing. Never retries for the user.

use std::time::Duration;

use serde_json::json;

use crate::window::*;

/// The server killed under the app: the view stays, marked offline; the
/// checked-out copy stays writable and a save still shows; a check-in is
/// refused with why and sent nowhere. The server back on the same port, the
/// mark goes by itself, and the check-in, pressed again, lands.
async fn offline_and_back(w: &mut World) {
    let path = "brand/hero.psd";
    let row = World::row(path);
    let local = w.workspace.join(path);
    w.add_by_command("brand", "hero.psd", b"poster v1").await;
    w.open_row(path).await;
    w.check_out_here(&row).await;
    let url = w.server.as_ref().unwrap().url.clone();
    w.server_shown(&url, Duration::from_secs(5)).await;
    assert!(writable(&local), "a checked-out copy is writable");

    w.server.as_mut().unwrap().kill();
    w.wait_text("#offline:not([hidden])", "the offline mark", |t| {
        t.starts_with("Offline since ")
            && t.contains("Reconnecting…")
            && t.contains("stay writable")
    })
    .await;
    w.wait_until(
        &format!("{row} .holder"),
        "the check-out, still shown",
        Duration::from_secs(2),
        |t| t.starts_with("You"),
    )
    .await;
    save_atomically(&local, b"poster v2, drawn offline");
    w.row_shows(path, ".local", "Modified", Duration::from_secs(10))
        .await;
    w.screenshot("offline-01-marked").await;

    w.dismiss_notices().await;
    w.check_in_here(None).await;
    w.error_notice("the check-in's refusal", |t| {
        t.starts_with("Offline since ") && t.contains("check-in was not sent")
    })
    .await;
    assert!(
        writable(&local),
        "offline, the checked-out copy stays writable"
    );
    assert_eq!(std::fs::read(&local).unwrap(), b"poster v2, drawn offline");
    w.screenshot("offline-02-refused").await;

    w.server.as_mut().unwrap().restart();
    w.wait_for("#offline[hidden]", "the mark gone, by itself")
        .await;
    // Nothing was sent meanwhile: the server's head is still version 1.
    w.row_shows(path, ".version", "v1", Duration::from_secs(5))
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let files = w.invoke("overview", json!({})).await;
    assert_eq!(
        files["involved"][0]["artifact"]["head"]["version"],
        json!(1),
        "no check-in was sent in the background: {files}"
    );
    assert!(files["offline_since"].is_null(), "{files}");
    w.dismiss_notices().await;
    w.check_in_here(None).await;
    w.version_shown(path, 2).await;
    assert!(!writable(&local), "read-only after check-in");
    w.screenshot("offline-03-back").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_offline_keeps_its_view_and_reconnects_by_itself() {
    let _one = ONE_APP.lock().await;
    let mut w = World::start(&_one, Backend::Remote).await;
    within_limit(offline_and_back(&mut w)).await;
}

//! Joining a studio as a designer meets it: a fresh profile opens on a
//! choice, not an empty list; the invite link an admin made is pasted, the
//! studio's self-signed server shown by its fingerprint, this computer
//! named; the studio's files show, the token is in the keychain and in no
//! file. Settings list this device, make a code for another computer, and
//! sign this one out.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::window::*;

async fn joining_a_studio(home: tempfile::TempDir) {
    let _one = ONE_APP.lock().await;
    let TlsStudio {
        server,
        fingerprint,
        ..
    } = start_tls_studio(home.path(), "files.studio.lan");
    let data = server.data.clone();
    alice_imports(&data, home.path(), "brand/hero.psd", b"poster v1");
    // The studio's owner invites carol from the command line.
    let url = server.url.clone();
    let w = World::fresh(&_one, server).await;
    let invited = owner_json(&data, &url, &["user", "invite", "carol"]);
    let link = invited["link"].as_str().expect("a link").to_owned();
    assert!(
        link.starts_with("leasedesk://join?server=https%3A%2F%2F127.0.0.1"),
        "{link}"
    );

    // The first run: a choice, not an empty list.
    w.wait_for("#join[open] #first-run-join", "the first run's choice")
        .await;
    w.wait_for("#first-run-here", "Work on this computer").await;
    w.screenshot("join-01-first-run").await;
    // Nobody is signed in before anything is joined (issue 36's 15).
    assert_eq!(
        w.eval("return document.getElementById('me').textContent;")
            .await,
        serde_json::json!(""),
        "the first run's top bar names someone"
    );
    w.click("first-run-join").await;
    // The field takes the paste at once.
    w.wait_until("#join-invite", "the invite's field focused", WAIT, |_| true)
        .await;
    assert_eq!(
        w.eval("return document.activeElement && document.activeElement.id;")
            .await,
        serde_json::json!("join-invite"),
        "the join dialog opens with its field focused"
    );
    w.type_into("#join-invite", &link).await;
    w.join_server_is(&url, "the invite's server").await;
    w.wait_text_is(
        "#join-fingerprint",
        "the server's fingerprint",
        &fingerprint,
    )
    .await;
    let device = w.wait_for("#join-device", "this computer's name").await;
    assert!(
        !device
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default()
            .is_empty(),
        "the computer's name by default"
    );
    w.screenshot("join-02-invite").await;
    assert_eq!(
        w.texts("#join[open] .button.primary").await,
        ["Join"],
        "one primary button once the invite is read"
    );
    // Not before the fingerprint is checked.
    w.click("join-submit").await;
    w.wait_text("#join-status", "the refusal to join unchecked", |t| {
        t.contains("Check the fingerprint")
    })
    .await;
    device.clear().await.unwrap();
    device.send_keys("carol's laptop").await.unwrap();
    w.click("join-fingerprint-matches").await;
    w.click("join-submit").await;
    w.wait_for(&World::row("brand/hero.psd"), "the studio's files")
        .await;
    assert!(w.absent("#join[open]").await, "the dialog closed");
    w.wait_text(".notice", "who you joined as", |t| {
        t.starts_with("You joined as carol")
    })
    .await;
    w.screenshot("join-03-joined").await;

    // The token went to the keychain, never to a file; the pin to the settings.
    let token = leasedesk_app::keychain::read(&url)
        .unwrap()
        .expect("a token in the keychain");
    let settings = std::fs::read_to_string(w._home.path().join("config/settings.json")).unwrap();
    assert!(!settings.contains(&token), "{settings}");
    assert!(
        settings.contains(&fingerprint.replace(':', "").to_lowercase()),
        "{settings}"
    );
    let members = owner_json(&data, &url, &["user", "devices", "carol"]);
    assert_eq!(members[0]["devices"][0]["name"], "carol's laptop");

    // Settings: this device, a code for another computer, and signing out.
    w.open_settings().await;
    w.wait_text("#settings-devices li", "this device in the list", |t| {
        t.starts_with("carol's laptop (this device), last used")
    })
    .await;
    w.click("settings-add-computer").await;
    let new_link = w
        .wait_for("#settings-new-link", "another computer's link")
        .await;
    let new_link = new_link.prop("value").await.unwrap().unwrap_or_default();
    assert!(
        new_link.starts_with("leasedesk://join?server="),
        "{new_link}"
    );
    w.screenshot("join-04-devices").await;
    w.click_css("#settings-devices [data-revoke]", "Sign out this device")
        .await;
    w.click("confirm-yes").await;
    let asked = Instant::now();
    while leasedesk_app::keychain::read(&url).unwrap().is_some() {
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "the token forgotten here"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let members = owner_json(&data, &url, &["user", "devices", "carol"]);
    assert_eq!(
        members[0]["devices"].as_array().unwrap().len(),
        0,
        "revoked on the server"
    );
    w.screenshot("join-05-signed-out").await;

    // The other computer's link clicked in a browser while the app runs:
    // the desktop starts the app with the link, that start hands it to the
    // running one (single instance, deep link) and ends, and the running
    // app's join dialog reads it.
    w.wait_for("body[data-ready=true]", "the window after signing out")
        .await;
    let mut second = Command::new(env!("CARGO_BIN_EXE_leasedesk-app"))
        .arg(&new_link)
        .env("LEASEDESK_APP_HOME", w._home.path())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let ended = loop {
        if let Some(status) = second.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            second.kill().unwrap();
            panic!("the second start did not hand over and end within 20 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(ended.success(), "the second start: {ended}");
    w.wait_for(
        "#join[open] #join-device",
        "the join dialog on the handed link",
    )
    .await;
    let shown = w.wait_for("#join-invite", "the link").await;
    assert_eq!(
        shown.prop("value").await.unwrap().as_deref(),
        Some(new_link.as_str())
    );
    w.screenshot("join-06-link-handed-over").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_designer_joins_a_studio_from_an_invite_link() {
    let home = tempfile::tempdir().unwrap();
    within_limit(joining_a_studio(home)).await;
}

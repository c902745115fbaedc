//! Which server the app talks to: a studio's self-signed server trusted by
//! its fingerprint (pinned, then refused when the certificate changes), and
//! several servers in Settings with the first not answering. Never trusts a
//! certificate the user was not shown.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::window::*;

/// Settings show the server's certificate by `fingerprint`.
async fn fingerprint_shown(w: &World, fingerprint: &str) {
    let what = format!("the certificate's fingerprint {fingerprint}");
    w.wait_text_is("#settings-fingerprint", &what, fingerprint)
        .await;
}

/// A studio's self-signed server: Settings show its fingerprint and subject;
/// trusted, it is pinned in the settings file and the files show. The
/// certificate replaced (SIGHUP), the app started again refuses it with the
/// changed-certificate message, and Settings look again and show the new one.
async fn trusting_a_self_signed_server(home: tempfile::TempDir) {
    let _one = ONE_APP.lock().await;
    let TlsStudio {
        server,
        fingerprint: first,
        cert,
        key,
    } = start_tls_studio(home.path(), "files.studio.lan");
    assert!(server.url.starts_with("https://"), "{}", server.url);
    alice_imports(&server.data, home.path(), "brand/hero.psd", b"poster v1");
    let settings_file = home.path().join("config/settings.json");
    let mut w = World::start_in(&_one, home, Backend::Remote, Some(server)).await;

    w.error_notice("the refused certificate", |t| {
        t.starts_with("The server's certificate is not trusted")
    })
    .await;
    w.open_settings().await;
    fingerprint_shown(&w, &first).await;
    w.wait_until(
        "#settings-subject",
        "its subject",
        Duration::from_secs(2),
        |t| t.contains("CN=files.studio.lan"),
    )
    .await;
    w.screenshot("tls-01-untrusted").await;
    w.click("settings-trust").await;
    w.wait_for(&World::row("brand/hero.psd"), "the server's files, trusted")
        .await;
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&settings_file).unwrap()).unwrap();
    assert_eq!(
        saved["pinned_sha256"],
        json!(first.replace(':', "").to_lowercase()),
        "the pin is in the settings file: {saved}"
    );
    let token = &w.server.as_ref().unwrap().tokens["alice"];
    assert!(
        !std::fs::read_to_string(&settings_file)
            .unwrap()
            .contains(token.as_str()),
        "the token stays in the keychain"
    );
    w.screenshot("tls-02-trusted").await;

    // A new certificate, loaded by SIGHUP: the pin refuses it.
    let second = self_signed(&cert, &key, "files.studio.lan");
    assert_ne!(first, second);
    let pid = w.server.as_ref().unwrap().process.as_ref().unwrap().0.id();
    let hup = Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    tokio::time::sleep(Duration::from_millis(500)).await;
    w.relaunch().await;
    w.error_notice("the changed certificate", |t| {
        t.starts_with("The server's certificate changed")
    })
    .await;
    w.open_settings().await;
    w.wait_text("#settings [role=status]", "why, in Settings", |t| {
        t.starts_with("The server's certificate changed")
            && t.contains(&first.replace(':', "").to_lowercase())
    })
    .await;
    w.click("settings-look-again").await;
    fingerprint_shown(&w, &second).await;
    w.screenshot("tls-03-changed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_trusts_a_self_signed_server_by_its_fingerprint() {
    let home = tempfile::tempdir().unwrap();
    within_limit(trusting_a_self_signed_server(home)).await;
}

/// Several servers in Settings, the first not answering: the app works
/// through the next, and its header names that one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_names_the_server_it_moved_to() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Remote).await;
    let server = w.server.as_ref().unwrap();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let servers = format!("{dead}, {}", server.url);
    let view = w
        .invoke(
            "save_settings",
            json!({
                "settings": {
                    "backend": "remote",
                    "server_url": servers,
                    "pinned_sha256": null,
                    "workspace": w.workspace,
                    "display_name": "alice",
                },
                "token": server.tokens["alice"],
            }),
        )
        .await;
    assert!(view["session_error"].is_null(), "{view}");
    let overview = w.invoke("overview", json!({})).await;
    assert_eq!(overview["server"], json!(server.url), "{overview}");
    // The window's reload after the save, not the header drawn before it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    w.server_shown(&server.url, Duration::from_secs(15)).await;
    w.screenshot("several-servers").await;
}

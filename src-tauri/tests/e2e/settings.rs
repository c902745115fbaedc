//! The remote scenario's end: switching stores in Settings and back, a wrong
//! token refused in the dialog, the right one kept in the keychain. Never
//! reads or writes the keychain but through the app and `keychain::read`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::Locator;

use crate::window::*;

/// Settings: the remote store is shown as set up; switching to the store on
/// this computer and back loses no local file; a wrong token is refused in
/// the dialog; the right one goes to the keychain and never to a file.
pub async fn switching_stores_in_settings(w: &World, local: &Path) {
    let server = w.server.as_ref().unwrap();
    let files_before: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    let every_byte_kept = || {
        for (path, bytes) in &files_before {
            assert_eq!(
                &std::fs::read(path).unwrap(),
                bytes,
                "{} changed",
                path.display()
            );
        }
    };
    let field = |id: &'static str| w.settings_field(id);
    let value = |id: &'static str| async move {
        field(id)
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default()
    };

    w.open_settings().await;
    // Blender is on this computer (the tests' packages install it): Settings
    // offers its add-on (installing it is src-tauri/tests/blender's).
    let offered = w
        .wait_for("#settings-install-blender", "Install the Blender add-on")
        .await;
    assert_eq!(offered.text().await.unwrap(), "Install the Blender add-on");
    assert_eq!(value("settings-backend").await, "remote");
    assert_eq!(value("settings-url").await, server.url);
    assert_eq!(
        field("settings-token")
            .await
            .attr("placeholder")
            .await
            .unwrap()
            .as_deref(),
        Some("stored in your keychain")
    );

    // To the store on this computer: the server's files leave the list, the
    // workspace keeps every byte.
    w.choose_setting("settings-backend", "bundled").await;
    w.click("settings-save").await;
    let started = Instant::now();
    while !w
        .client
        .find_all(Locator::Css(&World::row("brand/hero.psd")))
        .await
        .unwrap()
        .is_empty()
        || !w
            .client
            .find_all(Locator::Css("dialog[open]"))
            .await
            .unwrap()
            .is_empty()
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the switch to the bundled store"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    every_byte_kept();

    // Back to the server, first with a wrong token: refused in the dialog.
    w.open_settings().await;
    w.choose_setting("settings-backend", "remote").await;
    w.type_setting("settings-token", "not-a-token").await;
    w.click("settings-save").await;
    w.wait_text("#settings [role=status]", "the refusal", |t| {
        t == "The server did not accept this token. Paste a new one from your admin."
    })
    .await;
    w.screenshot("09-settings-wrong-token").await;
    assert_eq!(
        leasedesk_app::keychain::read(&server.url)
            .unwrap()
            .as_deref(),
        Some(server.tokens["alice"].as_str()),
        "a refused token replaced the keychain's"
    );

    let token = &server.tokens["alice"];
    w.replace_setting("settings-token", token).await;
    w.click("settings-save").await;
    w.wait_for(&World::row("brand/hero.psd"), "the server's files again")
        .await;
    assert_eq!(
        leasedesk_app::keychain::read(&server.url)
            .unwrap()
            .as_deref(),
        Some(token.as_str())
    );
    let settings_file =
        std::fs::read_to_string(w._home.path().join("config/settings.json")).unwrap();
    assert!(settings_file.contains("\"remote\""), "{settings_file}");
    assert!(!settings_file.contains(token.as_str()) && !settings_file.contains("not-a-token"));
    every_byte_kept();
}

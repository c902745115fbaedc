//! What the window says, in the designer's words (issue 20's 8, 9, 13): one
//! activity line per thing a person did, Settings that check an address and
//! test a connection without saving. Never saves settings itself.

use crate::window::*;

/// 9 and 13: the activity has one line per thing a person did, in their
/// words, with "you" for the user; no internal step shows on its own.
pub async fn activity_tells_what_people_did(w: &World) {
    w.click("tab-activity").await;
    w.wait_text("#activity li", "the accept", |t| {
        t.ends_with("You accepted your proposal for banner.png: it is version 3 now")
    })
    .await;
    let banner: Vec<String> = w
        .activity_lines()
        .await
        .into_iter()
        .filter(|line| line.contains("banner.png"))
        .collect();
    assert_eq!(
        banner,
        [
            "You accepted your proposal for banner.png: it is version 3 now",
            "You checked in banner.png late: it became a proposal",
            "bob checked in banner.png as version 2",
            "bob checked out banner.png",
            "admin broke your lease on banner.png: “bob needs it”",
            "You checked out banner.png",
            "bob added banner.png",
        ],
        "the activity of banner.png"
    );
    let all = w.texts("#activity li").await.join("\n");
    // One extend was clicked (the tray's); a check-in's renewal is not one.
    let extended: Vec<&str> = all.lines().filter(|l| l.contains("extended")).collect();
    assert!(
        extended.len() == 1 && extended[0].ends_with("You extended the lease on hero.png"),
        "{extended:?}"
    );
    for internal in ["opened a check-out", "closed a check-out", "alice"] {
        assert!(
            !all.contains(internal),
            "{internal:?} in the activity:\n{all}"
        );
    }
    assert!(
        !all.split_whitespace()
            .any(|word| word == "me" || word == "me's"),
        "\"me\" in the activity:\n{all}"
    );
    w.click("tab-files").await;
}

/// 8 and 13: Settings refuses an empty address before saving, in its own
/// words; the error goes when the choice changes; Test connection tries an
/// address and a token without saving them.
pub async fn settings_check_the_address(w: &World) {
    let settings_file = w._home.path().join("config/settings.json");
    let before = std::fs::read_to_string(&settings_file).unwrap();
    w.open_settings().await;
    w.wait_text_is(
        "#settings[open] .field > span",
        "the choice of store, in the designer's words",
        "Where your studio's files live",
    )
    .await;
    w.choose_setting("settings-backend", "remote").await;
    w.clear_setting("settings-url").await;
    w.click("settings-save").await;
    w.wait_text("#settings-status", "the empty address refused", |t| {
        t == "Enter your studio's server address, such as https://leasedesk.example:7443."
    })
    .await;
    w.wait_for("#settings[open]", "the dialog still open").await;
    assert_eq!(
        std::fs::read_to_string(&settings_file).unwrap(),
        before,
        "nothing saved"
    );
    w.readme_screenshot("settings-error").await;

    // Back to "On this computer": the error about the server goes.
    w.choose_setting("settings-backend", "bundled").await;
    assert_eq!(w.texts("#settings-status").await, [""]);

    // Test connection: no server there, then a real one with alice's token.
    w.choose_setting("settings-backend", "remote").await;
    let nowhere = format!("http://127.0.0.1:{}", free_port());
    w.type_setting("settings-url", &nowhere).await;
    w.type_setting("settings-token", "some-token").await;
    w.click("settings-test").await;
    let refused = w
        .text_when("#settings-tested", "the refusal", |t| {
            t.starts_with("No server answers at this address")
        })
        .await;
    assert!(
        !refused.to_lowercase().contains("open settings"),
        "{refused}"
    );

    let server = start_server(&w._home.path().join("server"));
    w.replace_setting("settings-url", &server.url).await;
    w.replace_setting("settings-token", &server.tokens["alice"])
        .await;
    w.click("settings-test").await;
    let address = server.url.trim_start_matches("http://").to_owned();
    w.wait_text("#settings-tested", "connected", |t| {
        t == format!("Connected to {address} as alice.")
    })
    .await;
    w.click("settings-close").await;
    assert_eq!(
        std::fs::read_to_string(&settings_file).unwrap(),
        before,
        "a test saves nothing"
    );
    assert_eq!(
        leasedesk_app::keychain::read(&server.url).unwrap(),
        None,
        "a test keeps no token"
    );
}

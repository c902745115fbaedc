//! End to end: the real app in a real window, driven through WebDriver
//! (`tauri-driver` in front of WebKitWebDriver), on the bundled backend and on
//! a real `leasedesk serve` on 127.0.0.1:0. A second user and an admin act
//! through the `leasedesk` CLI. `cargo xtask test` installs tauri-driver and
//! runs this under Xvfb and a session bus with an unlocked keyring; it tells
//! the test where the tools are (`TAURI_DRIVER`, `LEASEDESK_BIN`).
//!
//! Each step saves a screenshot in `target/e2e-screenshots/`.

mod window;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::Locator;
use serde_json::json;
use window::*;

async fn scenarios(kind: Backend) {
    let _one = ONE_APP.lock().await;
    let w = World::start(kind).await;
    let path = "brand/hero.psd";
    let row = World::row(path);
    let local = w.workspace.join(path);

    // Add a file, through the command the Add button and a drop both use.
    let incoming = w._home.path().join("incoming/hero.psd");
    std::fs::create_dir_all(incoming.parent().unwrap()).unwrap();
    std::fs::write(&incoming, b"poster v1").unwrap();
    let added = w
        .invoke(
            "add_files",
            json!({ "paths": [incoming], "folder": "brand" }),
        )
        .await;
    assert!(added[0]["artifact"]["id"].is_string(), "added: {added}");
    w.wait_until(
        &format!("{row} .local"),
        "the new file, up to date",
        Duration::from_secs(10),
        |t| t == "Up to date",
    )
    .await;
    assert!(!writable(&local), "a file you do not hold is read-only");
    w.screenshot("01-added").await;

    // Check it out: the copy becomes writable; the row shows you and a countdown.
    w.open_row(path).await;
    w.client
        .find(Locator::Css("#checkout-note"))
        .await
        .unwrap()
        .send_keys("retouching the sky")
        .await
        .unwrap();
    w.check_out_here(&row).await;
    w.wait_until(
        &format!("{row} .countdown"),
        "a countdown",
        Duration::from_secs(5),
        |t| t.ends_with("min"),
    )
    .await;
    assert!(writable(&local), "a checked-out copy is writable");
    if kind == Backend::Bundled {
        readable_at_double_size(&w).await;
    }
    w.screenshot("02-checked-out").await;

    // Save the way applications do: "Modified" within 2 seconds.
    let saved = Instant::now();
    save_atomically(&local, b"poster v2 by alice");
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(2),
        |t| t == "Modified",
    )
    .await;
    let shown_after = saved.elapsed();
    assert!(
        shown_after < Duration::from_secs(2),
        "modified shown after {shown_after:?}"
    );
    w.screenshot("03-modified").await;

    // Check in: version 2, read-only again.
    w.check_in_here(None).await;
    w.wait_until(
        &format!("{row} .version"),
        "version 2",
        Duration::from_secs(10),
        |t| t == "v2",
    )
    .await;
    w.wait_until(".notice", "the outcome", Duration::from_secs(5), |t| {
        t.contains("saved as version 2")
    })
    .await;
    w.wait_until(
        &format!("{row} .holder"),
        "the file free",
        Duration::from_secs(5),
        |t| t == "Free",
    )
    .await;
    assert!(!writable(&local), "read-only after check-in");
    w.screenshot("04-checked-in").await;

    // Bob checks out through the CLI: the row names him, with his note.
    w.cli("bob", &["checkout", path, "--note", "print crop"]);
    w.wait_until(
        &format!("{row} .holder"),
        "bob as the holder",
        Duration::from_secs(10),
        |t| t.contains("bob") && t.contains("print crop"),
    )
    .await;
    w.screenshot("05-bob-holds-it").await;

    // Alice sees who holds it, until when, and is offered what she can do:
    // be told when it is free (no Check out that could only be refused).
    w.open_row(path).await;
    w.wait_until(".busy", "who holds it", Duration::from_secs(5), |t| {
        t.contains("bob has it until") && t.contains("print crop")
    })
    .await;
    w.wait_for("#action-notify", "Notify me when it's free")
        .await;
    assert!(
        w.client
            .find_all(Locator::Css("#action-checkout"))
            .await
            .unwrap()
            .is_empty(),
        "{}: a busy file offers Check out",
        w.name()
    );
    w.screenshot("06-busy").await;
    w.cli("bob", &["cancel", path]);
    w.wait_until(
        &format!("{row} .holder"),
        "the file free again",
        Duration::from_secs(10),
        |t| t == "Free",
    )
    .await;

    // A stale check-in: alice's lease is broken, bob commits, alice checks in.
    w.open_row(path).await;
    w.check_out_here(&row).await;
    save_atomically(&local, b"poster v3 by alice, late");
    w.cli(
        "admin",
        &["break", path, "--reason", "bob needs it for print"],
    );
    w.wait_until(
        &format!("{row} .holder"),
        "the lost lease",
        Duration::from_secs(10),
        |t| t == "Your lease broken by admin",
    )
    .await;
    w.screenshot("07a-lease-broken").await;
    let bob_copy = w._home.path().join("bob-hero.psd");
    std::fs::write(&bob_copy, b"poster v3 by bob").unwrap();
    w.cli("bob", &["checkout", path]);
    w.cli("bob", &["checkin", path, bob_copy.to_str().unwrap()]);
    w.wait_until(
        &format!("{row} .version"),
        "bob's version 3",
        Duration::from_secs(10),
        |t| t == "v3",
    )
    .await;
    w.open_row(path).await;
    w.check_in_here(None).await;
    w.wait_until(".notice", "the proposal", Duration::from_secs(10), |t| {
        t.contains("became a proposal because bob committed version 3")
    })
    .await;
    assert_eq!(
        std::fs::read(&local).unwrap(),
        b"poster v3 by bob",
        "the head is in place"
    );
    let backups = backups(&local);
    assert_eq!(
        backups.len(),
        1,
        "alice's file is kept beside it: {backups:?}"
    );
    assert_eq!(
        std::fs::read(&backups[0]).unwrap(),
        b"poster v3 by alice, late"
    );
    w.click("tab-proposals").await;
    w.wait_until(
        "[data-proposal]",
        "the open proposal",
        Duration::from_secs(5),
        |t| t.contains("You made this from version 2; since then others saved version 3."),
    )
    .await;
    w.screenshot("07-proposal").await;
    // To compare in other tools, her own file: the backup beside the head's.
    w.click_css("[data-save-beside]", "Save beside the head")
        .await;
    w.wait_until(
        ".notice",
        "the file to compare",
        Duration::from_secs(10),
        |t| t.contains("Ready to compare") && t.contains("hero (my changes "),
    )
    .await;
    w.click("tab-files").await;

    // Cancel keeps the changes in a backup and puts the head back.
    std::fs::remove_file(&backups[0]).unwrap();
    w.open_row(path).await;
    w.check_out_here(&row).await;
    save_atomically(&local, b"an experiment to throw away");
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(3),
        |t| t == "Modified",
    )
    .await;
    w.click("action-cancel").await;
    w.wait_until(".notice", "the backup", Duration::from_secs(10), |t| {
        t.contains("Your changes are kept as")
    })
    .await;
    let backups = self::backups(&local);
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(
        std::fs::read(&backups[0]).unwrap(),
        b"an experiment to throw away"
    );
    assert_eq!(std::fs::read(&local).unwrap(), b"poster v3 by bob");
    assert!(!writable(&local));
    w.screenshot("08-cancelled-with-backup").await;

    // A file alice checked out elsewhere (the CLI) and never had here: not
    // "Missing" but not on this computer, and one click brings her copy to
    // edit, leaving the lease as it was.
    let elsewhere = "brand/cover.psd";
    let cover_row = World::row(elsewhere);
    let cover = w._home.path().join("cover.psd");
    std::fs::write(&cover, b"cover v1").unwrap();
    w.cli("bob", &["import", elsewhere, cover.to_str().unwrap()]);
    w.cli("alice", &["checkout", elsewhere]);
    w.wait_until(
        &format!("{cover_row} .local"),
        "a held file that is not here",
        Duration::from_secs(10),
        |t| t == "Not on this computer",
    )
    .await;
    let lease_before = lease_ends(&w).await[elsewhere];
    w.open_row(elsewhere).await;
    w.click("action-get-copy").await;
    w.wait_until(
        &format!("{cover_row} .local"),
        "her copy, here",
        Duration::from_secs(10),
        |t| t == "Up to date",
    )
    .await;
    let local_cover = w.workspace.join(elsewhere);
    assert_eq!(std::fs::read(&local_cover).unwrap(), b"cover v1");
    assert!(writable(&local_cover), "her copy to edit");
    assert_eq!(lease_ends(&w).await[elsewhere], lease_before);
    w.screenshot("08b-got-a-copy-to-edit").await;
    w.cli("alice", &["cancel", elsewhere]);

    if kind == Backend::Bundled {
        reminders(&w).await;
        closing_keeps_the_app_in_the_tray(&w).await;
    } else {
        switching_stores_in_settings(&w, &local).await;
        w.client.clone().close().await.unwrap();
    }
}

/// Settings: the remote store is shown as set up; switching to the store on
/// this computer and back loses no local file; a wrong token is refused in
/// the dialog; the right one goes to the keychain and never to a file.
async fn switching_stores_in_settings(w: &World, local: &Path) {
    let server = w.server.as_ref().unwrap();
    let files_before: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    // In the open dialog: a closed one keeps its old fields until redrawn.
    let field =
        |id: &'static str| async move { w.wait_for(&format!("#settings[open] #{id}"), id).await };
    let value = |id: &'static str| async move {
        field(id)
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default()
    };

    w.click("open-settings").await;
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
    field("settings-backend")
        .await
        .select_by_value("bundled")
        .await
        .unwrap();
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
    for (path, bytes) in &files_before {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} changed",
            path.display()
        );
    }

    // Back to the server, first with a wrong token: refused in the dialog.
    w.click("open-settings").await;
    field("settings-backend")
        .await
        .select_by_value("remote")
        .await
        .unwrap();
    field("settings-token")
        .await
        .send_keys("not-a-token")
        .await
        .unwrap();
    w.click("settings-save").await;
    w.wait_until(
        "#settings [role=status]",
        "the refusal",
        Duration::from_secs(10),
        |t| t == "The server did not accept this token. Paste a new one from your admin.",
    )
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
    field("settings-token").await.clear().await.unwrap();
    field("settings-token")
        .await
        .send_keys(token)
        .await
        .unwrap();
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
    for (path, bytes) in &files_before {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} changed",
            path.display()
        );
    }
}

/// At 200% (Ctrl+= five times, as a designer zooms) everything still fits
/// the window: nothing runs off its right edge; the open file's detail takes
/// the list's place, with its actions on screen, and "All files" brings the
/// list back with the file's row in sight. Ctrl+0 goes back to 100 %.
async fn readable_at_double_size(w: &World) {
    for _ in 0..5 {
        w.press("\u{E009}=").await;
    }
    w.wait_until("#zoom", "the zoom shown", Duration::from_secs(5), |t| {
        t == "200 %"
    })
    .await;
    let layout = || async {
        w.client
            .execute(
                "const width = document.documentElement.clientWidth;
                 const out = [...document.querySelectorAll('header *, .tabs *, .row, .detail .actions button')]
                   .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > width + 1)
                   .map((e) => e.id || e.className || e.tagName);
                 const row = document.querySelector('.row.selected');
                 const box = row && row.getClientRects().length && row.getBoundingClientRect();
                 const seen = box && row.contains(document.elementFromPoint(box.left + 20, box.top + box.height / 2));
                 const list = document.getElementById('file-list');
                 return { width, scroll: document.documentElement.scrollWidth, out, rowInSight: !!seen,
                          rowText: row && row.innerText, listHeight: list.getClientRects().length ? list.clientHeight : 0 };",
                vec![],
            )
            .await
            .unwrap()
    };
    let started = Instant::now();
    while layout().await["width"].as_f64().unwrap() >= 600.0 {
        assert!(started.elapsed() < Duration::from_secs(5), "no zoom");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await; // a frame or two at the new size
    let fits = |layout: &serde_json::Value| {
        layout["out"].as_array().unwrap().is_empty()
            && layout["scroll"].as_f64() <= layout["width"].as_f64()
    };
    let detail = layout().await;
    w.screenshot("02b-at-200-percent").await;
    assert!(fits(&detail), "at 200% these run off the window: {detail}");
    w.wait_for("#detail-back", "the way back to the list").await;

    // Clicked from the page: WebKitWebDriver places its clicks as if at 100 %.
    w.client
        .execute("document.getElementById('detail-back').click();", vec![])
        .await
        .unwrap();
    let started = Instant::now();
    let list = loop {
        let list = layout().await;
        if list["rowInSight"] == true || started.elapsed() > Duration::from_secs(5) {
            break list;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    w.screenshot("02c-at-200-percent-list").await;
    assert!(fits(&list), "at 200% these run off the window: {list}");
    assert_eq!(
        list["rowInSight"], true,
        "at 200% the file's row is hidden: {list}"
    );
    assert!(
        list["listHeight"].as_f64().unwrap() >= 4.0 * 48.0,
        "at 200% the list shows fewer than 4 rows: {list}"
    );
    // What is rendered, not only in the page: name, folder, holder, time
    // left, and the state of the copy on this computer.
    let shown = list["rowText"].as_str().unwrap_or_default();
    for part in ["hero.psd", "brand", "You", "min", "Up to date"] {
        assert!(
            shown.contains(part),
            "at 200% the row shows {shown:?}, without {part:?}"
        );
    }
    w.press("\u{E009}0").await;
    w.wait_until("#zoom", "100 %, not shown", Duration::from_secs(5), |_| {
        true
    })
    .await;
    let started = Instant::now();
    while layout().await["width"].as_f64().unwrap() < 600.0 {
        assert!(started.elapsed() < Duration::from_secs(5), "back to 100 %");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    w.open_row("brand/hero.psd").await;
}

/// Ctrl+W closes the window to the tray: the app runs on without WebKit's
/// web process, and launching it again brings a new window.
async fn closing_keeps_the_app_in_the_tray(w: &World) {
    let app = oldest_app_process().expect("the app is running");
    assert!(
        web_process_of(app).is_some(),
        "the open window has a web process"
    );
    let body = w.wait_for("body", "the page").await;
    // WebDriver answers "no such window": the window closed under the keys.
    let _ = body.send_keys("\u{E009}w").await;
    let started = Instant::now();
    while web_process_of(app).is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the closed window's web process is still running"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        Path::new(&format!("/proc/{app}")).exists(),
        "the app ended when its window closed"
    );

    // A second launch gives way to the first, which opens its window again.
    let second = Command::new(env!("CARGO_BIN_EXE_leasedesk-app"))
        .env("LEASEDESK_APP_HOME", w._home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut second = Killed(second);
    let started = Instant::now();
    while web_process_of(app).is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "launching again did not open the first app's window"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = second.0.wait().unwrap();
    assert!(status.success(), "the second instance: {status}");
    assert_eq!(oldest_app_process(), Some(app), "one app, the first");
}

fn oldest_app_process() -> Option<u32> {
    let out = Command::new("pgrep")
        .args(["-o", "-f", env!("CARGO_BIN_EXE_leasedesk-app")])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The WebKit web process the app started, if one runs.
fn web_process_of(app: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{app}/task")).ok()?;
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .find(|child| {
            std::fs::read_to_string(format!("/proc/{child}/cmdline"))
                .is_ok_and(|cmd| cmd.contains("WebKitWebProcess"))
        })
}

fn backups(local: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("(my changes ")
        })
        .collect();
    found.sort();
    found
}

/// The desktop's notification service: dunst, a real one, on the test's
/// session bus and X display. `dunstctl action 0` clicks a notification's
/// only button.
fn start_notification_service() -> Killed {
    let dunst = Command::new("dunst")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dunst: `cargo xtask test` installs it");
    let started = Instant::now();
    while !dunstctl(&["count"]).0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "dunst did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Killed(dunst)
}

fn dunstctl(args: &[&str]) -> (bool, String) {
    let out = Command::new("dunstctl").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    )
}

/// When each of your open check-outs ends, from the app's own overview.
async fn lease_ends(w: &World) -> std::collections::HashMap<String, chrono::DateTime<chrono::Utc>> {
    let overview = w.invoke("overview", json!({})).await;
    overview["checkouts"]
        .as_array()
        .unwrap_or_else(|| panic!("an overview: {overview}"))
        .iter()
        .map(|c| {
            let ends = c["expires_at"].as_str().unwrap().parse().unwrap();
            (c["path"].as_str().unwrap().to_owned(), ends)
        })
        .collect()
}

/// Two leases of yours end within 5 minutes: one is extended from the
/// desktop notification's Extend button, the other from the window's. Nothing
/// else extends them.
async fn reminders(w: &World) {
    let _dunst = start_notification_service();
    // Earlier steps' notices may have started it already (D-Bus activation).
    assert!(dunstctl(&["close-all"]).0);
    let (near, far) = ("art/near.psd", "art/far.psd");
    let source = w._home.path().join("source.psd");
    std::fs::write(&source, b"layers").unwrap();
    for path in [near, far] {
        w.cli("alice", &["import", path, source.to_str().unwrap()]);
        // Shorter than 5 minutes: the last call comes at once, with what is left.
        w.cli("alice", &["checkout", path, "--ttl", "4m"]);
    }
    let first = lease_ends(w).await;
    assert_eq!(first.len(), 2, "{first:?}");

    // The reminders arrive within one tick (20 s) as desktop notifications.
    let started = Instant::now();
    while dunstctl(&["count", "displayed"]).1 != "2" {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "two reminders on the desktop; dunst shows {}",
            dunstctl(&["count", "displayed"]).1
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let soon = chrono::Utc::now() + chrono::TimeDelta::minutes(30);
    assert!(
        lease_ends(w).await.values().all(|ends| *ends < soon),
        "a reminder alone extends nothing"
    );

    // The user clicks Extend on one notification.
    assert!(dunstctl(&["action", "0"]).0);
    let started = Instant::now();
    let extended = loop {
        let ends = lease_ends(w).await;
        if let Some((path, _)) = ends.iter().find(|(_, ends)| **ends > soon) {
            break path.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "Extend on the notification extended nothing: {ends:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    // And the other from the window's notice.
    let other = if extended == near { far } else { near };
    let name = other.rsplit('/').next().unwrap();
    let notice = w
        .wait_until(
            ".notice",
            "the other reminder",
            Duration::from_secs(5),
            |t| {
                ["3 min", "4 min"]
                    .iter()
                    .any(|left| t.contains(&format!("{name}: your lease ends in {left}")))
            },
        )
        .await;
    w.screenshot("09-reminder-with-extend").await;
    notice
        .find(Locator::XPath(".//button[text()='Extend']"))
        .await
        .expect("an Extend button on the reminder")
        .click()
        .await
        .unwrap();
    let started = Instant::now();
    while !lease_ends(w).await.values().all(|ends| *ends > soon) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "Extend in the window extended nothing"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_on_the_bundled_backend() {
    tokio::time::timeout(SCENARIO_LIMIT, scenarios(Backend::Bundled))
        .await
        .expect("the scenarios within 5 minutes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_on_a_team_server() {
    tokio::time::timeout(SCENARIO_LIMIT, scenarios(Backend::Remote))
        .await
        .expect("the scenarios within 5 minutes");
}

/// Seeing the work: thumbnails in the list, a check-in that asks for a
/// description (stored, read back from the store), the history with a copy
/// of an old version opened and that version restored, two versions and a
/// proposal compared in the window.
async fn seeing_the_work() {
    let _one = ONE_APP.lock().await;
    let w = World::start(Backend::Bundled).await;
    let path = "art/poster.png";
    let row = World::row(path);
    let local = w.workspace.join(path);
    let (v1, v2) = (poster(80), poster(240));
    let incoming = w._home.path().join("poster.png");
    std::fs::write(&incoming, &v1).unwrap();
    w.cli("bob", &["import", path, incoming.to_str().unwrap()]);

    // The list shows the file's thumbnail, decoded.
    let (width, _) = w
        .decoded(&format!("{row} .thumb img"), "the row's thumbnail")
        .await;
    assert!(
        width > 0 && width <= 72,
        "a thumbnail, not the image: {width} px"
    );

    // Check out with a note, save a change: the detail previews the local
    // copy and says it is modified.
    w.open_row(path).await;
    w.client
        .find(Locator::Css("#checkout-note"))
        .await
        .unwrap()
        .send_keys("moving the sun")
        .await
        .unwrap();
    w.check_out_here(&row).await;
    save_atomically(&local, &v2);
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(3),
        |t| t == "Modified",
    )
    .await;
    w.wait_until(
        "#detail-preview figcaption",
        "the local copy's preview",
        Duration::from_secs(5),
        |t| t.contains("modified"),
    )
    .await;
    w.decoded("#detail-preview img", "the local copy's preview")
        .await;

    // Check in: asked for a description, offered the note; stored as typed.
    w.check_in_with(Some("moving the sun"), Some("The sun moves to the right"))
        .await;
    w.wait_until(
        &format!("{row} .version"),
        "version 2",
        Duration::from_secs(10),
        |t| t == "v2",
    )
    .await;
    assert_eq!(
        newest_message(&w, path),
        json!("The sun moves to the right")
    );

    // The history, newest first, with thumbnails and the description.
    let version = |n: u32| format!("#history [data-kind=version][data-version=\"{n}\"]");
    w.wait_until(
        &version(2),
        "version 2 in the history",
        Duration::from_secs(10),
        |t| t.contains("The sun moves to the right"),
    )
    .await;
    w.wait_for(&version(1), "version 1 in the history").await;
    w.decoded(
        &format!("{} .thumb img", version(1)),
        "version 1's thumbnail",
    )
    .await;
    w.wait_until(
        "#history [data-kind=checkout] .ending",
        "how the check-out ended",
        Duration::from_secs(5),
        |t| t == "checked in as version 2",
    )
    .await;
    // The README's picture shows the history itself, not what covers it.
    w.dismiss_notices().await;
    w.client
        .execute(
            "document.querySelector('#history').scrollIntoView({ block: 'start' });",
            vec![],
        )
        .await
        .unwrap();
    w.readme_screenshot("history").await;

    // Open a copy of version 1: beside the file, read-only, its bytes.
    w.dismiss_notices().await;
    w.click_css("[data-open-copy=\"1\"]", "Open a copy of version 1")
        .await;
    let copy = local.with_file_name("poster (v1).png");
    until_holds(&copy, &v1, "the copy of version 1").await;
    assert!(!writable(&copy), "an opened copy is read-only");

    // Restore version 1 while holding the check-out, over a change of
    // yours: the copy has version 1's bytes, the change is kept beside it,
    // and the check-in offers "Restored version 1".
    w.check_out_here(&row).await;
    let change = poster(200);
    save_atomically(&local, &change);
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(3),
        |t| t == "Modified",
    )
    .await;
    w.dismiss_notices().await;
    w.click_in_panel("[data-restore=\"1\"]", "Restore version 1")
        .await;
    until_holds(&local, &v1, "the restored copy").await;
    let kept: Vec<PathBuf> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read(p).ok().as_deref() == Some(&change[..]))
        .collect();
    assert_eq!(kept.len(), 1, "the change is kept beside: {kept:?}");
    w.check_in_here(Some("Restored version 1")).await;
    w.wait_until(
        &format!("{row} .version"),
        "version 3",
        Duration::from_secs(10),
        |t| t == "v3",
    )
    .await;
    assert_eq!(newest_message(&w, path), json!("Restored version 1"));

    // Compare two versions: 1 and 3 are the same picture, 1 and 2 are not.
    w.wait_for(&version(3), "version 3 in the history").await;
    let pick = |n: u32| format!("#history [data-pick=\"{n}\"]");
    w.dismiss_notices().await;
    w.click_css(&pick(1), "pick version 1").await;
    w.click_css(&pick(3), "pick version 3").await;
    w.click("history-compare").await;
    assert_eq!(difference_said(&w).await, "identical: the same file");
    w.click("compare-close").await;
    w.click_css(&pick(3), "unpick version 3").await;
    w.click_css(&pick(2), "pick version 2").await;
    w.click("history-compare").await;
    let said = difference_said(&w).await;
    assert!(
        said != "identical" && said.ends_with("% of pixels differ"),
        "{said}"
    );
    w.click("compare-close").await;

    // A proposal against the head, compared in the window.
    w.late_check_in(path, &poster(160), &poster(300), 4).await;
    w.click("tab-proposals").await;
    w.dismiss_notices().await;
    w.click_css("[data-compare]", "Compare with the head").await;
    w.press("1").await;
    w.readme_screenshot("compare").await;
    let said = difference_said(&w).await;
    assert!(
        said != "identical" && said.ends_with("% of pixels differ"),
        "{said}"
    );
    w.readme_screenshot("compare-difference").await;
    w.click("compare-close").await;

    // A Photoshop document without its composite previews from its layers;
    // one has an adjustment, so the detail says the preview is approximate.
    w.click("tab-files").await;
    w.open_row(path).await;
    w.decoded("#detail-preview img", "the poster's preview")
        .await;
    let fidelity = "return document.getElementById('detail-preview').dataset.fidelity || '';";
    let started = Instant::now();
    let said = loop {
        let said = w.client.execute(fidelity, vec![]).await.unwrap();
        if said != json!("") || started.elapsed() > Duration::from_secs(10) {
            break said;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(said, json!("exact"), "the poster's preview is exact");
    let absent = "return document.getElementById('preview-approximate') === null;";
    assert_eq!(w.client.execute(absent, vec![]).await.unwrap(), json!(true));
    let layered = w._home.path().join("layers.psd");
    std::fs::write(&layered, layers_with_an_adjustment()).unwrap();
    w.cli(
        "bob",
        &["import", "art/layers.psd", layered.to_str().unwrap()],
    );
    w.open_row("art/layers.psd").await;
    w.wait_until(
        "#preview-approximate",
        "the approximate preview's note",
        Duration::from_secs(10),
        |t| t == "approximate preview",
    )
    .await;
    let (width, height) = w
        .decoded("#detail-preview img", "the layers' preview")
        .await;
    assert_eq!((width, height), (16, 16));
    w.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_shows_the_work() {
    tokio::time::timeout(SCENARIO_LIMIT, seeing_the_work())
        .await
        .expect("the scenario within 5 minutes");
}

/// The server killed under the app: the view stays, marked offline; the
/// checked-out copy stays writable and a save still shows; a check-in is
/// refused with why and sent nowhere. The server back on the same port, the
/// mark goes by itself, and the check-in, pressed again, lands.
async fn offline_and_back(w: &mut World) {
    let path = "brand/hero.psd";
    let row = World::row(path);
    let local = w.workspace.join(path);
    let incoming = w._home.path().join("incoming/hero.psd");
    std::fs::create_dir_all(incoming.parent().unwrap()).unwrap();
    std::fs::write(&incoming, b"poster v1").unwrap();
    let added = w
        .invoke(
            "add_files",
            json!({ "paths": [incoming], "folder": "brand" }),
        )
        .await;
    assert!(added[0]["artifact"]["id"].is_string(), "added: {added}");
    w.open_row(path).await;
    w.check_out_here(&row).await;
    let url = w.server.as_ref().unwrap().url.clone();
    w.wait_until(
        "#server",
        "the server in use",
        Duration::from_secs(5),
        |t| t == format!("Server: {}", url.trim_start_matches("http://")),
    )
    .await;
    assert!(writable(&local), "a checked-out copy is writable");

    w.server.as_mut().unwrap().kill();
    w.wait_until(
        "#offline:not([hidden])",
        "the offline mark",
        Duration::from_secs(15),
        |t| {
            t.starts_with("Offline since ")
                && t.contains("Reconnecting…")
                && t.contains("stay writable")
        },
    )
    .await;
    w.wait_until(
        &format!("{row} .holder"),
        "the check-out, still shown",
        Duration::from_secs(2),
        |t| t.starts_with("You"),
    )
    .await;
    save_atomically(&local, b"poster v2, drawn offline");
    w.wait_until(
        &format!("{row} .local"),
        "the save, shown offline",
        Duration::from_secs(10),
        |t| t == "Modified",
    )
    .await;
    w.screenshot("offline-01-marked").await;

    w.dismiss_notices().await;
    w.check_in_here(None).await;
    w.wait_until(
        ".notice.error",
        "the check-in's refusal",
        Duration::from_secs(15),
        |t| t.starts_with("Offline since ") && t.contains("check-in was not sent"),
    )
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
    w.wait_until(
        &format!("{row} .version"),
        "still version 1",
        Duration::from_secs(5),
        |t| t == "v1",
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let files = w.invoke("overview", json!({})).await;
    assert_eq!(
        files["files"][0]["artifact"]["head"]["version"],
        json!(1),
        "no check-in was sent in the background: {files}"
    );
    assert!(files["offline_since"].is_null(), "{files}");
    w.dismiss_notices().await;
    w.check_in_here(None).await;
    w.wait_until(
        &format!("{row} .version"),
        "version 2, pressed again",
        Duration::from_secs(10),
        |t| t == "v2",
    )
    .await;
    assert!(!writable(&local), "read-only after check-in");
    w.screenshot("offline-03-back").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_offline_keeps_its_view_and_reconnects_by_itself() {
    let _one = ONE_APP.lock().await;
    let mut w = World::start(Backend::Remote).await;
    tokio::time::timeout(SCENARIO_LIMIT, offline_and_back(&mut w))
        .await
        .expect("offline and back within 5 minutes");
}

/// A self-signed certificate for 127.0.0.1 into `cert` and `key` (each
/// written beside and renamed, as a renewal would); its SHA-256 as
/// `openssl x509 -fingerprint` says it ("AB:CD:…").
fn self_signed(cert: &Path, key: &Path, name: &str) -> String {
    let (new_cert, new_key) = (cert.with_extension("new"), key.with_extension("new"));
    let out = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={name}/O=Studio")])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&new_key)
        .arg("-out")
        .arg(&new_cert)
        .output()
        .expect("openssl (Debian's openssl package)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(new_key, key).unwrap();
    std::fs::rename(new_cert, cert).unwrap();
    let out = Command::new("openssl")
        .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
        .arg(cert)
        .output()
        .unwrap();
    let said = String::from_utf8(out.stdout).unwrap();
    said.trim().rsplit('=').next().unwrap().to_uppercase()
}

/// A studio's self-signed server: Settings show its fingerprint and subject;
/// trusted, it is pinned in the settings file and the files show. The
/// certificate replaced (SIGHUP), the app started again refuses it with the
/// changed-certificate message, and Settings look again and show the new one.
async fn trusting_a_self_signed_server(home: tempfile::TempDir) {
    let tls = home.path().join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let (cert, key) = (tls.join("cert.pem"), tls.join("key.pem"));
    let first = self_signed(&cert, &key, "files.studio.lan");
    let data = home.path().join("server");
    let server = start_server_with(
        &data,
        vec![
            "--tls-cert".into(),
            cert.clone().into(),
            "--tls-key".into(),
            key.clone().into(),
        ],
    );
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let source = home.path().join("hero.psd");
    std::fs::write(&source, b"poster v1").unwrap();
    run_cli(&[
        "--data",
        data.to_str().unwrap(),
        "--as",
        "user:alice",
        "import",
        "brand/hero.psd",
        source.to_str().unwrap(),
    ]);
    let settings_file = home.path().join("config/settings.json");
    let mut w = World::start_in(home, Backend::Remote, Some(server)).await;

    w.wait_until(
        ".notice.error",
        "the refused certificate",
        Duration::from_secs(15),
        |t| t.starts_with("The server's certificate is not trusted"),
    )
    .await;
    w.click("open-settings").await;
    w.wait_until(
        "#settings-fingerprint",
        "the certificate's fingerprint",
        Duration::from_secs(15),
        |t| t == first,
    )
    .await;
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
    w.wait_until(
        ".notice.error",
        "the changed certificate",
        Duration::from_secs(15),
        |t| t.starts_with("The server's certificate changed"),
    )
    .await;
    w.click("open-settings").await;
    w.wait_until(
        "#settings [role=status]",
        "why, in Settings",
        Duration::from_secs(10),
        |t| {
            t.starts_with("The server's certificate changed")
                && t.contains(&first.replace(':', "").to_lowercase())
        },
    )
    .await;
    w.click("settings-look-again").await;
    w.wait_until(
        "#settings-fingerprint",
        "the new certificate's fingerprint",
        Duration::from_secs(15),
        |t| t == second,
    )
    .await;
    w.screenshot("tls-03-changed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_trusts_a_self_signed_server_by_its_fingerprint() {
    let _one = ONE_APP.lock().await;
    let home = tempfile::tempdir().unwrap();
    tokio::time::timeout(SCENARIO_LIMIT, trusting_a_self_signed_server(home))
        .await
        .expect("within 5 minutes");
}

/// Several servers in Settings, the first not answering: the app works
/// through the next, and its header names that one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_names_the_server_it_moved_to() {
    let _one = ONE_APP.lock().await;
    let w = World::start(Backend::Remote).await;
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
    let url = server.url.clone();
    w.wait_until(
        "#server",
        "the server moved to",
        Duration::from_secs(15),
        |t| t == format!("Server: {}", url.trim_start_matches("http://")),
    )
    .await;
    w.screenshot("several-servers").await;
}

//! The bundled scenario's end on the desktop: reminders as desktop
//! notifications whose Extend works, as the window's does; Ctrl+W closing to
//! the tray, a second launch opening the first app's window. Never extends a
//! lease but by a click.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::Locator;

use crate::window::*;

/// Ctrl+W closes the window to the tray: the app runs on without WebKit's
/// web process, and launching it again brings a new window.
pub async fn closing_keeps_the_app_in_the_tray(w: &World) {
    let app = oldest_app_process().expect("the app is running");
    assert!(
        web_process_of(app).is_some(),
        "the open window has a web process"
    );
    let body = w.wait_for("body", "the page").await;
    // WebDriver answers "no such window": the window closed under the keys.
    let _ = body.send_keys("\u{E009}w").await;
    let gone = "the closed window's web process is still running";
    web_process_until(app, false, Duration::from_secs(10), gone).await;
    assert!(!window_on_screen(), "the closed window is off the screen");
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
    let back = "launching again did not open the first app's window";
    web_process_until(app, true, Duration::from_secs(20), back).await;
    // Built hidden, it shows once its page has loaded.
    let started = Instant::now();
    while !window_on_screen() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{back} on screen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = second.0.wait().unwrap();
    assert!(status.success(), "the second instance: {status}");
    assert_eq!(oldest_app_process(), Some(app), "one app, the first");
}

/// Whether a window titled Leasedesk is mapped on the X screen.
fn window_on_screen() -> bool {
    Command::new("xdotool")
        .args(["search", "--onlyvisible", "--name", "^Leasedesk$"])
        .output()
        .expect("xdotool: `cargo xtask test` installs it")
        .status
        .success()
}

/// Waits up to `limit` until the app's web process runs (`running`) or is
/// gone; past it, fails saying `what`.
async fn web_process_until(app: u32, running: bool, limit: Duration, what: &str) {
    let started = Instant::now();
    while web_process_of(app).is_some() != running {
        assert!(started.elapsed() < limit, "{what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Two leases of yours end within 5 minutes: one is extended from the
/// desktop notification's Extend button, the other from the window's. Nothing
/// else extends them.
pub async fn reminders(w: &World) {
    let _dunst = start_notification_service();
    // Earlier steps' notices may have started it already (D-Bus activation).
    assert!(dunstctl(&["close-all"]).0);
    let (near, far) = ("art/near.psd", "art/far.psd");
    for path in [near, far] {
        w.import_as("alice", path, b"layers");
        // Shorter than 5 minutes: the last call comes at once, with what is left.
        w.cli("alice", &["checkout", path, "--ttl", "4m"]);
    }
    let first = w.lease_ends().await;
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
        w.lease_ends().await.values().all(|ends| *ends < soon),
        "a reminder alone extends nothing"
    );

    // The user clicks Extend on one notification.
    assert!(dunstctl(&["action", "0"]).0);
    let started = Instant::now();
    let extended = loop {
        let ends = w.lease_ends().await;
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
        .wait_text(".notice", "the other reminder", |t| {
            ["3 min", "4 min"]
                .iter()
                .any(|left| t.contains(&format!("{name}: your lease ends in {left}")))
        })
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
    while !w.lease_ends().await.values().all(|ends| *ends > soon) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "Extend in the window extended nothing"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

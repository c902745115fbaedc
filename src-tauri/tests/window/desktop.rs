//! The desktop around the app, as its own services see it: dunst as the
//! notification service (`dunstctl`), the tray's menu read over D-Bus as a
//! tray host reads it, the X clipboard as another program pastes it. Reads
//! and clicks only what a user could; never the app's insides.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::process::{oldest_app_process, Killed};

/// The desktop's notification service: dunst, a real one, on the test's
/// session bus and X display. `dunstctl action 0` clicks a notification's
/// only button.
pub fn start_notification_service() -> Killed {
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

pub fn dunstctl(args: &[&str]) -> (bool, String) {
    let out = Command::new("dunstctl").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    )
}

/// The desktop's notifications shown or queued now.
pub fn on_the_desktop() -> u32 {
    let count = |which| dunstctl(&["count", which]).1.parse::<u32>().unwrap_or(0);
    count("displayed") + count("waiting")
}

/// Waits up to `limit` until the desktop shows `count` notifications.
pub async fn desktop_shows(count: u32, limit: Duration, what: &str) {
    let started = Instant::now();
    while on_the_desktop() != count {
        assert!(
            started.elapsed() < limit,
            "{what}: the desktop shows {} notifications, not {count}",
            on_the_desktop()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The tray's menu as the desktop's tray host reads it: over D-Bus, from
/// the app's StatusNotifierItem (com.canonical.dbusmenu). Answers the app's
/// bus name and each item's id and label, in menu order; None until the app
/// exports it.
pub fn tray_menu() -> Option<(String, Vec<(u32, String)>)> {
    let app = oldest_app_process()?;
    let names = gdbus(
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.ListNames",
        &[],
    )?;
    for name in names.split('\'').filter(|n| n.starts_with(':')) {
        let pid = gdbus(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetConnectionUnixProcessID",
            &[name],
        );
        if pid.is_none_or(|pid| pid != format!("(uint32 {app},)")) {
            continue;
        }
        let Some(layout) = gdbus(
            name,
            TRAY_MENU,
            "com.canonical.dbusmenu.GetLayout",
            &["0", "-1", "[]"],
        ) else {
            continue;
        };
        // "(12, {'label': <'Check out a file…'>}, @av [])": each item's id, then its label.
        let mut items = Vec::new();
        for (at, _) in layout.match_indices("'label': <'") {
            let open = layout[..at].rfind('(').unwrap();
            let id = layout[open + 1..]
                .split(',')
                .next()
                .unwrap()
                .trim()
                .parse()
                .ok()?;
            let label = &layout[at + "'label': <'".len()..];
            items.push((id, label[..label.find("'>").unwrap()].to_owned()));
        }
        return Some((name.to_owned(), items));
    }
    None
}

/// The dbusmenu object of the app's tray icon.
pub const TRAY_MENU: &str = "/org/ayatana/NotificationItem/tray_icon_tray_app_main/Menu";

/// One D-Bus call on the session bus, given up after 3 s: its answer.
pub fn gdbus(dest: &str, path: &str, method: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("gdbus")
        .args(["call", "--session", "--timeout", "3", "--dest", dest])
        .args(["--object-path", path, "--method", method, "--"])
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// What the X clipboard holds, as a paste into another program gets it.
pub fn clipboard() -> String {
    let pasted = Command::new("xclip")
        .args(["-o", "-selection", "clipboard"])
        .output()
        .expect("xclip: `cargo xtask test` installs it");
    String::from_utf8_lossy(&pasted.stdout).into_owned()
}

/// The tray's menu labels, once `test` passes on them (within 15 s).
pub async fn tray_until(what: &str, test: impl Fn(&[String]) -> bool) -> Vec<String> {
    let started = Instant::now();
    loop {
        let labels: Vec<String> = tray_menu()
            .map(|(_, items)| items.into_iter().map(|(_, l)| l).collect())
            .unwrap_or_default();
        if test(&labels) {
            return labels;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the tray's menu: {what}: {labels:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

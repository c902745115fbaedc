//! Where the checked-out file is (issue 20's 4): its local path and Copy
//! path (read back from the X clipboard), the tray's menu listing it with an
//! Extend that works, a reveal that fails in words. Leaves the check-out open.

use std::time::{Duration, Instant};

use crate::window::*;

/// 4: after a check-out the detail shows where the file is, with Copy
/// path; a reveal that no file manager answers is said in words, with the path.
pub async fn where_the_file_is(w: &World) {
    let row = World::row("brand/hero.png");
    w.check_out_here(&row).await;
    let local = w.workspace.join("brand/hero.png");
    w.wait_text("#detail-local-path", "the local path", |t| {
        t == local.to_str().unwrap()
    })
    .await;
    w.dismiss_notices().await;
    w.click("action-copy-path").await;
    w.wait_text(".notice", "the copy said", |t| {
        t.starts_with("Path copied") && t.contains(local.to_str().unwrap())
    })
    .await;
    // Pasted elsewhere, as the designer would: the X clipboard holds the path.
    assert_eq!(
        clipboard(),
        local.to_str().unwrap(),
        "the clipboard holds the path"
    );
    w.readme_screenshot("detail-with-path").await;
    tray_lists_and_extends_the_check_out(w).await;

    w.dismiss_notices().await;
    w.click("action-reveal").await;
    let said = w
        .error_notice("the failed reveal", |t| {
            t.contains("The folder could not be shown")
        })
        .await;
    assert!(said.contains(local.to_str().unwrap()), "{said}");
    assert!(
        !said.contains("DBus") && !said.contains("freedesktop"),
        "{said}"
    );
    w.dismiss_notices().await;
}

/// The tray's menu, read as the desktop's tray reads it, lists the check-out
/// with its time left; its Extend, clicked there, extends the lease.
async fn tray_lists_and_extends_the_check_out(w: &World) {
    let ends = || async { w.lease_ends().await["brand/hero.png"] };
    let started = Instant::now();
    let (bus, items) = loop {
        // Listed once checked out, then again once its copy is here (the
        // copy decides between Check in and Download to edit).
        if let Some((bus, items)) = tray_menu() {
            let listed = items
                .iter()
                .any(|(_, label)| label.starts_with("hero.png — "));
            let copied = items.iter().any(|(_, label)| label == "Check in");
            if listed && copied {
                break (bus, items);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the tray never listed hero.png with its copy: {:?}",
            tray_menu()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let labels: Vec<&str> = items.iter().map(|(_, label)| label.as_str()).collect();
    let hero = labels
        .iter()
        .position(|l| l.starts_with("hero.png — "))
        .unwrap();
    assert!(
        labels[hero].ends_with(" min left"),
        "the check-out with its time left: {labels:?}"
    );
    assert_eq!(
        labels[hero + 1..],
        [
            "Extend",
            "Check in",
            "Reveal in folder",
            "Check out a file…",
            "Open Leasedesk",
            "Quit"
        ],
        "the tray's menu"
    );
    let before = ends().await;
    tokio::time::sleep(Duration::from_millis(1100)).await; // so an extension shows in the time
    let extend = items[hero + 1].0.to_string();
    gdbus(
        &bus,
        TRAY_MENU,
        "com.canonical.dbusmenu.Event",
        &[&extend, "clicked", "<0>", "0"],
    )
    .expect("a click on the tray's Extend");
    let started = Instant::now();
    while ends().await <= before {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the tray's Extend did not extend the lease"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

//! A check-out made on another device (issue 36's fourth finding): alice
//! joins a second computer, "alice-desktop" (an invite of her own,
//! redeemed), and checks a file out there through the CLI while this
//! computer has its head, read-only. The window says which device holds
//! the work ("Checked out on alice-desktop") in the detail and in My
//! check-outs, and offers Download to edit and Cancel, never a Check in
//! that could only fail; so does the tray. Once the file is here to edit,
//! Check in works here as usual.

use std::process::Command;
use std::time::Duration;

use leasedesk::Studio;

use crate::window::*;

async fn checked_out_on_another_device() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Remote).await;
    let server = w.server.as_ref().unwrap();
    let hero = "brand/hero.psd";
    let row = World::row(hero);
    let local = w.workspace.join(hero);
    w.import(hero, b"hero v1");

    // This computer has the head, read-only.
    w.open_row(hero).await;
    w.click_css("#action-update:not([disabled])", "Download")
        .await;
    w.row_shows(hero, ".local", "Up to date", Duration::from_secs(10))
        .await;
    assert!(!writable(&local));

    // Her desktop: an invite of her own, redeemed there as "alice-desktop";
    // she checks hero.psd out on it from the CLI.
    let here = leasedesk::Remote::new(&server.url, &server.tokens["alice"]).unwrap();
    let invite = here.invite_myself(None).await.unwrap();
    let desktop = leasedesk::Remote::redeem(
        &server.url,
        leasedesk::Trust::default(),
        &invite.code,
        "alice-desktop",
    )
    .await
    .unwrap();
    succeeded(
        Command::new(tool("LEASEDESK_BIN"))
            .args(["--server", &server.url, "checkout", hero])
            .env("LEASEDESK_TOKEN", &desktop.token)
            .env_remove("LEASEDESK_DATA"),
        "alice checks hero.psd out on her desktop",
    );

    // The detail says where the work is, with no Check in: Download to
    // edit (the version she checked out, writable) and Cancel instead.
    w.wait_text(&format!("{row} .holder"), "alice as the holder", |t| {
        t.starts_with("You")
    })
    .await;
    w.open_row(hero).await;
    w.wait_text_is(
        "#detail-elsewhere",
        "where the work is",
        "Checked out on alice-desktop",
    )
    .await;
    w.wait_text_is("#action-get-copy", "Download to edit", "Download to edit")
        .await;
    w.wait_for("#action-cancel", "Cancel check-out").await;
    assert!(
        w.absent("#action-checkin").await,
        "no Check in for work on another device"
    );
    w.screenshot("elsewhere-01-checked-out-on-the-desktop")
        .await;

    // My check-outs says the same.
    w.click("tab-mine").await;
    w.wait_text("#view-mine .card .elsewhere", "the card's device", |t| {
        t == "Checked out on alice-desktop"
    })
    .await;
    w.wait_for("#view-mine .card [data-get-copy]", "Download to edit")
        .await;
    let buttons = w.texts("#view-mine .card .actions button").await;
    assert!(
        !buttons.iter().any(|b| b == "Check in"),
        "the card offers no Check in: {buttons:?}"
    );
    assert!(
        buttons.iter().any(|b| b == "Cancel check-out"),
        "{buttons:?}"
    );
    w.screenshot("elsewhere-02-my-check-outs").await;

    // So does the tray: the desktop named, Download to edit, no Check in.
    let labels = tray_until("the desktop's check-out", |labels| {
        labels
            .iter()
            .any(|l| l.starts_with("hero.psd") && l.ends_with("checked out on alice-desktop"))
    })
    .await;
    assert!(labels.iter().any(|l| l == "Download to edit"), "{labels:?}");
    assert!(!labels.iter().any(|l| l == "Check in"), "{labels:?}");

    // Downloaded to edit: here now, writable, the lease as it was.
    let lease_before = w.lease_ends().await[hero];
    w.click("tab-files").await;
    w.open_row(hero).await;
    w.click_css("#action-get-copy:not([disabled])", "Download to edit")
        .await;
    w.wait_for("#action-checkin", "Check in, once the file is here")
        .await;
    w.wait_until_absent("#detail-elsewhere", "the desktop no longer said")
        .await;
    assert!(writable(&local), "her copy to edit");
    assert_eq!(w.lease_ends().await[hero], lease_before);
    tray_until("Check in, once the file is here", |labels| {
        labels.iter().any(|l| l == "Check in")
    })
    .await;
    w.screenshot("elsewhere-03-here-to-edit").await;

    // And Check in works here as usual.
    save_atomically(&local, b"hero v2, finished here");
    w.row_shows(hero, ".local", "Modified", Duration::from_secs(5))
        .await;
    w.check_in_here(None).await;
    w.version_shown(hero, 2).await;
    assert_eq!(w.versions(hero)[0]["version"], 2);
    w.screenshot("elsewhere-04-checked-in-here").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_out_made_on_another_device_is_got_here_then_checked_in() {
    within_limit(checked_out_on_another_device()).await;
}

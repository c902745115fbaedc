//! The day's work on both backends, as one scenario: add a file, check it out,
//! save, check in; bob holds it; a late check-in becomes a proposal; cancel
//! keeps a backup; a copy fetched of a file held elsewhere. Each backend then
//! ends its own way (`tray`, `zoom`, `settings`). Never starts a second app.

use std::time::{Duration, Instant};

use crate::window::*;

async fn scenarios(kind: Backend) {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, kind).await;
    let path = "brand/hero.psd";
    let row = World::row(path);
    let local = w.workspace.join(path);

    // Add a file, through the command the Add button and a drop both use.
    w.add_by_command("brand", "hero.psd", b"poster v1").await;
    w.row_shows(path, ".local", "Up to date", Duration::from_secs(10))
        .await;
    assert!(!writable(&local), "a file you do not hold is read-only");
    w.screenshot("01-added").await;

    // Check it out: the copy becomes writable; the row shows you and a countdown.
    w.open_row(path).await;
    w.type_into("#checkout-note", "retouching the sky").await;
    w.check_out_here(&row).await;
    w.wait_text(&format!("{row} .countdown"), "a countdown", |t| {
        t.ends_with("min")
    })
    .await;
    assert!(writable(&local), "a checked-out copy is writable");
    if kind == Backend::Bundled {
        crate::zoom::readable_at_double_size(&w).await;
    }
    w.screenshot("02-checked-out").await;

    // Save the way applications do: "Modified" within 2 seconds.
    let saved = Instant::now();
    save_atomically(&local, b"poster v2 by alice");
    w.row_shows(path, ".local", "Modified", Duration::from_secs(2))
        .await;
    let shown_after = saved.elapsed();
    assert!(
        shown_after < Duration::from_secs(2),
        "modified shown after {shown_after:?}"
    );
    w.screenshot("03-modified").await;

    // Check in: version 2, read-only again.
    w.check_in_here(None).await;
    w.version_shown(path, 2).await;
    w.wait_text(".notice", "the outcome", |t| {
        t.contains("saved as version 2")
    })
    .await;
    w.row_shows(path, ".holder", "Free", Duration::from_secs(5))
        .await;
    assert!(!writable(&local), "read-only after check-in");
    w.screenshot("04-checked-in").await;

    // Bob checks out through the CLI: the row names him, with his note.
    w.cli("bob", &["checkout", path, "--note", "print crop"]);
    w.wait_text(&format!("{row} .holder"), "bob as the holder", |t| {
        t.contains("bob") && t.contains("print crop")
    })
    .await;
    w.screenshot("05-bob-holds-it").await;

    // Alice sees who holds it, until when, and is offered what she can do:
    // be told when it is free (no Check out that could only be refused).
    w.busy_with_bob(path, "print crop").await;
    w.screenshot("06-busy").await;
    w.cli("bob", &["cancel", path]);
    w.row_shows(path, ".holder", "Free", Duration::from_secs(10))
        .await;

    // A stale check-in: alice's lease is broken, bob commits, alice checks in.
    w.open_row(path).await;
    w.check_out_here(&row).await;
    save_atomically(&local, b"poster v3 by alice, late");
    w.cli(
        "admin",
        &["break", path, "--reason", "bob needs it for print"],
    );
    w.row_shows(
        path,
        ".holder",
        "Your lease broken by admin",
        Duration::from_secs(10),
    )
    .await;
    w.screenshot("07a-lease-broken").await;
    w.bob_commits(path, b"poster v3 by bob");
    w.version_shown(path, 3).await;
    w.open_row(path).await;
    w.check_in_here(None).await;
    w.wait_text(".notice", "the proposal", |t| {
        t.contains("became a proposal because bob saved version 3")
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
    w.wait_text("[data-proposal]", "the open proposal", |t| {
        t.contains("You made this from version 2; since then bob saved version 3.")
    })
    .await;
    w.screenshot("07-proposal").await;
    // To compare in other tools, her own file: the backup beside the head's.
    w.click_css("[data-save-beside]", "Save beside the head")
        .await;
    w.wait_text(".notice", "the file to compare", |t| {
        t.contains("Ready to compare") && t.contains("hero (my changes ")
    })
    .await;
    w.click("tab-files").await;

    // Cancel keeps the changes in a backup and puts the head back.
    std::fs::remove_file(&backups[0]).unwrap();
    w.open_row(path).await;
    w.check_out_here(&row).await;
    save_atomically(&local, b"an experiment to throw away");
    w.row_shows(path, ".local", "Modified", Duration::from_secs(3))
        .await;
    w.click("action-cancel").await;
    w.wait_text(".notice", "the backup", |t| {
        t.contains("Your changes are kept as")
    })
    .await;
    let backups = crate::window::backups(&local);
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
    w.import(elsewhere, b"cover v1");
    w.cli("alice", &["checkout", elsewhere]);
    w.row_shows(
        elsewhere,
        ".local",
        "Not on this computer",
        Duration::from_secs(10),
    )
    .await;
    let lease_before = w.lease_ends().await[elsewhere];
    w.open_row(elsewhere).await;
    w.click("action-get-copy").await;
    w.row_shows(elsewhere, ".local", "Up to date", Duration::from_secs(10))
        .await;
    let local_cover = w.workspace.join(elsewhere);
    assert_eq!(std::fs::read(&local_cover).unwrap(), b"cover v1");
    assert!(writable(&local_cover), "her copy to edit");
    assert_eq!(w.lease_ends().await[elsewhere], lease_before);
    w.screenshot("08b-got-a-copy-to-edit").await;
    w.cli("alice", &["cancel", elsewhere]);

    if kind == Backend::Bundled {
        crate::tray::reminders(&w).await;
        crate::tray::closing_keeps_the_app_in_the_tray(&w).await;
    } else {
        crate::settings::switching_stores_in_settings(&w, &local).await;
        w.client.clone().close().await.unwrap();
    }
}

on_both_backends!(scenarios: the_app_on_the_bundled_backend, the_app_on_a_team_server);

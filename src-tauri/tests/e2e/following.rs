//! The screen follows others' work, on both backends (issue 36's first
//! finding): what is open (a busy file's detail, reached through Held by
//! others), a proposal's card, a broken check-out's detail, and a folder
//! made view-only change when others act from the CLI, without a click.
//! Designers decide on what they see. On the way: the check-in dialog
//! foretells a proposal, and an accepted proposal's backup is said to be no
//! longer needed.

use std::time::Duration;

use crate::window::*;

/// How soon the window must show what another person did: the events reach
/// it in well under a second; this leaves room for a loaded machine.
const SOON: Duration = Duration::from_secs(8);

/// Whether the proposal card's Accept is disabled, as the page says it.
async fn accept_disabled(w: &World) -> serde_json::Value {
    w.eval("return document.querySelector('.proposal-card [data-accept]').disabled;")
        .await
}

async fn following(kind: Backend) {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, kind).await;
    let hero = "brand/hero.psd";
    w.import(hero, b"hero v1");
    w.import("brand/logo.png", b"logo v1");

    // bob holds hero.psd; alice opens it from Held by others.
    w.cli("bob", &["checkout", hero, "--note", "retouching the sky"]);
    w.click("held-by-others").await;
    w.busy_with_bob(hero, "retouching the sky").await;
    w.wait_for("#action-ask", "Ask bob to release…").await;

    // bob checks in from the CLI: the row leaves Held by others, and the
    // open detail says at once that the file is free at version 2, with
    // Check out and no more Ask bob.
    w.checks_in("bob", hero, b"hero v2 by bob");
    w.wait_until("#detail-holder", "the holder gone", SOON, |t| {
        t == "Nobody: the file is free"
    })
    .await;
    w.wait_until("#detail-head", "version 2 in the detail", SOON, |t| {
        t.starts_with("Version 2 by bob")
    })
    .await;
    w.wait_for("#action-checkout", "Check out").await;
    assert!(
        w.absent("#action-ask").await,
        "{}: a free file offers Ask bob",
        w.name()
    );
    w.screenshot("following-01-free").await;
    if kind == Backend::Remote {
        w.readme_screenshot("detail-follows-the-holder").await;
    }
    w.click("held-by-others").await;

    // A proposal's card follows the head: alice's late check-in of
    // logo.png waits against version 2; when bob commits version 3 the card
    // offers Rebuild and no Accept, before anyone clicks.
    let logo = "brand/logo.png";
    w.wait_for(&World::row(logo), "logo.png's row").await;
    w.open_row(logo).await;
    w.outrun(logo, Some(b"alice's logo"), b"bob's logo v2", 2)
        .await;
    // The check-in dialog says beforehand that this one becomes a proposal.
    w.open_row(logo).await;
    w.click_in_panel("#action-checkin", "Check in").await;
    w.wait_text("#checkin-proposal", "the proposal foretold", |t| {
        t.starts_with("bob saved version 2 after you checked out version 1")
    })
    .await;
    assert_eq!(
        w.texts("#checkin-confirm").await,
        ["Check in as a proposal"]
    );
    w.click("checkin-confirm").await;
    w.wait_text(".notice", "the proposal", |t| {
        t.contains("became a proposal")
    })
    .await;
    w.dismiss_notices().await;
    w.click("tab-proposals").await;
    let card = ".proposal-card [data-accept]";
    w.wait_for(card, "the proposal's Accept").await;
    assert_eq!(
        accept_disabled(&w).await,
        serde_json::json!(false),
        "{}: a proposal against the head can be accepted",
        w.name()
    );
    w.bob_commits(logo, b"bob's logo v3");
    w.wait_until(
        ".proposal-card [data-rebuild]",
        "Rebuild on the card",
        SOON,
        |_| true,
    )
    .await;
    w.wait_until(".proposal-card .summary", "the card's head", SOON, |t| {
        t.ends_with("since then bob saved versions 2 and 3.")
    })
    .await;
    assert_eq!(
        accept_disabled(&w).await,
        serde_json::json!(true),
        "{}: Accept is offered against an old head",
        w.name()
    );
    w.screenshot("following-02-proposal").await;

    // Rebuilt and accepted: the "(my changes …)" copy the late check-in
    // left beside the file is said to be no longer needed.
    w.click_css(".proposal-card [data-rebuild]", "Rebuild")
        .await;
    w.wait_text(".notice", "the rebuild", |t| {
        t.contains("rebuilt against version 3")
    })
    .await;
    w.click_css(".proposal-card [data-accept]:not([disabled])", "Accept")
        .await;
    w.click("confirm-yes").await;
    w.wait_text(".notice", "the accept, with its version", |t| {
        t.contains("accepted: it is version 4, the head")
    })
    .await;
    w.wait_text(".notice", "the backup that can go", |t| {
        t.starts_with("Your proposal was accepted: “logo (my changes")
    })
    .await;
    w.dismiss_notices().await;

    // alice's own check-out broken and the file committed by bob: her
    // detail shows his version and no lease of hers, and offers no Extend.
    w.click("tab-files").await;
    w.open_row(hero).await;
    w.outrun(hero, None, b"hero v3 by bob", 3).await;
    w.wait_until("#detail-head", "version 3 in the detail", SOON, |t| {
        t.starts_with("Version 3 by bob")
    })
    .await;
    w.wait_until(".detail-main .warning", "the lost lease", SOON, |t| {
        t.starts_with("Your lease has ended")
    })
    .await;
    assert!(
        w.absent("#detail .countdown").await,
        "{}: a broken lease shows time left",
        w.name()
    );
    assert!(
        w.absent("#action-extend").await,
        "{}: a broken lease offers Extend",
        w.name()
    );
    w.screenshot("following-03-broken").await;

    // A folder made view-only for alice on the team server: its files are
    // marked so in the list, as the rule is saved.
    let print = "final/print.pdf";
    if kind == Backend::Bundled {
        return; // folder rules name a studio's participants
    }
    w.import(print, b"print run");
    w.wait_for(&World::row(print), "print.pdf's row").await;
    w.cli("admin", &["allow", "alice", "read", "final/"]);
    w.wait_text(
        &format!("{} .view-only", World::row(print)),
        "the view-only mark",
        |t| t.contains("view only"),
    )
    .await;
    assert!(
        w.absent(&format!("{} .view-only", World::row(hero))).await,
        "{}: a file alice may change is marked view only",
        w.name()
    );
}

on_both_backends!(following: the_screen_follows_others_on_the_bundled_backend, the_screen_follows_others_on_a_team_server);

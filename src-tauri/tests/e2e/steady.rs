//! The window holds still and says every word (issue 36's 10, 11, 12 and
//! 14), on the bundled backend: a search is of every folder and says so
//! (no folder or Held by others left looking chosen), Escape empties it
//! from anywhere; a one-letter search, an error in Settings and Swipe's
//! slider move nothing; the list's heads and lease, a holder's long note
//! and a transfer's line show whole beside an open file and at 200 %;
//! Shift-click chooses files and no text, and a row taken out of the
//! choice keeps no tint.

use serde_json::{json, Value};

use crate::window::*;

const SHIFT: char = '\u{E008}';
const CTRL: char = '\u{E009}';

/// Where an element is: its top and left, in the page.
async fn place(w: &World, css: &str) -> Value {
    w.client
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect();
             return [Math.round(r.left), Math.round(r.top)];",
            vec![json!(css)],
        )
        .await
        .unwrap()
}

/// Bob's work on the bundled store in `home`, before the app opens it: what
/// this scenario looks at is the window holding still, not the window
/// following others (the `following` scenario's).
fn bob_works(home: &std::path::Path) {
    let store = home.join("data/store");
    let bob = |args: &[&str]| {
        let mut command = std::process::Command::new(tool("LEASEDESK_BIN"));
        command.arg("--data").arg(&store).args(["--as", "user:bob"]);
        succeeded(command.args(args), &format!("{args:?}"));
    };
    let file = |name: &str, bytes: &[u8]| {
        let file = home.join("incoming").join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bytes).unwrap();
        file.to_str().unwrap().to_owned()
    };
    for path in ["brand/hero.psd", "brand/logo.png", "brand/type.ai"] {
        bob(&["import", path, &file(path, path.as_bytes())]);
    }
    bob(&["import", "art/poster.png", &file("poster-1", &poster(80))]);
    bob(&["checkout", "art/poster.png"]);
    bob(&["checkin", "art/poster.png", &file("poster-2", &poster(200))]);
    let note = "retouching the sky for the spring campaign's print run, back after lunch";
    bob(&["checkout", "brand/hero.psd", "--note", note]);
}

async fn steady() {
    let _one = ONE_APP.lock().await;
    let home = tempfile::tempdir().unwrap();
    bob_works(home.path());
    let w = World::start_in(&_one, home, Backend::Bundled, None).await;
    w.wait_for(&World::row("brand/hero.psd"), "the files").await;

    // 10: a search is of every folder: the folder chosen shows chosen no more.
    w.click_css(".folder-name[data-folder^=\"brand\"]", "the brand folder")
        .await;
    w.wait_for(
        "[aria-selected=true] > .folder-name[data-folder^=\"brand\"]",
        "brand chosen",
    )
    .await;
    let tabs = place(&w, "#tab-files").await;
    // 11: one letter typed shows a hint and moves nothing.
    w.type_into("#filter", "p").await;
    w.wait_for("#search-hint:not([hidden])", "the hint to type more")
        .await;
    assert_eq!(
        place(&w, "#tab-files").await,
        tabs,
        "a one-letter search moved the page"
    );
    w.type_into("#filter", "o").await;
    w.wait_for(&World::row("art/poster.png"), "poster.png found in art/")
        .await;
    assert!(
        w.absent("#folder-tree [aria-selected=true]").await,
        "a folder shows chosen while the search is of every folder"
    );
    assert_eq!(
        w.eval("return document.getElementById('held-by-others').getAttribute('aria-pressed');")
            .await,
        json!("false")
    );
    // Escape empties the box wherever the focus is: here, in the list.
    w.focus("file-list").await;
    w.press(ESCAPE).await;
    w.wait_for(
        "[aria-selected=true] > .folder-name[data-folder^=\"brand\"]",
        "brand chosen again",
    )
    .await;
    assert_eq!(
        w.eval("return document.getElementById('filter').value;")
            .await,
        json!(""),
        "Escape in the list left the search"
    );
    w.click_css(".folder-name[data-folder=\"\"]", "All files")
        .await;

    // 14: Shift-click chooses a range and selects no text; a row taken out
    // with Ctrl-click keeps no tint.
    let type_ai = World::row("brand/type.ai");
    w.open_row("brand/hero.psd").await;
    w.click_holding(SHIFT, &type_ai, "type.ai").await;
    w.wait_for(&format!("{type_ai}.chosen"), "the range chosen")
        .await;
    assert_eq!(
        w.eval("return String(getSelection());").await,
        json!(""),
        "Shift-click selected the page's text"
    );
    w.click_holding(CTRL, &type_ai, "type.ai").await;
    w.wait_until_absent(&format!("{type_ai}.chosen"), "type.ai taken out")
        .await;
    assert!(
        w.absent(&format!("{type_ai}.selected")).await,
        "a row taken out of the choice keeps its tint"
    );

    // 12: beside an open file every word shows: the list's heads and each
    // lease, the holder's whole note, a transfer's whole line.
    w.open_row("brand/hero.psd").await;
    w.wait_text("#detail-holder", "the holder's note", |t| {
        t.contains("back after lunch")
    })
    .await;
    // A transfer's line as the detail draws it, at its longest (drawn again
    // after each redraw of the detail, which a zoom brings).
    let long_line = || {
        w.eval(
            "document.getElementById('long-progress')?.remove();
             const bar = document.createElement('div');
             bar.className = 'progress'; bar.id = 'long-progress';
             bar.innerHTML = '<span class=\"bar\" style=\"width: 40%\"></span><span class=\"label\">Sending 84 MB of 2.1 GB (the rest is already on the server): 21 MB sent, about 30 s left</span>';
             document.querySelector('#detail .detail-main').append(bar);",
        )
    };
    long_line().await;
    let everywhere = "#file-list .row .lease-cell, .table-head > span, #detail-holder, #detail-holder .holder, #long-progress, #long-progress .label";
    let cut = w.cut_off(everywhere, "app").await;
    w.screenshot("steady-01-every-word").await;
    assert!(cut.is_empty(), "beside an open file these are cut: {cut:?}");
    let list_cut = w
        .cut_off(
            "#file-list .row .lease-cell, .table-head > span",
            "file-list",
        )
        .await;
    assert!(
        list_cut.is_empty(),
        "the list runs past its edge: {list_cut:?}"
    );
    for _ in 0..5 {
        w.with_control("=").await;
    }
    w.wait_text_is("#zoom", "the zoom shown", "200 %").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    long_line().await;
    let cut = w
        .cut_off(
            "#detail-holder, #detail-holder .holder, #long-progress .label",
            "app",
        )
        .await;
    w.screenshot("steady-02-every-word-at-200").await;
    assert!(cut.is_empty(), "at 200 % these are cut: {cut:?}");
    w.with_control("0").await;
    w.wait_until_absent("#zoom:not([hidden])", "the zoom back at 100 %")
        .await;
    w.eval("document.getElementById('long-progress')?.remove();")
        .await;

    // 11: Swipe's slider comes without moving the compare's toolbar.
    w.open_row("art/poster.png").await;
    w.compare_versions(1, 2).await;
    w.wait_for("#compare:not([hidden]) #compare-close", "Compare")
        .await;
    // The sizes' line above the pictures fills once both are decoded: a
    // place read before it would move for that, not for Swipe.
    w.wait_text("#compare-sizes", "the pictures' sizes", |t| !t.is_empty())
        .await;
    let modes = place(&w, "#compare .modes").await;
    let stage = place(&w, "#compare-stage").await;
    w.press("2").await;
    w.wait_for("#compare-stage[data-mode=swipe]", "swipe").await;
    assert_eq!(
        place(&w, "#compare .modes").await,
        modes,
        "Swipe moved the toolbar"
    );
    assert_eq!(
        place(&w, "#compare-stage").await,
        stage,
        "Swipe moved the pictures"
    );
    w.click("compare-close").await;

    // 11: an error in Settings neither moves the dialog nor outlives its fix.
    w.open_settings().await;
    w.choose_setting("settings-backend", "remote").await;
    let dialog = place(&w, "#settings").await;
    w.replace_setting("settings-url", "leasedesk.example").await;
    w.click("settings-save").await;
    w.wait_text("#settings-status.warning", "the address refused", |t| {
        t.contains("is not an address")
    })
    .await;
    assert_eq!(
        place(&w, "#settings").await,
        dialog,
        "the error moved the dialog"
    );
    w.replace_setting("settings-url", "https://leasedesk.example:7443")
        .await;
    assert_eq!(
        w.texts("#settings-status").await,
        [""],
        "the error stays after the address is fixed"
    );
    w.click("settings-close").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_holds_still_and_says_every_word() {
    within_limit(steady()).await;
}

//! Finding one's way in the window (issue 20's 1, 5, 10, 11, 12): the filter
//! and its keys, a busy file's offer and the default lease, a detail that
//! starts at its top, zoom that shows and fits. Changes no file's content.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::window::*;

/// 1 and 12: "br" shows 3 of 5; Escape empties the box and shows all 5
/// again, on every tab. Arrow keys and Enter work from the box, and the
/// focus shows where Enter put it.
pub async fn filter_clears_and_keys_work_in_it(w: &World) {
    let filter = w.wait_for("#filter", "the filter").await;
    filter.click().await.unwrap();
    filter.send_keys("br").await.unwrap();
    w.wait_text_is("#count-files", "3 of 5", "3 of 5").await;
    assert_eq!(w.texts(".row").await.len(), 3, "the rows while filtered");

    // The arrows move through the filtered list from the box; Enter opens
    // the file with the focus on its first action, ring shown.
    filter.send_keys(ARROW_DOWN).await.unwrap();
    w.wait_for(
        ".row.selected[data-path=\"brand/banner.png\"]",
        "the first match chosen",
    )
    .await;
    filter.send_keys(ARROW_DOWN).await.unwrap();
    w.wait_for(
        ".row.selected[data-path=\"brand/hero.png\"]",
        "the next match chosen",
    )
    .await;
    filter.send_keys(ENTER).await.unwrap();
    let started = Instant::now();
    let focus = loop {
        let focus = w
            .eval(
                "const f = document.activeElement;
                 return { inDetail: !!f.closest('#detail .actions'), id: f.id, outline: getComputedStyle(f).outlineStyle };",
            )
            .await;
        if focus["inDetail"] == true || started.elapsed() > Duration::from_secs(5) {
            break focus;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(focus["inDetail"], true, "Enter from the filter: {focus}");
    assert_ne!(
        focus["outline"], "none",
        "the focus ring after Enter: {focus}"
    );

    // Escape empties the box: every file again, "5", after a tab switch too.
    filter.send_keys(ESCAPE).await.unwrap();
    w.wait_text_is("#count-files", "5", "5").await;
    assert_eq!(filter.prop("value").await.unwrap().as_deref(), Some(""));
    assert_eq!(w.texts(".row").await.len(), 5, "every file after Escape");
    w.click("tab-activity").await;
    w.click("tab-files").await;
    w.wait_for(&World::row("art/same.png"), "a file the filter had hidden")
        .await;
    assert_eq!(
        w.texts(".row").await.len(),
        5,
        "every file after a tab switch"
    );
    assert_eq!(w.texts("#count-files").await, ["5"]);
}

/// 10 and 11: a file bob holds offers "Notify me when it's free", not a
/// Check out that can only be refused; a free file says how long the
/// default check-out is.
pub async fn busy_file_offers_what_can_be_done(w: &World) {
    w.cli(
        "bob",
        &["checkout", "art/same.png", "--note", "colour pass"],
    );
    w.wait_text(
        &format!("{} .holder", World::row("art/same.png")),
        "bob holding it",
        |t| t.contains("bob"),
    )
    .await;
    w.busy_with_bob("art/same.png", "colour pass").await;
    w.cli("bob", &["cancel", "art/same.png"]);

    w.open_row("brand/hero.png").await;
    let choices = w.texts("#checkout-hours option").await;
    assert_eq!(
        choices.first().map(String::as_str),
        Some("8 hours (default)"),
        "{choices:?}"
    );
}

/// 5: another file's detail starts at its top, its name in sight.
pub async fn detail_starts_at_its_top(w: &World) {
    w.bob_commits("brand/logo.png", &poster(210));
    w.bob_commits("brand/logo.png", &poster(220));
    w.open_row("brand/logo.png").await;
    w.wait_for("#history [data-version=\"3\"]", "logo's history")
        .await;
    let scrolled = w
        .eval(
            "const d = document.getElementById('detail');
             d.scrollTop = d.scrollHeight;
             return { top: d.scrollTop, room: d.scrollHeight - d.clientHeight };",
        )
        .await;
    assert!(
        scrolled["room"].as_f64().unwrap() > 100.0 && scrolled["top"].as_f64().unwrap() > 100.0,
        "the detail scrolls: {scrolled}"
    );
    w.open_row("brand/banner.png").await;
    w.wait_text_is("#detail-name", "banner's detail", "banner.png")
        .await;
    let top = w
        .eval("return document.getElementById('detail').scrollTop;")
        .await;
    assert_eq!(
        top.as_f64(),
        Some(0.0),
        "the new file's detail starts at its top"
    );
}

/// 12: Ctrl + zooms and the percentage shows; at 200 % the list has room
/// for rows, and Settings' Save and Close are on screen; Ctrl 0 is 100 %.
pub async fn zoom_is_shown_and_fits(w: &World) {
    w.press(ESCAPE).await; // no file chosen: the list has the window
    w.with_control("=").await;
    w.wait_text_is("#zoom", "110 %", "110 %").await;
    for _ in 0..4 {
        w.with_control("=").await;
    }
    w.wait_text_is("#zoom", "200 %", "200 %").await;
    let started = Instant::now();
    loop {
        let width = w.eval("return document.documentElement.clientWidth;").await;
        if width.as_f64().unwrap() < 600.0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the window did not zoom"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let list = w
        .eval("return document.getElementById('file-list').clientHeight;")
        .await;
    assert!(
        list.as_f64().unwrap() >= 4.0 * 48.0,
        "at 200 % the list has room for 4 rows: {list} px"
    );
    // Clicked from the page: WebKitWebDriver places its clicks as if at 100 %.
    w.eval("document.getElementById('open-settings').click(); return true;")
        .await;
    w.wait_for("#settings[open] #settings-backend", "Settings")
        .await
        .select_by_value("remote")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let buttons = w
        .eval(
            "return ['settings-save', 'settings-close'].map((id) => {
               const r = document.getElementById(id).getBoundingClientRect();
               return r.bottom <= innerHeight && r.right <= innerWidth && r.top >= 0;
             });",
        )
        .await;
    w.screenshot("settings-at-200-percent").await;
    assert_eq!(
        buttons,
        json!([true, true]),
        "Save and Close on screen at 200 %"
    );
    w.eval("document.getElementById('settings-close').click(); return true;")
        .await;
    w.with_control("0").await;
    let started = Instant::now();
    while !w.absent("#zoom:not([hidden])").await {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "Ctrl 0: 100 %, not shown"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

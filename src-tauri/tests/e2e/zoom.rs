//! The bundled scenario at 200 % (Ctrl+= five times): everything still fits,
//! the detail takes the list's place, "All files" brings the list back with
//! the row in sight. Leaves the window at 100 % with the file open, as found.

use std::time::{Duration, Instant};

use crate::window::*;

/// At 200% (Ctrl+= five times, as a designer zooms) everything still fits
/// the window: nothing runs off its right edge; the open file's detail takes
/// the list's place, with its actions on screen, and "All files" brings the
/// list back with the file's row in sight. Ctrl+0 goes back to 100 %.
pub async fn readable_at_double_size(w: &World) {
    for _ in 0..5 {
        w.with_control("=").await;
    }
    w.wait_text_is("#zoom", "the zoom shown", "200 %").await;
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
    w.with_control("0").await;
    w.wait_for("#zoom", "100 %, not shown").await;
    let started = Instant::now();
    while layout().await["width"].as_f64().unwrap() < 600.0 {
        assert!(started.elapsed() < Duration::from_secs(5), "back to 100 %");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    w.open_row("brand/hero.psd").await;
}

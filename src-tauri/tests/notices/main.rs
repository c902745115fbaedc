//! Notices never hide a control (issue 23, "The window's speed", and issue
//! 36's compact toast): the real app under WebDriver, three notices raised
//! with the detail panel open and again with Compare open, at the window's
//! default size and at 900×600. The newest shows in a strip of one line,
//! the others folded behind "2 more"; unfolded, all three show. Every
//! button, field and list a user can see must lie clear of every notice,
//! and every notice shown must itself be in sight (not under Compare).
//!
//! Over the shared harness (`../window/`), like the `e2e` and `designer`
//! binaries; `cargo xtask test` runs it with them.

#[path = "../window/mod.rs"]
mod window;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use window::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_never_hide_a_control() {
    within_limit(notices_at_two_sizes()).await;
}

async fn notices_at_two_sizes() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Bundled).await;
    let path = "art/poster.png";
    w.import(path, &poster(80));
    w.bob_commits(path, &poster(200));
    w.version_shown(path, 2).await;
    // A file checked out here: its detail is at its fullest (Check in,
    // Extend, Cancel, the path with Copy path, the history's picks).
    w.open_row(path).await;
    w.check_out_here(&World::row(path)).await;
    w.wait_for("#action-copy-path", "Copy path").await;

    let mut failures = Vec::new();
    for size in [None, Some((900, 600))] {
        let at = match size {
            None => "the default size".to_owned(),
            Some(size) => {
                resize(&w, size).await;
                format!("{}×{}", size.0, size.1)
            }
        };
        w.open_row(path).await;
        w.wait_for("#action-copy-path", "Copy path").await;
        let detail = raise_notices_and_look(&w).await;
        failures.extend(compact(&detail, &format!("detail open, {at}")));
        failures.extend(covered(&detail, 1, &format!("detail open, {at}")));
        let unfolded = unfold_notices_and_look(&w).await;
        failures.extend(covered(
            &unfolded,
            3,
            &format!("detail open, unfolded, {at}"),
        ));
        w.screenshot(&format!("notices-detail-{}", at.replace(' ', "-")))
            .await;

        for version in [1, 2] {
            let pick = format!("#history [data-pick=\"{version}\"]");
            // Picks stay made after Compare closes: a second click would undo one.
            let picked = format!("return document.querySelector('{pick}').checked;");
            if w.eval(&picked).await != json!(true) {
                w.click_in_panel(&pick, "a version's pick").await;
            }
        }
        w.click_in_panel("#history-compare", "Compare version 1 and 2")
            .await;
        w.wait_for("#compare:not([hidden]) #compare-close", "Compare")
            .await;
        let compare = raise_notices_and_look(&w).await;
        failures.extend(compact(&compare, &format!("Compare open, {at}")));
        failures.extend(covered(&compare, 1, &format!("Compare open, {at}")));
        w.screenshot(&format!("notices-compare-{}", at.replace(' ', "-")))
            .await;
        w.click("compare-close").await;
        w.dismiss_notices().await;
    }
    assert!(
        failures.is_empty(),
        "notices hide controls or are hidden:\n{}",
        failures.join("\n")
    );
    w.client.clone().close().await.unwrap();
}

/// Resizes the window (WebDriver's window rect) and waits until the page
/// has the new size.
async fn resize(w: &World, (width, height): (u32, u32)) {
    w.client.set_window_size(width, height).await.unwrap();
    let started = Instant::now();
    loop {
        let inner = w.eval("return [innerWidth, innerHeight];").await;
        if inner == json!([width, height]) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the window never took {width}×{height}: the page is {inner}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Raises three notices through the app's own Copy path (each click says
/// "Path copied", or that the clipboard refused), then looks at the window
/// two frames later: every visible control's rectangle (clipped to what
/// its scrolling panels show, and on top where it is, as seen with the
/// notices hidden for a moment) and every notice's.
async fn raise_notices_and_look(w: &World) -> Value {
    w.client
        .execute_async(include_str!("look.js"), vec![])
        .await
        .unwrap()
}

/// The notices raised before, unfolded ("2 more" pressed), looked at again.
async fn unfold_notices_and_look(w: &World) -> Value {
    w.client
        .execute_async(include_str!("look.js"), vec![json!("all")])
        .await
        .unwrap()
}

/// What `look` found wrong with the toast's size: three notices raised show
/// the newest alone, in a strip no taller than two lines of text (one, with
/// its buttons, where the window is wide enough), and "2 more" for the others.
fn compact(look: &Value, when: &str) -> Vec<String> {
    let mut wrong = Vec::new();
    let strip = look["strip"].as_f64().unwrap_or(f64::NAN);
    if strip.is_nan() || strip > 64.0 {
        wrong.push(format!(
            "{when}: the notices' strip is {strip} px tall, more than two lines"
        ));
    }
    if look["folded"] != json!(2) || look["more"] != json!("2 more") {
        wrong.push(format!(
            "{when}: {} notices folded behind {} (two behind \"2 more\" expected)",
            look["folded"], look["more"]
        ));
    }
    wrong
}

/// What `look` found wrong: a control under a notice, a notice out of
/// sight, or other than `shown` notices shown (the look would prove nothing).
fn covered(look: &Value, shown: usize, when: &str) -> Vec<String> {
    let boxes = |key: &str| look[key].as_array().cloned().unwrap_or_default();
    let (notices, controls) = (boxes("notices"), boxes("controls"));
    let mut wrong = Vec::new();
    if notices.len() != shown || controls.is_empty() {
        wrong.push(format!(
            "{when}: {} notices shown (not {shown}) and {} visible controls to look at ({look})",
            notices.len(),
            controls.len()
        ));
    }
    let side = |b: &Value, k: &str| b[k].as_f64().unwrap_or(f64::NAN);
    // Compare, when open, spans the window's width from its top.
    let compare = &look["compare"];
    let width = look["window"][0].as_f64().unwrap_or(f64::NAN);
    if compare.is_object()
        && (side(compare, "left") > 0.5
            || side(compare, "top") > 0.5
            || side(compare, "right") < width - 0.5)
    {
        wrong.push(format!(
            "{when}: Compare ({compare}) does not span the window ({width} px wide)"
        ));
    }
    let overlap = |a: &Value, b: &Value| {
        side(a, "left") < side(b, "right")
            && side(b, "left") < side(a, "right")
            && side(a, "top") < side(b, "bottom")
            && side(b, "top") < side(a, "bottom")
    };
    for notice in &notices {
        if notice["seen"] != json!(true) {
            wrong.push(format!(
                "{when}: the notice {} is out of sight ({})",
                notice["name"], notice["box"]
            ));
            continue;
        }
        for control in &controls {
            if overlap(&notice["box"], &control["box"]) {
                wrong.push(format!(
                    "{when}: the notice {} ({}) lies over {} ({})",
                    notice["name"], notice["box"], control["name"], control["box"]
                ));
            }
        }
    }
    wrong
}

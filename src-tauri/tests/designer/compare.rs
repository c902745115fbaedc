//! Comparing versions and deciding a proposal (issue 20's 2, 3, 6, 7, 13):
//! picks and the compare action where they are made, identical pixels of
//! different files, the swipe's line read from the screen after a pan, an
//! accept over bob's head that asks first. Never decides without a click.

use std::time::Duration;

use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use serde_json::json;

use crate::window::*;

/// A size as the window says it, for files of 1 KB to 1 MB: "3.1 KB", "42 KB".
fn kilobytes(n: usize) -> String {
    let kb = n as f64 / 1024.0;
    if kb < 10.0 {
        format!("{kb:.1} KB")
    } else {
        format!("{} KB", kb.round())
    }
}

/// 6 and 7: picks are 24 px targets, the compare action shows where the
/// second pick was made, and identical pixels of different files are not
/// called identical.
pub async fn compare_picks_and_identical_pixels(w: &World) {
    let recompressed = poster_recompressed();
    assert_ne!(recompressed, poster(80), "two different files");
    w.bob_commits("art/same.png", &recompressed);
    w.version_shown("art/same.png", 2).await;
    w.open_row("art/same.png").await;
    let pick = |n: u32| format!("#history [data-pick=\"{n}\"]");
    w.wait_for(&pick(1), "version 1's pick").await;
    let size = w
        .client
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect(); return [r.width, r.height];",
            vec![json!(pick(1))],
        )
        .await
        .unwrap();
    assert!(
        size.as_array()
            .unwrap()
            .iter()
            .all(|side| side.as_f64().unwrap() >= 24.0),
        "a pick is at least 24 px: {size}"
    );
    w.click_in_panel(&pick(2), "pick version 2").await;
    w.click_in_panel(&pick(1), "pick version 1").await;
    w.wait_for(
        "#history [data-version=\"1\"] #history-compare-here",
        "the compare action beside the second pick",
    )
    .await;
    w.click_in_panel("#history-compare-here", "Compare version 1 and 2")
        .await;
    let said = difference_said(w).await;
    assert_eq!(
        said,
        format!(
            "The pixels are identical; the file changed ({}, was {})",
            kilobytes(recompressed.len()),
            kilobytes(poster(80).len())
        )
    );
    w.click("compare-close").await;
}

/// Issue 36's 8: a local copy re-encoded with the same pixels, beside its
/// "Modified" badge, is not called identical to the head.
pub async fn local_copy_recompressed_is_not_identical(w: &World) {
    let path = "art/same.png";
    w.open_row(path).await;
    w.check_out_here(&World::row(path)).await;
    // The head is the recompressed poster; the copy saved is the original.
    save_atomically(&w.workspace.join(path), &poster(80));
    w.row_shows(path, ".local", "Modified", Duration::from_secs(5))
        .await;
    w.click_in_panel("#action-compare-local", "Compare with the head")
        .await;
    assert_eq!(
        difference_said(w).await,
        "The pixels are identical; the file changed (saved again, re-encoded or with other metadata)"
    );
    w.click("compare-close").await;
    w.click_in_panel("#action-cancel", "Cancel check-out").await;
    w.row_shows(path, ".local", "Up to date", Duration::from_secs(10))
        .await;
}

/// 3: after the images are panned, the blue line is still the boundary
/// between the two versions (read from the screen), and each mode says
/// which version is where; the difference has a key.
pub async fn swipe_line_is_the_split(w: &World) {
    w.bob_commits("art/swatch.png", &swatch([40, 60, 220]));
    w.version_shown("art/swatch.png", 2).await;
    w.open_row("art/swatch.png").await;
    w.compare_versions(1, 2).await;
    w.decoded("#compare-stage .stack img[data-side=a]", "version 1")
        .await;
    w.press("2").await;
    w.wait_for("#compare-stage[data-mode=swipe]", "swipe").await;
    let keys = w.texts("#compare-stack-key span").await;
    assert_eq!(keys, ["◀ Version 1", "Version 2 ▶"], "which side is which");

    // Drag the images 100 px right, as a designer pans.
    let stage = w.wait_for("#compare-stage", "the stage").await;
    let pan = MouseActions::new("mouse".into())
        .then(pointer_onto(stage))
        .then(LEFT_DOWN)
        .then(PointerAction::MoveBy {
            duration: Some(Duration::from_millis(300)),
            x: 100.0,
            y: 0.0,
        })
        .then(LEFT_UP);
    w.client.perform_actions(pan).await.unwrap();
    let at = w
        .eval(
            "const line = document.getElementById('compare-swipe-line').getBoundingClientRect();
             const img = document.querySelector('#compare-stage .stack img[data-side=a]').getBoundingClientRect();
             return { line: line.left + line.width / 2, imgLeft: img.left, imgRight: img.right, y: img.top + img.height / 2,
                      dx: (outerWidth - innerWidth) / 2, dy: outerHeight - innerHeight, ratio: devicePixelRatio };",
        )
        .await;
    let number = |key: &str| at[key].as_f64().unwrap();
    assert!(
        number("imgLeft") < number("line") - 20.0 && number("line") + 20.0 < number("imgRight"),
        "the line crosses the panned image: {at}"
    );
    assert!(
        number("imgLeft") > 0.0,
        "the image moved with the pan: {at}"
    );
    w.readme_screenshot("compare-swipe-after-pan").await;
    let screen = image::load_from_memory(&w.png().await).unwrap().to_rgb8();
    let pixel = |x: f64| {
        let ratio = number("ratio");
        let px = ((x + number("dx")) * ratio) as u32;
        let py = ((number("y") + number("dy")) * ratio) as u32;
        screen.get_pixel(px, py).0
    };
    let (left, right) = (pixel(number("line") - 15.0), pixel(number("line") + 15.0));
    assert!(
        left[0] > 150 && left[2] < 100,
        "left of the line is version 1 (red): {left:?} ({at})"
    );
    assert!(
        right[2] > 150 && right[0] < 100,
        "right of the line is version 2 (blue): {right:?} ({at})"
    );

    w.press("3").await;
    let keys = w.texts("#compare-stack-key span").await;
    assert_eq!(keys, ["Version 1 below", "Version 2 on top, at 50 %"]);
    w.press("4").await;
    let key = w.texts("#compare-diff-key").await;
    assert!(
        key[0].contains("changed pixels") && key[0].contains("unchanged"),
        "{key:?}"
    );
    w.click("compare-close").await;
}

/// 2 and 13: a late check-in becomes "your proposal", whose card says what
/// it was made from, with a thumbnail; the compare view offers the decision
/// in plain words, and an accept over bob's head asks first (Back changes
/// nothing).
pub async fn proposal_decided_in_the_compare(w: &World) {
    let path = "brand/banner.png";
    w.open_row(path).await;
    w.late_check_in(path, &poster(60), &poster(300), 2).await;

    w.click("tab-proposals").await;
    w.dismiss_notices().await;
    w.wait_text(".proposal-card .summary", "what the proposal is", |t| {
        t == "You made this from version 1; since then bob saved version 2."
    })
    .await;
    w.decoded(".proposal-card .thumb img", "the proposal's thumbnail")
        .await;
    w.click_css("[data-compare]", "Compare with the head").await;
    let said = w
        .text_when(
            ".compare-info .decision",
            "the decision in the compare view",
            |t| {
                t.contains(
                    "Accept: your version becomes version 3; bob's version 2 stays in the history.",
                )
            },
        )
        .await;
    assert!(
        said.contains("Reject: bob's version 2 stays the head"),
        "{said}"
    );
    assert!(
        !said.contains("me's") && !said.contains("alice's"),
        "{said}"
    );
    let label = w
        .eval("return document.querySelector('#compare-stage .pane[data-label]').dataset.label;")
        .await;
    assert_eq!(label, json!("Your proposal"));
    w.readme_screenshot("compare-decision").await;

    // Accept over bob's head asks; Back leaves everything as it was.
    w.click("compare-accept").await;
    w.wait_text("#confirm[open] #confirm-title", "the question", |t| {
        t == "Replace bob's version 2 as the head?"
    })
    .await;
    w.click("confirm-no").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        w.absent("#compare[hidden]").await,
        "the compare view stays open after Back"
    );
    let versions = w.versions(path);
    assert_eq!(
        versions.as_array().unwrap().len(),
        2,
        "Back accepted nothing"
    );

    w.click("compare-accept").await;
    w.wait_for("#confirm[open]", "the question again").await;
    w.click("confirm-yes").await;
    w.wait_for("#compare[hidden]", "the compare view closed")
        .await;
    w.wait_text("#view-proposals .empty", "no proposal left open", |t| {
        t == "No open proposals."
    })
    .await;
    w.click("tab-files").await;
    w.version_shown(path, 3).await;
    let versions = w.versions(path);
    assert_eq!(versions[0]["author"], json!("user:alice"), "{versions}");
}

//! Review in the window, on a team server with bob acting through its
//! HTTP API: a comment pinned by a click on the preview, its pin on the same
//! pixel of the picture at 100 % and 200 % and in the compare view zoomed
//! and panned; a reply, Resolve and the keys; bob's comment shown as it
//! comes; a proposal approved from the compare view, its card saying so.

use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use serde_json::json;

use crate::window::*;

/// A picture 1200 × 750, sky with a sun (radius 60) at (300, 225), a
/// quarter across and three tenths down: large enough that every view
/// scales it. With `ground`, a green strip along its foot (another version).
fn sky_with_sun(ground: bool) -> Vec<u8> {
    encode(&image::RgbaImage::from_fn(1200, 750, |x, y| {
        let (dx, dy) = (x as i64 - 300, y as i64 - 225);
        if dx * dx + dy * dy < 60 * 60 {
            image::Rgba([250, 200, 40, 255])
        } else if ground && y > 600 {
            image::Rgba([40, 120, 60, 255])
        } else {
            image::Rgba([90, 150, 230, 255])
        }
    }))
}

/// Where a pin's middle falls on its picture: in the picture's own pixels
/// (of the preview the page shows), the screen point, and how many of the
/// picture's pixels one screen pixel covers there.
#[derive(Debug, Clone, Copy)]
struct OnPicture {
    x: f64,
    y: f64,
    screen_x: f64,
    screen_y: f64,
    per_screen_px: f64,
    natural_width: f64,
}

/// The pin `pin` (css) as drawn over the picture `img` (css), read from
/// the page's layout (the transform of a zoomed and panned picture
/// included), or None while either is not drawn.
async fn pin_on_picture(w: &World, pin: &str, img: &str) -> Option<OnPicture> {
    let read = w
        .client
        .execute(
            "const [pinCss, imgCss] = arguments;
             const pin = document.querySelector(pinCss), img = document.querySelector(imgCss);
             if (!pin || !img || !img.naturalWidth || !pin.getClientRects().length) return null;
             const p = pin.getBoundingClientRect(), i = img.getBoundingClientRect();
             const cx = p.left + p.width / 2, cy = p.top + p.height / 2;
             return { x: (cx - i.left) / i.width * img.naturalWidth, y: (cy - i.top) / i.height * img.naturalHeight,
                      screen_x: cx, screen_y: cy, per: img.naturalWidth / i.width, natural: img.naturalWidth };",
            vec![json!(pin), json!(img)],
        )
        .await
        .unwrap();
    let n = |k: &str| read[k].as_f64();
    Some(OnPicture {
        x: n("x")?,
        y: n("y")?,
        screen_x: n("screen_x")?,
        screen_y: n("screen_y")?,
        per_screen_px: n("per")?,
        natural_width: n("natural")?,
    })
}

/// Waits (5 s at most) until the pin sits over the picture's pixel
/// `expected` (fractions of the picture), within one screen pixel; fails
/// saying where it is. Answers where it was read.
async fn pin_sits_on(
    w: &World,
    pin: &str,
    img: &str,
    expected: (f64, f64),
    when: &str,
) -> OnPicture {
    let started = Instant::now();
    loop {
        let seen = pin_on_picture(w, pin, img).await;
        if let Some(at) = seen {
            let scale = at.natural_width;
            let height = scale * 750.0 / 1200.0;
            let (ex, ey) = (expected.0 * scale, expected.1 * height);
            let slack = at.per_screen_px.max(1.0) * 1.5;
            if (at.x - ex).abs() <= slack && (at.y - ey).abs() <= slack {
                return at;
            }
        }
        if started.elapsed() > Duration::from_secs(5) {
            let after = w.post_mortem().await;
            panic!(
                "{when}: the pin is not over its pixel ({:.1}, {:.1} of the picture): {seen:?}{after}",
                expected.0, expected.1
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The file `artifact`'s threads as bob reads them from the server.
async fn threads_of(w: &World, artifact: &str) -> Vec<serde_json::Value> {
    let listed = w
        .http_as(
            "bob",
            "GET",
            &format!("/v1/artifacts/{artifact}/threads"),
            None,
        )
        .await;
    listed["threads"].as_array().cloned().unwrap()
}

/// The id of the file whose detail is open.
async fn shown_artifact(w: &World) -> String {
    let id = w
        .eval("return document.getElementById('detail').dataset.id;")
        .await;
    id.as_str().unwrap().to_owned()
}

/// Clicks the element `css` at the fractions `at` of its box, as a
/// pointer does (WebDriver offsets are from the element's middle).
async fn click_at(w: &World, css: &str, at: (f64, f64)) {
    let element = w.wait_for(css, css).await;
    let size = w
        .client
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect(); return [r.width, r.height];",
            vec![json!(css)],
        )
        .await
        .unwrap();
    let (width, height) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
    let click = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element,
            duration: None,
            x: ((at.0 - 0.5) * width).round(),
            y: ((at.1 - 0.5) * height).round(),
        })
        .then(LEFT_DOWN)
        .then(LEFT_UP);
    w.client.perform_actions(click).await.unwrap();
}

/// A comment pinned on the sun by a click on the detail's preview sits on
/// the sun at 100 % and at 200 % (the window zoomed, the preview drawn
/// larger elsewhere); answered, resolved and reopened from the keys; bob's
/// answer shows as it comes; on the next version it is "from version 1",
/// and in the compare view it stays on the sun zoomed in and panned.
async fn pinned_where_clicked() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Remote).await;
    let path = "art/sky.png";
    w.import(path, &sky_with_sun(false));
    w.open_row(path).await;
    let img = "#detail-preview img";
    w.decoded(img, "the preview").await;
    let artifact = shown_artifact(&w).await;

    // Click on the sun's middle: a composer; Enter sends.
    click_at(&w, img, (0.25, 0.3)).await;
    w.wait_for("#detail-composer-text", "the composer").await;
    w.type_into("#detail-composer-text", "The sun sits too low")
        .await;
    w.type_into("#detail-composer-text", ENTER).await;
    w.wait_text_is(
        "#detail-threads .thread[data-number=\"1\"] .comment-body",
        "the thread",
        "The sun sits too low",
    )
    .await;
    w.wait_until_absent("#detail-composer", "the composer once sent")
        .await;
    let threads = threads_of(&w, &artifact).await;
    assert_eq!(threads.len(), 1, "one thread: {threads:?}");
    let pin = &threads[0]["pin"];
    let at = (pin["x"].as_f64().unwrap(), pin["y"].as_f64().unwrap());
    let (dx, dy) = ((at.0 - 0.25) * 1200.0, (at.1 - 0.3) * 750.0);
    assert!(
        dx * dx + dy * dy < 30.0 * 30.0,
        "the pin is stored on the sun where clicked: {pin}"
    );
    assert_eq!(threads[0]["version"], json!(1), "on version 1");
    let (natural, _) = w.decoded(img, "the preview").await;
    assert_eq!(
        threads[0]["image"]["width"],
        json!(natural),
        "the size of the picture pinned on"
    );

    let pin_css = "#detail-preview .pin[data-number=\"1\"]";
    let at_100 = pin_sits_on(&w, pin_css, img, at, "at 100 %").await;
    w.screenshot("review-01-pinned").await;

    // The window at 200 %: the detail takes the list's place, the preview
    // is drawn larger; the pin is on the same pixel.
    for _ in 0..5 {
        w.with_control("=").await;
    }
    w.wait_text_is("#zoom", "the zoom shown", "200 %").await;
    let started = Instant::now();
    let at_200 = loop {
        let now = pin_sits_on(&w, pin_css, img, at, "at 200 %").await;
        if (now.per_screen_px - at_100.per_screen_px).abs() > 0.05 {
            break now;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "at 200 % the preview is drawn at the same scale: {now:?} and {at_100:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    pin_sits_on(&w, pin_css, img, at, "at 200 %, settled").await;
    w.screenshot("review-02-pinned-at-200").await;
    assert!(
        at_200.per_screen_px < at_100.per_screen_px,
        "drawn larger at 200 %: {at_200:?} against {at_100:?}"
    );
    w.with_control("0").await;
    w.wait_for("#zoom", "back to 100 %").await;
    pin_sits_on(&w, pin_css, img, at, "back at 100 %").await;

    // Reply (Enter sends), then Resolve.
    w.type_into("#detail-reply-1", "Raised by 40 px").await;
    w.type_into("#detail-reply-1", ENTER).await;
    w.wait_text_is(
        "#detail-threads .thread[data-number=\"1\"] .comment:nth-child(2) .comment-body",
        "the reply",
        "Raised by 40 px",
    )
    .await;
    w.click_in_panel("[data-resolve=\"1\"]", "Resolve").await;
    w.wait_text(
        "#detail-threads .thread.resolved[data-number=\"1\"] .resolved-by",
        "resolved",
        |t| t.contains("Resolved by you"),
    )
    .await;
    let threads = threads_of(&w, &artifact).await;
    assert_eq!(threads[0]["state"], json!("resolved"), "{threads:?}");
    assert_eq!(threads[0]["comments"].as_array().unwrap().len(), 2);

    // bob answers: shown without a click.
    let thread = threads[0]["id"].as_str().unwrap().to_owned();
    w.http_as(
        "bob",
        "POST",
        &format!("/v1/threads/{thread}/comments"),
        Some(json!({ "body": "Looks right now" })),
    )
    .await;
    w.wait_text_is(
        "#detail-threads .thread[data-number=\"1\"] .comment:nth-child(3) .comment-body",
        "bob's answer, as it comes",
        "Looks right now",
    )
    .await;

    // The keys: J goes to the thread, E reopens it, R goes to its reply box.
    w.focus("detail-back").await;
    w.eval("document.activeElement.blur();").await;
    w.press("j").await;
    w.wait_for(
        "#detail-threads .thread.current[data-number=\"1\"]",
        "J to the thread",
    )
    .await;
    w.press("e").await;
    w.wait_for(
        "#detail-threads .thread.open[data-number=\"1\"]",
        "E reopened it",
    )
    .await;
    assert_eq!(threads_of(&w, &artifact).await[0]["state"], json!("open"));
    w.press("r").await;
    let focused = w.eval("return document.activeElement.id;").await;
    assert_eq!(focused, json!("detail-reply-1"), "R goes to the reply");
    w.eval("document.activeElement.blur();").await;

    // bob saves version 2: the thread is there, "from version 1".
    w.bob_commits(path, &sky_with_sun(true));
    w.version_shown(path, 2).await;
    w.wait_text(
        "#detail-threads .thread[data-number=\"1\"] .from",
        "the thread from version 1",
        |t| t == "from version 1",
    )
    .await;

    // Compare versions 1 and 2: the pin on version 1's pane stays on the
    // sun as the pictures are zoomed in and panned.
    w.compare_versions(1, 2).await;
    let pane_img = "#compare-stage > .pane:nth-child(1) img.layer";
    let pane_pin = "#compare-stage > .pane:nth-child(1) .pin[data-number=\"1\"]";
    w.decoded(pane_img, "version 1 in the compare view").await;
    let fitted = pin_sits_on(&w, pane_pin, pane_img, at, "compare, fitted").await;
    for _ in 0..4 {
        w.press("+").await;
    }
    let zoomed = pin_sits_on(&w, pane_pin, pane_img, at, "compare, zoomed in").await;
    assert!(
        zoomed.per_screen_px < fitted.per_screen_px / 2.0,
        "zoomed in: {zoomed:?} against {fitted:?}"
    );
    let stage = w
        .wait_for("#compare-stage > .pane:nth-child(1)", "the pane")
        .await;
    let pan = MouseActions::new("mouse".into())
        .then(pointer_onto(stage))
        .then(LEFT_DOWN)
        .then(PointerAction::MoveBy {
            duration: Some(Duration::from_millis(300)),
            x: 60.0,
            y: 40.0,
        })
        .then(LEFT_UP);
    w.client.perform_actions(pan).await.unwrap();
    let panned = pin_sits_on(&w, pane_pin, pane_img, at, "compare, panned").await;
    assert!(
        (panned.screen_x - zoomed.screen_x - 60.0).abs() < 2.0
            && (panned.screen_y - zoomed.screen_y - 40.0).abs() < 2.0,
        "the pin moved with the pan: {panned:?} from {zoomed:?}"
    );
    assert!(
        w.absent("#compare-composer").await,
        "a drag is a pan, not a comment"
    );
    w.screenshot("review-03-compare-zoomed-panned").await;
    w.click("compare-close").await;
    w.client.clone().close().await.unwrap();
}

/// A proposal approved from the compare view: its card says "Approved by
/// you"; bob asks for changes from the CLI and the card says so as it
/// comes. A comment pinned on the proposal's picture there is the proposal's.
async fn approved_from_the_compare_view() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Remote).await;
    let path = "art/poster.png";
    w.import(path, &poster(80));
    w.open_row(path).await;
    w.late_check_in(path, &poster(160), &poster(300), 2).await;
    let artifact = shown_artifact(&w).await;
    w.click("tab-proposals").await;
    w.dismiss_notices().await;
    w.wait_text(
        ".proposal-card [data-review-state]",
        "the card's review state",
        |t| t == "Not reviewed yet",
    )
    .await;
    // Read in one step: the card is drawn again as the ledger's news comes.
    let proposal = w
        .eval("return document.querySelector('.proposal-card [data-review-state]').getAttribute('data-review-state');")
        .await;
    let proposal = proposal
        .as_str()
        .expect("the card names its proposal")
        .to_owned();

    w.click_css("[data-compare]", "Compare with the head").await;
    w.wait_text_is(
        "#compare-review-state",
        "the compare's review state",
        "Not reviewed yet",
    )
    .await;
    let beside = w
        .eval(
            "const s = document.getElementById('compare-stage').getBoundingClientRect();
             const r = document.getElementById('compare-review').getBoundingClientRect();
             return r.left >= s.right - 1 && s.width > 2 * r.width && r.height > 0;",
        )
        .await;
    assert_eq!(
        beside,
        json!(true),
        "the threads beside the pictures, which keep most of the width"
    );
    // A click on the proposal's picture pins a comment on the proposal.
    let pane_img = "#compare-stage > .pane:nth-child(1) img.layer";
    w.decoded(pane_img, "the proposal's picture").await;
    click_at(&w, pane_img, (0.5, 0.3)).await;
    w.wait_for("#compare-composer-text", "the composer").await;
    w.type_into("#compare-composer-text", "Nice, the sun in the middle")
        .await;
    w.click("compare-composer-send").await;
    w.wait_for(
        "#compare-stage > .pane:nth-child(1) .pin[data-number=\"1\"]",
        "the pin on the proposal",
    )
    .await;
    let threads = threads_of(&w, &artifact).await;
    assert_eq!(threads.len(), 1, "{threads:?}");
    assert_eq!(threads[0]["proposal_id"], json!(proposal), "{threads:?}");

    w.click("compare-approve").await;
    w.wait_text_is("#compare-review-state", "approved", "Approved by you")
        .await;
    w.screenshot("review-04-approved-in-compare").await;
    w.click("compare-close").await;
    let state = format!("[data-review-state=\"{proposal}\"]");
    w.wait_text_is(&state, "the card says so", "Approved by you")
        .await;

    // bob asks for changes: the card follows.
    w.http_as(
        "bob",
        "POST",
        &format!("/v1/artifacts/{artifact}/reviews"),
        Some(json!({ "proposal_id": proposal, "decision": "changes_requested", "message": "Too far right" })),
    )
    .await;
    w.wait_text_is(
        &state,
        "bob's decision, as it comes",
        "Changes requested by bob",
    )
    .await;
    w.screenshot("review-05-changes-requested").await;
    w.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_pins_stay_on_their_pixel() {
    within_limit(pinned_where_clicked()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_approve_a_proposal_in_compare() {
    within_limit(approved_from_the_compare_view()).await;
}

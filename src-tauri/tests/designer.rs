//! The app as a designer finds it on a first afternoon (issue 20): the real
//! app in a real window under WebDriver, on the bundled store, with bob and
//! an admin acting through the CLI. Each step guards one of the defects met
//! then: a filter that clears, a proposal decided in the compare view after
//! a question, the swipe's split under its line after a pan, where a file is
//! and a reveal that fails in words, a detail that starts at its top,
//! version picks and their compare where they are made, identical pixels of
//! different files, Settings that check an address, one activity line per
//! action, no Check out on a busy file, the default lease's length, keys and
//! zoom, and the check-in's progress on a large file.

mod window;

use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
use fantoccini::Locator;
use serde_json::json;
use window::*;

const ARROW_DOWN: &str = "\u{E015}";
const ENTER: &str = "\u{E007}";
const ESCAPE: &str = "\u{E00C}";
const CONTROL: &str = "\u{E009}";

/// A size as the window says it, for files of 1 KB to 1 MB: "3.1 KB", "42 KB".
fn kilobytes(n: usize) -> String {
    let kb = n as f64 / 1024.0;
    if kb < 10.0 {
        format!("{kb:.1} KB")
    } else {
        format!("{} KB", kb.round())
    }
}

/// A flat picture of one colour, 320 × 200.
fn swatch(rgb: [u8; 3]) -> Vec<u8> {
    encode(&image::RgbaImage::from_pixel(
        320,
        200,
        image::Rgba([rgb[0], rgb[1], rgb[2], 255]),
    ))
}

fn encode(image: &image::RgbaImage) -> Vec<u8> {
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// The same pixels as `poster(80)`, in a differently compressed file.
fn poster_recompressed() -> Vec<u8> {
    let pixels = image::load_from_memory(&poster(80)).unwrap().to_rgba8();
    let mut png = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new_with_quality(
        &mut png,
        image::codecs::png::CompressionType::Fast,
        image::codecs::png::FilterType::NoFilter,
    );
    image::ImageEncoder::write_image(
        encoder,
        pixels.as_raw(),
        pixels.width(),
        pixels.height(),
        image::ExtendedColorType::Rgba8,
    )
    .unwrap();
    png
}

impl World {
    /// Runs `script` in the window; answers what it returns.
    async fn eval(&self, script: &str) -> serde_json::Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// The texts of every element matching `css`, in page order.
    async fn texts(&self, css: &str) -> Vec<String> {
        let found = self
            .client
            .execute(
                "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent.trim());",
                vec![json!(css)],
            )
            .await
            .unwrap();
        serde_json::from_value(found).unwrap()
    }

    async fn absent(&self, css: &str) -> bool {
        self.client
            .find_all(Locator::Css(css))
            .await
            .unwrap()
            .is_empty()
    }

    /// Imports `bytes` as `path`, as bob.
    fn import(&self, path: &str, bytes: &[u8]) {
        let file = self._home.path().join("incoming").join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bytes).unwrap();
        self.cli("bob", &["import", path, file.to_str().unwrap()]);
    }

    async fn version_shown(&self, path: &str, version: u32) {
        self.wait_until(
            &format!("{} .version", World::row(path)),
            &format!("{path} at version {version}"),
            Duration::from_secs(10),
            |t| t == format!("v{version}"),
        )
        .await;
    }

    /// Presses Ctrl with `key` in the window.
    async fn with_control(&self, key: &str) {
        self.press(&format!("{CONTROL}{key}")).await;
    }
}

/// The tray's menu as the desktop's tray host reads it: over D-Bus, from
/// the app's StatusNotifierItem (com.canonical.dbusmenu). Answers the app's
/// bus name and each item's id and label, in menu order; None until the app
/// exports it.
fn tray_menu() -> Option<(String, Vec<(u32, String)>)> {
    let app = std::process::Command::new("pgrep")
        .args(["-o", "-f", env!("CARGO_BIN_EXE_leasedesk-app")])
        .output()
        .ok()?;
    let app = String::from_utf8_lossy(&app.stdout).trim().to_owned();
    let names = gdbus(
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.ListNames",
        &[],
    )?;
    for name in names.split('\'').filter(|n| n.starts_with(':')) {
        let pid = gdbus(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetConnectionUnixProcessID",
            &[name],
        );
        if pid.is_none_or(|pid| pid != format!("(uint32 {app},)")) {
            continue;
        }
        let Some(layout) = gdbus(
            name,
            TRAY_MENU,
            "com.canonical.dbusmenu.GetLayout",
            &["0", "-1", "[]"],
        ) else {
            continue;
        };
        // "(12, {'label': <'Check out a file…'>}, @av [])": each item's id, then its label.
        let mut items = Vec::new();
        for (at, _) in layout.match_indices("'label': <'") {
            let open = layout[..at].rfind('(').unwrap();
            let id = layout[open + 1..]
                .split(',')
                .next()
                .unwrap()
                .trim()
                .parse()
                .ok()?;
            let label = &layout[at + "'label': <'".len()..];
            items.push((id, label[..label.find("'>").unwrap()].to_owned()));
        }
        return Some((name.to_owned(), items));
    }
    None
}

const TRAY_MENU: &str = "/org/ayatana/NotificationItem/tray_icon_tray_app_main/Menu";

/// One D-Bus call on the session bus, given up after 3 s: its answer.
fn gdbus(dest: &str, path: &str, method: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("gdbus")
        .args(["call", "--session", "--timeout", "3", "--dest", dest])
        .args(["--object-path", path, "--method", method, "--"])
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_as_a_designer_finds_it() {
    tokio::time::timeout(Duration::from_secs(420), first_afternoon())
        .await
        .expect("the scenario within 7 minutes");
}

async fn first_afternoon() {
    let _one = ONE_APP.lock().await;
    let w = World::start(Backend::Bundled).await;
    for (path, bytes) in [
        ("brand/banner.png", poster(40)),
        ("brand/hero.png", poster(120)),
        ("brand/logo.png", poster(200)),
        ("art/swatch.png", swatch([220, 40, 40])),
        ("art/same.png", poster(80)),
    ] {
        w.import(path, &bytes);
    }
    w.wait_for(&World::row("brand/logo.png"), "the files").await;

    filter_clears_and_keys_work_in_it(&w).await;
    busy_file_offers_what_can_be_done(&w).await;
    where_the_file_is(&w).await;
    detail_starts_at_its_top(&w).await;
    compare_picks_and_identical_pixels(&w).await;
    swipe_line_is_the_split(&w).await;
    proposal_decided_in_the_compare(&w).await;
    activity_tells_what_people_did(&w).await;
    settings_check_the_address(&w).await;
    zoom_is_shown_and_fits(&w).await;
    drop_adds_a_file(&w).await;
    progress_of_a_large_check_in(&w).await;
    w.client.clone().close().await.unwrap();
}

/// 1 and 12: "br" shows 3 of 5; Escape empties the box and shows all 5
/// again, on every tab. Arrow keys and Enter work from the box, and the
/// focus shows where Enter put it.
async fn filter_clears_and_keys_work_in_it(w: &World) {
    let filter = w.wait_for("#filter", "the filter").await;
    filter.click().await.unwrap();
    filter.send_keys("br").await.unwrap();
    w.wait_until("#count-files", "3 of 5", Duration::from_secs(5), |t| {
        t == "3 of 5"
    })
    .await;
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
    w.wait_until("#count-files", "5", Duration::from_secs(5), |t| t == "5")
        .await;
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
async fn busy_file_offers_what_can_be_done(w: &World) {
    w.cli(
        "bob",
        &["checkout", "art/same.png", "--note", "colour pass"],
    );
    w.wait_until(
        &format!("{} .holder", World::row("art/same.png")),
        "bob holding it",
        Duration::from_secs(10),
        |t| t.contains("bob"),
    )
    .await;
    w.open_row("art/same.png").await;
    w.wait_until(".busy", "who holds it", Duration::from_secs(5), |t| {
        t.starts_with("bob has it until") && t.contains("colour pass")
    })
    .await;
    w.wait_for("#action-notify", "Notify me when it's free")
        .await;
    assert!(
        w.absent("#action-checkout").await,
        "a busy file offers Check out"
    );
    w.cli("bob", &["cancel", "art/same.png"]);

    w.open_row("brand/hero.png").await;
    let choices = w.texts("#checkout-hours option").await;
    assert_eq!(
        choices.first().map(String::as_str),
        Some("8 hours (default)"),
        "{choices:?}"
    );
}

/// 4: after a check-out the detail shows where the file is, with Copy
/// path; a reveal that no file manager answers is said in words, with the path.
async fn where_the_file_is(w: &World) {
    let row = World::row("brand/hero.png");
    w.check_out_here(&row).await;
    let local = w.workspace.join("brand/hero.png");
    w.wait_until(
        "#detail-local-path",
        "the local path",
        Duration::from_secs(5),
        |t| t == local.to_str().unwrap(),
    )
    .await;
    w.dismiss_notices().await;
    w.click("action-copy-path").await;
    w.wait_until(".notice", "the copy said", Duration::from_secs(5), |t| {
        t.starts_with("Path copied") && t.contains(local.to_str().unwrap())
    })
    .await;
    // Pasted elsewhere, as the designer would: the X clipboard holds the path.
    let pasted = std::process::Command::new("xclip")
        .args(["-o", "-selection", "clipboard"])
        .output()
        .expect("xclip: `cargo xtask test` installs it");
    assert_eq!(
        String::from_utf8_lossy(&pasted.stdout),
        local.to_str().unwrap(),
        "the clipboard holds the path"
    );
    w.readme_screenshot("detail-with-path").await;
    tray_lists_and_extends_the_check_out(w).await;

    w.dismiss_notices().await;
    w.click("action-reveal").await;
    let said = w
        .wait_until(
            ".notice.error",
            "the failed reveal",
            Duration::from_secs(10),
            |t| t.contains("The folder could not be shown"),
        )
        .await;
    let said = said.prop("textContent").await.unwrap().unwrap_or_default();
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
    let ends = || async {
        let overview = w.invoke("overview", json!({})).await;
        overview["checkouts"][0]["expires_at"]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    };
    let started = Instant::now();
    let (bus, items) = loop {
        if let Some((bus, items)) = tray_menu() {
            if items
                .iter()
                .any(|(_, label)| label.starts_with("hero.png — "))
            {
                break (bus, items);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the tray never listed hero.png: {:?}",
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

/// 5: another file's detail starts at its top, its name in sight.
async fn detail_starts_at_its_top(w: &World) {
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
    w.wait_until(
        "#detail-name",
        "banner's detail",
        Duration::from_secs(5),
        |t| t == "banner.png",
    )
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

/// 6 and 7: picks are 24 px targets, the compare action shows where the
/// second pick was made, and identical pixels of different files are not
/// called identical.
async fn compare_picks_and_identical_pixels(w: &World) {
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

/// 3: after the images are panned, the blue line is still the boundary
/// between the two versions (read from the screen), and each mode says
/// which version is where; the difference has a key.
async fn swipe_line_is_the_split(w: &World) {
    w.bob_commits("art/swatch.png", &swatch([40, 60, 220]));
    w.version_shown("art/swatch.png", 2).await;
    w.open_row("art/swatch.png").await;
    w.click_in_panel("#history [data-pick=\"1\"]", "pick version 1")
        .await;
    w.click_in_panel("#history [data-pick=\"2\"]", "pick version 2")
        .await;
    w.click_in_panel("#history-compare", "Compare version 1 and 2")
        .await;
    w.decoded("#compare-stage .stack img[data-side=a]", "version 1")
        .await;
    w.press("2").await;
    w.wait_for("#compare-stage[data-mode=swipe]", "swipe").await;
    let keys = w.texts("#compare-stack-key span").await;
    assert_eq!(keys, ["◀ Version 1", "Version 2 ▶"], "which side is which");

    // Drag the images 100 px right, as a designer pans.
    let stage = w.wait_for("#compare-stage", "the stage").await;
    let pan = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element: stage,
            duration: None,
            x: 0.0,
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::MoveBy {
            duration: Some(Duration::from_millis(300)),
            x: 100.0,
            y: 0.0,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
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
async fn proposal_decided_in_the_compare(w: &World) {
    let path = "brand/banner.png";
    w.open_row(path).await;
    w.late_check_in(path, &poster(60), &poster(300), 2).await;

    w.click("tab-proposals").await;
    w.dismiss_notices().await;
    w.wait_until(
        ".proposal-card .summary",
        "what the proposal is",
        Duration::from_secs(5),
        |t| t == "You made this from version 1; since then others saved version 2.",
    )
    .await;
    w.decoded(".proposal-card .thumb img", "the proposal's thumbnail")
        .await;
    w.click_css("[data-compare]", "Compare with the head").await;
    let said = w
        .wait_until(
            ".compare-info .decision",
            "the decision in the compare view",
            Duration::from_secs(5),
            |t| {
                t.contains(
                    "Accept: your version becomes version 3; bob's version 2 stays in the history.",
                )
            },
        )
        .await;
    let said = said.prop("textContent").await.unwrap().unwrap_or_default();
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
    w.wait_until(
        "#confirm[open] #confirm-title",
        "the question",
        Duration::from_secs(5),
        |t| t == "Replace bob's version 2 as the head?",
    )
    .await;
    w.click("confirm-no").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        w.absent("#compare[hidden]").await,
        "the compare view stays open after Back"
    );
    let versions = w.cli_json("bob", &["versions", path]);
    let versions = versions.get("versions").unwrap_or(&versions).clone();
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
    w.wait_until(
        "#view-proposals .empty",
        "no proposal left open",
        Duration::from_secs(10),
        |t| t == "No open proposals.",
    )
    .await;
    w.click("tab-files").await;
    w.version_shown(path, 3).await;
    let versions = w.cli_json("bob", &["versions", path]);
    let versions = versions.get("versions").unwrap_or(&versions).clone();
    assert_eq!(versions[0]["author"], json!("user:alice"), "{versions}");
}

/// 9 and 13: the activity has one line per thing a person did, in their
/// words, with "you" for the user; no internal step shows on its own.
async fn activity_tells_what_people_did(w: &World) {
    w.click("tab-activity").await;
    w.wait_until("#activity li", "the accept", Duration::from_secs(10), |t| {
        t.ends_with("You accepted your proposal for banner.png: it is version 3 now")
    })
    .await;
    let banner: Vec<String> = w
        .texts("#activity li")
        .await
        .into_iter()
        .filter(|line| line.contains("banner.png"))
        // Without the time before each line.
        .map(|line| line.split_once(' ').unwrap().1.to_owned())
        .collect();
    assert_eq!(
        banner,
        [
            "You accepted your proposal for banner.png: it is version 3 now",
            "You checked in banner.png late: it became a proposal",
            "bob checked in banner.png as version 2",
            "bob checked out banner.png",
            "admin broke your lease on banner.png: “bob needs it”",
            "You checked out banner.png",
            "bob added banner.png",
        ],
        "the activity of banner.png"
    );
    let all = w.texts("#activity li").await.join("\n");
    // One extend was clicked (the tray's); a check-in's renewal is not one.
    let extended: Vec<&str> = all.lines().filter(|l| l.contains("extended")).collect();
    assert!(
        extended.len() == 1 && extended[0].ends_with("You extended the lease on hero.png"),
        "{extended:?}"
    );
    for internal in ["opened a check-out", "closed a check-out", "alice"] {
        assert!(
            !all.contains(internal),
            "{internal:?} in the activity:\n{all}"
        );
    }
    assert!(
        !all.split_whitespace()
            .any(|word| word == "me" || word == "me's"),
        "\"me\" in the activity:\n{all}"
    );
    w.click("tab-files").await;
}

/// 8 and 13: Settings refuses an empty address before saving, in its own
/// words; the error goes when the choice changes; Test connection tries an
/// address and a token without saving them.
async fn settings_check_the_address(w: &World) {
    let settings_file = w._home.path().join("config/settings.json");
    let before = std::fs::read_to_string(&settings_file).unwrap();
    let field =
        |id: &'static str| async move { w.wait_for(&format!("#settings[open] #{id}"), id).await };
    w.click("open-settings").await;
    w.wait_until(
        "#settings[open] .field > span",
        "the choice of store, in the designer's words",
        Duration::from_secs(10),
        |t| t == "Where your team's files live",
    )
    .await;
    field("settings-backend")
        .await
        .select_by_value("remote")
        .await
        .unwrap();
    field("settings-url").await.clear().await.unwrap();
    w.click("settings-save").await;
    w.wait_until(
        "#settings-status",
        "the empty address refused",
        Duration::from_secs(5),
        |t| t == "Enter your team's server address, such as https://leasedesk.example:7443.",
    )
    .await;
    w.wait_for("#settings[open]", "the dialog still open").await;
    assert_eq!(
        std::fs::read_to_string(&settings_file).unwrap(),
        before,
        "nothing saved"
    );
    w.readme_screenshot("settings-error").await;

    // Back to "On this computer": the error about the server goes.
    field("settings-backend")
        .await
        .select_by_value("bundled")
        .await
        .unwrap();
    assert_eq!(w.texts("#settings-status").await, [""]);

    // Test connection: no server there, then a real one with alice's token.
    field("settings-backend")
        .await
        .select_by_value("remote")
        .await
        .unwrap();
    let nowhere = format!("http://127.0.0.1:{}", free_port());
    field("settings-url")
        .await
        .send_keys(&nowhere)
        .await
        .unwrap();
    field("settings-token")
        .await
        .send_keys("some-token")
        .await
        .unwrap();
    w.click("settings-test").await;
    let refused = w
        .wait_until(
            "#settings-tested",
            "the refusal",
            Duration::from_secs(15),
            |t| t.starts_with("No server answers at this address"),
        )
        .await;
    let refused = refused
        .prop("textContent")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(
        !refused.to_lowercase().contains("open settings"),
        "{refused}"
    );

    let server = start_server(&w._home.path().join("server"));
    field("settings-url").await.clear().await.unwrap();
    field("settings-url")
        .await
        .send_keys(&server.url)
        .await
        .unwrap();
    field("settings-token").await.clear().await.unwrap();
    field("settings-token")
        .await
        .send_keys(&server.tokens["alice"])
        .await
        .unwrap();
    w.click("settings-test").await;
    let address = server.url.trim_start_matches("http://").to_owned();
    w.wait_until(
        "#settings-tested",
        "connected",
        Duration::from_secs(15),
        |t| t == format!("Connected to {address} as alice."),
    )
    .await;
    w.click("settings-close").await;
    assert_eq!(
        std::fs::read_to_string(&settings_file).unwrap(),
        before,
        "a test saves nothing"
    );
    assert_eq!(
        leasedesk_app::keychain::read(&server.url).unwrap(),
        None,
        "a test keeps no token"
    );
}

/// 12: Ctrl + zooms and the percentage shows; at 200 % the list has room
/// for rows, and Settings' Save and Close are on screen; Ctrl 0 is 100 %.
async fn zoom_is_shown_and_fits(w: &World) {
    w.press(ESCAPE).await; // no file chosen: the list has the window
    w.with_control("=").await;
    w.wait_until("#zoom", "110 %", Duration::from_secs(5), |t| t == "110 %")
        .await;
    for _ in 0..4 {
        w.with_control("=").await;
    }
    w.wait_until("#zoom", "200 %", Duration::from_secs(5), |t| t == "200 %")
        .await;
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

/// A file dragged from another application (a GTK window offering it, as
/// a file manager does) and dropped on the window is added to the store.
async fn drop_adds_a_file(w: &World) {
    w.press(ESCAPE).await; // no file chosen: it goes to the top folder
    let file = w._home.path().join("desktop/sketch.png");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let bytes = poster(150);
    std::fs::write(&file, &bytes).unwrap();
    let window = w
        .eval("return [screenX, screenY, outerWidth, outerHeight];")
        .await;
    let window: Vec<i64> = serde_json::from_value(window).unwrap();
    // The source beside the app's window, where the screen has room.
    let source_x = if window[0] >= 150 {
        0
    } else {
        window[0] + window[2] + 5
    };
    let mut source = std::process::Command::new("/usr/bin/python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/window/drag_source.py"
        ))
        .arg(format!("{source_x},700"))
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 with GTK: `cargo xtask test` installs it");
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(source.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    let _source = Killed(source);
    assert_eq!(ready.trim(), "ready");
    let xdotool = |args: &[String]| {
        let status = std::process::Command::new("xdotool").args(args).status();
        assert!(
            status
                .expect("xdotool: `cargo xtask test` installs it")
                .success(),
            "xdotool {args:?}"
        );
    };
    let (target_x, target_y) = (window[0] + window[2] / 2, window[1] + window[3] / 2);
    xdotool(&[
        "mousemove".into(),
        (source_x + 60).to_string(),
        "730".into(),
        "mousedown".into(),
        "1".into(),
    ]);
    for step in 1..=10 {
        let x = source_x + 60 + (target_x - source_x - 60) * step / 10;
        let y = 730 + (target_y - 730) * step / 10;
        xdotool(&["mousemove".into(), x.to_string(), y.to_string()]);
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    xdotool(&["mouseup".into(), "1".into()]);
    w.wait_for(&World::row("sketch.png"), "the dropped file in the list")
        .await;
    let versions = w.cli_json("bob", &["versions", "sketch.png"]);
    let versions = versions.get("versions").unwrap_or(&versions).clone();
    assert_eq!(versions[0]["size"], json!(bytes.len()), "{versions}");
    w.wait_for("#drop[hidden]", "the drop mark gone").await;
}

/// The check-in of a large file shows its progress: "Uploading… N MB of
/// 160 MB", the bar growing, as the bytes go.
async fn progress_of_a_large_check_in(w: &World) {
    const SIZE: usize = 160 << 20;
    let path = "video/large.psd";
    let row = World::row(path);
    let bytes: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    w.import(path, &bytes);
    w.wait_for(&row, "the large file").await;
    w.open_row(path).await;
    w.check_out_here(&row).await;
    // The lease shows at once; the copy is here when the check-out says so.
    w.wait_until(
        ".notice",
        "the check-out done",
        Duration::from_secs(90),
        |t| t.starts_with("large.psd is yours until"),
    )
    .await;
    let local = w.workspace.join(path);
    assert!(writable(&local), "the checked-out copy, writable");
    let mut changed = bytes;
    changed[SIZE / 2] ^= 1;
    save_atomically(&local, &changed);
    w.wait_until(
        &format!("{row} .local"),
        "Modified",
        Duration::from_secs(90),
        |t| t == "Modified",
    )
    .await;
    w.eval(
        "window.__progress = [];
         new MutationObserver(() => {
           const label = document.querySelector('[data-upload] .label');
           const bar = document.querySelector('[data-upload] .bar');
           if (label) window.__progress.push([label.textContent, parseFloat(bar.style.width) || 0]);
         }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
         return true;",
    )
    .await;
    w.check_in_here(None).await;
    // 160 MB hashed and stored: on a busy 2-core machine, seconds.
    w.wait_until(
        &format!("{row} .version"),
        "the large file's version 2",
        Duration::from_secs(90),
        |t| t == "v2",
    )
    .await;
    let seen: Vec<(String, f64)> =
        serde_json::from_value(w.eval("return window.__progress;").await).unwrap();
    let partway: Vec<&(String, f64)> = seen
        .iter()
        .filter(|(label, width)| {
            label.starts_with("Uploading… ")
                && label.ends_with(" of 160 MB")
                && *width > 0.0
                && *width < 100.0
        })
        .collect();
    assert!(
        !partway.is_empty(),
        "no progress was shown part way: {seen:?}"
    );
    assert!(
        seen.windows(2).all(|pair| pair[0].1 <= pair[1].1),
        "the bar only grows: {seen:?}"
    );
}

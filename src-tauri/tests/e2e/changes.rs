//! Several files at once, on a real server: alice chooses three files with
//! the checkboxes and the keyboard, checks them out together, and checks
//! them in as one change with one description; the history says "part of a
//! change of 3 files" and links the others. Checking in one file offers her
//! other check-outs with the same note. A stale change waits as proposals
//! shown together, stepped through in Compare, and rejected together. The
//! Activity tab tells a change bob checks in from the CLI as one line.

use std::time::Duration;

use serde_json::{json, Value};

use crate::window::*;

const FILES: [&str; 3] = ["layout/a.indd", "layout/b.psd", "layout/c.png"];

/// Each file's head version and holder, as bob's CLI lists them.
fn heads(w: &World) -> Vec<(String, u64, Option<String>)> {
    let listed = w.cli_json("bob", &["ls"]);
    let mut all: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let holder = a["lease"]["participant"].as_str().map(str::to_owned);
            let version = a["head"]["version"].as_u64().unwrap();
            (a["path"].as_str().unwrap().to_owned(), version, holder)
        })
        .collect();
    all.sort();
    all
}

async fn choose(w: &World, path: &str) {
    w.click_css(&format!("{} [data-choose]", World::row(path)), path)
        .await;
}

async fn several_files() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Remote).await;
    for path in FILES {
        w.import(path, format!("{path} v1").as_bytes());
    }
    w.open_row(FILES[0]).await;
    // The checkboxes add to the file chosen by a click.
    choose(&w, FILES[1]).await;
    choose(&w, FILES[2]).await;
    w.wait_text_is("#several-title", "the choice", "3 files chosen")
        .await;
    let checkout = w
        .wait_text("#several-checkout", "Check out 3 files", |t| {
            t == "Check out 3 files"
        })
        .await;
    w.type_into("#several-note", "logo fix").await;
    w.screenshot("changes-01-chosen").await;
    checkout.click().await.unwrap();
    w.wait_text(".notice", "the check-out", |t| {
        t.contains("3 files are yours")
    })
    .await;
    let alices = Some("user:alice".to_owned());
    assert!(heads(&w).iter().all(|(_, v, h)| *v == 1 && *h == alices));

    // Two copies changed; all three checked in as one change, one description.
    for path in [FILES[0], FILES[2]] {
        save_atomically(&w.workspace.join(path), format!("{path} v2").as_bytes());
    }
    w.click_css("#several-checkin:not([disabled])", "Check in 3 files")
        .await;
    let message = w.wait_for("#checkin-message", "the description").await;
    assert_eq!(
        w.texts("#checkin-title").await,
        ["Check in 3 files as one change"]
    );
    message.clear().await.unwrap();
    message.send_keys("new logo everywhere").await.unwrap();
    w.click("checkin-confirm").await;
    w.wait_text(".notice", "the change", |t| {
        t.contains("3 files checked in as one change")
            && t.contains("a.indd version 2, b.psd unchanged, c.png version 2")
    })
    .await;
    w.screenshot("changes-02-checked-in").await;
    let expected: Vec<_> = FILES
        .iter()
        .zip([2, 1, 2])
        .map(|(p, v)| (p.to_string(), v, None))
        .collect();
    assert_eq!(heads(&w), expected);

    // The history links the change's other files.
    w.open_row(FILES[0]).await;
    let line = w
        .text_when(".change-line", "the change's line", |t| {
            t.starts_with("part of a change of 3 files")
        })
        .await;
    assert!(line.contains("b.psd") && line.contains("c.png"), "{line}");
    let listed = w.cli_json("bob", &["ls"]);
    let c_id = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"] == json!(FILES[2]))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    w.click_in_panel(
        &format!("[data-change-file='{c_id}']"),
        "c.png in the change",
    )
    .await;
    w.wait_text_is("#detail-name", "c.png's detail", "c.png")
        .await;

    // The keyboard: Ctrl+A in the list chooses every file; one check-in
    // offers the other check-outs that share its note, unticked.
    let list = w.wait_for("#file-list", "the list").await;
    list.send_keys(&format!("{CONTROL}a")).await.unwrap();
    w.wait_text_is("#several-title", "the choice", "3 files chosen")
        .await;
    w.type_into("#several-note", "round two").await;
    w.click_css("#several-checkout:not([disabled])", "Check out 3 files")
        .await;
    w.wait_text(".notice", "round two", |t| t.contains("3 files are yours"))
        .await;
    w.open_row(FILES[1]).await;
    save_atomically(&w.workspace.join(FILES[1]), b"b v2");
    save_atomically(&w.workspace.join(FILES[2]), b"c v3");
    w.click_css("#action-checkin:not([disabled])", "Check in")
        .await;
    let offered = w
        .text_when("#checkin-with-others", "the offer", |t| {
            t.contains("same note “round two”")
        })
        .await;
    assert!(
        offered.contains("a.indd") && offered.contains("c.png"),
        "{offered}"
    );
    assert_eq!(
        w.texts("#checkin-confirm").await,
        ["Check in"],
        "nothing ticked yet"
    );
    let c_checkout = w.cli_json("alice", &["who", FILES[2]])["checkout_id"]
        .as_str()
        .unwrap()
        .to_owned();
    w.click_css(&format!("[data-with='{c_checkout}']"), "c.png in the offer")
        .await;
    assert_eq!(w.texts("#checkin-confirm").await, ["Check in 2 files"]);
    w.click("checkin-confirm").await;
    w.wait_text(".notice", "b and c", |t| {
        t.contains("2 files checked in as one change")
    })
    .await;
    let now: Vec<(String, u64, Option<String>)> = heads(&w);
    assert_eq!(now[1], (FILES[1].to_string(), 2, None));
    assert_eq!(now[2], (FILES[2].to_string(), 3, None));
    assert_eq!(now[0].2, alices, "a.indd, not ticked, stays checked out");
    w.cli("alice", &["cancel", FILES[0]]);

    // A stale change: kept as proposals shown as one, stepped through in Compare.
    w.cli("alice", &["checkout", FILES[0], FILES[1], "--ttl", "1s"]);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    w.cli("bob", &["checkout", FILES[1]]);
    let bobs = w.workspace.join("bob-b.psd");
    std::fs::write(&bobs, b"b by bob").unwrap();
    w.cli("bob", &["checkin", FILES[1], bobs.to_str().unwrap()]);
    let (mine_a, mine_b) = (w.workspace.join("alice-a"), w.workspace.join("alice-b"));
    std::fs::write(&mine_a, b"a by alice").unwrap();
    std::fs::write(&mine_b, b"b by alice").unwrap();
    let change = w.cli_json(
        "alice",
        &[
            "checkin",
            &format!("{}={}", FILES[0], mine_a.display()),
            &format!("{}={}", FILES[1], mine_b.display()),
            "-m",
            "late",
        ],
    );
    assert_eq!(change["outcome"], json!("proposal"), "{change}");
    w.click("tab-proposals").await;
    let card = w
        .text_when(".change-card", "the change's card", |t| {
            t.contains("A change of 2 files") && t.contains("“late”")
        })
        .await;
    assert!(
        card.contains("Each choice acts on all 2 files of the change together"),
        "{card}"
    );
    w.click_until_shown(".change-card [data-compare]", "Compare", "#compare-step")
        .await;
    w.wait_text_is("#compare-step", "the step", "File 1 of 2 of the change")
        .await;
    w.click("compare-next").await;
    w.wait_text_is(
        "#compare-step",
        "the next step",
        "File 2 of 2 of the change",
    )
    .await;
    w.screenshot("changes-03-compare-steps").await;
    w.press("\u{e00c}").await; // Escape closes Compare
    w.click_css(".change-card [data-reject]", "Reject").await;
    let started = std::time::Instant::now();
    loop {
        let all = w.cli_json("alice", &["proposals", "--all"]);
        let rejected = all
            .as_array()
            .unwrap()
            .iter()
            .filter(|p: &&Value| p["state"] == json!("rejected"))
            .count();
        if rejected == 2 {
            break;
        }
        assert!(
            started.elapsed() < WAIT,
            "both proposals rejected together: {all}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    activity_names_the_files(&w).await;
}

/// bob checks in a change of the three files from the CLI: the Activity
/// tab tells it as one line with the first file's name and "and 2 more",
/// its steps (the lease renewals a check-in makes among them) folded in,
/// and every line names its file (issue 36).
async fn activity_names_the_files(w: &World) {
    w.cli("bob", &["checkout", FILES[0], FILES[1], FILES[2]]);
    let mut checkin = vec!["checkin".to_owned(), "-m".to_owned(), "new grid".to_owned()];
    for path in FILES {
        let copy = w.workspace.join(format!("bob-{}", path.replace('/', "-")));
        std::fs::write(&copy, format!("{path} by bob")).unwrap();
        checkin.push(format!("{path}={}", copy.display()));
    }
    let args: Vec<&str> = checkin.iter().map(String::as_str).collect();
    w.cli("bob", &args);
    w.dismiss_notices().await;
    w.click("tab-activity").await;
    let line = w
        .text_when("#activity li", "bob's change", |t| {
            t.ends_with("bob checked in a.indd and 2 more: “new grid”")
        })
        .await;
    let lines = w.activity_lines().await;
    assert_eq!(
        lines[..2],
        [
            "bob checked in a.indd and 2 more: “new grid”",
            "bob checked out a.indd and 2 more",
        ],
        "{line}: newest first\n{lines:#?}"
    );
    assert!(
        lines.contains(&"You checked in a.indd and 2 more: “new logo everywhere”".to_owned()),
        "{lines:#?}"
    );
    // No step shows on its own, and each line names its file.
    for line in &lines {
        let names_a_file = ["a.indd", "b.psd", "c.png"]
            .iter()
            .any(|f| line.contains(f));
        assert!(
            names_a_file && !line.contains("extended") && !line.contains("a file"),
            "{line}\n{lines:#?}"
        );
    }
    w.readme_screenshot("activity-team").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_files_checked_out_and_in_as_one_change() {
    within_limit(several_files()).await;
}

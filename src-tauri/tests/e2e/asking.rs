//! Asking the holder, on a team server: bob asks alice (through the CLI)
//! for a file she holds, and her window and desktop tell her with Check in,
//! Release and Reply; her reply reaches bob; a flood of asks tells her once
//! while the window goes on answering; Release is her Cancel, her changes
//! kept beside the file. Then alice asks bob from a busy file's detail, sees
//! his answer, and is told when the file is free. Nothing is released but
//! by alice's click.

use std::time::{Duration, Instant};

use fantoccini::Locator;
use leasedesk::Backend as _;
use serde_json::json;

use crate::window::*;

/// Waits until the tray's menu, as the desktop reads it, has the item
/// `label` among those saying what waits (with `None`: has none of them).
async fn tray_says(label: Option<&str>) {
    let started = Instant::now();
    loop {
        let labels: Vec<String> = tray_menu()
            .map(|(_, items)| items.into_iter().map(|(_, l)| l).collect())
            .unwrap_or_default();
        let waiting: Vec<&String> = labels.iter().filter(|l| l.contains("waiting")).collect();
        let shown = match label {
            Some(label) => waiting.iter().any(|l| *l == label),
            None => !labels.is_empty() && waiting.is_empty(),
        };
        if shown {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the tray's menu does not say {label:?}: {labels:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `who`'s requests, every one, as the CLI lists them.
fn requests_of(w: &World, who: &str) -> Vec<serde_json::Value> {
    let listed = w.cli_json(who, &["requests", "--all"]);
    listed.as_array().cloned().unwrap_or_default()
}

/// Waits up to 15 s until `who`'s request from `from` passes `test`.
async fn request_until(
    w: &World,
    who: &str,
    from: &str,
    test: impl Fn(&serde_json::Value) -> bool,
) {
    let started = Instant::now();
    loop {
        let requests = requests_of(w, who);
        let theirs = requests
            .iter()
            .find(|r| r["from"] == json!(format!("user:{from}")));
        if theirs.is_some_and(&test) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{from}'s request as {who} sees it: {requests:?}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Counts, from now on, the notices added to the window whose text has `words`.
async fn count_notices(w: &World, words: &str) {
    w.client
        .execute(
            "window.__noticed = 0;
             const words = arguments[0];
             new MutationObserver((changes) => {
               for (const change of changes) for (const node of change.addedNodes) {
                 if (node.textContent && node.textContent.includes(words)) window.__noticed += 1;
               }
             }).observe(document.getElementById('notices'), { childList: true, subtree: true });",
            vec![json!(words)],
        )
        .await
        .unwrap();
}

async fn noticed(w: &World) -> u64 {
    w.eval("return window.__noticed;").await.as_u64().unwrap()
}

async fn asking_the_holder() {
    let _one = ONE_APP.lock().await;
    let _dunst = start_notification_service();
    let w = World::start(&_one, Backend::Remote).await;
    assert!(dunstctl(&["close-all"]).0);
    let path = "brand/hero.psd";
    let row = World::row(path);
    let local = w.workspace.join(path);
    w.import(path, b"hero v1");
    w.open_row(path).await;
    w.check_out_here(&row).await;
    save_atomically(&local, b"alice's logo, half done");
    w.row_shows(path, ".local", "Modified", Duration::from_secs(5))
        .await;
    let held_until = w.lease_ends().await[path];
    w.dismiss_notices().await;

    // bob asks: alice's window tells her, with Check in, Release and Reply,
    // and so does her desktop; the tray counts one request waiting.
    w.cli("bob", &["ask", path, "-m", "need it for the logo fix"]);
    let notice = w
        .wait_text(".notice", "bob's request", |t| {
            t.contains("bob asks for brand/hero.psd") && t.contains("“need it for the logo fix”")
        })
        .await;
    for label in ["Check in", "Release", "Reply"] {
        notice
            .find(Locator::XPath(&format!(".//button[text()='{label}']")))
            .await
            .unwrap_or_else(|_| panic!("a {label} button on the request's notice"));
    }
    w.screenshot("asking-01-notice").await;
    desktop_shows(1, Duration::from_secs(10), "bob's request").await;
    tray_says(Some("1 request waiting…")).await;

    // Reply, from the notice: the answer reaches bob; it waits no more.
    notice
        .find(Locator::XPath(".//button[text()='Reply']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let field = w
        .wait_for("#reply[open] #reply-message", "the reply's field")
        .await;
    field.send_keys("20 more minutes").await.unwrap();
    w.click("reply-send").await;
    request_until(&w, "bob", "bob", |r| {
        r["state"] == json!("replied") && r["reply"] == json!("20 more minutes")
    })
    .await;
    tray_says(None).await;

    // A flood: 1,000 asks from one user in a minute make one notice and one
    // desktop notification, and the window answers clicks meanwhile.
    w.dismiss_notices().await;
    count_notices(&w, "admin asks for").await;
    let server = w.server.as_ref().unwrap();
    let admin = leasedesk::remote::Remote::new(&server.url, &server.tokens["admin"]).unwrap();
    let artifact = admin
        .artifact_by_path(&path.parse().unwrap())
        .await
        .unwrap()
        .id;
    let flood = tokio::spawn(async move {
        let started = Instant::now();
        for n in 0..1000 {
            let message = format!("please, try {n}");
            admin.ask(artifact, Some(&message)).await.unwrap();
        }
        started.elapsed()
    });
    let mut slowest = Duration::ZERO;
    let mut clicks = 0;
    while !flood.is_finished() {
        let started = Instant::now();
        w.click("tab-mine").await;
        w.wait_for("#view-mine:not([hidden])", "My check-outs")
            .await;
        w.click("tab-files").await;
        w.wait_for("#view-files:not([hidden])", "the files").await;
        slowest = slowest.max(started.elapsed());
        clicks += 1;
    }
    let took = flood.await.unwrap();
    assert!(took < Duration::from_secs(60), "the flood took {took:?}");
    assert!(clicks > 0, "the window was worked during the flood");
    assert!(
        slowest < Duration::from_secs(2),
        "two tab switches took {slowest:?} during the flood"
    );
    w.wait_text(".notice", "admin's request", |t| {
        t.contains("admin asks for brand/hero.psd")
    })
    .await;
    desktop_shows(2, Duration::from_secs(10), "admin's request").await;
    // Time for any more to come: none does.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(noticed(&w).await, 1, "one notice for 1,000 asks");
    assert_eq!(
        on_the_desktop(),
        2,
        "one desktop notification for 1,000 asks"
    );
    tray_says(Some("1 request waiting…")).await;
    assert_eq!(
        w.lease_ends().await[path],
        held_until,
        "asking changes nobody's lease"
    );

    // My check-outs lists both requests on the file, each with its answers.
    w.dismiss_notices().await;
    w.click("tab-mine").await;
    let request = |from: &str| format!("#view-mine .request[data-from=\"user:{from}\"]");
    w.wait_text(&request("admin"), "admin's request", |t| {
        t.contains("admin asked at") && t.contains("“please, try 999”")
    })
    .await;
    w.wait_text(&request("bob"), "bob's answered request", |t| {
        t.contains("You answered at") && t.contains("“20 more minutes”")
    })
    .await;
    w.screenshot("asking-02-my-check-outs").await;

    // Check in opens the check-in dialog; back out of it.
    let action = |from: &str, name: &str| format!("{} [data-request-action={name}]", request(from));
    w.click_css(&action("admin", "checkin"), "Check in on admin's request")
        .await;
    w.wait_for("#checkin[open] #checkin-message", "the check-in dialog")
        .await;
    w.click("checkin-back").await;
    assert!(w.lease_ends().await.contains_key(path), "still alice's");

    // Release: her Cancel, her changes kept beside the file; the requests end.
    w.click_css(&action("admin", "release"), "Release on admin's request")
        .await;
    w.wait_text(".notice", "the backup", |t| {
        t.contains("Your changes are kept as")
    })
    .await;
    let kept = backups(&local);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), b"alice's logo, half done");
    assert_eq!(std::fs::read(&local).unwrap(), b"hero v1");
    assert!(!writable(&local), "released: read-only again");
    request_until(&w, "bob", "bob", |r| r["state"] == json!("ended")).await;
    tray_says(None).await;
    w.screenshot("asking-03-released").await;

    // alice asks bob, from the detail of a file he holds.
    let cover = "brand/cover.psd";
    w.import(cover, b"cover v1");
    w.cli("bob", &["checkout", cover, "--note", "print crop"]);
    w.click("tab-files").await;
    w.busy_with_bob(cover, "print crop").await;
    w.click_css("#action-ask", "Ask bob to release…").await;
    w.wait_for("#ask-message", "the request's message").await;
    w.type_into("#ask-message", "can I have it for ten minutes?")
        .await;
    w.click("ask-send").await;
    w.wait_text("#asked-line", "alice's request in the detail", |t| {
        t.starts_with("You asked at") && t.contains("“can I have it for ten minutes?”")
    })
    .await;
    w.wait_text_is(
        "#action-notify",
        "told when it is free",
        "You will be told when it's free",
    )
    .await;
    let asked = requests_of(&w, "bob");
    let alices = asked
        .iter()
        .find(|r| r["from"] == json!("user:alice"))
        .unwrap_or_else(|| panic!("alice's request reaches bob: {asked:?}"));
    assert_eq!(alices["message"], json!("can I have it for ten minutes?"));

    // bob answers: a notice, and the answer in the detail.
    let id = alices["id"].as_str().unwrap().to_owned();
    w.cli("bob", &["reply", &id, "-m", "done in five"]);
    w.wait_text(".notice", "bob's answer", |t| {
        t.contains("bob answered about cover.psd") && t.contains("“done in five”")
    })
    .await;
    w.wait_text("#asked-reply", "bob's answer in the detail", |t| {
        t.starts_with("bob answered at") && t.ends_with("“done in five”")
    })
    .await;
    w.screenshot("asking-04-answered").await;

    // bob lets it go: alice is told the file is free.
    w.cli("bob", &["cancel", cover]);
    w.wait_text(".notice", "the file free", |t| {
        t.contains("cover.psd is free")
    })
    .await;
    // Its Check out button takes it (issue 36's 17), and the notice goes.
    w.click_css(".notice [data-check-out]", "Check out on the notice")
        .await;
    w.wait_text(".notice", "the check-out", |t| {
        t.starts_with("cover.psd is yours until")
    })
    .await;
    assert!(
        w.absent(".notice [data-check-out]").await,
        "the notice stays after its action"
    );
    let lease = w.cli_json("alice", &["who", cover]);
    assert_eq!(lease["participant"], json!("user:alice"), "{lease}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_the_holder_on_a_team_server() {
    within_limit(asking_the_holder()).await;
}

//! A plugin inside an editor acts through the app's local API (the Blender
//! add-on's calls, made here directly): its check-out shows at once in the
//! window and the tray, as after a click in the app, and others' work
//! reaches the plugin as `state` events. Measures how long the window takes
//! to show a plugin's check-out (docs/BENCHMARKS.md).

use std::time::{Instant, SystemTime};

use serde_json::{json, Value};

use crate::window::*;

/// The app's local API as a plugin finds it: `data/plugin-api.json`.
struct Plugin {
    base: String,
    secret: String,
    http: reqwest::Client,
}

impl Plugin {
    fn of(w: &World) -> Self {
        let found: Value = serde_json::from_slice(
            &std::fs::read(w._home.path().join("data/plugin-api.json")).unwrap(),
        )
        .unwrap();
        Self {
            base: format!("http://127.0.0.1:{}", found["port"]),
            secret: found["secret"].as_str().unwrap().to_owned(),
            http: reqwest::Client::new(),
        }
    }

    async fn post(&self, operation: &str, body: Value) -> Value {
        let answer = self
            .http
            .post(format!("{}{operation}", self.base))
            .bearer_auth(&self.secret)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "{operation}");
        answer.json().await.unwrap()
    }
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// Has the window note, by the wall clock, when `row`'s holder first reads
/// `You…` again (the test's and the window's clocks are the same machine's).
async fn note_when_shown_as_yours(w: &World, row: &str) {
    let script = format!(
        "window.__shownAt = null;
         const look = () => {{
           const holder = document.querySelector('{row} .holder');
           if (holder && holder.textContent.startsWith('You') && window.__shownAt === null)
             window.__shownAt = Date.now();
         }};
         window.__observer?.disconnect();
         window.__observer = new MutationObserver(look);
         window.__observer.observe(document.body, {{ subtree: true, childList: true, characterData: true }});"
    );
    w.eval(&script).await;
}

async fn a_check_out_from_the_editor() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Bundled).await;
    let hero = "scenes/hero.blend";
    let row = World::row(hero);
    w.import(hero, b"a scene");
    w.wait_for(&row, "the file").await;
    let plugin = Plugin::of(&w);
    let placed = plugin
        .post("/files/get", json!({ "repo_path": hero }))
        .await;
    let local = placed["path"].as_str().unwrap().to_owned();

    let (mut held, mut shown) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        note_when_shown_as_yours(&w, &row).await;
        let (sent, started) = (now_ms(), Instant::now());
        let mine = plugin
            .post(
                "/files/checkout",
                json!({ "path": local, "note": "from Blender" }),
            )
            .await;
        held.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(mine["state"], "yours");
        w.wait_text(&format!("{row} .holder"), "the plugin's check-out", |t| {
            t.starts_with("You")
        })
        .await;
        let at = w.eval("return window.__shownAt").await;
        shown.push(at.as_f64().expect("the window noted the time") - sent);
        plugin.post("/files/cancel", json!({ "path": local })).await;
        w.wait_text(&format!("{row} .holder"), "the plugin's cancel", |t| {
            !t.starts_with("You")
        })
        .await;
    }
    println!(
        "figure: a plugin's check-out: lease held {:.1} ms, window showing it {:.1} ms (median of 20)",
        median(&mut held),
        median(&mut shown)
    );

    // The tray too, at once.
    plugin
        .post(
            "/files/checkout",
            json!({ "path": local, "note": "from Blender" }),
        )
        .await;
    tray_until("the plugin's check-out", |labels| {
        labels.iter().any(|l| l.contains("hero.blend"))
    })
    .await;
    w.screenshot("editor-01-checked-out-from-blender").await;

    // "Open in Leasedesk": the app started again with the file's path shows
    // that file's detail in the running app's window.
    assert!(w.absent("#detail-name").await, "no detail open before");
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_leasedesk-app"))
        .arg(&local)
        .env("LEASEDESK_APP_HOME", w._home.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut again = Killed(again);
    w.wait_text_is("#detail-name", "the file's detail", "hero.blend")
        .await;
    assert!(
        again.0.wait().unwrap().success(),
        "the second start gave way"
    );
    w.screenshot("editor-02-opened-from-blender").await;
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_out_from_the_editor_shows_at_once_in_the_window_and_tray() {
    within_limit(a_check_out_from_the_editor()).await;
}

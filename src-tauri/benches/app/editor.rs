//! `--only editor` (issue 40): an editor plugin's check-out through the
//! release app's local API, as the Blender add-on makes it: the time to the
//! lease held (the API's answer) and to the window showing it (noted by the
//! window itself, on the wall clock the bench shares), median of 20.

use std::time::SystemTime;

use super::*;

/// Check-outs timed.
const CHECK_OUTS: usize = 20;

pub async fn editor(work: &Path) {
    let home = work.join("editor");
    seed(&home, 10, false).await;
    let (client, _driver, _) = launch(&home).await;
    let found: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("data/plugin-api.json")).unwrap()).unwrap();
    let base = format!("http://127.0.0.1:{}", found["port"]);
    let secret = found["secret"].as_str().unwrap().to_owned();
    let http = reqwest::Client::new();
    let post = |operation: &str, body: serde_json::Value| {
        http.post(format!("{base}{operation}"))
            .bearer_auth(&secret)
            .json(&body)
            .send()
    };
    let repo_path = "project/folder-00/asset-00000.psd";
    let placed: serde_json::Value = post("/files/get", json!({ "repo_path": repo_path }))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let local = placed["path"].as_str().unwrap().to_owned();
    let holder = format!(".row[data-path=\"{repo_path}\"] .holder");
    let (mut held, mut shown) = (Vec::new(), Vec::new());
    for _ in 0..CHECK_OUTS {
        client
            .execute(&note_when_yours(&holder), vec![])
            .await
            .unwrap();
        let (sent, started) = (now_ms(), Instant::now());
        let answer = post("/files/checkout", json!({ "path": local }))
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        held.push(started.elapsed().as_secs_f64() * 1000.0);
        let at = loop {
            let noted = client
                .execute("return window.__shownAt", vec![])
                .await
                .unwrap();
            if let Some(at) = noted.as_f64() {
                break at;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the window never showed it"
            );
            // Looked at seldom: each look is work for the page being timed.
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        shown.push(at - sent);
        post("/files/cancel", json!({ "path": local }))
            .await
            .unwrap();
        // The window shows the cancel before the next check-out is timed.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let (held, shown) = (median(held), median(shown));
    row(
        "an editor plugin's check-out (local API, release app): to the lease held, median of 20",
        format!("**{held:.1} ms**"),
        "under 150 ms",
        value(held, "ms"),
    );
    row(
        "the same: to the window showing it (noted by the window), median of 20",
        format!("**{shown:.1} ms**"),
        "under 150 ms",
        value(shown, "ms"),
    );
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// A script that has the window note, by the wall clock, when `holder`
/// first reads `You…`.
fn note_when_yours(holder: &str) -> String {
    format!(
        "window.__shownAt = null;
         window.__observer?.disconnect();
         window.__observer = new MutationObserver(() => {{
           const seen = document.querySelector('{holder}');
           if (seen && seen.textContent.startsWith('You') && window.__shownAt === null)
             window.__shownAt = Date.now();
         }});
         window.__observer.observe(document.body, {{ subtree: true, childList: true, characterData: true }});"
    )
}

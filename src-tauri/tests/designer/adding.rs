//! Files coming in: one dragged from another application (a GTK window, as
//! a file manager offers it) and dropped on the window, and the check-in of a
//! large file showing its progress as the bytes go. Never adds through the CLI
//! what the window is meant to add.

use std::time::Duration;

use serde_json::json;

use crate::window::*;

/// A file dragged from another application (a GTK window offering it, as
/// a file manager does) and dropped on the window is added to the store.
pub async fn drop_adds_a_file(w: &World) {
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
    let versions = w.versions("sketch.png");
    assert_eq!(versions[0]["size"], json!(bytes.len()), "{versions}");
    w.wait_for("#drop[hidden]", "the drop mark gone").await;
}

/// How long the large file's steps may take: 160 MB hashed and stored on a
/// busy 2-core machine takes seconds.
const LARGE: Duration = Duration::from_secs(90);

/// The check-in of a large file shows its progress: "Uploading… N MB of
/// 160 MB", the bar growing, as the bytes go.
pub async fn progress_of_a_large_check_in(w: &World) {
    const SIZE: usize = 160 << 20;
    let path = "video/large.psd";
    let row = World::row(path);
    let bytes: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    w.import(path, &bytes);
    w.wait_for(&row, "the large file").await;
    w.open_row(path).await;
    w.check_out_here(&row).await;
    // The lease shows at once; the copy is here when the check-out says so.
    w.wait_until(".notice", "the check-out done", LARGE, |t| {
        t.starts_with("large.psd is yours until")
    })
    .await;
    let local = w.workspace.join(path);
    assert!(writable(&local), "the checked-out copy, writable");
    let mut changed = bytes;
    changed[SIZE / 2] ^= 1;
    save_atomically(&local, &changed);
    w.row_shows(path, ".local", "Modified", LARGE).await;
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
    w.row_shows(path, ".version", "v2", LARGE).await;
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

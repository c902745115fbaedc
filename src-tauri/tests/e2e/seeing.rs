//! Seeing the work in the window: thumbnails, the check-in's description,
//! the history (a copy of an old version, a restore), versions and a proposal
//! compared, a layered document's approximate preview. Bundled store only.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::window::*;

/// Seeing the work: thumbnails in the list, a check-in that asks for a
/// description (stored, read back from the store), the history with a copy
/// of an old version opened and that version restored, two versions and a
/// proposal compared in the window.
async fn seeing_the_work() {
    let _one = ONE_APP.lock().await;
    let w = World::start(Backend::Bundled).await;
    let path = "art/poster.png";
    let row = World::row(path);
    let local = w.workspace.join(path);
    let (v1, v2) = (poster(80), poster(240));
    w.import(path, &v1);

    // The list shows the file's thumbnail, decoded.
    let (width, _) = w
        .decoded(&format!("{row} .thumb img"), "the row's thumbnail")
        .await;
    assert!(
        width > 0 && width <= 72,
        "a thumbnail, not the image: {width} px"
    );

    // Check out with a note, save a change: the detail previews the local
    // copy and says it is modified.
    w.open_row(path).await;
    w.type_into("#checkout-note", "moving the sun").await;
    w.check_out_here(&row).await;
    save_atomically(&local, &v2);
    w.row_shows(path, ".local", "Modified", Duration::from_secs(3))
        .await;
    w.wait_text(
        "#detail-preview figcaption",
        "the local copy's preview",
        |t| t.contains("modified"),
    )
    .await;
    w.decoded("#detail-preview img", "the local copy's preview")
        .await;

    // Check in: asked for a description, offered the note; stored as typed.
    w.check_in_with(Some("moving the sun"), Some("The sun moves to the right"))
        .await;
    w.version_shown(path, 2).await;
    assert_eq!(
        newest_message(&w, path),
        json!("The sun moves to the right")
    );

    // The history, newest first, with thumbnails and the description.
    let version = |n: u32| format!("#history [data-kind=version][data-version=\"{n}\"]");
    w.wait_text(&version(2), "version 2 in the history", |t| {
        t.contains("The sun moves to the right")
    })
    .await;
    w.wait_for(&version(1), "version 1 in the history").await;
    w.decoded(
        &format!("{} .thumb img", version(1)),
        "version 1's thumbnail",
    )
    .await;
    w.wait_text_is(
        "#history [data-kind=checkout] .ending",
        "how the check-out ended",
        "checked in as version 2",
    )
    .await;
    // The README's picture shows the history itself, not what covers it.
    w.dismiss_notices().await;
    w.client
        .execute(
            "document.querySelector('#history').scrollIntoView({ block: 'start' });",
            vec![],
        )
        .await
        .unwrap();
    w.readme_screenshot("history").await;

    // Open a copy of version 1: beside the file, read-only, its bytes.
    w.dismiss_notices().await;
    w.click_css("[data-open-copy=\"1\"]", "Open a copy of version 1")
        .await;
    let copy = local.with_file_name("poster (v1).png");
    until_holds(&copy, &v1, "the copy of version 1").await;
    assert!(!writable(&copy), "an opened copy is read-only");

    // Restore version 1 while holding the check-out, over a change of
    // yours: the copy has version 1's bytes, the change is kept beside it,
    // and the check-in offers "Restored version 1".
    w.check_out_here(&row).await;
    let change = poster(200);
    save_atomically(&local, &change);
    w.row_shows(path, ".local", "Modified", Duration::from_secs(3))
        .await;
    w.dismiss_notices().await;
    w.click_in_panel("[data-restore=\"1\"]", "Restore version 1")
        .await;
    until_holds(&local, &v1, "the restored copy").await;
    let kept: Vec<PathBuf> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read(p).ok().as_deref() == Some(&change[..]))
        .collect();
    assert_eq!(kept.len(), 1, "the change is kept beside: {kept:?}");
    w.check_in_here(Some("Restored version 1")).await;
    w.version_shown(path, 3).await;
    assert_eq!(newest_message(&w, path), json!("Restored version 1"));

    // Compare two versions: 1 and 3 are the same picture, 1 and 2 are not.
    w.wait_for(&version(3), "version 3 in the history").await;
    let pick = |n: u32| format!("#history [data-pick=\"{n}\"]");
    w.dismiss_notices().await;
    w.click_css(&pick(1), "pick version 1").await;
    w.click_css(&pick(3), "pick version 3").await;
    w.click("history-compare").await;
    assert_eq!(difference_said(&w).await, "identical: the same file");
    w.click("compare-close").await;
    w.click_css(&pick(3), "unpick version 3").await;
    w.click_css(&pick(2), "pick version 2").await;
    w.click("history-compare").await;
    pixels_differ(&w).await;
    w.click("compare-close").await;

    // A proposal against the head, compared in the window.
    w.late_check_in(path, &poster(160), &poster(300), 4).await;
    w.click("tab-proposals").await;
    w.dismiss_notices().await;
    w.click_css("[data-compare]", "Compare with the head").await;
    w.press("1").await;
    w.readme_screenshot("compare").await;
    pixels_differ(&w).await;
    w.readme_screenshot("compare-difference").await;
    w.click("compare-close").await;

    // A Photoshop document without its composite previews from its layers;
    // one has an adjustment, so the detail says the preview is approximate.
    w.click("tab-files").await;
    w.open_row(path).await;
    w.decoded("#detail-preview img", "the poster's preview")
        .await;
    let fidelity = "return document.getElementById('detail-preview').dataset.fidelity || '';";
    let started = Instant::now();
    let said = loop {
        let said = w.client.execute(fidelity, vec![]).await.unwrap();
        if said != json!("") || started.elapsed() > Duration::from_secs(10) {
            break said;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(said, json!("exact"), "the poster's preview is exact");
    let absent = "return document.getElementById('preview-approximate') === null;";
    assert_eq!(w.client.execute(absent, vec![]).await.unwrap(), json!(true));
    w.import("art/layers.psd", &layers_with_an_adjustment());
    w.open_row("art/layers.psd").await;
    w.wait_text_is(
        "#preview-approximate",
        "the approximate preview's note",
        "approximate preview",
    )
    .await;
    let (width, height) = w
        .decoded("#detail-preview img", "the layers' preview")
        .await;
    assert_eq!((width, height), (16, 16));
    w.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_shows_the_work() {
    within_limit(seeing_the_work()).await;
}

//! Seeing the work in the window: thumbnails, the check-in's description,
//! the history (a copy of an old version, a restore), versions and a proposal
//! compared, a layered document's approximate preview, a PDF drawn and an
//! EPS shown by its saved thumbnail. Bundled store only.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::window::*;

/// Seeing the work: thumbnails in the list, a check-in that asks for a
/// description (stored, read back from the store), the history with a copy
/// of an old version opened and that version restored, two versions and a
/// proposal compared in the window.
async fn seeing_the_work() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Bundled).await;
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

/// A one-page PDF of a square of `rgb` (PDF's 0 to 1) on a 300×200 page.
fn square_pdf(rgb: &str) -> Vec<u8> {
    let content = format!("{rgb} rg 20 20 160 160 re f");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R >>".to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend(b"xref\n0 5\n0000000000 65535 f \n");
    for offset in offsets {
        pdf.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend(
        format!("trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    pdf
}

/// What the detail says of its preview: `data-fidelity`, once it is known.
async fn fidelity_shown(w: &World) -> serde_json::Value {
    let fidelity = "return document.getElementById('detail-preview')?.dataset.fidelity || '';";
    let started = Instant::now();
    loop {
        let said = w.client.execute(fidelity, vec![]).await.unwrap();
        if said != json!("") || started.elapsed() > Duration::from_secs(10) {
            return said;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Designers' documents beyond images: a PDF drawn, its versions compared;
/// an Illustrator EPS shown by the thumbnail Illustrator saved, which the
/// detail says.
async fn seeing_design_documents() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Bundled).await;
    let eps = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/previews/illustrator-cs6-preview.eps"),
    )
    .unwrap();
    let path = "art/flyer.pdf";
    let row = World::row(path);
    w.import("art/logo.eps", &eps);
    w.import(path, &square_pdf("1 0 0"));
    // The list's thumbnails, while the list is wide enough to show them.
    w.decoded(
        &format!("{} .thumb img", World::row("art/logo.eps")),
        "the EPS's thumbnail",
    )
    .await;
    w.decoded(&format!("{row} .thumb img"), "the PDF's thumbnail")
        .await;
    w.open_row("art/logo.eps").await;
    w.wait_text_is(
        "#preview-approximate",
        "the saved preview's note",
        "preview saved by Adobe Illustrator(R) 16.0, 2448 px",
    )
    .await;
    assert_eq!(fidelity_shown(&w).await, json!("saved"));

    w.open_row(path).await;
    let (width, height) = w.decoded("#detail-preview img", "the PDF's preview").await;
    assert_eq!((width, height), (300, 200), "the page, a point a pixel");
    assert_eq!(fidelity_shown(&w).await, json!("exact"));

    // A second version, then the two compared.
    w.check_out_here(&row).await;
    save_atomically(&w.workspace.join(path), &square_pdf("0 0 1"));
    w.row_shows(path, ".local", "Modified", Duration::from_secs(3))
        .await;
    w.check_in_here(None).await;
    w.version_shown(path, 2).await;
    let pick = |n: u32| format!("#history [data-pick=\"{n}\"]");
    w.wait_for(&pick(1), "version 1 in the history").await;
    w.dismiss_notices().await;
    w.click_css(&pick(1), "pick version 1").await;
    w.click_css(&pick(2), "pick version 2").await;
    w.click("history-compare").await;
    pixels_of_differ(&w, (300, 200)).await;
    w.click("compare-close").await;
    w.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_previews_design_documents() {
    within_limit(seeing_design_documents()).await;
}

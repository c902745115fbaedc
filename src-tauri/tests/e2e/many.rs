//! A studio larger than the screen (issue 25): the folder tree with counts
//! and held counts, a folder's files read a screen at a time as the list
//! scrolls, the server's search as one types, and Held by others.

use std::time::Duration;

use crate::window::*;

/// Files bob imports into each of the two folders.
const EACH: usize = 300;

/// How many file rows are in the page now (the virtual list keeps a screen).
async fn rows_in_page(w: &World) -> u64 {
    w.eval("return document.querySelectorAll('#file-list .row').length;")
        .await
        .as_u64()
        .unwrap()
}

/// The tree's line for `folder`: its count and held count.
fn tree_line(folder: &str) -> String {
    format!("#folder-tree li[data-folder=\"{folder}\"] > .folder-name")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_studio_larger_than_the_screen() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Remote).await;
    std::thread::scope(|threads| {
        for part in 0..4 {
            let w = &w;
            threads.spawn(move || {
                for i in (part..2 * EACH).step_by(4) {
                    let folder = if i % 2 == 0 { "shots" } else { "props" };
                    w.import(&format!("{folder}/take-{i:04}.png"), &poster(i as u32));
                }
            });
        }
    });
    w.cli("bob", &["checkout", "shots/take-0002.png"]);
    w.cli("bob", &["checkout", "props/take-0003.png"]);

    // The tree counts what is under each folder, and what is held.
    w.wait_text(&tree_line(""), "every file counted", |t| t.contains("600"))
        .await;
    w.wait_text(&tree_line("shots/"), "shots counted, one held", |t| {
        t.contains("300") && t.contains("1 held")
    })
    .await;
    w.screenshot("many-01-tree").await;
    let shown = rows_in_page(&w).await;
    assert!(
        (5..=60).contains(&shown),
        "a screen of rows in the page, not 600: {shown}"
    );

    // Scrolled to the end: the last file is read and shown, and the page
    // still holds a screen.
    w.eval("const l = document.getElementById('file-list'); l.scrollTop = l.scrollHeight; return true;")
        .await;
    w.wait_for(&World::row("shots/take-0598.png"), "the last file")
        .await;
    let shown = rows_in_page(&w).await;
    assert!((5..=60).contains(&shown), "after scrolling: {shown}");

    // A folder chosen in the tree: its files only.
    w.click_css(&tree_line("props/"), "props in the tree").await;
    w.wait_text_is("#count-files", "props' count", "300 of 600")
        .await;
    w.wait_for(&World::row("props/take-0001.png"), "props' first file")
        .await;
    assert!(w.absent(&World::row("shots/take-0000.png")).await);

    // Search as one types: the server's answer, across every folder.
    let filter = w.wait_for("#filter", "the search box").await;
    filter.click().await.unwrap();
    filter.send_keys("take-000").await.unwrap();
    w.wait_text_is("#count-files", "10 matches", "10 of 600")
        .await;
    w.wait_for(&World::row("shots/take-0000.png"), "a match in shots")
        .await;
    w.wait_for(&World::row("props/take-0009.png"), "a match in props")
        .await;
    w.screenshot("many-02-search").await;
    filter.send_keys(ESCAPE).await.unwrap();
    w.wait_text_is("#count-files", "props again", "300 of 600")
        .await;

    // Held by others: bob's two, from the server.
    w.click("held-by-others").await;
    w.wait_text_is("#count-files", "two held by bob", "2 of 600")
        .await;
    w.wait_for(&World::row("props/take-0003.png"), "bob's file")
        .await;
    w.screenshot("many-03-held").await;

    // A check-in elsewhere: the row on screen and the tree follow it.
    w.cli("bob", &["cancel", "props/take-0003.png"]);
    w.wait_text_is("#count-files", "one left held", "1 of 600")
        .await;
    w.wait_until_absent(
        &World::row("props/take-0003.png"),
        "freed file gone from Held by others",
    )
    .await;
    w.wait_text(&tree_line(""), "one held at the top", |t| {
        t.contains("1 held")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
}

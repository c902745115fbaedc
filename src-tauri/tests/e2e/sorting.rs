//! Sortable columns (issue 36, item 17): a click on a column's head sorts
//! the folder's list by it (again: reversed), with `aria-sort` and an
//! arrow; Size and Modified are columns; a search keeps the server's order
//! and says so; the detail says the size of the copy here.

use std::time::Duration;

use crate::window::*;

/// The paths of the rows shown, in the list's order.
async fn paths_shown(w: &World) -> Vec<String> {
    let shown = w
        .eval(
            "return [...document.querySelectorAll('#file-list .row')]
               .sort((a, b) => a.dataset.index - b.dataset.index)
               .map((r) => r.dataset.path);",
        )
        .await;
    serde_json::from_value(shown).unwrap()
}

/// Waits until the list shows `expected`, in that order.
async fn wait_order(w: &World, what: &str, expected: &[&str]) {
    let started = std::time::Instant::now();
    loop {
        let shown = paths_shown(w).await;
        if shown == expected {
            return;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let after = w.post_mortem().await;
            panic!("{what}: the list shows {shown:?}, not {expected:?}{after}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks the head of `by` and waits for its `aria-sort` and arrow.
async fn sort_by(w: &World, by: &str, sort: &str, arrow: &str) {
    w.click(&format!("sort-{by}")).await;
    sorted_by(w, by, sort, arrow).await;
}

/// Waits for the head of `by` to show its `aria-sort` and arrow.
async fn sorted_by(w: &World, by: &str, sort: &str, arrow: &str) {
    let head = format!("[aria-sort=\"{sort}\"] > #sort-{by}");
    w.wait_text(&head, &format!("{by} {sort}"), |t| t.ends_with(arrow))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn columns_sort_the_list_and_the_detail_says_the_copys_size() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Bundled).await;
    // Saved in this order, a few milliseconds apart: by name a b c d, by
    // size d b c a, by save time c a d b.
    for (name, size) in [("c", 2000), ("a", 3000), ("d", 50), ("b", 100)] {
        w.import(&format!("sorting/{name}.psd"), &vec![b'x'; size]);
        std::thread::sleep(Duration::from_millis(30));
    }
    w.click_css(
        "#folder-tree li[data-folder=\"sorting/\"] > .folder-name",
        "sorting/ in the tree",
    )
    .await;
    let [a, b, c, d] = ["a", "b", "c", "d"].map(|n| format!("sorting/{n}.psd"));
    let by_name = [&a, &b, &c, &d].map(String::as_str);
    wait_order(&w, "by name at first", &by_name).await;
    sorted_by(&w, "path", "ascending", "▲").await;
    for (row, size) in [(&d, "50 B"), (&a, "2.9 KB")] {
        let cell = format!("{} .size-cell", World::row(row));
        w.wait_text_is(&cell, &format!("{row}'s size"), size).await;
    }

    sort_by(&w, "size", "ascending", "▲").await;
    wait_order(&w, "smallest first", &[&d, &b, &c, &a].map(String::as_str)).await;
    assert!(
        w.absent("[aria-sort=\"ascending\"] > #sort-path").await,
        "Name is no longer sorted by"
    );
    w.screenshot("sorting-01-by-size").await;
    sort_by(&w, "size", "descending", "▼").await;
    wait_order(&w, "largest first", &[&a, &c, &b, &d].map(String::as_str)).await;

    // At the window's default size (a list of 895 px) Modified shows too.
    let shown = w
        .eval("return document.getElementById('sort-modified').getClientRects().length > 0;")
        .await;
    assert_eq!(
        shown, true,
        "Modified gave way at the window's default size"
    );
    let cut = w
        .cut_off(".table-head > span, #file-list .row > span", "file-list")
        .await;
    assert!(cut.is_empty(), "at the default size these are cut: {cut:?}");
    sort_by(&w, "modified", "ascending", "▲").await;
    wait_order(&w, "oldest first", &[&c, &a, &d, &b].map(String::as_str)).await;
    sort_by(&w, "modified", "descending", "▼").await;
    wait_order(&w, "newest first", &[&b, &d, &a, &c].map(String::as_str)).await;
    w.screenshot("sorting-02-newest-first").await;

    // A search is the server's answer, by path: the heads say so.
    w.type_into("#filter", "sorting/").await;
    wait_order(&w, "a search by path", &by_name).await;
    let title = w
        .eval("return document.getElementById('sort-size').title;")
        .await;
    assert!(
        title.as_str().unwrap().contains("listed by path"),
        "{title}"
    );
    w.type_into("#filter", ESCAPE).await;
    wait_order(
        &w,
        "newest first again",
        &[&b, &d, &a, &c].map(String::as_str),
    )
    .await;

    // The copy here: its size beside "On this computer".
    w.open_row(&a).await;
    w.check_out_here(&World::row(&a)).await;
    w.wait_text("#detail-local", "the copy's size", |t| {
        t.contains("· 2.9 KB")
    })
    .await;
    w.screenshot("sorting-03-local-size").await;
}

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
//!
//! One module a family of those steps, run in order by `first_afternoon`
//! over the shared harness (`../window/`); a module never holds a helper
//! another could use (that goes to the harness).

#[path = "../window/mod.rs"]
mod window;

mod adding;
mod compare;
mod finding;
mod local_copy;
mod words;

use std::time::Duration;

use window::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_as_a_designer_finds_it() {
    tokio::time::timeout(Duration::from_secs(420), first_afternoon())
        .await
        .expect("the scenario within 7 minutes");
}

async fn first_afternoon() {
    let _one = ONE_APP.lock().await;
    let w = World::start(&_one, Backend::Bundled).await;
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

    finding::filter_clears_and_keys_work_in_it(&w).await;
    finding::busy_file_offers_what_can_be_done(&w).await;
    local_copy::where_the_file_is(&w).await;
    finding::detail_starts_at_its_top(&w).await;
    compare::compare_picks_and_identical_pixels(&w).await;
    compare::local_copy_recompressed_is_not_identical(&w).await;
    compare::swipe_line_is_the_split(&w).await;
    compare::proposal_decided_in_the_compare(&w).await;
    words::activity_tells_what_people_did(&w).await;
    words::settings_check_the_address(&w).await;
    finding::zoom_is_shown_and_fits(&w).await;
    adding::drop_adds_a_file(&w).await;
    adding::progress_of_a_large_check_in(&w).await;
    w.client.clone().close().await.unwrap();
}

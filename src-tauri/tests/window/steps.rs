//! What the people in a scenario do, each as one step: alice in the window
//! (check out, check in, a late check-in), bob and the admin through the CLI,
//! and what the store says afterwards. A step waits for its own outcome and
//! asserts only that; a scenario's claims stay in its own file.

use std::time::Duration;

use serde_json::json;

use super::files::save_atomically;
use super::session::World;

impl World {
    /// Joins from the first run's choice with an invite `link` to a plain
    /// HTTP server, as the device `device`; waits for the studio's list.
    pub async fn join_from_first_run(&self, link: &str, device: &str, a_file: &str) {
        self.wait_for("#join[open] #first-run-join", "the first run's choice")
            .await;
        self.click("first-run-join").await;
        self.type_into("#join-invite", link).await;
        self.click("join-continue").await;
        self.name_this_device(device).await;
        self.click("join-submit").await;
        self.wait_for(&World::row(a_file), "the studio's files")
            .await;
    }

    /// Continues the join dialog, which then names `url` as the server to
    /// join (`what`: whence the window knows it).
    pub async fn join_server_is(&self, url: &str, what: &str) {
        self.click("join-continue").await;
        self.wait_text_is("#join-server", what, &format!("Server: {url}"))
            .await;
    }

    /// Names this computer `device` in the join dialog, over what it offers.
    pub async fn name_this_device(&self, device: &str) {
        let name = self.wait_for("#join-device", "this computer's name").await;
        name.clear().await.unwrap();
        name.send_keys(device).await.unwrap();
    }

    /// Clicks the open file's Check out and waits for the row to show you.
    pub async fn check_out_here(&self, row: &str) {
        // Enabled: while an earlier action runs, its buttons are disabled and a click does nothing.
        self.click_css("#action-checkout:not([disabled])", "Check out")
            .await;
        self.wait_text(&format!("{row} .holder"), "you as the holder", |t| {
            t.starts_with("You")
        })
        .await;
    }

    /// Clicks the open file's Check in, which asks for a description: checks
    /// the draft it offers (when `expect_draft` is given), then confirms, with
    /// the draft as it is.
    pub async fn check_in_here(&self, expect_draft: Option<&str>) {
        self.check_in_with(expect_draft, None).await;
    }

    /// As `check_in_here`, typing `message` over the draft when given.
    pub async fn check_in_with(&self, expect_draft: Option<&str>, message: Option<&str>) {
        self.click_css("#action-checkin:not([disabled])", "Check in")
            .await;
        let field = self
            .wait_for(
                "#checkin[open] #checkin-message",
                "the description asked for",
            )
            .await;
        if let Some(draft) = expect_draft {
            // The draft arrives with the dialog: it is filled before it opens.
            assert_eq!(
                field.prop("value").await.unwrap().as_deref(),
                Some(draft),
                "{}: the check-in's draft description",
                self.name()
            );
        }
        if let Some(message) = message {
            field.clear().await.unwrap();
            field.send_keys(message).await.unwrap();
        }
        self.click("checkin-confirm").await;
    }

    /// bob checks `bytes` in as the next version of `path`.
    pub fn bob_commits(&self, path: &str, bytes: &[u8]) {
        self.cli("bob", &["checkout", path]);
        self.checks_in("bob", path, bytes);
    }

    /// `who`, holding `path`, checks `bytes` in from the CLI.
    pub fn checks_in(&self, who: &str, path: &str, bytes: &[u8]) {
        let file = self._home.path().join(format!("incoming/{who}-next"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bytes).unwrap();
        self.cli(who, &["checkin", path, file.to_str().unwrap()]);
    }

    /// Imports `bytes` as `path`, as bob.
    pub fn import(&self, path: &str, bytes: &[u8]) {
        self.import_as("bob", path, bytes);
    }

    /// Imports `bytes` as `path`, as `who`.
    pub fn import_as(&self, who: &str, path: &str, bytes: &[u8]) {
        let file = self._home.path().join("incoming").join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bytes).unwrap();
        self.cli(who, &["import", path, file.to_str().unwrap()]);
    }

    /// Adds a file `name` holding `bytes` under `folder`, through the command
    /// the Add button and a drop both use.
    pub async fn add_by_command(&self, folder: &str, name: &str, bytes: &[u8]) {
        let incoming = self._home.path().join("incoming").join(name);
        std::fs::create_dir_all(incoming.parent().unwrap()).unwrap();
        std::fs::write(&incoming, bytes).unwrap();
        let added = self
            .invoke(
                "add_files",
                json!({ "paths": [incoming], "folder": folder }),
            )
            .await;
        assert!(added[0]["artifact"]["id"].is_string(), "added: {added}");
    }

    /// A check-in that arrives late: the open file `path` checked out here
    /// and saved with `mine`, the lease broken by the admin, bob's `theirs`
    /// committed as `bobs_version`, then Check in pressed: a proposal.
    pub async fn late_check_in(&self, path: &str, mine: &[u8], theirs: &[u8], bobs_version: u32) {
        self.outrun(path, Some(mine), theirs, bobs_version).await;
        self.open_row(path).await;
        self.check_in_here(None).await;
        self.wait_text(".notice", "the proposal", |t| {
            t.contains("became a proposal")
        })
        .await;
    }

    /// The open file `path` checked out here (and saved with `mine`, if
    /// given), the lease broken by the admin, then bob's `theirs`
    /// committed as `bobs_version`: a check-in now can only be a proposal.
    pub async fn outrun(&self, path: &str, mine: Option<&[u8]>, theirs: &[u8], bobs_version: u32) {
        self.check_out_here(&World::row(path)).await;
        if let Some(mine) = mine {
            save_atomically(&self.workspace.join(path), mine);
        }
        self.cli("admin", &["break", path, "--reason", "bob needs it"]);
        self.row_shows(
            path,
            ".holder",
            "Your lease broken by admin",
            Duration::from_secs(10),
        )
        .await;
        self.bob_commits(path, theirs);
        self.version_shown(path, bobs_version).await;
    }

    /// Picks versions `a` and `b` in the open file's history and compares them.
    pub async fn compare_versions(&self, a: u32, b: u32) {
        for version in [a, b] {
            self.click_in_panel(
                &format!("#history [data-pick=\"{version}\"]"),
                &format!("pick version {version}"),
            )
            .await;
        }
        self.click_in_panel("#history-compare", &format!("Compare version {a} and {b}"))
            .await;
    }

    /// Opens `path`, which bob holds with `note`: the detail says who holds it
    /// and until when, and offers to tell when it is free, not a Check out
    /// that could only be refused.
    pub async fn busy_with_bob(&self, path: &str, note: &str) {
        self.open_row(path).await;
        self.wait_text(".busy", "who holds it", |t| {
            t.starts_with("bob has it until") && t.contains(note)
        })
        .await;
        self.wait_for("#action-notify", "Notify me when it's free")
            .await;
        assert!(
            self.absent("#action-checkout").await,
            "{}: a busy file offers Check out",
            self.name()
        );
    }

    /// When each of your open check-outs ends, from the app's own overview.
    pub async fn lease_ends(
        &self,
    ) -> std::collections::HashMap<String, chrono::DateTime<chrono::Utc>> {
        let overview = self.invoke("overview", json!({})).await;
        overview["checkouts"]
            .as_array()
            .unwrap_or_else(|| panic!("an overview: {overview}"))
            .iter()
            .map(|c| {
                let ends = c["expires_at"].as_str().unwrap().parse().unwrap();
                (c["path"].as_str().unwrap().to_owned(), ends)
            })
            .collect()
    }

    /// `path`'s versions as the store lists them to bob, newest first.
    pub fn versions(&self, path: &str) -> serde_json::Value {
        let answer = self.cli_json("bob", &["versions", path]);
        answer.get("versions").unwrap_or(&answer).clone()
    }
}

/// The newest version's description, as the store has it.
pub fn newest_message(w: &World, path: &str) -> serde_json::Value {
    w.versions(path)[0]["message"].clone()
}

/// Opens the compare view's difference (key 4) and answers what it says of
/// the two images (the posters of `poster`), once both are decoded and the
/// difference is worked out.
pub async fn difference_said(w: &World) -> String {
    difference_said_of(w, (320, 200)).await
}

/// As `difference_said`, of two images of `size`.
pub async fn difference_said_of(w: &World, size: (u64, u64)) -> String {
    let a = w
        .decoded(
            "#compare-stage > .pane:not(.stack):not(.diff) img[data-side=a]",
            "the first image",
        )
        .await;
    let b = w
        .decoded(
            "#compare-stage > .pane:not(.stack):not(.diff) img[data-side=b]",
            "the second image",
        )
        .await;
    assert_eq!((a, b), (size, size), "both images, at their size");
    w.press("4").await;
    w.wait_for("#compare-stage[data-mode=diff]", "the difference mode")
        .await;
    w.text_when("#compare-share", "the difference's share", |t| {
        t.starts_with("identical")
            || t.starts_with("The pixels are identical")
            || t.ends_with("of pixels differ")
    })
    .await
}

/// What the compare view's difference says of two different pictures: a
/// share of their pixels differs.
pub async fn pixels_differ(w: &World) {
    pixels_of_differ(w, (320, 200)).await;
}

/// As `pixels_differ`, of two images of `size`.
pub async fn pixels_of_differ(w: &World, size: (u64, u64)) {
    let said = difference_said_of(w, size).await;
    assert!(
        said != "identical" && said.ends_with("% of pixels differ"),
        "{said}"
    );
}

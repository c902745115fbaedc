//! The held list with Git (`docs/API.md`, "Git LFS"): a path locked
//! through `POST /lfs/F/locks` with no file there yet shows in `leasedesk
//! ls --held` and in `GET /v1/artifacts?held=true` (its `holds`) as a path
//! with no version, among the files held by path (a Git lock on a file is
//! the check-out it is, with its holder); on a server over SQLite and over
//! PostgreSQL, and on the store itself. A folder hidden from a caller hides
//! its holds too.

use serde_json::{json, Value};
use testkit::{Cli, ServeProcess};

use crate::harness::cli_in_temp_dir;

/// A studio with `art/hero.psd`, alice, bob and carol (who may not see
/// `art/secret/`), served.
struct Studio {
    server: ServeProcess,
    alice: String,
    bob: String,
    carol: String,
    _dir: tempfile::TempDir,
}

fn studio(cli: Cli) -> Studio {
    let alice = cli.add_user("alice");
    let bob = cli.add_user("bob");
    let carol = cli.add_user("carol");
    cli.ok(&["allow", "carol", "none", "art/secret/"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hero.psd");
    std::fs::write(&file, b"8BPS layers").unwrap();
    cli.ok(&["import", "art/hero.psd", file.to_str().unwrap()]);
    Studio {
        server: cli.serve().spawn(),
        alice,
        bob,
        carol,
        _dir: dir,
    }
}

/// `git lfs lock` as the holder of `token` does it: `path` under `art/`.
async fn lock(studio: &Studio, token: &str, path: &str) -> Value {
    let answer = reqwest::Client::new()
        .post(format!("{}/lfs/art/locks", studio.server.url))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/vnd.git-lfs+json")
        .body(json!({ "path": path }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201, "locking {path}");
    let body: Value = answer.json().await.unwrap();
    body["lock"].clone()
}

/// `GET /v1/artifacts?QUERY` with `token`.
async fn listed(studio: &Studio, token: &str, query: &str) -> Value {
    let answer = reqwest::Client::new()
        .get(format!("{}/v1/artifacts?{query}", studio.server.url))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "{query}");
    answer.json().await.unwrap()
}

/// The paths of a held list read by pages of one, files and holds
/// together, each page checked to hold at most one.
async fn held_by_pages_of_one(studio: &Studio, token: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut query = "held=true&limit=1".to_owned();
    loop {
        let page = listed(studio, token, &query).await;
        let entries: Vec<String> = ["artifacts", "holds"]
            .iter()
            .flat_map(|list| page[list].as_array().unwrap().clone())
            .map(|entry| entry["path"].as_str().unwrap().to_owned())
            .collect();
        assert!(entries.len() <= 1, "a page of one: {page}");
        paths.extend(entries);
        match page["next"].as_str() {
            Some(next) => query = format!("held=true&limit=1&after={}", encoded(next)),
            None => return paths,
        }
    }
}

fn encoded(text: &str) -> String {
    text.replace('/', "%2F")
}

/// The paths `ls` printed, one a line.
fn paths_of(printed: &str) -> Vec<&str> {
    printed
        .lines()
        .map(|l| l.split("  ").next().unwrap())
        .collect()
}

async fn a_path_locked_with_no_file_shows_as_held(cli: Cli) {
    let studio = studio(cli.clone());
    let new = lock(&studio, &studio.alice, "new.psd").await;
    let hero = lock(&studio, &studio.alice, "hero.psd").await;
    lock(&studio, &studio.alice, "secret/plan.psd").await;
    let bob = studio.server.client_cli(&studio.bob);

    // The CLI: the Git lock on the file with its holder, the holds as
    // paths with no version yet, by path.
    let held = bob.ok(&["ls", "--held"]);
    let lines: Vec<&str> = held.lines().collect();
    assert_eq!(lines.len(), 3, "{held}");
    let git = "user:alice (locked from Git, ";
    assert!(
        lines[0].starts_with(&format!("art/hero.psd  v1  {git}")),
        "{held}"
    );
    for (line, path) in lines[1..]
        .iter()
        .zip(["art/new.psd", "art/secret/plan.psd"])
    {
        assert!(
            line.starts_with(&format!("{path}  no version yet  {git}")) && line.ends_with("left)"),
            "{held}"
        );
    }
    let items = bob.ok(&["--json", "ls", "--held"]);
    let items: Value = serde_json::from_str(&items).unwrap();
    assert_eq!(items.as_array().unwrap().len(), 3, "{items}");
    assert_eq!(items[0]["head"]["version"], 1, "a file: {items}");
    assert_eq!(items[0]["lease"]["checkout_id"], hero["id"], "{items}");
    let hold = &items[1];
    assert_eq!(hold["path"], "art/new.psd", "{items}");
    assert!(hold.get("head").is_none(), "no version: {hold}");
    assert_eq!(hold["lease"]["checkout_id"], new["id"], "the lock's id");
    assert_eq!(hold["lease"]["participant"], "user:alice");
    assert_eq!(hold["lease"]["note"], "Locked from Git");
    assert_eq!(hold["lease"]["kind"], "checkout");
    // The store itself (a data folder, or the PostgreSQL database) says the same.
    assert_eq!(paths_of(&cli.ok(&["ls", "--held"])), paths_of(&held));
    // A hold is no file: a list of every file, or a search, has none.
    assert_eq!(paths_of(&bob.ok(&["ls"])), ["art/hero.psd"]);
    let found = bob.ok(&["ls", "--held", "--search", "NEW"]);
    assert_eq!(paths_of(&found), ["art/new.psd"], "held, containing NEW");
    let secret = bob.ok(&["ls", "art/secret", "--held"]);
    assert_eq!(paths_of(&secret), ["art/secret/plan.psd"], "under a folder");

    // Over HTTP: `holds` beside the artifacts, only with `held`.
    let all = listed(&studio, &studio.bob, "held=true").await;
    assert_eq!(all["artifacts"].as_array().unwrap().len(), 1, "{all}");
    assert_eq!(all["holds"].as_array().unwrap().len(), 2, "{all}");
    assert_eq!(all["holds"][0]["path"], "art/new.psd");
    assert_eq!(all["next"], Value::Null);
    let files = listed(&studio, &studio.bob, "limit=10").await;
    assert!(files.get("holds").is_none(), "not held: {files}");
    assert_eq!(
        held_by_pages_of_one(&studio, &studio.bob).await,
        ["art/hero.psd", "art/new.psd", "art/secret/plan.psd"],
        "a hold takes its place in the pages, by path"
    );

    // Carol may not see art/secret/: its hold is nowhere for her.
    let carol = studio.server.client_cli(&studio.carol);
    let hers = carol.ok(&["ls", "--held"]);
    assert_eq!(paths_of(&hers), ["art/hero.psd", "art/new.psd"], "{hers}");
    assert_eq!(
        held_by_pages_of_one(&studio, &studio.carol).await,
        ["art/hero.psd", "art/new.psd"]
    );
    let hidden = listed(&studio, &studio.carol, "held=true&prefix=art%2Fsecret%2F").await;
    assert_eq!(hidden["holds"], json!([]), "{hidden}");
    assert_eq!(hidden["artifacts"], json!([]), "{hidden}");
    let searched = carol.ok(&["ls", "--held", "--search", "plan"]);
    assert_eq!(searched.trim(), "no files found");
}

crate::on_sqlite_and_postgres!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    a_path_locked_with_no_file_shows_as_held(
        cli_in_temp_dir(),
        cli_in_temp_dir().database(&crate::harness::postgres_database()),
    )
);

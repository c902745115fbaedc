//! `ls` and `folders`: a list printed page by page, under a folder, by a
//! text or held, the same from a data folder and from a server.

use super::*;

/// 1,203 files in three folders (more than one of `ls`'s pages), imported
/// in-process, then `brand/hero.psd` checked out by bob.
async fn a_studio_of_1203_files(cli: &Cli) {
    use leasedesk::Backend;
    let alice = leasedesk::Bundled::open(&cli.data())
        .unwrap()
        .acting_as("user:alice".parse().unwrap());
    for i in 0..1200 {
        let p = format!("renders/{:02}/frame-{i:04}.exr", i % 12);
        let p: leasedesk::model::RepoPath = p.parse().unwrap();
        alice
            .import(
                &p,
                leasedesk::Upload::stream(std::io::Cursor::new(vec![i as u8])),
            )
            .await
            .unwrap();
    }
    drop(alice);
    for (path, name) in [
        ("brand/hero.psd", "hero.psd"),
        ("brand/Superhero.ai", "cape.ai"),
        ("readme.txt", "readme.txt"),
    ] {
        cli.ok(
            "user:alice",
            &["import", path, &cli.file(name, name.as_bytes())],
        );
    }
    cli.ok("user:bob", &["checkout", "brand/hero.psd"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_pages_through_every_file_and_narrows_by_folder_text_and_held() {
    let cli = Cli::new();
    a_studio_of_1203_files(&cli).await;

    let all = cli.ok("user:alice", &["ls"]);
    let paths: Vec<&str> = all.lines().map(|l| l.split("  ").next().unwrap()).collect();
    assert_eq!(paths.len(), 1203, "every file, across pages");
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "in path order");
    let listed = cli.json("user:alice", &["ls"]);
    assert_eq!(listed.as_array().unwrap().len(), 1203);

    let heroes = cli.ok("user:alice", &["ls", "brand", "--search", "HERO"]);
    assert!(
        heroes.starts_with("brand/Superhero.ai  v1  free\nbrand/hero.psd  v1  user:bob"),
        "{heroes}"
    );
    let held = cli.json("user:alice", &["ls", "--held"]);
    assert_eq!(held[0]["path"], "brand/hero.psd");
    assert_eq!(held.as_array().unwrap().len(), 1);
    let nothing = cli.ok("user:alice", &["ls", "renders/", "--search", "hero"]);
    assert_eq!(nothing.trim(), "no files found");

    let top = cli.ok("user:alice", &["folders"]);
    assert_eq!(
        top,
        "brand/  2 files, 1 held\nrenders/  1200 files\n1 file at the top\n"
    );
    let renders = cli.json("user:alice", &["folders", "renders"]);
    assert_eq!(renders["folders"].as_array().unwrap().len(), 12);
    assert_eq!(
        renders["folders"][0],
        serde_json::json!({"path": "renders/00/", "files": 100, "held": 0})
    );
    let bad = cli.run("user:alice", &["ls", "--search", "x"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("2 to 200 characters"));

    // The same from a server.
    let token = cli.add_participant(&["carol"]);
    let server = cli.serve();
    let remote = crate::harness::cli_on()
        .env("LEASEDESK_SERVER", &server.url)
        .env("LEASEDESK_TOKEN", &token);
    assert_eq!(remote.ok(&["ls"]), all);
    assert_eq!(remote.ok(&["folders"]), top);
    assert_eq!(remote.ok(&["ls", "brand", "--search", "HERO"]), heroes);
}

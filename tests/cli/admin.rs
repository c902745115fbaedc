//! The admin's commands: `rename` of a path stored before the path rules.

use super::Cli;

/// `leasedesk rename OLD NEW`: an admin fixes a path stored before the path
/// rules (found as stored); anyone else is refused and nothing changes.
#[test]
fn rename_fixes_a_legacy_path_for_admins_only() {
    let cli = Cli::new();
    let file = cli.file("seed.psd", b"bytes");
    cli.ok("user:root", &["user", "add", "boss", "--admin"]);
    cli.ok("user:root", &["user", "add", "ada"]);
    let seed = cli.json("user:ada", &["import", "seed.psd", &file]);
    {
        // As an older version stored it, its key as migration 0003 fills it.
        let db = rusqlite::Connection::open(cli.data().join("leasedesk.db")).unwrap();
        let id = uuid::Uuid::new_v4().to_string();
        db.execute(
            "INSERT INTO artifacts (id, path, path_key, head_version, created_at) VALUES (?1, 'CON', 'con', 1, 0)",
            [&id],
        )
        .unwrap();
        db.execute(
            "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at)
             VALUES (?1, 1, ?2, 5, 'user:ada', 0)",
            [id.as_str(), seed["head"]["digest"].as_str().unwrap()],
        )
        .unwrap();
    }

    let refused = cli.run("user:ada", &["rename", "CON", "console.psd"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("admin"));
    let unsafe_target = cli.run("user:boss", &["rename", "CON", "nul.txt"]);
    assert!(
        !unsafe_target.status.success(),
        "the new path meets the rules"
    );
    let taken = cli.run("user:boss", &["rename", "CON", "SEED.psd"]);
    assert!(
        !taken.status.success(),
        "the new path collides with seed.psd"
    );
    assert!(
        cli.ok("user:ada", &["ls"]).contains("CON"),
        "nothing changed yet"
    );

    let renamed = cli.json("user:boss", &["rename", "CON", "console.psd"]);
    assert_eq!(renamed["path"], "console.psd");
    let listed = cli.ok("user:ada", &["ls"]);
    assert!(
        listed.contains("console.psd") && !listed.contains("CON "),
        "{listed}"
    );
    let events = cli.ok("user:ada", &["--json", "events"]);
    assert!(events.contains("artifact.renamed"), "{events}");
}

//! A person's check-out through the CLI (users, import, checkout, who, ls,
//! extend, checkin, versions, cancel, events), and how refusals exit: the
//! code a script branches on and the reason on stderr.

use serde_json::Value;

use super::Cli;

#[test]
fn a_designer_session_through_the_cli() {
    let cli = Cli::new();
    let file = &cli.file("hero.psd", b"first");

    assert!(cli
        .ok("user:root", &["user", "add", "boss", "--admin"])
        .contains("user:boss (admin)"));
    assert!(cli
        .ok("user:root", &["user", "add", "resizer", "--agent"])
        .contains("agent:resizer"));
    let agent_admin = cli.run("user:root", &["user", "add", "robot", "--agent", "--admin"]);
    assert_eq!(
        agent_admin.status.code(),
        Some(1),
        "only users can be admins"
    );
    let again = cli.run("user:root", &["user", "add", "boss"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("user:boss already exists"));
    let users = cli.ok("user:root", &["user", "list"]);
    assert!(
        users.contains("user:boss  admin") && users.contains("agent:resizer"),
        "{users}"
    );

    assert!(cli
        .ok("user:alice", &["import", "brand/hero.psd", file])
        .contains("version 1"));
    let out = cli.ok(
        "user:alice",
        &[
            "checkout",
            "brand/hero.psd",
            "--note",
            "sky retouch",
            "--ttl",
            "2h",
        ],
    );
    assert!(
        out.contains("checked out brand/hero.psd at version 1"),
        "{out}"
    );

    // Bob is refused, told who has it, and the exit code says "busy".
    let refused = cli.run("user:bob", &["checkout", "brand/hero.psd"]);
    assert_eq!(refused.status.code(), Some(75));
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("user:alice") && why.contains("sky retouch"),
        "{why}"
    );

    let who = cli.ok("user:bob", &["who", "brand/hero.psd"]);
    assert!(
        who.contains("checked out by user:alice")
            && who.contains("left")
            && who.contains("note: sky retouch"),
        "{who}"
    );
    let ls = cli.ok("user:bob", &["ls"]);
    assert!(ls.contains("brand/hero.psd  v1  user:alice"), "{ls}");

    assert!(cli
        .ok("user:alice", &["extend", "brand/hero.psd", "--ttl", "3h"])
        .contains("extended"));
    std::fs::write(file, b"second").unwrap();
    let checked_in = cli.json("user:alice", &["checkin", "brand/hero.psd", file]);
    assert_eq!(checked_in["state"], "closed");
    assert_eq!(checked_in["result"]["outcome"], "committed");
    assert_eq!(checked_in["result"]["version"], 2);
    assert!(cli
        .ok("user:bob", &["who", "brand/hero.psd"])
        .contains("is free (version 2 by user:alice)"));

    let lease = cli.json("user:bob", &["who", "brand/hero.psd"]);
    assert_eq!(lease, Value::Null, "--json who on a free file prints null");
    let versions = cli.json("user:bob", &["versions", "brand/hero.psd"]);
    assert_eq!(versions.as_array().unwrap().len(), 2);

    cli.ok("user:bob", &["checkout", "brand/hero.psd"]);
    assert!(cli
        .ok("user:bob", &["cancel", "brand/hero.psd"])
        .contains("cancelled"));

    let events = cli.json("user:bob", &["events", "--after", "0"]);
    let kinds: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"lease.contended") && kinds.contains(&"checkout.closed"),
        "{kinds:?}"
    );
}

#[test]
fn refusals_exit_non_zero_with_a_reason() {
    let cli = Cli::new();
    let file = &cli.file("a.psd", b"x");

    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["checkout", "missing.psd"],
            1,
            "no artifact at missing.psd",
        ),
        (&["import", "../etc/passwd", file], 2, ".. segment"),
        (&["checkin", "a.psd", file], 1, "no open check-out of a.psd"),
        (&["checkout", "a.psd", "--ttl", "9w"], 2, "unknown unit"),
    ];
    cli.ok("user:alice", &["import", "a.psd", file]);
    for (args, code, reason) in cases {
        let out = cli.run("user:alice", args);
        assert_eq!(out.status.code(), Some(*code), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
    let again = cli.run("user:alice", &["import", "a.psd", file]);
    assert_eq!(again.status.code(), Some(1));
    let mut json_args = vec!["--json", "checkout", "a.psd", "--ttl", "30d"];
    let out = cli.run("user:alice", &json_args);
    let body: Value = serde_json::from_slice(&out.stderr).expect("a JSON error body on stderr");
    assert_eq!(body["error"], "invalid");
    json_args.truncate(3);
    cli.ok("user:alice", &json_args);
    let busy = cli.run("user:bob", &json_args);
    let body: Value = serde_json::from_slice(&busy.stderr).unwrap();
    assert_eq!(
        (
            body["error"].as_str(),
            body["lease"]["participant"].as_str()
        ),
        (Some("artifact_busy"), Some("user:alice"))
    );
}

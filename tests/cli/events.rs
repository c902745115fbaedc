//! `events --follow` on a data folder: the follower records what happens
//! while nobody else writes.

use std::time::Duration;

use serde_json::Value;
use testkit::tool::{lines_of, lines_until};

use super::Cli;

/// `events --follow` on a data folder keeps the store open, so it records
/// lapses as they come: a 1 s lease lapses with no other write, and its
/// `lease.expired` is printed.
#[test]
fn following_events_on_a_data_folder_records_a_lapse_nobody_touches() {
    let cli = Cli::new();
    cli.import("hero.psd", b"first");
    let mut follow = cli
        .command("user:bob")
        .args(["--json", "events", "--follow"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let seen = lines_of(follow.stdout.take().unwrap());
    cli.ok("user:alice", &["checkout", "hero.psd", "--ttl", "1s"]);
    let kind = |line: &str| {
        let event: Value = serde_json::from_str(line).unwrap();
        event["type"].as_str().unwrap().to_owned()
    };
    let kinds: Vec<String> = lines_until(&seen, Duration::from_secs(8), |line| {
        kind(line) == "lease.expired"
    })
    .iter()
    .map(|line| kind(line))
    .collect();
    follow.kill().unwrap();
    follow.wait().unwrap();
    assert!(
        kinds.iter().any(|k| k == "lease.expired"),
        "no lapse recorded while following: {kinds:?}"
    );
}

/// bob checks out three files and checks them in as one change.
fn change_of_three(cli: &Cli, run: &dyn Fn(&[&str]) -> String) {
    for name in ["a", "b", "c"] {
        let file = cli.file(&format!("{name}.png"), b"v1");
        run(&["import", &format!("art/{name}.png"), &file]);
    }
    run(&["checkout", "art/a.png", "art/b.png", "art/c.png"]);
    let files: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|name| format!("art/{name}.png={}", cli.file(&format!("{name}.png"), b"v2")))
        .collect();
    let mut checkin = vec!["checkin"];
    checkin.extend(files.iter().map(String::as_str));
    run(&checkin);
}

/// `events` names each event's file by its path, a change by its first
/// file and how many more (issue 36); `--json` is the ledger as it was.
#[test]
fn each_event_line_names_its_file() {
    let cli = Cli::new();
    change_of_three(&cli, &|args| cli.ok("user:bob", args));
    let lines = cli.ok("user:bob", &["events"]);
    let of = |kind: &str| -> Vec<&str> {
        lines
            .lines()
            .filter(|l| l.split_whitespace().nth(3) == Some(kind))
            .collect()
    };
    for (line, path) in
        of("version.committed")
            .iter()
            .skip(3)
            .zip(["art/a.png", "art/b.png", "art/c.png"])
    {
        assert!(
            line.ends_with(&format!("user:bob  {path}")),
            "{line}\n{lines}"
        );
    }
    let change = of("change.committed");
    assert!(
        change.len() == 1 && change[0].ends_with("user:bob  art/a.png and 2 more"),
        "{lines}"
    );
    for line in of("lease.renewed").into_iter().chain(of("checkout.closed")) {
        assert!(line.contains("  art/"), "a file's line names it: {line}");
    }
    let json = cli.json("user:bob", &["events"]);
    for event in json["events"].as_array().unwrap() {
        let mut keys: Vec<&str> = event
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "artifact_id",
                "at",
                "data",
                "holder",
                "id",
                "participant",
                "seq",
                "type"
            ],
            "--json is unchanged"
        );
    }
}

/// Over a real server, `events --follow` names the files too, looked up
/// as the events come.
#[test]
fn following_a_server_names_each_file() {
    let cli = Cli::new();
    let (_server, remote) = cli.serve_to(&["bob"]);
    let mut follow = remote
        .command()
        .args(["events", "--follow"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let seen = lines_of(follow.stdout.take().unwrap());
    change_of_three(&cli, &|args| remote.ok(args));
    let printed = lines_until(&seen, Duration::from_secs(20), |line| {
        line.contains("change.committed")
    });
    follow.kill().unwrap();
    follow.wait().unwrap();
    let all = printed.join("\n");
    let change = printed.iter().find(|l| l.contains("change.committed"));
    assert!(
        change.is_some_and(|l| l.ends_with("user:bob  art/a.png and 2 more")),
        "{all}"
    );
    let imported: Vec<&String> = printed
        .iter()
        .filter(|l| l.contains("version.committed"))
        .collect();
    assert!(
        imported.len() == 6 && imported[0].ends_with("user:bob  art/a.png"),
        "{all}"
    );
}

//! Several files through the CLI: `checkout A B C` all or none, `checkin
//! A=FILE B=FILE -m TEXT` as one change, `change ID`; a client killed while
//! it stages, and a server killed inside the change's transaction, leave
//! nothing half done.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::WithEnvironment;

use super::Cli;

const FILES: [&str; 5] = ["a.indd", "b.psd", "c.png", "d.png", "e.png"];

#[test]
fn several_paths_are_checked_out_and_checked_in_as_one_change() {
    let cli = Cli::new();
    for p in &FILES[..3] {
        cli.import(p, p.as_bytes());
    }
    let taken = cli.ok(
        "user:alice",
        &["checkout", "a.indd", "b.psd", "c.png", "--note", "logo"],
    );
    assert!(taken.starts_with("checked out 3 files until"), "{taken}");
    let busy = cli.run("user:bob", &["checkout", "c.png", "b.psd"]);
    assert_eq!(busy.status.code(), Some(75), "busy");
    let said = String::from_utf8_lossy(&busy.stderr);
    assert!(
        said.contains("nothing was checked out")
            && said.contains("leasedesk ask c.png")
            && said.contains("leasedesk ask b.psd"),
        "{said}"
    );

    let a = cli.file("a-new", b"a v2");
    let b = cli.file("b-same", b"b.psd");
    let c = cli.file("c-new", b"c v2");
    let (a, b, c) = (
        format!("a.indd={a}"),
        format!("b.psd={b}"),
        format!("c.png={c}"),
    );
    let checkin = ["checkin", &a, &b, &c, "-m", "new logo"];
    let change = cli.json("user:alice", &checkin);
    assert_eq!(change["outcome"], "committed", "{change}");
    assert_eq!(change["message"], "new logo");
    let outcomes: Vec<&Value> = change["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["result"]["outcome"])
        .collect();
    assert_eq!(outcomes, ["committed", "unchanged", "committed"]);
    let id = change["id"].as_str().unwrap();
    let shown = cli.ok("user:bob", &["change", id]);
    assert!(shown.contains("checked in a change of 3 files"), "{shown}");
    assert!(
        shown.contains("a.indd: version 2") && shown.contains("b.psd: unchanged"),
        "{shown}"
    );
    // A retry after a lost answer gets the same change.
    let again = cli.json("user:alice", &checkin);
    assert_eq!(again, change);

    // One PATH FILE works as before.
    cli.ok("user:alice", &["checkout", "a.indd"]);
    let single = cli.ok(
        "user:alice",
        &["checkin", "a.indd", &cli.file("a3", b"a v3")],
    );
    assert!(
        single.contains("checked in a.indd as version 3"),
        "{single}"
    );
    let bad = cli.run("user:alice", &["checkin", "a.indd=", "b.psd"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not PATH=FILE"));
}

/// Each file's head version and holder, as `ls --json` shows them.
fn heads_and_holders(client: &testkit::Cli) -> Vec<(String, u64, Option<String>)> {
    let listed: Value = serde_json::from_str(&client.ok(&["--json", "ls"])).unwrap();
    let mut all: Vec<_> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|a| {
            let holder = a["lease"]["participant"].as_str().map(str::to_owned);
            (
                a["path"].as_str().unwrap().to_owned(),
                a["head"]["version"].as_u64().unwrap(),
                holder,
            )
        })
        .collect();
    all.sort();
    all
}

fn five_checked_out(cli: &Cli) -> Vec<String> {
    for p in FILES {
        cli.import(p, p.as_bytes());
    }
    let mut checkout = vec!["checkout"];
    checkout.extend(FILES);
    cli.ok("user:alice", &checkout);
    // The third file is large, so killing its stage finds it under way.
    let mut args = Vec::new();
    for (n, p) in FILES.iter().enumerate() {
        let bytes = match n {
            2 => vec![7u8; 96 << 20],
            _ => format!("{p} v2").into_bytes(),
        };
        args.push(format!("{p}={}", cli.file(&format!("new-{p}"), &bytes)));
    }
    args
}

fn assert_nothing_committed_and_still_held(client: &testkit::Cli) {
    let expected: Vec<_> = FILES
        .iter()
        .map(|p| (p.to_string(), 1, Some("user:alice".to_owned())))
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(
        heads_and_holders(client),
        expected,
        "no version, and alice still holds every file"
    );
    let proposals: Value =
        serde_json::from_str(&client.ok(&["--json", "proposals", "--all"])).unwrap();
    assert_eq!(proposals, serde_json::json!([]), "no proposal");
}

#[test]
fn a_client_killed_during_the_third_of_five_stages_leaves_no_version() {
    let cli = Cli::new();
    let files = five_checked_out(&cli);
    let token = cli.add_participant(&["alice"]);
    let server = cli.serve();
    let alice = server.client_cli(&token);
    let mut checkin = alice.command();
    checkin
        .args(["checkin"])
        .args(&files)
        .args(["-m", "five at once"]);
    let mut child = checkin
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = Vec::new();
    for line in stderr.lines().map_while(Result::ok) {
        let second = line.contains("staged 2 of 5");
        said.push(line);
        if second {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL, while the third file goes up
    child.wait().unwrap();
    assert!(said.iter().any(|l| l.contains("staged 2 of 5")), "{said:?}");
    assert_nothing_committed_and_still_held(&alice);

    // Running it again finishes the change.
    let done: Value = serde_json::from_str(
        &alice.ok(&[
            &["--json", "checkin"][..],
            &files.iter().map(String::as_str).collect::<Vec<_>>(),
            &["-m", "five at once"],
        ]
        .concat()),
    )
    .unwrap();
    assert_eq!(done["outcome"], "committed", "{done}");
    assert!(heads_and_holders(&alice)
        .iter()
        .all(|(_, version, holder)| *version == 2 && holder.is_none()));
}

#[test]
fn a_server_killed_between_two_files_of_a_change_commits_none_of_it() {
    let cli = Cli::new();
    let files = five_checked_out(&cli);
    let token = cli.add_participant(&["alice"]);
    let paused = crate::harness::serve_logged(&cli.kit)
        .env("LEASEDESK_FAILPOINTS", "change.between_files=pause")
        .spawn();
    let alice = paused.client_cli(&token);
    let mut checkin = alice.command();
    checkin
        .args(["checkin"])
        .args(&files)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut client = checkin.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !paused
        .log_text()
        .contains("failpoint change.between_files reached")
    {
        assert!(
            Instant::now() < deadline,
            "the server never reached the failpoint"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(paused); // SIGKILL, inside the change's transaction
    client.kill().ok();
    client.wait().unwrap();

    let server = cli.serve();
    let alice = server.client_cli(&token);
    assert_nothing_committed_and_still_held(&alice);
    let mut retry = vec!["--json", "checkin"];
    retry.extend(files.iter().map(String::as_str));
    let done: Value = serde_json::from_str(&alice.ok(&retry)).unwrap();
    assert_eq!(done["outcome"], "committed", "{done}");
}

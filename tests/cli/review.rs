//! Review through the CLI: `comment` (a thread pinned to the picture, an
//! answer in one), `threads`, `resolve`, `review` (decisions and requests),
//! `reviews`, `inbox`, in words and in JSON, on a data folder and against a
//! real server; and bad input refused with a reason, never a panic.

use serde_json::Value;

use super::Cli;

/// A data folder where alice made hero.psd (versions 1 and 2) and bob and
/// carol may be named with `@`.
fn studio() -> Cli {
    let cli = Cli::new();
    for name in ["alice", "bob", "carol"] {
        cli.add_participant(&[name]);
    }
    cli.import("hero.psd", b"v1");
    cli.ok("user:alice", &["checkout", "hero.psd"]);
    let v2 = cli.file("hero-v2.psd", b"v2");
    cli.ok("user:alice", &["checkin", "hero.psd", &v2]);
    cli
}

/// Runs a command that must be refused; answers its exit code and stderr.
fn refused(cli: &Cli, who: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = cli.run(who, args);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} was let through");
    assert!(!said.contains("panicked"), "{args:?} panicked: {said}");
    (out.status.code(), said)
}

#[test]
fn a_pinned_thread_is_answered_listed_and_resolved() {
    let cli = studio();
    let opened = cli.ok(
        "user:bob",
        &[
            "comment",
            "hero.psd",
            "--at",
            "0.25,0.5,0.5,0.25",
            "-m",
            "the logo is 4 px off here, @alice",
        ],
    );
    assert_eq!(
        opened.trim(),
        "opened thread 1 on version 2 of hero.psd, pinned at 0.25,0.5 (0.5 x 0.25) (told user:alice)",
        "the head is the default"
    );
    let on_v1 = cli.json(
        "user:carol",
        &[
            "comment",
            "hero.psd",
            "--version",
            "1",
            "--at",
            "1,0",
            "-m",
            "and the sky",
        ],
    );
    assert_eq!(
        (&on_v1["number"], &on_v1["version"], &on_v1["state"]),
        (&Value::from(2), &Value::from(1), &Value::from("open"))
    );
    assert_eq!(
        on_v1["pin"],
        serde_json::json!({"x": 1.0, "y": 0.0, "w": null, "h": null})
    );
    assert_eq!(on_v1["comments"][0]["body"], "and the sky");

    let answered = cli.json(
        "user:alice",
        &["comment", "hero.psd", "--thread", "1", "-m", "fixed\nin v3"],
    );
    assert_eq!(answered["author"], "user:alice");
    assert_eq!(answered["body"], "fixed\nin v3");
    let words = cli.ok(
        "user:alice",
        &["comment", "hero.psd", "--thread", "1", "-m", "thanks @bob"],
    );
    assert_eq!(
        words.trim(),
        "answered in thread 1 of hero.psd (told user:bob)"
    );

    let listed = cli.ok("user:carol", &["threads", "hero.psd"]);
    assert!(
        listed.contains("thread 1  open  on version 2  at 0.25,0.5 (0.5 x 0.25)")
            && listed.contains("user:bob: the logo is 4 px off here, @alice")
            && listed.contains("user:alice: fixed\n      in v3")
            && listed.contains("thread 2  open  on version 1  at 1,0"),
        "{listed}"
    );
    let threads = cli.json("user:carol", &["threads", "hero.psd"]);
    let threads = threads.as_array().expect("a list of threads");
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[0]["comments"].as_array().unwrap().len(), 3);
    assert_eq!(threads[0]["pin"]["w"], 0.5);
    let only_v1 = cli.json("user:carol", &["threads", "hero.psd", "--version", "1"]);
    assert_eq!(only_v1.as_array().unwrap().len(), 1, "{only_v1}");

    let resolved = cli.ok("user:alice", &["resolve", "hero.psd", "1"]);
    assert_eq!(resolved.trim(), "resolved thread 1 of hero.psd");
    let open = cli.json("user:carol", &["threads", "hero.psd", "--open"]);
    let numbers: Vec<&Value> = open
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["number"])
        .collect();
    assert_eq!(numbers, [2], "thread 1 is resolved");
    let listed = cli.ok("user:carol", &["threads", "hero.psd"]);
    assert!(
        listed.contains("thread 1  resolved by user:alice"),
        "{listed}"
    );

    let reopened = cli.json("user:bob", &["resolve", "hero.psd", "1", "--reopen"]);
    assert_eq!(
        (&reopened["state"], &reopened["resolved_by"]),
        (&Value::from("open"), &Value::Null)
    );
    cli.ok("user:bob", &["resolve", "hero.psd", "1"]);
    cli.ok("user:bob", &["resolve", "hero.psd", "2"]);
    let none = cli.ok("user:bob", &["threads", "hero.psd", "--open"]);
    assert_eq!(none.trim(), "no open threads on hero.psd");
}

#[test]
fn decisions_and_requests_show_the_review_state() {
    let cli = studio();
    let asked = cli.ok(
        "user:alice",
        &["review", "hero.psd", "--request", "bob,user:carol"],
    );
    assert_eq!(
        asked.trim(),
        "asked user:bob, user:carol to review version 2 of hero.psd"
    );
    let pending = cli.ok("user:alice", &["reviews", "hero.psd"]);
    assert_eq!(
        pending.trim(),
        "version 2 of hero.psd: pending, waiting for user:bob, user:carol"
    );

    let approved = cli.ok(
        "user:bob",
        &["review", "hero.psd", "--approve", "-m", "lovely"],
    );
    assert_eq!(
        approved.trim(),
        "approved version 2 of hero.psd; review state: approved, waiting for user:carol"
    );
    let changes = cli.json(
        "user:carol",
        &[
            "review",
            "hero.psd",
            "--changes",
            "-m",
            "the sky is too blue",
        ],
    );
    assert_eq!(
        (
            &changes["decision"],
            &changes["message"],
            &changes["version"]
        ),
        (
            &Value::from("changes_requested"),
            &Value::from("the sky is too blue"),
            &Value::from(2)
        )
    );
    let words = cli.ok("user:bob", &["review", "hero.psd", "--approve"]);
    assert!(
        words.ends_with("review state: changes requested\n"),
        "changes requested outweighs any approval: {words}"
    );

    let state = cli.json("user:alice", &["reviews", "hero.psd"]);
    assert_eq!(state["state"], "changes_requested");
    assert_eq!(state["waiting_for"], serde_json::json!([]));
    let deciders: Vec<&Value> = state["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["reviewer"])
        .collect();
    assert_eq!(deciders, ["user:bob", "user:carol", "user:bob"]);
    let shown = cli.ok("user:alice", &["reviews", "hero.psd"]);
    assert!(
        shown.starts_with("version 2 of hero.psd: changes requested\n")
            && shown.contains("user:bob approved: \"lovely\"")
            && shown.contains("user:carol requested changes: \"the sky is too blue\""),
        "{shown}"
    );
    let v1 = cli.ok("user:alice", &["reviews", "hero.psd", "--version", "1"]);
    assert_eq!(v1.trim(), "version 1 of hero.psd: no decision yet");
}

#[test]
fn the_inbox_shows_a_mention_newest_first_and_read_marks_it() {
    let cli = studio();
    assert_eq!(
        cli.ok("user:carol", &["inbox"]).trim(),
        "your inbox is empty"
    );
    cli.ok(
        "user:bob",
        &["comment", "hero.psd", "-m", "@carol what do you think?"],
    );
    cli.ok("user:alice", &["review", "hero.psd", "--request", "carol"]);

    let inbox = cli.ok("user:carol", &["inbox"]);
    let lines: Vec<&str> = inbox.lines().collect();
    assert_eq!(lines.len(), 3, "{inbox}");
    assert!(
        lines[0].starts_with("* ") && lines[0].ends_with("user:alice asks you to review hero.psd"),
        "{inbox}"
    );
    assert!(
        lines[1].ends_with("user:bob mentioned you in hero.psd"),
        "{inbox}"
    );
    assert_eq!(lines[2], "2 unread");
    let page = cli.json("user:carol", &["inbox"]);
    let kinds: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["kind"])
        .collect();
    assert_eq!(kinds, ["review_requested", "mention"], "newest first");
    assert_eq!(page["unread"], 2);
    let newest = cli.json("user:carol", &["inbox", "--limit", "1"]);
    assert_eq!(newest["items"].as_array().unwrap().len(), 1);
    let to_alice = cli.json("user:alice", &["inbox"]);
    assert_eq!(
        to_alice["items"][0]["kind"], "thread_on_yours",
        "{to_alice}"
    );

    let marked = cli.ok("user:carol", &["inbox", "--unread", "--read"]);
    assert!(marked.ends_with("marked read; 0 unread\n"), "{marked}");
    assert_eq!(
        cli.ok("user:carol", &["inbox", "--unread"]).trim(),
        "nothing unread"
    );
    let after = cli.json("user:carol", &["inbox"]);
    assert_eq!(after["unread"], 0);
    assert!(
        after["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["read"] == true),
        "{after}"
    );
    // Something new after the mark is unread again.
    cli.ok(
        "user:bob",
        &["comment", "hero.psd", "--thread", "1", "-m", "@carol ping"],
    );
    let again = cli.json("user:carol", &["inbox", "--read"]);
    assert_eq!(
        (again["items"][0]["read"].clone(), again["unread"].clone()),
        (Value::from(false), Value::from(0))
    );
}

#[test]
fn bad_review_input_is_refused_with_a_reason() {
    let cli = studio();
    let comment = |extra: &[&str]| {
        let mut args = vec!["comment", "hero.psd"];
        args.extend_from_slice(extra);
        refused(&cli, "user:bob", &args)
    };
    let (code, said) = comment(&["--at", "1.5,0.2", "-m", "x"]);
    assert_eq!(code, Some(2));
    assert!(said.contains("the pin's x is 1.5"), "{said}");
    let (_, said) = comment(&["--at", "0.6,0.5,0.5,0.1", "-m", "x"]);
    assert!(said.contains("reaches beyond the image"), "{said}");
    let (_, said) = comment(&["--at", "0.5", "-m", "x"]);
    assert!(said.contains("give 2 or 4 numbers"), "{said}");
    let (_, said) = comment(&["--at", "a,b", "-m", "x"]);
    assert!(said.contains("is not X,Y or X,Y,W,H"), "{said}");
    let proposal = "00000000-0000-4000-8000-000000000000";
    let (code, said) = comment(&["--version", "1", "--proposal", proposal, "-m", "x"]);
    assert_eq!(code, Some(2));
    assert!(said.contains("cannot be used with"), "{said}");
    let (code, said) = comment(&["--thread", "1", "--at", "0,0", "-m", "x"]);
    assert_eq!(code, Some(2), "{said}");

    let (code, said) = comment(&["--thread", "9", "-m", "x"]);
    assert_eq!(code, Some(1));
    assert!(said.contains("hero.psd has no thread 9"), "{said}");
    let (code, said) = refused(&cli, "user:bob", &["resolve", "hero.psd", "9"]);
    assert_eq!(code, Some(1));
    assert!(said.contains("hero.psd has no thread 9"), "{said}");
    let (_, said) = refused(&cli, "user:bob", &["--json", "resolve", "hero.psd", "9"]);
    let body: Value = serde_json::from_str(&said).expect("a JSON refusal");
    assert_eq!(body["error"], "not_found", "{body}");

    let long = "é".repeat(10_001);
    let (code, said) = comment(&["-m", &long]);
    assert_eq!(code, Some(1));
    assert!(said.contains("over the limit of 10000"), "{said}");
    let (_, said) = comment(&["-m", "  "]);
    assert!(said.contains("the comment is empty"), "{said}");
    let (_, said) = comment(&["--version", "7", "-m", "x"]);
    assert!(said.contains("hero.psd has no version 7"), "{said}");
    let (_, said) = comment(&["--proposal", proposal, "-m", "x"]);
    assert!(said.contains("hero.psd has no proposal"), "{said}");
    assert_eq!(
        cli.ok("user:bob", &["threads", "hero.psd"]).trim(),
        "no threads on hero.psd",
        "nothing refused was stored"
    );

    let (code, _) = refused(&cli, "user:bob", &["review", "hero.psd"]);
    assert_eq!(code, Some(2), "a decision or a request is needed");
    let (code, _) = refused(
        &cli,
        "user:bob",
        &["review", "hero.psd", "--approve", "--changes"],
    );
    assert_eq!(code, Some(2));
    let (code, said) = refused(
        &cli,
        "user:bob",
        &["review", "hero.psd", "--request", "bob"],
    );
    assert_eq!(code, Some(1));
    assert!(said.contains("you cannot ask yourself"), "{said}");
    let (_, said) = refused(
        &cli,
        "user:bob",
        &["review", "hero.psd", "--request", "nobody"],
    );
    assert!(
        said.contains("user:nobody cannot review hero.psd"),
        "{said}"
    );
    let (code, _) = refused(&cli, "user:bob", &["inbox", "--limit", "0"]);
    assert_eq!(code, Some(2));
    let (code, said) = refused(&cli, "user:bob", &["threads", "nowhere.psd"]);
    assert_eq!(code, Some(1), "{said}");
}

#[test]
fn review_works_the_same_against_a_real_server() {
    let local = Cli::new();
    let alice = local.add_participant(&["alice"]);
    let bob = local.add_participant(&["bob"]);
    let server = local.serve();
    let (alice, bob) = (server.client_cli(&alice), server.client_cli(&bob));
    let file = local.file("hero.psd", b"v1");
    alice.ok(&["import", "brand/hero.psd", &file]);

    let opened = bob.ok(&[
        "comment",
        "brand/hero.psd",
        "--at",
        "0.1,0.2",
        "-m",
        "@alice a speck here",
    ]);
    assert_eq!(
        opened.trim(),
        "opened thread 1 on version 1 of brand/hero.psd, pinned at 0.1,0.2 (told user:alice)"
    );
    alice.ok(&[
        "comment",
        "brand/hero.psd",
        "--thread",
        "1",
        "-m",
        "gone now",
    ]);
    let threads: Value =
        serde_json::from_str(&alice.ok(&["--json", "threads", "brand/hero.psd"])).unwrap();
    assert_eq!(threads[0]["comments"][1]["body"], "gone now", "{threads}");
    assert!(bob
        .ok(&["resolve", "brand/hero.psd", "1"])
        .contains("resolved thread 1"));
    let approved = bob.ok(&["review", "brand/hero.psd", "--approve"]);
    assert!(approved.ends_with("review state: approved\n"), "{approved}");

    let inbox: Value = serde_json::from_str(&alice.ok(&["--json", "inbox"])).unwrap();
    let kinds: Vec<&Value> = inbox["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["kind"])
        .collect();
    assert_eq!(kinds, ["decision_on_yours", "mention"], "{inbox}");
    let marked = alice.ok(&["inbox", "--read"]);
    assert!(marked.ends_with("marked read; 0 unread\n"), "{marked}");
    let missing = bob.output(&["comment", "brand/hero.psd", "--thread", "5", "-m", "x"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no thread 5"));
}

#[test]
fn a_proposal_is_commented_on_and_reviewed_and_keeps_its_thread() {
    let cli = studio();
    cli.add_participant(&["boss", "--admin"]);
    cli.ok("user:alice", &["checkout", "hero.psd"]);
    cli.ok("user:boss", &["break", "hero.psd", "--reason", "deadline"]);
    cli.ok("user:bob", &["checkout", "hero.psd"]);
    cli.ok(
        "user:bob",
        &["checkin", "hero.psd", &cli.file("bob.psd", b"v3")],
    );
    let late = cli.json(
        "user:alice",
        &["checkin", "hero.psd", &cli.file("late.psd", b"v3 too")],
    );
    let proposal = late["result"]["proposal"]["id"]
        .as_str()
        .expect("a late check-in is a proposal")
        .to_owned();

    let opened = cli.ok(
        "user:bob",
        &[
            "comment",
            "hero.psd",
            "--proposal",
            &proposal,
            "-m",
            "keep my sky",
        ],
    );
    assert_eq!(
        opened.trim(),
        format!("opened thread 1 on proposal {proposal} of hero.psd")
    );
    let on_it = cli.json(
        "user:bob",
        &["threads", "hero.psd", "--proposal", &proposal],
    );
    assert_eq!(on_it[0]["proposal_id"], proposal.as_str(), "{on_it}");
    assert_eq!(
        cli.json("user:bob", &["threads", "hero.psd", "--version", "3"]),
        serde_json::json!([]),
        "a proposal's thread is on no version yet"
    );
    let approved = cli.ok(
        "user:bob",
        &["review", "hero.psd", "--proposal", &proposal, "--approve"],
    );
    assert_eq!(
        approved.trim(),
        format!("approved proposal {proposal} of hero.psd; review state: approved")
    );

    cli.ok("user:alice", &["accept", &proposal]);
    let listed = cli.ok("user:bob", &["threads", "hero.psd"]);
    assert!(
        listed.contains(&format!(
            "thread 1  open  on version 4 (from proposal {proposal})"
        )),
        "{listed}"
    );
}

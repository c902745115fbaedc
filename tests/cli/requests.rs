//! Asking the holder through the CLI: `ask`, `requests`, `reply` and
//! `withdraw`, in words and in JSON; an agent refused with exit 75 asks too.

use super::Cli;

#[test]
fn an_agent_refused_as_busy_asks_the_holder_who_replies() {
    let cli = Cli::new();
    cli.import("hero.psd", b"v1");
    cli.ok("user:alice", &["checkout", "hero.psd"]);
    let busy = cli.run("agent:resizer", &["checkout", "hero.psd"]);
    assert_eq!(busy.status.code(), Some(75), "busy");
    let said = String::from_utf8_lossy(&busy.stderr);
    assert!(said.contains("leasedesk ask hero.psd"), "{said}");

    let asked = cli.ok(
        "agent:resizer",
        &["ask", "hero.psd", "-m", "need it for the logo fix"],
    );
    assert!(
        asked.contains("asked user:alice to release hero.psd"),
        "{asked}"
    );
    let to_alice = cli.json("user:alice", &["requests"]);
    let requests = to_alice.as_array().expect("a list");
    assert_eq!(requests.len(), 1, "{to_alice}");
    assert_eq!(requests[0]["from"], "agent:resizer");
    assert_eq!(requests[0]["message"], "need it for the logo fix");
    assert_eq!(requests[0]["state"], "open");
    let id = requests[0]["id"].as_str().unwrap().to_owned();
    let words = cli.ok("user:alice", &["requests"]);
    assert!(
        words.contains("agent:resizer asks you for hero.psd: \"need it for the logo fix\""),
        "{words}"
    );

    let replied = cli.json("user:alice", &["reply", &id, "-m", "20 more minutes"]);
    assert_eq!(replied["state"], "replied");
    let seen = cli.ok("agent:resizer", &["requests"]);
    assert!(
        seen.contains("you ask user:alice for hero.psd")
            && seen.contains("(replied: \"20 more minutes\")"),
        "{seen}"
    );
    let not_yours = cli.run("user:bob", &["withdraw", &id]);
    assert_eq!(not_yours.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&not_yours.stderr).contains("only agent:resizer, who asked"));

    let withdrawn = cli.ok("agent:resizer", &["withdraw", &id]);
    assert!(
        withdrawn.contains("withdrew your request for hero.psd"),
        "{withdrawn}"
    );
    assert_eq!(cli.ok("agent:resizer", &["requests"]).trim(), "no requests");
    let all = cli.json("agent:resizer", &["requests", "--all"]);
    assert_eq!(all[0]["state"], "withdrawn", "{all}");

    let free = cli.run("agent:resizer", &["ask", "nowhere.psd"]);
    assert_eq!(free.status.code(), Some(1));
}

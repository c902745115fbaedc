//! A studio's commands: `user invite | invites | revoke-invite | devices |
//! revoke-device`, `group`, `allow` and `permissions`, by the data folder's
//! owner and by an admin over a real server, and what they do to the files
//! others see.

use super::Cli;

/// The owner of the data folder (no `--as`) sets groups and rules; an
/// admin invites over the server and gets a link; a non-admin cannot;
/// bob then sees only what the rules let him, and a device is revoked.
#[test]
fn an_owner_and_an_admin_run_a_studio_from_the_command_line() {
    let cli = Cli::new();
    let boss = cli.add_participant(&["boss", "--admin"]);
    let bob = cli.add_participant(&["bob"]);
    cli.add_participant(&["alice"]);
    for (path, name) in [
        ("finance/q3.xlsx", "q3.xlsx"),
        ("brand/approved/logo.psd", "logo.psd"),
        ("brand/open.psd", "open.psd"),
    ] {
        cli.ok(
            "user:alice",
            &["import", path, &cli.file(name, path.as_bytes())],
        );
    }

    // The owner: no `--as`, and no admin token needed on the data folder.
    let owner = |args: &[&str]| cli.kit.ok(args);
    owner(&["group", "set", "clients", "bob"]);
    let said = owner(&["allow", "group:clients", "none", "finance/"]);
    assert!(
        said.contains("group:clients may not see the files in finance/"),
        "{said}"
    );
    owner(&["allow", "bob", "write", "brand/approved/"]);
    // Allowing again replaces the rule on that folder for that one.
    owner(&["allow", "bob", "read", "brand/approved/"]);
    let rules = owner(&["permissions"]);
    assert_eq!(
        rules.lines().collect::<Vec<_>>(),
        [
            "brand/approved/  user:bob  read",
            "finance/  group:clients  none"
        ],
        "{rules}"
    );
    let refused = cli.kit.output(&["allow", "bob", "admin", "brand/"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("none, read or write"));
    let groups = owner(&["group", "list"]);
    assert_eq!(groups.trim(), "clients: user:bob");

    // Over the server, as bob: the hidden file is nowhere, the read-only
    // one cannot be checked out.
    let server = cli.serve();
    let as_bob = server.client_cli(&bob);
    let listed = as_bob.ok(&["ls"]);
    assert!(!listed.contains("finance"), "{listed}");
    assert!(listed.contains("brand/approved/logo.psd"), "{listed}");
    let refused = as_bob.output(&["checkout", "brand/approved/logo.psd"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr)
        .contains("you can view brand/approved/, not change it"));
    let hidden = as_bob.output(&["who", "finance/q3.xlsx"]);
    assert!(String::from_utf8_lossy(&hidden.stderr).contains("no artifact at finance/q3.xlsx"));
    assert!(!as_bob
        .output(&["user", "invite", "mallory"])
        .status
        .success());

    // An admin invites over the server: the code, and the link to send.
    let as_boss = server.client_cli(&boss);
    let invited = as_boss.ok(&["--json", "user", "invite", "carol", "--expires", "2d"]);
    let invited: serde_json::Value = serde_json::from_str(&invited).unwrap();
    let code = invited["invite"]["code"].as_str().unwrap();
    let link = invited["link"].as_str().unwrap();
    let server_url: String = server
        .url
        .bytes()
        .map(|b| match b {
            b':' => "%3A".to_owned(),
            b'/' => "%2F".to_owned(),
            b => (b as char).to_string(),
        })
        .collect();
    assert_eq!(
        link,
        format!("leasedesk://join?server={server_url}&code={code}")
    );
    assert_eq!(invited["invite"]["participant"], "user:carol");
    // In words: the link to send, which names the server; no bare code,
    // which Join could not use alone.
    let said = as_boss.ok(&["user", "invite", "dora"]);
    let lines: Vec<&str> = said.lines().collect();
    assert!(
        lines[0].starts_with("an invite for user:dora until "),
        "{said}"
    );
    assert!(lines[0].ends_with("send this link"), "{said}");
    assert!(
        lines[1].starts_with(&format!("leasedesk://join?server={server_url}&code=")),
        "{said}"
    );
    assert_eq!(lines.len(), 2, "{said}");

    // The invites waiting: carol's and dora's, never a code; carol's revoked.
    let waiting: serde_json::Value =
        serde_json::from_str(&as_boss.ok(&["--json", "user", "invites"])).unwrap();
    let waiting = waiting["invites"].as_array().unwrap().clone();
    let names: Vec<&str> = waiting
        .iter()
        .map(|i| i["participant"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{waiting:?}");
    assert!(names.contains(&"user:carol") && names.contains(&"user:dora"));
    assert!(!serde_json::to_string(&waiting).unwrap().contains(code));
    let carols = waiting
        .iter()
        .find(|i| i["participant"] == "user:carol")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = as_boss.ok(&["user", "invites"]);
    assert!(
        listed.lines().any(|l| l.starts_with(&carols)
            && l.contains("user:carol")
            && l.contains("made by user:boss")),
        "{listed}"
    );
    let revoked = as_boss.ok(&["user", "revoke-invite", &carols]);
    assert!(revoked.contains("its code works no more"), "{revoked}");
    let listed = as_boss.ok(&["user", "invites"]);
    assert!(!listed.contains("user:carol"), "{listed}");
    let again = as_boss.output(&["user", "revoke-invite", &carols]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("no open invite"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let bad = as_boss.output(&["user", "revoke-invite", "carol"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a UUID"));
    assert!(!as_bob.output(&["user", "invites"]).status.success());

    // Devices: bob's `cli` token, listed and revoked; it stops working.
    let devices: serde_json::Value =
        serde_json::from_str(&as_boss.ok(&["--json", "user", "devices", "bob"])).unwrap();
    let device = &devices[0]["devices"][0];
    assert_eq!(device["name"], "cli");
    let id = device["id"].as_str().unwrap();
    as_boss.ok(&["user", "revoke-device", "bob", id]);
    assert_eq!(as_bob.output(&["ls"]).status.code(), Some(1));
    drop(server);

    // On the data folder, with LEASEDESK_PUBLIC_URL, the owner's invite
    // carries the link too.
    let mut command = cli.kit.command();
    let out = command
        .env("LEASEDESK_PUBLIC_URL", "https://studio.example:8443")
        .args(["user", "invite", "dan", "--agent"])
        .output()
        .unwrap();
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(said.contains("an invite for agent:dan"), "{said}");
    assert!(
        said.contains("leasedesk://join?server=https%3A%2F%2Fstudio.example%3A8443&code="),
        "{said}"
    );

    // Without a URL, the code, and what Join needs beside it.
    let mut command = cli.kit.command();
    let out = command
        .env_remove("LEASEDESK_PUBLIC_URL")
        .args(["user", "invite", "eve"])
        .output()
        .unwrap();
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(said.contains("an invite for user:eve"), "{said}");
    assert!(!said.contains("leasedesk://"), "{said}");
    assert!(
        said.contains("Join needs the server's address with it"),
        "{said}"
    );
    // The owner lists them on the data folder: made by the owner (no one).
    let listed = cli.kit.ok(&["user", "invites"]);
    let eves = listed.lines().find(|l| l.contains("user:eve")).unwrap();
    assert!(!eves.contains("made by"), "{listed}");
}

//! The Studio view, as an admin finds it, after joining with a code and
//! the server's address (no link): the tab only an admin sees; people and
//! their devices, this one marked; an invite made, its whole link copied,
//! listed while it waits and revoked; a group whose members are picked by
//! name; folder permissions picked (folder, who, level), previewed for one
//! person as a folder tree with counts before they are saved, the chooser
//! kept by the Save, then in force for that person; a device revoked.

use std::process::{Command, Output};

use crate::window::*;

/// The CLI as a participant over the server, with a token; what it answered.
fn leasedesk(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(tool("LEASEDESK_BIN"));
    command.args(args).env_remove("LEASEDESK_DATA");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

async fn the_studio_of_an_admin(home: tempfile::TempDir) {
    let _one = ONE_APP.lock().await;
    let data = home.path().join("server");
    let server = start_server(&data);
    let (url, bob) = (server.url.clone(), server.tokens["bob"].clone());
    for path in ["finance/q3.xlsx", "brand/hero.psd"] {
        alice_imports(&data, home.path(), path, path.as_bytes());
    }
    let as_bob = |args: &[&str]| {
        let mut all = vec!["--server", url.as_str()];
        all.extend_from_slice(args);
        leasedesk(&all, &[("LEASEDESK_TOKEN", bob.as_str())])
    };
    // The admin joins on this computer with a code of their own: no link,
    // so Join asks for the server beside it, and says so if it is left out.
    let invited = owner_json(&data, &url, &["user", "invite", "admin", "--admin"]);
    let code = invited["invite"]["code"].as_str().unwrap().to_owned();
    let w = World::fresh(&_one, server).await;
    w.wait_for("#join[open] #first-run-join", "the first run's choice")
        .await;
    w.click("first-run-join").await;
    assert!(
        w.absent("#join-server-field:not([hidden])").await,
        "no server field before a code"
    );
    w.type_into("#join-invite", &code).await;
    w.wait_for(
        "#join-server-field:not([hidden])",
        "the server's field for a code",
    )
    .await;
    w.click("join-continue").await;
    w.wait_text("#join-status", "what a code alone lacks", |t| {
        t.contains("type the server's address too")
    })
    .await;
    w.type_into("#join-server-url", &url).await;
    w.join_server_is(&url, "the code's server").await;
    w.name_this_device("admin's desk").await;
    w.readme_screenshot("join-with-a-code").await;
    w.click("join-submit").await;
    w.wait_for(&World::row("brand/hero.psd"), "the studio's files")
        .await;

    // The tab shows for an admin; people with their devices, this one marked.
    let shown = std::time::Instant::now();
    while w.absent("#tab-studio:not([hidden])").await {
        let said = w
            .eval("return document.getElementById('tab-studio').dataset.said ?? 'nothing yet'")
            .await;
        if shown.elapsed() > std::time::Duration::from_secs(15) {
            let asked = std::time::Instant::now();
            let now = w.invoke("studio", serde_json::json!({})).await;
            panic!(
                "the Studio tab did not show within 15 s: the last ask said {said}; \
                 asked now, in {:?}: {now}",
                asked.elapsed()
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    w.click("tab-studio").await;
    let person = |who: &str| format!("#studio-people tr[data-participant='user:{who}']");
    for who in ["alice", "bob", "admin"] {
        w.wait_for(&person(who), who).await;
    }
    let this_device = format!("{} li[data-this-device]", person("admin"));
    w.wait_text(
        &this_device,
        "the admin's device, marked as this one",
        |t| t.starts_with("admin's desk (this device), last used"),
    )
    .await;
    let bobs = w
        .text_when(&format!("{} li", person("bob")), "bob's device", |_| true)
        .await;
    assert!(!bobs.contains("this device"), "{bobs}");
    w.screenshot("studio-01-people").await;

    // Invite someone: the whole link to send, copied, for a designer, for a day.
    w.type_into("#studio-invite-name", "dana").await;
    w.choose("#studio-invite-lapse", &(24 * 3600).to_string())
        .await;
    w.click("studio-invite").await;
    let link = w.wait_for("#studio-invite-link", "the invite's link").await;
    let link = link.prop("value").await.unwrap().unwrap_or_default();
    let server_part = url.replace(':', "%3A").replace('/', "%2F");
    assert!(
        link.starts_with(&format!("leasedesk://join?server={server_part}&code=")),
        "the whole link, naming the server: {link}"
    );
    assert!(
        w.absent("#studio-invite-made .fingerprint").await,
        "no bare code beside it"
    );
    w.click("studio-invite-link-copy").await;
    w.wait_text("#studio-invite-link-copied", "the link copied", |t| {
        t.starts_with("Copied")
    })
    .await;
    assert_eq!(clipboard(), link, "the clipboard holds the whole link");

    // It waits to be used, listed without its code; revoked, it is gone
    // here and on the server.
    let waiting = w
        .text_when(
            "#studio-invites li[data-participant='user:dana']",
            "dana's invite waiting",
            |t| t.starts_with("dana, designer, invited by you, works until"),
        )
        .await;
    let code = link.split("&code=").nth(1).unwrap();
    assert!(!waiting.contains(code), "never the code: {waiting}");
    w.screenshot("studio-02-invite-waiting").await;
    w.click_css(
        "#studio-invites li[data-participant='user:dana'] [data-revoke-invite]",
        "dana's invite's Revoke",
    )
    .await;
    w.click("confirm-yes").await;
    w.wait_until_absent(
        "#studio-invites li[data-participant='user:dana']",
        "dana's invite gone",
    )
    .await;
    let open = owner_json(&data, &url, &["user", "invites"]);
    assert_eq!(
        open["invites"],
        serde_json::json!([]),
        "revoked on the server"
    );

    // A group, its members picked by name.
    w.type_into("#studio-group-name", "clients").await;
    let offered = w
        .eval("return [...document.querySelectorAll('#studio-group-members label')].map(l => l.textContent.trim());")
        .await;
    assert_eq!(offered, serde_json::json!(["admin", "alice", "bob"]));
    w.click_css(
        "#studio-group-members input[value='user:bob']",
        "bob as a member",
    )
    .await;
    w.click("studio-group-save").await;
    w.wait_text("#studio-groups li", "the group", |t| {
        t.starts_with("clients: bob")
    })
    .await;

    // A rule hiding finance/ from the group, picked, previewed for bob first.
    w.click("studio-rule-add").await;
    // The new rule's choices come with the group list: wait for the last.
    w.wait_until(
        "[data-rule-who='0'] option",
        "the new rule's last choice",
        std::time::Duration::from_secs(10),
        |text| text == "bob",
    )
    .await;
    let whos = w
        .eval("return [...document.querySelectorAll(\"[data-rule-who='0'] option\")].map(o => o.textContent);")
        .await;
    assert_eq!(
        whos,
        serde_json::json!(["everyone", "group clients", "admin", "alice", "bob"]),
        "plain names"
    );
    w.wait_for(
        "[data-rule-folder='0'] option[value='finance/']",
        "finance/ among the folders",
    )
    .await;
    w.choose("[data-rule-folder='0']", "finance/").await;
    w.choose("[data-rule-who='0']", "group:clients").await;
    w.choose("[data-rule-level='0']", "none").await;
    w.choose("#studio-preview-who", "user:bob").await;
    let preview = |part: &str| format!("#studio-preview {part}");
    let hidden_q3 = preview("li[data-path='finance/q3.xlsx'][data-level='none']");
    w.wait_text(
        &preview("details[data-folder=''][data-write='1'][data-none='1'] > summary"),
        "every file, counted by level",
        |t| t.contains("2 files: 1 view and change, 1 hidden"),
    )
    .await;
    w.wait_text(
        &preview("details[data-folder='finance/'][data-none='1'] > summary"),
        "finance hidden from bob, in the preview",
        |t| t.contains("1 file: hidden"),
    )
    .await;
    w.wait_for(
        &preview("details[data-folder='brand/'][data-write='1']"),
        "brand as it was",
    )
    .await;
    w.click_css(
        &preview("details[data-folder='finance/'] > summary"),
        "finance/ opened",
    )
    .await;
    w.wait_for(&hidden_q3, "finance's file, hidden").await;
    w.screenshot("studio-03-rules-preview").await;
    let listed = String::from_utf8(as_bob(&["ls"]).stdout).unwrap();
    assert!(
        listed.contains("finance/q3.xlsx"),
        "not saved yet: {listed}"
    );
    w.click("studio-rules-save").await;
    w.wait_text("#studio-rules-status", "the rules saved", |t| {
        t.starts_with("Saved")
    })
    .await;
    let listed = String::from_utf8(as_bob(&["ls"]).stdout).unwrap();
    assert!(
        !listed.contains("finance") && listed.contains("brand/hero.psd"),
        "{listed}"
    );
    // The Save kept whose view it was, and the folder opened.
    let chooser = w.wait_for("#studio-preview-who", "the chooser").await;
    assert_eq!(
        chooser.prop("value").await.unwrap().as_deref(),
        Some("user:bob"),
        "the chooser kept after Save"
    );
    w.wait_for(&hidden_q3, "the preview after Save").await;
    w.screenshot("studio-04-saved").await;

    // A folder typed by hand that cannot be: said in the view, and nothing changes.
    w.click("studio-rule-add").await;
    w.choose("[data-rule-folder='1']", "(another)").await;
    w.eval(
        "const typed = document.querySelector(\"[data-rule-folder-typed='1']\"); typed.value = '../up'; typed.dispatchEvent(new Event('change')); return true;",
    )
    .await;
    w.wait_for(
        "[data-rule-folder='1'] option[value='../up/']:checked",
        "the typed folder as the rule's",
    )
    .await;
    w.click("studio-rules-save").await;
    w.wait_text("#studio-rules-status", "the refused folder", |t| {
        t.contains("is not a folder's path")
    })
    .await;

    // Revoking bob's device: his token stops working.
    let bob_device = owner_json(&data, &url, &["user", "devices", "bob"])[0]["devices"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    w.click_css(
        &format!("[data-revoke-device='{bob_device}']"),
        "bob's Revoke",
    )
    .await;
    w.click("confirm-yes").await;
    w.wait_until_absent(
        &format!("[data-revoke-device='{bob_device}']"),
        "bob's device gone",
    )
    .await;
    assert!(!as_bob(&["ls"]).status.success(), "bob's token revoked");
    w.screenshot("studio-05-revoked").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_runs_the_studio_from_the_app() {
    let home = tempfile::tempdir().unwrap();
    within_limit(the_studio_of_an_admin(home)).await;
}

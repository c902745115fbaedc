//! The Studio view, as an admin finds it: the tab only an admin sees;
//! people and their devices; an invite made with the link to send; a group;
//! folder permissions edited as a table, previewed for one person before
//! they are saved, then in force for that person; a device revoked.

use std::path::Path;
use std::process::{Command, Output};

use crate::window::*;

/// The CLI at the server's data folder as its owner (`--json`), or as a
/// participant over the server with a token; what it answered.
fn leasedesk(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(tool("LEASEDESK_BIN"));
    command.args(args).env_remove("LEASEDESK_DATA");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn owner_json(data: &Path, url: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--data", data.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    let out = leasedesk(&all, &[("LEASEDESK_PUBLIC_URL", url)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn the_studio_of_an_admin(home: tempfile::TempDir) {
    let data = home.path().join("server");
    let server = start_server(&data);
    let (url, bob) = (server.url.clone(), server.tokens["bob"].clone());
    for (path, name) in [
        ("finance/q3.xlsx", "q3.xlsx"),
        ("brand/hero.psd", "hero.psd"),
    ] {
        let source = home.path().join(name);
        std::fs::write(&source, path).unwrap();
        run_cli(&[
            "--data",
            data.to_str().unwrap(),
            "--as",
            "user:alice",
            "import",
            path,
            source.to_str().unwrap(),
        ]);
    }
    let as_bob = |args: &[&str]| {
        let mut all = vec!["--server", url.as_str()];
        all.extend_from_slice(args);
        leasedesk(&all, &[("LEASEDESK_TOKEN", bob.as_str())])
    };
    // The admin joins on this computer with an invite of their own.
    let invited = owner_json(&data, &url, &["user", "invite", "admin", "--admin"]);
    let w = World::fresh(server).await;
    w.join_from_first_run(
        invited["link"].as_str().unwrap(),
        "admin's desk",
        "brand/hero.psd",
    )
    .await;

    // The tab shows for an admin; people with their devices.
    w.wait_for("#tab-studio:not([hidden])", "the Studio tab")
        .await;
    w.click("tab-studio").await;
    for who in ["alice", "bob", "admin"] {
        w.wait_for(
            &format!("#studio-people tr[data-participant='user:{who}']"),
            who,
        )
        .await;
    }
    w.wait_text(
        "#studio-people tr[data-participant='user:admin'] li",
        "the admin's device",
        |t| t.starts_with("admin's desk, last used"),
    )
    .await;
    w.screenshot("studio-01-people").await;

    // Invite someone: the link to send, for a designer, for a day.
    w.type_into("#studio-invite-name", "dana").await;
    w.choose("#studio-invite-lapse", &(24 * 3600).to_string())
        .await;
    w.click("studio-invite").await;
    let link = w.wait_for("#studio-invite-link", "the invite's link").await;
    let link = link.prop("value").await.unwrap().unwrap_or_default();
    assert!(
        link.starts_with("leasedesk://join?server=http%3A%2F%2F127.0.0.1"),
        "{link}"
    );

    // A group, then a rule hiding finance/ from it, previewed for bob first.
    w.type_into("#studio-group-name", "clients").await;
    w.type_into("#studio-group-members", "user:bob").await;
    w.click("studio-group-save").await;
    w.wait_text("#studio-groups li", "the group", |t| {
        t.starts_with("clients: bob")
    })
    .await;
    w.click("studio-rule-add").await;
    w.type_into("[data-rule-folder='0']", "finance/").await;
    w.eval(
        "const who = document.querySelector(\"[data-rule-who='0']\"); who.value = 'group:clients'; who.dispatchEvent(new Event('input')); \
         const level = document.querySelector(\"[data-rule-level='0']\"); level.value = 'none'; level.dispatchEvent(new Event('change')); return true;",
    )
    .await;
    w.choose("#studio-preview-who", "user:bob").await;
    w.wait_for(
        "#studio-preview li[data-path='finance/q3.xlsx'][data-level='none']",
        "finance hidden from bob, in the preview",
    )
    .await;
    w.wait_for(
        "#studio-preview li[data-path='brand/hero.psd'][data-level='write']",
        "brand as it was",
    )
    .await;
    w.screenshot("studio-02-rules-preview").await;
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

    // A rule that cannot be: said in the view, and nothing changes.
    w.click("studio-rule-add").await;
    w.type_into("[data-rule-folder='1']", "brand").await;
    w.click("studio-rules-save").await;
    w.wait_text("#studio-rules-status", "the refused folder", |t| {
        t.contains("must end with /")
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
    w.screenshot("studio-03-revoked").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_runs_the_studio_from_the_app() {
    let home = tempfile::tempdir().unwrap();
    tokio::time::timeout(SCENARIO_LIMIT, the_studio_of_an_admin(home))
        .await
        .expect("the scenario within its limit");
}

//! Groups and folder permissions: what a `none` and a `read` folder hide
//! and refuse, rules checked when set, the deepest rule deciding, and a
//! rule change never half seen.

use std::sync::Arc;

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use super::*;
use crate::harness::*;

/// The finance file bob may not see, the approved logo he may only view,
/// a file he may change, and the exports the agent may write: imported by
/// alice, with the rules the admin set after.
struct Studio3 {
    q3: Artifact,
    logo: Artifact,
    open: Artifact,
    export: Artifact,
}

async fn studio_with_rules(f: &Fixture) -> Studio3 {
    let files = Studio3 {
        q3: f.import("finance/q3.xlsx", b"q3 figures").await,
        logo: f.import("brand/approved/logo.psd", b"approved logo").await,
        open: f.import("brand/open.psd", b"open work").await,
        export: f.import("exports/hero.png", b"hero export").await,
    };
    set_groups_and_rules(
        f,
        &[("clients", &["user:bob"])],
        vec![
            rule("finance/", "group:clients", "none"),
            rule("brand/approved/", "user:bob", "read"),
            rule("", "agent:resizer", "read"),
            rule("exports/", "agent:resizer", "write"),
        ],
    )
    .await;
    files
}

/// The admin makes each group of its members, then sets `rules` (which
/// may name the groups).
async fn set_groups_and_rules(f: &Fixture, groups: &[(&str, &[&str])], rules: Vec<Rule>) {
    let admin = f.studio("user:admin");
    for (name, members) in groups {
        let group = Group {
            name: name.parse().unwrap(),
            members: members.iter().copied().map(participant).collect(),
        };
        admin.put_group(group).await.unwrap();
    }
    admin.put_permission_rules(rules).await.unwrap();
}

/// Bob's page of at most `limit` events after `seq`.
async fn bobs_events_after(f: &Fixture, seq: u64, limit: u32) -> EventPage {
    let query = EventQuery {
        after: Some(seq),
        limit,
        ..EventQuery::default()
    };
    f.bob.query_events(query).await.unwrap()
}

fn paths(artifacts: &[Artifact]) -> Vec<&str> {
    artifacts.iter().map(|a| a.path.as_str()).collect()
}

/// `none`: the file is left out of every list and answers every call as an
/// id that never was; `read`: listed with its access, changed by nobody.
async fn a_none_folder_hides_its_files_and_a_read_folder_refuses_changes(f: Fixture) {
    let s = studio_with_rules(&f).await;
    let bob = f.bob.as_ref();

    let listed = bob.artifacts().await.unwrap();
    assert_eq!(
        paths(&listed),
        [
            "brand/approved/logo.psd",
            "brand/open.psd",
            "exports/hero.png"
        ]
    );
    let access: Vec<Access> = listed.iter().map(|a| a.access).collect();
    assert_eq!(access, [Access::Read, Access::Write, Access::Write]);
    // Alice, with no rule, sees and may change everything; so does the admin.
    assert_eq!(f.alice.artifacts().await.unwrap().len(), 4);
    assert_eq!(
        f.admin.artifact(s.q3.id).await.unwrap().access,
        Access::Write
    );

    // The hidden file answers exactly as an id that never was.
    let never = ArtifactId::new();
    let unknown = |id: ArtifactId| Error::NotFound(format!("no artifact {id}"));
    assert_eq!(bob.artifact(s.q3.id).await, Err(unknown(s.q3.id)));
    assert_eq!(bob.artifact(never).await, Err(unknown(never)));
    assert_eq!(bob.versions(s.q3.id).await, Err(unknown(s.q3.id)));
    assert!(matches!(bob.content(s.q3.id, None).await, Err(e) if e == unknown(s.q3.id)));
    assert_eq!(
        bob.check_out(s.q3.id, checkout_request()).await,
        Err(unknown(s.q3.id))
    );
    assert_eq!(bob.begin_edit(s.q3.id, None).await, Err(unknown(s.q3.id)));
    assert_eq!(bob.ask(s.q3.id, None).await, Err(unknown(s.q3.id)));
    for asked in ["finance/q3.xlsx", "Finance/Q3.xlsx"] {
        assert_eq!(
            bob.artifact_by_path(&path(asked)).await,
            Err(Error::NotFound(format!("no artifact at {asked}")))
        );
    }
    let events = bob
        .query_events(EventQuery {
            artifact: Some(s.q3.id),
            limit: 10,
            ..EventQuery::default()
        })
        .await;
    assert_eq!(events, Err(unknown(s.q3.id)));

    // A new file beside it is refused for the folder, whether or not one is
    // there: the refusal never says which.
    for new in ["Finance/Q3.xlsx", "finance/new.xlsx", "finance"] {
        let refused = bob.import(&path(new), bytes(b"mine")).await;
        let Err(Error::Forbidden(message)) = refused else {
            panic!("{new}: {refused:?}");
        };
        assert!(message.contains("finance/"), "{message}");
        assert!(!message.to_lowercase().contains("q3"), "{message}");
    }

    // Read: viewed, never changed; the refusal names the folder.
    assert_eq!(read_content(bob, s.logo.id, None).await, b"approved logo");
    let refused = bob.check_out(s.logo.id, checkout_request()).await;
    assert_eq!(
        refused,
        Err(Error::Forbidden(
            "you can view brand/approved/, not change it".into()
        ))
    );
    assert!(matches!(
        bob.import(&path("brand/approved/new.psd"), bytes(b"x"))
            .await,
        Err(Error::Forbidden(_))
    ));
    // Several files, one of them hidden or read-only: nothing is taken.
    for with in [s.q3.id, s.logo.id] {
        let refused = bob
            .check_out_many(CheckoutsRequest {
                artifact_ids: vec![s.open.id, with],
                ttl_seconds: None,
                note: None,
            })
            .await;
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(f.artifact(s.open.id).await.lease, None, "nothing was taken");
    }
    // Asking the holder is reading: allowed on a read-only file.
    let alice = f
        .alice
        .check_out(s.logo.id, checkout_request())
        .await
        .unwrap();
    let (request, _) = bob.ask(s.logo.id, Some("may I?")).await.unwrap();
    assert_eq!(request.checkout_id, alice.id);

    // The agent writes its exports and reads the rest.
    let edit = f.agent.begin_edit(s.export.id, None).await.unwrap();
    f.agent
        .commit_edit(edit.id, bytes(b"hero export 2"))
        .await
        .unwrap();
    assert!(matches!(
        f.agent.begin_edit(s.open.id, None).await,
        Err(Error::Forbidden(m)) if m == "you can view this store, not change it"
    ));
    assert_eq!(f.agent.artifacts().await.unwrap().len(), 4);
}

/// Events, proposals, requests, check-outs and changes of a file the caller
/// cannot see are left out; an event page skips them and `next` moves on.
async fn what_happens_to_a_hidden_file_is_never_told(f: Fixture) {
    let s = studio_with_rules(&f).await;
    let before = f.last_seq().await;
    // Alice works on finance (her late check-in, after the admin's, makes
    // a proposal) and on the open file.
    let (hidden, proposal) = f
        .stale_proposal_after(f.admin.as_ref(), "finance/q4.xlsx", b"alice's q4")
        .await;
    f.check_out_and_in(s.open.id, b"open v2").await;
    let everything = f.all_events().await;
    let last = everything.last().unwrap().seq;

    let page = bobs_events_after(&f, before, 1000).await;
    assert_eq!(page.next, last, "the page moves past what it leaves out");
    assert!(!page.events.is_empty());
    assert!(
        page.events.iter().all(|e| e.artifact_id == Some(s.open.id)),
        "{:?}",
        page.events
    );
    // A page of nothing but hidden events is empty, and still moves on.
    let hidden_seqs: Vec<u64> = everything
        .iter()
        .filter(|e| e.artifact_id == Some(hidden.id))
        .map(|e| e.seq)
        .collect();
    let first = hidden_seqs[0];
    let page = bobs_events_after(&f, first - 1, 1).await;
    assert_eq!((page.events.len(), page.next), (0, first));

    let unknown = Error::NotFound(format!("no proposal {}", proposal.id));
    assert_eq!(f.bob.proposal(proposal.id).await, Err(unknown.clone()));
    assert!(all_proposals(f.bob.as_ref()).await.is_empty());
    assert_eq!(f.bob.reject_proposal(proposal.id).await, Err(unknown));
    assert_eq!(all_proposals(f.alice.as_ref()).await.len(), 1);

    // Bob's own check-out of a file moved into the hidden folder is no
    // longer his to see: not in his list, not by its id.
    let b = f.import("brand/moving.psd", b"m").await;
    let mine = f.bob.check_out(b.id, checkout_request()).await.unwrap();
    f.bob.cancel(mine.id).await.unwrap();
    f.admin
        .rename(b.id, &path("finance/moved.psd"))
        .await
        .unwrap();
    assert!(f
        .bob
        .checkouts(false)
        .await
        .unwrap()
        .iter()
        .all(|c| c.id != mine.id));
    assert_eq!(
        f.bob.checkout(mine.id).await,
        Err(Error::NotFound(format!("no check-out {}", mine.id)))
    );
}

/// Rules are checked when set: a group that does not exist, a folder that
/// is not one, a level that is not one, someone who is not a participant;
/// a refused set leaves the rules as they were. Only admins see or set them.
async fn rules_and_groups_are_checked_and_kept_whole(f: Fixture) {
    let admin = f.studio("user:admin");
    let first = vec![rule("finance/", "user:bob", "none")];
    admin.put_permission_rules(first.clone()).await.unwrap();

    let ghost = admin
        .put_permission_rules(vec![rule("brand/", "group:ghost", "read")])
        .await;
    assert!(matches!(ghost, Err(Error::Invalid(m)) if m.contains("ghost")));
    let stranger = admin
        .put_permission_rules(vec![rule("brand/", "user:mallory", "read")])
        .await;
    assert!(matches!(stranger, Err(Error::Invalid(_))), "{stranger:?}");
    for (folder, who, level) in [
        ("brand", "everyone", "read"),
        ("/abs/", "everyone", "read"),
        ("a//", "everyone", "read"),
        ("brand/", "root", "read"),
        ("brand/", "everyone", "admin"),
    ] {
        assert!(
            Rule::parse(folder, who, level).is_err(),
            "{folder} {who} {level}"
        );
    }
    assert_eq!(admin.permission_rules().await.unwrap(), first);

    // A group a rule names stays until the rule goes.
    let clients = Group {
        name: "clients".parse().unwrap(),
        members: vec![participant("user:bob"), participant("user:bob")],
    };
    let kept = admin.put_group(clients).await.unwrap();
    assert_eq!(kept.members, [participant("user:bob")], "members once each");
    let with_group = vec![
        rule("clients/", "group:clients", "write"),
        rule("", "group:clients", "read"),
    ];
    admin.put_permission_rules(with_group).await.unwrap();
    let name: GroupName = "clients".parse().unwrap();
    assert!(matches!(
        admin.delete_group(&name).await,
        Err(Error::Invalid(_))
    ));
    assert_eq!(admin.groups().await.unwrap().len(), 1);
    let nobody = Group {
        name: "ghosts".parse().unwrap(),
        members: vec![participant("user:mallory")],
    };
    assert!(matches!(
        admin.put_group(nobody).await,
        Err(Error::Invalid(_))
    ));
    admin.put_permission_rules(Vec::new()).await.unwrap();
    admin.delete_group(&name).await.unwrap();
    assert!(matches!(
        admin.delete_group(&name).await,
        Err(Error::NotFound(_))
    ));

    let bob = f.studio("user:bob");
    assert!(matches!(
        bob.permission_rules().await,
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(
        bob.put_permission_rules(Vec::new()).await,
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(bob.groups().await, Err(Error::Forbidden(_))));
    assert!(matches!(bob.members().await, Err(Error::Forbidden(_))));
    assert!(matches!(
        bob.invite(invite_for("eve")).await,
        Err(Error::Forbidden(_))
    ));
}

/// The precedence of API.md: the deepest folder with a rule for the caller
/// decides; on one folder the participant's rule beats a group's, which
/// beats everyone's; among groups the highest level wins.
async fn the_deepest_rule_for_the_caller_decides(f: Fixture) {
    for p in [
        "top.psd",
        "x/one.psd",
        "x/y/two.psd",
        "x/y/z/three.psd",
        "q/four.psd",
    ] {
        f.import(p, p.as_bytes()).await;
    }
    set_groups_and_rules(
        &f,
        &[("a", &["user:bob"]), ("b", &["user:bob", "user:alice"])],
        vec![
            rule("", "everyone", "read"),
            rule("x/", "everyone", "none"),
            rule("x/", "group:a", "read"),
            rule("x/", "group:b", "write"),
            rule("x/y/", "group:b", "none"),
            rule("x/y/", "user:bob", "read"),
            rule("x/y/z/", "everyone", "write"),
            rule("Q/", "user:alice", "none"),
        ],
    )
    .await;
    let seen = |artifacts: Vec<Artifact>| -> Vec<(String, Access)> {
        artifacts
            .into_iter()
            .map(|a| (a.path.to_string(), a.access))
            .collect()
    };
    let owned = |list: &[(&str, Access)]| -> Vec<(String, Access)> {
        list.iter().map(|(p, a)| (p.to_string(), *a)).collect()
    };
    use Access::{Read, Write};
    assert_eq!(
        seen(f.bob.artifacts().await.unwrap()),
        owned(&[
            ("q/four.psd", Read),
            ("top.psd", Read),
            ("x/one.psd", Write),
            ("x/y/two.psd", Read),
            ("x/y/z/three.psd", Write)
        ])
    );
    // Alice: `Q/` covers `q/` (one folder on Windows and macOS).
    assert_eq!(
        seen(f.alice.artifacts().await.unwrap()),
        owned(&[
            ("top.psd", Read),
            ("x/one.psd", Write),
            ("x/y/z/three.psd", Write)
        ])
    );
    // The agent is in no group: everyone's rules.
    assert_eq!(
        seen(f.agent.artifacts().await.unwrap()),
        owned(&[
            ("q/four.psd", Read),
            ("top.psd", Read),
            ("x/y/z/three.psd", Write)
        ])
    );
}

/// While the rules flip between two sets, every listing is answered under
/// one of them whole: bob sees the files of `left/` or of `right/`, never
/// both and never neither.
async fn a_rule_change_is_never_half_seen(f: Fixture) {
    for p in ["left/1.psd", "left/2.psd", "right/1.psd", "right/2.psd"] {
        f.import(p, p.as_bytes()).await;
    }
    let admin = f.studio("user:admin");
    let hide = |folder: &str| {
        vec![
            rule(folder, "user:bob", "none"),
            rule(folder, "user:alice", "none"),
        ]
    };
    admin.put_permission_rules(hide("right/")).await.unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..16)
        .map(|n| {
            let who: Arc<dyn Backend> = if n % 2 == 0 {
                f.bob.clone()
            } else {
                f.alice.clone()
            };
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut answers = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || answers == 0 {
                    let listed = who.artifacts().await.unwrap();
                    let folders: std::collections::BTreeSet<&str> = listed
                        .iter()
                        .map(|a| a.path.as_str().split('/').next().unwrap())
                        .collect();
                    assert_eq!(folders.len(), 1, "answered under a mix: {listed:?}");
                    assert_eq!(listed.len(), 2, "{listed:?}");
                    answers += 1;
                }
                answers
            })
        })
        .collect();
    for flip in 0..40 {
        let folder = if flip % 2 == 0 { "left/" } else { "right/" };
        admin.put_permission_rules(hide(folder)).await.unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answered = 0;
    for reader in readers {
        answered += reader.await.unwrap();
    }
    assert!(answered >= 16);
}

crate::contract!(
    a_none_folder_hides_its_files_and_a_read_folder_refuses_changes,
    what_happens_to_a_hidden_file_is_never_told,
    rules_and_groups_are_checked_and_kept_whole,
    the_deepest_rule_for_the_caller_decides,
    a_rule_change_is_never_half_seen,
);

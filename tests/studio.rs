//! A studio of its own (API.md "Joining a studio", "Folder permissions"), on
//! every backend: invites and the devices they make, groups, and folder
//! permissions decided in each operation's transaction: a file in a `none`
//! folder does not exist for the caller, one in a `read` folder cannot be
//! changed, and a rule change is never half seen.

use std::sync::Arc;
use std::time::Duration;

use leasedesk::model::*;
use leasedesk::{Backend, Error, Studio};

use crate::harness::*;

fn rule(folder: &str, who: &str, level: &str) -> Rule {
    Rule::parse(folder, who, level).unwrap()
}

fn invite_for(name: &str) -> InviteRequest {
    InviteRequest {
        name: name.into(),
        ..InviteRequest::default()
    }
}

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
    let admin = f.studio("user:admin");
    admin
        .put_group(Group {
            name: "clients".parse().unwrap(),
            members: vec![participant("user:bob")],
        })
        .await
        .unwrap();
    admin
        .put_permission_rules(vec![
            rule("finance/", "group:clients", "none"),
            rule("brand/approved/", "user:bob", "read"),
            rule("", "agent:resizer", "read"),
            rule("exports/", "agent:resizer", "write"),
        ])
        .await
        .unwrap();
    files
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
    let hidden = f.import("finance/q4.xlsx", b"q4 v1").await;
    let late = f.alice.check_out(hidden.id, for_seconds(60)).await.unwrap();
    f.advance(Duration::from_secs(3600));
    let admins = f
        .admin
        .check_out(hidden.id, checkout_request())
        .await
        .unwrap();
    f.admin.check_in(admins.id, bytes(b"q4 v2")).await.unwrap();
    let proposal = proposal_of(
        f.alice
            .check_in(late.id, bytes(b"alice's q4"))
            .await
            .unwrap(),
    );
    f.check_out_and_in(s.open.id, b"open v2").await;
    let everything = f.all_events().await;
    let last = everything.last().unwrap().seq;

    let page = f
        .bob
        .query_events(EventQuery {
            after: Some(before),
            limit: 1000,
            ..EventQuery::default()
        })
        .await
        .unwrap();
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
    let page = f
        .bob
        .query_events(EventQuery {
            after: Some(first - 1),
            limit: 1,
            ..EventQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((page.events.len(), page.next), (0, first));

    let unknown = Error::NotFound(format!("no proposal {}", proposal.id));
    assert_eq!(f.bob.proposal(proposal.id).await, Err(unknown.clone()));
    assert!(f
        .bob
        .proposals(ProposalFilter::default())
        .await
        .unwrap()
        .is_empty());
    assert_eq!(f.bob.reject_proposal(proposal.id).await, Err(unknown));
    assert_eq!(
        f.alice
            .proposals(ProposalFilter::default())
            .await
            .unwrap()
            .len(),
        1
    );

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
    let admin = f.studio("user:admin");
    for (name, members) in [
        ("a", vec!["user:bob"]),
        ("b", vec!["user:bob", "user:alice"]),
    ] {
        admin
            .put_group(Group {
                name: name.parse().unwrap(),
                members: members.into_iter().map(participant).collect(),
            })
            .await
            .unwrap();
    }
    for p in [
        "top.psd",
        "x/one.psd",
        "x/y/two.psd",
        "x/y/z/three.psd",
        "q/four.psd",
    ] {
        f.import(p, p.as_bytes()).await;
    }
    admin
        .put_permission_rules(vec![
            rule("", "everyone", "read"),
            rule("x/", "everyone", "none"),
            rule("x/", "group:a", "read"),
            rule("x/", "group:b", "write"),
            rule("x/y/", "group:b", "none"),
            rule("x/y/", "user:bob", "read"),
            rule("x/y/z/", "everyone", "write"),
            rule("Q/", "user:alice", "none"),
        ])
        .await
        .unwrap();
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

/// An invite makes a participant and its first device; a code works once,
/// lapses, and an unknown, used or lapsed code is one refusal. Inviting a
/// participant again adds a device; revoking one stops it alone, at once.
async fn invites_make_devices_that_are_revoked_one_by_one(f: Fixture) {
    let admin = f.studio("user:admin");
    let invite = admin.invite(invite_for("carol")).await.unwrap();
    assert_eq!(invite.participant, participant("user:carol"));
    assert_eq!(
        invite.expires_at,
        start_time() + chrono::Duration::days(7),
        "a week by default"
    );
    assert!(
        invite.code.len() >= 32,
        "at least 128 bits: {}",
        invite.code
    );

    // Typed by hand: case, spaces and dashes do not matter.
    let typed = invite.code.to_lowercase().replace('-', " ");
    let laptop = f.redeem(&typed, "carol's laptop").await.unwrap();
    assert_eq!(laptop.participant, participant("user:carol"));
    assert_eq!(laptop.device.name, "carol's laptop");
    let invalid = |r: leasedesk::Result<Redeemed>| matches!(r, Err(Error::InviteInvalid(_)));
    assert!(invalid(f.redeem(&invite.code, "again").await), "used");
    assert!(
        invalid(f.redeem("7KQ2-0000-0000-0000", "guess").await),
        "unknown"
    );
    let lapsing = admin
        .invite(InviteRequest {
            expires_seconds: Some(3600),
            ..invite_for("dave")
        })
        .await
        .unwrap();
    f.advance(Duration::from_secs(3601));
    assert!(invalid(f.redeem(&lapsing.code, "late").await), "lapsed");
    for bad in [0, 59, 31 * 24 * 3600] {
        let refused = admin
            .invite(InviteRequest {
                expires_seconds: Some(bad),
                ..invite_for("erin")
            })
            .await;
        assert!(
            matches!(refused, Err(Error::Invalid(_))),
            "{bad}: {refused:?}"
        );
    }

    // Carol works from her laptop, then adds her desktop herself.
    let (carol, carol_studio) = f.device(&laptop);
    assert_eq!(carol.me().await.unwrap(), participant("user:carol"));
    let own = carol_studio.invite_myself(None).await.unwrap();
    let desktop = f.redeem(&own.code, "studio desktop").await.unwrap();
    let (carol_desk, desk_studio) = f.device(&desktop);
    let mine = desk_studio.my_devices().await.unwrap();
    let names: Vec<&str> = mine.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["carol's laptop", "studio desktop"]);
    if f.server.is_some() {
        assert_eq!(mine.current, desktop.device.id, "the device asking");
        assert!(
            mine.devices[1].last_used_at.is_some(),
            "used to ask, kept to the minute"
        );
    }

    // Inviting her again as an admin is refused: her flags are not an admin's.
    let flagged = admin
        .invite(InviteRequest {
            admin: true,
            ..invite_for("carol")
        })
        .await;
    assert!(matches!(flagged, Err(Error::Invalid(_))), "{flagged:?}");

    // The admin sees both; revoking the laptop stops it alone.
    let members = admin.members().await.unwrap();
    let carol_row = members
        .iter()
        .find(|m| m.participant == participant("user:carol"))
        .unwrap();
    assert_eq!(carol_row.devices.len(), 2);
    assert!(!carol_row.admin && !carol_row.agent);
    admin
        .revoke_device(&participant("user:carol"), &laptop.device.id)
        .await
        .unwrap();
    if f.server.is_some() {
        assert!(matches!(carol.me().await, Err(Error::Unauthorized(_))));
    }
    assert!(matches!(
        f.store.authenticate(&laptop.token).await,
        Err(Error::Unauthorized(_))
    ));
    assert_eq!(carol_desk.me().await.unwrap(), participant("user:carol"));
    assert!(matches!(
        admin
            .revoke_device(&participant("user:carol"), &laptop.device.id)
            .await,
        Err(Error::NotFound(_))
    ));
    // Carol signs her desktop out herself; nobody else may revoke it.
    assert!(matches!(
        f.studio("user:bob")
            .revoke_device(&participant("user:carol"), &desktop.device.id)
            .await,
        Err(Error::Forbidden(_))
    ));
    desk_studio
        .revoke_my_device(&desktop.device.id)
        .await
        .unwrap();
    assert!(matches!(
        f.store.authenticate(&desktop.token).await,
        Err(Error::Unauthorized(_))
    ));
}

/// An admin lists the invites waiting to be used (never a code), with who
/// made each and until when, and revokes one: its code is then refused as
/// an unknown one. A used, lapsed or revoked invite is not listed and
/// cannot be revoked; nobody but an admin lists or revokes.
async fn open_invites_are_listed_and_revoked_by_an_admin(f: Fixture) {
    let admin = f.studio("user:admin");
    assert_eq!(admin.invites().await.unwrap(), [], "none yet");
    let dana = admin.invite(invite_for("dana")).await.unwrap();
    let erin = admin
        .invite(InviteRequest {
            admin: true,
            expires_seconds: Some(3600),
            ..invite_for("erin")
        })
        .await
        .unwrap();
    let used = admin.invite(invite_for("fay")).await.unwrap();
    f.redeem(&used.code, "fay's laptop").await.unwrap();
    let bob_studio = f.studio("user:bob");
    let bobs_own = bob_studio.invite_myself(None).await.unwrap();

    // Made within a tick of the clock: compared by whom they are for.
    let mut listed = admin.invites().await.unwrap();
    listed.sort_by(|a, b| a.participant.cmp(&b.participant));
    let who: Vec<(&str, bool, Option<&str>)> = listed
        .iter()
        .map(|i| {
            (
                i.participant.as_str(),
                i.admin,
                i.made_by.as_ref().map(|p| p.as_str()),
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            ("user:bob", false, Some("user:bob")),
            ("user:dana", false, Some("user:admin")),
            ("user:erin", true, Some("user:admin")),
        ],
        "the used one is gone; bob's own for another device is listed"
    );
    let (bobs_row, dana_row, erin_row) = (&listed[0], &listed[1], &listed[2]);
    assert_eq!(bobs_row.expires_at, bobs_own.expires_at);
    assert_eq!(dana_row.expires_at, dana.expires_at);
    assert_eq!(erin_row.expires_at, erin.expires_at);
    let listed_json = serde_json::to_string(&listed).unwrap();
    for code in [&dana.code, &erin.code, &bobs_own.code] {
        assert!(!listed_json.contains(code.as_str()), "no code is listed");
    }

    // Bob is no admin: he neither lists nor revokes, not even his own.
    for refused in [
        bob_studio.invites().await.map(|_| ()),
        bob_studio.revoke_invite(bobs_row.id).await,
        bob_studio.revoke_invite(dana_row.id).await,
    ] {
        assert!(matches!(refused, Err(Error::Forbidden(_))), "{refused:?}");
    }
    assert_eq!(admin.invites().await.unwrap().len(), 3, "nothing revoked");

    // Revoked: not listed, its code an unknown one's, and not revoked twice.
    admin.revoke_invite(dana_row.id).await.unwrap();
    let invalid = |r: leasedesk::Result<Redeemed>| matches!(r, Err(Error::InviteInvalid(_)));
    assert!(invalid(f.redeem(&dana.code, "dana's laptop").await));
    for gone in [dana_row.id, InviteId::new()] {
        assert!(matches!(
            admin.revoke_invite(gone).await,
            Err(Error::NotFound(_))
        ));
    }
    // Lapsed: gone from the list, and not revocable.
    f.advance(Duration::from_secs(3601));
    let left: Vec<String> = admin
        .invites()
        .await
        .unwrap()
        .iter()
        .map(|i| i.participant.to_string())
        .collect();
    assert_eq!(left, ["user:bob"]);
    assert!(matches!(
        admin.revoke_invite(erin_row.id).await,
        Err(Error::NotFound(_))
    ));
    // The one left still works.
    let desktop = f.redeem(&bobs_own.code, "bob's desktop").await.unwrap();
    assert_eq!(desktop.participant, participant("user:bob"));
    assert_eq!(admin.invites().await.unwrap(), []);
}

/// A data folder from before invites had ids (schema 11) opens with its
/// invites kept: the one waiting listed with an id of its own (from its
/// code's hash, never its code) and no maker, revocable; the used one not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invites_from_before_their_ids_are_listed_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let code = "7KQ2-ABCD-EFGH-JKMN-7KQ2-ABCD-EFGH-JKMN";
    let now = chrono::Utc::now().timestamp_millis();
    let hash = blake3::hash(code.replace('-', "").as_bytes())
        .to_hex()
        .to_string();
    {
        let db = rusqlite::Connection::open(dir.path().join("leasedesk.db")).unwrap();
        for sql in [
            include_str!("../crates/store-sqlite/migrations/0001_leases.sql"),
            include_str!("../crates/store-sqlite/migrations/0002_tokens.sql"),
            include_str!("../crates/store-sqlite/migrations/0003_path_keys.sql"),
            include_str!("../crates/store-sqlite/migrations/0004_blob_names.sql"),
            include_str!("../crates/store-sqlite/migrations/0005_messages.sql"),
            include_str!("../crates/store-sqlite/migrations/0006_requests.sql"),
            include_str!("../crates/store-sqlite/migrations/0007_changes.sql"),
            include_str!("../crates/store-sqlite/migrations/0008_studio.sql"),
            include_str!("../crates/store-sqlite/migrations/0009_folders.sql"),
            include_str!("../crates/store-sqlite/migrations/0010_search_walk.sql"),
            include_str!("../crates/store-sqlite/migrations/0011_chunk_lists.sql"),
        ] {
            db.execute_batch(sql).unwrap();
        }
        db.pragma_update(None, "user_version", 11).unwrap();
        db.execute(
            "INSERT INTO invites (hash, participant, admin, created_at, expires_at)
             VALUES (?1, 'user:dana', 0, ?2, ?3), ('used', 'user:fay', 0, ?2, ?3)",
            rusqlite::params![hash, now, now + 86_400_000],
        )
        .unwrap();
        db.execute("UPDATE invites SET used_at = ?1 WHERE hash = 'used'", [now])
            .unwrap();
    }
    let store = leasedesk::Bundled::open(dir.path()).expect("the migration runs");
    let owner = store.as_owner();
    let listed = owner.invites().await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].participant, participant("user:dana"));
    assert_eq!(listed[0].made_by, None, "made before makers were kept");
    assert_eq!(listed[0].id.to_string().replace('-', ""), hash[..32]);
    owner.revoke_invite(listed[0].id).await.unwrap();
    assert!(matches!(
        store.redeem_invite(code, "dana's laptop", None).await,
        Err(Error::InviteInvalid(_))
    ));
    // Invites made now get ids of their own, and still work.
    let fresh = owner.invite(invite_for("erin")).await.unwrap();
    assert_eq!(owner.invites().await.unwrap().len(), 1);
    store
        .redeem_invite(&fresh.code, "erin's laptop", None)
        .await
        .unwrap();
}

/// Two computers redeem one code at the same moment: exactly one gets a token.
async fn a_code_redeemed_twice_at_once_gives_one_token(f: Fixture) {
    let admin = f.studio("user:admin");
    let f = Arc::new(f);
    for round in 0..10 {
        let invite = admin
            .invite(invite_for(&format!("twin{round}")))
            .await
            .unwrap();
        let tries: Vec<_> = (0..2)
            .map(|n| {
                let (f, code) = (f.clone(), invite.code.clone());
                tokio::spawn(async move { f.redeem(&code, &format!("computer {n}")).await })
            })
            .collect();
        let mut tokens = Vec::new();
        for t in tries {
            match t.await.unwrap() {
                Ok(redeemed) => tokens.push(redeemed.token),
                // The loser is refused; from one address (all of a served
                // fixture's tries), past 10 failures a minute, as too many.
                Err(Error::InviteInvalid(_) | Error::TooMany(_)) => {}
                Err(e) => panic!("round {round}: {e}"),
            }
        }
        assert_eq!(tokens.len(), 1, "round {round}");
        assert!(f.store.authenticate(&tokens[0]).await.is_ok());
    }
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
    invites_make_devices_that_are_revoked_one_by_one,
    open_invites_are_listed_and_revoked_by_an_admin,
    a_code_redeemed_twice_at_once_gives_one_token,
    a_rule_change_is_never_half_seen,
);

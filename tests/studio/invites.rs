//! Invites and the devices they make: codes that work once and lapse,
//! devices revoked one by one, invites listed and revoked by an admin
//! (those from before invites had ids too), and a code redeemed twice at
//! once.

use std::sync::Arc;
use std::time::Duration;

use leasedesk::model::*;
use leasedesk::{Error, Studio};

use super::*;
use crate::harness::*;

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
            include_str!("../../crates/store-sqlite/migrations/0001_leases.sql"),
            include_str!("../../crates/store-sqlite/migrations/0002_tokens.sql"),
            include_str!("../../crates/store-sqlite/migrations/0003_path_keys.sql"),
            include_str!("../../crates/store-sqlite/migrations/0004_blob_names.sql"),
            include_str!("../../crates/store-sqlite/migrations/0005_messages.sql"),
            include_str!("../../crates/store-sqlite/migrations/0006_requests.sql"),
            include_str!("../../crates/store-sqlite/migrations/0007_changes.sql"),
            include_str!("../../crates/store-sqlite/migrations/0008_studio.sql"),
            include_str!("../../crates/store-sqlite/migrations/0009_folders.sql"),
            include_str!("../../crates/store-sqlite/migrations/0010_search_walk.sql"),
            include_str!("../../crates/store-sqlite/migrations/0011_chunk_lists.sql"),
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

crate::contract!(
    invites_make_devices_that_are_revoked_one_by_one,
    open_invites_are_listed_and_revoked_by_an_admin,
    a_code_redeemed_twice_at_once_gives_one_token,
);

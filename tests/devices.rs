//! A check-out remembers the device it was made on (`docs/API-additions.md`):
//! on a server, the device of the token that made it, by id and name, in
//! every answer and in both stores' rows; none on the bundled store, nor for
//! check-outs made before devices were kept. The desk tells a check-out made
//! on another device, which cannot be checked in here until its copy is got
//! here (`desk::held_elsewhere`).

use std::collections::HashSet;

use leasedesk::model::*;
use leasedesk::workspace::LocalState;
use leasedesk::{Backend, Bundled};

use crate::harness::*;

/// Alice's second computer, "alice-desktop", joined from an invite she made
/// herself: its backend (its token over HTTP on a served fixture) and the
/// device as redeemed.
async fn alices_desktop(f: &Fixture) -> (std::sync::Arc<dyn Backend>, Redeemed) {
    let invite = f.studio("user:alice").invite_myself(None).await.unwrap();
    let desktop = f.redeem(&invite.code, "alice-desktop").await.unwrap();
    let (backend, _) = f.device(&desktop);
    (backend, desktop)
}

/// What a check-out made on the desktop carries: that device on a server,
/// none on the bundled store (no tokens there).
fn desktop_ref(f: &Fixture, desktop: &Redeemed) -> Option<DeviceRef> {
    f.server.as_ref().map(|_| DeviceRef {
        id: desktop.device.id.clone(),
        name: "alice-desktop".into(),
    })
}

/// A check-out made through a device's token carries that device's id and
/// name: in the answer that made it, read back from another device of the
/// same person (her list, the check-out by id), over plain HTTP as JSON,
/// after an extend and a cancel, for several taken at once, and in the
/// store's own rows (SQLite or PostgreSQL). Revoking the device later does
/// not take its name off the check-outs made on it.
async fn a_check_out_carries_the_device_it_was_made_on(f: Fixture) {
    let a = f.import("brand/hero.psd", b"v1").await;
    let b = f.import("brand/logo.ai", b"logo").await;
    let c = f.import("brand/type.otf", b"font").await;
    let (desktop, redeemed) = alices_desktop(&f).await;
    let expected = desktop_ref(&f, &redeemed);

    let made = desktop.check_out(a.id, checkout_request()).await.unwrap();
    assert_eq!(made.device, expected, "as made");
    let listed = f.alice.checkouts(true).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].device, expected,
        "in her list, from another device"
    );
    assert_eq!(f.alice.checkout(made.id).await.unwrap().device, expected);
    assert_eq!(
        f.alice.extend(made.id, None).await.unwrap().device,
        expected,
        "extended from another device, it stays the desktop's"
    );
    if let Some(server) = &f.server {
        let json = json_of(
            reqwest::Client::new()
                .get(format!("{}/v1/checkouts/{}", server.base, made.id))
                .bearer_auth(server.token("user:alice")),
        )
        .await;
        assert_eq!(
            json["device"],
            serde_json::json!({ "id": redeemed.device.id, "name": "alice-desktop" }),
            "{json}"
        );
    }

    // Made from her first device (the fixture's token): that one, not the desktop.
    let here = f.alice.check_out(c.id, checkout_request()).await.unwrap();
    match &f.server {
        Some(server) => {
            let first = leasedesk::token::id_of(server.token("user:alice")).unwrap();
            assert_eq!(here.device.as_ref().map(|d| d.id.as_str()), Some(first));
            assert_ne!(here.device, expected);
        }
        None => assert_eq!(here.device, None, "the bundled store has no devices"),
    }

    let several = desktop
        .check_out_many(CheckoutsRequest {
            artifact_ids: vec![b.id],
            ttl_seconds: None,
            note: None,
        })
        .await
        .unwrap();
    assert_eq!(several[0].device, expected, "taken with others");

    let cancelled = f.alice.cancel(made.id).await.unwrap();
    assert_eq!(cancelled.device, expected, "closed, it keeps its device");
    let stored = sql_at(
        f.dir.path(),
        f.database.as_deref(),
        &format!(
            "SELECT COALESCE(device_name, '(none)') FROM checkouts WHERE id = '{}'",
            made.id
        ),
    )
    .unwrap();
    let name = expected.as_ref().map_or("(none)", |d| d.name.as_str());
    assert_eq!(stored, [name], "the store's row");

    // The desktop revoked: its check-outs still say where they were made.
    f.studio("user:alice")
        .revoke_my_device(&redeemed.device.id)
        .await
        .unwrap();
    let kept = f.alice.checkout(several[0].id).await.unwrap();
    assert_eq!(kept.device, expected);
}

/// The desk of alice's first computer: on a served fixture it knows its
/// device (its token's id), as the app's does.
fn alices_desk(f: &Fixture) -> leasedesk::desk::Desk {
    let device = f
        .server
        .as_ref()
        .and_then(|s| leasedesk::token::id_of(s.token("user:alice")))
        .map(str::to_owned);
    desk_in(
        &f.dir.path().join("alice"),
        f.alice.clone(),
        f.clock.clone(),
    )
    .with_device(device)
}

/// A file checked out on alice's desktop, whose head she already has here
/// read-only: on a server the desk says it cannot be checked in here (the
/// work is on the desktop); on the bundled store, with no device recorded,
/// the copy here decides. Once she gets her copy to edit here, it is
/// checked in here as usual. A file checked out on the desktop that was
/// never here cannot be checked in here on any backend, and the tray's set
/// says so too; one checked out here can.
async fn a_check_out_made_on_another_device_is_checked_in_here_once_got_here(f: Fixture) {
    let desk = alices_desk(&f);
    let a = f.import("brand/hero.psd", b"v1").await;
    let b = f.import("brand/logo.ai", b"logo").await;
    let c = f.import("brand/type.otf", b"font").await;
    desk.update(a.id).await.unwrap();
    assert_eq!(desk.row(a.id).await.unwrap().local, LocalState::UpToDate);
    let (desktop, _) = alices_desktop(&f).await;

    let on_desktop = desktop.check_out(a.id, checkout_request()).await.unwrap();
    let row = desk.row(a.id).await.unwrap();
    assert_eq!(row.mine.as_ref().map(|c| c.id), Some(on_desktop.id));
    assert_eq!(row.local, LocalState::UpToDate);
    assert_eq!(
        row.elsewhere,
        f.server.is_some(),
        "a read-only copy here is not the desktop's work"
    );
    let listed = rows_of(&desk).await;
    assert_eq!(listed["brand/hero.psd"], f.server.is_some(), "as listed");

    desk.get_copy(on_desktop.id, None).await.unwrap();
    let row = desk.row(a.id).await.unwrap();
    assert!(!row.elsewhere, "got here to edit: checked in here");
    let local = desk.workspace().local_path(&a.path).unwrap();
    std::fs::write(&local, b"v2 from here").unwrap();
    let closed = desk
        .check_in(on_desktop.id, None, Watch::default())
        .await
        .unwrap();
    assert_committed(&closed.checkout.result, 2);

    // Never here: held elsewhere on every backend.
    let never_here = desktop.check_out(b.id, checkout_request()).await.unwrap();
    let row = desk.row(b.id).await.unwrap();
    assert_eq!(row.local, LocalState::NotLocal);
    assert!(row.elsewhere);
    // Checked out here: here.
    let made_here = desk
        .check_out(c.id, checkout_request(), None)
        .await
        .unwrap();
    assert!(!desk.row(c.id).await.unwrap().elsewhere);
    let checkouts = desk.my_checkouts().await.unwrap();
    assert_eq!(checkouts.len(), 2);
    assert_eq!(
        desk.held_elsewhere(&checkouts).await.unwrap(),
        HashSet::from([never_here.id]),
        "the tray's: {made_here:?}"
    );
}

/// Each listed file's path and whether your check-out of it is held elsewhere.
async fn rows_of(desk: &leasedesk::desk::Desk) -> std::collections::HashMap<String, bool> {
    desk.overview().await.unwrap();
    desk.folder_rows("brand/", 0, 1000)
        .await
        .unwrap()
        .rows
        .into_iter()
        .map(|row| (row.artifact.path.to_string(), row.elsewhere))
        .collect()
}

crate::contract!(
    a_check_out_carries_the_device_it_was_made_on,
    a_check_out_made_on_another_device_is_checked_in_here_once_got_here,
);

/// What came after check-outs kept their device, undone in either store:
/// the tables of later migrations and the device's columns.
const AFTER_DEVICES_UNDONE: &str = "DROP TABLE review_threads;
     DROP TABLE review_comments;
     DROP TABLE reviews;
     DROP TABLE review_requests;
     DROP TABLE inbox_items;
     DROP TABLE inbox_counter;
     DROP TABLE inbox_reads;
     DROP TABLE secrets;
     DROP TABLE lfs_objects;
     DROP TABLE held_paths;
     DROP TABLE upload_pieces;
     DROP TABLE uploads;
     DROP TABLE failed_redeems;
     ALTER TABLE checkouts DROP COLUMN device_name;
     ALTER TABLE checkouts DROP COLUMN device_id;";

/// A data folder from before check-outs kept their device (its schema as
/// migration 0012 left it: the later ones undone): it opens, its check-outs
/// carry none, and a check-out made through a token after the migration
/// carries that token's device.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_folder_from_before_devices_opens_with_none_then_records_them() {
    let dir = tempfile::tempdir().unwrap();
    let (old, token) = made_before_devices(&Bundled::open(dir.path()).unwrap()).await;
    let db = rusqlite::Connection::open(dir.path().join("leasedesk.db")).unwrap();
    // SQLite's own later migration (PostgreSQL had it before devices).
    let lease_paths_undone = "DROP TRIGGER leases_take_path;
        ALTER TABLE leases DROP COLUMN path_key;
        ALTER TABLE leases DROP COLUMN path;";
    db.execute_batch(&format!(
        "{lease_paths_undone} {AFTER_DEVICES_UNDONE} PRAGMA user_version = 12;"
    ))
    .unwrap();
    drop(db);
    let store = Bundled::open(dir.path()).unwrap();
    // Its lease took its file's path in the migration that gave leases one:
    // the folder counts it held.
    let top = store
        .acting_as(participant("user:alice"))
        .folders("")
        .await
        .unwrap();
    let brand = top.folders.iter().find(|f| f.path == "brand/").unwrap();
    assert_eq!(brand.held, 1, "{top:?}");
    opened_after_devices(store, old, &token).await;
}

/// The same on PostgreSQL: a team's database as the migration before
/// devices left it (its 11th; the later ones undone).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_database_from_before_devices_opens_with_none_then_records_them() {
    let dir = tempfile::tempdir().unwrap();
    let location = leasedesk::Location {
        data: dir.path().to_owned(),
        database: Some(postgres_database()),
        blobs: None,
    };
    let open = |location: leasedesk::Location| {
        tokio::task::spawn_blocking(move || {
            Bundled::open_at(&location, leasedesk::Options::default()).unwrap()
        })
    };
    let store = open(location.clone()).await.unwrap();
    let (old, token) = made_before_devices(&store).await;
    drop(store);
    sql_at(
        dir.path(),
        location.database.as_deref(),
        &format!("{AFTER_DEVICES_UNDONE} UPDATE leasedesk_schema SET version = 11;"),
    )
    .unwrap();
    opened_after_devices(open(location).await.unwrap(), old, &token).await;
}

/// A check-out as an older version made it (on its device, whose record the
/// test then takes away with the columns), and alice's token.
async fn made_before_devices(store: &Bundled) -> (CheckoutId, String) {
    let (_, token) = store
        .add_account(&participant("user:alice"), false)
        .unwrap();
    let alice = store.acting_as(participant("user:alice"));
    let a = alice
        .import(&path("brand/hero.psd"), bytes(b"v1"))
        .await
        .unwrap();
    alice
        .import(&path("brand/logo.ai"), bytes(b"logo"))
        .await
        .unwrap();
    let old = alice
        .on_device(leasedesk::token::id_of(&token).unwrap())
        .check_out(a.id, checkout_request())
        .await
        .unwrap();
    assert!(old.device.is_some());
    (old.id, token)
}

/// After the migration: the old check-out has no device, a new one made
/// through the token has the token's ("cli", as `user add` files it).
async fn opened_after_devices(store: Bundled, old: CheckoutId, token: &str) {
    let alice = store.acting_as(participant("user:alice"));
    assert_eq!(alice.checkout(old).await.unwrap().device, None);
    let logo = alice
        .artifact_by_path(&path("brand/logo.ai"))
        .await
        .unwrap();
    let id = leasedesk::token::id_of(token).unwrap();
    let new = alice
        .clone()
        .on_device(id)
        .check_out(logo.id, checkout_request())
        .await
        .unwrap();
    assert_eq!(
        new.device,
        Some(DeviceRef {
            id: id.to_owned(),
            name: "cli".into()
        })
    );
    assert_eq!(alice.checkout(new.id).await.unwrap().device, new.device);
}

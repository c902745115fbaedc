//! Paths that every designer's computer can hold (API.md, Objects): the
//! strict rules on import and rename, the collisions a folder cannot hold,
//! and artifacts stored before those rules, which stay readable, are never
//! written to disk, and are fixed by an admin's rename.

use std::path::Path;
use std::sync::Arc;

use leasedesk::desk::Desk;
use leasedesk::model::*;
use leasedesk::workspace::{self, LocalState, Workspace};
use leasedesk::{Backend, Error};

use crate::harness::*;

/// A path as a client may send it, unchecked: the backend must refuse it.
fn unchecked(p: &str) -> RepoPath {
    RepoPath::stored(p).expect("within the old rules")
}

/// Every example of issue 9 and the rule it breaks.
const UNSAFE: &[&str] = &[
    "C:/Users/Public/evil.bat",
    "C:x",
    "x.psd:stream",
    "CON",
    "nul.txt",
    "Con.tar.gz",
    "brand/aux/hero.psd",
    "COM1",
    "lpt9.psd",
    "COM\u{b9}.psd",
    "CONIN$",
    "conout$.log",
    "PRN .txt",
    "trail.",
    "trail ",
    "folder./hero.psd",
    "evil\u{202E}gpj.exe",
    "zero\u{200B}width.psd",
    "\u{FEFF}bom.psd",
    "a<b.psd",
    "a>b.psd",
    "say\"hi\".psd",
    "a|b.psd",
    "why?.psd",
    "star*.psd",
    "COM0",
    "CHARAC~1.PSD",
    "brand/PROGRA~2/hero.psd",
];

async fn every_unsafe_path_is_refused_on_import(f: Fixture) {
    for p in UNSAFE {
        match f.alice.import(&unchecked(p), bytes(b"x")).await {
            Err(Error::Invalid(message)) => assert!(!message.is_empty()),
            other => panic!("{p:?} was not refused as invalid: {other:?}"),
        }
    }
    assert!(
        f.alice.artifacts().await.unwrap().is_empty(),
        "nothing was stored"
    );
    // Ordinary names are still fine, dots inside and all.
    f.import("brand/hero.v2.psd", b"x").await;
    f.import("Über/café.psd", b"x").await;
    f.import("draft~two.psd", b"x").await;
    f.import("a~1.psd.bak", b"x").await;
}

/// Pairs one folder on Windows or macOS cannot hold together.
const COLLIDING: &[(&str, &str)] = &[
    ("Case.psd", "case.psd"),
    ("\u{e9}t\u{e9}.psd", "e\u{301}te\u{301}.psd"),
    ("Straße.psd", "STRASSE.psd"),
    // One file on NTFS, whose upper-case table maps both to `I`.
    ("\u{131}.psd", "i.psd"),
    ("a", "a/b"),
    ("a", "a/b.psd"),
    ("Brand", "brand/deep/hero.psd"),
];

async fn paths_one_folder_cannot_hold_are_refused_in_both_orders(f: Fixture) {
    for (n, (one, other)) in COLLIDING.iter().enumerate() {
        for (order, (first, second)) in [(one, other), (other, one)].into_iter().enumerate() {
            let (first, second) = (
                format!("p{n}{order}/{first}"),
                format!("p{n}{order}/{second}"),
            );
            let kept = f.import(&first, b"first").await;
            match f.alice.import(&unchecked(&second), bytes(b"second")).await {
                Err(Error::Exists(_)) => {}
                other => panic!("{second:?} beside {first:?} was not refused: {other:?}"),
            }
            let listed = f.alice.artifacts().await.unwrap();
            let here: Vec<_> = listed
                .iter()
                .filter(|a| a.path.as_str().starts_with(&format!("p{n}{order}/")))
                .collect();
            assert_eq!(here.len(), 1, "only {first:?} is stored");
            assert_eq!(here[0].id, kept.id);
        }
    }
}

/// A non-UTF-8 `path` after percent-decoding is 422, not U+FFFD stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_that_is_not_utf8_over_http_is_invalid_and_stores_nothing() {
    let f = remote_fixture().await;
    let server = f.server.as_ref().unwrap();
    let (base, token) = (&server.base, server.token("user:alice"));
    let client = reqwest::Client::new();
    for query in ["path=%FF.psd", "path=brand%2F%C3.psd", "path=%ED%A0%80.psd"] {
        let answer = client
            .post(format!("{base}/v1/artifacts?{query}"))
            .bearer_auth(token)
            .body("bytes")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 422, "{query}");
        let body: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(body["error"], "invalid", "{query}");
        let lookup = client
            .get(format!("{base}/v1/artifacts?{query}"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(lookup.status(), 422, "a lookup of {query}");
    }
    assert!(f.alice.artifacts().await.unwrap().is_empty());
}

/// Writes an artifact at `p` into the store's database as an older
/// version stored it (no path rules but the old ones), sharing the blob of an
/// artifact imported normally; its path key is what migration 0003 fills in.
async fn store_legacy(f: &Fixture, p: &str, data: &[u8]) -> ArtifactId {
    let seed = f
        .import(&format!("seed-{}.psd", uuid::Uuid::new_v4()), data)
        .await;
    let id = ArtifactId::new();
    let at = start_time().timestamp_millis();
    let quoted = |text: &str| format!("'{}'", text.replace('\'', "''"));
    f.sql(&format!(
        "INSERT INTO artifacts (id, path, path_key, head_version, created_at) VALUES ('{id}', {}, {}, 1, {at})",
        quoted(p),
        quoted(&collision_key(p)),
    ));
    f.sql(&format!(
        "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at)
         VALUES ('{id}', 1, '{}', {}, 'user:alice', {at})",
        seed.head.digest.as_str(),
        seed.head.size,
    ));
    id
}

fn desk_for(f: &Fixture, backend: &Arc<dyn Backend>, name: &str) -> Desk {
    let dir = f.dir.path().join(name);
    let workspace =
        Workspace::open(&dir.join("files"), &dir.join("state"), f.clock.clone()).unwrap();
    Desk::new(backend.clone(), workspace, f.clock.clone())
}

/// Every file under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap().path();
            if entry.is_dir() {
                folders.push(entry);
            } else {
                found.push(entry.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found
}

const LEGACY: &[&str] = &[
    "C:x",
    "CON",
    "trail.",
    "brand/x.psd:stream",
    "evil\u{202E}gpj.exe",
];

async fn a_legacy_unsafe_path_stays_listed_and_readable(f: Fixture) {
    for p in LEGACY {
        let id = store_legacy(&f, p, b"legacy bytes").await;
        let listed = f.bob.artifacts().await.unwrap();
        let row = listed.iter().find(|a| a.id == id).expect("listed");
        assert_eq!(row.path.as_str(), *p);
        assert!(row.path.placement_problem().is_some(), "{p:?}");
        assert_eq!(f.bob.artifact(id).await.unwrap().path.as_str(), *p);
        assert_eq!(f.bob.artifact_by_path(&unchecked(p)).await.unwrap().id, id);
        assert_eq!(f.bob.versions(id).await.unwrap().len(), 1);
        assert_eq!(
            read_content(f.bob.as_ref(), id, None).await,
            b"legacy bytes"
        );
    }
}

async fn a_legacy_unsafe_path_is_shown_as_unplaceable_in_the_desk(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let id = store_legacy(&f, "C:x", b"legacy").await;
    alice.overview().await.unwrap();
    let files = alice.folder_rows("", 0, 100).await.unwrap().rows;
    let row = files.iter().find(|r| r.artifact.id == id).unwrap();
    assert_eq!(row.local, LocalState::Unplaceable);
    assert_eq!(row.local_path, None);
    let seed = files.iter().find(|r| r.artifact.id != id).unwrap();
    assert_eq!(
        seed.local,
        LocalState::NotLocal,
        "other files are as before"
    );
    let alone = alice.row(id).await.unwrap();
    assert_eq!(alone.local, LocalState::Unplaceable);
}

async fn checking_out_a_legacy_unsafe_path_takes_no_lease_and_writes_nothing(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    for p in LEGACY {
        let id = store_legacy(&f, p, b"legacy").await;
        let before = f.last_seq().await;
        match alice.check_out(id, checkout_request(), None).await {
            Err(Error::Invalid(message)) => assert!(
                message.contains("leasedesk rename"),
                "says how to fix it: {message}"
            ),
            other => panic!("{p:?} was checked out: {other:?}"),
        }
        match alice.update(id).await {
            Err(Error::Invalid(_)) => {}
            other => panic!("{p:?} was downloaded: {other:?}"),
        }
        assert_eq!(f.artifact(id).await.lease, None, "no lease was taken");
        assert_eq!(f.kinds_after(before).await, Vec::<String>::new());
        assert!(f.alice.checkouts(true).await.unwrap().is_empty());
    }
    let files = f.dir.path().join("alice/files");
    assert_eq!(
        files_under(&files),
        Vec::<String>::new(),
        "nothing was written"
    );
}

async fn an_admin_renames_a_legacy_path_and_no_one_else_may(f: Fixture) {
    let id = store_legacy(&f, "C:x", b"legacy").await;
    f.import("taken.psd", b"t").await;
    let fixed = path("fixed/x.psd");

    match f.bob.rename(id, &fixed).await {
        Err(Error::Forbidden(_)) => {}
        other => panic!("a non-admin renamed: {other:?}"),
    }
    for colliding in ["TAKEN.psd", "taken.psd/x", "C:y"] {
        match f.admin.rename(id, &unchecked(colliding)).await {
            Err(Error::Exists(_)) | Err(Error::Invalid(_)) => {}
            other => panic!("renamed to {colliding:?}: {other:?}"),
        }
    }
    let held = f.alice.check_out(id, checkout_request()).await.unwrap();
    match f.admin.rename(id, &fixed).await {
        Err(Error::ArtifactBusy {
            lease: Some(lease), ..
        }) => {
            assert_eq!(lease.checkout_id, Some(held.id))
        }
        other => panic!("renamed while held: {other:?}"),
    }
    f.alice.cancel(held.id).await.unwrap();
    assert_eq!(
        f.artifact(id).await.path.as_str(),
        "C:x",
        "refusals changed nothing"
    );

    let before = f.last_seq().await;
    let renamed = f.admin.rename(id, &fixed).await.unwrap();
    assert_eq!(renamed.path, fixed);
    let events = f.all_events().await;
    let event = events.iter().find(|e| e.seq > before).unwrap();
    assert_eq!(event.kind, "artifact.renamed");
    assert_eq!(event.artifact_id, Some(id));
    assert_eq!(event.data["from"], "C:x");
    assert_eq!(event.data["to"], "fixed/x.psd");
    // A case variant of its own path is its own name, not a collision.
    let recased = f.admin.rename(id, &path("fixed/X.psd")).await.unwrap();
    assert_eq!(recased.path.as_str(), "fixed/X.psd");

    let alice = desk_for(&f, &f.alice, "alice");
    let row = alice.row(id).await.unwrap();
    assert_eq!(row.local, LocalState::NotLocal);
    let out = alice.check_out(id, checkout_request(), None).await.unwrap();
    let local = alice.workspace().local_path(&out.checkout.path).unwrap();
    assert_eq!(std::fs::read(local).unwrap(), b"legacy");
}

crate::contract!(
    every_unsafe_path_is_refused_on_import,
    paths_one_folder_cannot_hold_are_refused_in_both_orders,
    a_legacy_unsafe_path_stays_listed_and_readable,
    a_legacy_unsafe_path_is_shown_as_unplaceable_in_the_desk,
    checking_out_a_legacy_unsafe_path_takes_no_lease_and_writes_nothing,
    an_admin_renames_a_legacy_path_and_no_one_else_may,
);

/// A store made by a version before path keys, with legacy paths that now
/// collide: migration 0003 keys them, fails on none, and keeps all readable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_from_before_path_keys_opens_with_its_colliding_paths() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = rusqlite::Connection::open(dir.path().join("leasedesk.db")).unwrap();
        db.execute_batch(include_str!(
            "../crates/store-sqlite/migrations/0001_leases.sql"
        ))
        .unwrap();
        db.execute_batch(include_str!(
            "../crates/store-sqlite/migrations/0002_tokens.sql"
        ))
        .unwrap();
        db.pragma_update(None, "user_version", 2).unwrap();
        for (n, p) in ["Case.psd", "case.psd", "C:x", "e\u{301}.psd"]
            .iter()
            .enumerate()
        {
            let id = ArtifactId::new().to_string();
            db.execute(
                "INSERT INTO artifacts (id, path, head_version, created_at) VALUES (?1, ?2, 1, 0)",
                rusqlite::params![id, p],
            )
            .unwrap();
            db.execute(
                "INSERT INTO versions (artifact_id, version, digest, size, author, committed_at)
                 VALUES (?1, 1, ?2, 1, 'user:alice', 0)",
                rusqlite::params![id, digest(&[n as u8]).as_str()],
            )
            .unwrap();
        }
    }
    let store = leasedesk::Bundled::open(dir.path()).expect("the migration does not fail");
    store
        .add_account(&participant("user:alice"), false)
        .unwrap();
    let alice = store.acting_as(participant("user:alice"));
    let listed = listed_paths(&alice).await;
    assert_eq!(listed.len(), 4, "{listed:?}");
    for p in ["Case.psd", "case.psd", "C:x"] {
        let found = alice.artifact_by_path(&unchecked(p)).await.unwrap();
        assert_eq!(found.path.as_str(), p, "the exact path wins over its key");
    }
    for p in ["CASE.psd", "\u{e9}.psd", "case.psd/inner.psd"] {
        match alice.import(&unchecked(p), bytes(b"new")).await {
            Err(Error::Exists(_)) => {}
            other => panic!("{p:?} beside legacy keys: {other:?}"),
        }
    }
}

/// The one join of a repo path onto the workspace folder, fed what Windows
/// would read as a drive, a root, a stream, a device or a changed name.
#[test]
fn the_workspace_joins_a_path_only_under_its_root() {
    let root = Path::new("/home/ada/Leasedesk");
    for hostile in [
        "C:/Users/Public/evil.bat",
        "C:x",
        "C:",
        "x.psd:stream",
        "..\\x",
        "a\\..\\..\\x",
        "\\\\server\\share\\x",
        "\\\\?\\C:\\x",
        "/etc/passwd",
        "../x",
        "a/../../x",
        "./x",
        "a//b",
        "",
        "CON",
        "nul.txt",
        "brand/Aux.tar.gz",
        "trail.",
        "trail ",
        "evil\u{202E}gpj.exe",
        "nul\0.psd",
    ] {
        match workspace::join_under(root, hostile) {
            Err(Error::Invalid(message)) => assert!(
                message.contains("leasedesk rename"),
                "{hostile:?}: {message}"
            ),
            other => panic!("{hostile:?} was joined: {other:?}"),
        }
    }
    let joined = workspace::join_under(root, "brand/hero.v2.psd").unwrap();
    assert_eq!(joined, root.join("brand").join("hero.v2.psd"));
    assert!(joined.starts_with(root));
}

/// macOS hands the watcher NFD names; they map to the stored NFC path.
#[test]
fn a_file_named_in_nfd_maps_to_its_nfc_repo_path() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(
        &dir.path().join("files"),
        &dir.path().join("state"),
        leasedesk::clock::Clock::manual(start_time()),
    )
    .unwrap();
    let nfd = ws.root().join("brand").join("e\u{301}te\u{301}.psd");
    let mapped = ws.repo_path(&nfd).expect("a repo path");
    assert_eq!(mapped.as_str(), "brand/\u{e9}t\u{e9}.psd");
    assert_eq!(path("e\u{301}.psd").as_str(), "\u{e9}.psd", "stored in NFC");
}

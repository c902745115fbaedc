//! Bad input gets a precise error and loses nothing.

use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Error, Upload};

use crate::harness::*;

#[test]
fn bad_paths_are_refused_with_the_reason() {
    let long = "a/".repeat(600);
    for bad in [
        "",
        "/etc/passwd",
        "a/../b",
        "..",
        "./a",
        "a//b",
        "a/",
        "a\\b",
        "a\0b",
        "a\nb",
        "a\u{7f}b",
        long.as_str(),
    ] {
        // A noun's own refusal, as every caller receives it.
        let refused = bad.parse::<RepoPath>().map_err(Error::from);
        assert!(
            matches!(refused, Err(Error::Invalid(_))),
            "{bad:?} must be refused: {refused:?}"
        );
    }
    for good in [
        "hero.psd",
        "brand/2026/hero final.psd",
        "céline/maquette.indd",
        ".hidden/x",
    ] {
        assert!(good.parse::<RepoPath>().is_ok(), "{good:?} is a good path");
    }
}

#[test]
fn bad_participants_and_digests_are_refused() {
    for bad in ["alice", "user:", "robot:x", "user:a b", "user:a:b"] {
        assert!(bad.parse::<Participant>().is_err(), "{bad:?}");
    }
    for bad in [
        "",
        "blake3:",
        "sha256:00",
        &format!("blake3:{}", "A".repeat(64)),
    ] {
        assert!(bad.parse::<Digest>().is_err(), "{bad:?}");
    }
}

async fn an_upload_whose_declared_digest_differs_stores_nothing(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let seq = f.last_seq().await;
    let file = f.dir.path().join("work.psd");
    std::fs::write(&file, b"what is on disk").unwrap();
    for upload in [
        bytes(b"what is on disk").with_digest(digest(b"what was meant")),
        Upload::file(&file).with_digest(digest(b"what was meant")),
    ] {
        let refused = f.alice.check_in(c.id, upload).await;
        let Err(Error::DigestMismatch { expected, actual }) = refused else {
            panic!("expected DigestMismatch, got {refused:?}");
        };
        assert_eq!(
            (expected, actual),
            (digest(b"what was meant"), digest(b"what is on disk"))
        );
    }
    let imported = f
        .alice
        .import(&path("b.psd"), bytes(b"b").with_digest(digest(b"c")))
        .await;
    assert!(
        matches!(imported, Err(Error::DigestMismatch { .. })),
        "{imported:?}"
    );

    assert_eq!(
        f.kinds_after(seq).await,
        Vec::<String>::new(),
        "nothing was recorded"
    );
    assert_eq!(
        f.alice.checkout(c.id).await.unwrap(),
        c,
        "the check-out is still open and unchanged"
    );
    assert!(f.artifact(a.id).await.lease.is_some(), "the lease is kept");
    let hex = digest(b"what is on disk").hex().to_owned();
    assert!(!f.stored_blobs().contains(&hex), "no blob was stored");
    assert_eq!(f.unfinished_uploads(), 0, "no temporary file is left");
    assert!(matches!(
        f.alice.artifact_by_path(&path("b.psd")).await,
        Err(Error::NotFound(_))
    ));

    // With the right digest the same check-in goes through.
    let done = f
        .alice
        .check_in(
            c.id,
            Upload::file(&file).with_digest(digest(b"what is on disk")),
        )
        .await
        .unwrap();
    assert_committed(&done.result, 2);
}

async fn importing_an_existing_path_is_refused_and_keeps_the_artifact(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let again = f.bob.import(&path("a.psd"), bytes(b"other")).await;
    assert!(
        matches!(&again, Err(Error::Exists(m)) if m.contains("a.psd")),
        "{again:?}"
    );
    assert_eq!(f.artifact(a.id).await.head.digest, digest(b"v1"));
}

async fn a_missing_local_file_is_not_found_and_changes_nothing(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let refused = f
        .alice
        .check_in(c.id, Upload::file(f.dir.path().join("nope.psd")))
        .await;
    assert!(matches!(refused, Err(Error::NotFound(_))), "{refused:?}");
    assert_eq!(
        f.alice.checkout(c.id).await.unwrap().state,
        CheckoutState::Open
    );
}

async fn unknown_ids_are_not_found(f: Fixture) {
    f.import("a.psd", b"v1").await;
    assert!(matches!(
        f.alice.artifact(ArtifactId::new()).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        f.alice.versions(ArtifactId::new()).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        f.alice.checkout(CheckoutId::new()).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        f.alice.extend(CheckoutId::new(), None).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        f.alice.check_in(CheckoutId::new(), bytes(b"x")).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        f.agent.commit_edit(EditId::new(), bytes(b"x")).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        f.alice.accept_proposal(ProposalId::new()).await,
        Err(Error::NotFound(_))
    ));
    let a = f.alice.artifact_by_path(&path("a.psd")).await.unwrap();
    assert!(matches!(
        f.alice.content(a.id, Some(7)).await,
        Err(Error::NotFound(_))
    ));
}

async fn a_store_reopens_with_everything_in_it(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let events = f.all_events().await;
    let reopened = Bundled::open_at(&f.location(), Default::default())
        .unwrap()
        .acting_as(participant("user:alice"));
    assert_eq!(reopened.checkout(c.id).await.unwrap(), c);
    assert_eq!(all_events(&reopened).await, events);
}

crate::contract!(
    an_upload_whose_declared_digest_differs_stores_nothing,
    importing_an_existing_path_is_refused_and_keeps_the_artifact,
    a_missing_local_file_is_not_found_and_changes_nothing,
    unknown_ids_are_not_found,
    a_store_reopens_with_everything_in_it,
);

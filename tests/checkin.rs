//! Rules 7–12: checking a file in.

use leasedesk::model::*;
use leasedesk::Error;

use crate::harness::*;

async fn rule8_a_lapsed_lease_nobody_took_is_renewed_by_the_checkin_which_commits_directly(
    f: Fixture,
) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(3 * HOUR);
    assert_eq!(f.artifact(a.id).await.lease, None, "the lease lapsed");
    let seq = f.last_seq().await;

    let done = f.alice.check_in(c.id, bytes(b"v2")).await.unwrap();
    assert_eq!(done.result, committed(2, b"v2"));
    assert_eq!(
        f.kinds_after(seq).await,
        [
            "lease.expired",
            "lease.acquired",
            "version.committed",
            "lease.released",
            "checkout.closed"
        ]
    );
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, b"v2");
}

async fn rule9_an_unchanged_file_commits_nothing(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let done = f.check_out_and_in(a.id, b"v1").await;
    assert_eq!(done.result, unchanged(1, b"v1"));
    assert_eq!(done.state, CheckoutState::Closed);
    assert_eq!(
        f.alice.versions(a.id).await.unwrap().len(),
        1,
        "no version was made"
    );
    assert_eq!(f.artifact(a.id).await.lease, None, "the lease is released");
    let kinds = f.kinds_after(0).await;
    assert!(
        !kinds[1..].contains(&"version.committed".to_string()),
        "{kinds:?}"
    );
}

async fn rule7_and_10_a_checkin_commits_on_the_records_base_and_ends_the_checkout(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let done = f.check_out_and_in(a.id, b"v2").await;
    assert_eq!(done.result, committed(2, b"v2"));
    assert_eq!(done.state, CheckoutState::Closed);
    let head = f.artifact(a.id).await;
    assert_eq!(
        (head.head.version, head.head.author.as_str()),
        (2, "user:alice")
    );
    assert_eq!(head.lease, None, "rule 12: the lease is released");
    let committed = f.last_event("version.committed").await;
    assert_eq!(
        committed.data["base_version"], 1,
        "the base is the record's version"
    );
    assert_eq!(
        f.alice.checkouts(true).await.unwrap(),
        vec![],
        "no open check-out remains"
    );
}

/// What a check-in of `content` that made version `version` answers.
fn committed(version: u64, content: &[u8]) -> Option<CheckinResult> {
    Some(CheckinResult::Committed {
        version,
        digest: digest(content),
    })
}

/// What a check-in of `content` that matched version `version` answers.
fn unchanged(version: u64, content: &[u8]) -> Option<CheckinResult> {
    Some(CheckinResult::Unchanged {
        version,
        digest: digest(content),
    })
}

/// `a.psd`, checked out by Alice for a minute and then, an hour on, by Bob
/// with `bob_request`: Alice's check-in now comes too late.
async fn alice_lapses_and_bob_checks_out(
    f: &Fixture,
    bob_request: CheckoutRequest,
) -> (Artifact, Checkout, Checkout) {
    let a = f.import("a.psd", b"v1").await;
    let alice = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    let bob = f.bob.check_out(a.id, bob_request).await.unwrap();
    (a, alice, bob)
}

/// Alice checks in her work on check-out `c`.
async fn alices_work(f: &Fixture, c: CheckoutId) -> Checkout {
    f.alice.check_in(c, bytes(b"alice's work")).await.unwrap()
}

async fn rule11_a_stale_checkin_while_someone_else_holds_the_lease_becomes_a_proposal(f: Fixture) {
    let (a, alice, bob) = alice_lapses_and_bob_checks_out(&f, with_note("mine now")).await;

    let done = alices_work(&f, alice.id).await;
    let proposal = proposal_of(done.clone());
    assert_eq!(proposal.base_version, 1, "base = the head");
    assert_eq!(
        proposal.test_digest,
        digest(b"v1"),
        "test = the head's digest"
    );
    assert_eq!(
        proposal.provenance,
        Provenance {
            version: 1,
            digest: digest(b"v1")
        }
    );
    assert_eq!(proposal.digest, digest(b"alice's work"));
    assert_eq!(proposal.checkout_id, Some(alice.id));
    assert_eq!(proposal.state, ProposalState::Open);
    assert_eq!(done.state, CheckoutState::Closed);

    // Bob's check-out is untouched: his lease, his record, the head.
    let now = f.artifact(a.id).await;
    assert_eq!(now.lease.as_ref().map(|l| &l.holder), Some(&bob.holder));
    assert_eq!(now.head.version, 1);
    assert_eq!(f.bob.checkout(bob.id).await.unwrap(), bob);
    let bob_done = f.bob.check_in(bob.id, bytes(b"bob's work")).await.unwrap();
    assert_eq!(bob_done.result, committed(2, b"bob's work"));
}

async fn rule11_a_stale_checkin_after_someone_committed_and_released_becomes_a_proposal(
    f: Fixture,
) {
    let (a, alice, bob) = alice_lapses_and_bob_checks_out(&f, checkout_request()).await;
    f.bob.check_in(bob.id, bytes(b"v2 by bob")).await.unwrap();
    assert_eq!(
        f.artifact(a.id).await.lease,
        None,
        "nobody holds the file now"
    );

    let done = alices_work(&f, alice.id).await;
    let proposal = proposal_of(done.clone());
    assert_eq!(proposal.base_version, 2, "base = the head, bob's version");
    assert_eq!(proposal.test_digest, digest(b"v2 by bob"));
    assert_eq!(
        proposal.provenance,
        Provenance {
            version: 1,
            digest: digest(b"v1")
        },
        "provenance = the record's"
    );
    let head = f.artifact(a.id).await;
    assert_eq!(
        (head.head.version, head.head.digest),
        (2, digest(b"v2 by bob")),
        "bob's version stays the head"
    );
    assert_eq!(
        head.lease, None,
        "the lease alice took for the check-in is released"
    );
}

async fn rule12_a_retry_with_the_same_file_returns_the_same_result_and_changes_nothing(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    for (name, content) in [("committed", &b"v2"[..]), ("unchanged", &b"v1"[..])] {
        let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
        let first = f.alice.check_in(c.id, bytes(content)).await.unwrap();
        let seq = f.last_seq().await;
        let versions = f.alice.versions(a.id).await.unwrap();
        let retry = f.alice.check_in(c.id, bytes(content)).await.unwrap();
        assert_eq!(retry, first, "{name}: the retry returns the first result");
        assert_eq!(
            f.kinds_after(seq).await,
            Vec::<String>::new(),
            "{name}: nothing happened"
        );
        assert_eq!(f.alice.versions(a.id).await.unwrap(), versions, "{name}");
    }
}

async fn rule12_a_retry_of_a_proposal_returns_the_same_proposal(f: Fixture) {
    let (a, alice, _bob) = alice_lapses_and_bob_checks_out(&f, checkout_request()).await;
    let first = f.alice.check_in(alice.id, bytes(b"work")).await.unwrap();
    let retry = f.alice.check_in(alice.id, bytes(b"work")).await.unwrap();
    assert_eq!(retry, first);
    let open = proposals_of(&*f.alice, a.id, None).await;
    assert_eq!(open.len(), 1, "the retry made no second proposal");
}

async fn rule12_a_closed_checkout_with_other_bytes_is_refused_and_never_extended(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.check_out_and_in(a.id, b"v2").await;
    let seq = f.last_seq().await;

    let other = f.alice.check_in(c.id, bytes(b"v3")).await;
    assert!(matches!(other, Err(Error::CheckoutClosed(_))), "{other:?}");
    let extend = f.alice.extend(c.id, None).await;
    assert!(
        matches!(extend, Err(Error::CheckoutClosed(_))),
        "{extend:?}"
    );
    assert_eq!(
        f.artifact(a.id).await.lease,
        None,
        "a closed check-out takes no lease"
    );
    assert_eq!(f.kinds_after(seq).await, Vec::<String>::new());
    assert_eq!(f.alice.versions(a.id).await.unwrap().len(), 2);
    let blob = f
        .dir
        .path()
        .join("blobs")
        .join(&digest(b"v3").hex()[..2])
        .join(digest(b"v3").hex());
    assert!(!blob.exists(), "a refused check-in stores nothing");
}

async fn checkin_of_a_local_file_streams_it_and_the_content_reads_back(f: Fixture) {
    let a = f.import("big.blend", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    // 5 MiB and a bit: several chunks, and a last chunk that is not full.
    let data: Vec<u8> = (0..5 * 1024 * 1024 + 12345)
        .map(|i: u32| (i * 7 % 251) as u8)
        .collect();
    let file = f.dir.path().join("work.blend");
    std::fs::write(&file, &data).unwrap();
    let done = f
        .alice
        .check_in(c.id, leasedesk::Upload::file(&file))
        .await
        .unwrap();
    assert_eq!(done.result, committed(2, &data));
    assert_eq!(f.artifact(a.id).await.head.size, data.len() as u64);
    assert!(read_content(f.alice.as_ref(), a.id, Some(2)).await == data);
    assert_eq!(read_content(f.alice.as_ref(), a.id, Some(1)).await, b"v1");
}

async fn rule11_a_checkin_is_stale_once_someone_else_took_the_file_even_without_committing(
    f: Fixture,
) {
    let (a, alice, bob) = alice_lapses_and_bob_checks_out(&f, checkout_request()).await;
    f.bob.cancel(bob.id).await.unwrap();

    let extend = f.alice.extend(alice.id, None).await;
    assert!(
        matches!(&extend, Err(Error::CheckoutClosed(m)) if m.contains("someone else took")),
        "{extend:?}"
    );
    let done = alices_work(&f, alice.id).await;
    proposal_of(done); // a proposal still, or a panic
    assert_eq!(f.artifact(a.id).await.head.version, 1);
}

async fn rule8_a_lapse_recorded_by_the_sweeper_is_still_renewed_by_the_checkin(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    assert_eq!(f.store.sweep().unwrap(), 1);
    let extended = f.alice.extend(c.id, Some(60)).await.unwrap();
    assert_eq!(
        extended.expires_at,
        start_time() + chrono::TimeDelta::seconds(3660)
    );
    f.advance(HOUR);
    f.store.sweep().unwrap();
    let done = f.alice.check_in(c.id, bytes(b"v2")).await.unwrap();
    assert_committed(&done.result, 2);
}

async fn a_download_lands_whole_when_its_digest_matches_and_not_at_all_otherwise(f: Fixture) {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 241) as u8).collect();
    let a = f.import("a.psd", &data).await;
    let local = f.dir.path().join("workspace");
    std::fs::create_dir_all(&local).unwrap();
    let dest = local.join("a.psd");
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let progress: leasedesk::backend::Progress = {
        let seen = seen.clone();
        std::sync::Arc::new(move |n| seen.store(n, std::sync::atomic::Ordering::SeqCst))
    };
    let head = leasedesk::backend::download(f.bob.as_ref(), a.id, None, &dest, Some(progress))
        .await
        .unwrap();
    assert_eq!(head.digest, digest(&data));
    assert!(std::fs::read(&dest).unwrap() == data);
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::SeqCst),
        data.len() as u64,
        "progress reached the end"
    );

    // Bytes that went bad in storage never replace the local copy.
    std::fs::write(&dest, b"my local work").unwrap();
    let mut bad = data.clone();
    bad[1_000_000] ^= 1;
    f.overwrite_blob(&digest(&data), &bad).await;
    let refused = leasedesk::backend::download(f.bob.as_ref(), a.id, None, &dest, None).await;
    assert!(
        matches!(refused, Err(Error::DigestMismatch { .. })),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read(&dest).unwrap(),
        b"my local work",
        "the local file is untouched"
    );
    assert_eq!(
        std::fs::read_dir(&local).unwrap().count(),
        1,
        "no temporary file is left"
    );
}

async fn an_upload_reports_its_progress(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let c = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let file = f.dir.path().join("work.psd");
    std::fs::write(&file, vec![5u8; 2_500_000]).unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sending = std::sync::Arc::new(std::sync::Mutex::new(None));
    let upload = {
        let (seen, sending) = (seen.clone(), sending.clone());
        leasedesk::Upload::file(&file)
            .with_progress(move |n| seen.lock().unwrap().push(n))
            .with_notes(move |note| {
                if let leasedesk::backend::TransferNote::Sending { bytes, .. } = note {
                    *sending.lock().unwrap() = Some(bytes);
                }
            })
    };
    f.alice.check_in(c.id, upload).await.unwrap();
    let seen = seen.lock().unwrap();
    // Over a link, progress counts the bytes the upload sends: what it said
    // it would send, here the whole file (the server has none of it).
    let to_send = sending.lock().unwrap().unwrap_or(2_500_000);
    assert_eq!(to_send, 2_500_000);
    assert_eq!(seen.last(), Some(&to_send), "{seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "progress only grows: {seen:?}"
    );
}

crate::contract!(
    a_download_lands_whole_when_its_digest_matches_and_not_at_all_otherwise,
    an_upload_reports_its_progress,
    rule8_a_lapsed_lease_nobody_took_is_renewed_by_the_checkin_which_commits_directly,
    rule9_an_unchanged_file_commits_nothing,
    rule7_and_10_a_checkin_commits_on_the_records_base_and_ends_the_checkout,
    rule11_a_stale_checkin_while_someone_else_holds_the_lease_becomes_a_proposal,
    rule11_a_stale_checkin_after_someone_committed_and_released_becomes_a_proposal,
    rule12_a_retry_with_the_same_file_returns_the_same_result_and_changes_nothing,
    rule12_a_retry_of_a_proposal_returns_the_same_proposal,
    rule12_a_closed_checkout_with_other_bytes_is_refused_and_never_extended,
    checkin_of_a_local_file_streams_it_and_the_content_reads_back,
    rule11_a_checkin_is_stale_once_someone_else_took_the_file_even_without_committing,
    rule8_a_lapse_recorded_by_the_sweeper_is_still_renewed_by_the_checkin,
);

//! Descriptions of versions, proposals and edits (over HTTP and the CLI too),
//! one file's history paged back, and a proposal's bytes for every reviewer.

use super::*;

async fn descriptions_are_kept_with_versions_proposals_and_edits(f: Fixture) {
    let a = f
        .alice
        .import(
            &path("brand/hero.psd"),
            bytes(b"v1").with_message("First cut"),
        )
        .await
        .unwrap();
    assert_eq!(a.head.message.as_deref(), Some("First cut"));

    let mine = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    let described = "Relit the night scene — 2ᵉ pass, 50% warmer";
    f.alice
        .check_in(mine.id, bytes(b"v2").with_message(described))
        .await
        .unwrap();
    let versions = f.bob.versions(a.id).await.unwrap();
    let messages: Vec<_> = versions.iter().map(|h| h.message.as_deref()).collect();
    assert_eq!(messages, [Some(described), Some("First cut")]);

    // A late check-in keeps its description on the proposal, and accepting
    // it gives the new version that description.
    let late = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    let bob = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.bob.check_in(bob.id, bytes(b"v3")).await.unwrap();
    let done = f
        .alice
        .check_in(late.id, bytes(b"alice's late").with_message("Sky retouch"))
        .await
        .unwrap();
    let Some(CheckinResult::Proposal { proposal }) = done.result else {
        panic!("a proposal, not {:?}", done.result);
    };
    assert_eq!(proposal.message.as_deref(), Some("Sky retouch"));
    assert_eq!(
        f.bob
            .proposal(proposal.id)
            .await
            .unwrap()
            .message
            .as_deref(),
        Some("Sky retouch")
    );
    f.alice.accept_proposal(proposal.id).await.unwrap();
    let head = f.artifact(a.id).await.head;
    assert_eq!(
        (head.version, head.message.as_deref()),
        (4, Some("Sky retouch"))
    );
    assert_eq!(
        f.bob.versions(a.id).await.unwrap()[1].message,
        None,
        "a version checked in without a description has none"
    );

    let edit = f.agent.begin_edit(a.id, None).await.unwrap();
    f.agent
        .commit_edit(edit.id, bytes(b"resized").with_message("Resized to 4K"))
        .await
        .unwrap();
    assert_eq!(
        f.artifact(a.id).await.head.message.as_deref(),
        Some("Resized to 4K")
    );
}

async fn an_overlong_description_is_refused_and_the_checkout_stays_open(f: Fixture) {
    let a = f.import("a.psd", b"v1").await;
    let mine = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    let overlong = "é".repeat(MAX_MESSAGE_BYTES / 2) + "!";
    let refused = f
        .alice
        .check_in(mine.id, bytes(b"v2").with_message(overlong.clone()))
        .await;
    assert!(
        matches!(&refused, Err(Error::Invalid(m)) if m.contains("4096")),
        "{refused:?}"
    );
    let open = f.alice.checkouts(true).await.unwrap();
    assert_eq!(open.iter().map(|c| c.id).collect::<Vec<_>>(), [mine.id]);
    assert_eq!(f.artifact(a.id).await.head.version, 1);
    assert_eq!(f.named_blobs().len(), 1, "nothing was stored");
    let refused_import = f
        .alice
        .import(&path("b.psd"), bytes(b"b").with_message(overlong))
        .await;
    assert!(matches!(refused_import, Err(Error::Invalid(_))));
    assert!(matches!(
        f.alice.artifact_by_path(&path("b.psd")).await,
        Err(Error::NotFound(_))
    ));

    // Exactly the limit is accepted.
    let longest = "é".repeat(MAX_MESSAGE_BYTES / 2);
    f.alice
        .check_in(mine.id, bytes(b"v2").with_message(longest.clone()))
        .await
        .unwrap();
    assert_eq!(f.artifact(a.id).await.head.message, Some(longest));
}

async fn history_pages_back_with_before_and_holds_one_artifacts_events(f: Fixture) {
    let a = f.import("a.psd", b"a1").await;
    let b = f.import("b.psd", b"b1").await;
    for round in 0..4u8 {
        for id in [a.id, b.id] {
            check_out_and_in_as(f.alice.as_ref(), id, &[round, 7]).await;
        }
    }
    let only_a = |events: &[Event]| events.iter().all(|e| e.artifact_id == Some(a.id));
    let forward = f
        .bob
        .query_events(EventQuery {
            artifact: Some(a.id),
            after: Some(0),
            limit: 1000,
            ..EventQuery::default()
        })
        .await
        .unwrap();
    assert!(only_a(&forward.events) && !forward.events.is_empty());
    let everything = f.all_events().await;
    let a_seqs: Vec<u64> = everything
        .iter()
        .filter(|e| e.artifact_id == Some(a.id))
        .map(|e| e.seq)
        .collect();
    assert_eq!(
        forward.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        a_seqs
    );

    // Newest first, three at a time, until nothing is left.
    let mut back = Vec::new();
    let mut before = u64::MAX;
    loop {
        let page = f
            .bob
            .query_events(EventQuery {
                artifact: Some(a.id),
                before: Some(before),
                limit: 3,
                ..EventQuery::default()
            })
            .await
            .unwrap();
        if page.events.is_empty() {
            assert_eq!(page.next, before, "an empty page leaves the cursor");
            break;
        }
        assert!(page.events.len() <= 3 && only_a(&page.events));
        assert!(page.events.windows(2).all(|w| w[0].seq > w[1].seq));
        assert_eq!(page.next, page.events.last().unwrap().seq);
        before = page.next;
        back.extend(page.events.iter().map(|e| e.seq));
    }
    assert_eq!(back, a_seqs.iter().rev().copied().collect::<Vec<_>>());

    let both = f
        .bob
        .query_events(EventQuery {
            after: Some(1),
            before: Some(9),
            limit: 10,
            ..EventQuery::default()
        })
        .await;
    assert!(matches!(both, Err(Error::Invalid(_))), "{both:?}");

    // Every artifact's events, before a seq, newest first.
    let last = everything.last().unwrap().seq;
    let newest = f
        .bob
        .query_events(EventQuery {
            before: Some(last),
            limit: 2,
            ..EventQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        newest.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [last - 1, last - 2]
    );
}

async fn a_reviewer_who_is_not_the_author_fetches_a_proposal_and_its_bytes(f: Fixture) {
    let (_, proposal) = f.stale_proposal("hero.psd", b"alice's version").await;
    // Bob is neither its author nor an admin.
    let seen = f.bob.proposal(proposal.id).await.unwrap();
    assert_eq!(seen, proposal);
    let (described, mut reader) = f.bob.proposal_content(proposal.id).await.unwrap();
    assert_eq!(described.digest, digest(b"alice's version"));
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).await.unwrap();
    assert_eq!(bytes, b"alice's version");
    let unknown = ProposalId::new();
    assert!(matches!(
        f.bob.proposal(unknown).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        f.bob.proposal_content(unknown).await,
        Err(Error::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_description_header_is_422_and_stores_nothing() {
    let f = remote_fixture().await;
    let server = f.server.as_ref().unwrap();
    let mine = import_checked_out(f.alice.as_ref(), "a.psd", b"v1").await;
    let token = server.token("user:alice");
    let client = reqwest::Client::new();
    let too_long = "%C3%A9".repeat(MAX_MESSAGE_BYTES / 2) + "x";
    let bad: [&[u8]; 5] = [
        b"half %E",
        b"not hex %ZZ",
        b"%FF%FE is not UTF-8",
        "raw é".as_bytes(),
        too_long.as_bytes(),
    ];
    for value in bad {
        let answer = client
            .post(format!("{}/v1/checkouts/{}/checkin", server.base, mine.id))
            .bearer_auth(token)
            .header(
                "Leasedesk-Message",
                reqwest::header::HeaderValue::from_bytes(value).unwrap(),
            )
            .body(b"v2".to_vec())
            .send()
            .await
            .unwrap();
        let status = answer.status();
        let body: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid")),
            "{:?}: {body}",
            String::from_utf8_lossy(value)
        );
        let checkout = f.alice.checkout(mine.id).await.unwrap();
        assert_eq!(checkout.state, CheckoutState::Open);
        assert_eq!(f.named_blobs().len(), 1, "nothing was stored");
        assert_eq!(blob_files(f.dir.path()).len(), 1, "no blob was left");
    }
    let answer = client
        .post(format!("{}/v1/checkouts/{}/checkin", server.base, mine.id))
        .bearer_auth(token)
        .header(
            "Leasedesk-Message",
            "Relit%20the%20sky%20%E2%80%94%20warmer+",
        )
        .body(b"v2".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        f.artifact(mine.artifact_id).await.head.message.as_deref(),
        Some("Relit the sky — warmer+"),
        "percent-decoded, and a + is a plus"
    );
}

#[test]
fn the_cli_describes_shows_history_and_gets_any_version() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let cli = |who: &str, args: &[&str]| {
        crate::harness::leasedesk()
            .current_dir(dir.path())
            .arg("--data")
            .arg(&data)
            .args(["--as", who])
            .args(args)
            .output()
            .expect("run leasedesk")
    };
    let ok = |who: &str, args: &[&str]| {
        let out = cli(who, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let file = dir.path().join("hero.psd");
    std::fs::write(&file, b"first").unwrap();
    let file = file.to_str().unwrap();
    ok(
        "user:alice",
        &["import", "brand/hero.psd", file, "-m", "First cut"],
    );
    ok(
        "user:alice",
        &["checkout", "brand/hero.psd", "--note", "sky"],
    );
    std::fs::write(file, b"second").unwrap();
    ok(
        "user:alice",
        &["checkin", "brand/hero.psd", file, "--message", "Warmer sky"],
    );

    let history = ok("user:bob", &["history", "brand/hero.psd"]);
    let lines: Vec<&str> = history.lines().collect();
    let position = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} in:\n{history}"))
    };
    assert!(position("version 2 by user:alice") < position("checked out version 1 (sky)"));
    assert!(position("checked out version 1 (sky)") < position("version 1 by user:alice"));
    assert!(history.contains("Warmer sky") && history.contains("First cut"));
    assert!(!history.contains("lease.acquired"), "{history}");

    let old = dir.path().join("hero-v1.psd");
    let got = ok(
        "user:bob",
        &[
            "get",
            "brand/hero.psd",
            "--version",
            "1",
            "-o",
            old.to_str().unwrap(),
        ],
    );
    assert!(got.contains("saved version 1"), "{got}");
    assert_eq!(std::fs::read(&old).unwrap(), b"first");
    let again = cli(
        "user:bob",
        &["get", "brand/hero.psd", "-o", old.to_str().unwrap()],
    );
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
    assert_eq!(std::fs::read(&old).unwrap(), b"first", "never overwritten");
    let missing = cli(
        "user:bob",
        &["get", "brand/hero.psd", "--version", "9", "-o", "v9.psd"],
    );
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no version 9"));
    assert!(!dir.path().join("v9.psd").exists());
}

crate::contract!(
    descriptions_are_kept_with_versions_proposals_and_edits,
    an_overlong_description_is_refused_and_the_checkout_stays_open,
    history_pages_back_with_before_and_holds_one_artifacts_events,
    a_reviewer_who_is_not_the_author_fetches_a_proposal_and_its_bytes,
);

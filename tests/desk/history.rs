//! A file's history: versions, check-outs and how each ended, paged back;
//! a version opened as a read-only copy and restored into your check-out.

use super::*;

/// Each entry as one line, to compare a whole history at once.
fn said(entry: &HistoryEntry) -> String {
    match entry {
        HistoryEntry::Version { head, .. } => format!(
            "v{} by {}: {}",
            head.version,
            head.author.name(),
            head.message.as_deref().unwrap_or("-")
        ),
        HistoryEntry::Checkout(c) => format!(
            "{} checked out v{} ({}): {:?}{}",
            c.who.name(),
            c.version,
            c.note.as_deref().unwrap_or("-"),
            c.ended,
            c.lease_lost
                .as_ref()
                .map_or(String::new(), |lost| format!(" after {lost:?}"))
        ),
        HistoryEntry::Proposal { proposal, .. } => format!(
            "proposal by {} against v{}: {:?}",
            proposal.author.name(),
            proposal.base_version,
            proposal.state
        ),
        HistoryEntry::Renamed { from, to, .. } => format!("renamed {from} -> {to}"),
    }
}

/// Versions with their descriptions, and every way a check-out ends:
/// checked in, cancelled, lapsed and then kept as a proposal, broken by an
/// admin, still open; a proposal with its state; a rename.
async fn the_history_shows_versions_check_outs_and_how_each_ended(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f
        .alice
        .import(&path("hero.psd"), bytes(b"v1").with_message("First layout"))
        .await
        .unwrap();
    let sky = f.alice.check_out(a.id, with_note("sky")).await.unwrap();
    f.alice
        .check_in(sky.id, bytes(b"v2").with_message("Warmer sky"))
        .await
        .unwrap();
    let crop = f.bob.check_out(a.id, with_note("crop")).await.unwrap();
    f.bob.cancel(crop.id).await.unwrap();
    let late = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(std::time::Duration::from_secs(120));
    let bobs = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.bob
        .check_in(bobs.id, bytes(b"v3").with_message("Print crop"))
        .await
        .unwrap();
    let kept = f.alice.check_in(late.id, bytes(b"late sky")).await.unwrap();
    let Some(CheckinResult::Proposal { proposal }) = kept.result else {
        panic!("a proposal: {:?}", kept.result);
    };
    f.bob.check_out(a.id, with_note("again")).await.unwrap();
    f.admin.break_lease(a.id, "needed for print").await.unwrap();
    f.admin.rename(a.id, &path("brand/hero.psd")).await.unwrap();
    f.alice.check_out(a.id, with_note("now")).await.unwrap();

    let page = alice.history(a.id, None, 100).await.unwrap();
    assert_eq!(page.next_before, None, "all of it on one page");
    let lines: Vec<String> = page.entries.iter().map(said).collect();
    let proposal_id = proposal.id;
    assert_eq!(
        lines,
        [
            "alice checked out v3 (now): Open".to_owned(),
            "renamed hero.psd -> brand/hero.psd".into(),
            "bob checked out v3 (again): Broken { by: Participant(\"user:admin\"), reason: \"needed for print\" }".into(),
            "proposal by alice against v3: Open".into(),
            "v3 by bob: Print crop".into(),
            "bob checked out v2 (-): CheckedIn { version: 3, unchanged: false }".into(),
            format!("alice checked out v2 (-): Proposed {{ proposal: ProposalId({proposal_id}) }} after Lapsed"),
            "bob checked out v2 (crop): Cancelled".into(),
            "v2 by alice: Warmer sky".into(),
            "alice checked out v1 (sky): CheckedIn { version: 2, unchanged: false }".into(),
            "v1 by alice: First layout".into(),
        ]
    );
    let seqs: Vec<u64> = page.entries.iter().map(HistoryEntry::seq).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] > w[1]),
        "newest first: {seqs:?}"
    );
    // A check-out's span: from its start to its end.
    let HistoryEntry::Checkout(cancelled) = &page.entries[7] else {
        panic!("{:?}", page.entries[7]);
    };
    assert_eq!(cancelled.id, crop.id);
    assert!(cancelled.to.is_some_and(|to| to >= cancelled.from));
    // The window gets each kind by name.
    let json = serde_json::to_value(&page.entries[4]).unwrap();
    assert_eq!(json["kind"], "version");
    assert_eq!(json["message"], "Print crop");
    let json = serde_json::to_value(&page.entries[2]).unwrap();
    assert_eq!(json["kind"], "checkout");
    assert_eq!(json["ended"]["outcome"], "broken");
    assert_eq!(json["ended"]["reason"], "needed for print");
}

/// Pages are pages of events: a check-out begun on an older page and ended
/// on a newer one is shown once, on the page where it began, ended as it did.
async fn history_pages_back_across_a_check_out(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("hero.psd", b"v1").await;
    f.import("other.psd", b"not in this history").await;
    let mine = f.alice.check_out(a.id, with_note("sky")).await.unwrap();
    // Events between its start and its end: a refused colleague, an extension.
    assert!(f.bob.check_out(a.id, checkout_request()).await.is_err());
    f.alice.extend(mine.id, Some(3600)).await.unwrap();
    f.alice.check_in(mine.id, bytes(b"v2")).await.unwrap();

    let whole = alice.history(a.id, None, 1000).await.unwrap();
    let ledger = f
        .alice
        .query_events(EventQuery {
            artifact: Some(a.id),
            before: Some(u64::MAX),
            limit: 1000,
            ..Default::default()
        })
        .await
        .unwrap()
        .events;
    let seq_of = |kind: &str| ledger.iter().find(|e| e.kind == kind).unwrap().seq;
    let (opened, closed) = (seq_of("checkout.opened"), seq_of("checkout.closed"));
    // The newest page holds the check-out's end, not its start.
    let newest_page = ledger.iter().filter(|e| e.seq > opened).count() as u32 - 1;

    let mut pages = Vec::new();
    let mut before = None;
    loop {
        let page = alice.history(a.id, before, newest_page).await.unwrap();
        pages.push(page.entries.clone());
        match page.next_before {
            Some(next) => before = Some(next),
            None => break,
        }
        assert!(pages.len() < 20, "paging ends");
    }
    let first_seqs: Vec<u64> = pages[0].iter().map(HistoryEntry::seq).collect();
    assert!(
        pages[0]
            .iter()
            .all(|e| !matches!(e, HistoryEntry::Checkout(_))),
        "the newest page holds the end, not the start: {first_seqs:?}"
    );
    assert!(closed > opened);
    let paged: Vec<HistoryEntry> = pages.into_iter().flatten().collect();
    assert_eq!(paged, whole.entries, "each entry once, as on one page");
    let checkout = paged
        .iter()
        .find_map(|e| match e {
            HistoryEntry::Checkout(c) => Some(c),
            _ => None,
        })
        .unwrap();
    assert_eq!(checkout.id, mine.id);
    assert_eq!(
        checkout.ended,
        CheckoutEnd::CheckedIn {
            version: 2,
            unchanged: false
        }
    );
    assert_eq!(paged.len(), 3, "v1, the check-out, v2: {paged:?}");
}

async fn a_version_opens_as_a_read_only_copy_beside_the_file_never_over_another(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("brand/hero.psd", b"v1").await;
    check_out_and_in_as(f.bob.as_ref(), a.id, b"v2 by bob").await;
    let local = alice.workspace().local_path(&a.path).unwrap();

    let first = alice.open_copy(a.id, 1).await.unwrap();
    assert_eq!(first, local.with_file_name("hero (v1).psd"));
    assert_eq!(std::fs::read(&first).unwrap(), b"v1");
    assert!(
        !workspace::is_writable(&first),
        "a copy to look at, read-only"
    );
    assert_eq!(
        alice.open_copy(a.id, 1).await.unwrap(),
        first,
        "the same copy again"
    );

    // Someone's own file under the name a copy would take is never written over.
    std::fs::write(local.with_file_name("hero (v2).psd"), b"my notes").unwrap();
    let second = alice.open_copy(a.id, 2).await.unwrap();
    assert_eq!(second, local.with_file_name("hero (v2) 2.psd"));
    assert_eq!(std::fs::read(&second).unwrap(), b"v2 by bob");
    assert_eq!(
        std::fs::read(local.with_file_name("hero (v2).psd")).unwrap(),
        b"my notes"
    );
    let missing = alice.open_copy(a.id, 9).await;
    assert!(
        matches!(missing, Err(leasedesk::Error::NotFound(_))),
        "{missing:?}"
    );

    // Bytes that are not the version's never land: the digest is checked.
    delete_file(&first);
    // Bytes of the same length that went bad in storage.
    f.overwrite_blob(&digest(b"v1"), b"xx").await;
    let corrupted = alice.open_copy(a.id, 1).await;
    assert!(
        matches!(corrupted, Err(leasedesk::Error::DigestMismatch { .. })),
        "{corrupted:?}"
    );
    let names: Vec<String> = std::fs::read_dir(local.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["hero (v2) 2.psd", "hero (v2).psd"],
        "nothing left behind"
    );
}

async fn restore_puts_a_version_in_your_copy_keeps_a_backup_and_drafts_the_description(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("hero.psd", b"v1").await;
    check_out_and_in_as(f.bob.as_ref(), a.id, b"v2").await;
    alice.update(a.id).await.unwrap();
    let local = alice.workspace().local_path(&a.path).unwrap();

    let refused = alice.restore(a.id, 1).await;
    assert!(
        matches!(&refused, Err(leasedesk::Error::Forbidden(why)) if why.contains("check it out first")),
        "{refused:?}"
    );
    assert_eq!(std::fs::read(&local).unwrap(), b"v2", "nothing changed");

    let mine = alice
        .check_out(a.id, with_note("retouch"), None)
        .await
        .unwrap();
    assert_eq!(
        alice.checkin_draft(mine.checkout.id).await.unwrap(),
        "retouch"
    );
    std::fs::write(&local, b"my changes").unwrap();
    let restored = alice.restore(a.id, 1).await.unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"v1");
    assert!(workspace::is_writable(&local), "still yours to edit");
    let backup = restored.backup.expect("your changes kept");
    assert_eq!(backup.parent(), local.parent(), "beside the file");
    assert_eq!(std::fs::read(&backup).unwrap(), b"my changes");
    assert_eq!(restored.draft, "Restored version 1");
    assert_eq!(
        alice.checkin_draft(mine.checkout.id).await.unwrap(),
        "Restored version 1"
    );
    // A restart keeps the draft: it is in the workspace's index.
    drop(alice);
    let alice = desk_for(&f, &f.alice, "alice");
    let draft = alice.checkin_draft(mine.checkout.id).await.unwrap();
    assert_eq!(draft, "Restored version 1");

    let closed = alice
        .check_in(mine.checkout.id, Some(draft), Watch::default())
        .await
        .unwrap();
    assert_committed(&closed.checkout.result, 3);
    let head = &f.alice.versions(a.id).await.unwrap()[0];
    assert_eq!(head.message.as_deref(), Some("Restored version 1"));
    assert_eq!(read_content(f.alice.as_ref(), a.id, None).await, b"v1");
    assert_eq!(
        alice.checkin_draft(mine.checkout.id).await.unwrap(),
        "retouch",
        "the draft went with the check-in; the note is left"
    );
    // A cancelled check-out's draft goes with it too.
    let again = alice
        .check_out(a.id, with_note("again"), None)
        .await
        .unwrap();
    alice.restore(a.id, 2).await.unwrap();
    alice.cancel(again.checkout.id).await.unwrap();
    assert_eq!(
        alice.checkin_draft(again.checkout.id).await.unwrap(),
        "again"
    );
}

crate::contract!(
    the_history_shows_versions_check_outs_and_how_each_ended,
    history_pages_back_across_a_check_out,
    a_version_opens_as_a_read_only_copy_beside_the_file_never_over_another,
    restore_puts_a_version_in_your_copy_keeps_a_backup_and_drafts_the_description,
);

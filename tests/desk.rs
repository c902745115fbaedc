//! What the desktop app shows and does, without the desktop (`Desk`).

use std::collections::HashSet;
use std::sync::Arc;

use chrono::TimeDelta;
use leasedesk::desk::{self, CheckoutEnd, Desk, HistoryEntry, Reminder};
use leasedesk::model::*;
use leasedesk::workspace::{self, LocalState, Workspace};

use crate::harness::*;

fn desk_for(f: &Fixture, backend: &Arc<dyn leasedesk::Backend>, name: &str) -> Desk {
    let dir = f.dir.path().join(name);
    let workspace =
        Workspace::open(&dir.join("files"), &dir.join("state"), f.clock.clone()).unwrap();
    Desk::new(backend.clone(), workspace, f.clock.clone())
}

async fn the_overview_shows_holders_local_states_and_your_own_check_outs(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("brand/hero.psd", b"v1").await;
    let b = f.import("brand/logo.ai", b"v1").await;
    alice.check_out(a.id, with_note("sky"), None).await.unwrap();
    f.bob
        .check_out(b.id, with_note("print crop"))
        .await
        .unwrap();

    let overview = alice.overview().await.unwrap();
    assert_eq!(overview.me, participant("user:alice"));
    let row = |id| overview.files.iter().find(|r| r.artifact.id == id).unwrap();
    let (hero, logo) = (row(a.id), row(b.id));
    assert_eq!(hero.local, LocalState::UpToDate);
    assert!(hero.mine.is_some(), "alice's own check-out is on her row");
    assert_eq!(logo.local, LocalState::NotLocal);
    assert!(logo.mine.is_none());
    let lease = logo.artifact.lease.as_ref().expect("bob's lease");
    assert_eq!(lease.participant, participant("user:bob"));
    assert_eq!(lease.note.as_deref(), Some("print crop"));
    assert_eq!(overview.checkouts.len(), 1);
    assert_eq!(overview.checkouts[0].artifact_id, a.id);
}

/// A lapsed check-out stays open (its check-in would be kept as a proposal);
/// checking the file out again opens a second one, and that one, which holds
/// the lease, is what the row shows and acts on, in the list and alone.
async fn after_a_lapse_the_row_shows_the_newest_check_out(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("hero.psd", b"v1").await;
    let lapsed = alice.check_out(a.id, for_seconds(60), None).await.unwrap();
    f.advance(std::time::Duration::from_secs(120));
    let again = alice
        .check_out(a.id, checkout_request(), None)
        .await
        .unwrap();
    assert_ne!(lapsed.checkout.id, again.checkout.id);

    let overview = alice.overview().await.unwrap();
    let listed = overview
        .files
        .iter()
        .find(|r| r.artifact.id == a.id)
        .unwrap();
    assert_eq!(listed.mine.as_ref().unwrap().id, again.checkout.id);
    let alone = alice.row(a.id).await.unwrap();
    assert_eq!(alone.mine.as_ref().unwrap().id, again.checkout.id);
}

async fn a_changed_copy_is_checking_until_hashed_then_modified(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("hero.psd", b"v1").await;
    alice
        .check_out(a.id, checkout_request(), None)
        .await
        .unwrap();
    let local = alice.workspace().local_path(&a.path).unwrap();
    let temp = local.with_extension("tmp~");
    std::fs::write(&temp, b"changed").unwrap();
    std::fs::rename(&temp, &local).unwrap();

    let overview = alice.overview().await.unwrap();
    assert_eq!(
        overview.files[0].local,
        LocalState::Checking,
        "listing never waits for a hash"
    );
    assert_eq!(Desk::stale_digests(&overview), vec![a.path.clone()]);
    let row = alice.row(a.id).await.unwrap();
    assert_eq!(row.local, LocalState::Modified);
    let again = alice.overview().await.unwrap();
    assert_eq!(
        again.files[0].local,
        LocalState::Modified,
        "the hash is remembered"
    );
}

async fn a_dropped_file_is_added_under_the_folder_in_view(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let source = f.dir.path().join("hero.psd");
    std::fs::write(&source, b"v1").unwrap();
    let added = alice.add(&source, "brand/").await.unwrap();
    assert_eq!(added.path, path("brand/hero.psd"));
    let top = f.dir.path().join("notes.txt");
    std::fs::write(&top, b"n").unwrap();
    assert_eq!(alice.add(&top, "").await.unwrap().path, path("notes.txt"));
}

/// "Download to compare": the author's own backup where it has the bytes; a
/// reviewer gets a read-only copy beside the head, from either backend.
async fn a_proposal_opens_as_a_file_beside_the_head(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let admin = desk_for(&f, &f.admin, "admin");
    let a = f.import("brand/hero.psd", b"v1").await;
    let mine = alice.check_out(a.id, for_seconds(60), None).await.unwrap();
    let local = alice.workspace().local_path(&a.path).unwrap();
    std::fs::write(&local, b"alice's sky").unwrap();
    f.advance(std::time::Duration::from_secs(120));
    let bobs = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.bob.check_in(bobs.id, bytes(b"bob's v2")).await.unwrap();
    let closed = alice
        .check_in(mine.checkout.id, None, None, None)
        .await
        .unwrap();
    let Some(CheckinResult::Proposal { proposal }) = closed.checkout.result else {
        panic!("a proposal: {:?}", closed.checkout.result);
    };

    let hers = alice.proposal_file(a.id, proposal.id).await.unwrap();
    assert_eq!(
        Some(&hers),
        closed.backup.as_ref(),
        "her own backup, not a copy"
    );
    assert_eq!(std::fs::read(&hers).unwrap(), b"alice's sky");

    // A reviewer gets it from either backend (GET /v1/proposals/{id}/content).
    let copy = admin.proposal_file(a.id, proposal.id).await.unwrap();
    assert_eq!(
        copy,
        admin
            .workspace()
            .local_path(&a.path)
            .unwrap()
            .with_file_name("hero (alice's proposal against v2).psd")
    );
    assert_eq!(std::fs::read(&copy).unwrap(), b"alice's sky");
    assert!(std::fs::metadata(&copy).unwrap().permissions().readonly());
    assert_eq!(
        admin.proposal_file(a.id, proposal.id).await.unwrap(),
        copy,
        "asked again, the same file"
    );
    let unknown = admin.proposal_file(a.id, ProposalId::new()).await;
    assert!(
        matches!(unknown, Err(leasedesk::Error::NotFound(_))),
        "{unknown:?}"
    );
}

/// The ledger's end and its newest events, found without reading it all.
async fn the_newest_events_come_without_reading_the_whole_ledger(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    assert_eq!(alice.last_event_seq().await.unwrap(), 0);
    assert!(alice.recent_events(10).await.unwrap().is_empty());
    for i in 0..37 {
        f.import(&format!("shots/{i}.exr"), b"frame").await;
    }
    let all = f.all_events().await;
    assert!(all.len() >= 37);
    let newest = all.last().unwrap().seq;
    assert_eq!(alice.last_event_seq().await.unwrap(), newest);
    let recent = alice.recent_events(5).await.unwrap();
    let expected: Vec<u64> = all.iter().rev().take(5).map(|e| e.seq).collect();
    assert_eq!(recent.iter().map(|e| e.seq).collect::<Vec<_>>(), expected);
    assert_eq!(
        alice.recent_events(1000).await.unwrap().len(),
        all.len(),
        "asking for more than there are gives them all"
    );
}

/// A file you checked out elsewhere (the CLI) and never had here: "not on this
/// computer", not "missing". Getting it brings the checked-out version here as
/// your copy to edit, and leaves the lease and the ledger alone.
async fn a_file_you_hold_that_never_came_here_is_not_local_and_can_be_got(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let a = f.import("brand/hero.psd", b"v1").await;
    let elsewhere = f.alice.check_out(a.id, for_seconds(75)).await.unwrap();
    let row = alice.row(a.id).await.unwrap();
    assert_eq!(
        row.local,
        LocalState::NotLocal,
        "never here, so not missing"
    );
    assert_eq!(row.mine.as_ref().map(|c| c.id), Some(elsewhere.id));
    let overview = alice.overview().await.unwrap();
    assert_eq!(overview.files[0].local, LocalState::NotLocal);

    let ledger = f.all_events().await.len();
    let lease = f.alice.artifact(a.id).await.unwrap().lease;
    let got = alice.get_copy(elsewhere.id, None).await.unwrap();
    assert_eq!(got.checkout.id, elsewhere.id);
    assert_eq!(got.backup, None);
    let local = alice.workspace().local_path(&a.path).unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"v1");
    assert!(workspace::is_writable(&local), "your copy, to edit");
    assert_eq!(alice.row(a.id).await.unwrap().local, LocalState::UpToDate);
    assert_eq!(f.all_events().await.len(), ledger, "no lease change");
    assert_eq!(f.alice.artifact(a.id).await.unwrap().lease, lease);

    // Here once and gone: that is missing, and it can be got again.
    std::fs::remove_file(&local).unwrap();
    assert_eq!(alice.row(a.id).await.unwrap().local, LocalState::Missing);
    alice.get_copy(elsewhere.id, None).await.unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"v1");
    // Asked again over your changes, it keeps them: they are your edit.
    std::fs::write(&local, b"alice's sky").unwrap();
    alice.get_copy(elsewhere.id, None).await.unwrap();
    assert_eq!(std::fs::read(&local).unwrap(), b"alice's sky");
    let closed = alice
        .check_in(elsewhere.id, None, None, None)
        .await
        .unwrap();
    assert!(
        matches!(
            closed.checkout.result,
            Some(CheckinResult::Committed { version: 2, .. })
        ),
        "{:?}",
        closed.checkout.result
    );
    let ended = alice.get_copy(elsewhere.id, None).await;
    assert!(
        matches!(ended, Err(leasedesk::Error::CheckoutClosed(_))),
        "{ended:?}"
    );

    // Someone else's check-out is not yours to get.
    let b = f.import("brand/logo.ai", b"logo").await;
    let bobs = f.bob.check_out(b.id, checkout_request()).await.unwrap();
    let refused = alice.get_copy(bobs.id, None).await;
    assert!(refused.is_err(), "{refused:?}");
    assert!(!alice.workspace().local_path(&b.path).unwrap().exists());
}

/// A check-out made with a 75 s lease (as the CLI allows): its one reminder
/// says the time actually left, in the window's words, then the lapse.
async fn a_short_lease_is_reminded_of_the_time_it_has_left(f: Fixture) {
    let a = f.import("hero.psd", b"v1").await;
    f.alice.check_out(a.id, for_seconds(75)).await.unwrap();
    let mut sent = HashSet::new();
    async fn due(
        f: &Fixture,
        sent: &mut HashSet<(CheckoutId, Timestamp, Reminder)>,
    ) -> Vec<(Reminder, String)> {
        let open = f.alice.checkouts(true).await.unwrap();
        let now = f.clock.now();
        desk::due_reminders(&open, now, sent)
            .into_iter()
            .map(|(checkout, reminder)| (reminder, reminder.title(&checkout, now)))
            .collect()
    }
    assert_eq!(
        due(&f, &mut sent).await,
        vec![(
            Reminder::FiveMinutes,
            "hero.psd: your lease ends in 1 min".to_owned()
        )]
    );
    f.advance(std::time::Duration::from_secs(45));
    assert_eq!(due(&f, &mut sent).await, vec![], "once");
    f.advance(std::time::Duration::from_secs(30));
    assert_eq!(
        due(&f, &mut sent).await,
        vec![(
            Reminder::Lapsed,
            "hero.psd: your lease has lapsed".to_owned()
        )]
    );
}

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
    let c = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.bob.check_in(c.id, bytes(b"v2 by bob")).await.unwrap();
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
    let c = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.bob.check_in(c.id, bytes(b"v2")).await.unwrap();
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
        .check_in(mine.checkout.id, Some(draft), None, None)
        .await
        .unwrap();
    assert!(
        matches!(
            closed.checkout.result,
            Some(CheckinResult::Committed { version: 3, .. })
        ),
        "{:?}",
        closed.checkout.result
    );
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

/// A PNG of one colour, `width`×`height`.
fn png_of(color: [u8; 4], width: u32, height: u32) -> Vec<u8> {
    leasedesk::preview::encode_png(&image::RgbaImage::from_pixel(
        width,
        height,
        image::Rgba(color),
    ))
}

fn decoded(png: &std::path::Path) -> image::RgbaImage {
    image::load_from_memory(&std::fs::read(png).unwrap())
        .unwrap()
        .to_rgba8()
}

/// A modified copy shows what you are about to check in; the head shows
/// what is stored.
async fn the_local_preview_shows_your_modified_copy(f: Fixture) {
    let alice = desk_for(&f, &f.alice, "alice");
    let red = [200, 20, 20, 255];
    let blue = [20, 20, 200, 255];
    let a = f.import("banner.png", &png_of(red, 40, 20)).await;
    alice
        .check_out(a.id, checkout_request(), None)
        .await
        .unwrap();
    let local = alice.workspace().local_path(&a.path).unwrap();
    let shown = decoded(&alice.local_preview(a.id, 64).await.unwrap());
    assert_eq!(shown.dimensions(), (40, 20));
    assert_eq!(shown.get_pixel(5, 5).0, red);

    std::fs::write(&local, png_of(blue, 30, 30)).unwrap();
    let modified = decoded(&alice.local_preview(a.id, 64).await.unwrap());
    assert_eq!(modified.dimensions(), (30, 30));
    assert_eq!(modified.get_pixel(5, 5).0, blue);
    let head = decoded(
        &alice
            .preview(
                PreviewOf::Version {
                    artifact: a.id,
                    version: None,
                },
                64,
            )
            .await
            .unwrap(),
    );
    assert_eq!(head.get_pixel(5, 5).0, red, "the head is still red");

    std::fs::remove_file(&local).unwrap();
    let gone = alice.local_preview(a.id, 64).await;
    assert!(
        matches!(gone, Err(leasedesk::Error::NotFound(_))),
        "{gone:?}"
    );
    let tiny = alice.local_preview(a.id, 8).await;
    assert!(
        matches!(tiny, Err(leasedesk::Error::Invalid(_))),
        "{tiny:?}"
    );
}

crate::contract!(
    a_file_you_hold_that_never_came_here_is_not_local_and_can_be_got,
    a_short_lease_is_reminded_of_the_time_it_has_left,
    after_a_lapse_the_row_shows_the_newest_check_out,
    the_overview_shows_holders_local_states_and_your_own_check_outs,
    a_changed_copy_is_checking_until_hashed_then_modified,
    a_dropped_file_is_added_under_the_folder_in_view,
    a_proposal_opens_as_a_file_beside_the_head,
    the_newest_events_come_without_reading_the_whole_ledger,
    the_history_shows_versions_check_outs_and_how_each_ended,
    history_pages_back_across_a_check_out,
    a_version_opens_as_a_read_only_copy_beside_the_file_never_over_another,
    restore_puts_a_version_in_your_copy_keeps_a_backup_and_drafts_the_description,
    the_local_preview_shows_your_modified_copy,
);

fn open_checkout(expires_at: Timestamp) -> Checkout {
    lease_from(expires_at - TimeDelta::hours(8), expires_at)
}

/// An open check-out whose lease runs from `created_at` to `expires_at`.
fn lease_from(created_at: Timestamp, expires_at: Timestamp) -> Checkout {
    Checkout {
        id: CheckoutId::new(),
        artifact_id: ArtifactId::new(),
        path: path("hero.psd"),
        version: 1,
        digest: digest(b"v1"),
        actor: participant("user:alice"),
        holder: "checkout:x:user:alice".into(),
        note: None,
        created_at,
        expires_at,
        state: CheckoutState::Open,
        result: None,
        broken: None,
    }
}

#[test]
fn reminders_come_at_30_and_5_minutes_and_at_the_lapse_once_each() {
    let start = start_time();
    let checkout = open_checkout(start + TimeDelta::minutes(45));
    let mut sent = HashSet::new();
    let at = |minutes: i64| start + TimeDelta::minutes(minutes);
    let due = |sent: &mut HashSet<_>, when| -> Vec<Reminder> {
        desk::due_reminders(std::slice::from_ref(&checkout), when, sent)
            .into_iter()
            .map(|(_, r)| r)
            .collect()
    };
    assert_eq!(due(&mut sent, at(10)), vec![], "45 min left: nothing yet");
    assert_eq!(due(&mut sent, at(15)), vec![Reminder::ThirtyMinutes]);
    assert_eq!(due(&mut sent, at(20)), vec![], "once");
    assert_eq!(due(&mut sent, at(41)), vec![Reminder::FiveMinutes]);
    assert_eq!(due(&mut sent, at(45)), vec![Reminder::Lapsed]);
    assert_eq!(due(&mut sent, at(50)), vec![], "once");
}

/// What each reminder says, as the user would read it: the time actually left,
/// and never a threshold longer than the whole lease.
#[test]
fn reminders_say_the_time_left_and_never_more_than_the_lease() {
    let start = start_time();
    let at = |seconds: i64| start + TimeDelta::seconds(seconds);
    let said = |checkout: &Checkout, when| -> Vec<String> {
        desk::due_reminders(std::slice::from_ref(checkout), when, &mut HashSet::new())
            .into_iter()
            .map(|(c, r)| r.title(&c, when))
            .collect()
    };
    let long = lease_from(start, at(45 * 60));
    assert_eq!(
        said(&long, at(15 * 60)),
        ["hero.psd: your lease ends in 30 min"]
    );
    assert_eq!(
        said(&long, at(40 * 60)),
        ["hero.psd: your lease ends in 5 min"]
    );
    assert_eq!(
        said(&long, at(45 * 60 - 40)),
        ["hero.psd: your lease ends in 40 s"]
    );
    let ten_minutes = lease_from(start, at(10 * 60));
    assert_eq!(
        said(&ten_minutes, start),
        Vec::<String>::new(),
        "no 30-minute reminder for a 10-minute lease"
    );
    assert_eq!(
        said(&ten_minutes, at(5 * 60)),
        ["hero.psd: your lease ends in 5 min"]
    );
    let short = lease_from(start, at(75));
    assert_eq!(said(&short, start), ["hero.psd: your lease ends in 1 min"]);
    assert_eq!(said(&short, at(20)), ["hero.psd: your lease ends in 55 s"]);
    let eight_hours = lease_from(start, at(8 * 3600));
    assert_eq!(
        said(&eight_hours, at(8 * 3600 - 29 * 60)),
        ["hero.psd: your lease ends in 29 min"]
    );
}

#[test]
fn an_extension_arms_the_reminders_again() {
    let start = start_time();
    let mut sent = HashSet::new();
    let before = open_checkout(start + TimeDelta::minutes(20));
    assert_eq!(
        desk::due_reminders(std::slice::from_ref(&before), start, &mut sent).len(),
        1
    );
    let mut extended = before;
    extended.expires_at = start + TimeDelta::minutes(50);
    let later = start + TimeDelta::minutes(25);
    let due = desk::due_reminders(&[extended], later, &mut sent);
    assert_eq!(
        due.len(),
        1,
        "the new expiry has its own 30-minute reminder"
    );
    assert_eq!(due[0].1, Reminder::ThirtyMinutes);
}

/// A real `leasedesk serve` over its own data folder, its log in a file:
/// what the server was asked is read from its request log.
struct Served {
    child: std::process::Child,
    base: String,
    data: std::path::PathBuf,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Served {
    fn start() -> Self {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let log = dir.path().join("serve.log");
        cli(&data, &["user", "add", "alice"]);
        let mut child = crate::harness::leasedesk()
            .arg("--data")
            .arg(&data)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .to_owned();
        Self {
            child,
            base,
            data,
            log,
            _dir: dir,
        }
    }

    fn token(&self, name: &str) -> String {
        cli(&self.data, &["user", "token", name])
            .lines()
            .last()
            .unwrap()
            .to_owned()
    }

    /// How many requests the log shows whose path contains `path`, once
    /// the count has settled (log lines are written as requests end).
    async fn requests_to(&self, path: &str, expected: usize) -> usize {
        let count = || {
            std::fs::read_to_string(&self.log)
                .unwrap()
                .lines()
                .filter(|l| l.contains(path))
                .count()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while count() < expected && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        count()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cli(data: &std::path::Path, args: &[&str]) -> String {
    let out = crate::harness::leasedesk()
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The window asks for the same thumbnail again and again (each redraw, the
/// head by name and by number): the server is asked once per digest and
/// size, as its request log shows, and a file with no preview once too.
/// The cache is on disk: a desk opened again asks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_is_asked_of_the_server_once_per_digest_and_size() {
    let served = Served::start();
    let remote: Arc<dyn leasedesk::Backend> =
        Arc::new(leasedesk::Remote::new(&served.base, &served.token("alice")).unwrap());
    let home = tempfile::tempdir().unwrap();
    let open_desk = || {
        let workspace = Workspace::open(
            &home.path().join("files"),
            &home.path().join("state"),
            leasedesk::clock::Clock::system(),
        )
        .unwrap();
        Desk::new(remote.clone(), workspace, leasedesk::clock::Clock::system())
    };
    let desk = open_desk();
    let picture = remote
        .import(&path("dot.png"), bytes(&png_of([10, 200, 10, 255], 20, 10)))
        .await
        .unwrap();
    let words = remote
        .import(&path("notes.txt"), bytes(b"just words"))
        .await
        .unwrap();
    let head = PreviewOf::Version {
        artifact: picture.id,
        version: None,
    };
    let first = desk.preview(head, 64).await.unwrap();
    assert_eq!(decoded(&first).get_pixel(3, 3).0, [10, 200, 10, 255]);
    assert_eq!(desk.preview(head, 64).await.unwrap(), first);
    let by_number = PreviewOf::Version {
        artifact: picture.id,
        version: Some(1),
    };
    assert_eq!(desk.preview(by_number, 64).await.unwrap(), first);
    let asked = format!("/v1/artifacts/{}/preview", picture.id);
    assert_eq!(served.requests_to(&asked, 1).await, 1, "once for 64 px");
    desk.preview(head, 128).await.unwrap();
    assert_eq!(
        served.requests_to(&asked, 2).await,
        2,
        "once more for 128 px"
    );

    let none = PreviewOf::Version {
        artifact: words.id,
        version: None,
    };
    for _ in 0..3 {
        let answer = desk.preview(none, 64).await;
        assert!(
            matches!(answer, Err(leasedesk::Error::NoPreview(_))),
            "{answer:?}"
        );
    }
    let asked_words = format!("/v1/artifacts/{}/preview", words.id);
    assert_eq!(
        served.requests_to(&asked_words, 1).await,
        1,
        "a file with no preview is asked about once"
    );

    drop(desk);
    let reopened = open_desk();
    assert_eq!(reopened.preview(by_number, 64).await.unwrap(), first);
    assert_eq!(served.requests_to(&asked, 3).await, 2, "served from disk");
}

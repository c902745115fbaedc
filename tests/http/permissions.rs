//! Folder permissions as an attacker meets them over HTTP (API.md "Folder
//! permissions"): bob may not see `finance/` and may only read
//! `brand/approved/`. A hidden file answers every endpoint that can name it
//! exactly as an id that never was (`hidden`); no page or stream tells of
//! it, and a revoked device's stream ends at once (`streams`); a read-only
//! file refuses every write with 403 naming its folder (`read_only`). This
//! module holds the studio they share.

use leasedesk::model::*;

use super::*;

mod hidden;
mod read_only;
mod streams;

const BOB: &str = "user:bob";

/// The rules of these tests: finance is hidden from bob, the approved
/// brand files are his to view only.
fn bobs_rules() -> Value {
    json!([
        { "folder": "finance/", "who": BOB, "level": "none" },
        { "folder": "brand/approved/", "who": BOB, "level": "read" },
    ])
}

/// The admin replaces the rules, over HTTP.
async fn set_rules(f: &Fixture, rules: Value) {
    let set = Http::of(f)
        .send_json(
            Method::PUT,
            "/v1/permissions",
            f.token("user:admin"),
            json!({ "rules": rules }),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
}

/// A small real PNG of `shade`, so the approved logo has a preview.
fn png(shade: u8) -> Vec<u8> {
    let image = image::RgbaImage::from_fn(8, 8, |x, y| {
        image::Rgba([x as u8 * 30, y as u8 * 30, shade, 255])
    });
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// The three files alice imports: hidden from bob, read-only to him, his to change.
struct Files {
    q3: Artifact,
    logo: Artifact,
    open: Artifact,
}

async fn import_files(f: &Fixture) -> Files {
    Files {
        q3: f.import("finance/q3.xlsx", b"q3 v1").await,
        logo: f.import("brand/approved/logo.psd", &png(1)).await,
        open: f.import("brand/open.psd", b"open v1").await,
    }
}

/// Everything that names the hidden file: what alice and the agent did to
/// finance/q3.xlsx, each kind of id at least once.
struct Traces {
    /// Alice's check-out of it, still open.
    checkout: CheckoutId,
    /// Alice's stale check-in, kept as a proposal.
    proposal: ProposalId,
    /// Alice's request to the agent while it held the file.
    request: RequestId,
    /// The agent's edit, committed.
    edit: EditId,
    /// A change of the hidden file alone.
    change: ChangeId,
    /// A change of the hidden file and brand/open.psd together.
    shared_change: ChangeId,
}

async fn work_on_finance(f: &Fixture, files: &Files) -> Traces {
    let q3 = files.q3.id;
    let edit = f.agent.begin_edit(q3, None).await.unwrap();
    f.agent.commit_edit(edit.id, bytes(b"q3 v2")).await.unwrap();
    // Alice's lease lapses while the agent takes the file; she asks it for
    // the file back; her late check-in becomes a proposal.
    let late = f.alice.check_out(q3, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    let agents = f.agent.check_out(q3, checkout_request()).await.unwrap();
    let (request, _) = f.alice.ask(q3, Some("may I have it back?")).await.unwrap();
    f.agent.check_in(agents.id, bytes(b"q3 v3")).await.unwrap();
    let proposal = proposal_of(
        f.alice
            .check_in(late.id, bytes(b"alice's q3"))
            .await
            .unwrap(),
    );
    let change = change_of(f, &[(q3, b"q3 v4")]).await;
    let shared_change = change_of(f, &[(q3, b"q3 v5"), (files.open.id, b"open v2")]).await;
    let checkout = f.alice.check_out(q3, checkout_request()).await.unwrap();
    Traces {
        checkout: checkout.id,
        proposal: proposal.id,
        request: request.id,
        edit: edit.id,
        change,
        shared_change,
    }
}

/// A served studio where alice and the agent worked on finance/q3.xlsx,
/// leaving every kind of id, before its folder was hidden from bob.
async fn finance_worked_on_then_hidden() -> (Fixture, Files, Traces) {
    let f = remote_fixture().await;
    let files = import_files(&f).await;
    let traces = work_on_finance(&f, &files).await;
    set_rules(&f, bobs_rules()).await;
    (f, files, traces)
}

/// Alice checks `files` out together, stages each one's bytes and checks
/// them in as one change.
async fn change_of(f: &Fixture, files: &[(ArtifactId, &[u8])]) -> ChangeId {
    let checkouts = f
        .alice
        .check_out_many(CheckoutsRequest {
            artifact_ids: files.iter().map(|(id, _)| *id).collect(),
            ttl_seconds: None,
            note: None,
        })
        .await
        .unwrap();
    for (checkout, (_, data)) in checkouts.iter().zip(files) {
        f.alice.stage(checkout.id, bytes(data)).await.unwrap();
    }
    let change = f
        .alice
        .commit_change(ChangeRequest {
            checkouts: checkouts.iter().map(|c| c.id).collect(),
            message: Some("quarter close".into()),
        })
        .await
        .unwrap();
    assert_eq!(change.outcome, ChangeOutcome::Committed);
    change.id
}

/// Whether `body` names `needle` anywhere (an id, a path).
fn mentions(body: &Value, needle: &str) -> bool {
    body.to_string()
        .to_lowercase()
        .contains(&needle.to_lowercase())
}

//! Seeing the work: descriptions of versions and proposals, one file's
//! history paged either way, a proposal's bytes for every reviewer, and the
//! preview endpoints (their errors and cache; each format's reader has its
//! own tests).

use leasedesk::model::*;
use leasedesk::Error;
use reqwest::StatusCode;
use tokio::io::AsyncReadExt;

use crate::harness::*;

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
            let c = f.alice.check_out(id, checkout_request()).await.unwrap();
            f.alice.check_in(c.id, bytes(&[round, 7])).await.unwrap();
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

/// Alice's late check-in, kept as a proposal while bob committed version 2.
async fn alices_proposal(f: &Fixture, data: &[u8]) -> (Artifact, Proposal) {
    let a = f.import("hero.psd", b"v1").await;
    let alice = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    let bob = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.bob.check_in(bob.id, bytes(b"v2")).await.unwrap();
    let done = f.alice.check_in(alice.id, bytes(data)).await.unwrap();
    let Some(CheckinResult::Proposal { proposal }) = done.result else {
        panic!("expected a proposal, got {:?}", done.result);
    };
    (a, proposal)
}

async fn a_reviewer_who_is_not_the_author_fetches_a_proposal_and_its_bytes(f: Fixture) {
    let (_, proposal) = alices_proposal(&f, b"alice's version").await;
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

/// A PNG of `width`×`height` whose pixel (x, y) is `pixel(x, y)`.
pub fn png(width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 4]) -> Vec<u8> {
    let image = image::RgbaImage::from_fn(width, height, |x, y| image::Rgba(pixel(x, y)));
    leasedesk::preview::encode_png(&image)
}

fn decoded(png: &[u8]) -> image::RgbaImage {
    image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .expect("a PNG")
        .to_rgba8()
}

async fn previews_fit_the_size_and_are_the_same_for_the_same_bytes(f: Fixture) {
    // Left half red, right half blue, 300×100.
    let image = png(300, 100, |x, _| {
        if x < 150 {
            [255, 0, 0, 255]
        } else {
            [0, 0, 255, 255]
        }
    });
    let a = f.import("art/banner.png", &image).await;
    let of_head = PreviewOf::Version {
        artifact: a.id,
        version: None,
    };
    let small = decoded(&f.bob.preview(of_head, 64).await.unwrap());
    assert_eq!(small.dimensions(), (64, 21));
    assert_eq!(small.get_pixel(5, 10).0, [255, 0, 0, 255]);
    assert_eq!(small.get_pixel(58, 10).0, [0, 0, 255, 255]);
    // Never scaled up.
    let large = decoded(&f.bob.preview(of_head, 4096).await.unwrap());
    assert_eq!(large.dimensions(), (300, 100));

    // The same bytes in a proposal give the same preview.
    let (b, proposal) = alices_proposal(&f, &image).await;
    let of_proposal = f
        .bob
        .preview(PreviewOf::Proposal(proposal.id), 64)
        .await
        .unwrap();
    assert_eq!(decoded(&of_proposal), small);
    let of_v1 = PreviewOf::Version {
        artifact: b.id,
        version: Some(1),
    };
    let text = f.bob.preview(of_v1, 64).await;
    assert!(
        matches!(&text, Err(Error::NoPreview(m)) if !m.is_empty()),
        "{text:?}"
    );
    let missing = PreviewOf::Version {
        artifact: b.id,
        version: Some(9),
    };
    assert!(matches!(
        f.bob.preview(missing, 64).await,
        Err(Error::NotFound(_))
    ));
    for size in [0, 15, 4097, u32::MAX] {
        assert!(
            matches!(f.bob.preview(of_head, size).await, Err(Error::Invalid(_))),
            "size {size}"
        );
    }
}

/// Files of every format a preview reads, each written by its own tool (see
/// the readers' tests, which check them against that tool's pixels), with a
/// name for messages.
/// The folders are removed when the first two are dropped.
#[cfg(target_os = "linux")]
type MadeFiles = (
    Vec<crate::preview_formats::Made>,
    Vec<tempfile::TempDir>,
    Vec<(String, std::path::PathBuf)>,
);

#[cfg(target_os = "linux")]
fn made_by_their_tools() -> MadeFiles {
    let mut keep = Vec::new();
    let mut files = Vec::new();
    for kind in [
        "png-rgba",
        "png-palette",
        "png-gray16",
        "jpeg-cmyk",
        "jpeg-exif6",
        "gif-animated",
        "webp",
        "tiff-lzw",
        "tiff-cmyk",
        "bmp",
        "kra",
        "ora",
    ] {
        let made = crate::preview_formats::make(kind);
        files.push((kind.to_owned(), made.file.clone()));
        keep.push(made);
    }
    let psds = crate::preview_psd::psd_tools_writes(
        r#"
img = Image.fromarray(noise(37, 53, 3, 1), 'RGB')
write('rgb8', PSDImage.frompil(img, compression=Compression.RLE))
write('cmyk', PSDImage.frompil(Image.fromarray(noise(19, 23, 4, 7), 'CMYK')))
wide = noise(21, 34, 3, 4).astype(np.uint32) * 257
write('rgb16', with_planes('RGB', (34, 21), 16, planes_of(wide, '>u2'), Compression.RLE))
write('rgb-psb', with_planes('RGB', (45, 31), 8, planes_of(noise(31, 45, 3, 13), np.uint8), Compression.RLE, version=2))
"#,
    );
    for name in ["rgb8", "cmyk", "rgb16", "rgb-psb"] {
        files.push((
            format!("psd-{name}"),
            psds.path().join(format!("{name}.psd")),
        ));
    }
    let blend = &crate::preview_formats::blender_files().dir;
    files.push(("blend-zstd".into(), blend.path().join("zstd.blend")));
    let svg = tempfile::tempdir().unwrap();
    let svg_file = svg.path().join("logo.svg");
    std::fs::write(&svg_file, crate::preview_formats::TWO_RECTS).unwrap();
    files.push(("svg".into(), svg_file));
    (keep, vec![psds, svg], files)
}

/// Through either backend, each format's preview is the reader's own image
/// of those bytes (a PNG of exactly those pixels), fitted into the size.
#[cfg(target_os = "linux")]
async fn every_format_previews_alike_on_both_backends(f: Fixture) {
    let (_made, _dirs, files) = tokio::task::spawn_blocking(made_by_their_tools)
        .await
        .unwrap();
    for (i, (name, file)) in files.iter().enumerate() {
        let data = std::fs::read(file).unwrap();
        let a = f
            .alice
            .import(&path(&format!("formats/{i}-{name}.bin")), bytes(&data))
            .await
            .unwrap();
        let of = PreviewOf::Version {
            artifact: a.id,
            version: None,
        };
        let served = f
            .bob
            .preview(of, 48)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let read =
            leasedesk::preview::render_file(file, 48, &leasedesk::preview::Limits::standard())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let served = decoded(&served);
        assert!(served.width() <= 48 && served.height() <= 48, "{name}");
        assert_eq!(
            served, read,
            "{name}: the backend's preview is the reader's"
        );
    }
}

crate::contract!(
    // Its files are made by Python's and Blender's own writers, beside the Linux tests.
    #[cfg(target_os = "linux")]
    every_format_previews_alike_on_both_backends,
    descriptions_are_kept_with_versions_proposals_and_edits,
    an_overlong_description_is_refused_and_the_checkout_stays_open,
    history_pages_back_with_before_and_holds_one_artifacts_events,
    a_reviewer_who_is_not_the_author_fetches_a_proposal_and_its_bytes,
    previews_fit_the_size_and_are_the_same_for_the_same_bytes,
);

/// The data folder's cached previews and no-preview markers.
fn cached_previews(data: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    let Ok(entries) = std::fs::read_dir(data.join("previews")) else {
        return names;
    };
    for entry in entries {
        names.push(entry.unwrap().file_name().into_string().unwrap());
    }
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_is_made_once_per_digest_and_size_and_so_is_a_refusal() {
    let f = fixture();
    let image = png(40, 20, |x, y| [x as u8, y as u8, 9, 255]);
    let a = f.import("a.png", &image).await;
    let t = f.import("notes.txt", b"plain words").await;
    let head = |artifact| PreviewOf::Version {
        artifact,
        version: None,
    };
    let first = f.alice.preview(head(a.id), 32).await.unwrap();
    let refusal = f.alice.preview(head(t.id), 32).await.unwrap_err();
    let hex = |d: &Digest| d.hex().to_owned();
    let generation = leasedesk::preview::READER_GENERATION;
    assert_eq!(
        cached_previews(f.dir.path()),
        [
            format!("{}-32-r{generation}.png", hex(&a.head.digest)),
            format!("{}-32-r{generation}.none", hex(&t.head.digest)),
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    // The cache answers, not the decoder: an entry changed on disk is what
    // comes back.
    let entry = f
        .dir
        .path()
        .join("previews")
        .join(format!("{}-32-r{generation}.png", a.head.digest.hex()));
    assert_eq!(std::fs::read(&entry).unwrap(), first);
    let marked = png(2, 2, |_, _| [1, 2, 3, 255]);
    std::fs::write(&entry, &marked).unwrap();
    assert_eq!(f.alice.preview(head(a.id), 32).await.unwrap(), marked);
    assert_eq!(f.alice.preview(head(t.id), 32).await.unwrap_err(), refusal);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_endpoints_answer_their_errors_in_json() {
    let f = remote_fixture().await;
    let server = f.server.as_ref().unwrap();
    let (a, proposal) = alices_proposal(&f, b"not an image").await;
    let client = reqwest::Client::new();
    let get = |path: String, token: Option<&str>| {
        let mut request = client.get(format!("{}{path}", server.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let bob = Some(server.token("user:bob"));
    let error = |status: StatusCode, code: &'static str| (status, code);
    let cases = [
        (
            format!("/v1/proposals/{}", proposal.id),
            None,
            error(StatusCode::UNAUTHORIZED, "unauthorized"),
        ),
        (
            format!("/v1/proposals/{}/content", proposal.id),
            None,
            error(StatusCode::UNAUTHORIZED, "unauthorized"),
        ),
        (
            format!("/v1/proposals/{}/preview", proposal.id),
            None,
            error(StatusCode::UNAUTHORIZED, "unauthorized"),
        ),
        (
            format!("/v1/artifacts/{}/preview", a.id),
            None,
            error(StatusCode::UNAUTHORIZED, "unauthorized"),
        ),
        (
            format!("/v1/proposals/{}", ProposalId::new()),
            bob,
            error(StatusCode::NOT_FOUND, "not_found"),
        ),
        (
            format!("/v1/proposals/{}/content", ProposalId::new()),
            bob,
            error(StatusCode::NOT_FOUND, "not_found"),
        ),
        (
            format!("/v1/proposals/{}/preview", ProposalId::new()),
            bob,
            error(StatusCode::NOT_FOUND, "not_found"),
        ),
        (
            format!("/v1/artifacts/{}/preview", ArtifactId::new()),
            bob,
            error(StatusCode::NOT_FOUND, "not_found"),
        ),
        (
            format!("/v1/artifacts/{}/preview?version=7", a.id),
            bob,
            error(StatusCode::NOT_FOUND, "not_found"),
        ),
        (
            format!("/v1/artifacts/{}/preview", a.id),
            bob,
            error(StatusCode::NOT_FOUND, "no_preview"),
        ),
        (
            format!("/v1/proposals/{}/preview?size=64", proposal.id),
            bob,
            error(StatusCode::NOT_FOUND, "no_preview"),
        ),
        (
            format!("/v1/artifacts/{}/preview?size=15", a.id),
            bob,
            error(StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        ),
        (
            format!("/v1/artifacts/{}/preview?size=4097", a.id),
            bob,
            error(StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        ),
        (
            format!("/v1/artifacts/{}/preview?size=99999999999", a.id),
            bob,
            error(StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        ),
        (
            format!("/v1/proposals/{}/preview?size=0", proposal.id),
            bob,
            error(StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        ),
        (
            "/v1/events?after=1&before=5".to_owned(),
            bob,
            error(StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        ),
        (
            "/v1/events?artifact=nope".to_owned(),
            bob,
            error(StatusCode::BAD_REQUEST, "bad_request"),
        ),
    ];
    for (path, token, (status, code)) in cases {
        let answer = get(path.clone(), token).await.unwrap();
        assert_eq!(answer.status(), status, "{path}");
        assert_eq!(
            answer.headers()["cache-control"],
            "no-store",
            "{path}: an error is never cached"
        );
        let body: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(body["error"], code, "{path}: {body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        if code == "no_preview" {
            assert!(
                body["message"].as_str().unwrap().contains("seems")
                    || body["message"].as_str().unwrap().contains("unknown")
                    || body["message"].as_str().unwrap().contains("text"),
                "the message says what the file seems to be: {body}"
            );
        }
    }
    let content = get(format!("/v1/proposals/{}/content", proposal.id), bob)
        .await
        .unwrap();
    assert_eq!(content.status(), StatusCode::OK);
    assert_eq!(
        content.headers()["etag"].to_str().unwrap(),
        format!("\"{}\"", proposal.digest)
    );
    assert_eq!(content.bytes().await.unwrap(), &b"not an image"[..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_description_header_is_422_and_stores_nothing() {
    let f = remote_fixture().await;
    let server = f.server.as_ref().unwrap();
    let a = f.import("a.psd", b"v1").await;
    let mine = f.alice.check_out(a.id, checkout_request()).await.unwrap();
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
        f.artifact(a.id).await.head.message.as_deref(),
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

//! The preview endpoints: the size fitted, every format alike on every
//! backend, one preview (or refusal) made per digest and size, and their
//! errors in JSON.

use super::*;

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
    let (b, proposal) = f.stale_proposal("hero.psd", &image).await;
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
    let (a, proposal) = f.stale_proposal("hero.psd", b"not an image").await;
    let client = reqwest::Client::new();
    let get = |path: String, token: Option<&str>| {
        let mut request = client.get(format!("{}{path}", server.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let bob = Some(server.token("user:bob"));
    let anyone = None;
    // One case a line, as a table.
    #[rustfmt::skip]
    let cases = [
        (anyone, format!("/v1/proposals/{}", proposal.id), 401, "unauthorized"),
        (anyone, format!("/v1/proposals/{}/content", proposal.id), 401, "unauthorized"),
        (anyone, format!("/v1/proposals/{}/preview", proposal.id), 401, "unauthorized"),
        (anyone, format!("/v1/artifacts/{}/preview", a.id), 401, "unauthorized"),
        (bob, format!("/v1/proposals/{}", ProposalId::new()), 404, "not_found"),
        (bob, format!("/v1/proposals/{}/content", ProposalId::new()), 404, "not_found"),
        (bob, format!("/v1/proposals/{}/preview", ProposalId::new()), 404, "not_found"),
        (bob, format!("/v1/artifacts/{}/preview", ArtifactId::new()), 404, "not_found"),
        (bob, format!("/v1/artifacts/{}/preview?version=7", a.id), 404, "not_found"),
        (bob, format!("/v1/artifacts/{}/preview", a.id), 404, "no_preview"),
        (bob, format!("/v1/proposals/{}/preview?size=64", proposal.id), 404, "no_preview"),
        (bob, format!("/v1/artifacts/{}/preview?size=15", a.id), 422, "invalid"),
        (bob, format!("/v1/artifacts/{}/preview?size=4097", a.id), 422, "invalid"),
        (bob, format!("/v1/artifacts/{}/preview?size=99999999999", a.id), 422, "invalid"),
        (bob, format!("/v1/proposals/{}/preview?size=0", proposal.id), 422, "invalid"),
        (bob, "/v1/events?after=1&before=5".to_owned(), 422, "invalid"),
        (bob, "/v1/events?artifact=nope".to_owned(), 400, "bad_request"),
    ];
    for (token, path, status, code) in cases {
        let answer = get(path.clone(), token).await.unwrap();
        assert_eq!(answer.status().as_u16(), status, "{path}");
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

crate::contract!(
    // Its files are made by Python's and Blender's own writers, beside the Linux tests.
    #[cfg(target_os = "linux")]
    every_format_previews_alike_on_both_backends,
    previews_fit_the_size_and_are_the_same_for_the_same_bytes,
);

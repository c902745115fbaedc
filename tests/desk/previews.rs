//! Previews in the app: your modified copy's, and the server asked once per
//! digest and size (a real `leasedesk serve`, its request log read).

use super::*;

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

/// How many requests the log of `served` shows whose path contains `path`,
/// once the count has settled (log lines are written as requests end).
async fn requests_to(served: &testkit::ServeProcess, path: &str, expected: usize) -> usize {
    let count = || {
        served
            .log_text()
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

/// The window asks for the same thumbnail again and again (each redraw, the
/// head by name and by number): the server is asked once per digest and
/// size, as its request log shows, and a file with no preview once too.
/// The cache is on disk: a desk opened again asks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_is_asked_of_the_server_once_per_digest_and_size() {
    // A real `leasedesk serve`: what it was asked is read from its request log.
    let cli = crate::harness::cli_in_temp_dir();
    cli.add_user("alice");
    let served = crate::harness::serve_logged(&cli).spawn();
    let remote: Arc<dyn leasedesk::Backend> =
        Arc::new(leasedesk::Remote::new(&served.url, &served.token("alice")).unwrap());
    let home = tempfile::tempdir().unwrap();
    let open_desk = || {
        desk_in(
            home.path(),
            remote.clone(),
            leasedesk::clock::Clock::system(),
        )
    };
    let desk = open_desk();
    let picture = import_as(
        remote.as_ref(),
        "dot.png",
        &png_of([10, 200, 10, 255], 20, 10),
    )
    .await;
    let words = import_as(remote.as_ref(), "notes.txt", b"just words").await;
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
    assert_eq!(requests_to(&served, &asked, 1).await, 1, "once for 64 px");
    desk.preview(head, 128).await.unwrap();
    assert_eq!(
        requests_to(&served, &asked, 2).await,
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
        requests_to(&served, &asked_words, 1).await,
        1,
        "a file with no preview is asked about once"
    );

    drop(desk);
    let reopened = open_desk();
    assert_eq!(reopened.preview(by_number, 64).await.unwrap(), first);
    assert_eq!(requests_to(&served, &asked, 3).await, 2, "served from disk");
}

crate::contract!(the_local_preview_shows_your_modified_copy);

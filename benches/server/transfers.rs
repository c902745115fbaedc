//! Bytes and lists through the server: a big check-in beside `cp`, a cached
//! preview, and listing many artifacts.

use super::*;
use leases::millis;

/// A big file over loopback beside `cp` then `sync` of it: checked in new,
/// checked in again after a 1 MiB edit, and fetched with `get`; and the
/// server's peak memory during all of them.
pub(crate) async fn upload(work: &Path, sizes: &Sizes) {
    let source = work.join("big.bin");
    make_big_file(&source, sizes.big_file);
    let edited = work.join("big-edited.bin");
    std::fs::copy(&source, &edited).unwrap();
    {
        use std::io::{Seek, Write};
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&edited)
            .unwrap();
        file.seek(std::io::SeekFrom::Start(sizes.big_file / 2))
            .unwrap();
        file.write_all(&vec![0x5a; 1 << 20]).unwrap();
    }
    let label = size_label(sizes.big_file);
    let server = Server::start(&work.join("upload"));
    let cli = |args: &[&str]| {
        server.process.client_cli(&server.token).ok(args);
    };
    let small = work.join("small.bin");
    std::fs::write(&small, b"v1").unwrap();
    let copy = work.join("copy.bin");
    let fetched = work.join("fetched.bin");
    let timed = |file: &Path, args: &[&str]| {
        settle(file);
        let started = Instant::now();
        cli(args);
        started.elapsed()
    };
    let (mut cp, mut cp_sync, mut new, mut edit, mut get) =
        (vec![], vec![], vec![], vec![], vec![]);
    for rep in 0..5 {
        settle(&source);
        cp.push(crate::common::timed_cp(&source, &copy));
        settle(&source);
        cp_sync.push(crate::common::timed_cp_sync(&source, &copy));

        let path = format!("big-{rep}.bin");
        cli(&["import", &path, small.to_str().unwrap()]);
        cli(&["checkout", &path]);
        new.push(timed(
            &source,
            &["checkin", &path, source.to_str().unwrap()],
        ));
        cli(&["checkout", &path]);
        edit.push(timed(
            &edited,
            &["checkin", &path, edited.to_str().unwrap()],
        ));
        let took = timed(&source, &["get", &path, "-o", fetched.to_str().unwrap()]);
        get.push(took);
        std::fs::remove_file(&fetched).unwrap();
    }
    let cp = Baseline::row(
        format!("cp of a page-cached {label} file, median of 5"),
        median(cp),
    );
    let floor = Baseline::row(
        "cp of it, then `sync` of the copy, median of 5".to_string(),
        median(cp_sync),
    );
    cp.compared(
        &format!("check-in of the new {label} file over loopback (CLI --server)"),
        median(new.clone()),
        " cp",
        "for the record",
    );
    floor.compared(
        &format!("check-in of the new {label} file over loopback (CLI --server), median of 5"),
        median(new),
        " cp then sync",
        "at most 2x cp then sync",
    );
    floor.compared(
        "the same file checked in again after a 1 MiB edit, median of 5",
        median(edit),
        " cp then sync",
        "at most 2x cp then sync",
    );
    floor.compared(
        &format!("`get` of the {label} file over loopback, median of 5"),
        median(get),
        " cp then sync",
        "at most 2x cp then sync",
    );
    let mib = server.peak_memory() as f64 / 1048576.0;
    row(
        "server peak memory over those check-ins and gets",
        format!("**{mib:.1} MiB**"),
        "at most 48 MiB",
        value(mib, "MiB"),
    );
}

/// A preview already made, asked for again: what a file list of thumbnails
/// costs the server once each has been made.
pub(crate) async fn cached_preview(work: &Path) {
    let server = Server::start(&work.join("preview"));
    let image = image::RgbaImage::from_fn(4096, 4096, |x, y| {
        image::Rgba([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 239) as u8, 255])
    });
    let source = work.join("poster.png");
    image.save(&source).unwrap();
    let imported = Command::new(bin())
        .args(["--server", &server.url, "--json"])
        .args(["import", "art/poster.png", source.to_str().unwrap()])
        .env("LEASEDESK_TOKEN", &server.token)
        .output()
        .unwrap();
    assert!(imported.status.success());
    let artifact: Value = serde_json::from_slice(&imported.stdout).unwrap();
    let url = format!(
        "{}/v1/artifacts/{}/preview?version=1&size=512",
        server.url,
        artifact["id"].as_str().unwrap()
    );
    let client = reqwest::Client::new();
    let ask = || async {
        let started = Instant::now();
        let answer = pairs::answered(client.get(&url).bearer_auth(&server.token), 200).await;
        let png = answer.bytes().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        started.elapsed()
    };
    let first = ask().await;
    let mut cached = Vec::new();
    for _ in 0..1000 {
        cached.push(ask().await);
    }
    cached.sort();
    let (p50, p99) = (percentile(&cached, 0.5), percentile(&cached, 0.99));
    row(
        "first 512 px preview of a 4096×4096 PNG (decoded, scaled, encoded, cached)",
        ms(first),
        "made once",
        value(millis(first), "ms"),
    );
    row(
        "the same preview again, cached: median / p99 of 1000 over loopback",
        format!("**{} / {}**", ms(p50), ms(p99)),
        "under 5 ms at the server",
        value(millis(p50), "ms").and("p99", millis(p99), "ms"),
    );
}

/// Listing every artifact of a store that has many.
pub(crate) async fn list(work: &Path, sizes: &Sizes) {
    let data = work.join("list");
    {
        // Filled through the library, before the server starts.
        let store = leasedesk::Bundled::open(&data)
            .unwrap()
            .acting_as("user:bench".parse().unwrap());
        for i in 0..sizes.artifacts {
            let path: leasedesk::model::RepoPath = format!("projects/p{}/file-{i}.psd", i % 100)
                .parse()
                .unwrap();
            let bytes = format!("content {i}").into_bytes();
            leasedesk::Backend::import(
                &store,
                &path,
                leasedesk::Upload::stream(std::io::Cursor::new(bytes)),
            )
            .await
            .unwrap();
        }
    }
    let server = Server::start(&data);
    let http = reqwest::Client::new();
    let (mut at_server, mut with_parse) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let started = Instant::now();
        let response = http
            .get(format!("{}/v1/artifacts", server.url))
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap();
        // The server answers once the whole list is serialized: the headers'
        // arrival is the server's time (plus a loopback round trip).
        at_server.push(started.elapsed());
        let listed: Value = response.json().await.unwrap();
        with_parse.push(started.elapsed());
        assert_eq!(
            listed["artifacts"].as_array().unwrap().len(),
            sizes.artifacts
        );
    }
    let (at_server, with_parse) = (median(at_server), median(with_parse));
    row(
        &format!(
            "GET /v1/artifacts with {} artifacts, median of 20",
            sizes.artifacts
        ),
        format!(
            "**{} to the answer's headers**, {} with the 2.7 MB body read and parsed by the client",
            ms(at_server),
            ms(with_parse)
        ),
        "under 50 ms at the server",
        value(millis(at_server), "ms").and("with the body parsed", millis(with_parse), "ms"),
    );
}

//! What hostile bytes leave behind: concurrent imports of one path, paths
//! unsafe elsewhere, and files built to break the preview readers.

use super::*;

/// Blobs in a data folder (each shard folder's files; not `tmp/`).
fn stored_blobs(data: &Path) -> Vec<String> {
    let mut blobs = Vec::new();
    for shard in std::fs::read_dir(data.join("blobs")).unwrap() {
        let shard = shard.unwrap();
        if shard.file_name() == "tmp" || !shard.file_type().unwrap().is_dir() {
            continue;
        }
        for blob in std::fs::read_dir(shard.path()).unwrap() {
            blobs.push(blob.unwrap().file_name().to_string_lossy().into_owned());
        }
    }
    blobs
}

#[test]
fn concurrent_imports_of_one_path_leave_only_the_winners_blob() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let answers: Vec<u16> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..16)
            .map(|n| {
                let (served, token) = (&served, &token);
                scope.spawn(move || {
                    let bytes = format!("import number {n}").repeat(10_000).into_bytes();
                    let mut request = format!(
                        "POST /v1/artifacts?path=race.psd HTTP/1.1\r\n{}content-length: {}\r\nconnection: close\r\n\r\n",
                        bearer(token),
                        bytes.len()
                    )
                    .into_bytes();
                    request.extend_from_slice(&bytes);
                    served.send(&request).status
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(
        answers.iter().filter(|&&s| s == 201).count(),
        1,
        "{answers:?}"
    );
    assert_eq!(
        answers.iter().filter(|&&s| s == 409).count(),
        15,
        "{answers:?}"
    );
    let artifacts = served.get("/v1/artifacts", &token);
    let head = artifacts.body["artifacts"][0]["head"]["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let blobs = stored_blobs(&served.data);
    assert_eq!(blobs.len(), 1, "only the winner's blob is kept: {blobs:?}");
    assert_eq!(format!("blake3:{}", blobs[0]), head);
}

fn import_status(served: &Served, token: &str, encoded_path: &str) -> Answer {
    served.send(
        format!(
            "POST /v1/artifacts?path={encoded_path} HTTP/1.1\r\n{}content-length: 5\r\nconnection: close\r\n\r\nbytes",
            bearer(token)
        )
        .as_bytes(),
    )
}

#[test]
fn paths_unsafe_on_windows_or_macos_are_refused_on_import() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    for unsafe_path in [
        "C%3A%2FUsers%2FPublic%2Fevil.bat",
        "C%3Ax",
        "x.psd%3Astream",
        "CON",
        "nul.txt",
        "trail.",
        "trail%20",
        "a%E2%80%AEgpj.exe",
        "%FF.psd",
        "a%5Cb.psd",
    ] {
        import_status(&served, &token, unsafe_path).refused(422, "invalid");
    }
    for (first, second) in [
        ("Case.psd", "case.psd"),
        ("caf%C3%A9.psd", "cafe%CC%81.psd"),
        ("a", "a%2Fb.psd"),
        ("deep%2Fb.psd", "DEEP"),
    ] {
        assert_eq!(import_status(&served, &token, first).status, 201, "{first}");
        import_status(&served, &token, second).refused(409, "exists");
    }
    let listed = served.get("/v1/artifacts", &token);
    assert_eq!(
        listed.body["artifacts"].as_array().unwrap().len(),
        4,
        "{listed:?}"
    );
}

/// CRC-32 (IEEE), as a PNG chunk carries it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG whose header claims `width`×`height` 8-bit RGBA pixels, with one
/// small compressed chunk after it: a few hundred bytes that would decode to
/// width × height × 4 bytes.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        let mut typed = kind.to_vec();
        typed.extend_from_slice(data);
        out.extend_from_slice(&typed);
        out.extend_from_slice(&crc32(&typed).to_be_bytes());
        out
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    // A stored (uncompressed) zlib block of zeros: the first row's start.
    let mut idat = vec![0x78, 0x01, 0x01, 0x00, 0x01, 0xff, 0xfe];
    idat.extend_from_slice(&[0u8; 256]);
    png.extend(chunk(b"IDAT", &idat));
    png.extend(chunk(b"IEND", b""));
    png
}

#[test]
fn bad_files_get_no_preview_and_the_server_stays_up_within_its_budget() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let mut random = vec![0u8; 1 << 20];
    getrandom::fill(&mut random).unwrap();
    let mut truncated = png_claiming(64, 64);
    truncated.truncate(40);
    let mut psd_bomb = b"8BPS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x04".to_vec();
    psd_bomb.extend_from_slice(&300_000u32.to_be_bytes());
    psd_bomb.extend_from_slice(&300_000u32.to_be_bytes());
    psd_bomb.extend_from_slice(&[0, 8, 0, 3]);
    let files: [(&str, Vec<u8>); 5] = [
        ("bomb.png", png_claiming(100_000, 100_000)),
        ("wide.png", png_claiming(1_000_000, 1)),
        ("noise.psd", random),
        ("cut.png", truncated),
        ("bomb.psb", psd_bomb),
    ];
    let ids: Vec<String> = files
        .iter()
        .map(|(name, bytes)| import(&served, &token, name, bytes))
        .collect();
    // All at once, twice over: the second round is answered from the cache.
    for round in 0..2 {
        std::thread::scope(|scope| {
            let asked: Vec<_> = ids
                .iter()
                .map(|id| {
                    let (served, token) = (&served, &token);
                    scope.spawn(move || {
                        served.get(&format!("/v1/artifacts/{id}/preview?size=512"), token)
                    })
                })
                .collect();
            for (answer, (name, _)) in asked.into_iter().zip(&files) {
                let answer = answer.join().unwrap();
                assert_eq!(answer.status, 404, "{name}, round {round}: {answer:?}");
                assert_eq!(answer.body["error"], "no_preview", "{name}: {answer:?}");
            }
        });
    }
    let health = served.get("/v1/health", &token);
    assert_eq!(health.status, 200);
    // The peak is read from /proc: the memory budget is checked on Linux.
    #[cfg(target_os = "linux")]
    {
        let peak_kib = served.process.peak_memory().unwrap() >> 10;
        assert!(
            peak_kib < 256 << 10,
            "the server's peak memory was {} MiB",
            peak_kib >> 10
        );
    }
}

//! PDFs built to break a PDF reader (a page tree of 100,000 pages, a form
//! that draws itself, a form drawn 2^40 times, a page 30,000 points wide, an
//! image that would decode to 2.7 GB, cut files) against a real server: each
//! gets a preview or `no_preview` within the time budget, the server's
//! memory stays within its own, and a good PDF still gets its preview.

use super::*;

/// A PDF of `objects` (object 1 the catalog), with its cross-reference
/// table.
pub fn pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend(data);
    out.extend(b"\nendstream");
    out
}

/// A catalog and one page of `size` points drawing `content` with
/// `resources`, then `more` objects (numbered from 5).
fn one_page(size: (u32, u32), resources: &str, content: &[u8], more: Vec<Vec<u8>>) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {} {}] /Resources {resources} /Contents 4 0 R >>",
            size.0, size.1
        )
        .into_bytes(),
        stream("", content),
    ];
    objects.extend(more);
    pdf(&objects)
}

/// A page tree of `pages` pages under one node.
fn many_pages(pages: usize) -> Vec<u8> {
    let kids: String = (0..pages).map(|i| format!("{} 0 R ", i + 4)).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{kids}] /Count {pages} >>").into_bytes(),
        stream("", b"0 0 1 rg 10 10 50 50 re f"),
    ];
    for _ in 0..pages {
        objects.push(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 3 0 R >>".to_vec(),
        );
    }
    pdf(&objects)
}

/// Forms X1…X40, each drawing the next twice: 2^40 draws of X40.
fn fan_out() -> Vec<u8> {
    let levels = 40;
    let mut more = Vec::new();
    for level in 1..=levels {
        let body = if level < levels {
            format!("/X{} Do /X{} Do", level + 1, level + 1)
        } else {
            "0 0 1 rg 0 0 10 10 re f".to_owned()
        };
        let resources = if level < levels {
            format!(
                "/Resources << /XObject << /X{} {} 0 R >> >>",
                level + 1,
                level + 5
            )
        } else {
            String::new()
        };
        more.push(stream(
            &format!("/Type /XObject /Subtype /Form /BBox [0 0 100 100] {resources}"),
            body.as_bytes(),
        ));
    }
    one_page(
        (100, 100),
        "<< /XObject << /X1 5 0 R >> >>",
        b"/X1 Do",
        more,
    )
}

/// A form whose resources name itself.
fn self_drawing() -> Vec<u8> {
    one_page(
        (100, 100),
        "<< /XObject << /Me 5 0 R >> >>",
        b"/Me Do",
        vec![stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /XObject << /Me 5 0 R >> >>",
            b"0 0 1 rg 0 0 10 10 re f /Me Do /Me Do",
        )],
    )
}

/// A JPEG image whose header claims `side`×`side` pixels (its scan is a
/// 16×16 one's): 2.7 GB decoded at 30,000.
fn huge_image(side: u16) -> Vec<u8> {
    let mut jpeg = Vec::new();
    image::RgbImage::new(16, 16)
        .write_to(
            &mut std::io::Cursor::new(&mut jpeg),
            image::ImageFormat::Jpeg,
        )
        .unwrap();
    let sof = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
    jpeg[sof + 5..sof + 7].copy_from_slice(&side.to_be_bytes());
    jpeg[sof + 7..sof + 9].copy_from_slice(&side.to_be_bytes());
    one_page(
        (600, 600),
        "<< /XObject << /Im 5 0 R >> >>",
        b"600 0 0 600 0 0 cm /Im Do",
        vec![stream(
            &format!(
                "/Type /XObject /Subtype /Image /Width {side} /Height {side} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode"
            ),
            &jpeg,
        )],
    )
}

#[test]
fn hostile_pdfs_get_a_bounded_answer_and_the_server_stays_within_its_budget() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let good = one_page((300, 200), "<< >>", b"1 0 0 rg 20 20 100 160 re f", vec![]);
    let cut = good[..good.len() / 2].to_vec();
    let stub = good[..40].to_vec();
    let files: [(&str, Vec<u8>); 8] = [
        ("pages.pdf", many_pages(100_000)),
        ("fan-out.pdf", fan_out()),
        ("self.pdf", self_drawing()),
        (
            "wide.pdf",
            one_page(
                (30_000, 30_000),
                "<< >>",
                b"1 0 0 rg 0 0 30000 15000 re f",
                vec![],
            ),
        ),
        ("huge-image.pdf", huge_image(30_000)),
        ("cut.pdf", cut),
        ("stub.pdf", stub),
        ("good.pdf", good),
    ];
    let ids: Vec<String> = files
        .iter()
        .map(|(name, bytes)| import(&served, &token, name, bytes))
        .collect();
    // One after another: each has the whole budget (asked together, those
    // waiting behind the fan-out's turn may be told the server is busy).
    for (id, (name, _)) in ids.iter().zip(&files) {
        // Only Linux caps the worker's memory; elsewhere the image's 2.7 GB
        // would be allocated before the decode fails.
        if *name == "huge-image.pdf" && !cfg!(target_os = "linux") {
            continue;
        }
        let started = Instant::now();
        let answer = served.get(&format!("/v1/artifacts/{id}/preview?size=256"), &token);
        let took = started.elapsed();
        assert!(
            took < leasedesk::preview::TIME_BUDGET + Duration::from_secs(3),
            "{name} took {took:?}"
        );
        match *name {
            "good.pdf" | "wide.pdf" => assert_eq!(answer.status, 200, "{name}: {answer:?}"),
            // Past the deadline, killed; past the memory, killed.
            "stub.pdf" | "fan-out.pdf" | "huge-image.pdf" => answer.refused(404, "no_preview"),
            _ => assert!(
                answer.status == 200 || answer.body["error"] == "no_preview",
                "{name}: {answer:?}"
            ),
        }
    }
    assert_eq!(served.get("/v1/health", &token).status, 200);
    #[cfg(target_os = "linux")]
    {
        let peak_mib = served.process.peak_memory().unwrap() >> 20;
        assert!(
            peak_mib < 256,
            "the server's peak memory was {peak_mib} MiB"
        );
    }
}

/// Through the server's PDF worker, an Illustrator file saved without PDF
/// content still says its preview is the thumbnail Illustrator saved.
#[cfg(target_os = "linux")]
#[test]
fn the_worker_keeps_what_a_preview_is() {
    let served = Served::start(&[]);
    let token = served.token("alice");
    let made = crate::preview_formats::made_by("make_design.py", "ai-without-pdf", None);
    let id = import(
        &served,
        &token,
        "logo.ai",
        &std::fs::read(&made.file).unwrap(),
    );
    let answer = served.get(&format!("/v1/artifacts/{id}/preview?size=64"), &token);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        answer
            .head
            .contains("leasedesk-preview: saved; by=\"illustrator\"; size=240"),
        "{}",
        answer.head
    );
}

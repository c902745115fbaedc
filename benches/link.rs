//! `cargo xtask bench --only link`: check-ins and updates over a home
//! link (20 Mbit/s up, 100 Mbit/s down, 40 ms round trip: `testkit::link`,
//! a TCP proxy that paces and delays each way, in this process, before a
//! release `leasedesk serve`), in rows of figures:
//!
//! - real edits of real files, each checked in as today's single request
//!   (the whole file) and as a resumable upload of the chunks the server
//!   lacks, in the same run: a PSD of 20 layers written by psd-tools with
//!   one layer changed; a `.blend` of over 100 MB saved by Blender,
//!   uncompressed and with zstd, before and after moving one object; a PSD
//!   re-saved by GIMP in batch mode with one layer repainted; a TIFF with a
//!   region repainted by ImageMagick. Then the older copy brought up to date;
//! - a check-in of 1 GiB whose link goes down at half way for 10 s, against
//!   the same check-in uncut;
//! - what chunking costs: cutting and hashing a 1 GiB file against hashing
//!   it alone (BLAKE3, as a check-in did before).
//!
//! `--quick` uses small files (and skips what needs GIMP); `--only link`
//! runs this bench alone; `--edits-only` leaves out the 1 GiB check-ins.

#[path = "common/mod.rs"]
#[allow(dead_code)] // the other benches' helpers
mod common;
#[path = "common/figures.rs"]
mod figures;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{make_big_file, median, settle, size_label, Server};
use figures::{row, value, Baseline};
use leasedesk::backend::{Backend, Upload};
use leasedesk::model::RepoPath;
use leasedesk::remote::Remote;
use testkit::link::{Link, Shape};

/// The home link of the issue: 20 Mbit/s up, 100 down, 40 ms round trip.
fn home() -> Shape {
    Shape::mbit(20.0, 100.0, 40)
}

const OUTAGE: Duration = Duration::from_secs(10);

fn main() {
    let Some(flags) = common::Flags::for_part("link") else {
        return;
    };
    let work = common::work_dir("bench-link");
    common::table_head();
    if !std::env::args().any(|a| a == "--edits-only") {
        chunking_cost(&work, flags.quick);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(real_edits(&work, flags.quick));
    if !std::env::args().any(|a| a == "--edits-only") {
        runtime.block_on(cut_in_the_middle(&work, flags.quick));
    }
}

/// Cutting and hashing against hashing alone, median of 3, page-cached.
fn chunking_cost(work: &Path, quick: bool) {
    let size = if quick { 64 << 20 } else { 1 << 30 };
    let file = work.join("chunked.bin");
    make_big_file(&file, size);
    settle(&file);
    leasedesk::blobs::digest_file(&file).unwrap(); // into the page cache
    let (mut alone, mut chunked) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let started = Instant::now();
        leasedesk::blobs::digest_file(&file).unwrap();
        alone.push(started.elapsed());
        let started = Instant::now();
        let opened = std::fs::File::open(&file).unwrap();
        leasedesk::chunking::chunk_file(&opened).unwrap();
        chunked.push(started.elapsed());
    }
    let (alone, chunked) = (median(alone), median(chunked));
    let label = size_label(size);
    let alone = Baseline::row(
        format!("BLAKE3 of a page-cached {label} file, one thread (a check-in's hash before)"),
        alone,
    );
    alone.compared(
        &format!(
            "cutting the {label} file into chunks, each hashed, and the whole hashed, one read (on each core)"
        ),
        chunked,
        "",
        "at most 1.3x BLAKE3 alone",
    );
    let _ = std::fs::remove_file(&file);
}

/// A file before and after an edit.
struct Edit {
    what: String,
    before: PathBuf,
    after: PathBuf,
}

/// Each edit checked in whole and as chunks over the home link, and the
/// older copy brought up to date.
async fn real_edits(work: &Path, quick: bool) {
    let files = work.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let mut edits = vec![psd_tools_edit(&files, quick)];
    edits.extend(blender_edits(&files, quick));
    if !quick {
        edits.push(gimp_edit(&files));
    }
    edits.push(tiff_edit(&files, quick));

    let server = Server::on(testkit::Cli::in_temp_dir(common::bin()));
    let link = Link::to(server.process.addr().parse().unwrap(), home()).await;
    let direct = Remote::new(&server.url, &server.token).unwrap();
    let remote = Remote::new(&link.url(), &server.token).unwrap();
    for (n, edit) in edits.iter().enumerate() {
        let size = std::fs::metadata(&edit.after).unwrap().len();
        let (whole_time, whole_bytes) = {
            let up = link.sent_up();
            let reader = tokio::fs::File::open(&edit.after).await.unwrap();
            let time = check_in(
                &direct,
                &remote,
                &format!("whole/{n}"),
                &edit.before,
                Upload::stream(reader),
            )
            .await;
            (time, link.sent_up() - up)
        };
        let (sent_time, sent_bytes) = {
            let up = link.sent_up();
            let upload = Upload::file(&edit.after);
            let time = check_in(
                &direct,
                &remote,
                &format!("chunks/{n}"),
                &edit.before,
                upload,
            )
            .await;
            (time, link.sent_up() - up)
        };
        let whole_name = format!("{} ({}): whole file, as today", edit.what, mib(size));
        let mb = |bytes: u64| bytes as f64 / 1e6;
        row(
            &whole_name,
            format!("{} in {:.1} s", mib(whole_bytes), whole_time.as_secs_f64()),
            "baseline",
            value(mb(whole_bytes), "MB sent").and("time", whole_time.as_secs_f64(), "s"),
        );
        row(
            &format!("{}: only the chunks the server lacks", edit.what),
            format!(
                "**{} ({:.1} % of the file) in {:.1} s = {:.2}x the whole file's time**",
                mib(sent_bytes),
                100.0 * sent_bytes as f64 / size as f64,
                sent_time.as_secs_f64(),
                sent_time.as_secs_f64() / whole_time.as_secs_f64()
            ),
            if n == 0 {
                "under 15 % of the file"
            } else {
                "in proportion to the edit"
            },
            value(mb(sent_bytes), "MB sent")
                .against(&whole_name, mb(whole_bytes), "MB sent")
                .and("time", sent_time.as_secs_f64(), "s")
                .against(&whole_name, whole_time.as_secs_f64(), "s"),
        );
        // The older copy brought up to date from its chunks.
        let copy = work.join(format!("copy-{n}"));
        std::fs::copy(&edit.before, &copy).unwrap();
        let artifact = direct
            .artifact_by_path(&repo(&format!("chunks/{n}")))
            .await
            .unwrap();
        let down = link.sent_down();
        let started = Instant::now();
        leasedesk::backend::download_reusing(
            &remote,
            artifact.id,
            artifact.head.version,
            &copy,
            std::slice::from_ref(&copy),
            None,
        )
        .await
        .unwrap();
        let fetched = link.sent_down() - down;
        assert_eq!(
            leasedesk::blobs::digest_file(&copy).unwrap().0,
            artifact.head.digest
        );
        let took = started.elapsed().as_secs_f64();
        let share = 100.0 * fetched as f64 / size as f64;
        row(
            &format!("{}: the older copy brought up to date", edit.what),
            format!(
                "{} fetched ({share:.1} % of the file) in {took:.1} s",
                mib(fetched)
            ),
            "the chunks the copy lacks",
            value(mb(fetched), "MB fetched").and("time", took, "s"),
        );
    }
}

/// Imports `before` at `path` (not over the link), checks it out over the
/// link and checks `upload` in there: the check-in's time.
async fn check_in(
    direct: &Remote,
    remote: &Remote,
    path: &str,
    before: &Path,
    upload: Upload,
) -> Duration {
    let artifact = direct
        .import(&repo(path), Upload::file(before))
        .await
        .unwrap();
    let checkout = remote
        .check_out(artifact.id, Default::default())
        .await
        .unwrap();
    let started = Instant::now();
    let done = remote.check_in(checkout.id, upload).await.unwrap();
    let took = started.elapsed();
    assert!(
        matches!(
            done.result,
            Some(leasedesk::model::CheckinResult::Committed { .. })
        ),
        "{done:?}"
    );
    took
}

/// 1 GiB checked in over the home link: uncut, then with the link down for
/// 10 s at half way (each a file of its own, so nothing is on the server).
async fn cut_in_the_middle(work: &Path, quick: bool) {
    let size: u64 = if quick { 32 << 20 } else { 1 << 30 };
    let server = Server::on(testkit::Cli::in_temp_dir(common::bin()));
    let link = std::sync::Arc::new(Link::to(server.process.addr().parse().unwrap(), home()).await);
    let direct = Remote::new(&server.url, &server.token).unwrap();
    let remote = Remote::new(&link.url(), &server.token).unwrap();
    let small = work.join("small.bin");
    std::fs::write(&small, b"v1").unwrap();
    let mut runs = Vec::new();
    for (n, cut) in [false, true].into_iter().enumerate() {
        let file = work.join(format!("big-{n}.bin"));
        make_file(&file, size, n as u64 + 7);
        settle(&file);
        let up = link.sent_up();
        let cutter = cut.then(|| {
            let link = link.clone();
            tokio::spawn(async move {
                link.until_sent_up(up + size / 2).await;
                link.set_down(true);
                tokio::time::sleep(OUTAGE).await;
                link.set_down(false);
            })
        });
        let time = check_in(
            &direct,
            &remote,
            &format!("big/{n}"),
            &small,
            Upload::file(&file),
        )
        .await;
        if let Some(cutter) = cutter {
            cutter.await.unwrap();
        }
        runs.push((time, link.sent_up() - up));
        let _ = std::fs::remove_file(&file);
    }
    let label = size_label(size);
    let [(uncut, uncut_bytes), (cut, cut_bytes)] = runs[..] else {
        unreachable!()
    };
    let uncut_name = format!("check-in of {label} over the home link, uncut");
    row(
        &uncut_name,
        format!("{:.1} s, {} sent", uncut.as_secs_f64(), mib(uncut_bytes)),
        "baseline",
        value(uncut.as_secs_f64(), "s").and("sent", uncut_bytes as f64 / 1e6, "MB"),
    );
    row(
        &format!(
            "the same, the link down for {} s at half way",
            OUTAGE.as_secs()
        ),
        format!(
            "**{:.1} s = {:.3}x (uncut + outage); {:.3}x the file sent**",
            cut.as_secs_f64(),
            cut.as_secs_f64() / (uncut + OUTAGE).as_secs_f64(),
            cut_bytes as f64 / size as f64
        ),
        "at most 1.1x uncut + outage; at most 1.05x the file",
        value(cut.as_secs_f64(), "s")
            .against("uncut + outage", (uncut + OUTAGE).as_secs_f64(), "s")
            .and("sent", cut_bytes as f64 / 1e6, "MB")
            .against("the file", size as f64 / 1e6, "MB"),
    );
}

/// Noise of `size` bytes from `seed` (each run's file its own).
fn make_file(path: &Path, size: u64, seed: u64) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut steps = testkit::noise::Xorshift::seeded(seed);
    let mut block = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for b in block.iter_mut() {
            *b = steps.next_u64() as u8;
        }
        let n = left.min(block.len() as u64) as usize;
        out.write_all(&block[..n]).unwrap();
        left -= n as u64;
    }
}

fn repo(path: &str) -> RepoPath {
    path.parse().unwrap()
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn run(command: &mut Command) {
    let out = command.output().expect("the tool runs");
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// psd-tools writes a PSD of 20 layers, then the same with layer 7 repainted.
fn psd_tools_edit(files: &Path, quick: bool) -> Edit {
    let (w, h) = if quick {
        ("800", "600")
    } else {
        ("3000", "2400")
    };
    let script = files.join("psd.py");
    std::fs::write(&script, PSD_SCRIPT).unwrap();
    let python = common::bench_python();
    let before = files.join("layers-before.psd");
    let after = files.join("layers-after.psd");
    run(Command::new(&python)
        .arg(&script)
        .arg(&before)
        .args([w, h, "-1"]));
    run(Command::new(&python)
        .arg(&script)
        .arg(&after)
        .args([w, h, "7"]));
    Edit {
        what: "psd-tools PSD of 20 layers, one layer repainted".into(),
        before,
        after,
    }
}

const PSD_SCRIPT: &str = r#"
import sys, numpy as np
from PIL import Image
from psd_tools import PSDImage
from psd_tools.api.layers import PixelLayer
out, w, h, changed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
psd = PSDImage.new('RGB', (w, h))
rng = np.random.default_rng(1)
y, x = np.mgrid[0:h, 0:w]
for i in range(20):
    base = ((x * (i + 1) + y * 3) % 256).astype(np.uint8)
    grain = rng.integers(0, 40, (h, w), dtype=np.uint8)
    pixels = np.stack([base, base + grain, (y % 256).astype(np.uint8), np.full((h, w), 255, np.uint8)], axis=-1)
    if i == changed:
        pixels[h // 4: h // 2, w // 4: w // 2, :3] = (200, 40, 40)
    psd.append(PixelLayer.frompil(Image.fromarray(pixels, 'RGBA'), psd, f"layer {i}"))
psd.save(out)
"#;

/// Blender saves a scene of a million-vertex grid, then the same with one
/// object moved: uncompressed, and with zstd.
fn blender_edits(files: &Path, quick: bool) -> Vec<Edit> {
    let script = files.join("blend.py");
    std::fs::write(&script, BLEND_SCRIPT).unwrap();
    let side = if quick { "200" } else { "900" };
    ["plain", "zstd"]
        .into_iter()
        .map(|kind| {
            let save = |state: &str| {
                let out = files.join(format!("scene-{kind}-{state}.blend"));
                run(Command::new("blender")
                    .args(["-b", "--factory-startup", "--python"])
                    .arg(&script)
                    .arg("--")
                    .arg(&out)
                    .args([state, kind, side]));
                out
            };
            Edit {
                what: format!(
                    "Blender .blend ({}), one object moved",
                    if kind == "zstd" {
                        "zstd"
                    } else {
                        "uncompressed"
                    }
                ),
                before: save("before"),
                after: save("edit"),
            }
        })
        .collect()
}

const BLEND_SCRIPT: &str = r#"
import bpy, sys
out, state, kind, side = sys.argv[sys.argv.index("--") + 1:]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.mesh.primitive_grid_add(x_subdivisions=int(side), y_subdivisions=int(side), size=10)
grid = bpy.context.active_object
for i, v in enumerate(grid.data.vertices):
    v.co.z = ((i * 7919) % 1000) / 1000.0
bpy.ops.mesh.primitive_cube_add(location=(0, 0, 3))
if state == "edit":
    bpy.context.active_object.location.x = 1.5
bpy.ops.wm.save_as_mainfile(filepath=out, compress=(kind == "zstd"))
"#;

/// GIMP (batch mode) opens the psd-tools PSD and saves it as a PSD, then
/// does the same with one layer's area repainted.
fn gimp_edit(files: &Path) -> Edit {
    let source = files.join("layers-before.psd");
    let resave = |out: &Path, paint: bool| {
        let paint = if paint {
            "(let ((layer (vector-ref (cadr (gimp-image-get-layers image)) 5))) \
               (gimp-image-select-rectangle image CHANNEL-OP-REPLACE 400 300 900 700) \
               (gimp-context-set-foreground '(30 160 60)) \
               (gimp-drawable-edit-fill layer FILL-FOREGROUND) \
               (gimp-selection-none image))"
        } else {
            ""
        };
        let program = format!(
            "(let* ((image (car (file-psd-load RUN-NONINTERACTIVE \"{src}\" \"{src}\")))) {paint} \
               (file-psd-save RUN-NONINTERACTIVE image (car (gimp-image-get-active-drawable image)) \"{out}\" \"{out}\" 1 0) \
               (gimp-image-delete image))",
            src = source.display(),
            out = out.display()
        );
        run(Command::new("gimp")
            .args(["-i", "--no-data", "--no-fonts", "-b"])
            .arg(program)
            .args(["-b", "(gimp-quit 0)"]));
    };
    let before = files.join("gimp-before.psd");
    let after = files.join("gimp-after.psd");
    resave(&before, false);
    resave(&after, true);
    Edit {
        what: "GIMP re-saving the PSD, one layer repainted".into(),
        before,
        after,
    }
}

/// ImageMagick writes a photo-like TIFF, then repaints a region of it.
fn tiff_edit(files: &Path, quick: bool) -> Edit {
    let size = if quick { "1200x900" } else { "6000x4500" };
    let before = files.join("photo-before.tif");
    let after = files.join("photo-after.tif");
    run(Command::new("convert")
        .args([
            "-size",
            size,
            "plasma:fractal",
            "-seed",
            "3",
            "+noise",
            "Gaussian",
            "-depth",
            "8",
        ])
        .arg(&before));
    run(Command::new("convert")
        .arg(&before)
        .args([
            "-fill",
            "rgb(40,90,200)",
            "-draw",
            "rectangle 300,300 700,600",
        ])
        // As it was: no alpha channel added by the fill.
        .args(["-alpha", "off", "-type", "TrueColor", "-depth", "8"])
        .arg(&after));
    Edit {
        what: "TIFF, a region repainted (ImageMagick)".into(),
        before,
        after,
    }
}

//! `cargo xtask bench`, the object store's part (issue 11): a 256 MiB check-in
//! through a release `leasedesk serve --blobs s3://…` against moto (the tests'
//! S3 server, `testkit/src/s3.rs`), beside `cp` of the same file and beside
//! moto taking the same bytes straight from a client; the server's peak
//! memory. Prints Markdown rows. `--quick` uses 64 MiB; `--only objects` runs
//! only this bench's part.

#[path = "common/mod.rs"]
#[allow(dead_code)] // its rows are printed by figures.rs
mod common;
#[path = "common/figures.rs"]
mod figures;

use std::path::Path;

use std::time::{Duration, Instant};

use common::{bin, make_big_file, median, peak_memory, settle, size_label, Server};
use figures::{row, value, Data};
use leasedesk::{Backend, Remote, Upload};
use object_store::{ObjectStoreExt, WriteMultipart};
use testkit::{s3, WithEnvironment};
use tokio::io::AsyncReadExt;

const RUNS: usize = 3;

fn main() {
    let Some(flags) = common::Flags::for_part("objects") else {
        return;
    };
    let quick = flags.quick;
    let size: u64 = if quick { 64 << 20 } else { 256 << 20 };
    let work = common::work_dir("bench-objects");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    common::table_head();
    runtime.block_on(check_in(&work, size));
    let _ = std::fs::remove_dir_all(&work);
}

/// A real `leasedesk serve --blobs s3://…` on 127.0.0.1:0.
fn start_server(data: &Path, bucket: &s3::S3) -> Server {
    Server::on(
        testkit::Cli::new(bin())
            .envs(bucket.env.iter().map(|(k, v)| (k, v)))
            .data(data)
            .blobs(&bucket.url("bench")),
    )
}

/// `source` with one byte of `mark` appended: the same size but for one
/// byte, and a digest of its own.
fn distinct_copy(source: &Path, to: &Path, mark: u8) {
    std::fs::copy(source, to).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(to)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &[mark]))
        .unwrap();
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

async fn check_in(work: &Path, size: u64) {
    let source = work.join("big.bin");
    make_big_file(&source, size);
    let label = size_label(size);
    let moto = s3::Moto::start();
    let bucket = moto.bucket();
    let server = start_server(&work.join("data"), &bucket);
    let remote = Remote::new(&server.url, &server.token).unwrap();
    let small = work.join("small.bin");
    std::fs::write(&small, b"v1").unwrap();

    let (mut cp, mut direct, mut cli, mut declared) = (vec![], vec![], vec![], vec![]);
    let client = bucket.client();
    for rep in 0..RUNS {
        settle(&source);
        let copy = work.join("copy.bin");
        cp.push(common::timed_cp(&source, &copy));

        // moto alone: the same bytes from a client, 8 MiB parts, two in flight.
        settle(&source);
        let started = Instant::now();
        let upload = client
            .put_multipart(&format!("direct/{rep}").as_str().into())
            .await
            .unwrap();
        let mut upload = WriteMultipart::new_with_chunk_size(upload, 8 << 20);
        let mut file = tokio::fs::File::open(&source).await.unwrap();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            upload.wait_for_capacity(2).await.unwrap();
            upload.write(&buf[..n]);
        }
        upload.finish().await.unwrap();
        direct.push(started.elapsed());
        client
            .delete(&format!("direct/{rep}").as_str().into())
            .await
            .unwrap();

        // The CLI as a designer runs it: it declares no digest, so the server
        // hashes the upload into its spool before sending it to its key.
        let path = format!("big-{rep}.bin");
        let artifact = remote
            .import(&path.parse().unwrap(), Upload::file(&small))
            .await
            .unwrap();
        let run = |args: &[&str]| {
            server.process.client_cli(&server.token).ok(args);
        };
        run(&["checkout", &path]);
        // Bytes of its own each time: stored bytes would not be sent again.
        let mine = work.join("mine.bin");
        distinct_copy(&source, &mine, rep as u8);
        settle(&mine);
        let started = Instant::now();
        run(&["checkin", &path, mine.to_str().unwrap()]);
        cli.push(started.elapsed());
        std::fs::remove_file(&mine).unwrap();

        // A client that declares the digest (hashed first, in the timing):
        // the parts go straight to the blob's key.
        let out = remote
            .check_out(artifact.id, Default::default())
            .await
            .unwrap();
        // Other bytes than the CLI's check-in, so a new object is written.
        let other = work.join("other.bin");
        distinct_copy(&source, &other, 100 + rep as u8);
        settle(&other);
        let started = Instant::now();
        let (digest, _) = leasedesk::blobs::digest_file_mapped(&other).unwrap();
        remote
            .check_in(out.id, Upload::file(&other).with_digest(digest))
            .await
            .unwrap();
        declared.push(started.elapsed());
        std::fs::remove_file(&other).unwrap();
    }
    let (cp, direct, cli, declared) = (median(cp), median(direct), median(cli), median(declared));
    let ratio = |d: Duration| d.as_secs_f64() / cp.as_secs_f64();
    let cp_name = format!("cp of a page-cached {label} file, median of {RUNS}");
    let against_cp = |d: Duration| -> Data {
        value(d.as_secs_f64(), "s").against(&cp_name, cp.as_secs_f64(), "s")
    };
    row(&cp_name, secs(cp), "baseline", value(cp.as_secs_f64(), "s"));
    row(
        &format!("moto taking the {label} file straight from a client (multipart, 8 MiB parts)"),
        format!("{} = {:.2}x cp", secs(direct), ratio(direct)),
        "the S3 server's own cost",
        against_cp(direct),
    );
    row(
        &format!("check-in of the {label} file, CLI --server, server on --blobs s3:// (no digest declared: spooled, then sent)"),
        format!("**{} = {:.2}x cp**", secs(cli), ratio(cli)),
        "at most 3x cp",
        against_cp(cli),
    );
    row(
        &format!("check-in of the {label} file with its digest declared (hashed first, in the time): parts straight to the key"),
        format!("**{} = {:.2}x cp**", secs(declared), ratio(declared)),
        "at most 3x cp",
        against_cp(declared),
    );
    let mib = peak_memory(server.process.child.id()) as f64 / 1048576.0;
    row(
        "server peak memory (VmHWM) over those check-ins",
        format!("**{mib:.1} MiB**"),
        "under 64 MiB",
        value(mib, "MiB"),
    );
}

//! `cargo xtask bench`, part two: the server's figures against a real
//! `leasedesk serve` process on loopback, each beside its baseline from the same
//! run (etcd's lease grant + revoke, `cp`). Prints a Markdown report.
//! `--quick` uses small sizes; `--only http|etcd|upload|list|hostile|preview|changes`
//! runs one part (`hostile`: issue 9's figures, malformed requests over raw TCP, idle
//! connections, memory under the largest pages, shutdown with streams open;
//! `changes`: issue 23's change of 50 files against 50 single check-ins, bundled
//! and over HTTP).

#[path = "common/mod.rs"]
mod common;
#[path = "common/figures.rs"]
mod figures;
#[path = "common/pairs.rs"]
#[allow(dead_code)] // serving a store by its flags is the stream and team benches'
mod pairs;

#[path = "server/changes.rs"]
mod changes;
#[path = "server/hostile.rs"]
mod hostile;
#[path = "server/leases.rs"]
mod leases;
#[path = "server/transfers.rs"]
mod transfers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{make_big_file, median, peak_memory, settle, size_label, Server};
use figures::{row, value, Baseline, Data};
use pairs::{bin, edit_pair, make_artifacts, measure_pairs, ms, percentile, Etcd};
use serde_json::{json, Value};

use leases::{etcd_pairs, http_pairs};
use transfers::{cached_preview, list, upload};

const CLIENTS: usize = 16;

struct Sizes {
    pairs_per_client: usize,
    big_file: u64,
    artifacts: usize,
}

fn main() {
    let flags = common::Flags::from_args();
    let quick = flags.quick;
    let runs = |part: &str| flags.runs(part);
    let sizes = if quick {
        Sizes {
            pairs_per_client: 50,
            big_file: 64 << 20,
            artifacts: 500,
        }
    } else {
        Sizes {
            pairs_per_client: 1000,
            big_file: 1 << 30,
            artifacts: 10_000,
        }
    };
    let work = common::work_dir("bench-server");
    let runtime = tokio::runtime::Runtime::new().unwrap();

    common::table_head();
    if runs("http") {
        runtime.block_on(http_pairs(&work, &sizes));
    }
    if runs("etcd") {
        runtime.block_on(etcd_pairs(&work, &sizes));
    }
    if runs("upload") {
        runtime.block_on(upload(&work, &sizes));
    }
    if runs("list") {
        runtime.block_on(list(&work, &sizes));
    }
    if runs("hostile") {
        runtime.block_on(hostile::run(&work, sizes.artifacts));
    }
    if runs("preview") {
        runtime.block_on(cached_preview(&work));
    }
    if runs("changes") {
        runtime.block_on(changes::run(&work, quick));
    }
    let _ = std::fs::remove_dir_all(&work);
}

impl Server {
    /// `host:port` of `url`, for raw TCP.
    fn addr(&self) -> String {
        self.url.trim_start_matches("http://").to_owned()
    }

    fn start(data: &Path) -> Self {
        Self::on(testkit::Cli::new(bin()).data(data))
    }

    /// The most memory the server process has held so far.
    fn peak_memory(&self) -> u64 {
        peak_memory(self.process.child.id())
    }
}

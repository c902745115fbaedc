//! The `leasedesk` command: parses arguments and hands them to `cli`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Before anything else: this program may have been started to read one
    // PDF for a preview, in a process of its own.
    leasedesk::preview::isolated::serve_or_enable();
    let args = cli::Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    runtime.block_on(cli::run(args))
}

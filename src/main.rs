//! The `leasedesk` command: parses arguments and hands them to `cli`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let args = cli::Args::parse();
    cli::run(args).await
}

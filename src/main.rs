//! The `leasedesk` command: parses arguments and hands them to `cli`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Before anything else: this program may have been started to read one
    // PDF for a preview, in a process of its own.
    leasedesk::preview::isolated::serve_or_enable();
    let args = cli::Args::parse();
    if args.serves() {
        one_malloc_arena();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    runtime.block_on(cli::run(args))
}

/// glibc gives each thread that allocates an arena of its own (up to eight
/// a core) and keeps what is freed in it for that arena. A server's buffers
/// are made on the runtime's threads and freed on the blocking pool's, so
/// its memory grew by megabytes for each gigabyte received (69 MiB after
/// four 1 GiB check-ins and gets); with one arena it stays near 39 MiB, at
/// the same speed. Called before any thread starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_malloc_arena() {
    // SAFETY: mallopt only sets a tunable of the allocator; no other thread
    // is running yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}

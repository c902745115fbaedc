//! What the tests (`tests/`, `src-tauri/tests/`) and the benches share to run
//! Leasedesk for real: the CLI on a store, and `leasedesk serve` started on
//! 127.0.0.1:0 with its address read from what it prints; a PostgreSQL and an S3
//! (moto) of their own; git kept apart from the machine's; deterministic
//! noise for the bytes they send. A dev-dependency only: it never links the
//! `leasedesk` library, it runs the binary it is given.

pub mod git;
pub mod link;
pub mod noise;
pub mod postgres;
pub mod python;
pub mod s3;
mod serve;
pub mod tool;

pub use serve::{ask_to_stop, peak_memory, Cli, Environment, Serve, ServeProcess, WithEnvironment};

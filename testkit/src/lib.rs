//! What the tests (`tests/`, `src-tauri/tests/`) and the benches share to run
//! Leasedesk for real: the CLI on a store, and `leasedesk serve` started on
//! 127.0.0.1:0 with its address read from what it prints. A dev-dependency
//! only: it never links the `leasedesk` library, it runs the binary it is given.

mod serve;

pub use serve::{ask_to_stop, Cli, Serve, ServeProcess};

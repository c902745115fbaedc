//! Leasedesk: one writer at a time for files that cannot be merged.
//!
//! This library is the `leasedesk` command's view of the layers, each a crate
//! under `crates/` (see ARCHITECTURE.md): it names them as the command, the
//! tests and the benches use them, and adds nothing of its own. The command
//! itself is `cli`, in the binary.

pub use leasedesk_backend as backend;
pub use leasedesk_backend::{agent, chunking};
pub use leasedesk_blobs as blobs;
pub use leasedesk_blobs::previews;
pub use leasedesk_client as remote;
pub use leasedesk_desk as desk;
pub use leasedesk_desk::workspace;
pub use leasedesk_engine as bundled;
pub use leasedesk_engine::token;
pub use leasedesk_files::{local_file, long_path, owner_only, places};
pub use leasedesk_model::{clock, error, failpoint, model, wire};
pub use leasedesk_preview as preview;
pub use leasedesk_rules as rules;
pub use leasedesk_server as server;
pub use leasedesk_server::metrics;
pub use leasedesk_trust as trust;

/// The stores behind the rules' one transaction type: SQLite, PostgreSQL.
pub mod store {
    pub use leasedesk_store::*;
    pub use leasedesk_store_postgres::{self as postgres, copy, PgStore};
    pub use leasedesk_store_sqlite::{self as sqlite, SqliteStore};
}

pub use backend::{Backend, Content, Studio, Upload};
pub use bundled::{Bundled, Location, Options};
pub use error::{Error, Result};
pub use remote::{Remote, Trust};

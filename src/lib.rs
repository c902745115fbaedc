//! Leasedesk: one writer at a time for files that cannot be merged.
//!
//! # Layout
//!
//! - [`model`]: the nouns (artifact, head, lease, check-out, edit, proposal,
//!   event), shaped as the objects of the HTTP API.
//! - [`error`]: the one error enum; each variant is something a caller acts on.
//! - [`rules`]: the lease rules, as functions over one store transaction that
//!   take `now` as an argument.
//! - [`store`]: the SQLite store (schema as numbered migrations); the only
//!   module that knows SQL.
//! - [`blobs`]: content-addressed files, streamed in and hashed while copied:
//!   the seam over a folder and S3-compatible object storage (`--blobs s3://…`).
//! - [`backend`]: the [`Backend`] trait every caller uses.
//! - [`bundled`]: the in-process backend over a data folder.
//! - [`remote`]: the same trait over HTTP, for a team's server.
//! - [`trust`]: which server certificates a client (HTTP or PostgreSQL) accepts.
//! - [`wire`]: our header names, shared by the server and its clients.
//! - [`server`]: `leasedesk serve`, the HTTP API over a bundled backend.
//! - [`metrics`]: what the server tells Prometheus (`serve --metrics-listen`).
//! - [`agent`]: an agent's edit as one call that always releases its lease.
//! - [`token`]: bearer tokens, kept hashed.
//! - [`desk`]: what the desktop app shows and does, host-free.
//! - [`workspace`]: the designer's folder of local copies (read-only unless
//!   checked out, never overwritten while changed) and its watcher.
//! - [`clock`], [`failpoint`]: time and injected failures, for the edges and tests.
//! - [`preview`]: a file's image fitted into a square, from its bytes alone.
//! - [`previews`]: previews made once per digest and size, kept in a folder.
//! - [`owner_only`]: the data folder's files and folders, private to their owner.
//! - [`places`]: where a user's store, settings and workspace live on each system.
//! - [`local_file`]: reading and replacing a designer's files, which another
//!   program may hold (Windows).
//! - [`long_path`]: Windows paths past 260 characters, for our own Windows calls.
//! - `cli` (the binary's): the `leasedesk` command.

pub mod agent;
pub mod backend;
pub mod blobs;
pub mod bundled;
pub mod chunking;
pub mod desk;
pub mod failpoint;
pub mod local_file;
pub mod long_path;
#[cfg(feature = "server")]
pub mod metrics;
pub mod owner_only;
pub mod places;
pub mod preview;
pub mod previews;
pub mod remote;
pub mod rules;
#[cfg(feature = "server")]
pub mod server;
pub mod store;
pub mod token;
pub mod trust;
pub mod workspace;

// The nouns are their own crate, below every other: their paths stay ours.
pub use leasedesk_model::{clock, error, model, wire};

pub use backend::{Backend, Content, Studio, Upload};
pub use bundled::{Bundled, Location, Options};
pub use error::{Error, Result};
pub use remote::{Remote, Trust};

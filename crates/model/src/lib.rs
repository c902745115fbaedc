//! Leasedesk's nouns, at the bottom of every other crate: the objects of
//! `docs/API.md` (artifacts, heads, leases, check-outs, proposals, events
//! and the studio's), validated names and paths, the one error type with
//! its codes, the names on the wire, the clock the edges read, and the
//! named failure points crash tests use.
//!
//! It never does I/O (but a failpoint's word on stderr, and `read` from a
//! reader it is handed), never knows a store, HTTP or the app, and never
//! reads the clock but through [`clock::Clock`]. A store's error becomes ours only
//! with that store's feature (`sqlite`, `postgres`).

pub mod clock;
pub mod error;
pub mod failpoint;
pub mod model;
pub mod read;
pub mod wire;

pub use error::{Code, Error, Result};

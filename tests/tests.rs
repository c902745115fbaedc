//! Every integration test, in one binary, through the public API on a real
//! SQLite file in a temporary folder. The tests of the team server (PostgreSQL,
//! moto), of TLS (openssl's CAs) and of the preview readers against Python's and
//! Blender's (psd-tools, Pillow) run on Linux only, beside those tools; the
//! rest run on Windows too, under Wine (`cargo xtask test`).

// Elsewhere the helpers only those Linux tests call are dead; Linux's clippy
// still finds what is dead everywhere.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

mod harness;

mod blobs;
mod changes;
mod checkin;
mod checkout;
mod cli;
mod crash;
mod desk;
mod devices;
mod edits;
mod events;
mod failover;
mod git_locks;
mod holds;
mod hostile;
mod http;
mod inputs;
// The real git-lfs client, which the Windows leg does not have.
#[cfg(target_os = "linux")]
mod lfs;
mod listing;
#[cfg(target_os = "linux")]
mod migrate;
#[cfg(target_os = "linux")]
mod objects;
mod offline;
#[cfg(target_os = "linux")]
mod openapi;
mod operations;
mod paths;
mod plugin_api;
#[cfg(target_os = "linux")]
mod preview_colour;
#[cfg(target_os = "linux")]
mod preview_design;
#[cfg(target_os = "linux")]
mod preview_formats;
#[cfg(target_os = "linux")]
mod preview_layers;
#[cfg(target_os = "linux")]
mod preview_psd;
mod proposals;
mod races;
mod requests;
mod restarts;
mod resumes;
mod review;
mod seeing;
mod studio;
#[cfg(target_os = "linux")]
mod team;
mod timing;
#[cfg(target_os = "linux")]
mod tls;
mod tokens;
mod transfers;
#[cfg(windows)]
mod windows;
mod workspace;

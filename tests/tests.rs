//! Every integration test, in one binary, through the public API on a real
//! SQLite file in a temporary folder.

mod harness;

mod blobs;
mod checkin;
mod checkout;
mod cli;
mod crash;
mod desk;
mod edits;
mod events;
mod failover;
mod hostile;
mod http;
mod inputs;
mod migrate;
mod objects;
mod offline;
mod operations;
mod paths;
mod preview_formats;
mod preview_psd;
mod proposals;
mod races;
mod seeing;
mod team;
mod tls;
mod tokens;
mod workspace;

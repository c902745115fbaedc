//! Seeing the work: descriptions of versions and proposals, one file's
//! history paged either way, a proposal's bytes for every reviewer, and the
//! preview endpoints (their errors and cache; each format's reader has its
//! own tests). The scenarios are its submodules; this module holds what
//! they share.

use leasedesk::model::*;
use leasedesk::Error;
use reqwest::StatusCode;
use tokio::io::AsyncReadExt;

use crate::harness::*;

mod descriptions;
mod previews;

/// Alice's late check-in, kept as a proposal while bob committed version 2.
async fn alices_proposal(f: &Fixture, data: &[u8]) -> (Artifact, Proposal) {
    let a = f.import("hero.psd", b"v1").await;
    let alice = f.alice.check_out(a.id, for_seconds(60)).await.unwrap();
    f.advance(HOUR);
    let bob = f.bob.check_out(a.id, checkout_request()).await.unwrap();
    f.bob.check_in(bob.id, bytes(b"v2")).await.unwrap();
    let done = f.alice.check_in(alice.id, bytes(data)).await.unwrap();
    let Some(CheckinResult::Proposal { proposal }) = done.result else {
        panic!("expected a proposal, got {:?}", done.result);
    };
    (a, proposal)
}

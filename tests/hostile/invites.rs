//! Invites and the studio's admin endpoints against a hostile client (API.md
//! "Joining a studio", "Folder permissions"): a guesser of codes gets ten
//! tries a minute from an address, however fast it sends (`guessing`); a
//! code redeemed twice at once makes one token, and malformed redeems are
//! our JSON, never a 500 (`redeeming`); bad rules change nothing, and a
//! participant who is not an admin reaches no admin endpoint (`admin`).
//! Over the server of a remote fixture (the real `leasedesk serve` code on
//! 127.0.0.1:0), from several loopback addresses where a test needs them.
//! This module holds what they share.

use std::net::{IpAddr, Ipv4Addr};

use reqwest::Method;
use serde_json::json;

use crate::harness::*;

mod admin;
mod guessing;
mod redeeming;

/// What these tests ask of a server beyond plain calls.
trait Redeeming {
    /// POST /v1/invites/redeem with `body` as sent, and no token.
    async fn redeem(&self, body: impl Into<Vec<u8>>) -> Answer;

    /// The admin's invite for `name`: its code.
    async fn invite(&self, admin: &str, name: &str) -> String;
}

impl Redeeming for Http {
    async fn redeem(&self, body: impl Into<Vec<u8>>) -> Answer {
        self.call(Method::POST, "/v1/invites/redeem", None, Some(body.into()))
            .await
    }

    async fn invite(&self, admin: &str, name: &str) -> String {
        let made = self
            .send_json(Method::POST, "/v1/invites", admin, json!({ "name": name }))
            .await;
        assert_eq!(made.status, 201, "{}", made.body);
        made.body["code"].as_str().unwrap().to_owned()
    }
}

/// Loopback address 127.0.0.`n`.
fn loopback(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// A code shaped like a real one (32 symbols of the codes' alphabet in
/// groups of four), random, so almost surely no invite's.
fn random_code() -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    let symbols: Vec<char> = a
        .as_bytes()
        .iter()
        .chain(b.as_bytes())
        .map(|byte| ALPHABET[usize::from(byte % 32)] as char)
        .collect();
    symbols
        .chunks(4)
        .map(|group| group.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-")
}

fn redeem_body(code: &str, device: &str) -> Vec<u8> {
    json!({ "code": code, "device": device })
        .to_string()
        .into_bytes()
}

/// `(status, code)` of an answer: the error code, or "" for a success.
fn outcome(answer: &Answer) -> (u16, String) {
    (
        answer.status.as_u16(),
        answer.body["error"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Asserts that `answer` (to `what`) is the refusal `(status, code)`.
#[track_caller]
fn assert_refused(answer: &Answer, (status, code): (u16, &str), what: &str) {
    let refusal = (status, code.to_owned());
    assert_eq!(outcome(answer), refusal, "{what}: {}", answer.body);
}

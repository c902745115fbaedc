//! Transfers over links that break (`docs/API-transfers.md`): resumable
//! uploads of only the chunks a server lacks, chunk lists, ranges and
//! updates (`chunks`), a new file sent whole (`whole`), uploads without a
//! list (`unlisted`), and what a client and a server do when the link is
//! cut (`cuts`), through a real server and, where the link matters, a real
//! TCP proxy that cuts it (`testkit::link`). This module holds the HTTP
//! calls and files they share.

use leasedesk::chunking::{chunk_reader, Chunked};

use crate::harness::*;

mod chunks;
mod cuts;
mod unlisted;
mod whole;

const MIB: usize = 1 << 20;

/// The participant's token-bearing HTTP client for the fixture's server.
struct Api {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Api {
    fn of(f: &Fixture, who: &str) -> Self {
        let server = f.server.as_ref().expect("a served fixture");
        Self {
            base: server.base.clone(),
            token: server.token(who).to_owned(),
            http: reqwest::Client::new(),
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    async fn begin(&self, aim: &str, list: &Chunked) -> (reqwest::StatusCode, serde_json::Value) {
        let response = self
            .request(
                reqwest::Method::POST,
                &format!("/v1/uploads?{aim}&size={}", list.size),
            )
            .header("Leasedesk-Digest", list.digest.as_str())
            .body(list.encode_list())
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn append(
        &self,
        id: &str,
        offset: u64,
        bytes: Vec<u8>,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let response = self
            .request(reqwest::Method::PATCH, &format!("/v1/uploads/{id}"))
            .header("Upload-Offset", offset)
            .body(bytes)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn state(&self, id: &str) -> (reqwest::StatusCode, serde_json::Value) {
        let response = self
            .request(reqwest::Method::GET, &format!("/v1/uploads/{id}"))
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn use_upload(&self, path: &str, id: &str) -> (reqwest::StatusCode, serde_json::Value) {
        let response = self
            .request(reqwest::Method::POST, path)
            .header("Leasedesk-Upload", id)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }
}

impl Api {
    /// Uses upload `id` at `path`, which must refuse it: its bytes are not
    /// the digest declared.
    async fn use_refused_as_mismatch(&self, path: &str, id: &str) {
        let (status, refused) = self.use_upload(path, id).await;
        assert_eq!(
            (status.as_u16(), &refused["error"]),
            (400, &"digest_mismatch".into()),
            "{refused}"
        );
    }
}

/// The bytes an upload's state says to send, one chunk after another.
fn to_send(data: &[u8], list: &Chunked, state: &serde_json::Value) -> Vec<u8> {
    let at: Vec<(u64, u32)> = list.offsets().map(|(o, c)| (o, c.size)).collect();
    let mut bytes = Vec::new();
    for run in state["send"].as_array().unwrap() {
        let (first, end) = (run[0].as_u64().unwrap(), run[1].as_u64().unwrap());
        for i in first..end {
            let (offset, size) = at[i as usize];
            bytes.extend_from_slice(&data[offset as usize..offset as usize + size as usize]);
        }
    }
    bytes
}

fn list_of(data: &[u8]) -> Chunked {
    chunk_reader(data).unwrap()
}

/// `data` with `len` bytes replaced at `at`: an edit of one layer.
fn edited(data: &[u8], at: usize, len: usize, seed: u64) -> Vec<u8> {
    let mut out = data.to_vec();
    out[at..at + len].copy_from_slice(&noise(seed, len));
    out
}

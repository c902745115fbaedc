//! The HTTP contract of docs/API.md, checked with a plain HTTP client against
//! a real server: statuses, error codes and bodies, headers, and what bad or
//! broken requests leave behind. This module holds the plain client; the
//! scenarios are its submodules.

use std::io::Write;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::*;
use leasedesk::Backend;

mod listing;
mod permissions;
mod requests;
mod statuses;

struct Http {
    client: reqwest::Client,
    base: String,
}

struct Answer {
    status: StatusCode,
    cache_control: Option<String>,
    body: Value,
}

impl Http {
    fn of(f: &Fixture) -> Self {
        Self {
            client: reqwest::Client::new(),
            base: f.server.as_ref().expect("a remote fixture").base.clone(),
        }
    }

    /// GET `path` with `token`.
    async fn get(&self, path: &str, token: &str) -> Answer {
        self.call(Method::GET, path, Some(token), None).await
    }

    /// POST `body` (none if empty) to `path` with `token`.
    async fn post(&self, path: &str, token: &str, body: &[u8]) -> Answer {
        let body = (!body.is_empty()).then(|| body.to_vec());
        self.call(Method::POST, path, Some(token), body).await
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Answer {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        let cache_control = response
            .headers()
            .get("cache-control")
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = response.bytes().await.unwrap();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Answer {
            status,
            cache_control,
            body,
        }
    }
}

/// Asserts an error answer: its status, its code, a message, and no-store.
fn refused(answer: &Answer, status: StatusCode, code: &str) {
    assert_eq!(answer.status, status, "{}", answer.body);
    assert_eq!(answer.body["error"], code, "{}", answer.body);
    assert!(
        answer.body["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{}",
        answer.body
    );
    assert_eq!(answer.cache_control.as_deref(), Some("no-store"));
}

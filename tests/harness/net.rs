//! Talking to a server below the client: a plain socket that sends bytes as
//! written and reads the answer whole, a plain HTTP client whose requests are
//! what the test writes, and a JSON request in one call. Never through
//! `Remote`, whose own behaviour the tests check.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::Fixture;

/// A plain connection to `addr` whose reads give up after 20 s.
pub fn connect(addr: &str) -> std::net::TcpStream {
    let socket = std::net::TcpStream::connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    socket
}

/// Sends `request` to `addr` on a new plain connection and reads the answer
/// to its end, as text.
pub fn exchange(addr: &str, request: &[u8]) -> String {
    use std::io::{Read, Write};
    let mut socket = connect(addr);
    socket.write_all(request).unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    answer
}

/// Sends `request` and reads its answer's JSON, both of which must work.
pub async fn json_of(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// A plain HTTP client of one server: each request as the test writes it,
/// each answer read whole.
#[derive(Clone)]
pub struct Http {
    pub client: reqwest::Client,
    pub base: String,
}

/// A server's answer: its status, its `Cache-Control`, its JSON body (null
/// if it has none).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub cache_control: Option<String>,
    pub body: Value,
}

impl Answer {
    /// The status, as a number, and the body: what one answer is compared
    /// with another by.
    pub fn seen(&self) -> (u16, Value) {
        (self.status.as_u16(), self.body.clone())
    }

    /// The body's `message` (an error's words), "" if it has none.
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }
}

impl Http {
    /// A client of the fixture's server.
    pub fn of(f: &Fixture) -> Self {
        Self {
            client: reqwest::Client::new(),
            base: f.server.as_ref().expect("a remote fixture").base.clone(),
        }
    }

    /// A client of the fixture's server whose connections come from
    /// `address` (any of 127.0.0.0/8).
    pub fn from(f: &Fixture, address: IpAddr) -> Self {
        Self::at(&f.server.as_ref().expect("a served fixture").base, address)
    }

    /// A client of the server at `base`, from `address`.
    pub fn at(base: &str, address: IpAddr) -> Self {
        Self {
            client: reqwest::Client::builder()
                .local_address(address)
                .build()
                .unwrap(),
            base: base.to_owned(),
        }
    }

    /// A request to `path` with `token`, for the test to add to and send.
    pub fn request(&self, method: Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token)
    }

    /// GET `path` with `token`, its answer for the test to read itself
    /// (its bytes, its headers).
    pub async fn fetch(&self, path: &str, token: &str) -> reqwest::Response {
        let request = self.request(Method::GET, path, token);
        request.send().await.expect("the server answers")
    }

    /// GET `path` with `token`.
    pub async fn get(&self, path: &str, token: &str) -> Answer {
        self.call(Method::GET, path, Some(token), None).await
    }

    /// POST `body` (none if empty) to `path` with `token`.
    pub async fn post(&self, path: &str, token: &str, body: &[u8]) -> Answer {
        let body = (!body.is_empty()).then(|| body.to_vec());
        self.call(Method::POST, path, Some(token), body).await
    }

    /// `body` as JSON to `path` with `token`.
    pub async fn send_json(&self, method: Method, path: &str, token: &str, body: Value) -> Answer {
        let body = body.to_string().into_bytes();
        self.call(method, path, Some(token), Some(body)).await
    }

    /// One request, its token and body as given.
    pub async fn call(
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

//! Talking to a server below the client: a plain socket that sends bytes as
//! written and reads the answer whole, and a JSON request in one call. Never
//! through `Remote`, whose own behaviour the tests check.

use std::time::Duration;

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

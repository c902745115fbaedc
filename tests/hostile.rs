//! A hostile client against a real `leasedesk serve` process: half-sent and
//! malformed requests, stalls, revocations and shutdown under load. Plain
//! sockets, so the test sends exactly the bytes it means. This module holds
//! the served process and the raw client; the scenarios are its submodules.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::ServeProcess;

mod files;
mod invites;
mod pdfs;
mod requests;
mod review;
mod streams;

/// A `leasedesk serve` on 127.0.0.1:0 over its own data folder.
struct Served {
    process: ServeProcess,
    data: PathBuf,
}

impl Served {
    fn start(flags: &[&str]) -> Self {
        let cli = crate::harness::cli_in_temp_dir();
        Self::with_users(crate::harness::serve_logged(&cli), flags)
    }

    fn start_on(data: &Path, log: &Path, flags: &[&str]) -> Self {
        Self::with_users(
            crate::harness::cli_on().data(data).serve().log_to(log),
            flags,
        )
    }

    /// Serves `data` with its log written to a pipe nobody reads.
    fn start_logging_to_a_pipe(data: &Path, flags: &[&str]) -> Self {
        Self::with_users(
            crate::harness::cli_on()
                .data(data)
                .serve()
                .stderr(Stdio::piped()),
            flags,
        )
    }

    fn with_users(serve: testkit::Serve, flags: &[&str]) -> Self {
        for name in ["alice", "bob"] {
            // Already there when a test serves the same folder again.
            let _ = serve.cli().output(&["user", "add", name]);
        }
        let process = serve.args(flags).spawn();
        Self {
            data: process.cli.data_dir().expect("a data folder"),
            process,
        }
    }

    fn token(&self, name: &str) -> String {
        self.process.token(name)
    }

    fn connect(&self) -> TcpStream {
        crate::harness::connect(self.process.addr())
    }

    /// A new connection on which `request` (or its start) has been sent.
    fn connect_and_write(&self, request: &[u8]) -> TcpStream {
        let mut socket = self.connect();
        socket.write_all(request).unwrap();
        socket
    }

    /// Sends `request` on a new connection and reads the answer to its end.
    fn send(&self, request: &[u8]) -> Answer {
        Answer::read(&mut self.connect_and_write(request))
    }

    fn get(&self, path: &str, token: &str) -> Answer {
        self.send(
            format!(
                "GET {path} HTTP/1.1\r\nauthorization: Bearer {token}\r\nconnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
    }

    fn terminate(&mut self) {
        self.process.ask_to_stop();
    }

    /// Waits up to `limit` for the process to exit; how long it took.
    fn exit_within(&mut self, limit: Duration) -> Duration {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.process.child.try_wait().unwrap() {
                assert!(status.success(), "serve exited with {status}");
                return started.elapsed();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("serve did not exit within {limit:?} of SIGTERM");
    }

    fn log_text(&self) -> String {
        self.process.log_text()
    }
}

#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: Value,
}

impl Answer {
    /// One answer: a head, then a body of Content-Length bytes (or to the end).
    fn read(socket: &mut TcpStream) -> Answer {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let n = socket.read(&mut buf).expect("an answer");
            assert!(n > 0, "the connection closed without an answer: {bytes:?}");
            bytes.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&bytes[..head_end]).to_lowercase();
        let status = head[9..12].parse().unwrap();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .map(|n| n.trim().parse::<usize>().unwrap());
        let mut body = bytes[head_end..].to_vec();
        let chunked = head.contains("transfer-encoding: chunked");
        let complete = |body: &[u8]| match length {
            Some(n) => body.len() >= n,
            None => chunked && (body.ends_with(b"\r\n0\r\n\r\n") || body.starts_with(b"0\r\n\r\n")),
        };
        while !complete(&body) {
            match socket.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&buf[..n]),
            }
        }
        if chunked {
            body = dechunk(&body);
        }
        Answer {
            status,
            head,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        }
    }

    /// An error in the API's shape: this status and code, a message, no-store.
    fn refused(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.body["error"], code, "{self:?}");
        assert!(
            self.body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{self:?}"
        );
        assert!(self.head.contains("cache-control: no-store"), "{self:?}");
    }
}

/// A chunked body's bytes.
fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = chunked.windows(2).position(|w| w == b"\r\n") else {
            return body;
        };
        let size = std::str::from_utf8(&chunked[..line_end]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap(), 16).unwrap();
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&chunked[start..start + size]);
        chunked = &chunked[start + size + 2..];
    }
}

/// Whether the server has closed `socket` (reads the end of the stream).
fn closed_by_server(socket: &mut TcpStream, within: Duration) -> bool {
    socket.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match socket.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

fn bearer(token: &str) -> String {
    format!("authorization: Bearer {token}\r\n")
}

/// Imports `bytes` at `path` as the token's owner; the artifact's id.
fn import(served: &Served, token: &str, path: &str, bytes: &[u8]) -> String {
    let mut request = format!(
        "POST /v1/artifacts?path={path} HTTP/1.1\r\n{}content-length: {}\r\nconnection: close\r\n\r\n",
        bearer(token),
        bytes.len()
    )
    .into_bytes();
    request.extend_from_slice(bytes);
    let answer = served.send(&request);
    assert_eq!(answer.status, 201, "{answer:?}");
    answer.body["id"].as_str().unwrap().to_owned()
}

fn post_json(served: &Served, token: &str, path: &str, json: &str) -> Answer {
    served.send(
        format!(
            "POST {path} HTTP/1.1\r\n{}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
            bearer(token),
            json.len()
        )
        .as_bytes(),
    )
}

/// hero.psd imported and checked out by the token's owner: (artifact, check-out).
fn checked_out(served: &Served, token: &str) -> (String, String) {
    let id = import(served, token, "hero.psd", b"version one");
    let checkout = post_json(
        served,
        token,
        &format!("/v1/artifacts/{id}/checkouts"),
        "{}",
    );
    assert_eq!(checkout.status, 201, "{checkout:?}");
    (id, checkout.body["id"].as_str().unwrap().to_owned())
}

/// A check-in that declares `declared` bytes and sends only `sent`.
fn begin_checkin(
    served: &Served,
    token: &str,
    checkout_id: &str,
    declared: usize,
    sent: &[u8],
) -> TcpStream {
    let mut request = format!(
        "POST /v1/checkouts/{checkout_id}/checkin HTTP/1.1\r\n{}content-length: {declared}\r\n\r\n",
        bearer(token)
    )
    .into_bytes();
    request.extend_from_slice(sent);
    served.connect_and_write(&request)
}

/// The check-out is still open and the artifact still has its one version.
fn nothing_was_checked_in(served: &Served, token: &str, id: &str, checkout_id: &str) {
    let open = served.get(&format!("/v1/checkouts/{checkout_id}"), token);
    assert_eq!(open.body["state"], "open", "{open:?}");
    let versions = served.get(&format!("/v1/artifacts/{id}/versions"), token);
    assert_eq!(versions.body["versions"].as_array().unwrap().len(), 1);
}

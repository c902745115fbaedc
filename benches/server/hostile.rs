//! Issue 9's figures: what a hostile client gets from a release server. This
//! module holds the raw client (probes, their outcomes); the measures are its
//! submodules.

use super::*;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::AtomicUsize;
use std::sync::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "hostile/load.rs"]
mod load;
#[path = "hostile/malformed.rs"]
mod malformed;

use load::{big_pages, idle_connections, shutdown_with_streams};
use malformed::malformed;

pub async fn run(work: &Path, artifacts: usize) {
    raise_open_file_limit();
    malformed(work).await;
    idle_connections(work).await;
    big_pages(work, artifacts).await;
    shutdown_with_streams(work).await;
}

/// The bench holds a thousand sockets at once: lift its soft open-file
/// limit to the hard one, as `serve` does for itself.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write `limit`.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    }
}

/// One request sent raw: its bytes, whether the bench then closes its
/// writing half (for requests that would otherwise wait for more bytes),
/// and whether it is a HEAD (whose answer has no body).
struct Probe {
    kind: &'static str,
    bytes: Vec<u8>,
    close_write: bool,
    head: bool,
}

enum Outcome {
    Answered {
        status: u16,
        no_store: bool,
        json_error: bool,
    },
    /// The server closed (or reset) the connection without an answer.
    Closed,
    /// No answer and no close within 20 s.
    Silent,
}

struct Reader {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Reader {
    fn fill(&mut self) -> std::io::Result<bool> {
        let mut chunk = [0u8; 16 << 10];
        let n = self.stream.read(&mut chunk)?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    /// Where `needle` ends in the buffer, reading more until it is there.
    fn find(&mut self, needle: &[u8]) -> std::io::Result<Option<usize>> {
        loop {
            if let Some(i) = self.buf.windows(needle.len()).position(|w| w == needle) {
                return Ok(Some(i + needle.len()));
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    fn take(&mut self, n: usize) -> std::io::Result<Option<Vec<u8>>> {
        while self.buf.len() < n {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(Some(self.buf.drain(..n).collect()))
    }

    fn body(&mut self, length: Option<usize>, chunked: bool) -> std::io::Result<Option<Vec<u8>>> {
        if chunked {
            let mut body = Vec::new();
            loop {
                let Some(end) = self.find(b"\r\n")? else {
                    return Ok(None);
                };
                let line = self.take(end)?.unwrap();
                let line = String::from_utf8_lossy(&line);
                let size = line.trim().split(';').next().unwrap_or("");
                let Ok(size) = usize::from_str_radix(size, 16) else {
                    return Ok(None);
                };
                if size == 0 {
                    return Ok(Some(body));
                }
                let Some(data) = self.take(size + 2)? else {
                    return Ok(None);
                };
                body.extend_from_slice(&data[..size]);
            }
        } else if let Some(length) = length {
            self.take(length)
        } else {
            while self.fill()? {}
            Ok(Some(std::mem::take(&mut self.buf)))
        }
    }
}

fn exchange(addr: &str, probe: &Probe) -> Outcome {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    // The server may answer (413, 431) and close before taking it all.
    let _ = stream.write_all(&probe.bytes);
    if probe.close_write {
        let _ = stream.shutdown(Shutdown::Write);
    }
    let mut reader = Reader {
        stream,
        buf: Vec::new(),
    };
    loop {
        let end = match reader.find(b"\r\n\r\n") {
            Ok(Some(end)) => end,
            Ok(None) => return Outcome::Closed,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Outcome::Silent
            }
            Err(_) => return Outcome::Closed,
        };
        let head = reader.take(end).unwrap().unwrap();
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        if !matches!(response.parse(&head), Ok(httparse::Status::Complete(_))) {
            return Outcome::Answered {
                status: 0,
                no_store: false,
                json_error: false,
            };
        }
        let status = response.code.unwrap_or(0);
        if status == 100 {
            continue;
        }
        let header = |name: &str| {
            response
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
        };
        let no_store = header("cache-control").is_some_and(|v| v.contains("no-store"));
        let streaming = header("content-type").is_some_and(|v| v.contains("event-stream"));
        let length = header("content-length").and_then(|v| v.trim().parse().ok());
        let chunked = header("transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let json_error = if status < 400 || probe.head || streaming {
            true
        } else {
            match reader.body(length, chunked) {
                Ok(Some(body)) => serde_json::from_slice::<Value>(&body).is_ok_and(|v| {
                    v.is_object() && v["error"].is_string() && v["message"].is_string()
                }),
                _ => false,
            }
        };
        return Outcome::Answered {
            status,
            no_store,
            json_error,
        };
    }
}

/// A request with `Host` and `Connection: close`, and `Content-Length`
/// when it has a body.
fn request(method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

//! `cargo xtask bench`, part two: the server's figures against a real
//! `leasedesk serve` process on loopback, each beside its baseline from the same
//! run (etcd's lease grant + revoke, `cp`). Prints a Markdown report.
//! `--quick` uses small sizes; `--only http|etcd|upload|list|hostile|preview` runs one
//! part (`hostile`: issue 9's figures, malformed requests over raw TCP, idle
//! connections, memory under the largest pages, shutdown with streams open).

#[path = "common/mod.rs"]
mod common;
#[path = "common/pairs.rs"]
mod pairs;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{make_big_file, median, peak_memory, row, settle, size_label};
use pairs::{add_user, bin, edit_pair, make_artifacts, measure_pairs, ms, percentile, Etcd};
use serde_json::{json, Value};

const CLIENTS: usize = 16;

struct Sizes {
    pairs_per_client: usize,
    big_file: u64,
    artifacts: usize,
}

fn main() {
    let flags = common::Flags::from_args();
    let quick = flags.quick;
    let runs = |part: &str| flags.runs(part);
    let sizes = if quick {
        Sizes {
            pairs_per_client: 50,
            big_file: 64 << 20,
            artifacts: 500,
        }
    } else {
        Sizes {
            pairs_per_client: 1000,
            big_file: 1 << 30,
            artifacts: 10_000,
        }
    };
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-server");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();

    println!("| figure | measured | baseline / target |");
    println!("|---|---|---|");
    if runs("http") {
        runtime.block_on(http_pairs(&work, &sizes));
    }
    if runs("etcd") {
        runtime.block_on(etcd_pairs(&work, &sizes));
    }
    if runs("upload") {
        runtime.block_on(upload(&work, &sizes));
    }
    if runs("list") {
        runtime.block_on(list(&work, &sizes));
    }
    if runs("hostile") {
        runtime.block_on(hostile::run(&work, sizes.artifacts));
    }
    if runs("preview") {
        runtime.block_on(cached_preview(&work));
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// A real `leasedesk serve` on 127.0.0.1:0 over `data`, with one user's token.
struct Server {
    child: Child,
    url: String,
    token: String,
}

impl Server {
    /// `host:port` of `url`, for raw TCP.
    fn addr(&self) -> String {
        self.url.trim_start_matches("http://").to_owned()
    }

    fn start(data: &Path) -> Self {
        let store = [OsString::from("--data"), data.into()];
        let token = add_user(&store, "bench");
        let (child, url) = pairs::serve(&store, &[]);
        Self { child, url, token }
    }

    /// The most memory the server process has held so far.
    fn peak_memory(&self) -> u64 {
        peak_memory(self.child.id())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn http_pairs(work: &Path, sizes: &Sizes) {
    let server = Server::start(&work.join("http"));
    let http = reqwest::Client::new();
    let artifacts = make_artifacts(&http, &server.url, &server.token, CLIENTS).await;
    let (url, token) = (server.url.clone(), server.token.clone());
    let (rate, median, p99) = measure_pairs(CLIENTS, sizes.pairs_per_client, move |client| {
        let (http, url, token, artifact) = (
            http.clone(),
            url.clone(),
            token.clone(),
            artifacts[client].clone(),
        );
        async move { edit_pair(&http, &url, &token, &artifact).await }
    })
    .await;
    LAST_HTTP_RATE.store(rate as u64, Ordering::SeqCst);
    row(
        &format!("lease acquire + release over HTTP, {CLIENTS} clients, keep-alive"),
        format!(
            "**{rate:.0} pairs/s**, median {}, p99 {}",
            ms(median),
            ms(p99)
        ),
        "at least 3,000 pairs/s, p99 under 10 ms",
    );
    row(
        "server peak memory in that run",
        format!("{:.1} MiB", server.peak_memory() as f64 / 1048576.0),
        "",
    );
}

static LAST_HTTP_RATE: AtomicU64 = AtomicU64::new(0);

/// etcd's lease grant + revoke through its JSON gateway, the same way.
async fn etcd_pairs(work: &Path, sizes: &Sizes) {
    let Some(etcd) = Etcd::start(&work.join("etcd")).await else {
        row(
            "etcd lease grant + revoke",
            "not measured: etcd is not installed (apt-get install etcd-server)".into(),
            "",
        );
        return;
    };
    let (http, url) = (reqwest::Client::new(), etcd.url.clone());
    let (rate, median, p99) = measure_pairs(CLIENTS, sizes.pairs_per_client, move |_| {
        let (http, url) = (http.clone(), url.clone());
        async move {
            let granted: Value = http
                .post(format!("{url}/v3/lease/grant"))
                .json(&json!({ "TTL": 45 }))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let id = granted["ID"].as_str().expect("a lease id").to_owned();
            let revoked = http
                .post(format!("{url}/v3/lease/revoke"))
                .json(&json!({ "ID": id }))
                .send()
                .await
                .unwrap();
            assert!(revoked.status().is_success());
        }
    })
    .await;
    drop(etcd);
    let ours = LAST_HTTP_RATE.load(Ordering::SeqCst) as f64;
    let ratio = if ours > 0.0 {
        format!("; Leasedesk/etcd = {:.1}x", ours / rate)
    } else {
        String::new()
    };
    row(
        &format!("etcd 3.4 lease grant + revoke over its HTTP gateway, {CLIENTS} clients"),
        format!(
            "{rate:.0} pairs/s, median {}, p99 {}{ratio}",
            ms(median),
            ms(p99)
        ),
        "Leasedesk at least as fast",
    );
}

/// A check-in of a big file over loopback beside `cp` of it, and the server's
/// peak memory during the uploads.
async fn upload(work: &Path, sizes: &Sizes) {
    let source = work.join("big.bin");
    make_big_file(&source, sizes.big_file);
    let label = size_label(sizes.big_file);
    let quiet = || settle(&source);
    let server = Server::start(&work.join("upload"));
    let cli = |args: &[&str]| {
        let out = Command::new(bin())
            .args(["--server", &server.url])
            .args(args)
            .env("LEASEDESK_TOKEN", &server.token)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let small = work.join("small.bin");
    std::fs::write(&small, b"v1").unwrap();
    let copy = work.join("copy.bin");
    let (mut cp, mut checkin) = (vec![], vec![]);
    for rep in 0..5 {
        quiet();
        let started = Instant::now();
        assert!(Command::new("cp")
            .arg(&source)
            .arg(&copy)
            .status()
            .unwrap()
            .success());
        cp.push(started.elapsed());
        std::fs::remove_file(&copy).unwrap();

        let path = format!("big-{rep}.bin");
        cli(&["import", &path, small.to_str().unwrap()]);
        cli(&["checkout", &path]);
        quiet();
        let started = Instant::now();
        cli(&["checkin", &path, source.to_str().unwrap()]);
        checkin.push(started.elapsed());
    }
    let (cp, checkin) = (median(cp), median(checkin));
    row(
        &format!("cp of a page-cached {label} file, median of 5"),
        format!("{:.2} s", cp.as_secs_f64()),
        "baseline",
    );
    row(
        &format!(
            "check-in of the {label} file over loopback (CLI --server, streamed, hashed, fsynced)"
        ),
        format!(
            "**{:.2} s = {:.2}x cp**",
            checkin.as_secs_f64(),
            checkin.as_secs_f64() / cp.as_secs_f64()
        ),
        "at most 2x cp",
    );
    row(
        "server peak memory over those uploads",
        format!("**{:.1} MiB**", server.peak_memory() as f64 / 1048576.0),
        "under 48 MiB",
    );
}

/// A preview already made, asked for again: what a file list of thumbnails
/// costs the server once each has been made.
async fn cached_preview(work: &Path) {
    let server = Server::start(&work.join("preview"));
    let image = image::RgbaImage::from_fn(4096, 4096, |x, y| {
        image::Rgba([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 239) as u8, 255])
    });
    let source = work.join("poster.png");
    image.save(&source).unwrap();
    let imported = Command::new(bin())
        .args(["--server", &server.url, "--json"])
        .args(["import", "art/poster.png", source.to_str().unwrap()])
        .env("LEASEDESK_TOKEN", &server.token)
        .output()
        .unwrap();
    assert!(imported.status.success());
    let artifact: Value = serde_json::from_slice(&imported.stdout).unwrap();
    let url = format!(
        "{}/v1/artifacts/{}/preview?version=1&size=512",
        server.url,
        artifact["id"].as_str().unwrap()
    );
    let client = reqwest::Client::new();
    let ask = || async {
        let started = Instant::now();
        let answer = client
            .get(&url)
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let png = answer.bytes().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        started.elapsed()
    };
    let first = ask().await;
    let mut cached = Vec::new();
    for _ in 0..1000 {
        cached.push(ask().await);
    }
    cached.sort();
    row(
        "first 512 px preview of a 4096×4096 PNG (decoded, scaled, encoded, cached)",
        ms(first),
        "made once",
    );
    row(
        "the same preview again, cached: median / p99 of 1000 over loopback",
        format!(
            "**{} / {}**",
            ms(percentile(&cached, 0.5)),
            ms(percentile(&cached, 0.99))
        ),
        "under 5 ms at the server",
    );
}

/// Listing every artifact of a store that has many.
async fn list(work: &Path, sizes: &Sizes) {
    let data = work.join("list");
    {
        // Filled through the library, before the server starts.
        let store = leasedesk::Bundled::open(&data)
            .unwrap()
            .acting_as("user:bench".parse().unwrap());
        for i in 0..sizes.artifacts {
            let path: leasedesk::model::RepoPath = format!("projects/p{}/file-{i}.psd", i % 100)
                .parse()
                .unwrap();
            let bytes = format!("content {i}").into_bytes();
            leasedesk::Backend::import(
                &store,
                &path,
                leasedesk::Upload::stream(std::io::Cursor::new(bytes)),
            )
            .await
            .unwrap();
        }
    }
    let server = Server::start(&data);
    let http = reqwest::Client::new();
    let (mut at_server, mut with_parse) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let started = Instant::now();
        let response = http
            .get(format!("{}/v1/artifacts", server.url))
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap();
        // The server answers once the whole list is serialized: the headers'
        // arrival is the server's time (plus a loopback round trip).
        at_server.push(started.elapsed());
        let listed: Value = response.json().await.unwrap();
        with_parse.push(started.elapsed());
        assert_eq!(
            listed["artifacts"].as_array().unwrap().len(),
            sizes.artifacts
        );
    }
    row(
        &format!(
            "GET /v1/artifacts with {} artifacts, median of 20",
            sizes.artifacts
        ),
        format!(
            "**{} to the answer's headers**, {} with the 2.7 MB body read and parsed by the client",
            ms(median(at_server)),
            ms(median(with_parse))
        ),
        "under 50 ms at the server",
    );
}

/// Issue 9's figures: what a hostile client gets from a release server.
mod hostile {
    use super::*;
    use std::collections::BTreeMap;
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpStream};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

        fn body(
            &mut self,
            length: Option<usize>,
            chunked: bool,
        ) -> std::io::Result<Option<Vec<u8>>> {
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

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Every malformed or hostile request of the set, against one artifact
    /// and one open check-out of another.
    fn probes(token: &str, artifact: &str, checkout: &str) -> Vec<Probe> {
        let bearer = format!("Bearer {token}");
        let auth = [("Authorization", bearer.as_str())];
        let json_auth = [
            ("Authorization", bearer.as_str()),
            ("Content-Type", "application/json"),
        ];
        let mut out = Vec::new();
        let mut add = |kind: &'static str, bytes: Vec<u8>, close_write: bool| {
            out.push(Probe {
                kind,
                head: bytes.starts_with(b"HEAD "),
                bytes,
                close_write,
            })
        };

        // Request lines.
        let lines: Vec<Vec<u8>> = vec![
            b"GARBAGE\r\n\r\n".to_vec(),
            b"GET\r\n\r\n".to_vec(),
            b"GET /v1/me\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/9.9\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1 extra\r\nHost: x\r\n\r\n".to_vec(),
            b"GET  /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET\t/v1/me\tHTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET * HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n".to_vec(),
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1\nHost: x\n\n".to_vec(),
            b"\r\n\r\nGET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"G\0T /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/\x01me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/\xffme HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.0\r\n\r\n".to_vec(),
            b"GET http://evil.example/v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/me?%zz HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            format!("{} / HTTP/1.1\r\nHost: x\r\n\r\n", "X".repeat(2000)).into_bytes(),
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE AFTER\r\n\r\n".to_vec(),
            b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1\r\n\r\n".to_vec(),
            b"get /v1/me HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1\r\nHost: x\r\n\r".to_vec(),
            b"GET /v1/me HTTP/1.1\r\nHost: x\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1\r\nHost: x\r\n\n\r\n".to_vec(),
            b"GET /v1/me HTTP/01.1\r\nHost: x\r\n\r\n".to_vec(),
            b"GET /v1/me HTTP/1.1\r\r\nHost: x\r\n\r\n".to_vec(),
        ];
        for line in lines {
            // Only a head that is not whole needs the bench's end of stream to
            // be answered; a whole one gets it not, since hyper drops the
            // answer to a client that has half-closed.
            let whole =
                line.windows(4).any(|w| w == b"\r\n\r\n") || line.windows(2).any(|w| w == b"\n\n");
            add("request line", line, !whole);
        }

        // Heads: size, URI length, framing, bytes a header may not hold.
        let big = "a".repeat(70 << 10);
        add(
            "header",
            request(
                "GET",
                "/v1/me",
                &[("Authorization", &bearer), ("X-Big", &big)],
                b"",
            ),
            false,
        );
        let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
        add(
            "header",
            format!("GET /v1/me HTTP/1.1\r\nHost: x\r\n{many}\r\n").into_bytes(),
            false,
        );
        for uri_len in [8 << 10, 9 << 10, 60 << 10, 100 << 10] {
            let target = format!("/v1/artifacts/{}", "a".repeat(uri_len));
            add("uri", request("GET", &target, &auth, b""), false);
            let query = format!("/v1/events?after=0&x={}", "9".repeat(uri_len));
            add("uri", request("GET", &query, &auth, b""), false);
        }
        let checkouts = format!("/v1/artifacts/{artifact}/checkouts");
        let framing: Vec<(&str, &[u8])> = vec![
            ("Content-Length: 2\r\nContent-Length: 3", b"{}"),
            ("Content-Length: 2\r\nContent-Length: 2", b"{}"),
            ("Content-Length: 2, 2", b"{}"),
            ("Content-Length: -1", b"{}"),
            ("Content-Length: abc", b"{}"),
            ("Content-Length: +2", b"{}"),
            ("Content-Length: 99999999999999999999999", b"{}"),
            ("Content-Length: 18446744073709551616", b"{}"),
            (
                "Content-Length: 2\r\nTransfer-Encoding: chunked",
                b"2\r\n{}\r\n0\r\n\r\n",
            ),
            ("Transfer-Encoding: gzip", b"{}"),
            ("Transfer-Encoding: chunked, gzip", b"{}"),
            ("Transfer-Encoding: identity", b"{}"),
            (
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
                b"2\r\n{}\r\n0\r\n\r\n",
            ),
            ("Transfer-Encoding : chunked", b"2\r\n{}\r\n0\r\n\r\n"),
            ("Content-Length: 10", b"{}"),
            ("X-Nul: a\0b\r\nContent-Length: 2", b"{}"),
            ("X-N\0ul: ab\r\nContent-Length: 2", b"{}"),
            ("NoColonHere\r\nContent-Length: 2", b"{}"),
            ("Bad[]Name: x\r\nContent-Length: 2", b"{}"),
            (": empty-name\r\nContent-Length: 2", b"{}"),
            ("X-Cr: a\rb\r\nContent-Length: 2", b"{}"),
            ("X-High: \u{ff}\u{fe}\r\nContent-Length: 2", b"{}"),
            ("Expect: nonsense\r\nContent-Length: 2", b"{}"),
            ("Expect: 100-continue\r\nContent-Length: 2", b"{}"),
            ("Host: second\r\nContent-Length: 2", b"{}"),
            ("Content-Type: application/xml\r\nContent-Length: 2", b"{}"),
        ];
        for (headers, body) in framing {
            let mut bytes = format!(
                "POST {checkouts} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\nAuthorization: {bearer}\r\n{headers}\r\n\r\n"
            )
            .into_bytes();
            bytes.extend_from_slice(body);
            // A body shorter than its Content-Length needs the end of stream.
            let short = headers == "Content-Length: 10";
            add("framing", bytes, short);
        }
        add(
            "header",
            request(
                "POST",
                "/v1/artifacts?path=hostile/digest.bin",
                &[
                    ("Authorization", &bearer),
                    ("Leasedesk-Digest", "blake3:zz"),
                ],
                b"bytes",
            ),
            false,
        );
        add(
            "header",
            request(
                "POST",
                "/v1/artifacts?path=hostile/digest2.bin",
                &[
                    ("Authorization", &bearer),
                    ("Leasedesk-Digest", &format!("blake3:{}", "0".repeat(64))),
                ],
                b"bytes",
            ),
            false,
        );
        add(
            "header",
            request(
                "POST",
                "/v1/artifacts?path=hostile/message.bin",
                &[("Authorization", &bearer), ("Leasedesk-Message", "%FF%FE")],
                b"bytes",
            ),
            false,
        );

        // Chunked bodies, on an upload and on two JSON endpoints.
        let long_line = format!("5;{}\r\nhello\r\n0\r\n\r\n", "a".repeat(5000));
        let chunked: Vec<(&[u8], bool)> = vec![
            (b"zz\r\nhello\r\n0\r\n\r\n", false),
            (b"-5\r\nhello\r\n0\r\n\r\n", false),
            (b"FFFFFFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", false),
            (b"FFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", true),
            (b"5\r\nhello world\r\n0\r\n\r\n", false),
            (b"a\r\nhi\r\n0\r\n\r\n", true),
            (b"5\r\nhel", true),
            (b"5\r\nhelloXX0\r\n\r\n", false),
            (b"0x5\r\nhello\r\n0\r\n\r\n", false),
            (b" 5\r\nhello\r\n0\r\n\r\n", false),
            (b"\r\nhello\r\n0\r\n\r\n", false),
            (b"5\r\nhello\r\n", true),
            (b"0\r\nX-Trailer: a\0b\r\n\r\n", false),
            (long_line.as_bytes(), false),
        ];
        let chunked_targets = [
            "/v1/artifacts?path=hostile/chunked-N.bin".to_owned(),
            checkouts.clone(),
            format!("/v1/checkouts/{checkout}/extend"),
        ];
        for (n, (body, close_write)) in chunked.iter().enumerate() {
            for target in &chunked_targets {
                let target = target.replace("chunked-N", &format!("chunked-{n}"));
                let mut bytes = format!(
                    "POST {target} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\nAuthorization: {bearer}\r\nTransfer-Encoding: chunked\r\n\r\n"
                )
                .into_bytes();
                bytes.extend_from_slice(body);
                add("chunked", bytes, *close_write);
            }
        }

        // JSON bodies that are not the object asked for.
        let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let big_note = format!("{{\"note\":\"{}\"}}", "n".repeat(70 << 10));
        let huge = " ".repeat(1 << 20);
        let bodies: Vec<&[u8]> = vec![
            b"[60, \"note\"]",
            b"[]",
            b"\"a string\"",
            b"123",
            b"null",
            b"true",
            b"{\"ttl_seconds\": -1}",
            b"{\"ttl_seconds\": 1e400}",
            b"{\"ttl_seconds\": 18446744073709551616}",
            b"{\"ttl_seconds\": 9223372036854775808}",
            b"{\"ttl_seconds\": \"60\"}",
            b"{\"ttl_seconds\": 60.5}",
            b"{\"nope\": 1}",
            b"{",
            b"{\"ttl_seconds\": 60, \"ttl_seconds\": 60}",
            nested.as_bytes(),
            big_note.as_bytes(),
            huge.as_bytes(),
            b"\xff\xfe{}",
            b"\xef\xbb\xbf{}",
            b"{\"note\": \"\\ud800\"}",
            b"{\"ttl_seconds\": 0}",
            b"{\"reason\": 5}",
            b"{\"note\": \"a\0b\"}",
        ];
        let json_targets = [
            checkouts.clone(),
            format!("/v1/checkouts/{checkout}/extend"),
            format!("/v1/artifacts/{artifact}/edits"),
            format!("/v1/artifacts/{artifact}/break"),
        ];
        for body in &bodies {
            for target in &json_targets {
                add("json", request("POST", target, &json_auth, body), false);
            }
        }

        // Numbers past their range, and numbers that are not numbers.
        let numbers = [
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999999",
            "-1",
            "-9223372036854775809",
            "1e3",
            "0x10",
            "abc",
            "1.5",
            "%2B1",
            "%00",
        ];
        for n in numbers {
            for target in [
                format!("/v1/events?after={n}"),
                format!("/v1/events?limit={n}"),
                format!("/v1/events?artifact={artifact}&after={n}"),
                format!("/v1/events/stream?after={n}"),
                format!("/v1/artifacts/{artifact}/content?version={n}"),
                format!("/v1/artifacts/{artifact}/preview?version={n}"),
                format!("/v1/artifacts/{artifact}/preview?size={n}"),
            ] {
                add("number", request("GET", &target, &auth, b""), false);
            }
            let last_id = [("Authorization", bearer.as_str()), ("Last-Event-ID", n)];
            add(
                "number",
                request("GET", "/v1/events/stream", &last_id, b""),
                false,
            );
        }

        // Ids that are not ids: not UTF-8, not UUIDs, too long.
        let ids = [
            "%FF%FE".to_owned(),
            "%C0%AF".to_owned(),
            "%80".to_owned(),
            "%00".to_owned(),
            "%ZZ".to_owned(),
            "not-a-uuid".to_owned(),
            "{00000000-0000-0000-0000-000000000000}".to_owned(),
            artifact.to_ascii_uppercase(),
            "a".repeat(7000),
            "..%2F..%2Fetc%2Fpasswd".to_owned(),
            "%2e%2e".to_owned(),
            format!("{artifact}%00"),
        ];
        for id in &ids {
            for (method, target) in [
                ("GET", format!("/v1/artifacts/{id}")),
                ("GET", format!("/v1/artifacts/{id}/versions")),
                ("GET", format!("/v1/artifacts/{id}/content")),
                ("GET", format!("/v1/artifacts/{id}/preview")),
                ("GET", format!("/v1/checkouts/{id}")),
                ("POST", format!("/v1/checkouts/{id}/extend")),
                ("POST", format!("/v1/checkouts/{id}/checkin")),
                ("POST", format!("/v1/checkouts/{id}/cancel")),
                ("DELETE", format!("/v1/edits/{id}")),
                ("POST", format!("/v1/edits/{id}/commit")),
                ("GET", format!("/v1/proposals/{id}")),
                ("POST", format!("/v1/proposals/{id}/accept")),
                ("GET", format!("/v1/events?artifact={id}")),
            ] {
                add("id", request(method, &target, &auth, b""), false);
            }
        }

        // Endpoints and methods that do not exist.
        let nope = format!("/v1/artifacts/{artifact}/nope");
        for method in [
            "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "HEAD", "FOO", "get",
        ] {
            for target in [
                "/v1/me",
                "/v1/artifacts",
                "/v1/events",
                "/v1/health",
                "/v1/nope",
                "/",
                "/v2/me",
                nope.as_str(),
                "/v1/me/",
                "//v1/me",
            ] {
                add("route", request(method, target, &auth, b""), false);
            }
        }

        // Tokens that are wrong, missing or malformed.
        let long = format!("Bearer {}", "a".repeat(7000));
        let high = format!("Bearer {token}\u{80}");
        let variants: Vec<Vec<(&str, String)>> = vec![
            vec![],
            vec![("Authorization", "Bearer".into())],
            vec![("Authorization", "Bearer ".into())],
            vec![("Authorization", "Bearer wrong".into())],
            vec![("Authorization", "Basic dXNlcjpwYXNz".into())],
            vec![("Authorization", format!("bearer {token}"))],
            vec![("Authorization", format!("Bearer  {token}"))],
            vec![("Authorization", token.to_owned())],
            vec![("Authorization", long)],
            vec![
                ("Authorization", bearer.clone()),
                ("Authorization", "Bearer wrong".into()),
            ],
            vec![("Authorization", high)],
            vec![("Authorization", format!("{bearer}x"))],
            vec![("Authorization", bearer[..bearer.len() - 1].to_owned())],
            vec![("Authorization", format!("Bearer {token}\t{token}"))],
        ];
        for variant in &variants {
            let headers: Vec<(&str, &str)> =
                variant.iter().map(|(n, v)| (*n, v.as_str())).collect();
            for (method, target) in [
                ("GET", "/v1/me"),
                ("GET", "/v1/artifacts"),
                ("GET", "/v1/events/stream"),
                ("POST", checkouts.as_str()),
            ] {
                add("token", request(method, target, &headers, b""), false);
            }
        }

        // Random bytes, half of them ended as a head would be.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for i in 0..100 {
            let len = 1 + (xorshift(&mut state) % 2048) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|_| xorshift(&mut state) as u8).collect();
            let ended = i % 2 == 0;
            if ended {
                bytes.extend_from_slice(b"\r\n\r\n");
            }
            add("random bytes", bytes, !ended);
        }
        // Random printable heads: a plausible line, then noise for headers.
        for _ in 0..40 {
            let noise: String = (0..(xorshift(&mut state) % 300))
                .map(|_| (b' ' + (xorshift(&mut state) % 95) as u8) as char)
                .collect();
            let bytes = format!("GET /v1/{noise} HTTP/1.1\r\nHost: x\r\n{noise}\r\n\r\n");
            add("random bytes", bytes.into_bytes(), false);
        }
        out
    }

    async fn malformed(work: &Path) {
        let server = Server::start(&work.join("hostile"));
        let http = reqwest::Client::new();
        let mut ids = Vec::new();
        for path in ["hostile/a.psd", "hostile/b.psd"] {
            ids.push(pairs::import(&http, &server.url, &server.token, path).await);
        }
        let checkout: Value = http
            .post(format!("{}/v1/artifacts/{}/checkouts", server.url, ids[1]))
            .bearer_auth(&server.token)
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let probes = probes(&server.token, &ids[0], checkout["id"].as_str().unwrap());
        let kinds: std::collections::BTreeSet<&str> = probes.iter().map(|p| p.kind).collect();

        let addr = server.addr();
        let next = AtomicUsize::new(0);
        let outcomes: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
        let started = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(probe) = probes.get(i) else { break };
                    let outcome = exchange(&addr, probe);
                    outcomes.lock().unwrap().push((i, outcome));
                });
            }
        });
        let elapsed = started.elapsed();
        let outcomes = outcomes.into_inner().unwrap();

        let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
        let (mut closed, mut closed_whole, mut silent, mut not_json, mut no_store_missing) =
            (0, 0, 0, 0, 0);
        for (i, outcome) in &outcomes {
            match outcome {
                Outcome::Answered {
                    status,
                    no_store,
                    json_error,
                } => {
                    *statuses.entry(*status).or_default() += 1;
                    if !json_error {
                        not_json += 1;
                        eprintln!(
                            "not a JSON error ({status}, {}): {}",
                            probes[*i].kind,
                            preview(&probes[*i].bytes)
                        );
                    }
                    if !no_store {
                        no_store_missing += 1;
                        eprintln!(
                            "no Cache-Control: no-store ({status}, {}): {}",
                            probes[*i].kind,
                            preview(&probes[*i].bytes)
                        );
                    }
                }
                Outcome::Closed => {
                    closed += 1;
                    if !probes[*i].close_write {
                        closed_whole += 1;
                        eprintln!(
                            "closed, no answer ({}): {}",
                            probes[*i].kind,
                            preview(&probes[*i].bytes)
                        );
                    }
                }
                Outcome::Silent => {
                    silent += 1;
                    eprintln!(
                        "no answer in 20 s ({}): {}",
                        probes[*i].kind,
                        preview(&probes[*i].bytes)
                    );
                }
            }
        }
        let fives: usize = statuses.range(500..600).map(|(_, n)| n).sum();
        let five_hundred = statuses.get(&500).copied().unwrap_or(0);
        let status_list = statuses
            .iter()
            .map(|(s, n)| format!("{s}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let alive = http
            .get(format!("{}/v1/me", server.url))
            .bearer_auth(&server.token)
            .send()
            .await
            .is_ok_and(|r| r.status() == 200);
        row(
            &format!(
                "malformed / hostile requests over raw TCP ({} kinds: {})",
                kinds.len(),
                kinds.into_iter().collect::<Vec<_>>().join(", ")
            ),
            format!(
                "**{} sent, {five_hundred} answered 500** ({fives} any 5xx), in {:.1} s by 8 clients; server still answers `GET /v1/me`: {}",
                probes.len(),
                elapsed.as_secs_f64(),
                if alive { "yes" } else { "NO" }
            ),
            "0 × 500",
        );
        row(
            "their answers, by status",
            format!(
                "{status_list}; closed without an answer: {closed} ({} cut off by the bench mid-head or mid-body, {closed_whole} whole); no answer in 20 s: {silent}",
                closed - closed_whole
            ),
            "",
        );
        row(
            "answers whose body is not `{\"error\",\"message\"}` (status ≥ 400, HEAD excepted) / without `Cache-Control: no-store`",
            format!("**{not_json} / {no_store_missing}**"),
            "0 / 0",
        );
    }

    fn preview(bytes: &[u8]) -> String {
        bytes[..bytes.len().min(100)].escape_ascii().to_string()
    }

    const IDLE: usize = 1000;

    /// A thousand connections that each send half a request head and stop,
    /// a normal client meanwhile, and when the server drops them.
    async fn idle_connections(work: &Path) {
        let server = Server::start(&work.join("idle"));
        let addr = server.addr();
        let opened_at = Instant::now();
        let mut held = Vec::with_capacity(IDLE);
        for _ in 0..IDLE {
            let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
            socket
                .write_all(b"GET /v1/me HTTP/1.1\r\nHost: bench\r\nAuthorization: Bear")
                .await
                .unwrap();
            held.push(tokio::spawn(async move {
                let mut got = Vec::new();
                let _ = socket.read_to_end(&mut got).await;
                (Instant::now(), got)
            }));
        }
        let all_open = opened_at.elapsed();

        // A normal client, on a new connection for each request.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap();
        let (mut times, mut served) = (Vec::new(), 0);
        for _ in 0..50 {
            let started = Instant::now();
            let answer = http
                .get(format!("{}/v1/me", server.url))
                .bearer_auth(&server.token)
                .send()
                .await;
            times.push(started.elapsed());
            if answer.is_ok_and(|r| r.status() == 200) {
                served += 1;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let client_done = opened_at.elapsed();
        let still_held = held.iter().filter(|t| !t.is_finished()).count();
        let peak = server.peak_memory();

        let mut closes = Vec::new();
        let mut answered = BTreeMap::<String, usize>::new();
        for task in held {
            if let Ok(Ok((at, got))) = tokio::time::timeout(Duration::from_secs(60), task).await {
                closes.push(at - opened_at);
                let status = String::from_utf8_lossy(&got)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned();
                *answered
                    .entry(if status.is_empty() {
                        "nothing".into()
                    } else {
                        status
                    })
                    .or_default() += 1;
            }
        }
        closes.sort();
        times.sort();
        row(
            &format!("{IDLE} connections holding half a request head"),
            format!(
                "all open in {:.2} s; {still_held} still held when the normal client finished ({:.1} s after the first opened)",
                all_open.as_secs_f64(),
                client_done.as_secs_f64()
            ),
            "held until the header timeout (10 s)",
        );
        row(
            "normal client meanwhile: `GET /v1/me` on a new connection, 50 requests 100 ms apart",
            format!(
                "**{served}/50 served**, median {}, max {}",
                ms(times[times.len() / 2]),
                ms(*times.last().unwrap())
            ),
            "all served",
        );
        row(
            "the server dropped the half-sent connections",
            format!(
                "**{} of {IDLE} closed by the server; first at {:.2} s, last at {:.2} s after the first was opened**; they received: {}; server peak memory {:.1} MiB",
                closes.len(),
                closes.first().map_or(f64::NAN, |d| d.as_secs_f64()),
                closes.last().map_or(f64::NAN, |d| d.as_secs_f64()),
                answered
                    .iter()
                    .map(|(k, n)| format!("{k} × {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                peak as f64 / 1048576.0
            ),
            "dropped after about 10 s",
        );
    }

    fn mib(bytes: u64) -> String {
        format!("{:.1} MiB", bytes as f64 / 1048576.0)
    }

    /// Adds to `count` the events after `after`, and moves `after` past them.
    async fn count_new_events(store: &leasedesk::Bundled, after: &mut u64, count: &mut usize) {
        loop {
            let page = leasedesk::Backend::events(store, *after, 1000)
                .await
                .unwrap();
            if page.events.is_empty() {
                return;
            }
            *count += page.events.len();
            *after = page.next;
        }
    }

    /// The server's peak memory under 15 concurrent largest pages of events
    /// and 15 concurrent full artifact lists.
    async fn big_pages(work: &Path, artifacts: usize) {
        let data = work.join("pages");
        let started = Instant::now();
        let (events, pairs) = {
            // Filled through the library, before the server starts: one import
            // per artifact, then a check-out and an extension of artifact
            // after artifact until the ledger holds twice as many events as
            // there are artifacts.
            let store = leasedesk::Bundled::open(&data)
                .unwrap()
                .acting_as("user:bench".parse().unwrap());
            let mut ids = Vec::with_capacity(artifacts);
            for i in 0..artifacts {
                let path: leasedesk::model::RepoPath =
                    format!("ledger/p{}/file-{i}.psd", i % 100).parse().unwrap();
                let artifact = leasedesk::Backend::import(
                    &store,
                    &path,
                    leasedesk::Upload::stream(std::io::Cursor::new(format!("v {i}").into_bytes())),
                )
                .await
                .unwrap();
                ids.push(artifact.id);
            }
            let (mut after, mut count) = (0, 0);
            count_new_events(&store, &mut after, &mut count).await;
            let mut pairs = 0;
            for (i, id) in ids.iter().enumerate() {
                if count >= 2 * artifacts {
                    break;
                }
                pairs += 1;
                let checkout = leasedesk::Backend::check_out(
                    &store,
                    *id,
                    leasedesk::model::CheckoutRequest {
                        ttl_seconds: Some(24 * 3600),
                        note: Some(format!("bench check-out {i}")),
                    },
                )
                .await
                .unwrap();
                leasedesk::Backend::extend(&store, checkout.id, Some(24 * 3600))
                    .await
                    .unwrap();
                count_new_events(&store, &mut after, &mut count).await;
            }
            (count, pairs)
        };
        let filled = started.elapsed();
        let server = Server::start(&data);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let at_start = server.peak_memory();
        let http = reqwest::Client::new();
        let page_url = format!("{}/v1/events?limit=10000", server.url);
        let one = http
            .get(&page_url)
            .bearer_auth(&server.token)
            .send()
            .await
            .unwrap();
        assert_eq!(one.status(), 200);
        let body = one.bytes().await.unwrap();
        let page: Value = serde_json::from_slice(&body).unwrap();
        let page_events = page["events"].as_array().unwrap().len();
        let next = page["next"].as_u64().unwrap();
        let after_one = server.peak_memory();

        let concurrently = |url: String| {
            let (http, token) = (http.clone(), server.token.clone());
            async move {
                let started = Instant::now();
                let mut tasks = Vec::new();
                for _ in 0..15 {
                    let (http, url, token) = (http.clone(), url.clone(), token.clone());
                    tasks.push(tokio::spawn(async move {
                        let answer = http.get(&url).bearer_auth(&token).send().await.unwrap();
                        assert_eq!(answer.status(), 200);
                        answer.bytes().await.unwrap().len()
                    }));
                }
                let mut bytes = 0;
                for task in tasks {
                    bytes += task.await.unwrap();
                }
                (bytes, started.elapsed())
            }
        };
        let mut page_rounds = Vec::new();
        for _ in 0..3 {
            page_rounds.push(concurrently(page_url.clone()).await.1);
        }
        let under_pages = server.peak_memory();
        let (list_bytes, list_time) = concurrently(format!("{}/v1/artifacts", server.url)).await;
        let under_lists = server.peak_memory();
        row(
            &format!("ledger for the page figures: {events} events from {artifacts} imports and {pairs} check-out + extend pairs (made through the library)"),
            format!("filled in {:.0} s", filled.as_secs_f64()),
            "at least 20,000 events",
        );
        row(
            "one `GET /v1/events?limit=10000`",
            format!(
                "**{page_events} events**, {:.0} KiB, `next` = {next}",
                body.len() as f64 / 1024.0
            ),
            "at most 1000 events a page",
        );
        row(
            "server peak memory (VmHWM): started / after one page / after 3 rounds of 15 concurrent `GET /v1/events?limit=10000`",
            format!(
                "{} / {} / **{}** (a round took {})",
                mib(at_start),
                mib(after_one),
                mib(under_pages),
                ms(median(page_rounds))
            ),
            "issue 9, before the cap: 45 MB → 413 MB",
        );
        row(
            &format!("server peak memory after 15 concurrent `GET /v1/artifacts` of {artifacts} artifacts"),
            format!(
                "**{}** ({:.1} MiB sent in all, in {})",
                mib(under_lists),
                list_bytes as f64 / 1048576.0,
                ms(list_time)
            ),
            "",
        );
    }

    /// SIGTERM with 50 event streams and 20 half-sent requests open, to the
    /// process's exit; 5 runs.
    async fn shutdown_with_streams(work: &Path) {
        let (mut times, mut exits, mut streams_ended) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..5 {
            let mut server = Server::start(&work.join(format!("shutdown-{run}")));
            let addr = server.addr();
            let mut open = Vec::new();
            for _ in 0..50 {
                let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
                socket
                    .write_all(
                        format!(
                            "GET /v1/events/stream HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {}\r\n\r\n",
                            server.token
                        )
                        .as_bytes(),
                    )
                    .await
                    .unwrap();
                let mut head = Vec::new();
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let mut chunk = [0u8; 4096];
                    let n = socket.read(&mut chunk).await.unwrap();
                    assert!(n > 0, "the stream answered");
                    head.extend_from_slice(&chunk[..n]);
                }
                assert!(
                    head.starts_with(b"HTTP/1.1 200"),
                    "{}",
                    String::from_utf8_lossy(&head)
                );
                open.push(tokio::spawn(async move {
                    let mut rest = Vec::new();
                    let _ = socket.read_to_end(&mut rest).await;
                    Instant::now()
                }));
            }
            let mut half = Vec::new();
            for _ in 0..20 {
                let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
                socket
                    .write_all(b"POST /v1/artifacts?path=x HTTP/1.1\r\nHost: be")
                    .await
                    .unwrap();
                half.push(socket);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            let pid = server.child.id();
            let signalled = Instant::now();
            // SAFETY: kill only sends a signal to the server we started.
            #[cfg(unix)]
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGTERM);
            }
            let status = loop {
                if let Some(status) = server.child.try_wait().unwrap() {
                    break status;
                }
                if signalled.elapsed() > Duration::from_secs(60) {
                    panic!("the server did not exit within 60 s of SIGTERM");
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            };
            times.push(signalled.elapsed());
            exits.push(status.code());
            let mut ended = 0;
            for task in open {
                if tokio::time::timeout(Duration::from_secs(1), task)
                    .await
                    .is_ok()
                {
                    ended += 1;
                }
            }
            streams_ended.push(ended);
            drop(half);
        }
        let runs = times
            .iter()
            .map(|t| format!("{:.0}", t.as_secs_f64() * 1e3))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "SIGTERM to exit with 50 `GET /v1/events/stream` and 20 half-sent requests open, median of 5",
            format!(
                "**{}** (runs: {runs} ms); exit codes {exits:?}; streams ended by the server per run {streams_ended:?} of 50",
                ms(median(times.clone()))
            ),
            "issue 9, before: never exited",
        );
    }
}

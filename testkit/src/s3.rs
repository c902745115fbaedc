//! A real S3 server for tests: `moto_server` from PyPI, in a virtual
//! environment made once under `target/` from
//! `tests/fixtures/requirements-moto.txt` (`LEASEDESK_MOTO_SERVER` names
//! another `moto_server`). It never touches a bucket it did not make.
//!
//! [`s3()`] gives a fresh bucket on the one moto of this test process, started
//! on first use on a free port. Statics are never dropped, so each moto runs
//! under a watcher shell that holds a pipe from this process and kills moto
//! when the pipe closes: when this process ends, however it ends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A bucket on a running moto, and what a client needs to reach it.
#[derive(Clone, Debug)]
pub struct S3 {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// A bucket made for this caller alone.
    pub bucket: String,
    /// The `AWS_*` variables a `leasedesk` process needs for `--blobs s3://…`.
    pub env: Vec<(&'static str, String)>,
}

impl S3 {
    /// The `--blobs` URL of this bucket under `prefix` (`s3://BUCKET/PREFIX`).
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.bucket)
    }

    /// Sets [`S3::env`] on a command (a `leasedesk` process to start).
    pub fn apply<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command.envs(self.env.iter().map(|(k, v)| (*k, v)))
    }

    /// The object keys in the bucket (all of them, up to 1000), by a plain
    /// ListObjectsV2 (moto does not check signatures).
    pub fn keys(&self) -> Vec<String> {
        let (status, body) = http(
            &self.endpoint,
            "GET",
            &format!("/{}?list-type=2&max-keys=1000", self.bucket),
        )
        .expect("list the bucket");
        assert_eq!(status, 200, "list the bucket: {body}");
        body.split("<Key>")
            .skip(1)
            .filter_map(|rest| rest.split("</Key>").next())
            .map(str::to_owned)
            .collect()
    }

    /// A client of this bucket (signed requests: moto refuses unsigned ones
    /// on objects), for a test to change what is stored behind a server.
    pub fn client(&self) -> object_store::aws::AmazonS3 {
        let mut builder = object_store::aws::AmazonS3Builder::new().with_bucket_name(&self.bucket);
        for (key, value) in &self.env {
            builder =
                builder.with_config(key.to_ascii_lowercase().parse().expect("a setting"), value);
        }
        builder.build().expect("an S3 client")
    }

    /// Multipart uploads begun and neither completed nor aborted.
    pub fn open_multipart_uploads(&self) -> usize {
        let (status, body) = http(&self.endpoint, "GET", &format!("/{}?uploads", self.bucket))
            .expect("list the uploads");
        assert_eq!(status, 200, "list the uploads: {body}");
        body.matches("<UploadId>").count()
    }
}

/// A fresh bucket on this test process's moto (started on first use). The
/// process's own environment gets the same `AWS_*` variables as [`S3::env`],
/// once, so a `Bundled` opened here on [`S3::url`] reaches it too.
pub fn s3() -> S3 {
    static SHARED: OnceLock<Moto> = OnceLock::new();
    static ENV_SET: Mutex<bool> = Mutex::new(false);
    let moto = SHARED.get_or_init(Moto::start);
    let mut set = ENV_SET.lock().unwrap_or_else(|p| p.into_inner());
    if !*set {
        for (key, value) in moto.env() {
            // Always the same values in this process, set before any Bundled
            // on S3 opens; the standard library's own readers take its lock.
            std::env::set_var(key, value);
        }
        *set = true;
    }
    drop(set);
    moto.bucket()
}

/// One `moto_server` process. Killed when dropped, or when this test process
/// ends (see the module's comment). [`Moto::start`] gives a private one, for
/// a test that stops it.
pub struct Moto {
    pub endpoint: String,
    /// moto's own pid (the watcher's child), for SIGSTOP and SIGCONT.
    pub pid: i32,
    watcher: Mutex<Option<(Child, ChildStdin)>>,
}

impl Moto {
    /// Starts a moto on a free port and waits until it answers.
    pub fn start() -> Moto {
        let server = moto_server();
        let mut last_log = String::new();
        for _ in 0..5 {
            let port = free_port();
            let log = std::env::temp_dir().join(format!("leasedesk-moto-{port}.log"));
            // moto in the background; `cat` returns when this process's end of
            // the pipe closes, and then moto is killed (SIGKILL also ends a
            // stopped one).
            let script = r#""$0" -H 127.0.0.1 -p "$1" >"$2" 2>&1 &
moto=$!
echo "$moto"
cat >/dev/null
kill -9 "$moto"
wait "$moto" 2>/dev/null"#;
            let mut watcher = Command::new("sh")
                .arg("-c")
                .arg(script)
                .arg(&server)
                .arg(port.to_string())
                .arg(&log)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("sh starts moto");
            let stdin = watcher.stdin.take().expect("the watcher's stdin");
            let mut pid = String::new();
            BufReader::new(watcher.stdout.take().expect("the watcher's stdout"))
                .read_line(&mut pid)
                .expect("moto's pid");
            let moto = Moto {
                endpoint: format!("http://127.0.0.1:{port}"),
                pid: pid.trim().parse().expect("moto's pid is a number"),
                watcher: Mutex::new(Some((watcher, stdin))),
            };
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if http(&moto.endpoint, "GET", "/").is_ok_and(|(status, _)| status == 200) {
                    return moto;
                }
                last_log = std::fs::read_to_string(&log).unwrap_or_default();
                if last_log.contains("in use") {
                    break; // someone took the port meanwhile: another one
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            drop(moto);
        }
        panic!("moto_server did not start: {last_log}");
    }

    /// The `AWS_*` variables that reach this moto.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", "leasedesk-test".into()),
            ("AWS_SECRET_ACCESS_KEY", "leasedesk-test-secret".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }

    /// A new, empty bucket.
    pub fn bucket(&self) -> S3 {
        let bucket = format!("leasedesk-{}", uuid::Uuid::new_v4().simple());
        let (status, body) =
            http(&self.endpoint, "PUT", &format!("/{bucket}")).expect("create a bucket");
        assert_eq!(status, 200, "create bucket {bucket}: {body}");
        S3 {
            endpoint: self.endpoint.clone(),
            bucket,
            env: self.env(),
        }
    }

    /// Freezes moto (SIGSTOP): its socket stays open, nothing answers.
    #[cfg(unix)]
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets a paused moto go on (SIGCONT).
    #[cfg(unix)]
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    #[cfg(unix)]
    fn signal(&self, signal: i32) {
        // SAFETY: kill only reads its two integer arguments.
        let sent = unsafe { libc::kill(self.pid, signal) };
        assert_eq!(sent, 0, "signal {signal} to moto {}", self.pid);
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let watcher = self.watcher.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some((mut watcher, stdin)) = watcher.take() {
            drop(stdin); // the watcher kills moto and ends
            let _ = watcher.wait();
        }
    }
}

/// The `moto_server` to run: `LEASEDESK_MOTO_SERVER`, or the venv's, made on
/// first use from the pinned requirements.
fn moto_server() -> PathBuf {
    if let Some(given) = std::env::var_os("LEASEDESK_MOTO_SERVER") {
        return given.into();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace");
    crate::python::venv(
        &root.join("tests/fixtures/requirements-moto.txt"),
        &root.join("target/test-moto"),
    )
    .join("bin/moto_server")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A bodiless HTTP/1.1 request to moto: its status and body. Plain, unsigned:
/// moto does not check signatures, and these only set up and inspect.
pub fn http(endpoint: &str, method: &str, target: &str) -> std::io::Result<(u16, String)> {
    let host = endpoint.trim_start_matches("http://");
    let mut socket = TcpStream::connect(host)?;
    socket.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        socket,
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    socket.read_to_string(&mut answer)?;
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {answer:?}")))?;
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Ok((status, body))
}

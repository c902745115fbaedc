//! A real `leasedesk serve` on 127.0.0.1 for the app to use, with the users
//! the tests act as (alice, bob, admin). Never shared between tests: each
//! starts its own, on its own data folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::process::{run_cli, succeeded, tool, Killed};

/// A real `leasedesk serve` with three users.
pub struct Server {
    pub url: String,
    pub tokens: std::collections::HashMap<&'static str, String>,
    pub data: PathBuf,
    /// `serve`'s flags beyond the data folder and the address (TLS).
    pub flags: Vec<std::ffi::OsString>,
    /// `None` while killed (`kill`), until started again (`restart`).
    pub process: Option<Killed>,
}

impl Server {
    /// SIGKILL: no goodbye to any client.
    pub fn kill(&mut self) {
        self.process = None;
    }

    /// `serve` again on the same address.
    pub fn restart(&mut self) {
        let listen = self.url.split("://").last().unwrap().to_owned();
        let (url, process) = serve(&self.data, &listen, &self.flags);
        assert_eq!(url, self.url, "the same address again");
        self.process = Some(process);
    }
}

pub fn start_server(data: &Path) -> Server {
    start_server_with(data, Vec::new())
}

/// As `start_server`, with more of `serve`'s flags.
pub fn start_server_with(data: &Path, flags: Vec<std::ffi::OsString>) -> Server {
    let cli = tool("LEASEDESK_BIN");
    let mut tokens = std::collections::HashMap::new();
    for (name, flags) in [
        ("alice", &[][..]),
        ("bob", &[][..]),
        ("admin", &["--admin"][..]),
    ] {
        let out = succeeded(
            Command::new(&cli)
                .arg("--data")
                .arg(data)
                .args(["user", "add", name])
                .args(flags),
            &format!("user add {name}"),
        );
        let token = String::from_utf8(out)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .to_owned();
        tokens.insert(name, token);
    }
    let (url, process) = serve(data, "127.0.0.1:0", &flags);
    Server {
        url,
        tokens,
        data: data.to_owned(),
        flags,
        process: Some(process),
    }
}

/// A studio's server on TLS, as an admin sets one up by hand: its data
/// folder `home/server`, its certificate self-signed in `home/tls`.
pub struct TlsStudio {
    pub server: Server,
    /// The certificate's SHA-256, as `openssl x509 -fingerprint` says it.
    pub fingerprint: String,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A [`TlsStudio`] whose certificate names `name`.
pub fn start_tls_studio(home: &Path, name: &str) -> TlsStudio {
    let tls = home.join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let (cert, key) = (tls.join("cert.pem"), tls.join("key.pem"));
    let fingerprint = self_signed(&cert, &key, name);
    let server = start_server_with(
        &home.join("server"),
        vec![
            "--tls-cert".into(),
            cert.clone().into(),
            "--tls-key".into(),
            key.clone().into(),
        ],
    );
    TlsStudio {
        server,
        fingerprint,
        cert,
        key,
    }
}

/// Alice imports `bytes` at `path` into the store at `data` with the CLI,
/// from a file of the path's name written into `scratch` first.
pub fn alice_imports(data: &Path, scratch: &Path, path: &str, bytes: &[u8]) {
    let source = scratch.join(path.rsplit('/').next().unwrap());
    std::fs::write(&source, bytes).unwrap();
    run_cli(&[
        "--data",
        data.to_str().unwrap(),
        "--as",
        "user:alice",
        "import",
        path,
        source.to_str().unwrap(),
    ]);
}

/// The studio's owner at the server's data folder `data` (`--json`), its
/// invite links naming `url`: what it answered.
pub fn owner_json(data: &Path, url: &str, args: &[&str]) -> serde_json::Value {
    let mut command = Command::new(tool("LEASEDESK_BIN"));
    command
        .arg("--data")
        .arg(data)
        .arg("--json")
        .args(args)
        .env_remove("LEASEDESK_DATA")
        .env("LEASEDESK_PUBLIC_URL", url);
    serde_json::from_slice(&succeeded(&mut command, &format!("{args:?}"))).unwrap()
}

/// `leasedesk serve` on `listen`; its address as it says it.
pub fn serve(data: &Path, listen: &str, flags: &[std::ffi::OsString]) -> (String, Killed) {
    let mut child = Command::new(tool("LEASEDESK_BIN"))
        .arg("--data")
        .arg(data)
        .args(["serve", "--listen", listen])
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("the address")
        .to_owned();
    (url, Killed(child))
}

/// A self-signed certificate for 127.0.0.1 into `cert` and `key` (each
/// written beside and renamed, as a renewal would); its SHA-256 as
/// `openssl x509 -fingerprint` says it ("AB:CD:…").
pub fn self_signed(cert: &Path, key: &Path, name: &str) -> String {
    let (new_cert, new_key) = (cert.with_extension("new"), key.with_extension("new"));
    let mut request = Command::new("openssl");
    request
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={name}/O=Studio")])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&new_key)
        .arg("-out")
        .arg(&new_cert);
    succeeded(&mut request, "openssl (Debian's openssl package)");
    std::fs::rename(new_key, key).unwrap();
    std::fs::rename(new_cert, cert).unwrap();
    let mut fingerprint = Command::new("openssl");
    fingerprint.args(["x509", "-noout", "-fingerprint", "-sha256", "-in"]);
    let said = succeeded(fingerprint.arg(cert), "openssl's fingerprint");
    let said = String::from_utf8(said).unwrap();
    said.trim().rsplit('=').next().unwrap().to_uppercase()
}

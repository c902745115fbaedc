//! The `leasedesk` CLI on one store ([`Cli`]) and a real `leasedesk serve`
//! over it ([`Serve`], [`ServeProcess`]): started on 127.0.0.1:0 unless told
//! otherwise, its address read from the line it prints first. It never picks
//! the binary itself: each caller passes the one it runs (cargo's, or
//! `LEASEDESK_BIN`).

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `leasedesk` binary pointed at one store (`--data`, `--database`,
/// `--blobs`), with the environment its processes get. Cheap to clone: a
/// temp folder made by [`Cli::in_temp_dir`] lives while any clone does.
#[derive(Clone, Debug)]
pub struct Cli {
    bin: PathBuf,
    store: Vec<OsString>,
    env: Environment,
    dir: Option<Arc<tempfile::TempDir>>,
}

/// Variables given to a process, or taken from what it inherits.
#[derive(Clone, Debug, Default)]
pub struct Environment(Vec<(OsString, Option<OsString>)>);

impl Environment {
    fn apply(&self, command: &mut Command) {
        for (key, value) in &self.0 {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
    }
}

/// The variables of a process to start ([`Cli`], [`Serve`]).
pub trait WithEnvironment: Sized {
    fn environment(&mut self) -> &mut Environment;

    /// A variable the process gets.
    fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let value = Some(value.as_ref().to_owned());
        self.environment().0.push((key.as_ref().to_owned(), value));
        self
    }

    /// Several of [`WithEnvironment::env`].
    fn envs<I, K, V>(self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        vars.into_iter().fold(self, |it, (k, v)| it.env(k, v))
    }

    /// A variable of this process that the process must not inherit.
    fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.environment().0.push((key.as_ref().to_owned(), None));
        self
    }
}

impl WithEnvironment for Cli {
    fn environment(&mut self) -> &mut Environment {
        &mut self.env
    }
}

impl WithEnvironment for Serve {
    /// For the server alone (`LEASEDESK_LOG`, failpoints), after the CLI's.
    fn environment(&mut self) -> &mut Environment {
        &mut self.env
    }
}

impl Cli {
    /// `bin` with no store named yet.
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        Self {
            bin: bin.into(),
            store: Vec::new(),
            env: Environment::default(),
            dir: None,
        }
    }

    /// `bin` on a data folder of its own, `data` in a new temp folder
    /// ([`Cli::dir`]) where a server's log can go too.
    pub fn in_temp_dir(bin: impl Into<PathBuf>) -> Self {
        let dir = tempfile::tempdir().expect("a temp folder");
        let data = dir.path().join("data");
        Self {
            dir: Some(Arc::new(dir)),
            ..Self::new(bin).data(data)
        }
    }

    /// The temp folder of [`Cli::in_temp_dir`].
    pub fn dir(&self) -> &Path {
        self.dir
            .as_deref()
            .expect("a Cli made by in_temp_dir")
            .path()
    }

    /// The data folder given with [`Cli::data`], if any.
    pub fn data_dir(&self) -> Option<PathBuf> {
        let at = self.store.iter().position(|a| a == "--data")?;
        self.store.get(at + 1).map(PathBuf::from)
    }

    /// `--data PATH`.
    pub fn data(self, path: impl AsRef<Path>) -> Self {
        self.store_args([OsStr::new("--data"), path.as_ref().as_os_str()])
    }

    /// `--database URL`: the rows in PostgreSQL.
    pub fn database(self, url: &str) -> Self {
        self.store_args(["--database", url])
    }

    /// `--blobs URL`: the blobs in a shared folder or a bucket.
    pub fn blobs(self, url: &str) -> Self {
        self.store_args(["--blobs", url])
    }

    /// `--as WHO`: on a data folder, the commands of that participant.
    pub fn as_participant(self, who: &str) -> Self {
        self.store_args(["--as", who])
    }

    /// Arguments that name the store, given before the command.
    pub fn store_args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.store.extend(owned(args));
        self
    }

    /// `leasedesk STORE…`, ready for a command's arguments.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        command.args(&self.store);
        self.env.apply(&mut command);
        command
    }

    /// Runs `args` and answers what it did, whether it worked or not.
    pub fn output<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        self.command().args(args).output().expect("leasedesk runs")
    }

    /// Runs `args`, which must work, and answers what it printed.
    pub fn ok<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        let out = self.output(args);
        assert!(
            out.status.success(),
            "leasedesk {:?} failed: {}",
            args.iter().map(AsRef::as_ref).collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    }

    /// Adds user `name` and answers its token (the last line printed).
    pub fn add_user(&self, name: &str) -> String {
        last_line(&self.ok(&["user", "add", name]))
    }

    /// A new token for user `name`.
    pub fn token(&self, name: &str) -> String {
        last_line(&self.ok(&["user", "token", name]))
    }

    /// `leasedesk serve` on this store, to be started.
    pub fn serve(&self) -> Serve {
        Serve {
            cli: self.clone(),
            listen: "127.0.0.1:0".into(),
            flags: Vec::new(),
            env: Environment::default(),
            stderr: None,
            log: None,
        }
    }
}

fn owned(args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> impl Iterator<Item = OsString> {
    args.into_iter().map(|a| a.as_ref().to_owned())
}

fn last_line(printed: &str) -> String {
    printed
        .lines()
        .last()
        .expect("a line printed")
        .trim()
        .to_owned()
}

/// A `leasedesk serve` to start: [`Cli::serve`], then flags, then
/// [`Serve::spawn`] (or [`Serve::start`] where it may refuse to start).
pub struct Serve {
    cli: Cli,
    listen: String,
    flags: Vec<OsString>,
    env: Environment,
    stderr: Option<Stdio>,
    log: Option<PathBuf>,
}

impl Serve {
    /// The CLI on the store this server will serve.
    pub fn cli(&self) -> &Cli {
        &self.cli
    }

    /// `--listen ADDRESS` instead of 127.0.0.1:0.
    pub fn listen(mut self, address: &str) -> Self {
        self.listen = address.to_owned();
        self
    }

    /// HTTPS with `cert` and `key` (PEM files).
    pub fn tls(self, cert: &Path, key: &Path) -> Self {
        self.args([OsStr::new("--tls-cert"), cert.as_os_str()])
            .args([OsStr::new("--tls-key"), key.as_os_str()])
    }

    /// More flags for `serve`.
    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.flags.extend(owned(args));
        self
    }

    /// Where the server's log (stderr) goes; inherited unless given.
    pub fn stderr(mut self, stderr: impl Into<Stdio>) -> Self {
        self.stderr = Some(stderr.into());
        self
    }

    /// The server's log into the file `log`, for [`ServeProcess::log_text`].
    pub fn log_to(mut self, log: impl Into<PathBuf>) -> Self {
        let log = log.into();
        self.stderr = Some(std::fs::File::create(&log).expect("the log file").into());
        self.log = Some(log);
        self
    }

    /// Starts the server and reads its address; a panic if it does not start.
    pub fn spawn(self) -> ServeProcess {
        self.start()
            .unwrap_or_else(|why| panic!("leasedesk serve did not start: {why}"))
    }

    /// Starts the server and reads its address; if it exits instead, its
    /// exit status and (with [`Serve::log_to`]) its log.
    pub fn start(self) -> Result<ServeProcess, String> {
        let mut command = self.cli.command();
        command
            .arg("serve")
            .args(["--listen", &self.listen])
            .args(&self.flags)
            .stdout(Stdio::piped());
        self.env.apply(&mut command);
        if let Some(stderr) = self.stderr {
            command.stderr(stderr);
        }
        let mut child = command.spawn().expect("leasedesk serve starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("serve's stdout");
        let Some(url) = line.trim().strip_prefix("listening on ") else {
            let status = child.wait().expect("serve exits");
            let log = self
                .log
                .as_ref()
                .map(|log| std::fs::read_to_string(log).unwrap_or_default())
                .unwrap_or_default();
            return Err(format!("{status}: {line}{log}"));
        };
        // Clients reach a wildcard address through loopback.
        let url = url.replace("0.0.0.0", "127.0.0.1");
        Ok(ServeProcess {
            child,
            url,
            cli: self.cli,
            stdout,
            log: self.log,
        })
    }
}

/// A running `leasedesk serve`, killed (SIGKILL) when dropped.
pub struct ServeProcess {
    pub child: Child,
    /// `http://127.0.0.1:PORT` (or `https://…`), as the server printed it.
    pub url: String,
    /// The CLI on the server's store.
    pub cli: Cli,
    stdout: BufReader<ChildStdout>,
    log: Option<PathBuf>,
}

impl ServeProcess {
    /// `host:port` of [`ServeProcess::url`], for raw TCP.
    pub fn addr(&self) -> &str {
        self.url.split_once("://").map_or(&self.url, |(_, a)| a)
    }

    /// The next line the server prints on stdout (after the address line).
    pub fn next_line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("serve's stdout");
        line.trim().to_owned()
    }

    /// The CLI as a client of this server, with `token`.
    pub fn client_cli(&self, token: &str) -> Cli {
        Cli::new(&self.cli.bin)
            .store_args(["--server", &self.url])
            .env("LEASEDESK_TOKEN", token)
    }

    /// A new token for user `name` of the server's store.
    pub fn token(&self, name: &str) -> String {
        self.cli.token(name)
    }

    /// The log file of [`Serve::log_to`].
    pub fn log_path(&self) -> &Path {
        self.log.as_deref().expect("a server started with log_to")
    }

    /// What the server has logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log_path()).expect("the log file")
    }

    /// Waits (up to 10 s) until the log has `text` (logging is asynchronous).
    pub fn wait_for_log(&self, text: &str) {
        let started = Instant::now();
        while !self.log_text().contains(text) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the log never said {text:?}: {}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Asks the server to stop as an admin would ([`ask_to_stop`]).
    pub fn ask_to_stop(&mut self) {
        ask_to_stop(&mut self.child);
    }

    /// The most memory the server has held so far (see [`peak_memory`]).
    pub fn peak_memory(&self) -> Option<u64> {
        peak_memory(self.child.id())
    }

    /// SIGKILL, and waits until the process is gone.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL"); // Child::kill is SIGKILL on Unix
        self.child.wait().expect("the killed server is reaped");
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The most memory process `pid` has held so far (VmHWM), in bytes; None
/// where there is no /proc (Windows, where `pid` is not Linux's even under Wine).
pub fn peak_memory(pid: u32) -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib << 10)
}

/// Asks a server to stop: SIGTERM on Unix. Wine cannot deliver Ctrl+Break to
/// another process group, so on Windows the server is ended instead.
pub fn ask_to_stop(child: &mut Child) {
    #[cfg(unix)]
    {
        // SAFETY: kill only reads its two integer arguments.
        let sent = unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        assert_eq!(sent, 0, "SIGTERM to {}", child.id());
    }
    #[cfg(not(unix))]
    child.kill().expect("end the server");
}

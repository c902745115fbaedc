//! A PostgreSQL server of a test's or a bench's own: Debian's `initdb` and
//! `pg_ctl` (as the `postgres` user when we are root, which PostgreSQL refuses
//! to be) in a temp folder, on a free port, stopped when dropped and, should
//! this process die first, by a watcher once it has gone. It never chooses
//! durability: fsync and the rest are the caller's settings.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

pub struct PgCluster {
    port: u16,
    bin: PathBuf,
    dir: PathBuf,
    /// `name=value` settings besides the port, address and socket folder.
    settings: Vec<String>,
    databases: AtomicU32,
    /// Stops the cluster if this process dies before `Drop` runs.
    watcher: Mutex<Child>,
}

/// Whether this process runs as root (never on Windows, which has no such user).
pub fn running_as_root() -> bool {
    #[cfg(unix)]
    // SAFETY: geteuid has no arguments and cannot fail.
    return unsafe { libc::geteuid() } == 0;
    #[cfg(not(unix))]
    return false;
}

/// Runs `program` as the `postgres` user when we are root.
fn as_postgres(program: &Path) -> Command {
    if running_as_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

/// Runs a PostgreSQL tool, which must work; what it printed.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("a PostgreSQL tool runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl PgCluster {
    /// A new cluster, started with `settings` (`name=value`).
    pub fn start<S: AsRef<str>>(settings: &[S]) -> Self {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed (cargo xtask test and bench install postgresql-15)")
            .filter_map(|entry| entry.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").exists())
            .max()
            .expect("a PostgreSQL with initdb under /usr/lib/postgresql");
        let dir = tempfile::Builder::new()
            .prefix("leasedesk-pg-")
            .tempdir()
            .expect("temp dir")
            .keep();
        if running_as_root() {
            run(Command::new("chown").arg("postgres:postgres").arg(&dir));
        }
        let data = dir.join("data");
        run(as_postgres(&bin.join("initdb"))
            .args(["-U", "leasedesk", "--auth=trust", "-E", "UTF8"])
            .args(["--locale=C", "--no-sync", "-D"])
            .arg(&data));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let watcher = format!(
            "while [ -e /proc/{pid} ]; do sleep 1; done; {pg_ctl} -D {data} stop -m immediate >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            pg_ctl = bin.join("pg_ctl").display(),
            data = data.display(),
            dir = dir.display(),
        );
        let watcher = as_postgres(Path::new("/bin/sh"))
            .args(["-c", &watcher])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the cluster's watcher starts");
        let cluster = Self {
            port,
            bin,
            dir,
            settings: settings.iter().map(|s| s.as_ref().to_owned()).collect(),
            databases: AtomicU32::new(0),
            watcher: Mutex::new(watcher),
        };
        cluster.resume();
        cluster
    }

    /// Starts the server (again), and waits until it answers.
    pub fn resume(&self) {
        let mut options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.dir.display()
        );
        for setting in &self.settings {
            options.push_str(" -c ");
            options.push_str(setting);
        }
        run(self
            .pg_ctl()
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(["-o", &options, "-w", "start"]));
    }

    /// Stops the server, ending every connection (`pg_ctl stop -m fast`).
    pub fn stop(&self) {
        run(self.pg_ctl().args(["-m", "fast", "-w", "stop"]));
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`): no
    /// shutdown checkpoint, and WAL not yet written is lost; the next start
    /// recovers.
    pub fn crash(&self) {
        run(self.pg_ctl().args(["-m", "immediate", "-w", "stop"]));
    }

    /// `pg_ctl -D DATA`, as the `postgres` user when we are root.
    fn pg_ctl(&self) -> Command {
        let mut command = as_postgres(&self.bin.join("pg_ctl"));
        command.arg("-D").arg(self.dir.join("data"));
        command
    }

    /// The URL of a new, empty database on this server (`test_N`).
    pub fn database(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::Relaxed);
        self.database_named(&format!("test_{n}"))
    }

    /// Makes database `name` and answers its URL.
    pub fn database_named(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        format!("postgres://leasedesk@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in `database` and answers psql's unaligned output
    /// (`|` between columns, one row a line).
    pub fn sql(&self, database: &str, sql: &str) -> String {
        run(Command::new(self.tool("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "leasedesk", "-d", database, "-qAtX", "-c", sql]))
    }

    /// Runs pgbench (a client: not as `postgres`) on `database` with
    /// `args`, its connections committing as our writers' do (without
    /// waiting for the log's flush), and answers what it printed.
    pub fn pgbench(&self, database: &str, args: &[&str]) -> String {
        run(Command::new(self.tool("pgbench"))
            .env("PGOPTIONS", "-c synchronous_commit=off")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "leasedesk"])
            .args(args)
            .arg(database))
    }

    /// A client tool of this PostgreSQL (`psql`, `pgbench`).
    pub fn tool(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    /// The postmaster's process id, whose children are the server's backends.
    pub fn pid(&self) -> u32 {
        std::fs::read_to_string(self.dir.join("data/postmaster.pid"))
            .expect("postmaster.pid")
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("a pid on postmaster.pid's first line")
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl().args(["-m", "fast", "-w", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
        let watcher = self.watcher.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = watcher.kill();
        let _ = watcher.wait();
    }
}

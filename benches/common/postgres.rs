//! A PostgreSQL server of the bench's own, as the tests make theirs
//! (`tests/harness.rs`, `PgCluster`): Debian's `initdb` and `pg_ctl` (as the
//! `postgres` user when we are root, which PostgreSQL refuses to be) in a temp
//! folder, on a free port, stopped when dropped. Unlike the tests' cluster it
//! keeps fsync on: its figures are real ones.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct PgCluster {
    port: u16,
    bin: PathBuf,
    dir: PathBuf,
    /// Stops the cluster if this process dies before `Drop` runs.
    watcher: Child,
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `program` as the `postgres` user when we are root.
fn as_postgres(program: &Path) -> Command {
    if root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

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
    /// A new cluster, started with `settings` (`name=value`) besides its
    /// address, port and socket folder.
    pub fn start(settings: &[&str]) -> Self {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed (cargo xtask bench installs postgresql-15)")
            .filter_map(|entry| entry.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").exists())
            .max()
            .expect("a PostgreSQL with initdb under /usr/lib/postgresql");
        let dir = tempfile::Builder::new()
            .prefix("leasedesk-bench-pg-")
            .tempdir()
            .expect("temp dir")
            .keep();
        if root() {
            run(Command::new("chown").arg("postgres:postgres").arg(&dir));
        }
        let data = dir.join("data");
        run(as_postgres(&bin.join("initdb"))
            .args(["-U", "leasedesk", "--auth=trust", "-E", "UTF8"])
            .args(["--locale=C", "--no-sync", "-D"])
            .arg(&data));
        let port = super::pairs::free_port();
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
        let mut options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1",
            dir.display()
        );
        for setting in settings {
            options.push_str(" -c ");
            options.push_str(setting);
        }
        run(as_postgres(&bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("log"))
            .args(["-o", &options, "-w", "start"]));
        Self {
            port,
            bin,
            dir,
            watcher,
        }
    }

    /// Makes database `name` and answers its URL.
    pub fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        format!("postgres://leasedesk@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in `database` and answers psql's unaligned output
    /// (`|` between columns, one row a line).
    pub fn sql(&self, database: &str, sql: &str) -> String {
        run(Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "leasedesk", "-d", database, "-qAtX", "-c", sql]))
    }

    /// Runs pgbench (a client: not as `postgres`) on `database` with
    /// `args`, its connections committing as our writers' do (without
    /// waiting for the log's flush), and answers what it printed.
    pub fn pgbench(&self, database: &str, args: &[&str]) -> String {
        run(Command::new(self.bin.join("pgbench"))
            .env("PGOPTIONS", "-c synchronous_commit=off")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "leasedesk"])
            .args(args)
            .arg(database))
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
        let _ = as_postgres(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "fast", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = self.watcher.kill();
        let _ = self.watcher.wait();
    }
}

//! PostgreSQL alone, with no server in front (pgbench running the fewest
//! statements a lease pair can take on our schema), and the profile of what
//! PostgreSQL ran a pair (pg_stat_statements), for the team's run and for
//! pgbench alike. Never starts a Leasedesk server but to migrate a schema.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use testkit::postgres::PgCluster;

use super::figures::{numbers, row, value};
use super::pairs;
use super::{cpu_seconds, process_tree};

/// Forgets what PostgreSQL counted so far, before a profiled run.
pub const RESET: &str =
    "SELECT pg_stat_statements_reset(), pg_stat_reset(), pg_stat_reset_shared('wal')";

/// A lease pair as PostgreSQL alone runs it: two transactions of three statements.
const FLOOR_SCRIPT: &str = r#"BEGIN;
UPDATE artifacts SET lease_epoch = lease_epoch + 1, touched_at = GREATEST(touched_at, 1) WHERE id = 'floor-' || :client_id RETURNING lease_epoch, head_version;
INSERT INTO leases (artifact_id, holder, participant, kind, acquired_at, expires_at) VALUES ('floor-' || :client_id, 'floor', 'bench', 'edit', 1, 60001);
WITH turn AS (UPDATE ledger SET last_seq = last_seq + 1 RETURNING last_seq) INSERT INTO events (seq, id, type, artifact_id, participant, holder, at, data) SELECT last_seq, gen_random_uuid()::text, 'lease.acquired', 'floor-' || :client_id, 'bench', 'floor', 1, '{}' FROM turn;
COMMIT;
BEGIN;
UPDATE artifacts SET touched_at = GREATEST(touched_at, 2) WHERE id = 'floor-' || :client_id RETURNING lease_epoch, head_version;
DELETE FROM leases WHERE artifact_id = 'floor-' || :client_id;
WITH turn AS (UPDATE ledger SET last_seq = last_seq + 1 RETURNING last_seq) INSERT INTO events (seq, id, type, artifact_id, participant, holder, at, data) SELECT last_seq, gen_random_uuid()::text, 'lease.released', 'floor-' || :client_id, 'bench', 'floor', 2, '{}' FROM turn;
COMMIT;
"#;

/// PostgreSQL alone, with no server in front: pgbench, its C benchmark
/// with prepared statements, runs the fewest statements a lease pair can
/// take on our schema (the artifact's row locked and its epoch counted, the
/// lease row written and removed, each event numbered under the ledger's
/// lock: two transactions of three statements), on `connections`
/// connections, each on an artifact of its own. The floor PostgreSQL sets
/// on this machine, whatever the servers in front of it do.
pub fn postgres_floor(cluster: &PgCluster, connections: usize, seconds: u32) -> f64 {
    let (database, script) = floor_database(cluster, connections);
    // The backends exit with pgbench: their CPU is then the postmaster's
    // children's, once it has reaped them, as pgbench's own is ours.
    let postgres = || vec![("PostgreSQL", process_tree(cluster.pid()))];
    let settled = process_tree(cluster.pid()).len();
    let before = (cpu_seconds(&postgres())[0], children_cpu_seconds());
    let out = pgbench_pairs(
        cluster,
        &database,
        &script,
        connections,
        seconds,
        &["-j", "2"],
    );
    let reaped = Instant::now();
    while process_tree(cluster.pid()).len() > settled && reaped.elapsed().as_secs() < 5 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let after = (cpu_seconds(&postgres())[0], children_cpu_seconds());
    let _ = std::fs::remove_file(&script);
    let field = |name: &str| -> f64 {
        out.lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("pgbench printed no {name:?}: {out}"))
    };
    let rate = field("tps = ");
    let pairs = rate * f64::from(seconds);
    row(
        &format!(
            "PostgreSQL alone: pgbench running the fewest statements a pair can take (2 transactions, 6 statements), {connections} connections"
        ),
        format!(
            "**{rate:.0} pairs/s**, mean {:.2} ms; CPU per pair: PostgreSQL {:.2} ms, pgbench {:.2} ms",
            field("latency average = "),
            (after.0 - before.0) / pairs * 1e3,
            (after.1 - before.1) / pairs * 1e3,
        ),
        "the floor PostgreSQL sets on this machine",
        value(rate, "pairs/s")
            .and("mean", field("latency average = "), "ms")
            .and("CPU per pair, PostgreSQL", (after.0 - before.0) / pairs * 1e3, "ms")
            .and("CPU per pair, pgbench", (after.1 - before.1) / pairs * 1e3, "ms"),
    );
    rate
}

/// pgbench running the pair `script` on `database`, prepared, from
/// `connections` connections for `seconds`, with `extra` flags: what it printed.
fn pgbench_pairs(
    cluster: &PgCluster,
    database: &str,
    script: &Path,
    connections: usize,
    seconds: u32,
    extra: &[&str],
) -> String {
    let (connections, seconds) = (connections.to_string(), seconds.to_string());
    let mut args = vec!["-n", "-M", "prepared", "-c", &connections, "-T", &seconds];
    args.extend(["-f", script.to_str().unwrap()]);
    args.extend(extra);
    cluster.pgbench(database, &args)
}

/// A database of our schema (migrated by the store itself) with an artifact
/// for each of pgbench's connections, and the script of a pair.
fn floor_database(cluster: &PgCluster, connections: usize) -> (String, PathBuf) {
    let database = format!("floor_{connections}");
    let url = cluster.database_named(&database);
    let migrated = std::process::Command::new(pairs::bin())
        .args(["--database", &url, "user", "list"])
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    cluster.sql(
        &database,
        "INSERT INTO artifacts (id, path, path_key, head_version, created_at) \
         SELECT 'floor-' || g, 'floor/' || g || '.psd', 'floor/' || g || '.psd', 1, 0 \
         FROM generate_series(0, 63) g",
    );
    let script = std::env::temp_dir().join(format!(
        "leasedesk-floor-{}-{connections}.sql",
        std::process::id()
    ));
    std::fs::write(&script, FLOOR_SCRIPT).unwrap();
    (database, script)
}

/// What PostgreSQL alone ran a pair, profiled as the servers' run is.
pub fn floor_profile(cluster: &PgCluster, connections: usize, seconds: u32) -> PgProfile {
    let (database, script) = floor_database(cluster, connections);
    cluster.sql(&database, "CREATE EXTENSION pg_stat_statements");
    cluster.sql(&database, RESET);
    let out = pgbench_pairs(cluster, &database, &script, connections, seconds, &[]);
    let _ = std::fs::remove_file(&script);
    let pairs: f64 = out
        .lines()
        .find_map(|line| line.strip_prefix("number of transactions actually processed: "))
        .and_then(|rest| rest.split(['/', ' ']).next()?.parse().ok())
        .unwrap_or_else(|| panic!("pgbench printed no count: {out}"));
    std::thread::sleep(Duration::from_millis(1500));
    PgProfile::read(cluster, &database, pairs)
}

/// User + system CPU seconds of this process's children that have been waited for.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// What PostgreSQL did in the timed run, per pair.
pub struct PgProfile {
    pairs: f64,
    statements: f64,
    /// Less BEGIN and COMMIT (pgbench's script has 6 such statements a pair).
    work: f64,
    /// Of those, run inside another (foreign-key checks).
    nested: f64,
    commits: f64,
    rollbacks: f64,
    wal_syncs: f64,
    /// (calls per pair, ms per call, statement), most called first.
    top: Vec<(f64, f64, String)>,
}

impl PgProfile {
    pub fn read(cluster: &PgCluster, database: &str, pairs: f64) -> Self {
        let number = |sql: &str| -> f64 {
            let sql = sql.replace("'bench'", &format!("'{database}'"));
            let out = cluster.sql(database, &sql);
            out.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{sql}: {out}"))
        };
        let statements = number(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'bench'",
        );
        let work = number(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'bench' AND query !~* '^\\s*(BEGIN|COMMIT)'",
        );
        let nested = number(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'bench' AND NOT toplevel",
        );
        let commits = number("SELECT xact_commit FROM pg_stat_database WHERE datname = 'bench'");
        let rollbacks =
            number("SELECT xact_rollback FROM pg_stat_database WHERE datname = 'bench'");
        let wal_syncs = number("SELECT wal_sync FROM pg_stat_wal");
        let top = cluster
            .sql(
                database,
                &format!("SELECT calls, mean_exec_time, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '{database}' ORDER BY calls DESC LIMIT 20"),
            )
            .lines()
            .filter_map(|line| {
                let mut fields = line.splitn(3, '|');
                let calls: f64 = fields.next()?.parse().ok()?;
                let mean: f64 = fields.next()?.parse().ok()?;
                Some((calls / pairs, mean, fields.next()?.to_owned()))
            })
            .collect();
        Self {
            pairs,
            statements,
            work,
            nested,
            commits,
            rollbacks,
            wal_syncs,
            top,
        }
    }

    /// Prints the profile of `what` ran (and its counts a pair as figures).
    pub fn print(&self, what: &str) {
        println!(
            "PostgreSQL in the timed run ({:.0} pairs): {:.1} statements ({:.1} less BEGIN and COMMIT, of which {:.1} nested), {:.2} commits, {:.2} rollbacks and {:.2} WAL flushes (fsync) per pair.",
            self.pairs,
            self.statements / self.pairs,
            self.work / self.pairs,
            self.nested / self.pairs,
            self.commits / self.pairs,
            self.rollbacks / self.pairs,
            self.wal_syncs / self.pairs,
        );
        numbers(
            &format!("PostgreSQL statements a pair, {what}"),
            value(self.statements / self.pairs, "statements")
                .and(
                    "less BEGIN and COMMIT",
                    self.work / self.pairs,
                    "statements",
                )
                .and("commits", self.commits / self.pairs, "commits")
                .and("WAL flushes", self.wal_syncs / self.pairs, "fsyncs"),
        );
        println!();
        println!("| calls per pair | mean ms | statement |");
        println!("|---|---|---|");
        for (calls, mean, query) in &self.top {
            let query: String = query.chars().take(160).collect();
            println!(
                "| {calls:.2} | {mean:.3} | `{}` |",
                query.replace('|', "\\|")
            );
        }
    }
}

//! Looking into a store as an outside tool would: SQL on its database (the
//! SQLite file, or a database on the test PostgreSQL server), the blobs that
//! rows name and the files in its blob folder. It never writes through a backend.

use super::*;

/// Runs SQL on the database of the store at `data` (its SQLite file, or
/// `database` on the test PostgreSQL server) as an outside tool would, and
/// returns the first column of each row it gives, or the database's refusal.
pub fn sql_at(
    data: &std::path::Path,
    database: Option<&str>,
    sql: &str,
) -> Result<Vec<String>, String> {
    match database {
        None => {
            let db =
                rusqlite::Connection::open(data.join("leasedesk.db")).expect("open the database");
            db.busy_timeout(Duration::from_secs(10)).unwrap();
            let mut stmt = db.prepare(sql).map_err(|e| e.to_string())?;
            let rows = stmt
                .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
                .map_err(|e| e.to_string())?;
            rows.map(|v| match v.map_err(|e| e.to_string())? {
                rusqlite::types::Value::Text(t) => Ok(t),
                rusqlite::types::Value::Integer(n) => Ok(n.to_string()),
                other => Ok(format!("{other:?}")),
            })
            .collect()
        }
        Some(url) => {
            let out = std::process::Command::new(pg_cluster().tool("psql"))
                .args([
                    "-X",
                    "-q",
                    "-A",
                    "-t",
                    "-v",
                    "ON_ERROR_STOP=1",
                    "-d",
                    url,
                    "-c",
                    sql,
                ])
                .output()
                .expect("psql runs");
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).into_owned());
            }
            Ok(String::from_utf8(out.stdout)
                .expect("UTF-8")
                .lines()
                .map(str::to_owned)
                .collect())
        }
    }
}

/// The digests (as hex) that a version, a proposal, a check-out's staged
/// bytes or a Git LFS object of the store at `data` name: every row whose
/// bytes must stay.
pub fn named_blobs_at(
    data: &std::path::Path,
    database: Option<&str>,
) -> std::collections::BTreeSet<String> {
    sql_at(
        data,
        database,
        "SELECT digest FROM versions UNION SELECT digest FROM proposals
         UNION SELECT staged_digest FROM checkouts WHERE staged_digest IS NOT NULL
         UNION SELECT digest FROM lfs_objects",
    )
    .expect("the digests")
    .into_iter()
    .map(|d| d.trim_start_matches("blake3:").to_owned())
    .collect()
}

/// The digests (as hex, like the blob files' names) that a version or a
/// proposal of the data folder `data` names: every row that serves bytes.
pub fn named_blobs(data: &std::path::Path) -> std::collections::BTreeSet<String> {
    named_blobs_at(data, None)
}

/// The blob files in the data folder `data`'s shard folders, by name.
pub fn blob_files(data: &std::path::Path) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for shard in std::fs::read_dir(data.join("blobs")).expect("blob folder") {
        let shard = shard.unwrap();
        if shard.file_name() == "tmp" {
            continue;
        }
        for blob in std::fs::read_dir(shard.path()).unwrap() {
            names.insert(blob.unwrap().file_name().into_string().unwrap());
        }
    }
    names
}

/// Temporary files of uploads being written in `data`.
pub fn uploads_in_flight(data: &std::path::Path) -> usize {
    std::fs::read_dir(data.join("blobs/tmp"))
        .expect("temp folder")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("upload-"))
        })
        .count()
}

/// Waits (up to 30 s) until `n` uploads are being written in `data`: their
/// requests got past every check made before the bytes are read.
pub async fn wait_for_uploads(data: &std::path::Path, n: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while uploads_in_flight(data) < n {
        assert!(
            std::time::Instant::now() < deadline,
            "{n} uploads never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether this process runs as root (the TLS tests, Linux only, ask).
#[cfg(target_os = "linux")]
pub use testkit::postgres::running_as_root;

/// A test PostgreSQL server (testkit's): one shared by the tests of this
/// process, made on first use, or one of a test's own.
pub use testkit::postgres::PgCluster;

/// What every test cluster runs with: no fsync (nothing here must outlive a
/// power cut), room for many servers' connections, and a write-ahead log
/// kept small (by default it grows to a gigabyte of a CI machine's disk).
const TEST_SETTINGS: [&str; 4] = [
    "fsync=off",
    "max_connections=400",
    "max_wal_size=128MB",
    "min_wal_size=32MB",
];

/// A cluster of a test's own, for a test that stops and starts it.
pub fn own_pg_cluster() -> PgCluster {
    own_pg_cluster_with::<&str>(&[])
}

/// A cluster of a test's own, with `settings` (`name=value`) besides.
pub fn own_pg_cluster_with<S: AsRef<str>>(settings: &[S]) -> PgCluster {
    let settings: Vec<&str> = TEST_SETTINGS
        .into_iter()
        .chain(settings.iter().map(AsRef::as_ref))
        .collect();
    PgCluster::start(&settings)
}

fn pg_cluster() -> &'static PgCluster {
    static CLUSTER: std::sync::OnceLock<PgCluster> = std::sync::OnceLock::new();
    CLUSTER.get_or_init(own_pg_cluster)
}

/// The URL of a new, empty database on the test PostgreSQL server.
pub fn postgres_database() -> String {
    pg_cluster().database()
}

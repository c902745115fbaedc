//! A studio of many files for the benches (issue 25), filled in bulk by SQL
//! so that the fill is not the measure: `f042/hero-0001234.psd`, file `i`
//! in folder `i % folders`, 1 in 100 held by bob, artifact `i`'s id
//! [`artifact_id`]. Used by `benches/million.rs` and the app's bench.

use std::path::Path;

use leasedesk::Bundled;

/// How many files, in how many folders.
pub struct Studio {
    pub files: u64,
    pub folders: u64,
}

/// The words of the file names, one in 19 each: `hero` is in 1/19 of the
/// paths; `kiwi` replaces them in 1 path in 1,000.
pub const WORDS: [&str; 19] = [
    "hero",
    "logo",
    "cape",
    "banner",
    "poster",
    "render",
    "frame",
    "layout",
    "icon",
    "mockup",
    "storyboard",
    "texture",
    "model",
    "sketch",
    "cover",
    "spread",
    "badge",
    "sticker",
    "flyer",
];
pub const RARE: &str = "kiwi";

/// The id of file `i`, as the fill makes it.
pub fn artifact_id(i: u64) -> String {
    format!("{i:08x}-0000-4000-8000-{i:012x}")
}

/// A data folder made by the program (its schema), then filled in bulk.
pub fn fill_sqlite(data: &Path, sizes: &Studio) {
    drop(Bundled::open(data).expect("make the data folder"));
    let db = rusqlite::Connection::open(data.join("leasedesk.db")).unwrap();
    db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;")
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let far = now + 86_400_000;
    let words: Vec<String> = WORDS
        .iter()
        .enumerate()
        .map(|(n, w)| format!("({n}, '{w}')"))
        .collect();
    let n = sizes.files;
    let folders = sizes.folders;
    db.execute_batch(&format!(
        "BEGIN;
         CREATE TEMP TABLE words (n INTEGER PRIMARY KEY, w TEXT);
         INSERT INTO words VALUES {words};
         WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < {n})
         INSERT INTO artifacts (id, path, path_key, head_version, lease_epoch, created_at, search_row)
         SELECT printf('%08x-0000-4000-8000-%012x', i, i), path, upper(path), 1, 0, {now}, i + 1
         FROM (SELECT i, printf('f%03d/%s-%07d.psd', i % {folders},
                   CASE WHEN i % 1000 = 7 THEN '{RARE}' ELSE (SELECT w FROM words WHERE n = i % 19) END,
                   i) AS path
               FROM seq);
         INSERT INTO versions (artifact_id, version, digest, size, author, committed_at)
         SELECT id, 1, 'blake3:' || printf('%064x', search_row), 1000, 'user:alice', {now} FROM artifacts;
         INSERT INTO artifact_search (rowid, key, id) SELECT search_row, path_key, id FROM artifacts;
         INSERT INTO folders (path, parent, key, files, direct)
         SELECT substr(path, 1, 5), '', upper(substr(path, 1, 4)), count(*), count(*)
         FROM artifacts GROUP BY 1;
         INSERT INTO folders VALUES ('', NULL, '', {n}, 0);
         INSERT INTO leases (artifact_id, holder, participant, kind, checkout_id, note, acquired_at, expires_at)
         SELECT id, 'user:bob', 'user:bob', 'edit', NULL, NULL, {now}, {far}
         FROM artifacts WHERE path LIKE '%00.psd';
         COMMIT;",
        words = words.join(", ")
    ))
    .unwrap();
}

//! The SQL of lists by page, folder and search (`docs/API.md`, "A million
//! files"), which both stores share, each spelling its parameters and its
//! search. Every list walks an index: pages the path's, a search the
//! trigrams' (FTS5 on SQLite, `pg_trgm` on PostgreSQL), `held` the leases'.
//!
//! A folder's counts are rows (`folders`) that the import or rename which
//! changes them updates in its own transaction: a listing reads a row per
//! child folder, never the files under them. Folder permissions are ranges
//! of the path index ([`super::PathRange`], which the rules make from the
//! folders' rows) that a page walks one after another, so that what a
//! caller may not see is never read, nor found in the search index; a held
//! list tests conditions on the path's key instead ([`Hidden`]).

use super::rows::{artifact_select_from, millis, Field};
use super::{Hidden, ListQuery};
use crate::model::{folder_range_end, folders_above, RepoPath};

/// How a store spells what differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `search_index`: a text is found through the search index first (the
    /// paths' keys by trigram: `artifact_search` on SQLite, `pg_trgm` on
    /// PostgreSQL), then the matches sorted: for a text of 3 characters or
    /// more that few enough paths contain. Otherwise the paths are walked
    /// in order, each key looked at, until the page is full.
    Sqlite {
        search_index: bool,
    },
    Postgres {
        search_index: bool,
    },
}

/// Parameters numbered as a store spells them (`?1`, `$1`).
pub struct Bound {
    sigil: char,
    pub fields: Vec<Field>,
}

impl Dialect {
    /// How the store spells a numbered parameter: `?1` or `$1`.
    pub fn parameter(self) -> char {
        match self {
            Dialect::Postgres { .. } => '$',
            Dialect::Sqlite { .. } => '?',
        }
    }
}

impl Bound {
    pub fn new(dialect: Dialect) -> Self {
        Self {
            sigil: dialect.parameter(),
            fields: Vec::new(),
        }
    }

    fn bind(&mut self, field: Field) -> String {
        self.fields.push(field);
        format!("{}{}", self.sigil, self.fields.len())
    }

    fn text(&mut self, text: impl Into<String>) -> String {
        self.bind(Field::Text(Some(text.into())))
    }

    fn int(&mut self, n: i64) -> String {
        self.bind(Field::Int(Some(n)))
    }
}

/// The SQL of [`super::ArtifactRows::artifact_page`] (columns as
/// `rows::artifact` reads them) and its parameters.
pub fn artifact_page_sql(query: &ListQuery, dialect: Dialect) -> (String, Vec<Field>) {
    let mut bound = Bound::new(dialect);
    let mut from = "artifacts a".to_owned();
    let mut with = String::new();
    let mut conditions = Vec::new();
    if let Some(after) = query.after {
        conditions.push(format!("a.path > {}", bound.text(after)));
    }
    if let Some(end) = folder_range_end(query.folder) {
        let (start, end) = (bound.text(query.folder), bound.text(end));
        conditions.push(format!("a.path >= {start} AND a.path < {end}"));
    }
    if let Some(range) = query.within {
        conditions.push(format!("a.path >= {}", bound.text(range.start.as_str())));
        if let Some(end) = &range.end {
            conditions.push(format!("a.path < {}", bound.text(end.as_str())));
        }
    }
    if let Some(at) = query.held_at {
        conditions.push(format!("l.expires_at > {}", bound.int(millis(at))));
    }
    if let Some(key) = &query.text_key {
        match dialect {
            Dialect::Sqlite { search_index } => {
                if search_index {
                    // The matches first, then sorted: few, by the caller's choice.
                    from = format!(
                        "(SELECT id FROM artifact_search WHERE artifact_search MATCH {}) s
                         CROSS JOIN artifacts a ON a.id = s.id",
                        bound.text(fts_phrase(key))
                    );
                }
                conditions.push(format!(
                    "instr(a.path_key, {}) > 0",
                    bound.text(key.as_str())
                ));
            }
            Dialect::Postgres { .. } if query.within.is_some() => {
                // Not a pattern the trigrams' index can answer: the range
                // is walked along the path's index, whatever the planner
                // guesses of the text.
                conditions.push(format!(
                    "strpos(a.path_key, {}) > 0",
                    bound.text(key.as_str())
                ));
            }
            Dialect::Postgres { search_index } => {
                let pattern = bound.text(format!("%{}%", like_escaped(key)));
                if search_index {
                    // Materialized: the planner may not walk the path's
                    // index instead, as it would for a LIMIT.
                    with = format!(
                        "WITH found AS MATERIALIZED
                         (SELECT id FROM artifacts WHERE path_key LIKE {pattern}) "
                    );
                    from = "found s JOIN artifacts a ON a.id = s.id".to_owned();
                }
                conditions.push(format!("a.path_key LIKE {pattern}"));
            }
        }
    }
    if !query.hidden.is_empty() {
        let hidden: Vec<String> = query
            .hidden
            .iter()
            .map(|h| hidden_condition(&mut bound, h))
            .collect();
        conditions.push(format!("NOT ({})", hidden.join(" OR ")));
    }
    let walked = matches!(
        dialect,
        Dialect::Sqlite {
            search_index: false
        }
    ) && query.text_key.is_some()
        && query.held_at.is_none();
    if walked {
        // The page's matches found in the index of paths and keys alone,
        // then their rows read: a common text looks at every key on its way.
        let limit = query
            .limit
            .map_or(String::new(), |l| format!(" LIMIT {}", bound.int(l.into())));
        from = format!(
            "(SELECT a.id AS found FROM artifacts a INDEXED BY artifacts_by_path_and_key
              WHERE {} ORDER BY a.path{limit}) s
             CROSS JOIN artifacts a ON a.id = s.found",
            conditions.join(" AND ")
        );
        conditions.clear();
    }
    let mut rest = String::new();
    if !conditions.is_empty() {
        rest = format!("WHERE {}", conditions.join(" AND "));
    }
    rest.push_str(" ORDER BY a.path");
    if let Some(limit) = query.limit {
        rest.push_str(&format!(" LIMIT {}", bound.int(limit.into())));
    }
    (
        format!("{with}{}", artifact_select_from(&from, &rest)),
        bound.fields,
    )
}

/// Whether fewer than `few` paths' keys contain `key` (3 characters or
/// more), asked of the search index alone: the SQL and its parameters.
pub fn few_matches_sql(key: &str, few: i64, dialect: Dialect) -> (String, Vec<Field>) {
    let mut bound = Bound::new(dialect);
    let sql = match dialect {
        Dialect::Sqlite { .. } => format!(
            "SELECT count(*) FROM
             (SELECT 1 FROM artifact_search WHERE artifact_search MATCH {} LIMIT {})",
            bound.text(fts_phrase(key)),
            bound.int(few)
        ),
        Dialect::Postgres { .. } => format!(
            "SELECT count(*) FROM
             (SELECT 1 FROM artifacts WHERE path_key LIKE {} LIMIT {}) found",
            bound.text(format!("%{}%", like_escaped(key))),
            bound.int(few)
        ),
    };
    (sql, bound.fields)
}

/// Past this many paths containing a search's text, a page walks the paths
/// in order instead of sorting the matches: a text that common fills a
/// page within a few times its length.
pub const FEW_MATCHES: i64 = 20_000;

/// Whether a path's key lies in the hidden part `h`.
fn hidden_condition(bound: &mut Bound, h: &Hidden) -> String {
    let mut parts = Vec::new();
    if !h.key.is_empty() {
        parts.push(under_key(bound, &h.key));
    }
    for except in &h.except {
        parts.push(format!("NOT ({})", under_key(bound, except)));
    }
    match parts.is_empty() {
        true => "1 = 1".to_owned(),
        false => format!("({})", parts.join(" AND ")),
    }
}

/// A path key under the folder key `key`: a range of the key's index, as
/// `0` follows `/` in byte order.
fn under_key(bound: &mut Bound, key: &str) -> String {
    let (start, end) = (bound.text(format!("{key}/")), bound.text(format!("{key}0")));
    format!("a.path_key >= {start} AND a.path_key < {end}")
}

/// An FTS5 query for the text as one phrase: with trigram tokens, the
/// rows that contain it (3 characters or more).
pub fn fts_phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// `text` for a LIKE pattern, its own `%`, `_` and `\` taken literally.
fn like_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The SQL of [`super::ArtifactRows::folder_paths`] and its parameters.
pub fn folder_paths_sql(keys: &[String], dialect: Dialect) -> (String, Vec<Field>) {
    let mut bound = Bound::new(dialect);
    let keys: Vec<String> = keys.iter().map(|key| bound.text(key.as_str())).collect();
    let sql = format!(
        "SELECT key, path FROM folders WHERE key IN ({}) ORDER BY path",
        keys.join(", ")
    );
    (sql, bound.fields)
}

/// The folders directly under a folder, by path.
pub fn subfolders_sql(p: char) -> String {
    format!("SELECT path, key, files FROM folders WHERE parent = {p}1 ORDER BY path")
}

/// The files directly in a folder.
pub fn direct_files_sql(p: char) -> String {
    format!("SELECT direct FROM folders WHERE path = {p}1")
}

/// The SQL of [`super::ArtifactRows::files_under_key`] and its parameters.
pub fn files_under_key_sql(key: &str, within: &str, dialect: Dialect) -> (String, Vec<Field>) {
    let mut bound = Bound::new(dialect);
    let mut sql = format!(
        "SELECT CAST(COALESCE(SUM(files), 0) AS BIGINT) FROM folders WHERE key = {}",
        bound.text(key)
    );
    if let Some(end) = folder_range_end(within) {
        let (start, end) = (bound.text(within), bound.text(end));
        sql.push_str(&format!(" AND path >= {start} AND path < {end}"));
    }
    (sql, bound.fields)
}

/// The SQL of [`super::ArtifactRows::held_by_folder`] and its parameters:
/// the held files of each folder directly under `folder`, counted by the
/// database (a row per folder, not per lease).
pub fn held_by_folder_sql(
    folder: &str,
    now: crate::model::Timestamp,
    hidden: &[Hidden],
    dialect: Dialect,
) -> (String, Vec<Field>) {
    let mut bound = Bound::new(dialect);
    // The rest of the path after the folder, up to and with its next `/`
    // (empty for a file directly in the folder); positions in characters.
    // A number of ours, written in: each store types a parameter its own way.
    let rest_at = folder.chars().count() + 1;
    let position = match dialect {
        Dialect::Postgres { .. } => "strpos",
        Dialect::Sqlite { .. } => "instr",
    };
    let child = format!("substr(a.path, {rest_at}, {position}(substr(a.path, {rest_at}), '/'))");
    // Each lease carries its artifact's path and key (kept by the
    // database: SQLite's migration 0019, PostgreSQL's 0006), so the leases
    // alone are read, as `a`.
    let (leases, expires) = ("leases a", "a.expires_at");
    let mut conditions = vec![format!("{expires} > {}", bound.int(millis(now)))];
    if let Some(end) = folder_range_end(folder) {
        let (start, end) = (bound.text(folder), bound.text(end));
        conditions.push(format!("a.path >= {start} AND a.path < {end}"));
    }
    if !hidden.is_empty() {
        let parts: Vec<String> = hidden
            .iter()
            .map(|h| hidden_condition(&mut bound, h))
            .collect();
        conditions.push(format!("NOT ({})", parts.join(" OR ")));
    }
    let sql = format!(
        "SELECT child, count(*) FROM
         (SELECT {child} AS child FROM {leases}
          WHERE {}) held
         WHERE child <> '' GROUP BY child",
        conditions.join(" AND ")
    );
    (sql, bound.fields)
}

/// Adds `by` files (1 or -1) to each folder above a path: `$1` the folder,
/// `$2` its parent (NULL for the whole store's `""`), `$3` its key, `$4`
/// the files under it, `$5` those directly in it.
pub fn count_files_sql(p: char) -> String {
    format!(
        "INSERT INTO folders (path, parent, key, files, direct) VALUES ({p}1, {p}2, {p}3, {p}4, {p}5)
         ON CONFLICT (path) DO UPDATE SET files = folders.files + excluded.files,
             direct = folders.direct + excluded.direct"
    )
}

/// Forgets a folder with no file left under it: `$1` the folder.
pub fn forget_empty_folder_sql(p: char) -> String {
    format!("DELETE FROM folders WHERE path = {p}1 AND files = 0")
}

/// The rows [`count_files_sql`] binds for a path's folders, outermost
/// first, adding `by` files.
pub fn folder_counts(path: &RepoPath, by: i64) -> Vec<Vec<Field>> {
    let key = path.collision_key();
    // A folder's key is its path key's part up to the same `/`: folding
    // maps each character alone and never makes or takes a `/`.
    let keys = std::iter::once("").chain(key.match_indices('/').map(|(at, _)| &key[..at]));
    let folders = folders_above(path.as_str());
    let direct_at = folders.len() - 1;
    folders
        .into_iter()
        .zip(keys)
        .enumerate()
        .map(|(i, ((folder, parent), key))| {
            vec![
                Field::Text(Some(folder.to_owned())),
                Field::Text(parent.map(str::to_owned)),
                Field::Text(Some(key.to_owned())),
                Field::Int(Some(by)),
                Field::Int(Some(if i == direct_at { by } else { 0 })),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_folders_are_counted_with_their_keys() {
        let path: RepoPath = "Brand/Été/a.psd".parse().unwrap();
        let rows = folder_counts(&path, 1);
        let texts: Vec<Vec<String>> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|f| match f {
                        Field::Text(t) => t.clone().unwrap_or("NULL".into()),
                        Field::Int(n) => n.unwrap().to_string(),
                        Field::Bool(b) => b.to_string(),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            texts,
            [
                ["", "NULL", "", "1", "0"],
                ["Brand/", "", "BRAND", "1", "0"],
                ["Brand/Été/", "Brand/", "BRAND/ÉTÉ", "1", "1"],
            ]
        );
    }

    #[test]
    fn search_texts_are_taken_literally() {
        assert_eq!(like_escaped("50%_a\\b"), "50\\%\\_a\\\\b");
        assert_eq!(fts_phrase("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}

-- Two paths one computer's folder cannot tell apart (case, NFC against NFD)
-- share a key: RepoPath::collision_key. SQLite can neither normalize nor fold
-- Unicode, so the program fills the key of rows stored before this migration
-- (see `migrate`). Not unique: older versions may have stored two paths with
-- one key, and those must stay readable until an admin renames one.
ALTER TABLE artifacts ADD COLUMN path_key TEXT;

CREATE INDEX artifacts_by_path_key ON artifacts (path_key);

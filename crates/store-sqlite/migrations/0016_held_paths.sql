-- Paths held with no file there yet: a Git LFS lock taken on a path the
-- studio has no artifact at (API.md, "Git LFS"). The hold is a check-out
-- in all but its row: its id is the lock's, it lapses at `expires_at`
-- (a lapsed row is no hold, and is deleted by whoever finds it), and an
-- import there by anyone else is refused as busy. An import by its holder
-- turns it into an open check-out of the new file, with the same id. One
-- row per path key, so paths that one computer's folder cannot tell apart
-- are one hold. PostgreSQL's is pg_migrations/0009_held_paths.sql.
CREATE TABLE held_paths (
    path_key TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    id TEXT NOT NULL UNIQUE,
    participant TEXT NOT NULL,
    note TEXT,
    acquired_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    device_id TEXT,
    device_name TEXT
);
CREATE INDEX held_paths_by_path ON held_paths (path);

-- A studio of its own. Each token is one device: named, with when it was
-- last used (to the minute). Invites are kept by their code's hash, used
-- once. The folder permissions and the groups they name are one document
-- whose stamp changes with every edit: a reader reads the stamp, and the
-- document only when it has not compiled that stamp yet. The same
-- migration for both stores (SQLite reads BIGINT as INTEGER).
ALTER TABLE tokens ADD COLUMN device TEXT;
ALTER TABLE tokens ADD COLUMN last_used_at BIGINT;

CREATE TABLE invites (
    hash        TEXT PRIMARY KEY,
    participant TEXT NOT NULL,
    admin       BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);

CREATE TABLE permissions (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    stamp    TEXT NOT NULL,
    document TEXT NOT NULL
);

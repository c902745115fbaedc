-- Bearer tokens of the HTTP server. Only a hash is kept: the token itself is
-- shown once, when it is made. A token is looked up by its id (a part of it
-- that is not secret), then its hash compared in constant time.
CREATE TABLE tokens (
    id          TEXT PRIMARY KEY,
    participant TEXT NOT NULL REFERENCES participants (participant),
    hash        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
) WITHOUT ROWID;

CREATE INDEX tokens_by_participant ON tokens (participant);

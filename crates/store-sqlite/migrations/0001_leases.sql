-- Times are milliseconds since the Unix epoch, UTC, on the backend's clock.

-- Tables keyed by text are WITHOUT ROWID: one b-tree each, so a lease change
-- writes as few pages as it can.

CREATE TABLE participants (
    participant TEXT PRIMARY KEY,
    admin       INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE artifacts (
    id           TEXT PRIMARY KEY,
    path         TEXT NOT NULL UNIQUE,
    head_version INTEGER NOT NULL,
    -- Counts the leases ever taken on the artifact: a check-out whose lease is
    -- gone knows from it whether anyone else took the file meanwhile.
    lease_epoch  INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE versions (
    artifact_id  TEXT NOT NULL REFERENCES artifacts (id),
    version      INTEGER NOT NULL,
    digest       TEXT NOT NULL,
    size         INTEGER NOT NULL,
    author       TEXT NOT NULL,
    committed_at INTEGER NOT NULL,
    -- The head this version replaced (NULL for version 1): the race checker's proof.
    base_version INTEGER,
    PRIMARY KEY (artifact_id, version)
) WITHOUT ROWID;

-- At most one lease per artifact. A row whose expires_at has passed is a lapse
-- not yet recorded: whoever finds it first writes lease.expired and deletes it.
CREATE TABLE leases (
    artifact_id TEXT PRIMARY KEY REFERENCES artifacts (id),
    holder      TEXT NOT NULL,
    participant TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('checkout', 'edit')),
    checkout_id TEXT,
    note        TEXT,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX leases_expiry ON leases (expires_at);

CREATE TABLE checkouts (
    id             TEXT PRIMARY KEY,
    artifact_id    TEXT NOT NULL REFERENCES artifacts (id),
    version        INTEGER NOT NULL,
    digest         TEXT NOT NULL,
    actor          TEXT NOT NULL,
    note           TEXT,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    -- The artifact's lease_epoch when this check-out last took its lease.
    lease_epoch    INTEGER NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('open', 'closed')),
    closed_at      INTEGER,
    -- The first check-in's upload and what it did, so a retry returns the same.
    checkin_digest TEXT,
    result         TEXT,
    broken_by      TEXT,
    broken_reason  TEXT,
    broken_at      INTEGER
) WITHOUT ROWID;

CREATE INDEX checkouts_by_actor ON checkouts (actor, state);

CREATE TABLE edits (
    id           TEXT PRIMARY KEY,
    artifact_id  TEXT NOT NULL REFERENCES artifacts (id),
    participant  TEXT NOT NULL,
    base_version INTEGER NOT NULL,
    base_digest  TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('open', 'committed', 'released')),
    commit_digest TEXT,
    result       TEXT
) WITHOUT ROWID;

CREATE TABLE proposals (
    id                 TEXT PRIMARY KEY,
    artifact_id        TEXT NOT NULL REFERENCES artifacts (id),
    base_version       INTEGER NOT NULL,
    test_digest        TEXT NOT NULL,
    provenance_version INTEGER NOT NULL,
    provenance_digest  TEXT NOT NULL,
    digest             TEXT NOT NULL,
    size               INTEGER NOT NULL,
    author             TEXT NOT NULL,
    checkout_id        TEXT,
    state              TEXT NOT NULL CHECK (state IN ('open', 'accepted', 'rejected', 'superseded')),
    created_at         INTEGER NOT NULL,
    decided_by         TEXT,
    decided_at         INTEGER,
    superseded_by      TEXT
) WITHOUT ROWID;

CREATE INDEX proposals_by_artifact ON proposals (artifact_id, state);

-- The append-only ledger. Rows are never deleted, so a new row's seq (the
-- largest plus one) always exceeds every earlier one.
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL,
    type        TEXT NOT NULL,
    artifact_id TEXT,
    participant TEXT,
    holder      TEXT,
    at          INTEGER NOT NULL,
    data        TEXT NOT NULL
);

-- Only lease.contended ids are chosen (stable per holder lease and contender),
-- so only they need a uniqueness check; other ids are random.
CREATE UNIQUE INDEX events_contended ON events (id) WHERE type = 'lease.contended';

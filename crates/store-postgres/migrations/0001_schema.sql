-- The schema of SQLite's migrations 0001 to 0005 in one step, for PostgreSQL.
-- Times are milliseconds since the Unix epoch, UTC, on the database's clock.
-- Text is compared byte by byte (COLLATE "C"), as SQLite does, so both
-- stores list and page in the same order.

CREATE TABLE participants (
    participant TEXT COLLATE "C" PRIMARY KEY,
    admin       BOOLEAN NOT NULL DEFAULT false,
    created_at  BIGINT NOT NULL
);

CREATE TABLE artifacts (
    id           TEXT COLLATE "C" PRIMARY KEY,
    path         TEXT COLLATE "C" NOT NULL UNIQUE,
    -- RepoPath::collision_key; not unique (see SQLite's 0003).
    path_key     TEXT COLLATE "C" NOT NULL,
    head_version BIGINT NOT NULL,
    -- Counts the leases ever taken on the artifact.
    lease_epoch  BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL
);

CREATE INDEX artifacts_by_path_key ON artifacts (path_key);

CREATE TABLE versions (
    artifact_id  TEXT COLLATE "C" NOT NULL REFERENCES artifacts (id),
    version      BIGINT NOT NULL,
    digest       TEXT COLLATE "C" NOT NULL,
    size         BIGINT NOT NULL,
    author       TEXT COLLATE "C" NOT NULL,
    committed_at BIGINT NOT NULL,
    base_version BIGINT,
    message      TEXT,
    PRIMARY KEY (artifact_id, version)
);

CREATE INDEX versions_by_digest ON versions (digest);

-- At most one lease per artifact, enforced here by the key: a second insert
-- fails, whichever server makes it. A row past expires_at is a lapse not yet
-- recorded: whoever finds it first writes lease.expired and deletes it.
CREATE TABLE leases (
    artifact_id TEXT COLLATE "C" PRIMARY KEY REFERENCES artifacts (id),
    holder      TEXT COLLATE "C" NOT NULL,
    participant TEXT COLLATE "C" NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('checkout', 'edit')),
    checkout_id TEXT COLLATE "C",
    note        TEXT,
    acquired_at BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);

CREATE INDEX leases_expiry ON leases (expires_at);

CREATE TABLE checkouts (
    id             TEXT COLLATE "C" PRIMARY KEY,
    artifact_id    TEXT COLLATE "C" NOT NULL REFERENCES artifacts (id),
    version        BIGINT NOT NULL,
    digest         TEXT COLLATE "C" NOT NULL,
    actor          TEXT COLLATE "C" NOT NULL,
    note           TEXT,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    lease_epoch    BIGINT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('open', 'closed')),
    closed_at      BIGINT,
    checkin_digest TEXT COLLATE "C",
    result         TEXT,
    broken_by      TEXT COLLATE "C",
    broken_reason  TEXT,
    broken_at      BIGINT
);

CREATE INDEX checkouts_by_actor ON checkouts (actor, state);

CREATE TABLE edits (
    id            TEXT COLLATE "C" PRIMARY KEY,
    artifact_id   TEXT COLLATE "C" NOT NULL REFERENCES artifacts (id),
    participant   TEXT COLLATE "C" NOT NULL,
    base_version  BIGINT NOT NULL,
    base_digest   TEXT COLLATE "C" NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('open', 'committed', 'released')),
    commit_digest TEXT COLLATE "C",
    result        TEXT
);

CREATE TABLE proposals (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    artifact_id        TEXT COLLATE "C" NOT NULL REFERENCES artifacts (id),
    base_version       BIGINT NOT NULL,
    test_digest        TEXT COLLATE "C" NOT NULL,
    provenance_version BIGINT NOT NULL,
    provenance_digest  TEXT COLLATE "C" NOT NULL,
    digest             TEXT COLLATE "C" NOT NULL,
    size               BIGINT NOT NULL,
    author             TEXT COLLATE "C" NOT NULL,
    checkout_id        TEXT COLLATE "C",
    state              TEXT NOT NULL CHECK (state IN ('open', 'accepted', 'rejected', 'superseded')),
    created_at         BIGINT NOT NULL,
    decided_by         TEXT COLLATE "C",
    decided_at         BIGINT,
    superseded_by      TEXT COLLATE "C",
    message            TEXT
);

CREATE INDEX proposals_by_artifact ON proposals (artifact_id, state);
CREATE INDEX proposals_by_digest ON proposals (digest);

-- The append-only ledger. seq is given by the writing transaction from the
-- one row of `ledger`, which it holds locked until it commits: so numbers are
-- dense and in commit order across servers (a sequence's are handed out
-- before commit, and a reader of "after N" could skip one for ever).
CREATE TABLE events (
    seq         BIGINT PRIMARY KEY,
    id          TEXT COLLATE "C" NOT NULL,
    type        TEXT COLLATE "C" NOT NULL,
    artifact_id TEXT COLLATE "C",
    participant TEXT COLLATE "C",
    holder      TEXT COLLATE "C",
    at          BIGINT NOT NULL,
    data        TEXT NOT NULL
);

CREATE UNIQUE INDEX events_contended ON events (id) WHERE type = 'lease.contended';
CREATE INDEX events_by_artifact ON events (artifact_id, seq);

CREATE TABLE ledger (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    last_seq BIGINT NOT NULL
);

INSERT INTO ledger (last_seq) VALUES (0);

CREATE TABLE tokens (
    id          TEXT COLLATE "C" PRIMARY KEY,
    participant TEXT COLLATE "C" NOT NULL REFERENCES participants (participant),
    hash        TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);

CREATE INDEX tokens_by_participant ON tokens (participant);

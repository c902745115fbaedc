-- Review on the work (API.md "Review (additions)"): threads of comments on
-- one version or one proposal of a file, each reviewer's decisions, the
-- reviewers asked, and each participant's inbox. A pin and the picture's
-- size are kept as the JSON the API shows. The same SQL for SQLite and
-- PostgreSQL.
CREATE TABLE review_threads (
    id          TEXT PRIMARY KEY,
    artifact_id TEXT NOT NULL,
    number      BIGINT NOT NULL,
    version     BIGINT,
    proposal_id TEXT,
    pin         TEXT,
    image       TEXT,
    state       TEXT NOT NULL CHECK (state IN ('open', 'resolved')),
    author      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    resolved_by TEXT,
    resolved_at BIGINT,
    -- The bytes of its comments' bodies: a file's sum bounds its listing.
    body_bytes  BIGINT NOT NULL,
    UNIQUE (artifact_id, number)
);
CREATE INDEX review_threads_by_proposal ON review_threads (proposal_id);

CREATE TABLE review_comments (
    id          TEXT PRIMARY KEY,
    thread_id   TEXT NOT NULL,
    -- Its thread's file: a file's comments are read in one walk of an index.
    artifact_id TEXT NOT NULL,
    -- Counts the thread's comments from 1: their order.
    ord         BIGINT NOT NULL,
    author      TEXT NOT NULL,
    body        TEXT NOT NULL,
    -- The participants mentioned, one a line.
    mentions    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (thread_id, ord)
);
CREATE INDEX review_comments_by_artifact ON review_comments (artifact_id);

CREATE TABLE reviews (
    id          TEXT PRIMARY KEY,
    artifact_id TEXT NOT NULL,
    -- Counts the file's decisions from 1: which is newest, whatever the clock.
    ord         BIGINT NOT NULL,
    version     BIGINT,
    proposal_id TEXT,
    reviewer    TEXT NOT NULL,
    decision    TEXT NOT NULL CHECK (decision IN ('approved', 'changes_requested', 'commented')),
    message     TEXT,
    created_at  BIGINT NOT NULL,
    UNIQUE (artifact_id, ord)
);
CREATE INDEX reviews_by_proposal ON reviews (proposal_id);

CREATE TABLE review_requests (
    artifact_id  TEXT NOT NULL,
    version      BIGINT,
    proposal_id  TEXT,
    reviewer     TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX review_requests_by_artifact ON review_requests (artifact_id, reviewer);
CREATE INDEX review_requests_by_proposal ON review_requests (proposal_id);

-- `seq` numbers every inbox item of the store in commit order: the counter's
-- row is taken by each write that adds items.
CREATE TABLE inbox_items (
    participant      TEXT NOT NULL,
    seq              BIGINT NOT NULL,
    kind             TEXT NOT NULL,
    artifact_id      TEXT NOT NULL,
    thread_id        TEXT,
    review_id        TEXT,
    from_participant TEXT NOT NULL,
    at               BIGINT NOT NULL,
    PRIMARY KEY (participant, seq)
);
CREATE TABLE inbox_counter (last_seq BIGINT NOT NULL);
INSERT INTO inbox_counter (last_seq) VALUES (0);
-- What each participant has read: every item up to `up_to`.
CREATE TABLE inbox_reads (
    participant TEXT PRIMARY KEY,
    up_to       BIGINT NOT NULL
);

-- Changes of several files: the bytes staged for a check-out's next change,
-- the change each version, proposal and check-out came in, and the changes
-- themselves. The same migration for both stores (SQLite reads BIGINT as
-- INTEGER).
ALTER TABLE checkouts ADD COLUMN staged_digest TEXT;
ALTER TABLE checkouts ADD COLUMN staged_size BIGINT;
ALTER TABLE checkouts ADD COLUMN change_id TEXT;
ALTER TABLE versions ADD COLUMN change_id TEXT;
ALTER TABLE proposals ADD COLUMN change_id TEXT;

CREATE TABLE changes (
    id         TEXT PRIMARY KEY,
    author     TEXT NOT NULL,
    message    TEXT,
    created_at BIGINT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('committed', 'proposal')),
    -- Its check-outs' ids, in the order given, as a JSON array.
    checkouts  TEXT NOT NULL
);

-- Staged bytes that a closed check-out no longer names: their blob is
-- removed unless some row names it again (see `Bundled::remove_dropped`).
CREATE TABLE dropped_blobs (
    digest TEXT PRIMARY KEY
);

CREATE INDEX checkouts_by_staged ON checkouts (staged_digest) WHERE staged_digest IS NOT NULL;
CREATE INDEX proposals_by_change ON proposals (change_id) WHERE change_id IS NOT NULL;

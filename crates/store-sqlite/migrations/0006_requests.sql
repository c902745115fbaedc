-- Asking the holder: a request to the actor of a check-out to release its
-- file. It ends with its check-out, in the same transaction. The same
-- migration for both stores (SQLite reads BIGINT as INTEGER).
CREATE TABLE requests (
    id               TEXT PRIMARY KEY,
    artifact_id      TEXT NOT NULL,
    checkout_id      TEXT NOT NULL,
    from_participant TEXT NOT NULL,
    to_participant   TEXT NOT NULL,
    message          TEXT,
    state            TEXT NOT NULL CHECK (state IN ('open', 'replied', 'withdrawn', 'ended')),
    reply            TEXT,
    created_at       BIGINT NOT NULL,
    replied_at       BIGINT,
    ended_at         BIGINT,
    -- When the holder was last told of it (request.opened): asking again
    -- sooner tells nobody.
    notified_at      BIGINT NOT NULL
);

CREATE INDEX requests_by_checkout ON requests (checkout_id, state);
CREATE INDEX requests_to ON requests (to_participant, state);
CREATE INDEX requests_from ON requests (from_participant, state);

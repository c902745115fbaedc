-- Resumable uploads (docs/API-transfers.md) as rows, so that every server
-- of a store sees each one and its offset: one begun on a server resumes on
-- any other. Its chunk list and the bytes that came are parts beside the
-- blobs (`blobs::parts`): `reached` counts the bytes of the parts named in
-- `upload_pieces`, each a run of whole checked chunks. An append takes the
-- next `writer` number, and a part counts only if its writer's number is
-- still the upload's: a newer request supersedes an older one at once. The
-- same migration for both stores.
CREATE TABLE uploads (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    -- The begin's Idempotency-Key: the same key begins nothing new.
    client_key TEXT,
    target TEXT NOT NULL,
    size BIGINT NOT NULL,
    digest TEXT NOT NULL,
    send TEXT NOT NULL,
    length BIGINT NOT NULL,
    reached BIGINT NOT NULL,
    writer BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
CREATE UNIQUE INDEX uploads_by_key ON uploads (owner, client_key);
CREATE INDEX uploads_by_owner ON uploads (owner, used_at);

CREATE TABLE upload_pieces (
    upload_id TEXT NOT NULL,
    start BIGINT NOT NULL,
    stop BIGINT NOT NULL,
    PRIMARY KEY (upload_id, start)
);

-- Each blob's chunk list (chunking: each chunk's BLAKE3 and size), made
-- once, the first time a transfer needs it, and kept: a check-in over a slow
-- link sends only the chunks of its file that the blob of a version it may
-- read already has, and a copy is brought up to date by the chunks it lacks.
CREATE TABLE chunk_lists (
    digest TEXT PRIMARY KEY,
    list BLOB NOT NULL
);

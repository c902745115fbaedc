-- Each blob's chunk list, as SQLite's 0011_chunk_lists.sql keeps it.
CREATE TABLE chunk_lists (
    digest TEXT PRIMARY KEY,
    list BYTEA NOT NULL
);

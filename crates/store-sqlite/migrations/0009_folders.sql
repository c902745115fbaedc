-- A studio of a million files (API.md, "A million files").
--
-- Each folder's files, at any depth and directly in it, counted by the
-- import or rename that changes them, in its transaction: a listing reads
-- one row per child folder, never the files under it. `key` is the
-- folder's collision key, which folder permissions name; the whole store
-- is the folder '' (parent NULL). A folder with no file left is removed.
CREATE TABLE folders (
    path   TEXT PRIMARY KEY,
    parent TEXT,
    key    TEXT NOT NULL,
    files  INTEGER NOT NULL,
    direct INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX folders_by_parent ON folders (parent, path);
CREATE INDEX folders_by_key ON folders (key, path);

-- The paths' keys by trigram, for a search by substring; each artifact
-- knows its row here (`search_row`), which a rename rewrites.
CREATE VIRTUAL TABLE artifact_search USING fts5 (
    key,
    id UNINDEXED,
    tokenize = 'trigram case_sensitive 1'
);

ALTER TABLE artifacts ADD COLUMN search_row INTEGER;

UPDATE artifacts SET search_row = numbered.n
FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM artifacts) AS numbered
WHERE numbered.id = artifacts.id;

INSERT INTO artifact_search (rowid, key, id) SELECT search_row, path_key, id FROM artifacts;

-- SQLite's 0009 for PostgreSQL: each folder's files, at any depth and
-- directly in it, counted in the write's transaction; the paths' keys by
-- trigram (pg_trgm, a trusted extension: the database's owner may create
-- it) for a search by substring.
CREATE TABLE folders (
    path   TEXT COLLATE "C" PRIMARY KEY,
    parent TEXT COLLATE "C",
    key    TEXT COLLATE "C" NOT NULL,
    files  BIGINT NOT NULL,
    direct BIGINT NOT NULL
);

CREATE INDEX folders_by_parent ON folders (parent, path);
CREATE INDEX folders_by_key ON folders (key, path);

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX artifacts_search ON artifacts USING gin (path_key gin_trgm_ops);

-- The counts of what is stored already: a folder's key is its files' path
-- key up to the same `/` (folding never makes or takes a `/`).
WITH parts AS (
    SELECT string_to_array(path, '/') AS names, string_to_array(path_key, '/') AS keys
    FROM artifacts
),
above AS (
    SELECT names, keys, depth, cardinality(names) - 1 AS deepest
    FROM parts, generate_series(0, cardinality(names) - 1) AS depth
)
INSERT INTO folders (path, parent, key, files, direct)
SELECT
    CASE WHEN depth = 0 THEN '' ELSE array_to_string(names[1:depth], '/') || '/' END,
    CASE WHEN depth = 0 THEN NULL
         WHEN depth = 1 THEN ''
         ELSE array_to_string(names[1:depth - 1], '/') || '/' END,
    array_to_string(keys[1:depth], '/'),
    count(*),
    count(*) FILTER (WHERE depth = deepest)
FROM above
GROUP BY 1, 2, 3;

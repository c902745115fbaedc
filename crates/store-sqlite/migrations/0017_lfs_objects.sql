-- Git LFS objects kept for a top-level folder (API.md, "Git LFS"): the
-- object's SHA-256 `oid` and `size` as Git names it, and the BLAKE3 digest
-- of the blob that holds its bytes, so an object and a Leasedesk version
-- with the same bytes are one blob. Objects are the folder's: another
-- folder's answer never tells whether the server has them.
-- `secrets` holds what every server of a store signs with (an LFS
-- action's credential), made once by whichever server asks first.
-- The same SQL for SQLite and PostgreSQL.
CREATE TABLE lfs_objects (
    folder TEXT NOT NULL,
    oid TEXT NOT NULL,
    size BIGINT NOT NULL,
    digest TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (folder, oid)
);
CREATE INDEX lfs_objects_by_digest ON lfs_objects (digest);
CREATE TABLE secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- SQLite's 0014 for PostgreSQL: failed invite redeems by address, one row
-- an address (when its minute began, how many failed in it), so every
-- server on the database keeps one count, through restarts. Addresses
-- whose minute is over are forgotten a few at a time by the redeems that
-- count, oldest first through the index on the minute's start.
CREATE TABLE failed_redeems (
    address TEXT PRIMARY KEY,
    since BIGINT NOT NULL,
    failed BIGINT NOT NULL
);
CREATE INDEX failed_redeems_by_since ON failed_redeems (since);

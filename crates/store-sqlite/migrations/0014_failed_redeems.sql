-- Failed invite redeems by address (docs/API.md: past 10 a minute from
-- one address, redeems from there are refused for the rest of that
-- minute), counted in the store rather than in each process's memory: the
-- processes of a data folder, the servers of a database, and a restart
-- then keep one count. One row an address: when its minute began and how
-- many failed in it. A redeem that counts also forgets a few addresses
-- whose minute is over, oldest first through the index on its start, so
-- the table holds little more than the addresses that failed within the
-- last minute. PostgreSQL's is 0008_failed_redeems.sql.
CREATE TABLE failed_redeems (
    address TEXT PRIMARY KEY,
    since INTEGER NOT NULL,
    failed INTEGER NOT NULL
);
CREATE INDEX failed_redeems_by_since ON failed_redeems (since);

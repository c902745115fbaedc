-- One row a server updates in a synchronous commit of its own when readers
-- wait for the newest events to be durable: PostgreSQL flushes the WAL at a
-- commit only if the transaction wrote some (see postgres/durable.rs).
CREATE TABLE wal_flush (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    flushes BIGINT NOT NULL
);
INSERT INTO wal_flush VALUES (1, 0);

-- The latest transaction time that changed the artifact (its lease, check-outs,
-- edits, proposals or versions), kept by the write that locks its row: a
-- write whose own time is earlier runs again, so times on one file follow
-- its commit order (see postgres.rs). 0 for rows from before this column.
ALTER TABLE artifacts ADD COLUMN touched_at BIGINT NOT NULL DEFAULT 0;

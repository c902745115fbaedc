-- Leases, edits and check-outs no longer check their artifact by foreign key:
-- each check cost a statement (SELECT ... FOR KEY SHARE) a lease change. The
-- rules keep what the keys kept: an artifact row is never deleted nor its id
-- changed, and a write inserts these rows only for an artifact it has read
-- (and locked) in the same transaction, or inserted there.
ALTER TABLE leases DROP CONSTRAINT IF EXISTS leases_artifact_id_fkey;
ALTER TABLE edits DROP CONSTRAINT IF EXISTS edits_artifact_id_fkey;
ALTER TABLE checkouts DROP CONSTRAINT IF EXISTS checkouts_artifact_id_fkey;

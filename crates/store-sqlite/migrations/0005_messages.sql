-- The description given with an upload (Leasedesk-Message), for versions and proposals.
ALTER TABLE versions ADD COLUMN message TEXT;
ALTER TABLE proposals ADD COLUMN message TEXT;
-- One artifact's history, paged either way.
CREATE INDEX events_by_artifact ON events (artifact_id, seq);

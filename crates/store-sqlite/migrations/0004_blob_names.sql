-- Whether any row names a blob (Tx::names_blob) is asked before each removal
-- of an unnamed blob: answered from an index, not a scan of every version.
CREATE INDEX versions_by_digest ON versions (digest);
CREATE INDEX proposals_by_digest ON proposals (digest);

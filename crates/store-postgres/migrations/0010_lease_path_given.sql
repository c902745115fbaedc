-- A lease's writer now gives its path and key (taken from the artifact in
-- the same statement), so the trigger of 0006 runs only for a row that
-- comes without them (a copy of a data folder): a lease pair is one nested
-- statement fewer.
DROP TRIGGER leases_take_path ON leases;
CREATE TRIGGER leases_take_path BEFORE INSERT ON leases
    FOR EACH ROW WHEN (NEW.path IS NULL) EXECUTE FUNCTION lease_takes_path();

-- Each lease carries its file's path and key, as on PostgreSQL (its
-- 0006), so a folder listing counts the held files under each child
-- folder from the leases alone: looking up each lease's artifact was most
-- of the 18 ms a listing of the top of a million files took, with 10,000
-- of them held (store::listing::held_by_folder_sql). The database keeps
-- them: a lease takes them from its artifact as it is first written
-- (written again for the same artifact, it keeps them). A held file is
-- never renamed: a rename is refused while the file is held.
ALTER TABLE leases ADD COLUMN path TEXT;
ALTER TABLE leases ADD COLUMN path_key TEXT;
UPDATE leases SET (path, path_key) =
    (SELECT a.path, a.path_key FROM artifacts a WHERE a.id = leases.artifact_id);

CREATE TRIGGER leases_take_path AFTER INSERT ON leases
BEGIN
    UPDATE leases SET (path, path_key) =
        (SELECT a.path, a.path_key FROM artifacts a WHERE a.id = NEW.artifact_id)
    WHERE artifact_id = NEW.artifact_id;
END;

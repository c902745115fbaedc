-- An admin lists the invites not yet used nor lapsed, and revokes one
-- (docs/API-studio.md): each gets an id of its own and keeps who made it
-- (NULL: the store's owner). Invites made before get their id from their
-- code's hash, shaped as a UUID: the hash is not the code, and the code
-- cannot be read back from it. The open ones are found through a partial
-- index, so the used ones kept never slow the list. The same migration
-- for both stores.
ALTER TABLE invites ADD COLUMN id TEXT;
ALTER TABLE invites ADD COLUMN made_by TEXT;
UPDATE invites SET id = substr(hash, 1, 8) || '-' || substr(hash, 9, 4) || '-'
    || substr(hash, 13, 4) || '-' || substr(hash, 17, 4) || '-' || substr(hash, 21, 12);
CREATE UNIQUE INDEX invites_id ON invites (id);
CREATE INDEX invites_open ON invites (expires_at) WHERE used_at IS NULL;

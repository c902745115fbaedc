-- The device each check-out was made on: on a server, the device (token)
-- whose request made it, by id and by the name it had then; none on the
-- bundled store, and none for the check-outs made before. The app says
-- which device holds the work of a check-out made on another. The same
-- migration for both stores.
ALTER TABLE checkouts ADD COLUMN device_id TEXT;
ALTER TABLE checkouts ADD COLUMN device_name TEXT;

-- A search for a text in many paths walks the paths in order, looking at
-- each path's key until a page is full (20,000 matches or more: see
-- store::listing). With both in one index the walk reads the index alone,
-- and the rows of the page's matches only: 19,000 rows read for a page of
-- a text in 1 path in 19 were 46 ms of a million.
CREATE INDEX artifacts_by_path_and_key ON artifacts (path, path_key);

-- +goose Up
-- A generation per cluster that moves whenever any of its nodes is
-- inserted, changed, deleted or moved to another cluster (see
-- 0014_node_changes.sqlite.sql for why). One counter row per cluster, not
-- deltas as the counts keep: a reader that has seen generation g must be
-- sure every write that made g has committed, which a row each writer
-- updates in turn gives (the next writer waits for the row until the last
-- commits) and values handed out before commit, such as a sequence's, do
-- not. Writers update it just before they commit, in the order of the
-- cluster ids, so they queue only for the time of a commit and never
-- deadlock over it.
CREATE TABLE node_changes (
  cluster_id TEXT NOT NULL PRIMARY KEY,
  gen BIGINT NOT NULL
);
INSERT INTO node_changes (cluster_id, gen)
  SELECT DISTINCT cluster_id, 1 FROM nodes WHERE cluster_id <> '';

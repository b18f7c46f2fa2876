-- +goose Up
-- Counts kept up to date as rows change, so that GET /v1/clusters/{id} and
-- GET /v1/actions/{id} summarise a cluster's nodes and an action's children
-- from a few rows per status instead of an index entry per node (SQLite:
-- 0013_counts.sqlite.sql).
--
-- Several agents write one cluster's nodes and one action's children at
-- once. A single counter row per (cluster, status) would be updated by all
-- of them and hold its row lock to each commit: their transactions would
-- queue behind each other, and two that move nodes between statuses in
-- different orders could deadlock. So the counts are deltas: every
-- statement on nodes or actions appends one row per key it changed (its
-- net change, from the statement's transition tables), which takes no lock
-- any other writer waits for. A count is the sum of its key's rows; the
-- store folds a key's rows into one when a read finds many
-- (store.compactCounts), deleting the rows it folded, so a concurrent fold
-- of the same rows finds them gone and skips them.
CREATE TABLE node_counts (
  cluster_id TEXT NOT NULL,
  status TEXT NOT NULL,
  n BIGINT NOT NULL
);
CREATE INDEX node_counts_cluster ON node_counts (cluster_id, status);
INSERT INTO node_counts (cluster_id, status, n)
  SELECT cluster_id, status, COUNT(*) FROM nodes WHERE cluster_id <> '' GROUP BY cluster_id, status;

-- +goose StatementBegin
CREATE FUNCTION grove_node_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO node_counts (cluster_id, status, n)
      SELECT cluster_id, status, COUNT(*) FROM new_rows WHERE cluster_id <> '' GROUP BY cluster_id, status;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO node_counts (cluster_id, status, n)
      SELECT cluster_id, status, -COUNT(*) FROM old_rows WHERE cluster_id <> '' GROUP BY cluster_id, status;
  ELSE
    INSERT INTO node_counts (cluster_id, status, n)
      SELECT cluster_id, status, SUM(d) FROM (
        SELECT cluster_id, status, 1 AS d FROM new_rows
        UNION ALL SELECT cluster_id, status, -1 AS d FROM old_rows) x
      WHERE cluster_id <> '' GROUP BY cluster_id, status HAVING SUM(d) <> 0;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER node_counts_insert AFTER INSERT ON nodes REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE PROCEDURE grove_node_counts();
CREATE TRIGGER node_counts_update AFTER UPDATE ON nodes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE PROCEDURE grove_node_counts();
CREATE TRIGGER node_counts_delete AFTER DELETE ON nodes REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE PROCEDURE grove_node_counts();

CREATE TABLE action_counts (
  parent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  status TEXT NOT NULL,
  n BIGINT NOT NULL
);
CREATE INDEX action_counts_parent ON action_counts (parent_id, action, status);
INSERT INTO action_counts (parent_id, action, status, n)
  SELECT parent_id, action, status, COUNT(*) FROM actions WHERE parent_id <> '' GROUP BY parent_id, action, status;

-- +goose StatementBegin
CREATE FUNCTION grove_action_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO action_counts (parent_id, action, status, n)
      SELECT parent_id, action, status, COUNT(*) FROM new_rows WHERE parent_id <> '' GROUP BY parent_id, action, status;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO action_counts (parent_id, action, status, n)
      SELECT parent_id, action, status, -COUNT(*) FROM old_rows WHERE parent_id <> '' GROUP BY parent_id, action, status;
  ELSE
    INSERT INTO action_counts (parent_id, action, status, n)
      SELECT parent_id, action, status, SUM(d) FROM (
        SELECT parent_id, action, status, 1 AS d FROM new_rows
        UNION ALL SELECT parent_id, action, status, -1 AS d FROM old_rows) x
      WHERE parent_id <> '' GROUP BY parent_id, action, status HAVING SUM(d) <> 0;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER action_counts_insert AFTER INSERT ON actions REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE PROCEDURE grove_action_counts();
CREATE TRIGGER action_counts_update AFTER UPDATE ON actions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE PROCEDURE grove_action_counts();
CREATE TRIGGER action_counts_delete AFTER DELETE ON actions REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE PROCEDURE grove_action_counts();

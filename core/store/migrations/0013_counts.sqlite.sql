-- +goose Up
-- Counts kept up to date as rows change, so that GET /v1/clusters/{id} and
-- GET /v1/actions/{id} summarise a cluster's nodes and an action's children
-- by reading one row per status instead of walking an index entry per node.
-- SQLite has one writer, so a counter row per key costs no concurrency:
-- triggers add and subtract in place. A status change runs two statements
-- per row and leaves a count at zero rather than deleting it (a third
-- statement per row doubled the triggers' cost in a measurement of the
-- store's writes); a delete drops the zero counts of its key, so that a
-- deleted cluster's nodes or a reaped action's children leave no rows
-- behind, and until then a key holds at most one zero row per status.
-- Reads skip zeros. Nodes outside a cluster and top-level actions are not
-- counted. PostgreSQL keeps the same counts as deltas
-- (0013_counts.postgres.sql).
CREATE TABLE node_counts (
  cluster_id TEXT NOT NULL,
  status TEXT NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (cluster_id, status)
) WITHOUT ROWID;
INSERT INTO node_counts (cluster_id, status, n)
  SELECT cluster_id, status, COUNT(*) FROM nodes WHERE cluster_id <> '' GROUP BY cluster_id, status;

-- +goose StatementBegin
CREATE TRIGGER node_counts_insert AFTER INSERT ON nodes WHEN NEW.cluster_id <> '' BEGIN
  INSERT INTO node_counts (cluster_id, status, n) VALUES (NEW.cluster_id, NEW.status, 1)
    ON CONFLICT (cluster_id, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER node_counts_delete AFTER DELETE ON nodes WHEN OLD.cluster_id <> '' BEGIN
  UPDATE node_counts SET n = n - 1 WHERE cluster_id = OLD.cluster_id AND status = OLD.status;
  DELETE FROM node_counts WHERE cluster_id = OLD.cluster_id AND n = 0;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER node_counts_update AFTER UPDATE OF cluster_id, status ON nodes
  WHEN (OLD.cluster_id <> '' OR NEW.cluster_id <> '')
    AND (OLD.cluster_id IS NOT NEW.cluster_id OR OLD.status IS NOT NEW.status) BEGIN
  UPDATE node_counts SET n = n - 1 WHERE OLD.cluster_id <> '' AND cluster_id = OLD.cluster_id AND status = OLD.status;
  INSERT INTO node_counts (cluster_id, status, n) SELECT NEW.cluster_id, NEW.status, 1 WHERE NEW.cluster_id <> ''
    ON CONFLICT (cluster_id, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

CREATE TABLE action_counts (
  parent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  status TEXT NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (parent_id, action, status)
) WITHOUT ROWID;
INSERT INTO action_counts (parent_id, action, status, n)
  SELECT parent_id, action, status, COUNT(*) FROM actions WHERE parent_id <> '' GROUP BY parent_id, action, status;

-- +goose StatementBegin
CREATE TRIGGER action_counts_insert AFTER INSERT ON actions WHEN NEW.parent_id <> '' BEGIN
  INSERT INTO action_counts (parent_id, action, status, n) VALUES (NEW.parent_id, NEW.action, NEW.status, 1)
    ON CONFLICT (parent_id, action, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER action_counts_delete AFTER DELETE ON actions WHEN OLD.parent_id <> '' BEGIN
  UPDATE action_counts SET n = n - 1 WHERE parent_id = OLD.parent_id AND action = OLD.action AND status = OLD.status;
  DELETE FROM action_counts WHERE parent_id = OLD.parent_id AND n = 0;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER action_counts_update AFTER UPDATE OF parent_id, action, status ON actions
  WHEN (OLD.parent_id <> '' OR NEW.parent_id <> '')
    AND (OLD.parent_id IS NOT NEW.parent_id OR OLD.action IS NOT NEW.action OR OLD.status IS NOT NEW.status) BEGIN
  UPDATE action_counts SET n = n - 1 WHERE OLD.parent_id <> '' AND parent_id = OLD.parent_id AND action = OLD.action AND status = OLD.status;
  INSERT INTO action_counts (parent_id, action, status, n) SELECT NEW.parent_id, NEW.action, NEW.status, 1 WHERE NEW.parent_id <> ''
    ON CONFLICT (parent_id, action, status) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

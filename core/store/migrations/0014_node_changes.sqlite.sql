-- +goose Up
-- A generation per cluster that moves whenever any of its nodes is
-- inserted, changed, deleted or moved to another cluster, so a health round
-- can keep what it read of a cluster's nodes and read them again only when
-- the generation says they changed: reading every row every round was most
-- of a check's cost (issue 24). The store moves it in the transactions that
-- write nodes, once per cluster, just before they commit
-- (store.bumpNodeChanges). A cluster's row goes with it (DeleteCluster);
-- cluster ids are never reused, so a generation never starts again under a
-- reader's cached one. PostgreSQL: 0014_node_changes.postgres.sql.
CREATE TABLE node_changes (
  cluster_id TEXT NOT NULL PRIMARY KEY,
  gen BIGINT NOT NULL
) WITHOUT ROWID;
INSERT INTO node_changes (cluster_id, gen)
  SELECT DISTINCT cluster_id, 1 FROM nodes WHERE cluster_id <> '';

-- A node that leaves a cluster for another changes its old cluster too,
-- which the store's update does not see (PostgreSQL's returns it). SQLite
-- has one writer, so moving the counter here, in the middle of the
-- transaction, holds no other writer up.
-- +goose StatementBegin
CREATE TRIGGER node_changes_move AFTER UPDATE OF cluster_id ON nodes
  WHEN OLD.cluster_id <> '' AND OLD.cluster_id IS NOT NEW.cluster_id BEGIN
  INSERT INTO node_changes (cluster_id, gen) VALUES (OLD.cluster_id, 1)
    ON CONFLICT (cluster_id) DO UPDATE SET gen = gen + 1;
END;
-- +goose StatementEnd

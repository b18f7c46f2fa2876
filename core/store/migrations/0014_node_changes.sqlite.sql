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

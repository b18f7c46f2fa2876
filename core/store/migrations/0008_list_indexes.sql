-- +goose Up
-- Indexes in the order lists and claims return rows (core/store/sqlite's
-- TestHotQueryPlans checks no hot query sorts in a temporary B-tree): a
-- page of nodes, actions or events, or the next action to claim, reads
-- an index range instead of sorting every match.
CREATE INDEX nodes_init ON nodes (init_at, id);
CREATE INDEX nodes_cluster_init ON nodes (cluster_id, init_at, id);
DROP INDEX nodes_cluster;
CREATE INDEX nodes_cluster ON nodes (cluster_id, idx, id);
CREATE INDEX clusters_init ON clusters (init_at, id);
CREATE INDEX actions_created ON actions (created_at, id);
DROP INDEX actions_ready;
CREATE INDEX actions_ready ON actions (status, parent_id, created_at, id);
CREATE INDEX actions_ready_order ON actions (status, created_at, id);
DROP INDEX events_cluster;
CREATE INDEX events_cluster ON events (cluster_id, ts, id);

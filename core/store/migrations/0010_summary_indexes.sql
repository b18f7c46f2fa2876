-- +goose Up
-- Indexes that answer GET /v1/actions/{id} and GET /v1/clusters/{id} from
-- the index alone, whatever the cluster's size: an action's first children
-- in creation order (and GET /v1/actions?parent_id= paged by marker), its
-- children counted by status and kind, a cluster's nodes counted by status.
CREATE INDEX actions_parent_created ON actions (parent_id, created_at, id);
DROP INDEX actions_parent;
CREATE INDEX actions_parent ON actions (parent_id, status, action);
CREATE INDEX nodes_cluster_status ON nodes (cluster_id, status);

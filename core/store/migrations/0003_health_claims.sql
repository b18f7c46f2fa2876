-- +goose Up
-- Health claims: which agent checks a cluster's nodes and restarts its dead
-- ones. Agents sharing a store would otherwise all check every cluster and
-- write the same nodes from stale reads.
CREATE TABLE health_claims (
  cluster_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires BIGINT NOT NULL
);

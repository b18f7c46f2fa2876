-- +goose Up
-- The instance monitor of failover and flex clusters (docs/failover.md):
-- one row per (cluster, host) holding that host's monitor state. Only the
-- host's own agent moves the state; operator commands (freeze, thaw, clear)
-- write through the same version check, so neither overwrites the other.
CREATE TABLE instances (
  cluster_id TEXT NOT NULL,
  host TEXT NOT NULL,
  state TEXT NOT NULL,
  since BIGINT NOT NULL,
  frozen INTEGER NOT NULL DEFAULT 0,
  outcome TEXT NOT NULL DEFAULT '',
  restarts INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '',
  version BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (cluster_id, host)
);
CREATE INDEX instances_host ON instances (host);

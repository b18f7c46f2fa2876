-- +goose Up
-- The operator's pending expectation of a failover or flex cluster
-- (docs/failover.md, OpenSVC's global_expect): start, stop, switch to a
-- host, giveback. One row per cluster; kind is empty once the expectation
-- is reached or has failed, and the reason says how it ended. Writes are
-- versioned as the instances' are: the command that sets it and the
-- monitor round that clears it never overwrite each other.
CREATE TABLE expectations (
  cluster_id TEXT NOT NULL PRIMARY KEY,
  kind TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  since BIGINT NOT NULL,
  action_id TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  version BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
